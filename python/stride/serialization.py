"""stride.save and stride.load: state dicts as safetensors files.

    stride.save(model_state, "model.safetensors", metadata={"step": "100"})
    state = stride.load("model.safetensors")     # OrderedDict name -> Tensor

Unlike torch.save, which pickles any object, these write the safetensors
format (https://huggingface.co/docs/safetensors) through stride::io: a flat
dict of str -> Tensor, nothing executable, readable by
`safetensors.torch.load_file` and by stride's C++ loader. A nested object of
dicts, lists, tuples, numbers, strings and tensors (a checkpoint such as
`{"model": model.state_dict(), "optimizer": opt.state_dict(), "step": 10}`)
is saved too: its tensors under their paths ("optimizer/state/0/exp_avg"),
its structure as JSON in the metadata key "stride.structure", which load
uses to rebuild it. The write is atomic
(a temporary beside the file, fsync, rename), so a crash leaves the old file
or the new one. Loading validates the whole header before reading data; a
truncated or malformed file raises OSError with stride's message, never
crashes. Both run without the GIL.
"""

import collections
import collections.abc
import json
import os

from ._stride import Tensor, _serialize

__all__ = ["load", "load_metadata", "save"]


def _named_tensors(obj):
    """The (name, tensor) pairs of a flat state dict, in its order."""
    if not isinstance(obj, collections.abc.Mapping):
        raise TypeError(
            f"[save] expected a dict of str -> Tensor (a state dict); got {type(obj).__name__}. "
            "stride.save writes safetensors files, not pickled objects."
        )
    pairs = []
    for name, value in obj.items():
        if not isinstance(name, str):
            raise TypeError(f"[save] state dict keys must be str; got {name!r}.")
        if not isinstance(value, Tensor):
            raise TypeError(
                f"[save] state_dict[{name!r}] must be a stride.Tensor; got {type(value).__name__}. "
                "Hint: nested dicts are not flattened; name the tensors 'a.b' yourself."
            )
        pairs.append((name, value))
    return pairs


def _metadata(metadata):
    if metadata is None:
        return {}
    for key, value in metadata.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise TypeError(f"[save] metadata must map str to str; got {key!r}: {value!r}.")
    return dict(metadata)


_STRUCTURE_KEY = "stride.structure"


def _is_flat_state_dict(obj):
    return isinstance(obj, collections.abc.Mapping) and all(
        isinstance(k, str) and isinstance(v, Tensor) for k, v in obj.items()
    )


def _skeleton(obj, path, tensors):
    """obj as JSON, each tensor replaced by a reference to its name (its
    path), which is appended to `tensors`."""
    if isinstance(obj, Tensor):
        name = "/".join(path) or "tensor"
        tensors.append((name, obj))
        return {"__tensor__": name}
    if isinstance(obj, collections.abc.Mapping):
        items = []
        for key, value in obj.items():
            if not isinstance(key, (str, int)) or isinstance(key, bool):
                raise TypeError(f"[save] dict keys must be str or int; got {key!r}.")
            items.append([key, _skeleton(value, path + [str(key)], tensors)])
        return {"__dict__": items}
    if isinstance(obj, (list, tuple)):
        values = [_skeleton(v, path + [str(i)], tensors) for i, v in enumerate(obj)]
        return {"__tuple__": values} if isinstance(obj, tuple) else values
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    raise TypeError(
        f"[save] cannot save a {type(obj).__name__} (at {'/'.join(path) or 'the root'}); "
        "stride.save takes tensors, numbers, strings, None, and dicts, lists and "
        "tuples of them."
    )


def _rebuild(node, tensors):
    if isinstance(node, list):
        return [_rebuild(v, tensors) for v in node]
    if isinstance(node, dict):
        if "__tensor__" in node:
            return tensors[node["__tensor__"]]
        if "__tuple__" in node:
            return tuple(_rebuild(v, tensors) for v in node["__tuple__"])
        return collections.OrderedDict((k, _rebuild(v, tensors)) for k, v in node["__dict__"])
    return node


def save(obj, f, metadata=None):
    """Writes `obj` to the path `f` as safetensors, with optional `metadata`
    (str -> str) in the header's "__metadata__". A state dict (str -> Tensor)
    is written as it is, in its order; a nested checkpoint (dicts with str or
    int keys, lists, tuples, numbers, strings, None and tensors) as its
    tensors plus its structure (see the module's doc). Non-contiguous
    tensors are written in row-major order. TypeError for anything else;
    ValueError for an empty or reserved name; OSError when the file cannot be
    written (an existing file is then left as it was)."""
    metadata = _metadata(metadata)
    if _is_flat_state_dict(obj) or not isinstance(obj, (collections.abc.Mapping, list, tuple)):
        _serialize.save_file(os.fspath(f), _named_tensors(obj), metadata)
        return
    if _STRUCTURE_KEY in metadata:
        raise ValueError(f"[save] the metadata key {_STRUCTURE_KEY!r} is stride's own.")
    tensors = []
    metadata[_STRUCTURE_KEY] = json.dumps(_skeleton(obj, [], tensors))
    _serialize.save_file(os.fspath(f), tensors, metadata)


def load(f):
    """Reads a safetensors file: a state dict as an OrderedDict of name ->
    Tensor, in the order of the tensors' data in the file (the save order for
    files stride wrote), or the nested object stride.save wrote. Each tensor
    is a new contiguous CPU tensor. OSError naming the file for a missing,
    truncated or malformed one, ValueError for a malformed structure."""
    tensors, metadata = _serialize.load_file(os.fspath(f))
    structure = dict(metadata).get(_STRUCTURE_KEY)
    if structure is None:
        return collections.OrderedDict(tensors)
    try:
        return _rebuild(json.loads(structure), dict(tensors))
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError(
            f"[load] {os.fspath(f)}: malformed {_STRUCTURE_KEY!r} metadata ({e})."
        ) from None


def load_metadata(f):
    """The "__metadata__" dict (str -> str) of a safetensors file; reads and
    validates the whole file, as load does."""
    _, metadata = _serialize.load_file(os.fspath(f))
    return dict(metadata)
