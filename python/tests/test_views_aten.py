"""Tensor.unfold (a view), resize_, as_strided_scatter and the ATen-level
functions (native_layer_norm, max_pool2d_with_indices_backward,
torch.ops.aten, ...) against torch: what the OpInfo walk does not check
(storage sharing, writes through the view, in-place resizing, the
statistics' shapes and requires_grad, argument errors). The torch
comparisons skip when torch is not installed (make venv-torch)."""

import numpy as np
import pytest
import stride

try:
    import torch
except ImportError:  # the comparisons skip; the rest runs
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed (make venv-torch)")


def pair(*shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape)
    return stride.from_numpy(a.copy()), torch.from_numpy(a.copy())


def same(s, t):
    return tuple(s.shape) == tuple(t.shape) and np.allclose(
        s.detach().numpy(), t.detach().numpy(), equal_nan=True
    )


@needs_torch
@pytest.mark.parametrize(
    "shape, args", [((4, 6), (1, 3, 2)), ((4, 6), (0, 2, 1)), ((5,), (-1, 5, 5)), ((), (0, 1, 1))]
)
def test_unfold_is_a_view_with_torchs_geometry(shape, args):
    s, t = pair(*shape)
    sv, tv = s.unfold(*args), t.unfold(*args)
    assert same(sv, tv)
    assert sv.stride() == tv.stride()
    assert sv.data_ptr() == s.data_ptr()
    sv.select(-1, 0).fill_(7.0)  # writes reach the base
    tv.select(-1, 0).fill_(7.0)
    assert same(s, t)


@needs_torch
def test_unfold_gradient_sums_overlapping_windows_and_differentiates_again():
    s, t = pair(3, 7)
    s.requires_grad_(True)
    t.requires_grad_(True)
    ws, wt = s.t().unfold(0, 3, 2), t.t().unfold(0, 3, 2)
    (gs,) = stride.autograd.grad((ws * ws).sum(), s, create_graph=True)
    (gt,) = torch.autograd.grad((wt * wt).sum(), t, create_graph=True)
    assert same(gs, gt)
    assert same(stride.autograd.grad(gs.sum(), s)[0], torch.autograd.grad(gt.sum(), t)[0])


def test_unfold_errors_name_the_op_and_argument():
    x = stride.zeros(2, 5)
    with pytest.raises(RuntimeError, match=r"\[unfold\] size 6"):
        x.unfold(1, 6, 1)
    with pytest.raises(ValueError, match=r"\[unfold\] step"):
        x.unfold(1, 2, 0)


@needs_torch
def test_unfold_copy_shares_no_memory():
    s, t = pair(4, 6)
    c = stride.unfold_copy(s, 1, 2, 2)
    assert same(c, torch.unfold_copy(t, 1, 2, 2))
    c.fill_(0.0)
    assert same(s, t)


def test_resize_keeps_memory_that_fits_and_grows_otherwise():
    x = stride.arange(6.0)
    y = x.resize_(2, 2)
    assert y is x
    assert x.shape == (2, 2) and x.tolist() == [[0.0, 1.0], [2.0, 3.0]]
    x.resize_((3, 3))
    assert x.reshape(-1)[:6].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert stride.resize_as_(stride.zeros(4), stride.zeros(1, 2, 2)).shape == (1, 2, 2)
    with pytest.raises(ValueError, match=r"\[resize_\].*requires grad"):
        stride.zeros(2, requires_grad=True).resize_(4)


@needs_torch
def test_new_empty_strided_takes_self_dtype_unless_given():
    s = stride.zeros(2, dtype=stride.float64)
    e = s.new_empty_strided((2, 3), (1, 2))
    assert e.shape == (2, 3) and e.stride() == (1, 2) and e.dtype == stride.float64
    assert s.new_empty_strided((4,), (1,), dtype=stride.int64).dtype == stride.int64


@needs_torch
def test_as_strided_scatter_and_its_gradients_match_torch():
    (s, t), (ss, ts) = pair(4, 6), pair(3, 2, seed=1)
    for x in (s, t, ss, ts):
        x.requires_grad_(True)
    out_s = stride.as_strided_scatter(s, ss, (3, 2), (5, 2), 1)
    out_t = torch.as_strided_scatter(t, ts, (3, 2), (5, 2), 1)
    assert same(out_s, out_t)
    gs = stride.autograd.grad((out_s * out_s).sum(), [s, ss])
    gt = torch.autograd.grad((out_t * out_t).sum(), [t, ts])
    assert same(gs[1], gt[1])
    # torch's input gradient fails torch's own gradcheck here (it is nonzero
    # only inside the written region); the true one is 2x outside it.
    written = torch.as_strided_scatter(torch.ones(4, 6), torch.zeros(3, 2), (3, 2), (5, 2), 1)
    assert same(gs[0], 2 * t.detach() * written)
    with pytest.raises(RuntimeError, match=r"\[as_strided_scatter\] src"):
        stride.as_strided_scatter(s, ss, (2, 2), (1, 2))


@needs_torch
def test_slice_and_unsafe_forms_match_torch():
    s, t = pair(20, 30, 4)
    assert same(stride.slice(s, 1, 1, -2, 3), torch.ops.aten.slice(t, 1, 1, -2, 3))
    assert same(stride.slice(s, dim=0, start=-10), torch.ops.aten.slice(t, dim=0, start=-10))
    for a, b in zip(stride.unsafe_chunk(s, 3, 1), torch.unsafe_chunk(t, 3, 1)):
        assert same(a, b)
    for a, b in zip(stride.unsafe_split(s, 7, 1), torch.unsafe_split(t, 7, 1)):
        assert same(a, b)


@needs_torch
def test_pads_chunk_cat_and_nonzero_static_match_torch():
    s, t = pair(5, 3)
    assert same(
        stride.constant_pad_nd(s, (-1, 2, 1, 0), 1.5), torch.constant_pad_nd(t, (-1, 2, 1, 0), 1.5)
    )
    (a, ta), (b, tb) = pair(2, 5, 3), pair(2, 4, seed=1)
    assert same(stride._chunk_cat([a, b], 1, 3), torch._chunk_cat([ta, tb], 1, 3))
    assert same(stride._chunk_cat([a, a], -1, 2), torch._chunk_cat([ta, ta], -1, 2))
    with pytest.raises(ValueError, match="non-negative"):
        stride._chunk_cat([a, b], -1, 2)
    m = stride.tensor([[0, 1], [2, 0]])
    tm = torch.tensor([[0, 1], [2, 0]])
    for size in (0, 1, 4):
        got = stride.nonzero_static(m, size=size, fill_value=-7)
        assert got.tolist() == torch.nonzero_static(tm, size=size, fill_value=-7).tolist()
    with pytest.raises(ValueError, match="num_chunks"):
        stride._chunk_cat([a], 0, 0)


@needs_torch
def test_native_norms_return_atens_statistics():
    s, t = pair(2, 3, 4)
    ws, wt = pair(3, 4, seed=1)
    s.requires_grad_(True)
    t.requires_grad_(True)
    got = stride.native_layer_norm(s, [3, 4], ws, None, 1e-5)
    want = torch.native_layer_norm(t, [3, 4], wt, None, 1e-5)
    assert all(same(a, b) for a, b in zip(got, want))
    assert [o.requires_grad for o in got] == [o.requires_grad for o in want]
    got = stride.native_group_norm(s, None, None, 2, 3, 4, 3, 1e-5)
    want = torch.native_group_norm(t, None, None, 2, 3, 4, 3, 1e-5)
    assert all(same(a, b) for a, b in zip(got, want))
    # Its statistics are differentiable, as ATen's, to the second order.
    (gs,) = stride.autograd.grad((got[1] * got[2]).sum(), s, create_graph=True)
    (gt,) = torch.autograd.grad((want[1] * want[2]).sum(), t, create_graph=True)
    assert same(gs, gt)
    assert same(
        stride.autograd.grad(gs.square().sum(), s)[0], torch.autograd.grad(gt.square().sum(), t)[0]
    )
    (rs, rt), (vs, vt) = pair(3, seed=2), pair(3, seed=3)
    vs, vt = vs.abs(), vt.abs()
    got = stride.native_batch_norm(s, None, None, rs, vs, True, 0.1, 1e-5)
    want = torch.native_batch_norm(t, None, None, rt, vt, True, 0.1, 1e-5)
    assert all(same(a, b) for a, b in zip(got, want))
    assert same(rs, rt) and same(vs, vt)  # the running statistics were updated alike
    got = stride.native_batch_norm(s, None, None, rs, vs, False, 0.1, 1e-5)
    assert got[1].shape == (0,) and got[2].shape == (0,)
    out = stride.ops.aten._batch_norm_with_update(s, None, None, rs, vs, 0.1, 1e-5)
    assert out[3].dtype == stride.uint8 and out[3].shape == (0,)


@needs_torch
def test_backward_functions_match_torch():
    (gs, gt), (xs, xt) = pair(3, 5), pair(3, 5, seed=1)
    ys, yt = stride.softmax(xs, 1), torch.softmax(xt, 1)
    assert same(
        stride._softmax_backward_data(gs, ys, 1, stride.float64),
        torch._softmax_backward_data(gt, yt, 1, torch.float64),
    )
    mask = np.random.default_rng(4).random((3, 5)) > 0.5
    assert same(
        stride.native_dropout_backward(gs, stride.from_numpy(mask), 2.0),
        torch.ops.aten.native_dropout_backward(gt, torch.from_numpy(mask), 2.0),
    )
    ps, pt = pair(1, 2, 5, 6)
    out_s, idx_s = stride.nn.functional.max_pool2d_with_indices(ps, 2, 2)
    out_t, idx_t = torch.nn.functional.max_pool2d_with_indices(pt, 2, 2)
    got = stride.ops.aten.max_pool2d_with_indices_backward.default(
        stride.ones_like(out_s), ps, [2, 2], [2, 2], [0, 0], [1, 1], False, idx_s
    )
    want = torch.ops.aten.max_pool2d_with_indices_backward.default(
        torch.ones_like(out_t), pt, [2, 2], [2, 2], [0, 0], [1, 1], False, idx_t
    )
    assert same(got, want)


@needs_torch
def test_masked_index_functions_match_torch():
    s, t = pair(5, 5)
    rows = np.array([[1], [7], [3]])
    cols = np.array([[0, 4, 9]])
    mask = (rows < 5) & (cols < 5)
    si = [stride.from_numpy(rows), stride.from_numpy(cols)]
    ti = [torch.from_numpy(rows), torch.from_numpy(cols)]
    got = stride._unsafe_masked_index(s, stride.from_numpy(mask), si, -1.0)
    want = torch._unsafe_masked_index(t, torch.from_numpy(mask), ti, -1.0)
    assert same(got, want)
    vs, vt = pair(3, 3, seed=1)
    got = stride._unsafe_masked_index_put_accumulate(s, stride.from_numpy(mask), si, vs)
    want = torch._unsafe_masked_index_put_accumulate(t, torch.from_numpy(mask), ti, vt)
    assert same(got, want)


def test_aten_namespace_names_what_stride_lacks():
    assert stride.ops.aten.slice.default is stride.slice
    with pytest.raises(AttributeError, match=r"torch.ops.aten.no_such_op is not in stride"):
        stride.ops.aten.no_such_op  # noqa: B018
