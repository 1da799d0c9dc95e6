"""stride.save / stride.load: state dicts as safetensors, refused cleanly when
the file is bad, readable by (and reading) PyTorch's safetensors."""

import collections
import json
import os
import pathlib
import struct

import numpy as np
import pytest
import stride


def state_dict():
    return collections.OrderedDict(
        [
            ("layers.1.weight", stride.randn(3, 4)),
            ("bias", stride.arange(5)),
            ("half", stride.randn(2, 2).to(stride.float16)),
            ("brain", stride.randn(2, 3).to(stride.bfloat16)),
            ("mask", stride.tensor([True, False, True])),
            ("scalar", stride.tensor(2.5, dtype=stride.float64)),
            ("bytes", stride.tensor([1, 255], dtype=stride.uint8)),
            ("transposed", stride.randn(4, 3).T),  # a non-contiguous view
        ]
    )


def test_a_state_dict_round_trips_in_order(tmp_path):
    sd = state_dict()
    path = tmp_path / "model.safetensors"
    stride.save(sd, path)
    loaded = stride.load(path)
    assert isinstance(loaded, collections.OrderedDict)
    assert list(loaded) == list(sd)
    for name, t in sd.items():
        got = loaded[name]
        assert got.dtype is t.dtype and got.shape == t.shape and got.is_contiguous()
        assert got.tolist() == t.tolist(), name


def test_metadata_is_written_and_read_back(tmp_path):
    path = str(tmp_path / "m.safetensors")
    stride.save({"w": stride.ones(2)}, path, metadata={"step": "100", "format": "pt"})
    assert stride.serialization.load_metadata(path) == {"step": "100", "format": "pt"}
    stride.save({"w": stride.ones(2)}, path)  # overwrites, atomically
    assert stride.serialization.load_metadata(path) == {}
    assert os.listdir(tmp_path) == ["m.safetensors"]  # no temporary left behind


def test_what_cannot_be_saved_is_refused(tmp_path):
    path = tmp_path / "x.safetensors"
    with pytest.raises(TypeError, match="dict of str -> Tensor"):
        stride.save(stride.ones(1), path)
    with pytest.raises(TypeError, match="cannot save a object"):
        stride.save({"block": {"w": object()}}, path)
    with pytest.raises(TypeError, match="keys must be str or int"):
        stride.save({"block": {(1, 2): stride.ones(1)}}, path)
    with pytest.raises(TypeError, match="metadata must map str to str"):
        stride.save({"w": stride.ones(1)}, path, metadata={"step": 1})
    with pytest.raises(ValueError, match="__metadata__"):
        stride.save({"__metadata__": stride.ones(1)}, path)
    with pytest.raises(ValueError, match="stride's own"):
        stride.save({"a": [1]}, path, metadata={"stride.structure": "{}"})
    assert not path.exists()


def test_a_nested_checkpoint_round_trips(tmp_path):
    """torch.save's usual checkpoint: model and optimizer state dicts and a
    step, with int keys, lists, tuples and numbers."""
    model = stride.nn.Linear(3, 2)
    opt = stride.optim.Adam(model.parameters(), lr=0.01, betas=(0.8, 0.9))
    model(stride.randn(4, 3)).sum().backward()
    opt.step()
    checkpoint = {
        "model": model.state_dict(),
        "optimizer": opt.state_dict(),
        "step": 7,
        "note": None,
    }
    path = tmp_path / "ckpt.safetensors"
    stride.save(checkpoint, path)
    loaded = stride.load(path)
    assert list(loaded) == ["model", "optimizer", "step", "note"]
    assert loaded["step"] == 7 and loaded["note"] is None
    assert list(loaded["model"]) == ["weight", "bias"]
    assert stride.equal(loaded["model"]["weight"], model.weight)
    state = loaded["optimizer"]
    assert state["param_groups"][0]["betas"] == (0.8, 0.9)
    assert set(state["state"]) == {0, 1}  # int keys stay ints
    assert stride.equal(state["state"][0]["exp_avg"], opt.state_dict()["state"][0]["exp_avg"])
    fresh = stride.optim.Adam(stride.nn.Linear(3, 2).parameters())
    fresh.load_state_dict(state)
    # The tensors are plain safetensors entries, named by their paths.
    assert (
        "optimizer/state/0/exp_avg" in stride.serialization.load_metadata(path)["stride.structure"]
    )


def test_a_write_that_fails_raises_oserror(tmp_path):
    with pytest.raises(OSError):
        stride.save({"w": stride.ones(1)}, tmp_path / "missing_dir" / "x.safetensors")


# ---- bad files: an OSError with stride's message, never a crash ----


def write_file(tmp_path, data):
    path = tmp_path / "bad.safetensors"
    path.write_bytes(data)
    return path


def safetensors_bytes(header, data=b""):
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + data


def test_a_truncated_file_is_refused(tmp_path):
    good = tmp_path / "good.safetensors"
    stride.save(state_dict(), good)
    data = good.read_bytes()
    for cut in (3, 8, 20, len(data) - 1):
        path = write_file(tmp_path, data[:cut])
        with pytest.raises(OSError, match=r"\[load_safetensors\] .*bad.safetensors"):
            stride.load(path)


def test_a_garbage_header_is_refused(tmp_path):
    for data in (
        b"\x10\x00\x00\x00\x00\x00\x00\x00not json at all!",
        struct.pack("<Q", 1 << 60) + b"{}",
        safetensors_bytes([1, 2, 3]),
        safetensors_bytes({"w": {"dtype": "F99", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 4),
    ):
        with pytest.raises(OSError, match=r"\[load_safetensors\]"):
            stride.load(write_file(tmp_path, data))


def test_a_header_pointing_past_the_end_is_refused(tmp_path):
    header = {"w": {"dtype": "F32", "shape": [1000], "data_offsets": [0, 4000]}}
    with pytest.raises(OSError, match=r"\[load_safetensors\]"):
        stride.load(write_file(tmp_path, safetensors_bytes(header, b"\0" * 16)))


def test_a_missing_file_is_an_oserror(tmp_path):
    with pytest.raises(OSError, match="nothing_here"):
        stride.load(tmp_path / "nothing_here.safetensors")


# ---- PyTorch's safetensors reads stride's files and the other way round ----


def test_pytorch_reads_what_stride_saved(tmp_path):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    st = pytest.importorskip("safetensors.torch", reason="safetensors is not installed")
    sd = state_dict()
    path = str(tmp_path / "stride.safetensors")
    stride.save(sd, path, metadata={"who": "stride"})
    loaded = st.load_file(path)
    assert set(loaded) == set(sd)
    for name, t in sd.items():
        if t.dtype is stride.bfloat16:
            assert loaded[name].float().tolist() == t.to(stride.float32).tolist()
        else:
            assert loaded[name].tolist() == t.tolist(), name
    assert loaded["bias"].dtype == torch.int64 and loaded["mask"].dtype == torch.bool


def test_stride_reads_what_pytorch_saved(tmp_path):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    st = pytest.importorskip("safetensors.torch", reason="safetensors is not installed")
    torch.manual_seed(0)
    sd = {
        "w": torch.randn(3, 5),
        "ids": torch.arange(7),
        "h": torch.randn(4).half(),
        "b": torch.tensor([True, False]),
        "bf": torch.randn(2, 2, dtype=torch.bfloat16),
    }
    path = pathlib.Path(tmp_path / "torch.safetensors")
    st.save_file(sd, str(path), metadata={"format": "pt"})
    loaded = stride.load(path)
    assert set(loaded) == set(sd)
    for name in ("w", "ids", "h", "b"):
        assert np.array_equal(loaded[name].numpy(), sd[name].numpy()), name
    assert loaded["bf"].to(stride.float32).tolist() == sd["bf"].float().tolist()
    assert stride.serialization.load_metadata(path) == {"format": "pt"}
