"""Indexing as users write it, checked against NumPy, including views, and
advanced indexing (several tensor indices, assignment through them) with
PyTorch's semantics."""

import numpy as np
import pytest
import stride
from hypothesis import given, settings
from hypothesis import strategies as st


def grid():
    return stride.arange(60).view(3, 4, 5)


def test_basic_indices_are_views():
    x = grid()
    v = x[1, :, ::2]
    assert v.shape == (4, 3) and v.data_ptr() != 0
    v[0, 0] = -1
    assert x[1, 0, 0].item() == -1
    assert x[..., 1].shape == (3, 4)
    assert x[None, 0].shape == (1, 4, 5)
    assert x[-1, -1, -1].item() == 59
    assert x[:, 1:3].storage_offset() == 5


def test_integer_and_boolean_tensor_indices_gather():
    x = grid()
    assert x[stride.tensor([2, 0])].shape == (2, 4, 5)
    assert x[:, [0, -1]].tolist() == x.numpy()[:, [0, -1]].tolist()
    mask = x > 50
    assert x[mask].tolist() == list(range(51, 60))
    assert x[0][x[0] >= 15].tolist() == list(range(15, 20))
    assert x[stride.tensor([[0, 1], [1, 2]])].shape == (2, 2, 4, 5)


def test_several_tensor_indices_broadcast_together():
    x = stride.arange(210).view(5, 6, 7)
    a = x.numpy()
    i, j = [0, 4, -1], [[1], [2]]
    assert x[i, :, [1, 2, 3]].tolist() == a[i, :, [1, 2, 3]].tolist()  # separated: B first
    assert x[:, i, [1, 2, 3]].shape == (5, 3)  # adjacent: B in place
    assert x[stride.tensor(j), stride.tensor(i)].shape == (2, 3, 7)
    assert x[..., j, i].tolist() == a[..., j, i].tolist()
    mask = stride.tensor([True, False, False, False, True, False])
    assert x[[0, 2], mask].tolist() == a[[0, 2], mask.numpy()].tolist()
    assert x[True].shape == (1, 5, 6, 7) and x[False].shape == (0, 5, 6, 7)


def test_an_int_beside_tensor_indices_is_a_view_as_in_pytorch():
    # PyTorch selects with the int first (NumPy would count it as an
    # advanced index and move the result's dims to the front).
    x = stride.arange(210).view(5, 6, 7)
    assert x[0, :, [0, 1]].shape == (6, 2)
    assert x[0, :, [0, 1]].tolist() == x.numpy()[0][:, [0, 1]].tolist()
    # So does a 0-d integer tensor (NumPy's 0-d arrays are index arrays).
    assert x[stride.tensor(0), :, [0, 1]].shape == (6, 2)
    assert x[stride.tensor(-1)].tolist() == x[4].tolist()


def test_assignment_through_tensor_indices():
    x = stride.zeros(3, 4)
    x[[0, 2], [1, -1]] = stride.tensor([5.0, 6.0])
    assert x.tolist() == [[0, 5, 0, 0], [0, 0, 0, 0], [0, 0, 0, 6]]
    x[stride.tensor([1])] = 7  # a number broadcasts over the row
    assert x[1].tolist() == [7, 7, 7, 7]
    x[:, [0, 3]] = stride.tensor([[1.0], [2.0], [3.0]])  # (3, 1) broadcasts to (3, 2)
    assert x[:, 0].tolist() == [1, 2, 3] and x[:, 3].tolist() == [1, 2, 3]
    y = stride.zeros(2, 3)
    y[y == 0] = stride.arange(6, dtype=stride.float32)  # values of the mask's nnz shape
    assert y.tolist() == [[0, 1, 2], [3, 4, 5]]
    y[stride.tensor([0, 0])] = stride.tensor([1, 2, 3])  # int64 values cast to self's dtype
    assert y[0].tolist() == [1, 2, 3]
    with pytest.raises(RuntimeError, match="cannot be broadcast"):
        y[[0, 1]] = stride.ones(3, 3)
    with pytest.raises(IndexError, match="index 2 is out of bounds for dimension 0 with size 2"):
        y[[2]] = 0.0


def test_index_put_binds_pytorchs_signature():
    x = stride.zeros(4)
    i = stride.tensor([1, 1, 3])
    out = stride.index_put(x, (i,), stride.tensor([1.0, 2.0, 3.0]), accumulate=True)
    assert out.tolist() == [0, 3, 0, 3] and x.tolist() == [0, 0, 0, 0]
    assert x.index_put_((i,), stride.tensor(9.0)) is x
    assert x.tolist() == [0, 9, 0, 9]
    m = stride.zeros(2, 3)
    m.index_put_((None, stride.tensor([2])), stride.ones(1))
    assert m.tolist() == [[0, 0, 1], [0, 0, 1]]


def test_assignment_through_views_and_masks():
    x = stride.zeros(3, 4)
    x[:, 1:] = 1
    assert x.sum().item() == 9
    x[0] = stride.tensor([5.0, 6.0, 7.0, 8.0])
    assert x[0].tolist() == [5, 6, 7, 8]
    x[x > 4] = 0
    assert x.max().item() == 1
    x[x == 1] = stride.tensor(2.0)
    assert x.sum().item() == 12


def test_bad_indices_raise_index_error():
    x = grid()
    with pytest.raises(IndexError):
        x[3]
    with pytest.raises(IndexError):
        x[0, 0, 0, 0]
    with pytest.raises(IndexError):
        x[stride.tensor([7])]
    with pytest.raises(IndexError):
        x["a"]
    with pytest.raises(IndexError):
        x[..., ...]
    with pytest.raises(ValueError):
        x[::-1]
    with pytest.raises(IndexError):
        x[stride.tensor([1.0])]


def test_gradients_of_advanced_indexing():
    x = stride.randn(3, 4, 5, dtype=stride.float64, requires_grad=True)
    i = stride.tensor([2, 0, 2])  # a duplicate: its gradients add up
    j = stride.tensor([[1], [-1]])
    assert stride.autograd.gradcheck(lambda t: t[i, :, j], (x,))
    assert stride.autograd.gradcheck(lambda t: t[:, i, j[0]].square(), (x,))
    x[i, 0, 0].sum().backward()
    assert x.grad[2, 0, 0].item() == 2.0 and x.grad[0, 0, 0].item() == 1.0


def test_gradients_of_assignment():
    x = stride.randn(3, 4, dtype=stride.float64, requires_grad=True)
    v = stride.randn(2, dtype=stride.float64, requires_grad=True)

    def assign(t, values):
        y = t * 1  # a non-leaf that may be written in place
        y[[0, 2], [1, 3]] = values
        return y * y

    assert stride.autograd.gradcheck(assign, (x, v))
    assign(x, v).sum().backward()
    assert x.grad[0, 1].item() == 0.0 and x.grad[2, 3].item() == 0.0  # overwritten
    assert v.grad.tolist() == pytest.approx((2 * v.detach()).tolist())

    def accumulate(t, values):
        return stride.index_put(t, (stride.tensor([1, 1]),), values, accumulate=True).sin()

    w = stride.randn(4, dtype=stride.float64, requires_grad=True)
    assert stride.autograd.gradcheck(accumulate, (x, w))

    def second_order(t, values):
        (g,) = stride.autograd.grad(assign(t, values).sum(), [values], create_graph=True)
        return g

    assert stride.autograd.gradcheck(second_order, (x, v))


def test_gradient_flows_through_indexing():
    x = stride.arange(6, dtype=stride.float64).view(2, 3).requires_grad_()
    (x[:, 1:] * 2).sum().backward()
    assert x.grad.tolist() == [[0, 2, 2], [0, 2, 2]]
    x.grad = None
    x[x > 2].sum().backward()
    assert x.grad.tolist() == [[0, 0, 0], [1, 1, 1]]


index_part = st.one_of(
    st.integers(-4, 3),
    st.slices(4).filter(lambda s: s.step is None or s.step > 0),
    st.just(None),
    st.just(Ellipsis),
)


@settings(max_examples=2000, deadline=None)
@given(st.lists(index_part, min_size=1, max_size=4))
def test_basic_indexing_matches_numpy(parts):
    a = np.arange(4 * 4 * 4).reshape(4, 4, 4)
    x = stride.from_numpy(a)
    index = tuple(parts)
    try:
        want = a[index]
    except IndexError:
        with pytest.raises(IndexError):
            x[index]
        return
    got = x[index]
    assert got.shape == want.shape
    assert got.tolist() == want.tolist()


# Advanced index expressions: tensor indices (int arrays of shapes that may
# or may not broadcast, values that may be out of range, 1-d and 2-d masks)
# mixed with slices, None and .... No ints (nor 0-d index tensors) beside
# tensor indices: there PyTorch (and stride) select first, while NumPy
# counts the int as an index array
# (test_an_int_beside_tensor_indices_is_a_view_as_in_pytorch).
index_shapes = st.sampled_from([(1,), (2,), (3,), (2, 1), (1, 3), (2, 3)])
int_index = st.builds(
    lambda shape, seed: np.random.default_rng(seed).integers(-5, 5, size=shape),
    index_shapes,
    st.integers(0, 2**32 - 1),
)
mask_index = st.builds(
    lambda ndim, seed: np.random.default_rng(seed).random((4,) * ndim) < 0.5,
    st.integers(1, 2),
    st.integers(0, 2**32 - 1),
)
advanced_part = st.one_of(
    int_index,
    int_index,
    mask_index,
    st.slices(4).filter(lambda s: s.step is None or s.step > 0),
    st.just(None),
    st.just(Ellipsis),
)


def numpy_index(index, ndim=3):
    """index for NumPy, with `...` written out as the slices it stands for.
    PyTorch (and stride) let a `...` of no dims leave tensor indices
    adjacent; NumPy counts any `...` as separating them."""

    def dims(p):
        if isinstance(p, np.ndarray) and p.dtype == bool:
            return p.ndim
        return int(p is not None and p is not Ellipsis)

    consumed = sum(dims(p) for p in index)
    if sum(p is Ellipsis for p in index) != 1 or consumed > ndim:
        return index
    out = []
    for p in index:
        out.extend([slice(None)] * (ndim - consumed) if p is Ellipsis else [p])
    return tuple(out)


def as_stride_index(index):
    return tuple(stride.from_numpy(p) if isinstance(p, np.ndarray) else p for p in index)


def has_tensor_index(index):
    return any(isinstance(p, np.ndarray) for p in index)


@settings(max_examples=1500, deadline=None)
@given(st.lists(advanced_part, min_size=1, max_size=4).filter(has_tensor_index))
def test_advanced_indexing_matches_numpy(parts):
    a = np.arange(4 * 4 * 4).reshape(4, 4, 4)
    x = stride.from_numpy(a)
    index = tuple(parts)
    try:
        want = a[numpy_index(index)]
    except IndexError:
        with pytest.raises(IndexError):
            x[as_stride_index(index)]
        return
    got = x[as_stride_index(index)]
    assert got.shape == want.shape
    assert got.tolist() == want.tolist()


@settings(max_examples=1000, deadline=None)
@given(st.lists(advanced_part, min_size=1, max_size=4).filter(has_tensor_index), st.booleans())
def test_advanced_assignment_matches_numpy(parts, broadcast_a_number):
    a = np.arange(4 * 4 * 4).reshape(4, 4, 4)
    index = tuple(parts)
    try:
        # Values that depend only on the element written, so that indices
        # naming one element twice agree on its value whatever the order.
        target = np.arange(a.size).reshape(a.shape)[numpy_index(index)]
    except IndexError:
        with pytest.raises(IndexError):
            stride.from_numpy(a.copy())[as_stride_index(index)] = 0
        return
    values = -1 if broadcast_a_number else -(target + 1)
    want = a.copy()
    want[numpy_index(index)] = values
    x = stride.from_numpy(a.copy())
    x[as_stride_index(index)] = values if broadcast_a_number else stride.from_numpy(values)
    assert x.tolist() == want.tolist()


@settings(max_examples=300, deadline=None)
@given(st.lists(int_index, min_size=1, max_size=3))
def test_accumulating_index_put_matches_numpy_add_at(arrays):
    a = np.zeros((4, 4, 4))
    index = tuple(arrays)
    try:
        shape = np.broadcast_shapes(*(p.shape for p in arrays))
        np.zeros((4, 4, 4))[index]
    except (IndexError, ValueError):
        return
    result_shape = shape + a.shape[len(arrays) :]
    values = np.arange(1.0, 1.0 + np.prod(result_shape)).reshape(result_shape)
    np.add.at(a, index, values)
    x = stride.zeros(4, 4, 4, dtype=stride.float64)
    indices = tuple(stride.from_numpy(p) for p in arrays)
    x.index_put_(indices, stride.from_numpy(values), accumulate=True)
    assert x.tolist() == a.tolist()
