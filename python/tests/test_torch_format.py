"""stride.save / stride.load in PyTorch's own formats: torch.save's zip
archive both ways, its legacy stream read, a weights_only unpickler that
refuses every other global, and hostile files refused cleanly.

The tests without torch craft their files by hand (zipfile and pickle
opcodes); those with torch compare against torch.save and torch.load."""

import argparse
import collections
import io
import os
import pickle
import struct
import sys
import zipfile

import numpy as np
import pytest
import stride
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stride import _torch_zip

# What a file's contents may raise from stride.load: never IndexError,
# KeyError, struct.error or a crash.
CLEAN_ERRORS = (OSError, pickle.UnpicklingError, ValueError, RuntimeError)


def torch_or_skip():
    return pytest.importorskip("torch", reason="torch is not installed")


def torch_if_installed():
    try:
        import torch
    except ImportError:
        return None
    return torch


# ---- files crafted by hand: pickle opcodes in a zip archive ----


def op_global(module, name):
    return pickle.GLOBAL + f"{module}\n{name}\n".encode()


def op_str(text):
    data = text.encode()
    return pickle.BINUNICODE + struct.pack("<I", len(data)) + data


def op_int(n):
    if -(2**31) <= n < 2**31:
        return pickle.BININT + struct.pack("<i", n)
    data = n.to_bytes(n.bit_length() // 8 + 1, "little", signed=True)
    return pickle.LONG1 + bytes([len(data)]) + data


def op_tuple(*items):
    return pickle.MARK + b"".join(items) + pickle.TUPLE


def op_call(module, name, *args):
    return op_global(module, name) + op_tuple(*args) + pickle.REDUCE


def op_tensor(
    key="0", numel=4, offset=0, size=(4,), stride=(1,), storage="FloatStorage", location="cpu"
):
    """torch._utils._rebuild_tensor_v2 as torch.save pickles it."""
    pid = op_tuple(
        op_str("storage"),
        op_global("torch", storage),
        op_str(key),
        op_str(location),
        op_int(numel),
    )
    return op_call(
        "torch._utils",
        "_rebuild_tensor_v2",
        pid + pickle.BINPERSID,
        op_int(offset),
        op_tuple(*map(op_int, size)),
        op_tuple(*map(op_int, stride)),
        pickle.NEWFALSE,
        op_call("collections", "OrderedDict"),
    )


def op_dict(**items):
    body = b"".join(op_str(k) + v for k, v in items.items())
    return pickle.EMPTY_DICT + pickle.MARK + body + pickle.SETITEMS


def pickled(body):
    return pickle.PROTO + b"\x02" + body + pickle.STOP


def archive(data_pkl, storages=None, byteorder=b"little", folder="archive"):
    """A zip archive laid out as torch.save's, written by zipfile."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        z.writestr(f"{folder}/data.pkl", data_pkl)
        z.writestr(f"{folder}/byteorder", byteorder)
        for key, data in (storages or {}).items():
            z.writestr(f"{folder}/data/{key}", data)
        z.writestr(f"{folder}/version", b"3\n")
    out.seek(0)
    return out


FLOATS = np.arange(4, dtype="<f4").tobytes()


def test_a_crafted_archive_loads_under_any_folder_name():
    f = archive(pickled(op_dict(w=op_tensor(), n=op_int(3))), {"0": FLOATS}, folder="my_model")
    loaded = stride.load(f)
    assert loaded["n"] == 3
    assert loaded["w"].tolist() == [0.0, 1.0, 2.0, 3.0]


def test_big_endian_storages_are_swapped():
    body = op_dict(w=op_tensor(), i=op_tensor(key="1", numel=2, size=(2,), storage="LongStorage"))
    storages = {"0": np.arange(4, dtype=">f4").tobytes(), "1": np.array([7, -1], ">i8").tobytes()}
    loaded = stride.load(archive(pickled(body), storages, byteorder=b"big"))
    assert loaded["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert loaded["i"].tolist() == [7, -1]


def test_a_cuda_location_loads_on_the_cpu_and_map_location_is_checked():
    f = archive(pickled(op_tensor(location="cuda:0")), {"0": FLOATS})
    assert stride.load(f).device == stride.device("cpu")
    seen = []
    f.seek(0)
    loaded = stride.load(f, map_location=lambda storage, location: seen.append(location))
    assert seen == ["cuda:0"] and loaded.tolist() == [0.0, 1.0, 2.0, 3.0]
    f.seek(0)
    assert stride.load(f, map_location={"cuda:0": "cpu"}).device.type == "cpu"
    f.seek(0)
    with pytest.raises(RuntimeError, match=r"\[load\] .*'mps', a device stride does not have"):
        stride.load(f, map_location="mps")
    if not stride.cuda.is_available():
        f.seek(0)
        with pytest.raises(RuntimeError, match=r"\[load\] .*map_location='cpu'"):
            stride.load(f, map_location="cuda:0")
    f.seek(0)
    with pytest.raises(RuntimeError, match="must return that storage"):
        stride.load(f, map_location=lambda storage, location: "elsewhere")
    with pytest.raises(TypeError, match="map_location must be"):
        stride.load(f, map_location=3)


# ---- stride.save and stride.load, without torch ----


def tiny_model():
    return stride.nn.Sequential(stride.nn.Linear(4, 8), stride.nn.LayerNorm(8))


def nanogpt_checkpoint():
    """The dict nanoGPT's train.py saves, built from stride's own objects."""
    model = tiny_model()
    opt = stride.optim.AdamW(model.parameters(), lr=6e-4, betas=(0.9, 0.95))
    model(stride.randn(3, 4)).sum().backward()
    opt.step()
    return {
        "model": model.state_dict(),
        "optimizer": opt.state_dict(),
        "model_args": {"n_layer": 2, "n_head": 4, "n_embd": 8, "bias": False, "dropout": 0.0},
        "iter_num": 2000,
        "best_val_loss": stride.tensor(1.4698),
        "config": {"out_dir": "out", "dtype": "bfloat16", "compile": False, "lr": 6e-4},
    }


def assert_same(a, b):
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, stride.Tensor):
        assert a.dtype is b.dtype and a.shape == b.shape and a.stride() == b.stride()
        assert a.requires_grad == b.requires_grad
        assert a.to(stride.float64).tolist() == b.to(stride.float64).tolist()
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for key in a:
            assert_same(a[key], b[key])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y)
    else:
        assert a == b


def test_a_nanogpt_checkpoint_round_trips(tmp_path):
    checkpoint = nanogpt_checkpoint()
    path = tmp_path / "ckpt.pt"
    stride.save(checkpoint, path)
    assert path.read_bytes()[:4] == b"PK\x03\x04"  # torch.save's format, by the suffix
    loaded = stride.load(path)
    assert_same(checkpoint, loaded)
    model = tiny_model()
    model.load_state_dict(loaded["model"])
    stride.optim.AdamW(model.parameters()).load_state_dict(loaded["optimizer"])
    assert os.listdir(tmp_path) == ["ckpt.pt"]  # no temporary left behind


def test_views_of_one_storage_share_memory_after_loading():
    base = stride.arange(12.0)
    saved = {"rows": base.view(3, 4), "cols": base.view(3, 4).T, "tail": base[8:], "again": base}
    f = io.BytesIO()
    stride.save(saved, f)
    f.seek(0)
    loaded = stride.load(f)
    assert loaded["cols"].stride() == (1, 4) and loaded["tail"].storage_offset() == 8
    assert loaded["again"] is not loaded["rows"]
    loaded["again"][9] = -1.0  # one storage: a write shows in every view
    assert loaded["tail"].tolist() == [8.0, -1.0, 10.0, 11.0]
    assert loaded["cols"][1, 2].item() == -1.0


def test_a_slice_saves_only_the_elements_it_reaches():
    big = stride.zeros(1_000_000)
    f = io.BytesIO()
    stride.save({"few": big[10:20]}, f)
    assert len(f.getvalue()) < 4096
    f.seek(0)
    loaded = stride.load(f)["few"]
    assert loaded.shape == (10,) and loaded.storage_offset() == 0


def test_a_tensor_saved_twice_loads_as_one_object():
    t = stride.ones(3)
    f = io.BytesIO()
    stride.save([t, {"same": t}, stride.nn.Parameter(stride.ones(2))], f)
    f.seek(0)
    loaded = stride.load(f)
    assert loaded[0] is loaded[1]["same"]
    assert isinstance(loaded[2], stride.nn.Parameter) and loaded[2].requires_grad


def test_every_dtype_and_plain_value_round_trips():
    values = {
        "tensors": [stride.ones(2, dtype=dtype) for dtype in DTYPES],
        "empty": stride.empty(2, 0),
        "scalar": stride.tensor(2.5, dtype=stride.float64),
        "numbers": (None, True, 7, -(2**70), 1.5, 2 - 1j),
        "text": ["é", b"\x00\xff"],
        "kinds": {stride.float16, stride.bfloat16},
        "device": stride.device("cuda", 1),
        7: collections.OrderedDict(a=1),
    }
    f = io.BytesIO()
    stride.save(values, f)
    f.seek(0)
    assert_same(values, stride.load(f))


DTYPES = (
    stride.float32,
    stride.float64,
    stride.float16,
    stride.bfloat16,
    stride.int64,
    stride.int32,
    stride.uint8,
    stride.bool,
)


def test_the_format_follows_the_suffix_or_the_argument(tmp_path):
    sd = {"w": stride.ones(2)}
    stride.save(sd, tmp_path / "a.safetensors")
    stride.save(sd, tmp_path / "b.bin")
    stride.save(sd, tmp_path / "c.bin", format="safetensors")
    heads = {p.name: p.read_bytes()[:4] for p in tmp_path.iterdir()}
    assert heads["b.bin"] == b"PK\x03\x04" and heads["a.safetensors"] != b"PK\x03\x04"
    assert heads["c.bin"] == heads["a.safetensors"]
    for name in heads:
        assert stride.load(tmp_path / name)["w"].tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="metadata is a safetensors header"):
        stride.save(sd, tmp_path / "d.pt", metadata={"a": "b"})
    with pytest.raises(TypeError, match="safetensors file is written to a path"):
        stride.save(sd, io.BytesIO(), format="safetensors")
    with pytest.raises(ValueError, match="format must be"):
        stride.save(sd, tmp_path / "e.pt", format="pickle")
    with pytest.raises(TypeError, match=r"\[save\] cannot save a object \(at x/1\)"):
        stride.save({"x": [1, object()]}, tmp_path / "f.pt")
    assert not (tmp_path / "f.pt").exists()


def test_the_archive_is_laid_out_as_torch_writes_it():
    f = io.BytesIO()
    stride.save({"a": stride.ones(3), "b": stride.ones(5, dtype=stride.float16)}, f)
    data = f.getvalue()
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        infos = {i.filename: i for i in z.infolist()}
        assert z.read("archive/byteorder") == sys.byteorder.encode()
        assert z.read("archive/version") == b"3\n"
        assert len(z.read("archive/.data/serialization_id")) == 40
        assert z.read("archive/data.pkl")[:2] == b"\x80\x02"  # pickle protocol 2
        assert z.testzip() is None  # every CRC holds
    assert list(infos)[0] == "archive/data.pkl"
    for name, info in infos.items():
        assert info.compress_type == zipfile.ZIP_STORED
        name_length, extra_length = struct.unpack("<HH", data[info.header_offset + 26 :][:4])
        assert (info.header_offset + 30 + name_length + extra_length) % 64 == 0, name


@pytest.mark.parametrize("suffix", [".pt", ".safetensors"])
def test_mmap_maps_the_storages_copy_on_write(tmp_path, suffix):
    path = tmp_path / f"m{suffix}"
    stride.save({"x": stride.arange(16.0), "h": stride.ones(4, dtype=stride.bfloat16)}, path)
    before = path.read_bytes()
    loaded = stride.load(path, mmap=True)
    if os.path.exists("/proc/self/maps"):
        with open("/proc/self/maps") as maps:
            mapped = [line.split()[0] for line in maps if line.rstrip().endswith(str(path))]
        address = loaded["x"].data_ptr()
        assert any(int(a, 16) <= address < int(b, 16) for a, b in (m.split("-") for m in mapped))
    loaded["x"][0] = 5.0
    assert loaded["x"][0].item() == 5.0 and path.read_bytes() == before
    assert loaded["h"].tolist() == [1.0] * 4
    with pytest.raises(ValueError, match="mmap=True maps a file by its path"):
        stride.load(io.BytesIO(before), mmap=True)


def test_a_safetensors_file_still_loads_with_map_location(tmp_path):
    path = tmp_path / "w.safetensors"
    stride.save({"w": stride.ones(2)}, path)
    assert stride.load(path, map_location="cpu")["w"].tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="safetensors files from a path only"):
        stride.load(io.BytesIO(path.read_bytes()))


def test_the_zip64_records_are_written_past_the_32_bit_limits(monkeypatch):
    """Sizes, offsets and counts past zip's 16 and 32 bits, with the limits
    lowered so that small files reach them."""
    monkeypatch.setattr(_torch_zip, "_MAX_32", 100)
    monkeypatch.setattr(_torch_zip, "_MAX_16", 3)
    saved = {"a": stride.arange(40.0), "b": stride.ones(3)}
    f = io.BytesIO()
    stride.save(saved, f)
    with zipfile.ZipFile(io.BytesIO(f.getvalue())) as z:
        assert z.testzip() is None
    f.seek(0)
    assert_same(saved, stride.load(f))
    torch = torch_if_installed()
    if torch is not None:
        f.seek(0)
        assert_matches(torch.load(f, weights_only=True), saved, torch, same_offsets=False)


# ---- refused globals: nothing a file names runs ----


def test_a_global_outside_the_list_is_refused_before_it_runs(tmp_path):
    marker = tmp_path / "ran"
    body = op_call("os", "mkdir", op_str(str(marker)))
    for weights_only in (True, False):
        f = archive(pickled(body))
        with pytest.raises(pickle.UnpicklingError, match=r"\[load\] refused global os\.mkdir in"):
            stride.load(f, weights_only=weights_only)
    assert not marker.exists()
    with pytest.raises(pickle.UnpicklingError, match="even with weights_only=False"):
        stride.load(archive(pickled(body)), weights_only=False)
    with pytest.raises(pickle.UnpicklingError, match="refused global builtins.eval"):
        stride.load(archive(pickled(op_call("__builtin__", "eval", op_str("1")))))


@pytest.mark.parametrize(
    "body, message",
    [
        (op_global("torch", "int8"), "torch.int8, which stride has no dtype for"),
        (op_tensor(storage="ShortStorage"), "torch.int16"),
        # NEWOBJ, INST and a persistent id that is not a storage's
        (op_global("collections", "OrderedDict") + b")\x81", "opcode NEWOBJ"),
        (b"(iposix\nsystem\n", "opcode INST"),
        (op_str("x") + pickle.BINPERSID, "is not a storage's"),
        # REDUCE on what no GLOBAL named, BUILD on a list, a memo never put
        (op_str("x") + b")R", "REDUCE calls str"),
        (b"]}b", "BUILD sets attributes of an OrderedDict only"),
        (b"h\x07", "at byte 2"),
    ],
)
def test_pickles_that_build_anything_else_are_refused(body, message):
    with pytest.raises(pickle.UnpicklingError, match=message):
        stride.load(archive(pickled(body), {"0": FLOATS}))


# ---- hostile files: a clean exception naming load and the file ----


def load_bytes(tmp_path, data):
    path = tmp_path / "hostile.pt"
    path.write_bytes(data)
    return stride.load(path)


@pytest.mark.parametrize(
    "tensor, message",
    [
        (op_tensor(size=(5,)), "reaches element 4 of storage '0', which holds 4"),
        (op_tensor(size=(2, 2), stride=(3, 1)), "reaches element 4"),
        (op_tensor(offset=-1), "negative or huge"),
        (op_tensor(size=(-1,)), "negative or huge"),
        (op_tensor(size=(2**62, 2**62), stride=(0, 0)), "overflow"),
        (op_tensor(size=(1,), stride=(2**64,)), "negative or huge"),
        (op_tensor(size=(2, 2), stride=(1,)), "2 sizes but 1 strides"),
        (op_tensor(numel=-3), "has -3 elements"),
    ],
)
def test_impossible_geometry_is_refused(tmp_path, tensor, message):
    with pytest.raises(pickle.UnpicklingError, match=rf"\[load\] .*hostile.pt: .*{message}"):
        load_bytes(tmp_path, archive(pickled(tensor), {"0": FLOATS}).getvalue())


def test_missing_and_short_storages_are_refused(tmp_path):
    with pytest.raises(OSError, match=r"hostile.pt: the pickle names storage '7', which has no"):
        load_bytes(tmp_path, archive(pickled(op_tensor(key="7")), {"0": FLOATS}).getvalue())
    with pytest.raises(OSError, match="holds 8 bytes, short of the 16"):
        load_bytes(tmp_path, archive(pickled(op_tensor()), {"0": FLOATS[:8]}).getvalue())
    with pytest.raises(OSError, match="bool storage '0' holds bytes other than 0 and 1"):
        tensor = op_tensor(storage="BoolStorage", numel=2, size=(2,))
        load_bytes(tmp_path, archive(pickled(tensor), {"0": b"\x01\x02"}).getvalue())
    with pytest.raises(OSError, match="no data.pkl"):
        f = io.BytesIO()
        with zipfile.ZipFile(f, "w") as z:
            z.writestr("archive/constants.pkl", b"")
        load_bytes(tmp_path, f.getvalue())


def test_a_truncated_archive_is_refused(tmp_path):
    f = io.BytesIO()
    stride.save({"w": stride.ones(64)}, f)
    data = f.getvalue()
    for cut in (4, 100, len(data) // 2, len(data) - 1):
        with pytest.raises(OSError, match=r"\[load\] .*hostile.pt"):
            load_bytes(tmp_path, data[:cut])


def central_header(data, name):
    """Where the central directory's header of the record `name` starts."""
    at = data.find(b"PK\x01\x02")
    while data[at + 46 : at + 46 + len(name)] != name:
        at = data.find(b"PK\x01\x02", at + 1)
    return at


def test_a_zip64_offset_past_any_file_is_refused(tmp_path, monkeypatch):
    """A central directory may give a record's offset in 64 bits; one past
    2**63 is refused as a missing header, not an OverflowError of seek."""
    monkeypatch.setattr(_torch_zip, "_MAX_32", 100)  # so that the offsets go to ZIP64
    f = io.BytesIO()
    stride.save({"a": stride.arange(40.0)}, f)
    data = bytearray(f.getvalue())
    header = central_header(data, b"archive/data/0")
    name_length, extra_length = struct.unpack("<HH", data[header + 28 : header + 32])
    extra_end = header + 46 + name_length + extra_length
    data[extra_end - 8 : extra_end] = struct.pack("<Q", 2**64 - 1)  # the offset, last
    with pytest.raises(OSError, match="the local header of record 'archive/data/0' is missing"):
        load_bytes(tmp_path, bytes(data))


def test_recursion_bombs_are_refused_or_loaded_without_a_crash(tmp_path):
    deep_tuple = pickle.EMPTY_TUPLE + pickle.TUPLE1 * 1_000_000  # hash() of it would crash
    body = pickle.EMPTY_DICT + deep_tuple + pickle.NONE + pickle.SETITEM
    with pytest.raises(pickle.UnpicklingError, match="tuples nest deeper than"):
        load_bytes(tmp_path, archive(pickled(body)).getvalue())
    deep_list = pickle.EMPTY_LIST * 100_000 + pickle.APPEND * 99_999
    assert isinstance(load_bytes(tmp_path, archive(pickled(deep_list)).getvalue()), list)
    # set() of a memoized list of 100,000 items, again and again: 7 bytes a
    # copy, which would fill the memory.
    big_list = pickle.EMPTY_LIST + pickle.BINPUT + b"\x00"
    big_list += pickle.MARK + (pickle.BININT1 + b"\x01") * 100_000 + pickle.APPENDS
    set_global = op_global("builtins", "set") + pickle.BINPUT + b"\x01"
    copy = pickle.BINGET + b"\x01" + pickle.BINGET + b"\x00" + pickle.TUPLE1 + pickle.REDUCE
    bomb = big_list + set_global + pickle.EMPTY_LIST + (copy + pickle.APPEND) * 10_000
    with pytest.raises(pickle.UnpicklingError, match="copies far more than it holds"):
        load_bytes(tmp_path, archive(pickled(bomb)).getvalue())
    unclosed = pickle.MARK * 100_000
    with pytest.raises(pickle.UnpicklingError):
        load_bytes(tmp_path, archive(pickled(unclosed)).getvalue())


def saved_by_stride():
    f = io.BytesIO()
    base = stride.arange(6.0)
    stride.save({"w": base.view(2, 3), "t": base.view(2, 3).T, "n": 3, "s": {"a": [1.5]}}, f)
    return f.getvalue()


@pytest.fixture(scope="module", params=["zip", "legacy"])
def saved_by_torch(request):
    torch = torch_or_skip()
    f = io.BytesIO()
    base = torch.arange(6.0)
    saved = {"w": base.view(2, 3), "t": base.view(2, 3).T, "n": 3, "s": {"a": [1.5]}}
    torch.save(saved, f, _use_new_zipfile_serialization=request.param == "zip")
    return f.getvalue()


def mutations(data):
    """The bytes of a valid file truncated, with bytes overwritten, or with
    a span removed."""
    position = st.integers(0, len(data) - 1)
    truncated = st.builds(lambda n: data[:n], position)
    overwritten = st.builds(
        lambda edits: bytes(_overwrite(data, edits)),
        st.lists(st.tuples(position, st.integers(0, 255)), min_size=1, max_size=8),
    )
    removed = st.builds(lambda a, n: data[:a] + data[a + n :], position, st.integers(1, 64))
    return st.one_of(truncated, overwritten, removed)


def _overwrite(data, edits):
    data = bytearray(data)
    for at, value in edits:
        data[at] = value
    return data


FUZZ = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)


def assert_loads_or_refuses_cleanly(data):
    try:
        stride.load(io.BytesIO(data))
    except CLEAN_ERRORS as e:
        assert str(e).startswith("[load]"), repr(e)


@FUZZ
@given(data=st.data())
def test_mutated_files_stride_wrote_load_or_raise_cleanly(data):
    assert_loads_or_refuses_cleanly(data.draw(mutations(saved_by_stride())))


@FUZZ
@given(data=st.data())
def test_mutated_files_torch_wrote_load_or_raise_cleanly(saved_by_torch, data):
    assert_loads_or_refuses_cleanly(data.draw(mutations(saved_by_torch)))


@FUZZ
@given(data=st.data())
def test_mutated_pickles_in_a_sound_archive_load_or_raise_cleanly(saved_pickle, data):
    """The archive's CRC catches a changed data.pkl: this rewraps one, so
    that the unpickler sees every change."""
    storages = {"0": FLOATS * 2}
    assert_loads_or_refuses_cleanly(
        archive(data.draw(mutations(saved_pickle)), storages).getvalue()
    )


@pytest.fixture(scope="module")
def saved_pickle():
    """The data.pkl of a file stride saved, with views of one storage."""
    base = stride.arange(8.0)
    saved = {"w": base.view(2, 4), "t": base.view(2, 4).T, "p": stride.nn.Parameter(base[:2])}
    saved["rest"] = [1, 2.5, "x", None, (True, b"b"), {3}, collections.OrderedDict(a=1)]
    f = io.BytesIO()
    stride.save(saved, f)
    with zipfile.ZipFile(f) as z:
        return z.read("archive/data.pkl")


# ---- torch.save -> stride.load, and stride.save -> torch.load ----


def assert_matches(t, s, torch, same_offsets=True):
    """A torch object t and a stride object s hold the same: tensors of the
    same dtype, shape, strides (and storage offset) and values."""
    if isinstance(t, torch.Tensor):
        assert isinstance(s, stride.Tensor), type(s)
        assert str(t.dtype).split(".")[1] == repr(s.dtype).split(".")[1]
        assert tuple(t.shape) == s.shape and t.stride() == s.stride()
        assert not same_offsets or t.storage_offset() == s.storage_offset()
        assert isinstance(t, torch.nn.Parameter) == isinstance(s, stride.nn.Parameter)
        assert t.requires_grad == s.requires_grad
        assert s.detach().to(stride.float64).tolist() == t.detach().double().tolist()
    elif isinstance(t, dict):
        assert type(t) is type(s) and list(t) == list(s)
        for key in t:
            assert_matches(t[key], s[key], torch, same_offsets)
    elif isinstance(t, (list, tuple)):
        assert isinstance(s, type(t).__mro__[-2]) and len(t) == len(s)  # torch.Size -> tuple
        for x, y in zip(t, s):
            assert_matches(x, y, torch, same_offsets)
    elif isinstance(t, (torch.dtype, torch.device)):
        assert str(t).replace("torch.", "") == str(s).replace("stride.", "")
    else:
        assert t == s and type(t) is type(s)


def torch_objects(torch):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.LayerNorm(8))
    base = torch.arange(24.0)
    return {
        "model": model.state_dict(),
        "rows": base.view(4, 6),
        "cols": base.view(4, 6).T,
        "tail": base[20:],
        **{str(d).split(".")[1]: torch.ones(2, 3, dtype=d).T for d in torch_dtypes(torch)},
        "bf16": torch.randn(3, 5, dtype=torch.bfloat16),
        "param": torch.nn.Parameter(torch.randn(3)),
        "frozen": torch.nn.Parameter(torch.randn(3), requires_grad=False),
        "leaf": torch.ones(2, requires_grad=True),
        "size": torch.Size([2, 3]),
        "dtype": torch.float16,
        "device": torch.device("cuda", 1),
        "plain": ["a", None, 1.5, (1, 2), {3}, True, 2**80],
    }


def torch_dtypes(torch):
    return (
        torch.float32,
        torch.float64,
        torch.float16,
        torch.bfloat16,
        torch.int64,
        torch.int32,
        torch.uint8,
        torch.bool,
    )


@pytest.mark.parametrize("zip_format", [True, False], ids=["zip", "legacy"])
def test_stride_loads_what_torch_saved(tmp_path, zip_format):
    torch = torch_or_skip()
    saved = torch_objects(torch)
    path = tmp_path / "torch.pt"
    torch.save(saved, path, _use_new_zipfile_serialization=zip_format)
    loaded = stride.load(path)
    assert_matches(saved, loaded, torch)
    assert loaded["model"]._metadata == saved["model"]._metadata  # modules' versions
    loaded["rows"][1, 2] = -1.0  # one storage: a write shows in every view
    assert loaded["cols"][2, 1].item() == -1.0
    if not zip_format:
        with pytest.raises(ValueError, match="legacy format.*mmap=False"):
            stride.load(path, mmap=True)
        # map_location moves the storages after their bytes are read.
        on_meta = stride.load(path, map_location="meta")
        assert on_meta["cols"].device.type == "meta" and on_meta["cols"].stride() == (1, 6)


def test_stride_maps_what_torch_saved(tmp_path):
    torch = torch_or_skip()
    saved = torch_objects(torch)
    path = tmp_path / "torch.pt"
    torch.save(saved, path)
    assert_matches(saved, stride.load(path, mmap=True, map_location="cpu"), torch)


def test_stride_loads_torch_adamw_state():
    torch = torch_or_skip()
    model = torch.nn.Linear(3, 2)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1)
    for _ in range(2):
        model(torch.randn(4, 3)).sum().backward()
        opt.step()
    f = io.BytesIO()
    torch.save({"optimizer": opt.state_dict(), "iter_num": 2}, f)
    f.seek(0)
    loaded = stride.load(f)
    assert_matches({"optimizer": opt.state_dict(), "iter_num": 2}, loaded, torch)
    assert loaded["optimizer"]["state"][0]["step"].item() == 2.0


def test_torch_agrees_on_a_big_endian_archive():
    torch = torch_or_skip()
    storages = {"0": np.arange(4, dtype=">f4").tobytes()}
    data = archive(pickled(op_dict(w=op_tensor())), storages, byteorder=b"big").getvalue()
    expected = torch.load(io.BytesIO(data), weights_only=True)["w"]
    assert stride.load(io.BytesIO(data))["w"].tolist() == expected.tolist() == [0, 1, 2, 3]


def test_a_global_torch_refuses_is_refused_too():
    torch = torch_or_skip()
    f = io.BytesIO()
    torch.save({"args": argparse.Namespace(lr=0.1), "w": torch.ones(2)}, f)
    with pytest.raises(pickle.UnpicklingError):
        torch.load(io.BytesIO(f.getvalue()), weights_only=True)
    with pytest.raises(pickle.UnpicklingError, match="refused global argparse.Namespace"):
        stride.load(io.BytesIO(f.getvalue()))


def test_torch_loads_what_stride_saved(tmp_path):
    torch = torch_or_skip()
    checkpoint = nanogpt_checkpoint()
    base = stride.arange(24.0)
    checkpoint["views"] = {"rows": base.view(4, 6), "cols": base.view(4, 6).T, "tail": base[20:]}
    checkpoint["dtypes"] = [stride.ones(2, 3, dtype=d).T for d in DTYPES]
    checkpoint["param"] = stride.nn.Parameter(stride.randn(3))
    checkpoint["plain"] = [None, (1, 2), {3}, b"x", 1j, stride.bfloat16, stride.device("cpu")]
    path = tmp_path / "ckpt.pt"
    stride.save(checkpoint, path)
    for mmap in (False, True):
        loaded = torch.load(path, weights_only=True, mmap=mmap)
        assert_matches(loaded, checkpoint, torch, same_offsets=False)
    views = loaded["views"]
    assert views["rows"].untyped_storage().data_ptr() == views["tail"].untyped_storage().data_ptr()
    assert views["cols"].untyped_storage().nbytes() == 24 * 4  # written once
    twin = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.LayerNorm(8))
    twin.load_state_dict(loaded["model"], strict=True)
