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


# ---- losses ----

LOSSES = [
    ("l1_loss", {}),
    ("l1_loss", {"reduction": "none"}),
    ("smooth_l1_loss", {"beta": 0.5}),
    ("smooth_l1_loss", {"beta": 0.0, "reduction": "sum"}),
    ("huber_loss", {"delta": 0.5}),
    ("soft_margin_loss", {}),
    ("hinge_embedding_loss", {"margin": 0.5}),
    ("poisson_nll_loss", {"full": True}),
    ("kl_div", {"reduction": "batchmean"}),
    ("kl_div", {"reduction": "sum", "log_target": True}),
]


@needs_torch
@pytest.mark.parametrize("name,kwargs", LOSSES, ids=[f"{n}-{k}" for n, k in LOSSES])
def test_loss_values_and_gradients_match_pytorch(name, kwargs):
    a, b = values(1), np.abs(values(2))
    if name in ("soft_margin_loss", "hinge_embedding_loss"):
        b = np.sign(values(2))
    s, t = leaves(a)
    for got, want in zip(
        first_and_second_gradients(lambda x: getattr(F, name)(x, stride.tensor(b), **kwargs), s),
        first_and_second_gradients(lambda x: getattr(TF, name)(x, torch.tensor(b), **kwargs), t),
    ):
        assert want is None or close(got, want), name


@needs_torch
def test_binary_cross_entropy_matches_pytorch_at_the_edges():
    p = np.array([[0.0, 1.0, 1e-13, 0.3], [1.0, 0.0, 0.5, 0.999]])
    target = np.array([[1.0, 0.0, 1.0, 0.2], [1.0, 0.0, 0.0, 1.0]])
    weight = np.array([0.5, 1.0, 2.0, 1.5])
    s, t = leaves(p)
    got = F.binary_cross_entropy(
        s,
        stride.tensor(target.tolist(), dtype=stride.float64),
        stride.tensor(weight.tolist(), dtype=stride.float64),
        reduction="sum",
    )
    want = TF.binary_cross_entropy(t, torch.tensor(target), torch.tensor(weight), reduction="sum")
    got.backward()
    want.backward()
    assert close(got, want) and close(s.grad, t.grad)


@needs_torch
def test_binary_cross_entropy_with_logits_matches_pytorch():
    x, target = values(3, scale=10.0), np.random.default_rng(4).random((3, 8))
    weight, pos_weight = np.random.default_rng(5).random(8), np.linspace(0.5, 3.0, 8)
    s, t = leaves(x)
    for got, want in zip(
        first_and_second_gradients(
            lambda v: F.binary_cross_entropy_with_logits(
                v,
                stride.tensor(target.tolist(), dtype=stride.float64),
                stride.tensor(weight.tolist(), dtype=stride.float64),
                pos_weight=stride.tensor(pos_weight.tolist(), dtype=stride.float64),
            ),
            s,
        ),
        first_and_second_gradients(
            lambda v: TF.binary_cross_entropy_with_logits(
                v, torch.tensor(target), torch.tensor(weight), pos_weight=torch.tensor(pos_weight)
            ),
            t,
        ),
    ):
        assert close(got, want)


@needs_torch
@pytest.mark.parametrize(
    "name",
    [
        "l1_loss",
        "smooth_l1_loss",
        "huber_loss",
        "binary_cross_entropy",
        "binary_cross_entropy_with_logits",
        "kl_div",
        "soft_margin_loss",
        "hinge_embedding_loss",
        "poisson_nll_loss",
        "normalize",
        "pad",
    ],
)
def test_loss_and_vector_signatures_are_pytorch_s(name):
    assert parameters(getattr(F, name)) == parameters(getattr(TF, name))


def test_legacy_size_average_and_reduce_decide_the_reduction_with_a_warning():
    x, t = stride.tensor([1.0, -2.0]), stride.tensor([0.0, 0.0])
    with pytest.warns(UserWarning, match="reduction='sum'"):
        assert F.l1_loss(x, t, size_average=False).item() == 3.0
    with pytest.warns(UserWarning, match="reduction='none'"):
        assert F.l1_loss(x, t, reduce=False).tolist() == [1.0, 2.0]
    assert nn.L1Loss(size_average=False).reduction == "sum"


@needs_torch
def test_loss_modules_match_pytorch_s():
    a, b = values(6), 1 / (1 + np.exp(-values(7)))
    probs = 1 / (1 + np.exp(-a))
    w = np.linspace(0.5, 2.0, 8)
    pairs = [
        (nn.L1Loss(), torch.nn.L1Loss(), a, b),
        (nn.SmoothL1Loss(beta=0.5), torch.nn.SmoothL1Loss(beta=0.5), a, b),
        (nn.HuberLoss(delta=0.3), torch.nn.HuberLoss(delta=0.3), a, b),
        (
            nn.BCELoss(stride.tensor(w.tolist(), dtype=stride.float64)),
            torch.nn.BCELoss(torch.tensor(w)),
            probs,
            b,
        ),
        (
            nn.BCEWithLogitsLoss(pos_weight=stride.tensor(w.tolist(), dtype=stride.float64)),
            torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor(w)),
            a,
            b,
        ),
        (nn.KLDivLoss(reduction="batchmean"), torch.nn.KLDivLoss(reduction="batchmean"), a, b),
    ]
    for ours, theirs, x, y in pairs:
        got = ours(
            stride.tensor(x.tolist(), dtype=stride.float64),
            stride.tensor(y.tolist(), dtype=stride.float64),
        )
        want = theirs(torch.tensor(x), torch.tensor(y))
        assert close(got, want), type(ours).__name__
        assert repr(ours) == repr(theirs), type(ours).__name__
    assert [n for n, _ in nn.BCEWithLogitsLoss(pos_weight=stride.ones(3)).named_buffers()] == [
        "pos_weight"
    ]


def test_loss_errors_are_python_exceptions_naming_the_op():
    x = stride.tensor([0.5, 0.2])
    with pytest.raises(ValueError, match="l1_loss.*reduction"):
        F.l1_loss(x, x, reduction="average")
    with pytest.raises(ValueError, match="smooth_l1_loss.*beta"):
        F.smooth_l1_loss(x, x, beta=-1.0)
    with pytest.raises(ValueError, match="huber_loss.*delta"):
        F.huber_loss(x, x, delta=0.0)
    with pytest.raises(ValueError, match="binary_cross_entropy.*probability"):
        F.binary_cross_entropy(stride.tensor([1.5]), stride.tensor([1.0]))
    with pytest.raises(ValueError, match="binary_cross_entropy_with_logits.*shape"):
        F.binary_cross_entropy_with_logits(x, stride.tensor([1.0]))
    with pytest.raises(ValueError, match="kl_div.*batchmean"):
        F.kl_div(x, x, reduction="average")
    with pytest.raises(TypeError, match="kl_div"):
        F.kl_div(stride.arange(3), stride.arange(3))


# ---- one_hot, vectors, pad ----


@needs_torch
def test_one_hot_normalize_and_distances_match_pytorch():
    ids = [[0, 3, 1], [2, 2, 0]]
    assert F.one_hot(stride.tensor(ids)).tolist() == TF.one_hot(torch.tensor(ids)).tolist()
    assert F.one_hot(stride.tensor(ids), 5).dtype == stride.int64
    a, b = values(8, shape=(4, 6)), values(9, shape=(4, 6))
    a[1] = 0.0
    for fn, tfn in [
        (lambda x, y: F.normalize(x, p=3.0, dim=0), lambda x, y: TF.normalize(x, p=3.0, dim=0)),
        (lambda x, y: F.cosine_similarity(x, y), lambda x, y: TF.cosine_similarity(x, y)),
        (
            lambda x, y: F.pairwise_distance(x, y, p=1.5),
            lambda x, y: TF.pairwise_distance(x, y, 1.5),
        ),
    ]:
        (sx, tx), (sy, ty) = leaves(a), leaves(b)
        got, want = fn(sx, sy), tfn(tx, ty)
        got.sum().backward()
        want.sum().backward()
        assert close(got, want) and close(sx.grad, tx.grad) and close(sy.grad, ty.grad)


@needs_torch
@pytest.mark.parametrize(
    "pad,mode,shape",
    [
        ((1, 2), "constant", (2, 3)),
        ((1, -1, -2, 3, 0, 1), "constant", (2, 3, 4)),
        ((3, -1), "reflect", (2, 5)),
        ((1, 2, 2, 0), "reflect", (1, 3, 4)),
        ((1, 1, 2, 0, 1, 1), "reflect", (1, 2, 3, 4, 3)),
        ((2, 3, -1, 2), "replicate", (2, 3, 4)),
        ((4, -1, 2, 3), "circular", (1, 3, 5)),
    ],
)
def test_pad_matches_pytorch(pad, mode, shape):
    s, t = leaves(values(10, shape=shape))
    got = F.pad(s, pad, mode=mode, value=2.5 if mode == "constant" else None)
    want = TF.pad(t, pad, mode=mode, value=2.5 if mode == "constant" else None)
    gout = values(11, shape=tuple(want.shape))
    got.backward(stride.tensor(gout.tolist(), dtype=stride.float64))
    want.backward(torch.tensor(gout))
    assert close(got, want) and close(s.grad, t.grad)


def test_one_hot_and_pad_errors_are_python_exceptions():
    with pytest.raises(
        ValueError, match=r"one_hot\] class values must be in \[0, num_classes\); got 5"
    ):
        F.one_hot(stride.tensor([0, 5]), 3)
    with pytest.raises(ValueError, match="one_hot.*got -1"):
        F.one_hot(stride.tensor([0, -1]), 3)
    with pytest.raises(TypeError, match="one_hot.*int64"):
        F.one_hot(stride.tensor([0.0]), 3)
    with pytest.raises(ValueError, match="pad.*mode"):
        F.pad(stride.ones(2, 3), (1, 1), mode="mirror")
    with pytest.raises(ValueError, match="pad.*takes no value"):
        F.pad(stride.ones(2, 3), (1, 1), mode="reflect", value=1.0)
    with pytest.raises(ValueError, match="pad.*pairs"):
        F.pad(stride.ones(2, 3), (1,))
    with pytest.raises(ValueError, match="reflect padding"):
        F.pad(stride.ones(2, 3), (3, 0), mode="reflect")
    with pytest.raises(RuntimeError, match="reflect padding of the last 1"):
        F.pad(stride.ones(3), (1, 1), mode="reflect")


def test_flatten_and_unflatten():
    x = stride.ones(2, 3, 4)
    assert tuple(nn.Flatten()(x).shape) == (2, 12)
    assert tuple(nn.Flatten(0, 1)(x).shape) == (6, 4)
    assert tuple(nn.Unflatten(-1, (2, 2))(x).shape) == (2, 3, 2, 2)
    assert repr(nn.Flatten()) == "Flatten(start_dim=1, end_dim=-1)"
