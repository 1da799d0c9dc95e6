"""stride.save and stride.load: state dicts as safetensors files.

    stride.save(model_state, "model.safetensors", metadata={"step": "100"})
    state = stride.load("model.safetensors")     # OrderedDict name -> Tensor

Unlike torch.save, which pickles any object, these write the safetensors
format (https://huggingface.co/docs/safetensors) through stride::io: a flat
dict of str -> Tensor, nothing executable, readable by
`safetensors.torch.load_file` and by stride's C++ loader. The write is atomic
(a temporary beside the file, fsync, rename), so a crash leaves the old file
or the new one. Loading validates the whole header before reading data; a
truncated or malformed file raises OSError with stride's message, never
crashes. Both run without the GIL.
"""

import collections
import collections.abc
import os

from ._stride import Tensor, _serialize

__all__ = ["load", "load_metadata", "save"]


def _named_tensors(obj):
    """The (name, tensor) pairs of a flat state dict, in its order."""
    if not isinstance(obj, collections.abc.Mapping):
        raise TypeError(
            f"[save] expected a dict of str -> Tensor (a state dict); got {type(obj).__name__}. "
            "stride.save writes safetensors files, not pickled objects.")
    pairs = []
    for name, value in obj.items():
        if not isinstance(name, str):
            raise TypeError(f"[save] state dict keys must be str; got {name!r}.")
        if not isinstance(value, Tensor):
            raise TypeError(
                f"[save] state_dict[{name!r}] must be a stride.Tensor; got {type(value).__name__}. "
                "Hint: nested dicts are not flattened; name the tensors 'a.b' yourself.")
        pairs.append((name, value))
    return pairs


def _metadata(metadata):
    if metadata is None:
        return {}
    for key, value in metadata.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise TypeError(f"[save] metadata must map str to str; got {key!r}: {value!r}.")
    return dict(metadata)


def save(obj, f, metadata=None):
    """Writes the state dict `obj` (str -> Tensor, in its order) to the path
    `f` as safetensors, with optional `metadata` (str -> str) in the header's
    "__metadata__". Non-contiguous tensors are written in row-major order.
    TypeError for anything but a flat dict of tensors; ValueError for an
    empty or reserved name; OSError when the file cannot be written (an
    existing file is then left as it was)."""
    _serialize.save_file(os.fspath(f), _named_tensors(obj), _metadata(metadata))


def load(f):
    """Reads a safetensors file into an OrderedDict of name -> Tensor, in the
    order of the tensors' data in the file (the save order for files stride
    wrote). Each tensor is a new contiguous CPU tensor. OSError naming the
    file for a missing, truncated or malformed one."""
    tensors, _ = _serialize.load_file(os.fspath(f))
    return collections.OrderedDict(tensors)


def load_metadata(f):
    """The "__metadata__" dict (str -> str) of a safetensors file; reads and
    validates the whole file, as load does."""
    _, metadata = _serialize.load_file(os.fspath(f))
    return dict(metadata)
