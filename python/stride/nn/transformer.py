"""MultiheadAttention and TransformerEncoderLayer (torch.nn), written in
Python over stride's ops, with PyTorch's parameter names (in_proj_weight,
in_proj_bias, out_proj; q/k/v_proj_weight when kdim or vdim differ),
arguments, masks and defaults, so a torch state_dict loads and gives the
same outputs and gradients. add_bias_kv and add_zero_attn are not
supported."""

import math

from .. import _stride
from . import functional as F
from . import init
from .layers import Dropout, LayerNorm, Linear, _factory_kwargs, _int_arg
from .module import Module
from .parameter import Parameter


def _additive_mask(mask, dtype, name):
    """A boolean mask (True: may not attend) as 0 / -inf, or a float mask
    as given (added to the scores), as PyTorch's _canonical_mask."""
    if mask is None:
        return None
    if mask.dtype == _stride.bool:
        zeros = _stride.zeros(mask.shape, dtype=dtype, device=mask.device)
        return zeros.masked_fill(mask, float("-inf"))
    if not mask.is_floating_point():
        raise TypeError(
            f"MultiheadAttention: {name} must be a bool or floating-point tensor; got {mask.dtype}."
        )
    return mask.to(dtype)


class MultiheadAttention(Module):
    """Attention over num_heads heads of embed_dim // num_heads: query
    (L, N, E) ((N, L, E) with batch_first; (L, E) unbatched), key and value
    (S, N, kdim / vdim) -> (output (L, N, E), weights (N, L, S) averaged over
    heads, (N, num_heads, L, S) otherwise, or None without need_weights)."""

    def __init__(
        self,
        embed_dim,
        num_heads,
        dropout=0.0,
        bias=True,
        add_bias_kv=False,
        add_zero_attn=False,
        kdim=None,
        vdim=None,
        batch_first=False,
        device=None,
        dtype=None,
    ):
        super().__init__()
        if add_bias_kv or add_zero_attn:
            raise NotImplementedError(
                "MultiheadAttention: add_bias_kv and add_zero_attn are not supported; pass False."
            )
        self.embed_dim = _int_arg(embed_dim, "MultiheadAttention", "embed_dim")
        self.num_heads = _int_arg(num_heads, "MultiheadAttention", "num_heads")
        self.kdim = self.embed_dim if kdim is None else _int_arg(kdim, "MultiheadAttention", "kdim")
        self.vdim = self.embed_dim if vdim is None else _int_arg(vdim, "MultiheadAttention", "vdim")
        self._qkv_same_embed_dim = self.kdim == self.embed_dim and self.vdim == self.embed_dim
        self.dropout, self.batch_first = float(dropout), bool(batch_first)
        self.head_dim = self.embed_dim // self.num_heads
        if self.head_dim * self.num_heads != self.embed_dim:
            raise ValueError(
                f"MultiheadAttention: embed_dim {self.embed_dim} must be divisible by num_heads "
                f"{self.num_heads}."
            )
        kw = _factory_kwargs(device, dtype)
        e = self.embed_dim
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(_stride.empty(3 * e, e, **kw))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = Parameter(_stride.empty(e, e, **kw))
            self.k_proj_weight = Parameter(_stride.empty(e, self.kdim, **kw))
            self.v_proj_weight = Parameter(_stride.empty(e, self.vdim, **kw))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(_stride.empty(3 * e, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(e, e, bias=bias, **kw)
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)

    def _project(self, query, key, value):
        e = self.embed_dim
        b = self.in_proj_bias
        biases = (None, None, None) if b is None else (b[:e], b[e : 2 * e], b[2 * e :])
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            weights = (w[:e], w[e : 2 * e], w[2 * e :])
        else:
            weights = (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)
        return tuple(F.linear(x, w, bb) for x, w, bb in zip((query, key, value), weights, biases))

    def _merged_mask(self, attn_mask, key_padding_mask, dtype, n, tgt, src):
        """attn_mask and key_padding_mask as one additive (N * heads | 1, L, S) mask."""
        mask = _additive_mask(attn_mask, dtype, "attn_mask")
        if mask is not None:
            if mask.dim() == 2:
                if tuple(mask.shape) != (tgt, src):
                    raise RuntimeError(
                        f"MultiheadAttention: the 2-D attn_mask should be {(tgt, src)}; "
                        f"got {tuple(mask.shape)}."
                    )
                mask = mask.unsqueeze(0)
            elif tuple(mask.shape) != (n * self.num_heads, tgt, src):
                raise RuntimeError(
                    f"MultiheadAttention: the 3-D attn_mask should be "
                    f"{(n * self.num_heads, tgt, src)}; got {tuple(mask.shape)}."
                )
        padding = _additive_mask(key_padding_mask, dtype, "key_padding_mask")
        if padding is not None:
            if tuple(padding.shape) != (n, src):
                raise RuntimeError(
                    f"MultiheadAttention: key_padding_mask should be {(n, src)}; "
                    f"got {tuple(padding.shape)}."
                )
            padding = (
                padding.view(n, 1, 1, src)
                .expand(n, self.num_heads, 1, src)
                .reshape(n * self.num_heads, 1, src)
            )
            mask = padding if mask is None else mask + padding
        return mask

    def forward(
        self,
        query,
        key,
        value,
        key_padding_mask=None,
        need_weights=True,
        attn_mask=None,
        average_attn_weights=True,
        is_causal=False,
    ):
        """(attn_output, attn_weights or None). Masks: True (bool) or -inf
        (float) where a query may not attend; is_causal is a hint that needs
        attn_mask, as in PyTorch."""
        if is_causal and attn_mask is None:
            raise RuntimeError(
                "MultiheadAttention: is_causal needs attn_mask (the hint does not build it); "
                "pass a causal attn_mask."
            )
        batched = query.dim() == 3
        if not batched:
            query, key, value = (x.unsqueeze(1) for x in (query, key, value))
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif self.batch_first:
            query, key, value = (x.transpose(0, 1) for x in (query, key, value))
        tgt, n, e = query.shape
        src = key.shape[0]
        h, d = self.num_heads, self.head_dim
        q, k, v = self._project(query, key, value)
        q = q.reshape(tgt, n * h, d).transpose(0, 1)
        k = k.reshape(src, n * h, d).transpose(0, 1)
        v = v.reshape(src, n * h, d).transpose(0, 1)
        mask = self._merged_mask(attn_mask, key_padding_mask, q.dtype, n, tgt, src)
        q_scaled = q * math.sqrt(1.0 / float(d))
        if mask is None:
            scores = _stride.bmm(q_scaled, k.transpose(-2, -1))
        else:
            scores = _stride.baddbmm(mask.expand(n * h, tgt, src), q_scaled, k.transpose(-2, -1))
        weights = F.softmax(scores, dim=-1)
        if self.dropout > 0 and self.training:
            weights = F.dropout(weights, self.dropout, True)
        out = _stride.bmm(weights, v).transpose(0, 1).reshape(tgt * n, e)
        out = self.out_proj(out).view(tgt, n, e)
        if not batched:
            out = out.squeeze(1)
        elif self.batch_first:
            out = out.transpose(0, 1)
        if not need_weights:
            return out, None
        weights = weights.view(n, h, tgt, src)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        return out, (weights if batched else weights.squeeze(0))


_ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with dropout and a
    residual, LayerNorm after each (or before, with norm_first), as
    torch.nn.TransformerEncoderLayer; activation "relu", "gelu" or a
    callable."""

    def __init__(
        self,
        d_model,
        nhead,
        dim_feedforward=2048,
        dropout=0.1,
        activation="relu",
        layer_norm_eps=1e-5,
        batch_first=False,
        norm_first=False,
        bias=True,
        device=None,
        dtype=None,
    ):
        super().__init__()
        kw = _factory_kwargs(device, dtype)
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = bool(norm_first)
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            if activation not in _ACTIVATIONS:
                raise RuntimeError(
                    f"TransformerEncoderLayer: activation should be relu/gelu, not {activation}."
                )
            activation = _ACTIVATIONS[activation]
        self.activation = activation

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(
            x,
            x,
            x,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            need_weights=False,
            is_causal=is_causal,
        )[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        """src (S, N, E) ((N, S, E) with batch_first) -> the same shape."""
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))
