"""The named tuples that ops returning values and indices give, as
torch.return_types: `values, indices = x.sort()` and `x.max(1).indices`."""

import collections

__all__ = ["max", "min", "sort", "topk"]


def _values_indices(name):
    return collections.namedtuple(name, ["values", "indices"], module=__name__)


max = _values_indices("max")  # noqa: A001
min = _values_indices("min")  # noqa: A001
sort = _values_indices("sort")
topk = _values_indices("topk")
