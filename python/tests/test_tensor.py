"""Tensors from Python: construction, properties, printing, conversions."""

import math

import pytest
import stride


def test_tensor_infers_dtype_and_shape_like_torch():
    assert stride.tensor([1, 2, 3]).dtype is stride.int64
    assert stride.tensor([1.0, 2]).dtype is stride.float32
    assert stride.tensor([True, False]).dtype is stride.bool
    assert stride.tensor(3.5).shape == ()
    assert stride.tensor([[1, 2], [3, 4]]).shape == (2, 2)
    assert stride.tensor([]).shape == (0,)
    assert stride.tensor([1, 2], dtype=stride.float64).dtype is stride.float64
    big = 2**62 + 1
    assert stride.tensor([big]).tolist() == [big]


def test_ragged_lists_and_bad_elements_raise():
    with pytest.raises(ValueError, match="rectangular"):
        stride.tensor([[1, 2], [3]])
    with pytest.raises(TypeError):
        stride.tensor(["a"])


def test_factories_take_sizes_as_varargs_or_a_sequence():
    assert stride.zeros(2, 3).shape == (2, 3)
    assert stride.ones((2, 3)).shape == (2, 3)
    assert stride.full((2,), 7).tolist() == [7, 7]
    assert stride.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert stride.arange(1, 2, 0.25).tolist() == [1.0, 1.25, 1.5, 1.75]
    assert stride.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert stride.randn(4, 5, dtype=stride.float64).dtype is stride.float64
    x = stride.randint(0, 10, (100,))
    assert x.dtype is stride.int64 and 0 <= x.min().item() and x.max().item() < 10
    assert stride.zeros(2, requires_grad=True).requires_grad


def test_manual_seed_repeats_the_numbers():
    stride.manual_seed(123)
    a = stride.randn(8).tolist()
    stride.manual_seed(123)
    assert stride.randn(8).tolist() == a


def test_geometry_matches_the_storage():
    x = stride.arange(12).view(3, 4)
    t = x.t()
    assert t.shape == (4, 3) and t.stride() == (1, 4) and t.stride(0) == 1
    assert not t.is_contiguous() and x.is_contiguous()
    assert x[1].storage_offset() == 4
    assert t.data_ptr() == x.data_ptr()
    assert x.size() == (3, 4) and x.size(-1) == 4 and x.ndim == 2 and x.numel() == 12
    assert len(x) == 3
    assert [row.tolist() for row in x][2] == [8, 9, 10, 11]
    with pytest.raises(IndexError):
        x.size(2)


def test_item_tolist_and_python_numbers():
    assert stride.tensor(2.5).item() == 2.5
    assert stride.tensor(3).item() == 3
    assert float(stride.tensor([1.5])) == 1.5
    assert int(stride.tensor(7)) == 7
    assert bool(stride.tensor(True))
    assert [10, 20, 30][stride.tensor(1)] == 20
    with pytest.raises(ValueError):
        stride.ones(2).item()
    with pytest.raises(ValueError, match="ambiguous"):
        bool(stride.ones(2))


def test_repr_reads_like_torch():
    assert repr(stride.tensor([1, 2])) == "tensor([1, 2])"
    assert "dtype=stride.float64" in repr(stride.zeros(1, dtype=stride.float64))
    assert repr(stride.zeros(1, requires_grad=True)).endswith("requires_grad=True)")
    y = stride.ones(2, requires_grad=True) * 2
    assert repr(y).endswith("grad_fn=<MulBackward>)")
    assert repr(stride.float32) == "stride.float32"
    assert repr(stride.device("cpu")) == "device(type='cpu')"


def test_dtype_and_device_conversions():
    x = stride.arange(3)
    assert x.float().dtype is stride.float32
    assert x.double().dtype is stride.float64
    assert x.to(stride.float64).dtype is stride.float64
    assert x.to(dtype=stride.bool).tolist() == [False, True, True]
    assert x.to("cpu").device == "cpu"
    assert x.to(stride.zeros(1, dtype=stride.float64)).dtype is stride.float64
    assert x.to("meta").is_meta
    with pytest.raises(TypeError, match="dtype"):
        stride.zeros(2, dtype="float32")
    with pytest.raises(TypeError):
        stride.zeros(2, dtype=stride.float32, device=3)


def test_meta_tensors_have_shapes_but_no_data():
    x = stride.zeros(1000, 1000, device="meta")
    y = x @ x
    assert y.shape == (1000, 1000) and y.is_meta
    assert "device='meta'" in repr(y)


def test_operators_follow_promotion():
    a = stride.tensor([1, 2, 3])
    assert (a + 1).dtype is stride.int64
    assert (a + 1.5).dtype is stride.float32
    assert (a * 2).tolist() == [2, 4, 6]
    assert (1 - a).tolist() == [0, -1, -2]
    assert (2 ** stride.tensor([1.0, 3.0])).tolist() == [2.0, 8.0]
    assert (a / 2).tolist() == [0.5, 1.0, 1.5]
    assert (a < 2).tolist() == [True, False, False]
    assert (a == stride.tensor([1, 0, 3])).tolist() == [True, False, True]
    m = stride.ones(2, 3) @ stride.ones(3, 4)
    assert m.shape == (2, 4) and m[0, 0].item() == 3.0


def test_in_place_ops_return_the_same_object():
    x = stride.zeros(3)
    y = x.add_(1)
    assert y is x
    before = x
    x += 2
    assert x is before and x.tolist() == [3.0, 3.0, 3.0]
    x.mul_(2).sub_(1)
    assert x.tolist() == [5.0, 5.0, 5.0]


def test_ops_as_methods_and_functions():
    x = stride.tensor([[1.0, -2.0], [3.0, -4.0]])
    assert stride.abs(x).tolist() == x.abs().tolist() == [[1, 2], [3, 4]]
    assert x.sum().item() == -2.0
    assert x.sum(dim=0).tolist() == [4.0, -6.0]
    assert x.sum((0, 1), keepdim=True).shape == (1, 1)
    assert x.mean().item() == -0.5
    values, indices = x.max(dim=1)
    assert values.tolist() == [1.0, 3.0] and indices.tolist() == [0, 0]
    assert x.argmax().item() == 2
    assert math.isclose(x.softmax(-1).sum(-1)[0].item(), 1.0, rel_tol=1e-6)
    assert stride.cat([x, x], dim=0).shape == (4, 2)
    assert stride.stack([x, x]).shape == (2, 2, 2)
    assert stride.where(x > 0, x, stride.zeros(2, 2)).tolist() == [[1, 0], [3, 0]]
    assert stride.where(x > 0, x, 0.0).tolist() == [[1, 0], [3, 0]]
    assert x.clamp(min=0).tolist() == [[1, 0], [3, 0]]
    assert x.var().item() == pytest.approx(x.double().var().item())
    assert x.std(unbiased=False).item() == pytest.approx(math.sqrt(7.25))
    assert stride.exp(stride.zeros(2)).tolist() == [1.0, 1.0]
    assert x.view(4).shape == (4,) and x.reshape(1, 4).shape == (1, 4)
    assert x.permute(1, 0).tolist() == x.t().tolist() == x.T.tolist()
    assert x.unsqueeze(0).squeeze(0).shape == (2, 2)
    assert [c.shape for c in x.chunk(2, dim=1)] == [(2, 1), (2, 1)]


def test_errors_are_the_right_python_exceptions():
    with pytest.raises(RuntimeError):
        stride.ones(2, 3) @ stride.ones(2, 3)
    with pytest.raises(RuntimeError):
        stride.ones(2) + stride.ones(3)
    with pytest.raises(IndexError):
        stride.ones(2, 3).select(0, 5)
    with pytest.raises(TypeError):
        stride.ones(2) + "a"


def test_bitwise_operators_are_logical_on_bool_bitwise_on_integers_and_refuse_floats():
    a = stride.tensor([True, False, True, False])
    b = stride.tensor([True, True, False, False])
    assert (~a).tolist() == [False, True, False, True]
    assert (a & b).tolist() == [True, False, False, False]
    assert (a | b).tolist() == [True, True, True, False]
    assert (a ^ b).tolist() == [False, True, True, False]
    assert (~stride.tensor([1, 2])).tolist() == [-2, -3]
    assert (stride.tensor([6, 5]) & 3).tolist() == [2, 1]
    with pytest.raises(TypeError, match="bitwise"):
        ~stride.tensor([1.0, 2.0])


def test_random_scalar_tensor_and_index_functions():
    t = stride.empty(1000, dtype=stride.int64).random_(3, 7)
    assert 3 <= t.min().item() and t.max().item() < 7
    assert stride.empty(100, dtype=stride.int64).random_(5).max().item() < 5
    g1, g2 = stride.Generator(1), stride.Generator(1)
    a = stride.empty(8, dtype=stride.int64).random_(0, 100, generator=g1)
    assert a.tolist() == stride.empty(8, dtype=stride.int64).random_(0, 100, generator=g2).tolist()
    s = stride.scalar_tensor(2.5)
    assert s.ndim == 0 and s.item() == 2.5 and s.dtype == stride.float32
    assert stride.scalar_tensor(3, dtype=stride.int64).dtype == stride.int64
    x = stride.arange(12).view(3, 4)
    rows, cols = stride.tensor([0, 2]), stride.tensor([1, 3])
    assert stride.index(x, (rows, cols)).tolist() == [1, 11]
    assert stride.index(x, (None, cols)).tolist() == x[:, cols].tolist()
