"""Memory shared with NumPy and DLPack frameworks, and kept alive."""

import gc

import numpy as np
import pytest
import stride


def test_numpy_and_tensor_share_memory_both_ways():
    a = np.zeros((2, 3), dtype=np.float32)
    t = stride.from_numpy(a)
    t[0, 1] = 5
    assert a[0, 1] == 5
    n = t.numpy()
    n[1, 2] = -1
    assert t[1, 2].item() == -1
    assert n.ctypes.data == t.data_ptr()


def test_strided_arrays_keep_their_strides():
    a = np.arange(12, dtype=np.float64).reshape(3, 4)[:, ::2]
    t = stride.from_numpy(a)
    assert t.stride() == (4, 2) and t.tolist() == a.tolist()
    assert stride.from_numpy(a.T).tolist() == a.T.tolist()
    with pytest.raises(ValueError, match="negative strides"):
        stride.from_numpy(a[::-1])


@pytest.mark.parametrize(
    "np_dtype, dtype",
    [
        (np.bool_, stride.bool),
        (np.uint8, stride.uint8),
        (np.int32, stride.int32),
        (np.int64, stride.int64),
        (np.float16, stride.float16),
        (np.float32, stride.float32),
        (np.float64, stride.float64),
    ],
)
def test_every_numpy_dtype_round_trips(np_dtype, dtype):
    a = np.arange(6).astype(np_dtype).reshape(2, 3)
    t = stride.from_numpy(a)
    assert t.dtype is dtype
    assert np.array_equal(t.numpy(), a)
    assert np.array_equal(np.asarray(t), a)
    assert memoryview(t).shape == (2, 3)


def test_unsupported_dtypes_raise_type_error():
    with pytest.raises(TypeError):
        stride.from_numpy(np.zeros(2, dtype=np.complex64))
    with pytest.raises(TypeError, match="bfloat16"):
        stride.zeros(2, dtype=stride.bfloat16).numpy()
    with pytest.raises(TypeError, match="requires grad"):
        stride.zeros(2, requires_grad=True).numpy()


def test_owner_outlives_the_other_side():
    t = stride.from_numpy(np.arange(1000, dtype=np.float32))
    gc.collect()
    assert t[999].item() == 999
    n = (stride.arange(1000).float() * 2).numpy()
    gc.collect()
    assert n[999] == 1998
    view = memoryview(stride.ones(4))
    gc.collect()
    assert view.tolist() == [1.0, 1.0, 1.0, 1.0]


def test_dlpack_with_numpy():
    t = stride.arange(6).view(2, 3).t()
    n = np.from_dlpack(t)
    assert n.tolist() == t.tolist()
    t[0, 0] = 42  # NumPy marks arrays from unversioned capsules read-only
    assert n[0, 0] == 42
    back = stride.from_dlpack(np.arange(3.0))
    assert back.tolist() == [0.0, 1.0, 2.0]
    assert t.__dlpack_device__() == (1, 0)


def test_dlpack_with_torch():
    torch = pytest.importorskip("torch", reason="torch is not installed (make venv-torch)")
    t = stride.arange(6, dtype=stride.float32).view(2, 3)
    tt = torch.from_dlpack(t)
    tt[0, 0] = 7
    assert t[0, 0].item() == 7
    x = torch.arange(6.0).reshape(2, 3).t()
    s = stride.from_dlpack(x)
    assert s.stride() == x.stride() and s.tolist() == x.tolist()
    x[0, 0] = -3
    assert s[0, 0].item() == -3
    del x
    gc.collect()
    assert s.tolist()[1] == [1.0, 4.0]
