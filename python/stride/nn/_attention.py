"""torch.nn.functional.multi_head_attention_forward, in Python over stride's
ops (linear, bmm / baddbmm, softmax, dropout); nn.MultiheadAttention calls
it. It always forms the attention weights explicitly (PyTorch's need_weights
path), from one additive mask merged from attn_mask and key_padding_mask."""

import math

from .._stride import Tensor, _nn, baddbmm, bmm, cat, zeros
from .._stride import bool as bool_dtype

_NAME = "multi_head_attention_forward"


def _additive_mask(mask, dtype, name):
    """A boolean mask (True: may not attend) as 0 / -inf, or a float mask
    as given (added to the scores), as PyTorch's _canonical_mask."""
    if mask is None:
        return None
    if not isinstance(mask, Tensor):
        raise TypeError(f"{_NAME}: {name} must be a Tensor; got {type(mask).__name__}.")
    if mask.dtype == bool_dtype:
        return zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(mask, float("-inf"))
    if not mask.is_floating_point():
        raise TypeError(
            f"{_NAME}: {name} must be a bool or floating-point tensor; got {mask.dtype}."
        )
    return mask.to(dtype)


def _projections(query, key, value, embed_dim, weights, in_proj_bias):
    """q, k, v: the packed in_proj_weight (3E, E) split in three, or the
    three separate weights, each with its third of in_proj_bias."""
    e = embed_dim
    b = in_proj_bias
    biases = (None, None, None) if b is None else (b[:e], b[e : 2 * e], b[2 * e :])
    if len(weights) == 1:
        (w,) = weights
        weights = (w[:e], w[e : 2 * e], w[2 * e :])
    return tuple(_nn.linear(x, w, bb) for x, w, bb in zip((query, key, value), weights, biases))


def _check_attn_mask(mask, bsz, num_heads, tgt, src):
    if mask.dim() == 2:
        if tuple(mask.shape) != (tgt, src):
            raise RuntimeError(
                f"{_NAME}: the 2-D attn_mask should be {(tgt, src)}; got {tuple(mask.shape)}."
            )
        return mask.unsqueeze(0)
    if mask.dim() != 3 or tuple(mask.shape) != (bsz * num_heads, tgt, src):
        raise RuntimeError(
            f"{_NAME}: the 3-D attn_mask should be {(bsz * num_heads, tgt, src)}; "
            f"got {tuple(mask.shape)}."
        )
    return mask


def _append_key(k, v, extra_k, extra_v, masks):
    """k and v (S, N, E) with one more key and value at the end, and the
    masks padded with a column that lets every query see it."""
    k, v = cat([k, extra_k], 0), cat([v, extra_v], 0)
    return k, v, [None if m is None else _nn.pad(m, (0, 1)) for m in masks]


def multi_head_attention_forward(
    query,
    key,
    value,
    embed_dim_to_check,
    num_heads,
    in_proj_weight,
    in_proj_bias,
    bias_k,
    bias_v,
    add_zero_attn,
    dropout_p,
    out_proj_weight,
    out_proj_bias,
    training=True,
    key_padding_mask=None,
    need_weights=True,
    attn_mask=None,
    use_separate_proj_weight=False,
    q_proj_weight=None,
    k_proj_weight=None,
    v_proj_weight=None,
    static_k=None,
    static_v=None,
    average_attn_weights=True,
    is_causal=False,
):
    """Multi-head attention of query (L, N, E) over key and value (S, N, E)
    ((L, E), (S, E) unbatched): (output (L, N, E), weights (N, L, S) averaged
    over heads, (N, heads, L, S) otherwise, or None without need_weights)."""
    if static_k is not None or static_v is not None:
        raise NotImplementedError(f"{_NAME}: static_k and static_v are not supported.")
    if is_causal and attn_mask is None:
        raise RuntimeError(
            f"{_NAME}: is_causal needs attn_mask (the hint does not build it); pass a causal "
            "attn_mask."
        )
    batched = query.dim() == 3
    if not batched:
        query, key, value = (x.unsqueeze(1) for x in (query, key, value))
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt, bsz, embed_dim = query.shape
    if embed_dim != embed_dim_to_check:
        raise RuntimeError(
            f"{_NAME}: expected embed_dim {embed_dim_to_check}; the query has {embed_dim}."
        )
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise RuntimeError(
            f"{_NAME}: embed_dim {embed_dim} not divisible by num_heads {num_heads}."
        )
    weights = (
        (q_proj_weight, k_proj_weight, v_proj_weight)
        if use_separate_proj_weight
        else (in_proj_weight,)
    )
    q, k, v = _projections(query, key, value, embed_dim, weights, in_proj_bias)
    padding = _additive_mask(key_padding_mask, q.dtype, "key_padding_mask")
    mask = _additive_mask(attn_mask, q.dtype, "attn_mask")
    if mask is not None:
        mask = _check_attn_mask(mask, bsz, num_heads, tgt, key.shape[0])
    if bias_k is not None and bias_v is not None:
        extra = [b.reshape(1, 1, embed_dim).expand(1, bsz, embed_dim) for b in (bias_k, bias_v)]
        k, v, (mask, padding) = _append_key(k, v, *extra, [mask, padding])
    elif bias_k is not None or bias_v is not None:
        raise RuntimeError(f"{_NAME}: bias_k and bias_v must be given together.")
    if add_zero_attn:
        zero = zeros(1, bsz, embed_dim, dtype=k.dtype, device=k.device)
        k, v, (mask, padding) = _append_key(k, v, zero, zero, [mask, padding])
    src = k.shape[0]
    q = q.reshape(tgt, bsz * num_heads, head_dim).transpose(0, 1)
    k = k.reshape(src, bsz * num_heads, head_dim).transpose(0, 1)
    v = v.reshape(src, bsz * num_heads, head_dim).transpose(0, 1)
    if padding is not None:
        if tuple(padding.shape) != (bsz, src):
            raise RuntimeError(
                f"{_NAME}: key_padding_mask should be {(bsz, src)}; got {tuple(padding.shape)}."
            )
        padding = (
            padding.view(bsz, 1, 1, src)
            .expand(bsz, num_heads, 1, src)
            .reshape(bsz * num_heads, 1, src)
        )
        mask = padding if mask is None else mask + padding
    q_scaled = q * math.sqrt(1.0 / float(head_dim))
    if mask is None:
        scores = bmm(q_scaled, k.transpose(-2, -1))
    else:
        scores = baddbmm(mask.expand(bsz * num_heads, tgt, src), q_scaled, k.transpose(-2, -1))
    attn = scores.softmax(-1)
    if training and dropout_p > 0.0:
        attn = _nn.dropout(attn, dropout_p, True)
    out = bmm(attn, v).transpose(0, 1).reshape(tgt * bsz, embed_dim)
    out = _nn.linear(out, out_proj_weight, out_proj_bias).view(tgt, bsz, embed_dim)
    if not batched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    attn = attn.view(bsz, num_heads, tgt, src)
    if average_attn_weights:
        attn = attn.mean(dim=1)
    return out, (attn if batched else attn.squeeze(0))
