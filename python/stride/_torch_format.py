"""PyTorch's own file formats for stride.load and stride.save (see
stride.serialization): torch.save's zip archive, read and written, and its
legacy stream, read.

The zip archive holds `<folder>/data.pkl` (the object, pickled with each
tensor's storage as a persistent id), `<folder>/data/<key>` (each storage's
raw bytes, 64-byte aligned), `<folder>/byteorder` and a few version records.
The legacy stream (torch.save(..., _use_new_zipfile_serialization=False),
as old pytorch_model.bin files are) is five pickles in a row: a magic
number, a protocol version, the system's sizes, the object, and the list
of storage keys, then each storage in that order as a little-endian int64
element count and its bytes. Both unpickle through _torch_pickle.Unpickler,
which calls nothing but the globals `_Loader.resolve` allows.
"""

import collections
import contextlib
import ctypes
import hashlib
import io
import itertools
import math
import os
import pickle
import reprlib
import struct
import sys
import zlib

import numpy as np

from . import _stride
from ._stride import Tensor, device, empty, from_numpy
from ._torch_pickle import TORCH_DTYPES, Pickler, Unpickler
from ._torch_zip import ALIGNMENT, ZipWriter, read_directory
from .nn.parameter import Parameter

__all__ = ["describe", "is_path", "load", "placement", "save", "sniff"]

_ZIP_MAGIC = b"PK\x03\x04"
_LEGACY_MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
_LEGACY_PROTOCOL_VERSION = 1001
# The legacy stream opens with its magic number pickled, by protocol 2
# unless torch.save was given another.
_LEGACY_HEADS = tuple(pickle.dumps(_LEGACY_MAGIC_NUMBER, protocol=p) for p in range(2, 6))
_HEAD_SIZE = max(len(head) for head in _LEGACY_HEADS)

# NumPy's dtype for each stride dtype it has (bfloat16 it has not), through
# which a memory-mapped storage becomes a tensor without a copy.
_NUMPY_DTYPES = {
    _stride.float32: "f4",
    _stride.float64: "f8",
    _stride.float16: "f2",
    _stride.int64: "i8",
    _stride.int32: "i4",
    _stride.uint8: "u1",
    _stride.bool: "?",
    _stride.complex64: "c8",
    _stride.complex128: "c16",
}

# torch's names of the dtypes, and storage classes, that stride has no dtype
# for: a file holding one is refused with the dtype named.
_MISSING_DTYPES = {
    "int8": "int8",
    "CharStorage": "int8",
    "int16": "int16",
    "ShortStorage": "int16",
    "uint16": "uint16",
    "uint32": "uint32",
    "uint64": "uint64",
    "complex32": "complex32",
    "float8_e4m3fn": "float8_e4m3fn",
    "float8_e5m2": "float8_e5m2",
    # torch pickles tensors of its newer dtypes (uint16 to uint64, float8)
    # through this one function.
    "_rebuild_tensor_v3": "uint16, uint32, uint64 or float8",
}


class _StorageClass:
    """What a storage class of torch's pickles (torch.FloatStorage, ...)
    resolves to: the dtype of the storages its persistent ids name."""

    def __init__(self, dtype):
        self.dtype = dtype


def _storage_classes():
    classes = {("torch", cls): _StorageClass(dt) for dt, (_, cls) in TORCH_DTYPES.items()}
    untyped = _StorageClass(_stride.uint8)  # torch reads an UntypedStorage as bytes
    classes[("torch", "UntypedStorage")] = classes[("torch.storage", "UntypedStorage")] = untyped
    return classes


def _size(sizes):
    """torch.Size(sizes): a tuple, as stride's shapes are."""
    sizes = tuple(sizes)
    if not all(type(n) is int for n in sizes):
        raise TypeError(f"torch.Size takes ints; got {reprlib.repr(sizes)}")
    return sizes


def _torch_device(spec, index=None):
    """torch.device(type[, index]) as a stride.device; ValueError for a
    device stride does not have."""
    if type(spec) is not str or (index is not None and type(index) is not int):
        raise TypeError(f"torch.device takes a string and an int; got {spec!r}, {index!r}")
    return device(spec) if index is None else device(spec, index)


def _layout(name):
    """torch.serialization._get_layout(name): stride's tensors are all
    strided and it has no layout objects, so a saved torch.strided loads as
    its name."""
    if name != "torch.strided":
        raise ValueError(f"the layout {name!r} is not torch.strided, the one stride has")
    return name


def _encode(text, encoding):
    """_codecs.encode(text, "latin1"): how protocol 2 pickles bytes."""
    if type(text) is not str or encoding not in ("latin1", "latin-1"):
        raise TypeError("_codecs.encode is allowed only as pickle's latin-1 encoding of bytes")
    return text.encode("latin1")


# The globals a weights_only load resolves, as torch's weights_only
# unpickler allows them for plain data, without torch.
_GLOBALS = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("builtins", "set"): set,
    ("builtins", "complex"): complex,
    ("_codecs", "encode"): _encode,
    ("torch", "Size"): _size,
    ("torch", "device"): _torch_device,
    ("torch.serialization", "_get_layout"): _layout,
    **{("torch", name): dt for dt, (name, _) in TORCH_DTYPES.items()},
    **_storage_classes(),
}

# protocol 2 names builtins as Python 2 did.
_PYTHON2_MODULES = {"__builtin__": "builtins"}


class _Storage:
    """A storage a file's tensors view: a 1-D tensor of its elements."""

    __slots__ = ("key", "tensor")

    def __init__(self, key, tensor):
        self.key = key
        self.tensor = tensor


def _ints(values, what):
    if type(values) not in (tuple, list) or not all(type(v) is int for v in values):
        raise TypeError(f"the tensor's {what} must be a tuple of ints; got {reprlib.repr(values)}")
    if any(v < 0 or v >= 2**63 for v in values):
        raise ValueError(
            f"the tensor's {what} {reprlib.repr(values)} include a negative or huge value"
        )
    return tuple(values)


def _view(storage, offset, size, stride):
    """The tensor of `size` and `stride` at `offset` in `storage`, checked
    to lie inside it (a file's geometry is not trusted)."""
    if not isinstance(storage, _Storage):
        raise TypeError(f"a tensor's storage must be a persistent id; got {type(storage).__name__}")
    size, stride = _ints(size, "sizes"), _ints(stride, "strides")
    (offset,) = _ints((offset,), "storage offset")
    if len(size) != len(stride):
        raise ValueError(f"the tensor has {len(size)} sizes but {len(stride)} strides")
    numel, held = math.prod(size), storage.tensor.numel()
    if numel * storage.tensor.dtype.itemsize >= 2**63:
        raise ValueError(f"the tensor's sizes {reprlib.repr(size)} overflow")
    last = offset + sum((n - 1) * s for n, s in zip(size, stride)) if numel else offset - 1
    if last >= held:
        raise ValueError(
            f"the tensor (sizes {size}, strides {stride}, offset {offset}) reaches element "
            f"{last} of storage {storage.key!r}, which holds {held}"
        )
    return storage.tensor.as_strided(size, stride, offset)


def _set_new_attributes(obj, state):
    """A Parameter's Python attributes, as torch's _set_obj_state sets them,
    but never over an attribute of its class (a method or a property)."""
    states = state if type(state) is tuple else (state,)
    for attributes in states:
        if attributes is None:
            continue
        if type(attributes) is not dict:
            raise TypeError(f"a parameter's saved attributes are a {type(attributes).__name__}")
        for name, value in attributes.items():
            if type(name) is not str or name.startswith("__") or hasattr(type(obj), name):
                raise ValueError(f"the parameter's saved attribute {name!r} is not a new one")
            setattr(obj, name, value)


def _pid_kind(pid):
    """The first field of a persistent id ("storage"), bytes in Python 2's
    files; None when it is neither."""
    kind = pid[0] if type(pid) is tuple and pid else None
    if type(kind) is bytes:
        kind = kind.decode("ascii", "replace")
    return kind if type(kind) is str else None


class _Loader:
    """One load: the globals it allows, bound to the file's storages, and
    where its storages go."""

    def __init__(self, where, map_location, weights_only):
        self.where = where
        self.place = placement(map_location, where)
        self._weights_only = weights_only
        self.storages = {}  # key -> _Storage
        self._globals = dict(_GLOBALS)
        self._globals.update(
            {
                ("torch._utils", "_rebuild_tensor"): self._rebuild_tensor,
                ("torch._utils", "_rebuild_tensor_v2"): self._rebuild_tensor_v2,
                ("torch._utils", "_rebuild_parameter"): self._rebuild_parameter,
                ("torch._utils", "_rebuild_parameter_with_state"): self._rebuild_parameter,
            }
        )

    def unpickle(self, file, persistent_load):
        return Unpickler(file, self.where, self.resolve, persistent_load).load()

    def resolve(self, module, name):
        module = _PYTHON2_MODULES.get(module, module)
        found = self._globals.get((module, name))
        if found is not None:
            return found
        if module in ("torch", "torch._utils") and name in _MISSING_DTYPES:
            raise pickle.UnpicklingError(
                f"[load] {self.where} holds a tensor or dtype of torch.{_MISSING_DTYPES[name]}, "
                "which stride has no dtype for: convert it in torch first (t.to(torch.int32) "
                "or t.to(torch.float32)) and save it again."
            )
        also = " (even with weights_only=False: stride never runs code from a file)"
        raise pickle.UnpicklingError(
            f"[load] refused global {module}.{name} in {self.where}: weights_only load allows "
            f"only tensors, containers and numbers{'' if self._weights_only else also}. If you "
            "trust the file, load it in torch and save what you need as tensors and numbers."
        )

    def storage_id(self, pid, fields):
        """(dtype, key, location, numel) of a persistent id of `fields`
        fields ("storage", storage class, key, location, numel[, view])."""
        if type(pid) is not tuple or len(pid) != fields or _pid_kind(pid) != "storage":
            raise ValueError(f"the persistent id {reprlib.repr(pid)} is not a storage's")
        _, storage_class, key, location, numel = pid[:5]
        if not isinstance(storage_class, _StorageClass):
            raise TypeError(f"the storage class {reprlib.repr(storage_class)} is not torch's")
        if type(key) is not str or type(location) is not str:
            raise TypeError(f"the storage key and location {key!r}, {location!r} are not strings")
        if type(numel) is not int or numel < 0:
            raise ValueError(f"the storage {key!r} has {numel!r} elements")
        return storage_class.dtype, key, location, numel

    def cached(self, key, dtype):
        """The storage already loaded under `key`, or None."""
        storage = self.storages.get(key)
        if storage is not None and storage.tensor.dtype != dtype:
            raise ValueError(
                f"the storage {key!r} is read as {storage.tensor.dtype} and as {dtype}, which "
                "torch.save refuses to write"
            )
        return storage

    def keep(self, key, tensor):
        self.storages[key] = _Storage(key, tensor)
        return self.storages[key]

    # ---- torch._utils' rebuild functions ----

    def _rebuild_tensor(self, storage, storage_offset, size, stride):
        return _view(storage, storage_offset, size, stride)

    def _rebuild_tensor_v2(
        self, storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None
    ):
        if metadata is not None and (type(metadata) is not dict or metadata):
            raise ValueError(
                f"the tensor carries torch metadata stride cannot apply: {reprlib.repr(metadata)}"
            )
        tensor = _view(storage, storage_offset, size, stride)
        if requires_grad is not False:
            tensor.requires_grad_(requires_grad)
        return tensor

    def _rebuild_parameter(self, data, requires_grad, backward_hooks, state=None):
        if not isinstance(data, Tensor) or type(requires_grad) is not bool:
            raise TypeError("a Parameter is rebuilt from a tensor and a bool")
        parameter = Parameter(data, requires_grad)
        _set_new_attributes(parameter, state)
        return parameter


# ---- map_location ----


def placement(map_location, where):
    """map_location as a function (storage, saved location) -> storage.
    Storages load on the CPU, and move only where map_location says."""
    if map_location is None:
        return lambda storage, location: storage
    if isinstance(map_location, (str, device)):
        return lambda storage, location: _to_device(storage, map_location, where)
    if isinstance(map_location, dict):
        return lambda storage, location: _to_device(
            storage, map_location.get(location, "cpu"), where
        )
    if callable(map_location):
        return lambda storage, location: _mapped(map_location, storage, location, where)
    raise TypeError(
        f"[load] map_location must be None, a device ('cpu', 'cuda:0'), a dict from saved "
        f"locations to devices or a function (storage, location); got "
        f"{type(map_location).__name__}."
    )


def _to_device(storage, spec, where):
    try:
        target = spec if isinstance(spec, device) else device(str(spec))
    except ValueError:
        raise RuntimeError(
            f"[load] {where}: map_location names {str(spec)!r}, a device stride does not have; "
            "pass map_location='cpu' (or 'cuda:N')."
        ) from None
    if target.type == "cpu":
        return storage
    try:
        return storage.to(target)
    except RuntimeError as e:
        raise RuntimeError(
            f"[load] {where}: cannot place the storages on {target} ({str(e).rstrip('.')}); "
            "pass map_location='cpu'."
        ) from None


def _mapped(function, storage, location, where):
    placed = function(storage, location)
    if placed is None:
        return storage
    if (
        not isinstance(placed, Tensor)
        or placed.dtype != storage.dtype
        or placed.shape != storage.shape
    ):
        raise RuntimeError(
            f"[load] {where}: map_location returned {type(placed).__name__} for a storage; "
            "it must return that storage (a stride.Tensor), moved or not, or None."
        )
    return placed


# ---- storage bytes ----


def _raw_bytes(tensor):
    """The memory of a contiguous CPU tensor as a writable uint8 array. Its
    address is the only way in for bfloat16, which NumPy has no dtype for;
    the caller keeps the tensor alive while it uses the array."""
    nbytes = tensor.numel() * tensor.dtype.itemsize
    if nbytes == 0:
        return np.empty(0, np.uint8)
    return np.frombuffer((ctypes.c_uint8 * nbytes).from_address(tensor.data_ptr()), np.uint8)


def _read_exactly(file, buffer, where, what):
    view = memoryview(buffer)
    filled = 0
    while filled < len(view):
        count = file.readinto(view[filled:])
        if not count:
            raise OSError(f"[load] {where}: the file ends inside {what} (is it truncated?).")
        filled += count


def _finish_storage(tensor, byteorder, where, key):
    """Puts a storage's bytes in this machine's order, and checks a bool
    storage holds only 0 and 1 (any other byte is not a bool to C++)."""
    raw = _raw_bytes(tensor)
    itemsize = tensor.dtype.itemsize
    if byteorder != sys.byteorder and itemsize > 1:
        raw.view(f"u{itemsize}").byteswap(inplace=True)
    if tensor.dtype == _stride.bool and raw.size and raw.max() > 1:
        raise OSError(f"[load] {where}: the bool storage {key!r} holds bytes other than 0 and 1.")


# ---- the zip archive ----


def _small_record(file, records, name, where):
    """A record's bytes, checked against its CRC (data.pkl and the like)."""
    record = records.get(name)
    if record is None:
        return None
    file.seek(record.offset)
    data = file.read(record.size)
    if len(data) != record.size or zlib.crc32(data) != record.crc:
        raise OSError(f"[load] {where}: the record {name!r} is corrupt (its CRC-32 differs).")
    return data


def _load_zip(file, mapped, loader):
    where = loader.where
    records = read_directory(file, where)
    pickled = _small_record(file, records, "data.pkl", where)
    if pickled is None:
        raise OSError(
            f"[load] {where}: the zip archive has no data.pkl, so torch.save did not write it "
            "(a TorchScript archive of torch.jit.save is not loaded)."
        )
    byteorder = _small_record(file, records, "byteorder", where) or b"little"
    if byteorder not in (b"little", b"big"):
        raise OSError(f"[load] {where}: its byteorder record says {byteorder!r}.")
    byteorder = byteorder.decode()

    def persistent_load(pid):
        dtype, key, location, numel = loader.storage_id(pid, 5)
        storage = loader.cached(key, dtype)
        if storage is not None:
            return storage
        record = records.get(f"data/{key}")
        if record is None:
            raise OSError(f"[load] {where}: the pickle names storage {key!r}, which has no record.")
        if record.size < numel * dtype.itemsize:
            raise OSError(
                f"[load] {where}: storage {key!r} holds {record.size} bytes, short of the "
                f"{numel * dtype.itemsize} of its {numel} {dtype} elements."
            )
        tensor = _zip_storage(file, mapped, record.offset, numel, dtype, where, key)
        _finish_storage(tensor, byteorder, where, key)
        return loader.keep(key, loader.place(tensor, location))

    return loader.unpickle(io.BytesIO(pickled), persistent_load)


def _zip_storage(file, mapped, offset, numel, dtype, where, key):
    """A storage's elements: a view of the mapped file when there is one,
    NumPy has the dtype and the record is aligned to it (torch aligns all to
    64 bytes), else a copy read into new memory."""
    nbytes = numel * dtype.itemsize
    if mapped is not None and dtype in _NUMPY_DTYPES and offset % dtype.itemsize == 0:
        return from_numpy(mapped[offset : offset + nbytes].view(_NUMPY_DTYPES[dtype]))
    tensor = empty(numel, dtype=dtype)
    if mapped is not None:
        _raw_bytes(tensor)[:] = mapped[offset : offset + nbytes]
    else:
        file.seek(offset)
        _read_exactly(file, _raw_bytes(tensor), where, f"storage {key!r}")
    return tensor


# ---- the legacy stream ----


def _load_legacy(file, loader):
    """Unpickles the object with its storages allocated, then reads their
    bytes, which follow the pickle; storages that map_location moves are
    moved after, and the object unpickled again around them."""
    where = loader.where

    def header(expected, what):
        value = loader.unpickle(file, _no_persistent_ids)
        if expected is not None and value != expected:
            raise OSError(
                f"[load] {where}: its {what} is {reprlib.repr(value)}, not torch's {expected!r}."
            )
        return value

    header(_LEGACY_MAGIC_NUMBER, "magic number")
    header(_LEGACY_PROTOCOL_VERSION, "protocol version")
    if type(header(None, "system information")) is not dict:
        raise OSError(f"[load] {where}: its system information is not a dict.")
    start = file.tell()
    file_size = file.seek(0, 2)
    file.seek(start)
    locations = {}

    def allocate(pid):
        if _pid_kind(pid) == "module":
            raise pickle.UnpicklingError(
                f"[load] {where} pickles a whole nn.Module, code included; save its state_dict()."
            )
        dtype, key, location, numel = loader.storage_id(pid, 6)
        if pid[5] is not None:
            raise ValueError(f"storage {key!r} is a view of another (torch before 1.0)")
        storage = loader.cached(key, dtype)
        if storage is not None:
            return storage
        if numel * dtype.itemsize > file_size:
            raise OSError(f"[load] {where}: storage {key!r} has more bytes than the whole file.")
        locations[key] = location
        return loader.keep(key, empty(numel, dtype=dtype))

    obj = loader.unpickle(file, allocate)
    _read_legacy_storages(file, loader)
    loaded = loader.storages
    placed = {key: loader.place(s.tensor, locations[key]) for key, s in loaded.items()}
    if all(placed[key] is s.tensor for key, s in loaded.items()):
        return obj
    placed = {key: _Storage(key, tensor) for key, tensor in placed.items()}
    file.seek(start)
    return loader.unpickle(file, lambda pid: placed[loader.storage_id(pid, 6)[1]])


def _no_persistent_ids(pid):
    raise ValueError("a persistent id appears outside the object's pickle")


def _read_legacy_storages(file, loader):
    where = loader.where
    keys = loader.unpickle(file, _no_persistent_ids)
    if (
        type(keys) is not list
        or not all(type(key) is str for key in keys)
        or sorted(keys) != sorted(loader.storages)
    ):
        raise OSError(
            f"[load] {where}: its list of storage keys does not match the storages its object uses."
        )
    for key in keys:
        tensor = loader.storages[key].tensor
        count = file.read(8)
        if len(count) < 8:
            raise OSError(f"[load] {where}: the file ends before storage {key!r}.")
        if struct.unpack("<q", count)[0] != tensor.numel():
            raise OSError(
                f"[load] {where}: storage {key!r} holds {struct.unpack('<q', count)[0]} "
                f"elements, but the object's pickle says {tensor.numel()}."
            )
        _read_exactly(file, _raw_bytes(tensor), where, f"storage {key!r}")
        # torch writes the legacy stream's storages little-endian on any machine.
        _finish_storage(tensor, "little", where, key)


# ---- reading a file ----


def describe(f):
    """f as messages name it: its path, or the file object's name."""
    if isinstance(f, (str, bytes, os.PathLike)):
        return os.fsdecode(f)
    name = getattr(f, "name", None)
    return name if isinstance(name, str) else f"the {type(f).__name__}"


def is_path(f):
    return isinstance(f, (str, bytes, os.PathLike))


@contextlib.contextmanager
def _binary_file(f):
    """f opened for reading when it is a path, else f itself (left open)."""
    if is_path(f):
        with open(f, "rb") as file:
            yield file
        return
    if not (hasattr(f, "readinto") and hasattr(f, "seek") and hasattr(f, "tell")):
        raise TypeError(
            f"[load] f must be a path (str or os.PathLike) or a binary file object with readinto, "
            f"seek and tell (open(path, 'rb'), io.BytesIO); got {type(f).__name__}."
        )
    yield f


def sniff(f):
    """Which of torch.save's formats f holds, from its first bytes: "zip",
    "legacy", or None for any other file (safetensors)."""
    with _binary_file(f) as file:
        position = file.tell()
        head = file.read(_HEAD_SIZE)
        file.seek(position)
    if head.startswith(_ZIP_MAGIC):
        return "zip"
    return "legacy" if head.startswith(_LEGACY_HEADS) else None


def load(f, map_location, weights_only, mmap):
    """The object torch.save wrote to f (a path or a binary file object);
    see stride.load."""
    loader = _Loader(describe(f), map_location, weights_only)
    with _binary_file(f) as file:
        if sniff(file) == "zip":
            # Copy-on-write: the tensors are writable, the file never written.
            mapped = np.memmap(file, dtype=np.uint8, mode="c") if mmap else None
            return _load_zip(file, mapped, loader)
        if mmap:
            raise ValueError(
                f"[load] {loader.where} is torch's legacy format, whose storages cannot be "
                "memory-mapped; load it with mmap=False."
            )
        return _load_legacy(file, loader)


# ---- writing a file ----


class _Extent:
    """The part of one storage that the saved tensors reach, which is all a
    record holds: a slice of a large tensor does not save the rest."""

    def __init__(self, tensor):
        self.tensor = tensor  # any of them: its memory is the storage's
        self.start = None
        self.end = 0

    def include(self, tensor):
        if tensor.numel() == 0:
            return
        first = tensor.storage_offset()
        last = first + sum((n - 1) * s for n, s in zip(tensor.shape, tensor.stride()))
        self.start = first if self.start is None else min(self.start, first)
        self.end = max(self.end, last + 1)

    @property
    def numel(self):
        return 0 if self.start is None else self.end - self.start

    def data(self):
        """The record's bytes, viewed in the tensor's memory when it is on
        the CPU; the caller keeps the returned tensor alive while it uses
        them."""
        elements = self.tensor.detach().as_strided((self.numel,), (1,), self.start or 0)
        elements = elements.to("cpu")
        return elements, _raw_bytes(elements)


def _storage_identity(tensor):
    """What tensors sharing one storage have in common: the device, the
    dtype and the address of the storage's first element. An empty tensor
    gets a record of its own."""
    if tensor.device.type == "meta":
        raise ValueError("[save] a meta tensor holds no data to save; move it to a device first.")
    if tensor.numel() == 0:
        return ("empty", id(tensor))
    itemsize = tensor.dtype.itemsize
    return (
        str(tensor.device),
        tensor.dtype,
        tensor.data_ptr() - tensor.storage_offset() * itemsize,
    )


class _StoragePlan:
    """The storage records of a save. The object is pickled twice: the
    first pass (add) finds every tensor, so that each record's extent is
    known when the second pass (describe) writes its persistent ids."""

    def __init__(self):
        self._extents = {}  # storage identity -> _Extent
        self._keys = {}  # storage identity -> key, in the order the second pass meets them

    def add(self, tensor):
        identity = _storage_identity(tensor)
        self._extents.setdefault(identity, _Extent(tensor)).include(tensor)
        return "", "", 0, 0

    def describe(self, tensor):
        identity = _storage_identity(tensor)
        extent = self._extents[identity]
        key = self._keys.setdefault(identity, str(len(self._keys)))
        offset = tensor.storage_offset() - extent.start if tensor.numel() else 0
        return key, str(tensor.device), extent.numel, offset

    def records(self):
        """(key, bytes) of each storage, in key order; the bytes stay valid
        until the next is asked for (this generator holds their tensor)."""
        for identity, key in self._keys.items():
            elements, data = self._extents[identity].data()
            yield key, data


def _write_archive(out, pickled, plan):
    """The records torch.save writes, in its order."""
    writer = ZipWriter(out, "archive")
    crcs = [
        writer.write("data.pkl", pickled),
        writer.write(".format_version", b"1"),
        writer.write(".storage_alignment", str(ALIGNMENT).encode()),
        writer.write("byteorder", sys.byteorder.encode()),
    ]
    for key, data in plan.records():
        crcs.append(writer.write(f"data/{key}", data))
    crcs.append(writer.write("version", b"3\n"))
    # torch names a file by 40 digits derived from its records' checksums;
    # a hash of them makes the same object the same file.
    digest = hashlib.blake2b(struct.pack(f"<{len(crcs)}I", *crcs), digest_size=16).digest()
    writer.write(
        ".data/serialization_id", f"{int.from_bytes(digest, 'big') % 10**40:040d}".encode()
    )
    writer.close()


@contextlib.contextmanager
def _atomic_file(path):
    """A file written beside `path` and renamed over it once complete and
    synced, so that a crash leaves the old file or the new one; named as
    stride::io names its temporaries (path.tmp.<pid>[.<n>])."""
    base = f"{path}.tmp.{os.getpid()}"
    for n in itertools.count():
        temporary = base if n == 0 else f"{base}.{n}"
        try:
            out = open(temporary, "xb")
            break
        except FileExistsError:
            continue
    try:
        with out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _sync_directory(os.path.dirname(os.path.abspath(path)))


def _sync_directory(directory):
    """Makes the rename durable: it lives in the directory."""
    with contextlib.suppress(OSError):  # a file system that cannot sync directories
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def save(obj, f):
    """Writes obj as torch.save's zip archive to f (a path, written
    atomically, or a binary file object); see stride.save."""
    plan = _StoragePlan()
    Pickler(io.BytesIO(), plan.add).dump(obj)
    pickled = io.BytesIO()
    Pickler(pickled, plan.describe).dump(obj)
    if is_path(f):
        with _atomic_file(os.fsdecode(f)) as out:
            _write_archive(out, pickled.getbuffer(), plan)
    elif hasattr(f, "write"):
        _write_archive(f, pickled.getbuffer(), plan)
    else:
        raise TypeError(
            f"[save] f must be a path (str or os.PathLike) or a binary file object with write; "
            f"got {type(f).__name__}."
        )
