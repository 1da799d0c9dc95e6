"""The named tuples that ops returning values and indices give, as
torch.return_types: `values, indices = x.sort()` and `x.max(1).indices`."""

import collections

__all__ = [
    "aminmax",
    "cummax",
    "cummin",
    "kthvalue",
    "max",
    "median",
    "min",
    "mode",
    "nanmedian",
    "sort",
    "topk",
]


def _values_indices(name):
    return collections.namedtuple(name, ["values", "indices"], module=__name__)


max = _values_indices("max")  # noqa: A001
min = _values_indices("min")  # noqa: A001
sort = _values_indices("sort")
topk = _values_indices("topk")
kthvalue = _values_indices("kthvalue")
median = _values_indices("median")
nanmedian = _values_indices("nanmedian")
mode = _values_indices("mode")
cummax = _values_indices("cummax")
cummin = _values_indices("cummin")
aminmax = collections.namedtuple("aminmax", ["min", "max"], module=__name__)
