"""Autograd from Python: PyTorch's semantics and names."""

import pytest

import stride


def test_backward_accumulates_into_leaves():
    x = stride.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]
    (x * 3).sum().backward()
    assert x.grad.tolist() == [5.0, 7.0, 9.0]
    assert x.is_leaf and (x * 2).grad_fn is not None
    assert (x * 2).grad_fn.name() == "MulBackward"


def test_no_grad_enable_grad_and_inference_mode():
    x = stride.ones(2, requires_grad=True)
    with stride.no_grad():
        assert not (x * 2).requires_grad
        with stride.enable_grad():
            assert (x * 2).requires_grad
    with stride.inference_mode():
        assert not (x + 1).requires_grad
    assert stride.is_grad_enabled()

    @stride.no_grad()
    def f(t):
        return t * 2

    assert not f(x).requires_grad


def test_grad_with_create_graph_gives_second_derivatives():
    x = stride.tensor(3.0, dtype=stride.float64, requires_grad=True)
    y = x**3
    (dy,) = stride.autograd.grad(y, x, create_graph=True)
    assert dy.item() == 27.0
    (d2y,) = stride.autograd.grad(dy, x)
    assert d2y.item() == 18.0


def test_retain_grad_and_hooks():
    x = stride.ones(3, requires_grad=True)
    y = x * 2
    y.retain_grad()
    seen = []
    handle = y.register_hook(lambda g: seen.append(g.tolist()))
    x.register_hook(lambda g: g * 10)
    y.sum().backward()
    assert y.grad.tolist() == [1.0, 1.0, 1.0]
    assert seen == [[1.0, 1.0, 1.0]]
    assert x.grad.tolist() == [20.0, 20.0, 20.0]
    handle.remove()


def test_detach_and_data_share_memory():
    x = stride.ones(2, requires_grad=True)
    d = x.detach()
    assert not d.requires_grad and d.data_ptr() == x.data_ptr()
    x.data.mul_(3)
    assert x.tolist() == [3.0, 3.0]


def test_anomaly_mode_names_the_forward_op():
    x = stride.tensor([0.0], requires_grad=True)
    with stride.autograd.detect_anomaly():
        y = x.sqrt() * 0  # d sqrt at 0 is inf; times 0 is nan
        with pytest.raises(RuntimeError, match="sqrt"):
            y.sum().backward()


def test_gradcheck_in_float64():
    a = stride.randn(3, 4, dtype=stride.float64, requires_grad=True)
    b = stride.randn(4, 2, dtype=stride.float64, requires_grad=True)
    assert stride.autograd.gradcheck(lambda x, y: (x @ y).tanh(), (a, b))
    with pytest.raises(RuntimeError):
        stride.autograd.gradcheck(lambda x: x.detach() * x, (a,))


def test_in_place_on_a_leaf_that_requires_grad_is_an_error():
    x = stride.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError):
        x.add_(1)
