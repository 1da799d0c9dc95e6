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


# NumPy's dtypes that stride has, and stride's for each.
NUMPY_DTYPES = [
    (np.bool_, stride.bool),
    (np.uint8, stride.uint8),
    (np.int32, stride.int32),
    (np.int64, stride.int64),
    (np.float16, stride.float16),
    (np.float32, stride.float32),
    (np.float64, stride.float64),
    (np.complex64, stride.complex64),
    (np.complex128, stride.complex128),
]


@pytest.mark.parametrize("np_dtype, dtype", NUMPY_DTYPES)
def test_every_numpy_dtype_round_trips(np_dtype, dtype):
    a = np.arange(6).astype(np_dtype).reshape(2, 3)
    t = stride.from_numpy(a)
    assert t.dtype is dtype
    assert np.array_equal(t.numpy(), a)
    assert np.array_equal(np.asarray(t), a)
    assert memoryview(t).shape == (2, 3)


def test_unsupported_dtypes_raise_type_error():
    with pytest.raises(TypeError):
        stride.from_numpy(np.zeros(2, dtype=np.uint16))
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


# ---- NumPy values as data: stride.tensor copies, stride.as_tensor shares ----


@pytest.mark.parametrize("np_dtype, dtype", NUMPY_DTYPES)
def test_tensor_copies_a_numpy_array_with_its_dtype(np_dtype, dtype):
    a = np.arange(6).astype(np_dtype).reshape(2, 3)
    t = stride.tensor(a)
    assert t.dtype is dtype and t.shape == (2, 3)
    assert np.array_equal(t.numpy(), a)
    a[0, 0] = 1 - a[0, 0]  # a copy: the array's writes stay its own
    assert t[0, 0].item() != a[0, 0]


def test_tensor_takes_any_layout_and_converts_to_the_dtype_given():
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    assert stride.tensor(a[::-1, ::2]).tolist() == a[::-1, ::2].tolist()
    assert stride.tensor(a.T).tolist() == a.T.tolist()
    big_endian = np.arange(3, dtype=">i4")
    assert stride.tensor(big_endian).tolist() == [0, 1, 2]
    assert stride.tensor(a, dtype=stride.float32).dtype is stride.float32
    assert stride.tensor(a, dtype=stride.bfloat16).float().tolist() == a.tolist()
    assert stride.tensor(np.zeros((0, 2))).shape == (0, 2)


@pytest.mark.parametrize(
    "value, dtype",
    [
        (np.float32(1.5), stride.float32),
        (np.float64(1.5), stride.float64),
        (np.float16(1.5), stride.float16),
        (np.int64(3), stride.int64),
        (np.int32(3), stride.int32),
        (np.uint8(3), stride.uint8),
        (np.bool_(True), stride.bool),
        (np.array(2.5), stride.float64),
    ],
)
def test_tensor_of_a_numpy_scalar_keeps_its_dtype(value, dtype):
    t = stride.tensor(value)
    assert t.dim() == 0 and t.dtype is dtype and t.item() == value.item()


@pytest.mark.parametrize(
    "data, dtype, shape",
    [  # the dtypes torch.tensor infers: each element's, promoted together
        ([np.float32(1), np.float32(2)], stride.float32, (2,)),
        ([np.float64(1.5)], stride.float64, (1,)),
        ([np.int32(1), np.int32(2)], stride.int32, (2,)),
        ([[np.int64(1)], [np.int64(2)]], stride.int64, (2, 1)),
        ([np.bool_(True), np.bool_(False)], stride.bool, (2,)),
        ([1, np.float64(2.5)], stride.float64, (2,)),
        ([np.int32(1), 2.5], stride.float32, (2,)),
        ([np.array([1.0, 2.0]), np.array([3.0, 4.0])], stride.float64, (2, 2)),
        ([stride.tensor(1.5), stride.tensor(2)], stride.float32, (2,)),
    ],
)
def test_tensor_of_nested_lists_with_numpy_scalars(data, dtype, shape):
    t = stride.tensor(data)
    assert t.dtype is dtype and t.shape == shape
    assert np.array_equal(t.float().numpy(), np.array(data, dtype=np.float64).astype(np.float32))


def test_tensor_refuses_numpy_dtypes_stride_has_not():
    for a in (np.zeros(2, np.int16), np.zeros(2, np.clongdouble), np.array(["a"]), [np.int8(1)]):
        with pytest.raises(TypeError, match=r"tensor\(\): data: stride has no dtype"):
            stride.tensor(a)


def test_as_tensor_shares_a_numpy_arrays_memory_when_it_can():
    a = np.zeros(4, dtype=np.float32)
    t = stride.as_tensor(a)
    t[1] = 5
    assert a[1] == 5 and t.data_ptr() == a.ctypes.data
    assert stride.as_tensor(a, dtype=stride.float32, device="cpu").data_ptr() == a.ctypes.data
    strided = np.zeros((2, 4), dtype=np.int64)[:, ::2]
    stride.as_tensor(strided)[0, 1] = 7
    assert strided[0, 1] == 7
    # A copy where sharing cannot be: another dtype, negative strides, a
    # read-only array, another byte order.
    copies = [
        stride.as_tensor(a, dtype=stride.float64),
        stride.as_tensor(a[::-1]),
        stride.as_tensor(np.frombuffer(bytes(16), dtype=np.float32)),
        stride.as_tensor(a.astype(">f4")),
    ]
    for c in copies:
        c.fill_(9)
    assert a.tolist() == [0, 5, 0, 0]


def test_as_tensor_of_a_tensor_or_of_lists():
    t = stride.ones(2)
    assert stride.as_tensor(t) is t
    assert stride.as_tensor(t, dtype=stride.float64).dtype is stride.float64
    assert stride.as_tensor([1, 2]).dtype is stride.int64
    assert stride.as_tensor(np.float32(1.5)).dtype is stride.float32


def test_numpy_values_as_shapes_indices_and_assigned_values():
    assert stride.zeros(np.array([2, 3])).shape == (2, 3)
    assert stride.ones(np.int64(2), np.int32(3)).shape == (2, 3)
    x = stride.arange(6.0).view(2, 3)
    assert x.sum(np.array([0, 1])).item() == 15
    assert x[np.array([1, 0])].tolist() == [[3, 4, 5], [0, 1, 2]]
    assert x[np.int64(1)].tolist() == [3, 4, 5]
    assert x[np.array([True, False])].tolist() == [[0, 1, 2]]
    x[0] = [7.0, 8.0, 9.0]
    x[1, np.array([0, 2])] = np.array([5.0, 6.0])
    x[1, 1] = np.float32(-1)
    assert x.tolist() == [[7, 8, 9], [5, -1, 6]]
