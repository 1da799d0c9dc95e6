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
    "unsqueeze_copy",
    "view_copy",
]


def _copied(out):
    if isinstance(out, Tensor):
        return out.clone().contiguous()
    return tuple(t.clone().contiguous() for t in out)


def alias_copy(input):
    """A copy of input (the copying form of an alias)."""
    return input.clone().contiguous()


def as_strided_copy(input, size, stride, storage_offset=None):
    """A copy of input.as_strided(size, stride, storage_offset)."""
    return _copied(input.as_strided(size, stride, storage_offset))


def diagonal_copy(input, offset=0, dim1=0, dim2=1):
    """A copy of input.diagonal(offset, dim1, dim2)."""
    return _copied(input.diagonal(offset, dim1, dim2))


def expand_copy(input, size, *, implicit=False):
    """A copy of input.expand(size); implicit is accepted and unused, as in PyTorch."""
    del implicit
    return _copied(input.expand(size))


def narrow_copy(input, dim, start, length):
    """A copy of input.narrow(dim, start, length)."""
    return _copied(input.narrow(dim, start, length))


def permute_copy(input, dims):
    """A copy of input.permute(dims)."""
    return _copied(input.permute(dims))


def split_with_sizes_copy(input, split_sizes, dim=0):
    """Copies of the views input.split_with_sizes(split_sizes, dim)."""
    return _copied(input.split_with_sizes(split_sizes, dim))


def squeeze_copy(input, dim=None):
    """A copy of input.squeeze(dim)."""
    return _copied(input.squeeze(dim))


def t_copy(input):
    """A copy of input.t()."""
    return _copied(input.t())


def transpose_copy(input, dim0, dim1):
    """A copy of input.transpose(dim0, dim1)."""
    return _copied(input.transpose(dim0, dim1))


def unbind_copy(input, dim=0):
    """Copies of the views input.unbind(dim)."""
    return _copied(input.unbind(dim))


def unsqueeze_copy(input, dim):
    """A copy of input.unsqueeze(dim)."""
    return _copied(input.unsqueeze(dim))


def view_copy(input, size):
    """A copy of input.view(size)."""
    return _copied(input.view(size))
