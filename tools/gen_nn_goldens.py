#!/usr/bin/python3
"""Generates tests/golden/nn_functional.safetensors: inputs and PyTorch's
outputs and gradients for the nn functional cases that
tests/nn/functional_golden_test.cpp recomputes with stride.

Run with Debian's python3-torch (the pyenv `python3` has no torch):

    /usr/bin/python3 tools/gen_nn_goldens.py

Layout and conventions are those of tools/gen_goldens.py, whose helpers this
script imports: a case NAME stores its inputs as NAME/in0, NAME/in1, ... and
PyTorch's results as NAME/out0, ...; each case draws from its own generator
seeded by a hash of its name; PyTorch runs on one thread; re-running
reproduces the file byte for byte. For a differentiable case the last input is
the upstream gradient `gout` and the outputs are the forward result followed by
the gradients of the inputs listed in the case, in order.

torch 1.13 has neither F.scaled_dot_product_attention (added in 2.0) nor
F.rms_norm (2.4) nor a rotary embedding, so those references are written out
here: softmax(q k^T * scale + mask) v; x * rsqrt(mean(x^2) + eps) * w; and the
rotary embedding exactly as Meta's Llama (complex multiply on interleaved
pairs) and Hugging Face's Llama (rotate_half) compute it, in float64.
"""

import math
import os
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_goldens as base  # noqa: E402  (pins ATEN_CPU_CAPABILITY before importing torch)
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

ROOT = base.ROOT
OUT_PATH = os.path.join(ROOT, "tests", "golden", "nn_functional.safetensors")
COMMAND = "/usr/bin/python3 tools/gen_nn_goldens.py"
MAX_BYTES = 1_500_000

f32, f64, i64, i32 = torch.float32, torch.float64, torch.int64, torch.int32
randn, randint = base.randn, base.randint

CASES = []  # (name, builder); builder(gen) -> (inputs, outputs)


def case(name):
    assert name.replace("_", "").isalnum() and name.islower(), name
    assert all(n != name for n, _ in CASES), f"duplicate case {name}"

    def register(builder):
        CASES.append((name, builder))
        return builder

    return register


def fwd_bwd(g, fn, inputs, wrt):
    """Runs fn(*inputs) with the inputs at indices `wrt` as leaves, draws a
    random upstream gradient, and returns (inputs + [gout], [y] + grads)."""
    leaves = [t.detach().clone().requires_grad_(i in wrt) for i, t in enumerate(inputs)]
    y = fn(*leaves)
    gout = torch.randn(tuple(y.shape), generator=g, dtype=f64).to(y.dtype)
    grads = torch.autograd.grad(y, [leaves[i] for i in wrt], gout)
    return list(inputs) + [gout], [y.detach()] + [gr.detach() for gr in grads]


def targets(g, n_shape, classes, ignore=(), ignore_index=-100, dtype=i64):
    """Class indices with the flat positions in `ignore` set to ignore_index."""
    t = randint(g, 0, classes, *n_shape, dtype=dtype)
    flat = t.view(-1)
    for i in ignore:
        flat[i] = ignore_index
    return t


# ---- cross_entropy ----
REDUCTIONS = {"mean": "mean", "sum": "sum", "none": "none"}


def ce_case(
    name,
    shape,
    reduction,
    smoothing=0.0,
    ignore=(),
    ignore_index=-100,
    dtype=f32,
    tdtype=i64,
    scale=1.0,
):
    @case(name)
    def _(g):
        x = randn(g, *shape, dtype=dtype, scale=scale)
        n_shape = (shape[0],) + tuple(shape[2:]) if len(shape) > 1 else ()
        t = targets(
            g, n_shape, shape[1] if len(shape) > 1 else shape[0], ignore, ignore_index, tdtype
        )
        # torch 1.13 takes int64 targets only; the file keeps the int32 ones.
        return fwd_bwd(
            g,
            lambda x_, t_: F.cross_entropy(
                x_,
                t_.long(),
                ignore_index=ignore_index,
                reduction=reduction,
                label_smoothing=smoothing,
            ),
            [x, t],
            [0],
        )


ce_case("cross_entropy_2d_mean_f32", (8, 5), "mean", ignore=(1, 6))
ce_case("cross_entropy_2d_sum_f64", (8, 5), "sum", ignore=(3,), dtype=f64)
ce_case("cross_entropy_2d_none_f32", (8, 5), "none", ignore=(0, 7))
ce_case("cross_entropy_smooth_mean_f32", (10, 6), "mean", smoothing=0.1, ignore=(2, 5))
ce_case("cross_entropy_smooth_sum_f32", (10, 6), "sum", smoothing=0.2)
ce_case("cross_entropy_smooth_none_f64", (10, 6), "none", smoothing=0.25, ignore=(4,), dtype=f64)
ce_case("cross_entropy_3d_mean_f32", (3, 5, 4), "mean", smoothing=0.1, ignore=(0, 5, 11))
ce_case("cross_entropy_3d_none_f64", (2, 4, 3, 2), "none", ignore=(1,), dtype=f64)
ce_case("cross_entropy_3d_sum_f32", (3, 5, 4), "sum", ignore=(7,))
ce_case(
    "cross_entropy_ignore_class_f32",
    (9, 4),
    "mean",
    smoothing=0.1,
    ignore=(0, 4, 8),
    ignore_index=2,
)
ce_case("cross_entropy_int32_targets_f32", (6, 7), "mean", tdtype=i32)
ce_case("cross_entropy_1d_f32", (7,), "mean")
ce_case("cross_entropy_large_f32", (32, 512), "mean", smoothing=0.05, ignore=(3, 9), scale=5.0)
ce_case("cross_entropy_all_ignored_f32", (4, 3), "mean", ignore=(0, 1, 2, 3))


# ---- nll_loss ----
def nll_case(name, shape, reduction, ignore=(), dtype=f32):
    @case(name)
    def _(g):
        x = torch.log_softmax(randn(g, *shape, dtype=dtype), 1)
        n_shape = (shape[0],) + tuple(shape[2:])
        t = targets(g, n_shape, shape[1], ignore)
        return fwd_bwd(g, lambda x_, t_: F.nll_loss(x_, t_, reduction=reduction), [x, t], [0])


nll_case("nll_2d_mean_f32", (8, 5), "mean", ignore=(2,))
nll_case("nll_2d_sum_f64", (8, 5), "sum", ignore=(0, 3), dtype=f64)
nll_case("nll_3d_none_f32", (3, 4, 5), "none", ignore=(6,))


# ---- mse_loss ----
def mse_case(name, shape, reduction, dtype=f32):
    @case(name)
    def _(g):
        a, b = randn(g, *shape, dtype=dtype), randn(g, *shape, dtype=dtype)
        return fwd_bwd(g, lambda a_, b_: F.mse_loss(a_, b_, reduction=reduction), [a, b], [0, 1])


mse_case("mse_mean_f32", (4, 6), "mean")
mse_case("mse_sum_f64", (3, 2, 5), "sum", dtype=f64)
mse_case("mse_none_f32", (5, 3), "none")


# ---- rms_norm (by hand: torch 1.13 has no F.rms_norm) ----
def rms_norm_ref(x, w, eps):
    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return y * w if w is not None else y


def rms_case(name, shape, eps=1e-6, weight=True, dtype=f32, scale=1.0):
    @case(name)
    def _(g):
        x = randn(g, *shape, dtype=dtype, scale=scale)
        if not weight:
            return fwd_bwd(g, lambda x_: rms_norm_ref(x_, None, eps), [x], [0])
        w = randn(g, shape[-1], dtype=dtype) * 0.5 + 1.0
        return fwd_bwd(g, lambda x_, w_: rms_norm_ref(x_, w_, eps), [x, w], [0, 1])


rms_case("rms_norm_f32", (2, 3, 16))
rms_case("rms_norm_f64", (5, 12), dtype=f64)
rms_case("rms_norm_noweight_f64", (4, 10), weight=False, dtype=f64)
rms_case("rms_norm_eps_f32", (6, 8), eps=1e-2, scale=0.05)
rms_case("rms_norm_wide_f32", (8, 512))


# ---- layer_norm ----
def ln_case(name, shape, nshape, affine=True, eps=1e-5, dtype=f32):
    @case(name)
    def _(g):
        x = randn(g, *shape, dtype=dtype, scale=2.0) + 0.5
        if not affine:
            return fwd_bwd(g, lambda x_: F.layer_norm(x_, nshape, eps=eps), [x], [0])
        w, b = randn(g, *nshape, dtype=dtype), randn(g, *nshape, dtype=dtype)
        return fwd_bwd(
            g, lambda x_, w_, b_: F.layer_norm(x_, nshape, w_, b_, eps), [x, w, b], [0, 1, 2]
        )


ln_case("layer_norm_f32", (4, 10), (10,))
ln_case("layer_norm_2d_shape_f64", (2, 3, 4, 5), (4, 5), dtype=f64)
ln_case("layer_norm_noaffine_f32", (3, 7), (7,), affine=False, eps=1e-3)


# ---- linear ----
@case("linear_f32")
def _(g):
    x, w, b = randn(g, 3, 4, 6), randn(g, 5, 6, scale=0.4), randn(g, 5)
    return fwd_bwd(g, F.linear, [x, w, b], [0, 1, 2])


@case("linear_nobias_f64")
def _(g):
    x, w = randn(g, 7, 3, dtype=f64), randn(g, 4, 3, dtype=f64)
    return fwd_bwd(g, F.linear, [x, w], [0, 1])


@case("linear_1d_f32")
def _(g):
    x, w, b = randn(g, 6), randn(g, 2, 6), randn(g, 2)
    return fwd_bwd(g, F.linear, [x, w, b], [0, 1, 2])


# ---- scaled_dot_product_attention (by hand: torch 1.13 has no F.sdpa) ----
def sdpa_ref(q, k, v, mask=None, causal=False, scale=None, bottom_right=False):
    L, S = q.shape[-2], k.shape[-2]
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ k.transpose(-2, -1) * scale
    if causal:
        keep = torch.ones(L, S, dtype=torch.bool).tril(S - L if bottom_right else 0)
        scores = scores.masked_fill(~keep, -math.inf)
    elif mask is not None and mask.dtype == torch.bool:
        scores = scores.masked_fill(~mask, -math.inf)
    elif mask is not None:
        scores = scores + mask
    return torch.softmax(scores, -1) @ v


def qkv(g, lead, L, S, E, Ev, dtype):
    return (
        randn(g, *lead, L, E, dtype=dtype),
        randn(g, *lead, S, E, dtype=dtype),
        randn(g, *lead, S, Ev, dtype=dtype),
    )


@case("scaled_dot_product_attention_f32")
def _(g):
    return fwd_bwd(g, sdpa_ref, list(qkv(g, (2, 3), 5, 5, 8, 8, f32)), [0, 1, 2])


@case("scaled_dot_product_attention_cross_f64")  # L != S, Ev != E, no mask
def _(g):
    return fwd_bwd(g, sdpa_ref, list(qkv(g, (2,), 3, 6, 4, 5, f64)), [0, 1, 2])


@case("scaled_dot_product_attention_causal_f32")
def _(g):
    return fwd_bwd(
        g,
        lambda q, k, v: sdpa_ref(q, k, v, causal=True),
        list(qkv(g, (2, 2), 6, 6, 8, 8, f32)),
        [0, 1, 2],
    )


@case(
    "scaled_dot_product_attention_causal_bottom_right_f32"
)  # stride needs alignment=BottomRight here
def _(g):
    return fwd_bwd(
        g,
        lambda q, k, v: sdpa_ref(q, k, v, causal=True, bottom_right=True),
        list(qkv(g, (2,), 3, 7, 4, 4, f32)),
        [0, 1, 2],
    )


@case(
    "scaled_dot_product_attention_causal_top_left_f64"
)  # L != S with PyTorch's top-left alignment
def _(g):
    return fwd_bwd(
        g,
        lambda q, k, v: sdpa_ref(q, k, v, causal=True),
        list(qkv(g, (2,), 4, 6, 4, 4, f64)),
        [0, 1, 2],
    )


@case("scaled_dot_product_attention_bool_mask_f32")
def _(g):
    q, k, v = qkv(g, (2, 3), 5, 7, 8, 6, f32)
    m = base.mask(g, 2, 1, 5, 7, p=0.7)
    m[..., 0] = True  # no fully masked row here
    return fwd_bwd(g, lambda q_, k_, v_, m_: sdpa_ref(q_, k_, v_, m_), [q, k, v, m], [0, 1, 2])


@case("scaled_dot_product_attention_float_mask_f64")
def _(g):
    q, k, v = qkv(g, (2, 2), 4, 5, 6, 6, f64)
    m = randn(g, 4, 5, dtype=f64)
    return fwd_bwd(g, lambda q_, k_, v_, m_: sdpa_ref(q_, k_, v_, m_), [q, k, v, m], [0, 1, 2])


@case("scaled_dot_product_attention_scale_f32")
def _(g):
    return fwd_bwd(
        g,
        lambda q, k, v: sdpa_ref(q, k, v, scale=0.3),
        list(qkv(g, (3,), 4, 4, 8, 8, f32)),
        [0, 1, 2],
    )


@case(
    "scaled_dot_product_attention_fully_masked_row_f32"
)  # a query that sees no key: NaN, as PyTorch's softmax
def _(g):
    q, k, v = qkv(g, (2,), 3, 4, 4, 4, f32)
    m = torch.ones(2, 3, 4, dtype=torch.bool)
    m[1, 2, :] = False
    return fwd_bwd(g, lambda q_, k_, v_, m_: sdpa_ref(q_, k_, v_, m_), [q, k, v, m], [0])


# ---- rotary embedding (by hand, in float64, as the two reference codes) ----
def rope_freqs(T, D, offset, base_):
    inv = 1.0 / (base_ ** (torch.arange(0, D, 2, dtype=f64)[: D // 2] / D))
    t = torch.arange(offset, offset + T, dtype=f64)
    return torch.outer(t, inv)  # (T, D/2)


def rope_meta(x, offset, base_):  # Meta's llama/model.py: apply_rotary_emb
    T, D = x.shape[-2], x.shape[-1]
    freqs_cis = torch.polar(torch.ones(T, D // 2, dtype=f64), rope_freqs(T, D, offset, base_))
    x_ = torch.view_as_complex(x.to(f64).reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(x_ * freqs_cis).flatten(-2).to(x.dtype)


def rope_hf(x, offset, base_):  # HF modeling_llama: apply_rotary_pos_emb
    T, D = x.shape[-2], x.shape[-1]
    freqs = rope_freqs(T, D, offset, base_)
    emb = torch.cat((freqs, freqs), dim=-1)
    x64 = x.to(f64)
    rotated = torch.cat((-x64[..., D // 2 :], x64[..., : D // 2]), dim=-1)
    return (x64 * emb.cos() + rotated * emb.sin()).to(x.dtype)


def rope_case(name, shape, convention, offset=0, base_=10000.0, dtype=f32):
    fn = rope_meta if convention == "interleaved" else rope_hf

    @case(name)
    def _(g):
        x = randn(g, *shape, dtype=dtype)
        return fwd_bwd(g, lambda x_: fn(x_, offset, base_), [x], [0])


rope_case("rotary_embedding_interleaved_f32", (2, 3, 6, 8), "interleaved")
rope_case("rotary_embedding_halfsplit_f32", (2, 6, 8), "halfsplit", offset=5)
rope_case(
    "rotary_embedding_interleaved_offset_f64",
    (3, 5, 16),
    "interleaved",
    offset=100,
    base_=500000.0,
    dtype=f64,
)
rope_case("rotary_embedding_halfsplit_large_pos_f32", (1, 4, 32), "halfsplit", offset=4000)
rope_case(
    "rotary_embedding_interleaved_large_pos_f64", (2, 3, 12), "interleaved", offset=70000, dtype=f64
)


# ---- the fused ops stride adds: their PyTorch compositions ----
@case("swiglu_f32")
def _(g):
    a, b = randn(g, 3, 4, 6), randn(g, 3, 4, 6)
    return fwd_bwd(g, lambda a_, b_: F.silu(a_) * b_, [a, b], [0, 1])


@case("swiglu_beta_f64")
def _(g):
    a, b, beta = randn(g, 5, 7, dtype=f64), randn(g, 5, 7, dtype=f64), randn(g, 1, dtype=f64)
    return fwd_bwd(g, lambda a_, b_, c_: a_ * torch.sigmoid(c_ * a_) * b_, [a, b, beta], [0, 1, 2])


@case("linear_concat_f32")  # x @ cat(w1, w2).T, one output
def _(g):
    x, w1, w2 = randn(g, 2, 3, 6), randn(g, 4, 6, scale=0.4), randn(g, 5, 6, scale=0.4)
    return fwd_bwd(g, lambda x_, a_, b_: F.linear(x_, torch.cat([a_, b_])), [x, w1, w2], [0, 1, 2])


@case("linear_groups_f64")  # groups (w1) and (w2, w3): outputs side by side here
def _(g):
    x = randn(g, 4, 6, dtype=f64)
    w1, w2, w3 = (randn(g, n, 6, dtype=f64) for n in (3, 2, 4))
    return fwd_bwd(
        g,
        lambda x_, a_, b_, c_: torch.cat([F.linear(x_, a_), F.linear(x_, torch.cat([b_, c_]))], -1),
        [x, w1, w2, w3],
        [0, 1, 2, 3],
    )


@case("rotary_attention_f32")  # causal attention of rotated q and k
def _(g):
    q, k, v = qkv(g, (2, 2), 6, 6, 8, 8, f32)
    return fwd_bwd(
        g,
        lambda q_, k_, v_: sdpa_ref(
            rope_meta(q_, 0, 10000.0), rope_meta(k_, 0, 10000.0), v_, causal=True
        ),
        [q, k, v],
        [0, 1, 2],
    )


# ---- writing ----
def build():
    torch.set_num_threads(1)
    entries = []
    for name, builder in CASES:
        g = torch.Generator().manual_seed(zlib.crc32(name.encode()))
        inputs, outputs = builder(g)
        assert outputs, name
        for i, t in enumerate(inputs):
            entries.append((f"{name}/in{i}", t))
        for i, t in enumerate(outputs):
            entries.append((f"{name}/out{i}", t))
    return base.serialize(
        entries,
        {
            "generator": COMMAND,
            "torch_version": torch.__version__,
            "numpy_version": np.__version__,
            "cpu_capability": base.cpu_capability(),
            "cases": str(len(CASES)),
            "layout": "CASE/inN are inputs (the last one the upstream gradient of a differentiable "
            "case), CASE/outN PyTorch's result then the input gradients",
        },
    )


def main():
    if sys.byteorder != "little":
        sys.exit("gen_nn_goldens.py: run on a little-endian machine")
    base.write(OUT_PATH, build(), MAX_BYTES, "gen_nn_goldens.py", len(CASES))


if __name__ == "__main__":
    main()
