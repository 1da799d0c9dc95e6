"""torch.save's pickles without torch: an unpickler that builds only what
torch.load(weights_only=True) builds, and a writer of pickles it reads.

torch.save pickles its object with protocol 2: tensors as calls of
torch._utils._rebuild_tensor_v2 on a storage, each storage a persistent id
("storage", torch.FloatStorage, key, location, numel) that the file's
container (a zip archive or the legacy stream) resolves. Neither side here
is pickle's own. The unpickler runs the opcodes itself (pickletools reads
their arguments), as torch's weights_only unpickler does, so that a file
can call nothing but the globals its `resolve` hands out and can build
nothing but numbers, strings, bytes, lists, tuples, dicts, sets and what
those globals return. The writer emits the opcodes itself, because
pickle.Pickler imports the module of every global it names and stride must
not need torch.
"""

import collections
import pickle
import pickletools
import struct

from . import _stride
from ._stride import Tensor, device, dtype
from .nn.parameter import Parameter

__all__ = ["TORCH_DTYPES", "Pickler", "Unpickler"]

# Each stride dtype's name in torch and the class of its storages in
# torch's pickles (torch.FloatStorage for float32, ...).
TORCH_DTYPES = {
    _stride.float32: ("float32", "FloatStorage"),
    _stride.float64: ("float64", "DoubleStorage"),
    _stride.float16: ("float16", "HalfStorage"),
    _stride.bfloat16: ("bfloat16", "BFloat16Storage"),
    _stride.int64: ("int64", "LongStorage"),
    _stride.int32: ("int32", "IntStorage"),
    _stride.uint8: ("uint8", "ByteStorage"),
    _stride.bool: ("bool", "BoolStorage"),
    _stride.complex64: ("complex64", "ComplexFloatStorage"),
    _stride.complex128: ("complex128", "ComplexDoubleStorage"),
}

# Errors of a malformed pickle, or of a global called with arguments it
# refuses, which the unpickler reports as one UnpicklingError naming the
# file and the byte. Its own UnpicklingErrors, OSErrors (of the container)
# and RuntimeErrors (of map_location) pass through as they are.
_MALFORMED = (
    AttributeError,
    EOFError,
    IndexError,
    KeyError,
    OverflowError,
    RecursionError,
    TypeError,
    ValueError,
)

_OPCODES = {op.code.encode("latin-1"): op for op in pickletools.opcodes}

# A REDUCE or BUILD may copy a container the memo holds, so a few bytes of
# BINGET and REDUCE repeated could copy a large one until memory runs out.
# What they copy is held to this many elements per byte the pickle has
# read: a checkpoint's calls copy arguments its own bytes built.
_COPIES_PER_BYTE = 16
_SIZED = (list, tuple, dict, collections.OrderedDict, set, str, bytes)

# hash() of a tuple recurses in C without a depth check, so a tuple nested a
# million deep (a few megabytes of TUPLE1 opcodes) used as a dict key would
# overflow the C stack. Checkpoints nest tuples a few levels at most.
_MAX_TUPLE_DEPTH = 100


class Unpickler:
    """Reads one pickle from a binary file, positioned at its first opcode,
    and leaves the file after its STOP.

    `where` names the file in messages. `resolve(module, name)` returns the
    object a GLOBAL names or raises pickle.UnpicklingError; REDUCE calls
    only what it returned. `persistent_load(pid)` returns the storage of a
    persistent id.
    """

    def __init__(self, file, where, resolve, persistent_load):
        self._file = file
        self._where = where
        self._resolve = resolve
        self._persistent_load = persistent_load
        self._stack = []
        self._marks = []  # the stacks MARK set aside
        self._memo = {}
        self._callables = set()  # ids of what GLOBAL returned
        self._tuple_depths = {}  # id(tuple) -> how deep it nests tuples
        self._start = file.tell()
        self._pos = self._start
        self._copied = 0  # elements of containers that REDUCE and BUILD got

    def load(self):
        try:
            while True:
                opcode = self._next_opcode()
                if opcode.name == "STOP":
                    return self._stack.pop()
                handler = getattr(self, "_op_" + opcode.name.lower(), None)
                if handler is None:  # refused before its argument is even read
                    raise self._refused(opcode.name)
                handler(self._argument(opcode))
        except _MALFORMED as e:
            raise pickle.UnpicklingError(
                f"[load] {self._where}: cannot unpickle the object at byte {self._pos}: {e}"
            ) from None

    def _next_opcode(self):
        self._pos = self._file.tell()
        code = self._file.read(1)
        if not code:
            raise EOFError("the pickle ends without STOP")
        opcode = _OPCODES.get(code)
        if opcode is None:
            raise self._refused(f"0x{code.hex()}")
        return opcode

    def _argument(self, opcode):
        if opcode.name == "GLOBAL":
            # As pickle reads them: pickletools' reader would unescape them.
            module, name = self._file.readline(), self._file.readline()
            if not module.endswith(b"\n") or not name.endswith(b"\n"):
                raise EOFError("the pickle ends inside a GLOBAL")
            return module[:-1].decode("utf-8"), name[:-1].decode("utf-8")
        return opcode.arg.reader(self._file) if opcode.arg else None

    def _refused(self, opcode):
        return pickle.UnpicklingError(
            f"[load] {self._where}: the pickle's opcode {opcode} at byte {self._pos} builds "
            "objects a weights_only load does not allow."
        )

    # ---- the stack ----

    def _push(self, value):
        self._stack.append(value)

    def _pop_mark(self):
        items = self._stack
        self._stack = self._marks.pop()
        return items

    def _tuple(self, items):
        nested = (self._tuple_depths.get(id(x), 0) for x in items if type(x) is tuple)
        depth = 1 + max(nested, default=0)
        if depth > _MAX_TUPLE_DEPTH:
            raise ValueError(f"tuples nest deeper than {_MAX_TUPLE_DEPTH}")
        result = tuple(items)
        self._tuple_depths[id(result)] = depth
        return result

    def _charge(self, values):
        self._copied += sum(len(v) for v in values if type(v) in _SIZED)
        if self._copied > _COPIES_PER_BYTE * (self._pos - self._start) + 4096:
            raise ValueError("the pickle copies far more than it holds")

    def _target(self, kind):
        target = self._stack[-1]
        if type(target) not in kind:
            raise TypeError(f"cannot add items to a {type(target).__name__}")
        return target

    # ---- the opcodes: those of protocols 2 to 5 that plain data needs ----

    def _op_proto(self, _):
        pass

    def _op_frame(self, _):
        pass

    def _op_mark(self, _):
        self._marks.append(self._stack)
        self._stack = []

    def _op_none(self, _):
        self._push(None)

    def _op_newtrue(self, _):
        self._push(True)

    def _op_newfalse(self, _):
        self._push(False)

    def _push_arg(self, arg):
        self._push(arg)

    _op_binint = _op_binint1 = _op_binint2 = _op_long1 = _op_binfloat = _push_arg
    _op_binunicode = _op_short_binunicode = _op_binunicode8 = _push_arg
    _op_binstring = _op_short_binstring = _op_binbytes = _op_short_binbytes = _push_arg

    def _op_empty_list(self, _):
        self._push([])

    def _op_empty_dict(self, _):
        self._push({})

    def _op_empty_set(self, _):
        self._push(set())

    def _op_empty_tuple(self, _):
        self._push(())

    def _op_tuple(self, _):
        self._push(self._tuple(self._pop_mark()))

    def _op_tuple1(self, _):
        self._stack[-1:] = [self._tuple(self._stack[-1:])]

    def _op_tuple2(self, _):
        self._stack[-2:] = [self._tuple(self._stack[-2:])]

    def _op_tuple3(self, _):
        self._stack[-3:] = [self._tuple(self._stack[-3:])]

    def _op_append(self, _):
        item = self._stack.pop()
        self._target((list,)).append(item)

    def _op_appends(self, _):
        items = self._pop_mark()
        self._target((list,)).extend(items)

    def _op_setitem(self, _):
        value = self._stack.pop()
        key = self._stack.pop()
        self._target((dict, collections.OrderedDict))[key] = value

    def _op_setitems(self, _):
        items = self._pop_mark()
        if len(items) % 2:
            raise ValueError("SETITEMS has a key without a value")
        target = self._target((dict, collections.OrderedDict))
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]

    def _op_additems(self, _):
        items = self._pop_mark()
        self._target((set,)).update(items)

    def _op_binput(self, index):
        self._memo[index] = self._stack[-1]

    _op_long_binput = _op_binput

    def _op_memoize(self, _):
        self._memo[len(self._memo)] = self._stack[-1]

    def _op_binget(self, index):
        self._push(self._memo[index])

    _op_long_binget = _op_binget

    def _op_global(self, arg):
        self._push_global(*arg)

    def _op_stack_global(self, _):
        name = self._stack.pop()
        module = self._stack.pop()
        if type(module) is not str or type(name) is not str:
            raise TypeError("STACK_GLOBAL takes two strings")
        self._push_global(module, name)

    def _push_global(self, module, name):
        obj = self._resolve(module, name)
        self._callables.add(id(obj))
        self._push(obj)

    def _op_reduce(self, _):
        args = self._stack.pop()
        func = self._stack[-1]
        if id(func) not in self._callables or not callable(func):
            raise TypeError(f"REDUCE calls {type(func).__name__}, which no GLOBAL named")
        if type(args) is not tuple:
            raise TypeError(f"REDUCE's arguments are a {type(args).__name__}, not a tuple")
        self._charge(args)
        result = func(*args)
        self._stack[-1] = self._tuple(result) if type(result) is tuple else result

    def _op_build(self, _):
        # torch's state dicts carry their modules' versions as the attribute
        # _metadata, which pickle restores by BUILD; nothing else is built.
        state = self._stack.pop()
        inst = self._stack[-1]
        if type(inst) is not collections.OrderedDict or type(state) is not dict:
            raise TypeError(
                f"BUILD sets attributes of an OrderedDict only, not a {type(inst).__name__}"
            )
        if not all(type(k) is str for k in state):
            raise TypeError("BUILD's attribute names must be strings")
        self._charge((state,))
        inst.__dict__.update(state)

    def _op_binpersid(self, _):
        self._push(self._persistent_load(self._stack.pop()))


class Pickler:
    """Writes an object as torch.save's protocol-2 pickle, which
    torch.load(weights_only=True) reads.

    `describe_storage(tensor)` returns (key, location, numel, offset) of the
    tensor's storage record. Tensors, stride dtypes and devices, None,
    bools, ints, floats, complex numbers, strings, bytes, and dicts
    (OrderedDict too, with its attributes), lists, tuples and sets of them
    are written; an object met twice (a tensor in two places) is written
    once and read back as one object. TypeError (naming where in the
    object) for anything else.
    """

    def __init__(self, out, describe_storage):
        self._out = out
        self._describe_storage = describe_storage
        self._memo = {}  # id(obj) -> (index, obj): obj kept alive so that its id stays its own
        self._globals = {}  # (module, name) -> memo index
        self._open_tuples = set()
        self._savers = (
            (Tensor, self._save_tensor),
            (type(None), self._save_none),
            (bool, self._save_bool),
            (int, self._save_int),
            (float, self._save_float),
            (complex, self._save_complex),
            (str, self._save_str),
            (bytes, self._save_bytes),
            (dtype, self._save_dtype),
            (device, self._save_device),
            (dict, self._save_dict),
            (list, self._save_list),
            (tuple, self._save_tuple),
            (set, self._save_set),
        )

    def dump(self, obj):
        self._write(pickle.PROTO + b"\x02")
        try:
            self._save(obj, ())
        except RecursionError:
            raise ValueError(
                "[save] the object nests too deeply to pickle; flatten it (pickle's limit)."
            ) from None
        self._write(pickle.STOP)

    def _write(self, data):
        self._out.write(data)

    def _save(self, obj, path):
        for kind, saver in self._savers:
            if isinstance(obj, kind):
                saver(obj, path)
                return
        raise TypeError(
            f"[save] cannot save a {type(obj).__name__} (at {'/'.join(path) or 'the root'}); "
            "stride.save writes what torch.load(weights_only=True) reads: tensors, numbers, "
            "strings, bytes, None, dtypes, devices, and dicts, lists, tuples and sets of them."
        )

    # ---- the memo: objects met twice, and the globals ----

    def _put(self, obj):
        index = len(self._memo) + len(self._globals)
        self._memo[id(obj)] = (index, obj)
        self._write_put(index)

    def _write_put(self, index):
        if index < 256:
            self._write(pickle.BINPUT + bytes([index]))
        else:
            self._write(pickle.LONG_BINPUT + struct.pack("<I", index))

    def _get(self, obj):
        """Writes a reference to obj if it was written before."""
        entry = self._memo.get(id(obj))
        if entry is not None:
            self._write_get(entry[0])
        return entry is not None

    def _write_get(self, index):
        if index < 256:
            self._write(pickle.BINGET + bytes([index]))
        else:
            self._write(pickle.LONG_BINGET + struct.pack("<I", index))

    def _global(self, module, name):
        index = self._globals.get((module, name))
        if index is not None:
            self._write_get(index)
            return
        self._write(pickle.GLOBAL + f"{module}\n{name}\n".encode())
        index = len(self._memo) + len(self._globals)
        self._globals[(module, name)] = index
        self._write_put(index)

    def _call(self, module, name, *args):
        """module.name(*args), each argument written by one of the
        callables `args`."""
        self._global(module, name)
        self._write(pickle.MARK)
        for write_arg in args:
            write_arg()
        self._write(pickle.TUPLE + pickle.REDUCE)

    # ---- scalars ----

    def _save_none(self, obj, path):
        self._write(pickle.NONE)

    def _save_bool(self, obj, path):
        self._write(pickle.NEWTRUE if obj else pickle.NEWFALSE)

    def _save_int(self, obj, path):
        obj = int(obj)
        if 0 <= obj < 256:
            self._write(pickle.BININT1 + bytes([obj]))
        elif 0 <= obj < 65536:
            self._write(pickle.BININT2 + struct.pack("<H", obj))
        elif -(2**31) <= obj < 2**31:
            self._write(pickle.BININT + struct.pack("<i", obj))
        else:
            data = obj.to_bytes(obj.bit_length() // 8 + 1, "little", signed=True)
            if len(data) > 255:
                raise ValueError(
                    f"[save] the int at {'/'.join(path) or 'the root'} has {len(data)} bytes; "
                    "torch.load(weights_only=True) reads ints of 255 bytes at most."
                )
            self._write(pickle.LONG1 + bytes([len(data)]) + data)

    def _save_float(self, obj, path):
        self._write(pickle.BINFLOAT + struct.pack(">d", obj))

    def _save_complex(self, obj, path):
        self._call(
            "__builtin__",
            "complex",
            lambda: self._save_float(obj.real, path),
            lambda: self._save_float(obj.imag, path),
        )

    def _save_str(self, obj, path):
        data = str(obj).encode("utf-8", "surrogatepass")
        self._write(pickle.BINUNICODE + struct.pack("<I", len(data)) + data)

    def _save_bytes(self, obj, path):
        # Protocol 2 has no bytes opcode: Python 3 writes latin-1 text that
        # _codecs.encode turns back into bytes, and torch allows that call.
        self._call(
            "_codecs",
            "encode",
            lambda: self._save_str(bytes(obj).decode("latin1"), path),
            lambda: self._save_str("latin1", path),
        )

    def _save_dtype(self, obj, path):
        self._global("torch", TORCH_DTYPES[obj][0])

    def _save_device(self, obj, path):
        args = (obj.type,) if obj.index is None else (obj.type, obj.index)
        self._call("torch", "device", *(lambda a=a: self._save(a, path) for a in args))

    # ---- containers ----

    def _save_dict(self, obj, path):
        if self._get(obj):
            return
        ordered = isinstance(obj, collections.OrderedDict)
        if ordered:
            self._call("collections", "OrderedDict")
        else:
            self._write(pickle.EMPTY_DICT)
        self._put(obj)
        if obj:
            self._write(pickle.MARK)
            for key, value in obj.items():
                self._save(key, path + (str(key),))
                self._save(value, path + (str(key),))
            self._write(pickle.SETITEMS)
        attributes = vars(obj) if ordered else None
        if attributes:  # torch's state dicts: their modules' versions, as _metadata
            self._save_dict(dict(attributes), path + ("__dict__",))
            self._write(pickle.BUILD)

    def _save_list(self, obj, path):
        if self._get(obj):
            return
        self._write(pickle.EMPTY_LIST)
        self._put(obj)
        self._save_items(obj, path, pickle.APPENDS)

    def _save_items(self, items, path, opcode):
        if items:
            self._write(pickle.MARK)
            for i, item in enumerate(items):
                self._save(item, path + (str(i),))
            self._write(opcode)

    def _save_tuple(self, obj, path):
        if id(obj) in self._open_tuples:
            raise ValueError(
                f"[save] the tuple at {'/'.join(path)} contains itself, which a pickle of "
                "a tuple cannot hold; make it a list."
            )
        self._open_tuples.add(id(obj))
        if not obj:
            self._write(pickle.EMPTY_TUPLE)
        else:
            self._write(pickle.MARK)
            for i, item in enumerate(obj):
                self._save(item, path + (str(i),))
            self._write(pickle.TUPLE)
        self._open_tuples.discard(id(obj))

    def _save_set(self, obj, path):
        if self._get(obj):
            return
        # set([items]), as protocol 2 writes sets (it has no set opcodes).
        self._global("__builtin__", "set")
        self._write(pickle.EMPTY_LIST)
        self._save_items(list(obj), path, pickle.APPENDS)
        self._write(pickle.TUPLE1 + pickle.REDUCE)
        self._put(obj)

    # ---- tensors ----

    def _save_tensor(self, obj, path):
        if self._get(obj):
            return
        if isinstance(obj, Parameter):
            self._call(
                "torch._utils",
                "_rebuild_parameter",
                lambda: self._save_tensor_data(obj, requires_grad=False),
                lambda: self._save_bool(obj.requires_grad, path),
                lambda: self._call("collections", "OrderedDict"),  # its backward hooks
            )
        else:
            self._save_tensor_data(obj, obj.requires_grad)
        self._put(obj)

    def _save_tensor_data(self, tensor, requires_grad):
        key, location, numel, offset = self._describe_storage(tensor)
        storage_class = TORCH_DTYPES[tensor.dtype][1]

        def storage():
            self._write(pickle.MARK)
            for value in ("storage", None, key, location, numel):
                if value is None:
                    self._global("torch", storage_class)
                else:
                    self._save(value, ())
            self._write(pickle.TUPLE + pickle.BINPERSID)

        self._call(
            "torch._utils",
            "_rebuild_tensor_v2",
            storage,
            lambda: self._save_int(offset, ()),
            lambda: self._save_tuple(tuple(tensor.shape), ()),
            lambda: self._save_tuple(tuple(tensor.stride()), ()),
            lambda: self._save_bool(requires_grad, ()),
            lambda: self._call("collections", "OrderedDict"),  # its backward hooks
        )
