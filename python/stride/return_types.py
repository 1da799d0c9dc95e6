"""The named tuples that ops returning values and indices give, as
torch.return_types: `values, indices = x.sort()` and `x.max(1).indices`."""

import collections

__all__ = [
    "aminmax",
    "frexp",
    "cummax",
    "cummin",
    "histogram",
    "histogramdd",
    "kthvalue",
    "linalg_cholesky_ex",
    "linalg_eigh",
    "linalg_inv_ex",
    "linalg_lstsq",
    "linalg_lu",
    "linalg_lu_factor",
    "linalg_lu_factor_ex",
    "linalg_qr",
    "linalg_slogdet",
    "linalg_solve_ex",
    "linalg_svd",
    "lu_unpack",
    "max",
    "median",
    "min",
    "mode",
    "nanmedian",
    "slogdet",
    "sort",
    "svd",
    "topk",
    "triangular_solve",
]


def _values_indices(name):
    return collections.namedtuple(name, ["values", "indices"], module=__name__)


max = _values_indices("max")  # noqa: A001
min = _values_indices("min")  # noqa: A001
sort = _values_indices("sort")
topk = _values_indices("topk")

# The linear algebra ops' results (stride.linalg), with PyTorch's field names.
linalg_cholesky_ex = collections.namedtuple("linalg_cholesky_ex", ["L", "info"], module=__name__)
linalg_eigh = collections.namedtuple(
    "linalg_eigh", ["eigenvalues", "eigenvectors"], module=__name__
)
linalg_inv_ex = collections.namedtuple("linalg_inv_ex", ["inverse", "info"], module=__name__)
linalg_lstsq = collections.namedtuple(
    "linalg_lstsq", ["solution", "residuals", "rank", "singular_values"], module=__name__
)
linalg_lu = collections.namedtuple("linalg_lu", ["P", "L", "U"], module=__name__)
linalg_lu_factor = collections.namedtuple("linalg_lu_factor", ["LU", "pivots"], module=__name__)
linalg_lu_factor_ex = collections.namedtuple(
    "linalg_lu_factor_ex", ["LU", "pivots", "info"], module=__name__
)
linalg_qr = collections.namedtuple("linalg_qr", ["Q", "R"], module=__name__)
linalg_slogdet = collections.namedtuple("linalg_slogdet", ["sign", "logabsdet"], module=__name__)
linalg_solve_ex = collections.namedtuple("linalg_solve_ex", ["result", "info"], module=__name__)
linalg_svd = collections.namedtuple("linalg_svd", ["U", "S", "Vh"], module=__name__)
lu_unpack = collections.namedtuple("lu_unpack", ["P", "L", "U"], module=__name__)
slogdet = collections.namedtuple("slogdet", ["sign", "logabsdet"], module=__name__)
svd = collections.namedtuple("svd", ["U", "S", "V"], module=__name__)
triangular_solve = collections.namedtuple(
    "triangular_solve", ["solution", "cloned_coefficient"], module=__name__
)
kthvalue = _values_indices("kthvalue")
median = _values_indices("median")
nanmedian = _values_indices("nanmedian")
mode = _values_indices("mode")
cummax = _values_indices("cummax")
cummin = _values_indices("cummin")
aminmax = collections.namedtuple("aminmax", ["min", "max"], module=__name__)
histogram = collections.namedtuple("histogram", ["hist", "bin_edges"], module=__name__)
histogramdd = collections.namedtuple("histogramdd", ["hist", "bin_edges"], module=__name__)
frexp = collections.namedtuple("frexp", ["mantissa", "exponent"], module=__name__)
