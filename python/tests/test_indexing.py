"""Indexing as users write it, checked against NumPy, including views."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import stride


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
