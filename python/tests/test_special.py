"""stride.special and the torch.* special functions against PyTorch: values
and first and second gradients in float64, the aliases of other ops, and
PyTorch's refusals. Skipped when torch is not installed."""

import numpy as np
import pytest
import stride
import stride.special

torch = pytest.importorskip("torch", reason="torch is not installed (make venv-torch)")

# (name in stride.special / torch.special, low and high of the inputs)
DIFFERENTIABLE = [
    ("i0e", -4.0, 4.0),
    ("i1", -4.0, 4.0),
    ("i1e", -4.0, 4.0),
    ("ndtr", -3.0, 3.0),
    ("ndtri", 0.05, 0.95),
    ("log_ndtr", -5.0, 3.0),
    ("erfcx", -2.0, 5.0),
    ("entr", 0.1, 3.0),
    ("bessel_j0", -6.0, 6.0),
    ("bessel_j1", 0.2, 6.0),
    ("bessel_y0", 0.2, 6.0),
    ("bessel_y1", 0.2, 6.0),
    ("modified_bessel_i0", -3.0, 3.0),
    ("modified_bessel_i1", 0.2, 3.0),
    ("modified_bessel_k0", 0.2, 3.0),
    ("modified_bessel_k1", 0.2, 3.0),
    ("gammaln", 0.2, 5.0),
    ("digamma", 0.2, 5.0),
    ("erfinv", -0.9, 0.9),
    ("sinc", -3.0, 3.0),
]


def pair(low, high, seed=0, n=7):
    a = np.random.default_rng(seed).uniform(low, high, n)
    return (
        stride.tensor(a.tolist(), dtype=stride.float64, requires_grad=True),
        torch.tensor(a, dtype=torch.float64, requires_grad=True),
    )


# PyTorch's Bessel functions J and Y are accurate to about 1e-7 in float64
# (their asymptotic forms); stride's (Boost.Math's) agree with mpmath to
# 1e-15, so these compare to torch's within torch's error.
TOLERANCE = {"bessel_j0": 1e-6, "bessel_j1": 1e-6, "bessel_y0": 1e-6, "bessel_y1": 1e-6}


def assert_close(s, t, tol=1e-9):
    np.testing.assert_allclose(s.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("name,low,high", DIFFERENTIABLE)
def test_values_and_two_gradients_match_torch(name, low, high):
    xs, xt = pair(low, high)
    tol = TOLERANCE.get(name, 1e-9)
    ys, yt = getattr(stride.special, name)(xs), getattr(torch.special, name)(xt)
    assert_close(ys, yt, tol)
    (gs,) = stride.autograd.grad(ys.sum(), xs, create_graph=True)
    (gt,) = torch.autograd.grad(yt.sum(), xt, create_graph=True)
    assert_close(gs, gt, tol)
    (hs,) = stride.autograd.grad(gs.sum(), xs)
    (ht,) = torch.autograd.grad(gt.sum(), xt)
    assert_close(hs, ht, max(tol, 1e-7))


@pytest.mark.parametrize("n", range(5))
def test_polygamma_matches_torch_with_its_gradient(n):
    xs, xt = pair(0.3, 4.0)
    ys, yt = stride.polygamma(n, xs), torch.polygamma(n, xt)
    assert_close(ys, yt)
    (gs,) = stride.autograd.grad(ys.sum(), xs)
    (gt,) = torch.autograd.grad(yt.sum(), xt)
    assert_close(gs, gt, tol=1e-8)


def test_zeta_refuses_the_gradient_of_its_first_operand_as_torch():
    x, q = pair(2.0, 4.0)[0], pair(0.5, 2.0, seed=1)[0]
    with pytest.raises(NotImplementedError, match="is not implemented"):
        stride.special.zeta(x, q).sum().backward()


def test_special_round_refuses_decimals():
    with pytest.raises(NotImplementedError, match="decimals"):
        stride.special.round(stride.ones(2), decimals=1)


def test_aliases_are_the_ops_they_name():
    x = stride.tensor([0.25, 0.5])
    assert stride.special.expit(x).tolist() == stride.sigmoid(x).tolist()
    assert stride.special.psi(x).tolist() == stride.digamma(x).tolist()
    assert stride.special.multigammaln(x + 2, 2).tolist() == stride.mvlgamma(x + 2, 2).tolist()
