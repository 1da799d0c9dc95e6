"""stride.save and stride.load: PyTorch's checkpoint files, and safetensors.

    stride.save({"model": model.state_dict(), "optimizer": opt.state_dict(),
                 "iter_num": 100}, "ckpt.pt")            # torch.load reads it
    checkpoint = stride.load("ckpt.pt")                    # or what torch.save wrote
    stride.save(model.state_dict(), "model.safetensors")   # safetensors, by the suffix

stride.load reads what torch.save writes, its zip archive and the legacy
format of old pytorch_model.bin files (torch.save(...,
_use_new_zipfile_serialization=False)), and safetensors files, telling them
apart by their first bytes. It reads pickles as torch.load(weights_only=True)
does, without torch: it builds tensors, nn.Parameters, dicts (OrderedDict
too), lists, tuples, sets, numbers, strings, bytes, None, torch.Size (as a
tuple), dtypes and devices, and refuses any other global a pickle names
(os.system, a class of its own) with pickle.UnpicklingError before anything
runs. weights_only=False is accepted, for torch code that passes it, and
refuses the same: stride never runs code from a file. Tensors keep their
views: those that shared a storage when saved share memory when loaded.
They land on the CPU unless map_location moves them; mmap=True maps the
archive's storages instead of reading them (copy-on-write; bfloat16 ones,
which NumPy cannot view, are copied). A truncated or malformed file raises
OSError, pickle.UnpicklingError, ValueError or RuntimeError naming the
file; it never crashes.

stride.save writes torch.save's zip archive (pickle protocol 2, storages
64-byte aligned, tensors sharing a storage written once), which
torch.load(weights_only=True) reads, unless `f` is a path ending in
".safetensors" or format="safetensors" says so: then it writes safetensors
(https://huggingface.co/docs/safetensors) through stride::io, readable by
`safetensors.torch.load_file` and by stride's C++ loader, with optional
str -> str metadata. A flat dict of str -> Tensor is written as it is; a
nested object of dicts, lists, tuples, numbers, strings and tensors as its
tensors under their paths ("optimizer/state/0/exp_avg") plus its structure
as JSON in the metadata key "stride.structure", which load uses to rebuild
it. Both formats are written atomically (a temporary beside the file,
fsync, rename), so a crash leaves the old file or the new one.
"""

import collections
import collections.abc
import json
import os

from . import _torch_format
from ._stride import Tensor, _serialize

__all__ = ["load", "load_metadata", "save"]


def _named_tensors(obj):
    """The (name, tensor) pairs of a flat state dict, in its order."""
    if not isinstance(obj, collections.abc.Mapping):
        raise TypeError(
            f"[save] expected a dict of str -> Tensor (a state dict); got {type(obj).__name__}. "
            "A safetensors file holds tensors only: save other objects to a path not ending "
            "in .safetensors, in torch.save's format."
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
        "a safetensors file takes tensors, numbers, strings, None, and dicts, lists and "
        "tuples of them; save to a path not ending in .safetensors for torch.save's format."
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


_FORMATS = ("torch", "safetensors")


def _format_of(f, format):
    """The format a save writes: `format` when given, else safetensors for
    a path ending in .safetensors and torch.save's for any other f."""
    if format is None:
        is_safetensors_path = _torch_format.is_path(f) and os.fsdecode(f).endswith(".safetensors")
        return "safetensors" if is_safetensors_path else "torch"
    if format not in _FORMATS:
        raise ValueError(f"[save] format must be 'torch' or 'safetensors'; got {format!r}.")
    if format == "safetensors" and not _torch_format.is_path(f):
        raise TypeError(
            f"[save] a safetensors file is written to a path; got {type(f).__name__}. Pass a "
            "path, or format='torch' for a file object."
        )
    return format


def save(obj, f, metadata=None, *, format=None):
    """Writes `obj` to `f` (a path, or a binary file object), in
    torch.save's zip format unless f is a path ending in .safetensors or
    format="safetensors", as the module's doc says.

    torch's format takes what torch.load(weights_only=True) reads: tensors
    (nn.Parameters stay Parameters; views stay views of one storage),
    None, bools, ints, floats, complex numbers, strings, bytes, stride
    dtypes and devices, and dicts, lists, tuples and sets of them. The
    safetensors format takes a state dict (str -> Tensor), written in its
    order, or a nested checkpoint (dicts with str or int keys, lists,
    tuples, numbers, strings, None and tensors), with optional `metadata`
    (str -> str) in the header's "__metadata__"; non-contiguous tensors
    are written in row-major order. TypeError for what the format cannot
    hold, ValueError for metadata given to torch's format or an empty or
    reserved name, OSError when the file cannot be written (an existing one
    is then left as it was)."""
    if _format_of(f, format) == "torch":
        if metadata is not None:
            raise ValueError(
                "[save] metadata is a safetensors header; save to a path ending in "
                ".safetensors (or pass format='safetensors'), or put it in the object."
            )
        _torch_format.save(obj, f)
        return
    _save_safetensors(obj, f, metadata)


def _save_safetensors(obj, f, metadata):
    metadata = _metadata(metadata)
    if _is_flat_state_dict(obj) or not isinstance(obj, (collections.abc.Mapping, list, tuple)):
        _serialize.save_file(os.fspath(f), _named_tensors(obj), metadata)
        return
    if _STRUCTURE_KEY in metadata:
        raise ValueError(f"[save] the metadata key {_STRUCTURE_KEY!r} is stride's own.")
    tensors = []
    metadata[_STRUCTURE_KEY] = json.dumps(_skeleton(obj, [], tensors))
    _serialize.save_file(os.fspath(f), tensors, metadata)


def load(f, map_location=None, *, weights_only=True, mmap=False):
    """The object saved in `f` (a path, or a binary file object holding one
    of torch's formats), as torch.load returns it: what torch.save or
    stride.save wrote, or a safetensors file's state dict (an OrderedDict of
    name -> Tensor in the order of the tensors' data) or nested object.

    `weights_only` (True, or None as torch's default) builds only plain
    data, as the module's doc says; False is accepted and refuses the same.
    `map_location` moves the storages, which load on the CPU: a device
    ("cpu", "cuda:0", a stride.device), a dict from saved locations
    ("cuda:0") to devices (a location it does not name stays on the CPU),
    or a function (storage, location) returning the storage, moved or not,
    or None; RuntimeError for a device stride cannot use. `mmap=True` maps
    the storages of a zip archive, or the tensors of a safetensors file,
    given by its path instead of reading them (private copy-on-write pages:
    writing to a tensor never changes the file). OSError naming the file for
    a missing, truncated or malformed one, pickle.UnpicklingError for a
    pickle that builds anything else or is malformed, ValueError for a
    malformed safetensors structure."""
    if weights_only not in (True, False, None):
        raise TypeError(f"[load] weights_only must be a bool; got {weights_only!r}.")
    if mmap and not _torch_format.is_path(f):
        raise ValueError(
            f"[load] mmap=True maps a file by its path; got {type(f).__name__}. Pass the path."
        )
    if _torch_format.sniff(f) is not None:
        return _torch_format.load(f, map_location, weights_only is not False, mmap)
    return _load_safetensors(f, map_location, mmap)


def _load_safetensors(f, map_location, mmap):
    where = _torch_format.describe(f)
    if not _torch_format.is_path(f):
        raise ValueError(
            f"[load] {where} holds neither of torch.save's formats, and stride reads "
            "safetensors files from a path only."
        )
    place = _torch_format.placement(map_location, where)
    read = _serialize.map_file if mmap else _serialize.load_file
    tensors, metadata = read(os.fspath(f))
    tensors = [(name, place(tensor, "cpu")) for name, tensor in tensors]
    structure = dict(metadata).get(_STRUCTURE_KEY)
    if structure is None:
        return collections.OrderedDict(tensors)
    try:
        return _rebuild(json.loads(structure), dict(tensors))
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError(f"[load] {where}: malformed {_STRUCTURE_KEY!r} metadata ({e}).") from None


def load_metadata(f):
    """The "__metadata__" dict (str -> str) of a safetensors file; reads and
    validates the whole file, as load does."""
    _, metadata = _serialize.load_file(os.fspath(f))
    return dict(metadata)
