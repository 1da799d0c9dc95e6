"""torch.masked on strided tensors: reductions, scans and normalizations
that read the elements where `mask` is False as the identity of the op (0
for sum, 1 for prod, -inf for amax and softmax, ...). The mask broadcasts to
the input; mask=None keeps every element. A slice with every element masked
out gives the identity, or NaN where the op has none (mean, median, var,
std). Gradients are zero at masked-out elements, as PyTorch's.

    x = stride.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    keep = stride.tensor([[True, False, True], [False, False, False]])
    stride.masked.sum(x, 1, mask=keep)      # tensor([4., 0.])
    stride.masked.mean(x, 1, mask=keep)     # tensor([2., nan])
"""

from . import _stride
from ._stride import _masked

__all__ = [
    "amax",
    "amin",
    "argmax",
    "argmin",
    "cumprod",
    "cumsum",
    "log_softmax",
    "logaddexp",
    "logsumexp",
    "mean",
    "median",
    "norm",
    "normalize",
    "prod",
    "softmax",
    "softmin",
    "std",
    "sum",
    "var",
]


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):  # noqa: A001
    """The sum of the masked-in elements over dim (every dim when None)."""
    return _masked.sum(input, dim, keepdim, dtype, mask)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The product of the masked-in elements over dim."""
    return _masked.prod(input, dim, keepdim, dtype, mask)


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The largest masked-in element over dim (-inf where all are masked out)."""
    return _masked.amax(input, dim, keepdim, dtype, mask)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The smallest masked-in element over dim (inf where all are masked out)."""
    return _masked.amin(input, dim, keepdim, dtype, mask)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The index of the largest masked-in element along dim, in dtype (the
    input's by default, as torch.masked.argmax)."""
    return _masked.argmax(input, dim, keepdim, dtype, mask)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The index of the smallest masked-in element along dim."""
    return _masked.argmin(input, dim, keepdim, dtype, mask)


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """The mean of the masked-in elements over dim (NaN where none is)."""
    return _masked.mean(input, dim, keepdim, dtype, mask)


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    """The lower median of the masked-in elements along dim (NaN where none is)."""
    return _masked.median(input, dim, keepdim, dtype, mask)


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """log(sum(exp(x))) of the masked-in elements over dim."""
    return _masked.logsumexp(input, dim, keepdim, dtype, mask)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):  # noqa: A002
    """The vector norm of order ord of the masked-in elements over dim."""
    return _masked.norm(input, ord, dim, keepdim, dtype, mask)


def _correction(op, unbiased, correction):
    """The divisor's offset: correction, else 1 if unbiased (the default) else 0."""
    if unbiased is not None and correction is not None:
        raise TypeError(f"masked.{op}: give unbiased or correction, not both.")
    if correction is not None:
        return correction
    return 0.0 if unbiased is False else 1.0


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    """The variance of the masked-in elements over dim, with divisor
    count - correction (NaN where no element is masked in)."""
    c = _correction("var", unbiased, correction)
    return _masked.var(input, dim, c, keepdim, dtype, mask)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    """The standard deviation of the masked-in elements over dim."""
    c = _correction("std", unbiased, correction)
    return _masked.std(input, dim, c, keepdim, dtype, mask)


def cumsum(input, dim, *, dtype=None, mask=None):
    """Running sums along dim with masked-out elements read as 0."""
    return _masked.cumsum(input, dim, dtype, mask)


def cumprod(input, dim, *, dtype=None, mask=None):
    """Running products along dim with masked-out elements read as 1."""
    return _masked.cumprod(input, dim, dtype, mask)


def softmax(input, dim, *, dtype=None, mask=None):
    """softmax along dim over the masked-in elements (0 at the masked-out ones)."""
    return _masked.softmax(input, dim, dtype, mask)


def log_softmax(input, dim, *, dtype=None, mask=None):
    """log_softmax along dim over the masked-in elements (-inf at the others)."""
    return _masked.log_softmax(input, dim, dtype, mask)


def softmin(input, dim, *, dtype=None, mask=None):
    """softmin along dim over the masked-in elements (0 at the masked-out ones)."""
    return _masked.softmin(input, dim, dtype, mask)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):  # noqa: A002
    """input over max(its masked norm of order ord along dim, eps); 0 at the
    masked-out elements."""
    return _masked.normalize(input, ord, dim, eps, dtype, mask)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    """log(exp(input) + exp(other)) with masked-out elements read as -inf."""
    return _masked.logaddexp(input, other, dtype, input_mask, other_mask)


# The helpers of torch.masked that PyTorch's gradient tests call (its
# gradcheck wrappers zero a masked op's output where the output mask is
# False): private there and here.

_REDUCTIONS = {
    "sum", "prod", "amax", "amin", "argmax", "argmin", "mean", "median", "norm", "var", "std",
    "logsumexp",
}  # fmt: skip
_NORMALIZATIONS = {"softmax", "log_softmax", "softmin", "normalize", "cumsum", "cumprod"}


def _input_mask(input, *args, mask=None, **kwargs):
    """mask broadcast to input's shape, as bool."""
    if mask is None:
        raise ValueError("masked._input_mask: mask= is required.")
    if mask.dim() > input.dim():
        raise IndexError(
            f"masked._input_mask: the mask has {mask.dim()} dims, more than the input's "
            f"{input.dim()}. Hint: the mask must broadcast to the input."
        )
    return _stride.broadcast_to(mask, input.shape).to(_stride.bool)


def _reduced_dims(dim, ndim):
    """The dims a reduction's dim= names, sorted and wrapped (None or (): all)."""
    if dim is None or dim == ():
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else dim
    return tuple(sorted(d % max(ndim, 1) for d in dims))


def _output_mask(op, input, *args, **kwargs):
    """Where the output of the masked op `op` (a function of this module)
    has a masked-in element: any of the reduced block for a reduction, the
    input mask for a normalization or scan."""
    name = op.__name__
    if name in _NORMALIZATIONS:
        return _input_mask(input, *args, **kwargs)
    if name not in _REDUCTIONS:
        raise ValueError(f"masked._output_mask: {name} is not a masked op of stride.masked.")
    if name == "norm" and args:
        args = args[1:]  # ord
    dim = args[0] if args else kwargs.get("dim")
    outmask = _input_mask(input, *args, **kwargs)
    keepdim = bool(kwargs.get("keepdim", False))
    for d in reversed(_reduced_dims(dim, input.dim())):
        outmask = _stride.any(outmask, d, keepdim=keepdim)
    return outmask
