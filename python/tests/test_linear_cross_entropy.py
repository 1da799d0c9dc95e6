"""stride.nn.functional.linear_cross_entropy: the chunked op (options given)
and the composition (options=None) against PyTorch's reference, values and
gradients, and its options' errors."""

import numpy as np
import pytest
import stride
import stride.nn.functional as F

torch = pytest.importorskip("torch")


def to_stride(t):
    return stride.tensor(t.detach().numpy().copy()).requires_grad_(t.requires_grad)


def to_numpy(t):
    return np.asarray(t.detach().numpy())


def make_case(probabilities, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(7, 5, generator=g, dtype=torch.float64, requires_grad=True)
    w = torch.randn(6, 5, generator=g, dtype=torch.float64, requires_grad=True)
    b = torch.randn(6, generator=g, dtype=torch.float64, requires_grad=True)
    if probabilities:
        t = torch.softmax(torch.randn(7, 6, generator=g, dtype=torch.float64), 1)
        t.requires_grad_()
    else:
        t = torch.randint(0, 6, (7,), generator=g)
    return x, w, b, t


@pytest.mark.parametrize("chunk", [None, 1, 3, 7, 100])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("probabilities", [False, True])
def test_chunks_give_pytorch_s_loss_and_gradients(chunk, reduction, probabilities):
    x, w, b, t = make_case(probabilities)
    class_weight = torch.rand(6, dtype=torch.float64) + 0.5
    kwargs = dict(reduction=reduction, label_smoothing=0.1)
    if not probabilities:
        kwargs["ignore_index"] = 2
    expected = torch.nn.functional.linear_cross_entropy(
        x, w, t, linear_bias=b, weight=class_weight, **kwargs
    )
    options = stride.nn.LinearCrossEntropyOptions(batch_chunk_size=chunk, chunking_method=None)
    xs, ws, bs, ts = (to_stride(v) for v in (x, w, b, t))
    got = F.linear_cross_entropy(
        xs, ws, ts, linear_bias=bs, weight=to_stride(class_weight), options=options, **kwargs
    )
    np.testing.assert_allclose(to_numpy(got), to_numpy(expected), rtol=1e-10, atol=1e-12)
    g = torch.randn(expected.shape, dtype=torch.float64)
    leaves = [x, w, b] + ([t] if probabilities else [])
    ours = [xs, ws, bs] + ([ts] if probabilities else [])
    grads = torch.autograd.grad(expected, leaves, g)
    got_grads = stride.autograd.grad(got, ours, to_stride(g))
    for name, a, e in zip("xwbt", got_grads, grads):
        np.testing.assert_allclose(to_numpy(a), to_numpy(e), rtol=1e-9, atol=1e-12, err_msg=name)


def test_second_derivatives_are_the_composition_s():
    x, w, b, t = make_case(False)
    xs, ws, bs, ts = (to_stride(v) for v in (x, w, b, t))
    results = []
    for options in (None, stride.nn.LinearCrossEntropyOptions(batch_chunk_size=2)):
        loss = F.linear_cross_entropy(xs, ws, ts, linear_bias=bs, options=options)
        gx, gw = stride.autograd.grad(loss, [xs, ws], create_graph=True)
        results.append(stride.autograd.grad((gx * gx).sum() + gw.sum(), [xs, ws, bs]))
    for reference, chunked in zip(*results):
        np.testing.assert_allclose(chunked.numpy(), reference.numpy(), rtol=1e-10, atol=1e-12)


def test_aspect_ratio_sizes_chunks_like_pytorch_s():
    options = stride.nn.LinearCrossEntropyOptions()
    # next_pow2(ceil(N / ceil(C / in_features)))
    assert options.rows_per_chunk(1000, 64, 50_000) == 2
    assert options.rows_per_chunk(4096, 512, 8192) == 256
    halved = stride.nn.LinearCrossEntropyOptions(chunking_method="aspect_ratio:2")
    assert halved.rows_per_chunk(4096, 512, 8192) == 128
    assert stride.nn.LinearCrossEntropyOptions(chunking_method=None).rows_per_chunk(9, 2, 3) == 0


def test_errors_name_the_op_and_the_argument():
    x, w, _, t = (to_stride(v) for v in make_case(False))
    with pytest.raises(ValueError, match="linear_cross_entropy.*batch_chunk_size"):
        F.linear_cross_entropy(
            x, w, t, options=stride.nn.LinearCrossEntropyOptions(batch_chunk_size=0)
        )
    with pytest.raises(ValueError, match="linear_cross_entropy.*chunking_method"):
        F.linear_cross_entropy(
            x, w, t, options=stride.nn.LinearCrossEntropyOptions(chunking_method="rows")
        )
    with pytest.raises(TypeError, match="linear_cross_entropy.*options"):
        F.linear_cross_entropy(x, w, t, options={"batch_chunk_size": 2})
    with pytest.raises(ValueError, match="linear_cross_entropy.*in_features"):
        F.linear_cross_entropy(x, w[:, :3], t)
    options = stride.nn.LinearCrossEntropyOptions(batch_chunk_size=2)
    with pytest.raises(IndexError, match="linear_cross_entropy"):
        F.linear_cross_entropy(x, w, t * 10, options=options)
