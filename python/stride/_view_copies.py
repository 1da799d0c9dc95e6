"""The `*_copy` functions of torch (expand_copy, permute_copy, ...): the view
op's result as a new contiguous tensor that shares no memory with input.
PyTorch has them for code that must not alias (functionalization); each is
the view, then a copy, so autograd flows through both."""

from ._stride import Tensor

__all__ = [
    "alias_copy",
    "as_strided_copy",
    "diagonal_copy",
    "expand_copy",
    "narrow_copy",
    "permute_copy",
    "split_with_sizes_copy",
    "squeeze_copy",
    "t_copy",
    "transpose_copy",
    "unbind_copy",
    "unfold_copy",
    "unsqueeze_copy",
    "view_copy",
]


def _check_tensor(input, name):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): input must be a stride.Tensor; got {type(input).__name__}.")


def _copied(out):
    if isinstance(out, Tensor):
        return out.clone().contiguous()
    return tuple(t.clone().contiguous() for t in out)


def alias_copy(input):
    """A copy of input (the copying form of an alias)."""
    _check_tensor(input, "alias_copy")
    return input.clone().contiguous()


def as_strided_copy(input, size, stride, storage_offset=None):
    """A copy of input.as_strided(size, stride, storage_offset)."""
    _check_tensor(input, "as_strided_copy")
    return _copied(input.as_strided(size, stride, storage_offset))


def diagonal_copy(input, offset=0, dim1=0, dim2=1):
    """A copy of input.diagonal(offset, dim1, dim2)."""
    _check_tensor(input, "diagonal_copy")
    return _copied(input.diagonal(offset, dim1, dim2))


def expand_copy(input, size, *, implicit=False):
    """A copy of input.expand(size); implicit is accepted and unused, as in PyTorch."""
    _check_tensor(input, "expand_copy")
    del implicit
    return _copied(input.expand(size))


def narrow_copy(input, dim, start, length):
    """A copy of input.narrow(dim, start, length)."""
    _check_tensor(input, "narrow_copy")
    return _copied(input.narrow(dim, start, length))


def permute_copy(input, dims):
    """A copy of input.permute(dims)."""
    _check_tensor(input, "permute_copy")
    return _copied(input.permute(dims))


def split_with_sizes_copy(input, split_sizes, dim=0):
    """Copies of the views input.split_with_sizes(split_sizes, dim)."""
    _check_tensor(input, "split_with_sizes_copy")
    return _copied(input.split_with_sizes(split_sizes, dim))


def unfold_copy(input, dimension, size, step):
    """A copy of input.unfold(dimension, size, step)."""
    _check_tensor(input, "unfold_copy")
    return _copied(input.unfold(dimension, size, step))


def squeeze_copy(input, dim=None):
    """A copy of input.squeeze(dim)."""
    _check_tensor(input, "squeeze_copy")
    return _copied(input.squeeze(dim))


def t_copy(input):
    """A copy of input.t()."""
    _check_tensor(input, "t_copy")
    return _copied(input.t())


def transpose_copy(input, dim0, dim1):
    """A copy of input.transpose(dim0, dim1)."""
    _check_tensor(input, "transpose_copy")
    return _copied(input.transpose(dim0, dim1))


def unbind_copy(input, dim=0):
    """Copies of the views input.unbind(dim)."""
    _check_tensor(input, "unbind_copy")
    return _copied(input.unbind(dim))


def unsqueeze_copy(input, dim):
    """A copy of input.unsqueeze(dim)."""
    _check_tensor(input, "unsqueeze_copy")
    return _copied(input.unsqueeze(dim))


def view_copy(input, size):
    """A copy of input.view(size)."""
    _check_tensor(input, "view_copy")
    return _copied(input.view(size))
