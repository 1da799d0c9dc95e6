"""stride.nn.functional: the stateless layer functions (torch.nn.functional),
with PyTorch's names and arguments. The fused ones (cross_entropy,
rms_norm, rotary_embedding, swiglu, scaled_dot_product_attention) run one
kernel forward and one backward instead of a chain of ops.

    import stride.nn.functional as F
    loss = F.cross_entropy(logits.view(-1, V), targets.view(-1))
"""

import operator

from .._stride import Tensor, _nn
from ..autograd import no_grad
from ._attention import multi_head_attention_forward  # noqa: F401
from ._composites import (  # noqa: F401
    alpha_dropout,
    bilinear,
    channel_shuffle,
    dropout1d,
    dropout2d,
    dropout3d,
    embedding_bag,
    feature_alpha_dropout,
    local_response_norm,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
    pdist,
    rrelu,
)
from ._linear_cross_entropy import linear_cross_entropy  # noqa: F401
from ._losses import (  # noqa: F401
    cosine_embedding_loss,
    cross_entropy,
    gaussian_nll_loss,
    margin_ranking_loss,
    multi_margin_loss,
    multilabel_margin_loss,
    multilabel_soft_margin_loss,
    nll_loss,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)

linear_concat = _nn.linear_concat
linear_groups = _nn.linear_groups
relu = _nn.relu
silu = _nn.silu
gelu = _nn.gelu
leaky_relu = _nn.leaky_relu
elu = _nn.elu
selu = _nn.selu
celu = _nn.celu
softplus = _nn.softplus
hardtanh = _nn.hardtanh
relu6 = _nn.relu6
hardswish = _nn.hardswish
hardsigmoid = _nn.hardsigmoid
mish = _nn.mish
logsigmoid = _nn.logsigmoid
softsign = _nn.softsign
tanhshrink = _nn.tanhshrink
softshrink = _nn.softshrink
hardshrink = _nn.hardshrink
threshold = _nn.threshold
glu = _nn.glu
prelu = _nn.prelu
softmin = _nn.softmin
l1_loss = _nn.l1_loss
smooth_l1_loss = _nn.smooth_l1_loss
huber_loss = _nn.huber_loss
binary_cross_entropy = _nn.binary_cross_entropy
binary_cross_entropy_with_logits = _nn.binary_cross_entropy_with_logits
kl_div = _nn.kl_div
soft_margin_loss = _nn.soft_margin_loss
hinge_embedding_loss = _nn.hinge_embedding_loss
poisson_nll_loss = _nn.poisson_nll_loss
one_hot = _nn.one_hot
normalize = _nn.normalize
cosine_similarity = _nn.cosine_similarity
pairwise_distance = _nn.pairwise_distance
pad = _nn.pad
log_softmax = _nn.log_softmax
swiglu = _nn.swiglu
dropout = _nn.dropout
layer_norm = _nn.layer_norm
mse_loss = _nn.mse_loss
rotary_attention = _nn.rotary_attention
rotary_tables = _nn.rotary_tables
conv1d = _nn.conv1d
conv2d = _nn.conv2d
conv3d = _nn.conv3d
conv_transpose1d = _nn.conv_transpose1d
conv_transpose2d = _nn.conv_transpose2d
conv_transpose3d = _nn.conv_transpose3d
unfold = _nn.unfold
fold = _nn.fold
max_pool1d = _nn.max_pool1d
max_pool2d = _nn.max_pool2d
max_pool3d = _nn.max_pool3d
avg_pool1d = _nn.avg_pool1d
avg_pool2d = _nn.avg_pool2d
avg_pool3d = _nn.avg_pool3d
adaptive_avg_pool1d = _nn.adaptive_avg_pool1d
adaptive_avg_pool2d = _nn.adaptive_avg_pool2d
adaptive_avg_pool3d = _nn.adaptive_avg_pool3d
adaptive_max_pool1d = _nn.adaptive_max_pool1d
adaptive_max_pool2d = _nn.adaptive_max_pool2d
adaptive_max_pool3d = _nn.adaptive_max_pool3d
interpolate = _nn.interpolate
pixel_shuffle = _nn.pixel_shuffle
pixel_unshuffle = _nn.pixel_unshuffle
group_norm = _nn.group_norm


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """interpolate under its deprecated name (torch.nn.functional.upsample)."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """interpolate with mode 'nearest' (torch.nn.functional.upsample_nearest)."""
    return interpolate(input, size, scale_factor, "nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """interpolate with mode 'bilinear' and align_corners=True
    (torch.nn.functional.upsample_bilinear)."""
    return interpolate(input, size, scale_factor, "bilinear", True)


def batch_norm(
    input,
    running_mean,
    running_var,
    weight=None,
    bias=None,
    training=False,
    momentum=0.1,
    eps=1e-5,
):
    """Batch normalisation over dim 1 (torch.nn.functional.batch_norm): the
    C++ op takes (N, C) and (N, C, L); an input with more spatial dims
    (BatchNorm2d's and 3d's) runs as its (N, C, L) view."""
    if input.ndim > 3:
        flat = input.reshape(input.shape[0], input.shape[1], -1)
        y = _nn.batch_norm(flat, running_mean, running_var, weight, bias, training, momentum, eps)
        return y.view(input.shape)
    return _nn.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(
    input,
    running_mean=None,
    running_var=None,
    weight=None,
    bias=None,
    use_input_stats=True,
    momentum=0.1,
    eps=1e-5,
):
    """Each channel of each sample normalised over its spatial dims
    (torch.nn.functional.instance_norm): group_norm with a group per channel.
    Given running_mean and running_var, use_input_stats also updates them
    with the batch's mean of the instances' means and unbiased variances;
    without use_input_stats they normalise instead."""
    if not isinstance(input, Tensor):
        raise TypeError(f"instance_norm(): input must be a Tensor; got {type(input).__name__}.")
    if input.ndim < 3:
        raise ValueError(
            "instance_norm(): input must be (N, C, ...) with at least one spatial dim; "
            f"got shape {tuple(input.shape)}."
        )
    shape = (1, -1) + (1,) * (input.ndim - 2)
    if not use_input_stats:
        if running_mean is None or running_var is None:
            raise ValueError(
                "instance_norm(): use_input_stats=False needs running_mean and running_var."
            )
        y = (input - running_mean.view(shape)) / (running_var.view(shape) + eps).sqrt()
        if weight is not None:
            y = y * weight.view(shape)
        return y if bias is None else y + bias.view(shape)
    if running_mean is not None and running_var is not None:
        with no_grad():
            dims = tuple(range(2, input.ndim))
            running_mean.mul_(1 - momentum).add_(input.mean(dims).mean(0) * momentum)
            running_var.mul_(1 - momentum).add_(input.var(dims).mean(0) * momentum)
    return group_norm(input, input.shape[1], weight, bias, eps)


def max_pool1d_with_indices(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """max_pool1d(..., return_indices=True): (values, indices). return_indices
    is accepted and ignored, as PyTorch's."""
    del return_indices
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """max_pool2d(..., return_indices=True): (values, indices). return_indices
    is accepted and ignored, as PyTorch's."""
    del return_indices
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d_with_indices(input, output_size):
    """adaptive_max_pool1d(..., return_indices=True): (values, indices)."""
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size):
    """adaptive_max_pool2d(..., return_indices=True): (values, indices)."""
    return adaptive_max_pool2d(input, output_size, True)


def linear(input, weight, bias=None):
    """input @ weight.T + bias (torch.nn.functional.linear): weight (out, in)
    maps (..., in) to (..., out); a 1-d weight (in,) maps it to (...), with a
    0-d bias."""
    if isinstance(weight, Tensor) and weight.ndim == 1:
        out = input.matmul(weight)
        return out if bias is None else out + bias
    return _nn.linear(input, weight, bias)


def embedding(
    input,
    weight,
    padding_idx=None,
    max_norm=None,
    norm_type=2.0,
    scale_grad_by_freq=False,
    sparse=False,
):
    """The rows of weight (V, D) at the integer ids input
    (torch.nn.functional.embedding). The row at padding_idx gets no
    gradient; max_norm first rescales, in place, each looked-up row whose
    norm_type-norm exceeds it; scale_grad_by_freq divides each row's
    gradient by how often the batch looks it up. stride has no sparse
    tensors: with sparse=True weight's gradient holds the same values,
    dense."""
    if not isinstance(weight, Tensor) or weight.ndim != 2:
        raise ValueError("embedding(): weight must be a 2-d stride.Tensor (num_embeddings, dim).")
    rows = weight.shape[0]
    if padding_idx is not None:
        if not -rows <= padding_idx < rows:
            raise ValueError(
                f"embedding(): padding_idx must be within [-{rows}, {rows}); got {padding_idx}."
            )
        padding_idx %= rows
    if max_norm is not None:
        _renormalise_rows(input, weight, max_norm, norm_type)
    out = _nn.embedding(input, weight)
    if padding_idx is None and not scale_grad_by_freq:
        return out
    return _scale_embedding_gradient(out, input, rows, padding_idx, scale_grad_by_freq)


def _renormalise_rows(input, weight, max_norm, norm_type):
    """PyTorch's embedding_renorm_: each row input looks up whose norm
    exceeds max_norm is scaled, in place and untracked, to max_norm."""
    import stride

    with no_grad():
        looked_up = stride.bincount(input.reshape(-1), minlength=weight.shape[0]) > 0
        norms = weight.norm(norm_type, 1)
        too_long = looked_up & (norms > max_norm)
        scale = stride.where(too_long, max_norm / (norms + 1e-7), stride.ones_like(norms))
        weight.mul_(scale.unsqueeze(1).to(weight.dtype))


def _scale_embedding_gradient(out, input, rows, padding_idx, by_frequency):
    """out's value with its gradient scaled per looked-up row: by 0 at
    padding_idx, by 1 / (times looked up) with by_frequency."""
    import stride

    scale = stride.ones(input.shape, dtype=out.dtype)
    if by_frequency:
        counts = stride.bincount(input.reshape(-1), minlength=rows)
        scale = scale / counts.gather(0, input.reshape(-1)).view(input.shape).to(out.dtype)
    if padding_idx is not None:
        scale = scale * (input != padding_idx).to(out.dtype)
    scale = scale.unsqueeze(-1)
    return out * scale + out.detach() * (1 - scale)


def scaled_dot_product_attention(
    query,
    key,
    value,
    attn_mask=None,
    dropout_p=0.0,
    is_causal=False,
    scale=None,
    enable_gqa=False,
    *,
    alignment=None,
    generator=None,
):
    """softmax(q k^T * scale + mask) v (torch.nn.functional.
    scaled_dot_product_attention), fused when there is no attn_mask.
    enable_gqa lets key and value have fewer heads (dim -3) than query, each
    shared by query's heads in turn. With is_causal and query and key
    lengths that differ, alignment says where the diagonal goes:
    'top_left' (query i sees keys <= i) or 'bottom_right' (the queries are
    the last of the keys' positions, as in KV-cache decoding). Its default
    here is PyTorch's top-left, so that code written for
    torch.nn.functional runs unchanged and gives PyTorch's result; the C++
    API, which promises no PyTorch compatibility, refuses to guess."""
    if enable_gqa and isinstance(query, Tensor) and query.ndim >= 3:
        key, value = _shared_heads(query, key, "key"), _shared_heads(query, value, "value")
    if alignment is None and is_causal and _lengths_differ(query, key):
        alignment = "top_left"
    return _nn.scaled_dot_product_attention(
        query,
        key,
        value,
        attn_mask,
        dropout_p,
        is_causal,
        scale,
        alignment=alignment,
        generator=generator,
    )


def _lengths_differ(query, key):
    """Whether query's length (dim -2) differs from key's."""
    shaped = all(isinstance(t, Tensor) and t.ndim >= 2 for t in (query, key))
    return shaped and query.shape[-2] != key.shape[-2]


def _shared_heads(query, kv, name):
    """kv's heads repeated so that each serves query.shape[-3] / kv's heads
    consecutive query heads (grouped-query attention)."""
    if not isinstance(kv, Tensor) or kv.ndim < 3:
        return kv
    heads, groups = query.shape[-3], kv.shape[-3]
    if heads == groups:
        return kv
    if groups == 0 or heads % groups:
        raise ValueError(
            f"scaled_dot_product_attention(): enable_gqa needs query's heads ({heads}) to be a "
            f"multiple of {name}'s ({groups})."
        )
    return kv.repeat_interleave(heads // groups, -3)


def softmax(input, dim=None, dtype=None):
    """exp(x) / sum(exp(x)) along dim (required, as in PyTorch's current
    API); dtype= casts the input first."""
    if not isinstance(input, Tensor):
        raise TypeError(f"softmax(): input must be a stride.Tensor; got {type(input).__name__}.")
    if dim is None:
        raise TypeError("softmax() needs dim=: the dimension to normalise over.")
    if dtype is not None:
        input = input.to(dtype)
    return _nn.softmax(input, dim)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x^2) + eps) * weight over the trailing normalized_shape
    dims, fused (torch.nn.functional.rms_norm): several trailing dims run as
    one flattened last dim. eps=None is the dtype's machine epsilon, as in
    PyTorch."""
    if not isinstance(input, Tensor):
        raise TypeError(f"rms_norm(): input must be a stride.Tensor; got {type(input).__name__}.")
    try:
        shape = (operator.index(normalized_shape),)
    except TypeError:
        try:
            shape = tuple(operator.index(n) for n in normalized_shape)
        except TypeError:
            raise TypeError(
                "rms_norm(): normalized_shape must be an int or a sequence of ints; got "
                f"{type(normalized_shape).__name__}."
            ) from None
    trailing = tuple(input.shape[input.ndim - len(shape) :]) if shape else ()
    if not shape or len(shape) > input.ndim or trailing != shape:
        raise ValueError(
            "rms_norm(): normalized_shape must be the input's trailing dims, e.g. "
            f"({input.shape[-1] if input.ndim else 1},) for an input of shape "
            f"{tuple(input.shape)}; got {shape}."
        )
    if eps is None:
        eps = _machine_epsilon(input.dtype)
    if eps < 0:
        return _composed_rms_norm(input, len(shape), weight, eps)
    if len(shape) == 1:
        return _nn.rms_norm(input, weight, eps)
    flat = input.reshape(tuple(input.shape[: input.ndim - len(shape)]) + (-1,))
    flat_weight = None if weight is None else weight.reshape(-1)
    return _nn.rms_norm(flat, flat_weight, eps).reshape(input.shape)


def _composed_rms_norm(input, dims, weight, eps):
    """rms_norm from ops, for the negative eps that PyTorch accepts and the
    fused kernel refuses (rows whose mean square is below -eps give NaN)."""
    mean_square = (input * input).mean(tuple(range(input.ndim - dims, input.ndim)), True)
    y = input * (mean_square + eps).rsqrt()
    return y if weight is None else y * weight


def _machine_epsilon(dtype):
    import stride

    return {
        stride.float64: 2.0**-52,
        stride.float32: 2.0**-23,
        stride.bfloat16: 2.0**-7,
        stride.float16: 2.0**-10,
    }.get(dtype, 2.0**-23)


def rotary_embedding(
    input, cos=None, sin=None, *, position_offset=0, base=10000.0, convention="interleaved"
):
    """Rotary position embedding of input (..., T, D), fused.

    Without tables, pair i at position p = position_offset + t is rotated by
    p * base^(-2i/D); with cos and sin (T, D/2) it is rotated by those
    angles (any schedule, e.g. the "Llama from scratch" article's).
    convention: 'interleaved' pairs (x[2i], x[2i+1]) as Meta's Llama,
    'half_split' pairs (x[i], x[i + D/2]) as Hugging Face's."""
    if (cos is None) != (sin is None):
        raise TypeError("rotary_embedding takes both cos and sin tables, or neither.")
    if cos is not None:
        return _nn.rotary_embedding_tables(input, cos, sin, convention)
    return _nn.rotary_embedding(input, position_offset, base, convention)


rope = rotary_embedding
