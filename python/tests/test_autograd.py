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


# ---- custom functions: stride.autograd.Function ----


class ScaledExp(stride.autograd.Function):
    """y = exp(x) * k, k a number; backward written with stride ops."""

    @staticmethod
    def forward(ctx, x, k=2.0):
        y = x.exp() * k
        ctx.save_for_backward(y)
        ctx.k = k
        ctx.seen_needs = ctx.needs_input_grad
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y, None


def test_function_records_a_node_named_after_the_class():
    x = stride.tensor([0.0, 1.0], dtype=stride.float64, requires_grad=True)
    y = ScaledExp.apply(x, 3.0)
    assert y.grad_fn.name() == "ScaledExpBackward"
    assert repr(y.grad_fn) == "<ScaledExpBackward>"
    y.sum().backward()
    assert x.grad.tolist() == pytest.approx([3.0, 3.0 * 2.718281828459045])


def test_function_forward_runs_under_no_grad_and_sees_needs_input_grad():
    seen = {}

    class Probe(stride.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, n):
            seen["grad_enabled"] = stride.is_grad_enabled()
            seen["needs"] = ctx.needs_input_grad
            return a * b * n

        @staticmethod
        def backward(ctx, grad):
            return grad, None, None

    a = stride.ones(2, requires_grad=True)
    Probe.apply(a, stride.ones(2), 3).sum().backward()
    assert seen == {"grad_enabled": False, "needs": (True, False, False)}
    assert a.grad.tolist() == [1.0, 1.0]
    assert not Probe.apply(stride.ones(2), stride.ones(2), 1).requires_grad


def test_function_gradcheck_in_float64_and_double_backward():
    x = stride.randn(3, 4, dtype=stride.float64, requires_grad=True)
    w = stride.randn(3, 4, dtype=stride.float64, requires_grad=True)
    assert stride.autograd.gradcheck(lambda a, b: ScaledExp.apply(a * b, 0.5), (x, w))

    def first_grad(a, b):
        y = ScaledExp.apply(a * b, 0.5).sum()
        (ga, gb) = stride.autograd.grad(y, [a, b], create_graph=True)
        return ga + gb * 2

    assert stride.autograd.gradcheck(first_grad, (x, w))
    t = stride.tensor(0.5, dtype=stride.float64, requires_grad=True)
    (dy,) = stride.autograd.grad(ScaledExp.apply(t, 1.0), t, create_graph=True)
    (d2y,) = stride.autograd.grad(dy, t)
    assert d2y.item() == pytest.approx(1.6487212707001282)


class SortWithIndices(stride.autograd.Function):
    """Two outputs, the second (int64 positions) non-differentiable."""

    @staticmethod
    def forward(ctx, x, materialize):
        doubled = x * 2
        order = x.argmax(0)
        ctx.mark_non_differentiable(order)
        ctx.set_materialize_grads(materialize)
        return doubled, order

    @staticmethod
    def backward(ctx, grad_doubled, grad_order):
        ctx.got = (grad_doubled is None, grad_order is None)
        return grad_doubled * 2, None


@pytest.mark.parametrize("materialize", [True, False])
def test_function_with_several_outputs_and_a_non_differentiable_one(materialize):
    x = stride.tensor([1.0, 3.0, 2.0], requires_grad=True)
    doubled, order = SortWithIndices.apply(x, materialize)
    assert doubled.requires_grad and not order.requires_grad
    assert order.item() == 1
    doubled.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    assert doubled.grad_fn is not None
    assert order.grad_fn is None


def test_function_materializes_missing_output_grads_as_zeros_or_none():
    seen = []

    class Two(stride.autograd.Function):
        @staticmethod
        def forward(ctx, x, materialize):
            ctx.set_materialize_grads(materialize)
            return x * 1, x * 2

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append(None if g2 is None else g2.tolist())
            return g1 if g2 is None else g1 + g2 * 2, None

    for materialize in (True, False):
        x = stride.ones(2, requires_grad=True)
        a, _ = Two.apply(x, materialize)
        a.sum().backward()
        assert x.grad.tolist() == [1.0, 1.0]
    assert seen == [[0.0, 0.0], None]


def test_function_returning_an_input_as_is():
    class Identity(stride.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 5

    x = stride.ones(2, requires_grad=True)
    y = Identity.apply(x)
    assert y is not x and x.is_leaf and y.data_ptr() == x.data_ptr()
    y.sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]


def _bad_function(backward):
    """A Function named Bad of (x, k) whose backward is `backward`."""
    methods = {
        "forward": staticmethod(lambda ctx, x, k: x * k),
        "backward": staticmethod(backward),
    }
    return type("Bad", (stride.autograd.Function,), methods)


def test_function_backward_errors_name_the_function():
    x = stride.ones(3, requires_grad=True)
    wrong_count = _bad_function(lambda ctx, g: g)
    count = r"BadBackward returned an incorrect number of gradients \(expected 2, got 1\)"
    with pytest.raises(RuntimeError, match=count):
        wrong_count.apply(x, 2.0).sum().backward()
    wrong_shape = _bad_function(lambda ctx, g: (stride.ones(4), None))
    with pytest.raises(RuntimeError, match="BadBackward returned an invalid gradient at index 0"):
        wrong_shape.apply(x, 2.0).sum().backward()
    grad_for_a_number = _bad_function(lambda ctx, g: (g, g))
    not_none = "BadBackward returned a gradient different than None at position 2"
    with pytest.raises(RuntimeError, match=not_none):
        grad_for_a_number.apply(x, 2.0).sum().backward()
    not_a_tensor = _bad_function(lambda ctx, g: (g, "oops"))
    with pytest.raises(TypeError, match="BadBackward returned a str"):
        not_a_tensor.apply(x, 2.0).sum().backward()


def test_function_forward_must_return_tensors():
    class Bad(stride.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return 3

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(TypeError, match="Bad.forward must return a tensor"):
        Bad.apply(stride.ones(1, requires_grad=True))


class MyError(Exception):
    pass


def test_an_exception_raised_in_backward_propagates_as_itself():
    def backward(ctx, g):
        raise MyError("backward refused")

    raising = _bad_function(backward)
    x = stride.ones(2, requires_grad=True)
    with pytest.raises(MyError, match="backward refused"):
        raising.apply(x, 1.0).sum().backward()
    # Grad mode is restored and autograd still works afterwards.
    assert stride.is_grad_enabled()
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_a_saved_tensor_modified_in_place_is_an_error():
    x = stride.ones(2, requires_grad=True)
    y = ScaledExp.apply(x, 1.0)
    with stride.no_grad():
        y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_the_graph_releases_the_python_context():
    import gc
    import weakref

    x = stride.ones(2, requires_grad=True)
    captured = []

    class Keep(stride.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            captured.append(weakref.ref(ctx))
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    y = Keep.apply(x)
    assert captured[0]() is not None
    y.sum().backward()  # frees the graph's saved state, ctx included
    del y
    gc.collect()
    assert captured[0]() is None
