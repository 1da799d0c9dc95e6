"""MultiheadAttention and TransformerEncoderLayer (torch.nn), written in
Python over stride's ops, with PyTorch's parameter names (in_proj_weight,
in_proj_bias, out_proj; q/k/v_proj_weight when kdim or vdim differ),
arguments, masks and defaults, so a torch state_dict loads and gives the
same outputs and gradients. The attention itself is
F.multi_head_attention_forward (_attention.py)."""

from .. import _stride
from . import functional as F
from . import init
from .layers import Dropout, LayerNorm, Linear, _factory_kwargs, _int_arg
from .module import Module
from .parameter import Parameter


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
        if add_bias_kv:
            self.bias_k = Parameter(_stride.empty(1, 1, e, **kw))
            self.bias_v = Parameter(_stride.empty(1, 1, e, **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = bool(add_zero_attn)
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
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

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
        if self.batch_first and query.dim() == 3:
            query, key, value = (x.transpose(0, 1) for x in (query, key, value))
        out, weights = F.multi_head_attention_forward(
            query,
            key,
            value,
            self.embed_dim,
            self.num_heads,
            self.in_proj_weight,
            self.in_proj_bias,
            self.bias_k,
            self.bias_v,
            self.add_zero_attn,
            self.dropout,
            self.out_proj.weight,
            self.out_proj.bias,
            training=self.training,
            key_padding_mask=key_padding_mask,
            need_weights=need_weights,
            attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights,
            is_causal=is_causal,
        )
        if self.batch_first and query.dim() == 3:
            out = out.transpose(0, 1)
        return out, weights


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
        d_model = _int_arg(d_model, "TransformerEncoderLayer", "d_model")
        nhead = _int_arg(nhead, "TransformerEncoderLayer", "nhead")
        dim_feedforward = _int_arg(dim_feedforward, "TransformerEncoderLayer", "dim_feedforward")
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
