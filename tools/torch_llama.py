"""The two Llama models of stride, written again in PyTorch: the article's
Llama in the article's own style ("Llama from scratch", Kitano 2023) and the
correct Llama in the style of Meta's reference model.py. Their parameter names
are stride's state_dict names, so a state dict moves between the two as it
is. Used by gen_llama_goldens.py (golden logits and gradients) and by
torch_roundtrip.py (weights exported by stride into PyTorch, and back).

  * the article Llama: per-head modules with a dense (context, d, d) rotation
    matrix R applied as q[:, p] @ R[p] via bmm, theta_i = 10000**(-2 (i - 1) /
    d); the sequence-wide RMSNorm over dims (1, 2) with a (context, d) scale
    and no eps; 8 full-width heads concatenated and projected by
    Linear(8 d -> d) with bias; SwiGLU with a learnable beta and biases;
    blocks x = rms(x); x = x + attn(x); x = rms(x); x = x + ff(x); head
    Linear -> SwiGLU -> Linear;
  * the correct Llama, as Meta's reference code: complex-number RoPE on
    adjacent pairs (view_as_complex, polar), per-token RMSNorm (weight (d,),
    eps 1e-6), heads of d / h with scale 1 / sqrt(d / h), causal mask, FFN
    w2(silu(w1 x) * w3 x), final norm, output Linear without bias.
"""

import math
from collections import OrderedDict

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

DEFAULTS = {
    "vocab_size": 65,
    "d_model": 128,
    "n_heads": 8,
    "context": 16,
    "norm_eps": 1e-6,
    "rope_theta": 10000.0,
    "multiple_of": 32,
    "dropout": 0.1,
}


def model_args(config):
    args = dict(DEFAULTS)
    args.update(config["model"])
    return args


# ---- the article's Llama, in the article's own style ----
def get_rotary_matrix(context_window, embedding_dim):
    # A plain float32 tensor, as in the article (not a parameter or buffer).
    R = torch.zeros((context_window, embedding_dim, embedding_dim), requires_grad=False)
    for position in range(context_window):
        for i in range(embedding_dim // 2):
            theta = 10000.0 ** (-2.0 * (i - 1) / embedding_dim)
            m_theta = position * theta
            R[position, 2 * i, 2 * i] = np.cos(m_theta)
            R[position, 2 * i, 2 * i + 1] = -np.sin(m_theta)
            R[position, 2 * i + 1, 2 * i] = np.sin(m_theta)
            R[position, 2 * i + 1, 2 * i + 1] = np.cos(m_theta)
    return R


def scaled_dot_product_attention(q, k, v, is_causal):
    # torch 1.13 has no F.scaled_dot_product_attention: the same math written
    # out, with dropout_p = 0 (see the module docstring).
    L, S = q.size(-2), k.size(-2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if is_causal:
        scores = scores + torch.full((L, S), float("-inf"), dtype=q.dtype).triu(1)
    return torch.softmax(scores, dim=-1) @ v


class RMSNorm(nn.Module):
    def __init__(self, layer_shape, eps=1e-8, bias=False):
        super().__init__()
        # The article accepts eps and bias and uses neither.
        self.register_parameter("scale", nn.Parameter(torch.ones(layer_shape)))

    def forward(self, x):
        # One norm per sequence, over (T, d) together.
        ff_rms = torch.linalg.norm(x, dim=(1, 2)) * x[0].numel() ** -0.5
        raw = x / ff_rms.unsqueeze(-1).unsqueeze(-1)
        return self.scale[: x.shape[1], :].unsqueeze(0) * raw


class RoPEMaskedAttentionHead(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.w_q = nn.Linear(config["d_model"], config["d_model"], bias=False)
        self.w_k = nn.Linear(config["d_model"], config["d_model"], bias=False)
        self.w_v = nn.Linear(config["d_model"], config["d_model"], bias=False)
        self.R = get_rotary_matrix(config["context"], config["d_model"])

    def forward(self, x):
        b, m, d = x.shape
        q = self.w_q(x)
        k = self.w_k(x)
        v = self.w_v(x)
        R = self.R[:m].to(x.dtype)  # the float32 table, in the model's dtype
        q_rotated = (torch.bmm(q.transpose(0, 1), R)).transpose(0, 1)
        k_rotated = (torch.bmm(k.transpose(0, 1), R)).transpose(0, 1)
        return scaled_dot_product_attention(q_rotated, k_rotated, v, is_causal=True)


class RoPEMaskedMultiheadAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.heads = nn.ModuleList(
            [RoPEMaskedAttentionHead(config) for _ in range(config["n_heads"])]
        )
        self.linear = nn.Linear(config["n_heads"] * config["d_model"], config["d_model"])
        self.dropout = nn.Dropout(config["dropout"])

    def forward(self, x):
        heads = [h(x) for h in self.heads]
        x = torch.cat(heads, dim=-1)
        x = self.linear(x)
        x = self.dropout(x)
        return x


class SwiGLU(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.linear_gate = nn.Linear(size, size)
        self.linear = nn.Linear(size, size)
        self.beta = nn.Parameter(torch.ones(1))

    def forward(self, x):
        swish_gate = self.linear_gate(x) * torch.sigmoid(self.beta * self.linear_gate(x))
        return swish_gate * self.linear(x)


class LlamaBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.rms = RMSNorm((config["context"], config["d_model"]))
        self.attention = RoPEMaskedMultiheadAttention(config)
        self.feedforward = nn.Sequential(
            nn.Linear(config["d_model"], config["d_model"]),
            SwiGLU(config["d_model"]),
        )

    def forward(self, x):
        x = self.rms(x)
        x = x + self.attention(x)
        x = self.rms(x)
        x = x + self.feedforward(x)
        return x


class ArticleLlama(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embeddings = nn.Embedding(config["vocab_size"], config["d_model"])
        self.llama_blocks = nn.Sequential(
            OrderedDict([(f"llama_{i}", LlamaBlock(config)) for i in range(config["n_layers"])])
        )
        self.ffn = nn.Sequential(
            nn.Linear(config["d_model"], config["d_model"]),
            SwiGLU(config["d_model"]),
            nn.Linear(config["d_model"], config["vocab_size"]),
        )

    def forward(self, idx):
        x = self.embeddings(idx)
        x = self.llama_blocks(x)
        return self.ffn(x)


# ---- the correct Llama, in the style of Meta's reference model.py ----
class MetaRMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        return self._norm(x) * self.weight


def precompute_freqs_cis(dim, end, theta=10000.0, dtype=torch.float64):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=dtype)[: (dim // 2)] / dim))
    t = torch.arange(end, dtype=dtype)
    freqs = torch.outer(t, freqs)
    return torch.polar(torch.ones_like(freqs), freqs)  # e^{i p theta_j}


def apply_rotary_emb(xq, xk, freqs_cis):
    # Adjacent pairs (x[2j], x[2j+1]) as complex numbers, times e^{+i p theta_j}.
    xq_ = torch.view_as_complex(xq.reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = freqs_cis.view(1, xq_.shape[1], 1, xq_.shape[-1])  # (1, T, 1, Dh/2)
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


class Attention(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.n_heads = args["n_heads"]
        self.head_dim = args["d_model"] // args["n_heads"]
        self.wq = nn.Linear(args["d_model"], self.n_heads * self.head_dim, bias=False)
        self.wk = nn.Linear(args["d_model"], self.n_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(args["d_model"], self.n_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(self.n_heads * self.head_dim, args["d_model"], bias=False)

    def forward(self, x, freqs_cis, mask):
        bsz, seqlen, _ = x.shape
        xq, xk, xv = self.wq(x), self.wk(x), self.wv(x)
        xq = xq.view(bsz, seqlen, self.n_heads, self.head_dim)
        xk = xk.view(bsz, seqlen, self.n_heads, self.head_dim)
        xv = xv.view(bsz, seqlen, self.n_heads, self.head_dim)
        xq, xk = apply_rotary_emb(xq, xk, freqs_cis=freqs_cis)
        xq, keys, values = xq.transpose(1, 2), xk.transpose(1, 2), xv.transpose(1, 2)
        scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(self.head_dim)
        scores = scores + mask  # (bs, n_heads, seqlen, seqlen)
        scores = F.softmax(scores, dim=-1)
        output = torch.matmul(scores, values)  # (bs, n_heads, seqlen, head_dim)
        output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
        return self.wo(output)


def ffn_hidden_dim(args):
    """Meta's rule (8d/3 rounded up to a multiple), unless the config sets it."""
    if args.get("ffn_hidden", 0) > 0:
        return args["ffn_hidden"]
    hidden, m = int(2 * 4 * args["d_model"] / 3), args["multiple_of"]
    return m * ((hidden + m - 1) // m)


class FeedForward(nn.Module):
    def __init__(self, dim, hidden_dim):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden_dim, bias=False)
        self.w2 = nn.Linear(hidden_dim, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden_dim, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class TransformerBlock(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.attention = Attention(args)
        self.feed_forward = FeedForward(args["d_model"], ffn_hidden_dim(args))
        self.attention_norm = MetaRMSNorm(args["d_model"], eps=args["norm_eps"])
        self.ffn_norm = MetaRMSNorm(args["d_model"], eps=args["norm_eps"])

    def forward(self, x, freqs_cis, mask):
        h = x + self.attention(self.attention_norm(x), freqs_cis, mask)
        return h + self.feed_forward(self.ffn_norm(h))


class Transformer(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.args = args
        self.tok_embeddings = nn.Embedding(args["vocab_size"], args["d_model"])
        self.layers = nn.ModuleList([TransformerBlock(args) for _ in range(args["n_layers"])])
        self.norm = MetaRMSNorm(args["d_model"], eps=args["norm_eps"])
        self.output = nn.Linear(args["d_model"], args["vocab_size"], bias=False)
        if args.get("tie_embeddings", False):
            self.output.weight = self.tok_embeddings.weight

    def forward(self, tokens):
        _bsz, seqlen = tokens.shape
        h = self.tok_embeddings(tokens)
        freqs_cis = precompute_freqs_cis(
            self.args["d_model"] // self.args["n_heads"],
            seqlen,
            self.args["rope_theta"],
            dtype=h.dtype,
        )
        mask = torch.full((seqlen, seqlen), float("-inf"), dtype=h.dtype).triu(1)
        for layer in self.layers:
            h = layer(h, freqs_cis, mask)
        return self.output(self.norm(h))


def build(config):
    """The PyTorch model of a stride config (its JSON, as a dict): float32,
    initialised by PyTorch."""
    args = model_args(config)
    if args.get("arch", "llama") == "llama":
        return Transformer(args)
    if args["arch"] == "article_llama":
        return ArticleLlama(args)
    raise ValueError(f"no PyTorch version of arch {args['arch']!r} here")
