"""The numeric composites (trace, diff, the trapezoidal rules, cov,
corrcoef, renorm, gradient, the histograms, sgn, resolve_neg, the triangle
indices, unravel_index) and stride.signal.windows against PyTorch: values,
float64 gradients, keyword names, named tuples and refusals. Skipped when
torch is not installed."""

import numpy as np
import pytest
import stride
import stride.signal.windows

torch = pytest.importorskip("torch", reason="torch is not installed (make venv-torch)")


def pair(*shape, seed=0, low=-2.0, high=2.0, requires_grad=False):
    a = np.random.default_rng(seed).uniform(low, high, shape)
    return (
        stride.tensor(a.tolist(), dtype=stride.float64, requires_grad=requires_grad),
        torch.tensor(a, dtype=torch.float64, requires_grad=requires_grad),
    )


def as_array(t):
    if isinstance(t, torch.Tensor):
        return t.detach().numpy(force=True)
    return np.asarray(t.detach().tolist())


def close(s, t, **kwargs):
    np.testing.assert_allclose(as_array(s), as_array(t), **kwargs)


def check_gradients(s_out, t_out, s_inputs, t_inputs):
    """The gradients of both outputs' weighted sums match."""
    weights = np.random.default_rng(1).uniform(-1, 1, tuple(t_out.shape))
    (s_out * stride.tensor(weights.tolist(), dtype=stride.float64)).sum().backward()
    (t_out * torch.tensor(weights)).sum().backward()
    for s_in, t_in in zip(s_inputs, t_inputs):
        close(s_in.grad, t_in.grad, rtol=1e-10, atol=1e-12)


DIFFERENTIABLE = [
    ("trace", (4, 3), lambda m, x: m.trace(x)),
    ("diff", (3, 5), lambda m, x: m.diff(x, n=2, dim=0, append=x[:1])),
    ("trapezoid", (3, 5), lambda m, x: m.trapezoid(x, dx=0.5, dim=-2)),
    ("trapz", (3, 5), lambda m, x: m.trapz(x, x[0])),
    ("cumulative_trapezoid", (3, 5), lambda m, x: m.cumulative_trapezoid(x, x * 2)),
    ("cov", (3, 5), lambda m, x: m.cov(x, correction=0)),
    ("corrcoef", (3, 5), lambda m, x: m.corrcoef(x)),
    ("renorm", (3, 5), lambda m, x: m.renorm(x, 2, 1, 1.0)),
    ("gradient", (4, 5), lambda m, x: m.stack(m.gradient(x, spacing=[0.5, 2.0], edge_order=2))),
    ("sgn", (3, 5), lambda m, x: m.sgn(x)),
]


@pytest.mark.parametrize("name,shape,f", DIFFERENTIABLE, ids=[d[0] for d in DIFFERENTIABLE])
def test_values_and_gradients_match_torch(name, shape, f):
    s, t = pair(*shape, requires_grad=True)
    s_out, t_out = f(stride, s), f(torch, t)
    close(s_out, t_out, rtol=1e-12, atol=1e-12)
    check_gradients(s_out, t_out, [s], [t])


def test_methods_match_functions():
    s, _ = pair(4, 4)
    for name in ["trace", "diff", "cov", "corrcoef", "sgn", "resolve_neg"]:
        close(getattr(s, name)(), getattr(stride, name)(s))
    close(s.renorm(p=1, dim=0, maxnorm=1.0), stride.renorm(s, 1, 0, 1.0))


def test_cov_weights_match_torch():
    s, t = pair(3, 6)
    fw = [1, 2, 0, 3, 1, 1]
    aw = np.random.default_rng(2).uniform(0.1, 1.0, 6)
    close(
        stride.cov(
            s,
            correction=1,
            fweights=stride.tensor(fw),
            aweights=stride.tensor(aw.tolist(), dtype=stride.float64),
        ),
        torch.cov(t, correction=1, fweights=torch.tensor(fw), aweights=torch.tensor(aw)),
        rtol=1e-12,
    )


def test_gradient_spacings_and_dims_match_torch():
    s, t = pair(4, 5, 3)
    coords = [0.0, 0.5, 1.5, 3.0, 3.5]
    cases = [
        ({}, {}),
        ({"spacing": 2.0}, {"spacing": 2.0}),
        ({"spacing": 2.0, "dim": 1}, {"spacing": 2.0, "dim": 1}),
        ({"dim": [0, -1], "edge_order": 2}, {"dim": [0, -1], "edge_order": 2}),
        (
            {"spacing": [stride.tensor(coords, dtype=stride.float64)], "dim": 1},
            {"spacing": [torch.tensor(coords, dtype=torch.float64)], "dim": 1},
        ),
    ]
    for s_kwargs, t_kwargs in cases:
        s_out, t_out = stride.gradient(s, **s_kwargs), torch.gradient(t, **t_kwargs)
        assert isinstance(s_out, tuple) and len(s_out) == len(t_out)
        for a, b in zip(s_out, t_out):
            close(a, b, rtol=1e-12)


def test_histograms_are_named_tuples_matching_torch():
    s, t = pair(50, seed=4)
    weights = np.random.default_rng(5).uniform(0, 1, 50)
    sw, tw = stride.tensor(weights.tolist(), dtype=stride.float64), torch.tensor(weights)
    for s_kwargs, t_kwargs in [
        ({"bins": 6}, {"bins": 6}),
        (
            {"bins": 4, "range": (-1.0, 1.0), "weight": sw},
            {"bins": 4, "range": (-1.0, 1.0), "weight": tw},
        ),
        (
            {"bins": stride.tensor([-2.0, 0.0, 0.5, 2.0], dtype=stride.float64), "density": True},
            {"bins": torch.tensor([-2.0, 0.0, 0.5, 2.0], dtype=torch.float64), "density": True},
        ),
    ]:
        s_out, t_out = stride.histogram(s, **s_kwargs), torch.histogram(t, **t_kwargs)
        assert type(s_out).__name__ == "histogram"
        close(s_out.hist, t_out.hist, rtol=1e-12)
        close(s_out.bin_edges, t_out.bin_edges, rtol=1e-12)
    close(s.histogram(5).hist, torch.histogram(t, 5).hist)
    sp, tp = pair(40, 3, seed=6)
    s_out = stride.histogramdd(sp, bins=[2, 3, 4], range=[-2.0, 2.0, -1.0, 1.0, -2.0, 0.0])
    t_out = torch.histogramdd(tp, bins=[2, 3, 4], range=[-2.0, 2.0, -1.0, 1.0, -2.0, 0.0])
    assert type(s_out).__name__ == "histogramdd"
    close(s_out.hist, t_out.hist)
    for a, b in zip(s_out.bin_edges, t_out.bin_edges):
        close(a, b, rtol=1e-12)


def test_index_factories_match_torch():
    for row, col, offset in [(4, 4, 0), (3, 6, 2), (5, 2, -1), (0, 3, 0)]:
        for name in ["tril_indices", "triu_indices"]:
            s_out = getattr(stride, name)(row, col, offset)
            t_out = getattr(torch, name)(row, col, offset)
            assert s_out.dtype == stride.int64
            close(s_out, t_out)
    assert stride.tril_indices(3, 3, dtype=stride.float64).dtype == stride.float64
    flat = [[5, 17, -3], [0, 59, 23]]
    s_out = stride.unravel_index(stride.tensor(flat), (3, 4, 5))
    t_out = torch.unravel_index(torch.tensor(flat), (3, 4, 5))
    assert isinstance(s_out, tuple) and len(s_out) == 3
    for a, b in zip(s_out, t_out):
        close(a, b)
    close(
        stride.unravel_index(stride.tensor(7), 10)[0], torch.unravel_index(torch.tensor(7), 10)[0]
    )


WINDOWS = [
    ("bartlett", {}),
    ("blackman", {}),
    ("cosine", {}),
    ("exponential", {"tau": 2.5}),
    ("gaussian", {"std": 0.7}),
    ("general_cosine", {"a": [0.4, 0.35, 0.25]}),
    ("general_hamming", {"alpha": 0.6}),
    ("hamming", {}),
    ("hann", {}),
    ("kaiser", {"beta": 4.0}),
    ("nuttall", {}),
]


@pytest.mark.parametrize("name,kwargs", WINDOWS, ids=[w[0] for w in WINDOWS])
def test_windows_match_torch(name, kwargs):
    s_fn, t_fn = getattr(stride.signal.windows, name), getattr(torch.signal.windows, name)
    for M in [0, 1, 2, 5, 8]:
        for sym in [True, False]:
            for s_dtype, t_dtype in [
                (stride.float32, torch.float32),
                (stride.float64, torch.float64),
            ]:
                s_out = s_fn(M, sym=sym, dtype=s_dtype, **kwargs)
                t_out = t_fn(M, sym=sym, dtype=t_dtype, **kwargs)
                assert s_out.dtype == s_dtype
                close(s_out, t_out, rtol=1e-6, atol=1e-7)
    assert s_fn(4, requires_grad=True, **kwargs).requires_grad
    assert s_fn(4, **kwargs).dtype == stride.float32


def test_refusals_name_the_op_and_argument():
    s, _ = pair(3, 3)
    with pytest.raises(ValueError, match="signal.windows.hann"):
        stride.signal.windows.hann(-1)
    with pytest.raises(TypeError, match="signal.windows.hann"):
        stride.signal.windows.hann(3, dtype=stride.int64)
    with pytest.raises(TypeError, match="trapezoid"):
        stride.trapezoid(s, s, dx=1.0)
    with pytest.raises(TypeError, match="histogram\\(\\): bins"):
        stride.histogram(s, "five")
    with pytest.raises(TypeError, match="gradient\\(\\): spacing"):
        stride.gradient(s, spacing="one")
    with pytest.raises(TypeError, match="unravel_index"):
        stride.unravel_index(s, (3, 3))
    with pytest.raises(RuntimeError, match="trace"):
        stride.trace(stride.ones(3))


# The floating-point compositions (cdist and dist of src/ops/linalg.cpp,
# renorm and the histograms here) refuse an integer input through their op's
# dtype rule, naming the op and the fix.
@pytest.mark.parametrize(
    "name, call",
    [
        ("cdist", lambda i: stride.cdist(i, i)),
        ("dist", lambda i: stride.dist(i, i)),
        ("renorm", lambda i: stride.renorm(i, 2, 0, 1.0)),
        ("histogram", lambda i: stride.histogram(i, 4)),
        ("histogramdd", lambda i: stride.histogramdd(i, [2, 2, 2])),
    ],
)
def test_floating_compositions_refuse_integers_naming_the_op(name, call):
    integers = stride.arange(6).view(2, 3)
    with pytest.raises(TypeError, match=rf"\[{name}\] needs a floating-point tensor.*\.to\("):
        call(integers)
