"""torch.nn.functional's breadth in stride: the composed activations against
PyTorch (values and first and second gradients, in float64), their
signatures (names, defaults, keyword-only markers), inplace=, the modules
over them, and their errors as Python exceptions. The PyTorch comparisons
are skipped when torch is not installed (make venv-torch)."""

import ast
import inspect

import numpy as np
import pytest
import stride
import stride.nn.functional as F
from stride import nn

try:
    import torch
    import torch.nn.functional as TF
except ImportError:  # the comparisons skip; the rest runs
    torch = TF = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed (make venv-torch)")


def values(seed=0, shape=(3, 8), scale=3.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale


def leaves(a):
    """The same float64 values as a stride and a torch leaf requiring grad."""
    return (
        stride.tensor(np.asarray(a).tolist(), dtype=stride.float64, requires_grad=True),
        torch.tensor(np.asarray(a), dtype=torch.float64, requires_grad=True),
    )


def close(s, t, tol=1e-10):
    if s is None or t is None:  # an unused input: no gradient on either side
        return s is None and t is None
    return np.allclose(s.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol, equal_nan=True)


def first_and_second_gradients(fn, x):
    """fn(x), d(sum fn(x)^2)/dx with create_graph, and the gradient of the
    sum of that gradient (double backward; None where PyTorch has none, as
    for hardsigmoid and hardswish)."""
    grad = torch.autograd.grad if isinstance(x, torch.Tensor) else stride.autograd.grad
    y = fn(x)
    (g,) = grad([(y * y).sum()], [x], create_graph=True)
    try:
        (h,) = grad([g.sum()], [x])
    except RuntimeError as e:
        if "not implemented" not in str(e):
            raise
        h = None
    return y, g, h


ACTIVATIONS = [
    ("leaky_relu", {"negative_slope": 0.2}),
    ("elu", {"alpha": 0.7}),
    ("selu", {}),
    ("celu", {"alpha": 1.5}),
    ("softplus", {"beta": 2.0, "threshold": 5.0}),
    ("hardtanh", {"min_val": -0.5, "max_val": 1.0}),
    ("relu6", {}),
    ("hardswish", {}),
    ("hardsigmoid", {}),
    ("mish", {}),
    ("logsigmoid", {}),
    ("softsign", {}),
    ("tanhshrink", {}),
    ("softshrink", {"lambd": 0.3}),
    ("hardshrink", {"lambd": 0.7}),
    ("threshold", {"threshold": 0.1, "value": -2.0}),
    ("glu", {"dim": 1}),
    ("softmin", {"dim": 0}),
]


# PyTorch's float64 hardsigmoid and hardswish backward multiply by 1/6
# rounded to float32, 3e-8 off.
TOLERANCE = {"hardsigmoid": 1e-7, "hardswish": 1e-7}


@needs_torch
@pytest.mark.parametrize("name,kwargs", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation_values_and_gradients_match_pytorch(name, kwargs):
    s, t = leaves(values())
    for got, want in zip(
        first_and_second_gradients(lambda x: getattr(F, name)(x, **kwargs), s),
        first_and_second_gradients(lambda x: getattr(TF, name)(x, **kwargs), t),
    ):
        assert want is None or close(got, want, TOLERANCE.get(name, 1e-10)), name


@needs_torch
def test_prelu_matches_pytorch_with_a_weight_per_channel():
    s, t = leaves(values(shape=(2, 3, 4)))
    sw, tw = leaves([0.25, -0.5, 2.0])
    F.prelu(s, sw).sum().backward()
    TF.prelu(t, tw).sum().backward()
    assert close(F.prelu(s, sw), TF.prelu(t, tw))
    assert close(s.grad, t.grad) and close(sw.grad, tw.grad)


# PyTorch's functions written in C have no inspectable signature; these are
# their documented ones.
C_SIGNATURES = {
    "softplus": [("input", None), ("beta", 1), ("threshold", 20)],
    "logsigmoid": [("input", None)],
    "softshrink": [("input", None), ("lambd", 0.5)],
    "hardshrink": [("input", None), ("lambd", 0.5)],
    "prelu": [("input", None), ("weight", None)],
}


def parameters(fn):
    """[(name, default or None, kind)] of fn's signature: a Python
    function's, or a nanobind function's from its __nb_signature__ (the
    text of a def whose defaults are placeholders \\N into a tuple)."""
    if not hasattr(fn, "__nb_signature__"):
        return [
            (p.name, None if p.default is p.empty else p.default, p.kind)
            for p in inspect.signature(fn).parameters.values()
        ]
    ((text, _, defaults),) = fn.__nb_signature__
    args = ast.parse(text.replace("\\", "_") + ": pass").body[0].args
    value = {f"_{i}": d for i, d in enumerate(defaults or ())}

    def default(node):
        return None if node is None else value[node.id]

    positional = args.posonlyargs + args.args
    pos_defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    kinds = [inspect.Parameter.POSITIONAL_ONLY] * len(args.posonlyargs) + [
        inspect.Parameter.POSITIONAL_OR_KEYWORD
    ] * len(args.args)
    result = [(a.arg, default(d), k) for a, d, k in zip(positional, pos_defaults, kinds)]
    result += [
        (a.arg, default(d), inspect.Parameter.KEYWORD_ONLY)
        for a, d in zip(args.kwonlyargs, args.kw_defaults)
    ]
    return result


@needs_torch
@pytest.mark.parametrize("name", [a[0] for a in ACTIVATIONS] + ["prelu"])
def test_signatures_are_pytorch_s(name):
    ours = parameters(getattr(F, name))
    if name in C_SIGNATURES:
        assert [(n, d) for n, d, _ in ours] == C_SIGNATURES[name]
    else:
        assert ours == parameters(getattr(TF, name))


def test_inplace_writes_into_the_input_and_returns_it():
    x = stride.tensor([-2.0, -0.5, 0.5, 2.0])
    y = F.leaky_relu(x, 0.1, inplace=True)
    assert y is x or np.array_equal(y.numpy(), x.numpy())
    assert x.tolist() == pytest.approx([-0.2, -0.05, 0.5, 2.0])
    x = stride.tensor([-1.0, 3.0, 7.0])
    F.relu6(x, inplace=True)
    assert x.tolist() == [0.0, 3.0, 6.0]


def test_inplace_on_a_non_leaf_keeps_the_gradient():
    a = stride.tensor([-2.0, 1.0, 3.0], dtype=stride.float64, requires_grad=True)
    h = a * 2.0
    y = F.elu(h, inplace=True)
    y.sum().backward()
    assert a.grad.tolist() == pytest.approx([2.0 * np.exp(-4.0), 2.0, 2.0])


def test_inplace_on_a_leaf_that_requires_grad_is_refused():
    a = stride.tensor([1.0, -1.0], requires_grad=True)
    with pytest.raises(RuntimeError):
        F.hardtanh(a, inplace=True)


@needs_torch
def test_modules_match_pytorch_s():
    x = values(shape=(2, 4, 6))
    pairs = [
        (nn.LeakyReLU(0.2), torch.nn.LeakyReLU(0.2)),
        (nn.ELU(0.5), torch.nn.ELU(0.5)),
        (nn.SELU(), torch.nn.SELU()),
        (nn.CELU(2.0), torch.nn.CELU(2.0)),
        (nn.Softplus(2.0, 3.0), torch.nn.Softplus(2.0, 3.0)),
        (nn.Hardtanh(-2.0, 0.5), torch.nn.Hardtanh(-2.0, 0.5)),
        (nn.ReLU6(), torch.nn.ReLU6()),
        (nn.Hardswish(), torch.nn.Hardswish()),
        (nn.Hardsigmoid(), torch.nn.Hardsigmoid()),
        (nn.Mish(), torch.nn.Mish()),
        (nn.LogSigmoid(), torch.nn.LogSigmoid()),
        (nn.Softsign(), torch.nn.Softsign()),
        (nn.Tanhshrink(), torch.nn.Tanhshrink()),
        (nn.Softshrink(0.4), torch.nn.Softshrink(0.4)),
        (nn.Hardshrink(0.4), torch.nn.Hardshrink(0.4)),
        (nn.Threshold(0.5, 9.0), torch.nn.Threshold(0.5, 9.0)),
        (nn.GLU(1), torch.nn.GLU(1)),
        (nn.Softmin(2), torch.nn.Softmin(2)),
        (nn.PReLU(4, 0.1), torch.nn.PReLU(4, 0.1)),
    ]
    for ours, theirs in pairs:
        got = ours(stride.tensor(x.tolist(), dtype=stride.float64))
        want = theirs.double()(torch.tensor(x, dtype=torch.float64))
        assert close(got, want), type(ours).__name__
        assert repr(ours) == repr(theirs), type(ours).__name__


def test_prelu_module_has_a_learnable_weight():
    m = nn.PReLU(3)
    assert [name for name, _ in m.named_parameters()] == ["weight"]
    assert m.weight.tolist() == [0.25, 0.25, 0.25]
    m(stride.ones(2, 3) * -1.0).sum().backward()
    assert m.weight.grad.tolist() == [-2.0, -2.0, -2.0]


def test_activation_errors_are_python_exceptions_naming_the_op():
    ints = stride.arange(6)
    with pytest.raises(TypeError, match="leaky_relu"):
        F.leaky_relu(ints)
    with pytest.raises(ValueError, match="hardtanh.*min_val"):
        F.hardtanh(stride.ones(2), 1.0, -1.0)
    with pytest.raises(ValueError, match="softshrink.*lambd"):
        F.softshrink(stride.ones(2), -1.0)
    with pytest.raises(RuntimeError, match="glu.*even"):
        F.glu(stride.ones(3))
    with pytest.raises(RuntimeError, match="prelu"):
        F.prelu(stride.ones(2, 3), stride.ones(4))
    with pytest.raises(TypeError, match="softmin.*dim"):
        F.softmin(stride.ones(3))
    # Integers pass where PyTorch takes them: hardtanh, relu6, threshold.
    assert F.relu6(stride.tensor([-3, 2, 9])).tolist() == [0, 2, 6]
