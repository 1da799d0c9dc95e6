"""stride.masked against torch.masked: values and gradients in float64 with
masks of each element, broadcast masks and fully masked-out slices, the
keyword names and defaults, and the errors of bad masks. Skipped when torch
is not installed."""

import numpy as np
import pytest
import stride
import stride.masked

torch = pytest.importorskip("torch", reason="torch is not installed (make venv-torch)")

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4, 5))
MASK = RNG.uniform(size=(3, 4, 5)) < 0.6
MASK[0, :, 1] = False  # a fully masked-out slice along dim 1
ROW_MASK = np.array([True, False, True, True, False])  # broadcasts over (3, 4, 5)

# (op, args, kwargs without mask); each runs with MASK, ROW_MASK and no mask.
CASES = [
    ("sum", (), {}),
    ("sum", (1,), {"keepdim": True}),
    ("prod", ((0, 2),), {}),
    ("amax", (-1,), {}),
    ("amin", (), {"dim": (0, 1)}),
    ("mean", ((1, 2),), {}),
    ("median", (1,), {}),
    ("logsumexp", (2,), {"keepdim": True}),
    ("norm", (3.0, 1), {}),
    ("norm", (float("-inf"), 2), {}),
    ("var", (1,), {}),
    ("var", (1, False), {}),
    ("std", ((0, 2),), {"correction": 0.5, "keepdim": True}),
    ("cumsum", (1,), {}),
    ("cumprod", (0,), {}),
    ("softmax", (1,), {}),
    ("log_softmax", (-1,), {}),
    ("softmin", (0,), {}),
    ("normalize", (2.0, 1), {"eps": 1e-6}),
]


def both(array, requires_grad=False):
    """The same numbers as a stride and a torch tensor."""
    s = stride.tensor(array.tolist(), dtype=stride.float64 if array.dtype != bool else stride.bool)
    t = torch.tensor(array)
    if requires_grad:
        s.requires_grad_()
        t.requires_grad_()
    return s, t


def as_numpy(t):
    return np.asarray(t.detach().numpy() if isinstance(t, torch.Tensor) else t.detach().numpy())


def weights_like(t):
    return np.random.default_rng(1).standard_normal(tuple(t.shape))


@pytest.mark.parametrize("mask_kind", ["elements", "broadcast", "none"])
@pytest.mark.parametrize("op, args, kwargs", CASES, ids=lambda c: str(c))
def test_matches_torch_values_and_gradients(op, args, kwargs, mask_kind):
    mask = {"elements": MASK, "broadcast": ROW_MASK, "none": None}[mask_kind]
    xs, xt = both(X, requires_grad=True)
    ms, mt = both(mask) if mask is not None else (None, None)
    out_s = getattr(stride.masked, op)(xs, *args, mask=ms, **kwargs)
    out_t = getattr(torch.masked, op)(xt, *args, mask=mt, **kwargs)
    np.testing.assert_allclose(as_numpy(out_s), as_numpy(out_t), rtol=1e-10, atol=1e-12)
    assert tuple(out_s.shape) == tuple(out_t.shape)

    # Infinite outputs (amax of nothing, log_softmax's masked-out elements)
    # get zero weight; a NaN output (the mean of nothing) gives NaN
    # gradients in torch too, which must match.
    weights = np.where(np.isinf(as_numpy(out_t)), 0.0, weights_like(out_t))
    (out_s * stride.tensor(weights.tolist(), dtype=stride.float64)).nansum().backward()
    (out_t * torch.tensor(weights)).nansum().backward()
    grad_s, grad_t = as_numpy(xs.grad), as_numpy(xt.grad)
    np.testing.assert_allclose(grad_s, grad_t, rtol=1e-9, atol=1e-10)
    if mask is not None:  # masked-out elements get no gradient
        masked_out = ~np.broadcast_to(mask, X.shape) & np.isfinite(grad_t)
        assert np.all(grad_s[masked_out] == 0)


@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_arg_reductions_skip_masked_out_elements(op):
    xs, xt = both(X)
    ms, mt = both(MASK)
    for dim, keepdim in [(2, False), (0, True), (None, False)]:
        s = getattr(stride.masked, op)(xs, dim, keepdim=keepdim, mask=ms)
        t = getattr(torch.masked, op)(xt, dim, keepdim=keepdim, mask=mt)
        assert s.dtype == stride.float64  # the input's dtype, as torch.masked
        np.testing.assert_array_equal(as_numpy(s), as_numpy(t))


def test_logaddexp_with_masks_on_each_operand():
    xs, xt = both(X[0], requires_grad=True)
    ys, yt = both(X[1], requires_grad=True)
    (ms, mt), (ns, nt) = both(MASK[0]), both(MASK[1, 0])
    out_s = stride.masked.logaddexp(xs, ys, input_mask=ms, other_mask=ns)
    out_t = torch.masked.logaddexp(xt, yt, input_mask=mt, other_mask=nt)
    np.testing.assert_allclose(as_numpy(out_s), as_numpy(out_t), rtol=1e-12)
    weights = np.where(np.isinf(as_numpy(out_t)), 0.0, weights_like(out_t))
    (out_s * stride.tensor(weights.tolist(), dtype=stride.float64)).sum().backward()
    (out_t * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(as_numpy(xs.grad), as_numpy(xt.grad), atol=1e-12)
    np.testing.assert_allclose(as_numpy(ys.grad), as_numpy(yt.grad), atol=1e-12)


def test_dtypes_follow_torch_masked():
    ints = stride.tensor([[1, 2, 3], [4, 5, 6]], dtype=stride.int32)
    keep = stride.tensor([[True, False, True], [False, False, False]])
    assert stride.masked.sum(ints, 1, mask=keep).tolist() == [4, 0]
    assert stride.masked.sum(ints, 1, mask=keep).dtype == stride.int64
    assert stride.masked.cumsum(ints, 1, mask=keep).dtype == stride.int32
    assert stride.masked.var(ints, 1).dtype == stride.float32
    assert stride.masked.mean(ints, 1, dtype=stride.float64, mask=keep).tolist()[0] == 2.0
    amax = stride.masked.amax(ints, 1, mask=keep)
    assert amax.tolist() == [3, torch.iinfo(torch.int32).min]


def test_logsumexp_of_integers_keeps_the_integer_dtype_as_torch():
    # torch.masked.logsumexp computes in float and converts back to the
    # input's dtype, truncating.
    x, keep = [[1, 2, 3], [4, 5, 6]], [[True, False, True], [True, True, False]]
    out_s = stride.masked.logsumexp(stride.tensor(x), 1, mask=stride.tensor(keep))
    out_t = torch.masked.logsumexp(torch.tensor(x), 1, mask=torch.tensor(keep))
    assert out_s.dtype == stride.int64
    assert out_s.tolist() == out_t.tolist() == [3, 5]


def test_bad_masks_and_arguments_raise_naming_the_op():
    x = stride.ones(2, 3)
    with pytest.raises(IndexError, match=r"masked\.sum.*mask"):
        stride.masked.sum(x, mask=stride.ones(4, 2, 3).bool())
    with pytest.raises(RuntimeError, match=r"masked\.amax.*mask.*broadcast"):
        stride.masked.amax(x, mask=stride.ones(2).bool())
    with pytest.raises(ValueError, match=r"masked\.mean"):
        stride.masked.mean(stride.ones(2, dtype=stride.int64))
    with pytest.raises(TypeError, match="unbiased or correction"):
        stride.masked.var(x, 1, True, correction=1)
    with pytest.raises(TypeError, match="mask"):
        stride.masked.sum(x, mask=[True, False, True])
