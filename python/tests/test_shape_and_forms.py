"""The Python forms of the shape ops, products and factories that the
OpInfo walk (opinfo.py) does not reach: variadic and list arguments,
einsum's sublist form, the *_copy functions' independence from their
input, Tensor.to's positional forms, randint's short form, and the
distributions of the in-place samplers. The PyTorch comparisons are
skipped when torch is not installed (make venv-torch)."""

import math

import numpy as np
import pytest
import stride

try:
    import torch
except ImportError:  # the comparisons skip; the rest runs
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed (make venv-torch)")


def same(s, t):
    return s.shape == tuple(t.shape) and np.allclose(s.numpy(), t.numpy(), equal_nan=True)


def pair(*shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return stride.from_numpy(a.copy()), torch.from_numpy(a.copy())


@needs_torch
def test_variadic_and_list_arguments_agree_with_torch():
    (sa, ta), (sb, tb) = pair(3), pair(4, seed=1)
    for s, t in zip(stride.meshgrid(sa, sb, indexing="xy"), torch.meshgrid(ta, tb, indexing="xy")):
        assert same(s, t)
    for s, t in zip(stride.meshgrid([sa, sb]), torch.meshgrid([ta, tb], indexing="ij")):
        assert same(s, t)
    assert same(stride.block_diag(sa, sb), torch.block_diag(ta, tb))
    assert same(stride.cartesian_prod(sa, sb), torch.cartesian_prod(ta, tb))
    assert [x.shape for x in stride.atleast_2d(sa, sb)] == [
        tuple(x.shape) for x in torch.atleast_2d(ta, tb)
    ]
    assert stride.broadcast_shapes((3, 1), (4,), 1) == tuple(
        torch.broadcast_shapes((3, 1), (4,), 1)
    )


@needs_torch
def test_einsum_forms_agree_with_torch():
    (sa, ta), (sb, tb) = pair(2, 3, 4), pair(4, 5, seed=1)
    assert same(stride.einsum("bij,jk->bik", sa, sb), torch.einsum("bij,jk->bik", ta, tb))
    assert same(stride.einsum("bij,jk", [sa, sb]), torch.einsum("bij,jk", [ta, tb]))
    assert same(
        stride.einsum(sa, [0, 1, 2], sb, [2, 3], [0, 3]),
        torch.einsum(ta, [0, 1, 2], tb, [2, 3], [0, 3]),
    )
    assert same(stride.einsum(sa, [..., 2], sb, [2, 3]), torch.einsum(ta, [..., 2], tb, [2, 3]))


def test_copies_share_no_memory_with_their_input():
    x = stride.arange(6.0).view(2, 3)
    for copy in (
        stride.t_copy(x),
        stride.expand_copy(x[0], (2, 3)),
        stride.narrow_copy(x, 1, 0, 2),
    ):
        copy.fill_(-1)
    assert x.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    parts = stride.unbind_copy(x)
    assert len(parts) == 2 and parts[1].tolist() == [3.0, 4.0, 5.0]


def test_to_takes_torchs_positional_forms():
    x = stride.arange(3)
    assert x.to("cpu", stride.float64, False, False).dtype == stride.float64
    assert x.to(stride.float32, False, True).dtype == stride.float32
    same_dtype = x.to(stride.int64, False, True)
    same_dtype.fill_(7)
    assert x.tolist() == [0, 1, 2]  # copy=True copied


def test_conversions_to_dtypes_stride_lacks_raise_type_error():
    x = stride.arange(3)
    assert x.byte().dtype == stride.uint8
    for name in ("char", "short"):
        with pytest.raises(TypeError, match="stride does not have"):
            getattr(x, name)()


def test_randint_forms():
    g = stride.Generator().manual_seed(0)
    assert stride.randint(5, (2, 3), generator=g).shape == (2, 3)
    assert stride.randint(2, 5, (4,), generator=g).min().item() >= 2
    like = stride.randint_like(stride.zeros(3, 2), 10)
    assert like.shape == (3, 2) and like.dtype == stride.float32


@pytest.mark.parametrize(
    ("fill", "mean", "var"),
    [
        (lambda t, g: t.exponential_(2.0, generator=g), 0.5, 0.25),
        (lambda t, g: t.geometric_(0.25, generator=g), 4.0, 12.0),
        (
            lambda t, g: t.log_normal_(0.0, 0.5, generator=g),
            math.exp(0.125),
            (math.exp(0.25) - 1) * math.exp(0.25),
        ),
    ],
)
def test_in_place_samplers_have_their_distributions_moments(fill, mean, var):
    g = stride.Generator().manual_seed(1)
    t = fill(stride.empty(200_000, dtype=stride.float64), g)
    assert abs(t.mean().item() - mean) < 0.02 * mean + 0.01
    assert abs(t.var().item() - var) < 0.05 * var


def test_cauchy_and_normal_forms():
    g = stride.Generator().manual_seed(2)
    c = stride.empty(100_000).cauchy_(1.0, 2.0, generator=g)
    assert abs(((c - 1.0).abs() < 2.0).float().mean().item() - 0.5) < 0.01  # quartiles at +-sigma
    n = stride.normal(stride.zeros(2, 1), stride.ones(3) * 2.0, generator=g)
    assert n.shape == (2, 3)
    assert stride.normal(1.0, 2.0, (5,)).shape == (5,)
    b = stride.bernoulli(stride.full((100_000,), 0.3), generator=g)
    assert abs(b.mean().item() - 0.3) < 0.01


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="movedim"):
        stride.movedim(stride.zeros(2, 3), (0, 0), (0, 1))
    with pytest.raises(ValueError, match="einsum"):
        stride.einsum("ij,jk", stride.zeros(2, 3))
    with pytest.raises(ValueError, match="hsplit"):
        stride.hsplit(stride.zeros(2, 3), 2)
