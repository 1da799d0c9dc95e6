#!/usr/bin/python3
"""Generates tests/golden/llama_article.safetensors and
tests/golden/llama_correct.safetensors: the project's two flagship models,
written again here in PyTorch, loaded with stride's own initial weights and run
on fixed inputs, for tests/models/llama_golden_test.cpp to match.

Regenerate (from the repository root; Debian's python3-torch, since the pyenv
`python3` has no torch):

    mkdir -p /tmp/llama-goldens
    /usr/bin/python3 tools/gen_llama_goldens.py --write-configs /tmp/llama-goldens
    build/apps/stride/stride init --config /tmp/llama-goldens/article_llama.json \\
        --out /tmp/llama-goldens/article_llama.safetensors
    build/apps/stride/stride init --config /tmp/llama-goldens/llama.json \\
        --out /tmp/llama-goldens/llama.safetensors
    /usr/bin/python3 tools/gen_llama_goldens.py --weights-dir /tmp/llama-goldens

The committed files were made before `stride init` existed, from the same
configs, by a throwaway program that did, for each model,
`stride::manual_seed(seed); auto m = stride::llama::build_model(cfg);
stride::io::save_safetensors(path, m->state_dict().items());` with seed 0
(article Llama) and 1 (Llama). Which stride-initialised weights are used does
not matter to the test: the golden files carry them.

The two models, in the style of their own sources:
  * the article Llama ("Llama from scratch", Kitano 2023; see
    the article's sections 1.4-1.8): per-head modules with a
    dense (context, d, d) rotation matrix R applied as q[:, p] @ R[p] via bmm,
    theta_i = 10000**(-2 (i - 1) / d); the sequence-wide RMSNorm over dims
    (1, 2) with a (context, d) scale and no eps; 8 full-width heads
    concatenated and projected by Linear(8 d -> d) with bias; SwiGLU with a
    learnable beta and biases; blocks x = rms(x); x = x + attn(x);
    x = rms(x); x = x + ff(x); head Linear -> SwiGLU -> Linear;
  * the correct Llama, as Meta's reference code: complex-number RoPE on
    adjacent pairs (view_as_complex, polar), per-token RMSNorm (weight (d,),
    eps 1e-6), heads of d / h with scale 1 / sqrt(d / h), causal mask, FFN
    w2(silu(w1 x) * w3 x), final norm, output Linear without bias.

Two deliberate config changes, the same on both sides (the configs are in
CONFIGS and in each file's "config" metadata):
  * dropout 0 for the article Llama: the article's attention-probability
    dropout (0.1) stays on even in eval mode, so no two implementations can
    agree with it on;
  * fewer layers (article Llama 1, Llama 2; the article has 4) so that the
    files stay small: each stores every weight and every gradient in float32
    (the article Llama has 576,001 parameters per block). The math of each
    block is the same whatever the depth.

PyTorch computes in float64 from the float32 weights; the golden values are
float64 logits and loss, float32 gradients (rounding a float64 gradient to
float32 changes it by less than 1e-7 relative). Layout of each file:
  weight.<name>  stride's initial parameter (float32), under stride's name;
  ids, targets   (4, 16) int64, from torch.manual_seed(0);
  logits         (4, 16, 65) float64;  loss  () float64 (mean cross-entropy);
  grad.<name>    d loss / d parameter (float32), for every parameter.
"__metadata__" holds the config (stride's JSON config format), the torch
version and this command. PyTorch runs on one thread; re-running the script on
the same weights reproduces the files byte for byte.
"""

import argparse
import json
import math
import os
import struct
import sys
from collections import OrderedDict

from gen_goldens import cpu_capability, serialize, write  # sets ATEN_CPU_CAPABILITY

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN_DIR = os.path.join(ROOT, "tests", "golden")
COMMAND = "/usr/bin/python3 tools/gen_llama_goldens.py --weights-dir DIR"
MAX_BYTES = 6_000_000
BATCH = 4

# name -> (weights file in --weights-dir, golden file, stride config). The
# config is stride's JSON config (models/llama/config.h); keys left out take
# stride's defaults: vocab 65, d_model 128, n_heads 8, context 16, norm_eps
# 1e-6, rope_theta 10000, ffn_hidden 0 (8d/3 rounded up to a multiple of 32).
CONFIGS = OrderedDict([
    ("article_llama", ("article_llama.safetensors", "llama_article.safetensors", {
        "name": "golden_article_llama",
        # dropout 0: see the module docstring; n_layers 1 keeps the file small.
        "model": {"arch": "article_llama", "n_layers": 1, "dropout": 0.0},
        "train": {"seed": 0},
    })),
    ("llama", ("llama.safetensors", "llama_correct.safetensors", {
        "name": "golden_llama",
        "model": {"arch": "llama", "n_layers": 2},
        "train": {"seed": 1},
    })),
])

DEFAULTS = {"vocab_size": 65, "d_model": 128, "n_heads": 8, "context": 16, "norm_eps": 1e-6,
            "rope_theta": 10000.0, "multiple_of": 32, "dropout": 0.1}


def model_args(config):
    args = dict(DEFAULTS)
    args.update(config["model"])
    return args


# ---- reading stride's safetensors (no safetensors package needed) ----
ST_DTYPES = {"F32": "<f4", "F64": "<f8", "I64": "<i8", "I32": "<i4"}


def read_safetensors(path):
    """(name, tensor) pairs in the order of their data in the file."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    header.pop("__metadata__", None)
    base = 8 + n
    out = []
    for key, info in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0]):
        begin, end = info["data_offsets"]
        arr = np.frombuffer(blob[base + begin:base + end], dtype=ST_DTYPES[info["dtype"]])
        out.append((key, torch.from_numpy(arr.copy()).reshape(info["shape"])))
    return out


# ---- the article's Llama, in the article's own style ----
def get_rotary_matrix(context_window, embedding_dim):
    # A plain float32 tensor, as in the article (not a parameter or buffer).
    R = torch.zeros((context_window, embedding_dim, embedding_dim), requires_grad=False)
    for position in range(context_window):
        for i in range(embedding_dim // 2):
            theta = 10000. ** (-2. * (i - 1) / embedding_dim)
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
        ff_rms = torch.linalg.norm(x, dim=(1, 2)) * x[0].numel() ** -.5
        raw = x / ff_rms.unsqueeze(-1).unsqueeze(-1)
        return self.scale[:x.shape[1], :].unsqueeze(0) * raw


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
        self.heads = nn.ModuleList([RoPEMaskedAttentionHead(config)
                                    for _ in range(config["n_heads"])])
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
        self.llama_blocks = nn.Sequential(OrderedDict(
            [(f"llama_{i}", LlamaBlock(config)) for i in range(config["n_layers"])]))
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


class FeedForward(nn.Module):
    def __init__(self, dim, hidden_dim, multiple_of):
        super().__init__()
        hidden_dim = int(2 * hidden_dim / 3)
        hidden_dim = multiple_of * ((hidden_dim + multiple_of - 1) // multiple_of)
        self.w1 = nn.Linear(dim, hidden_dim, bias=False)
        self.w2 = nn.Linear(hidden_dim, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden_dim, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class TransformerBlock(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.attention = Attention(args)
        self.feed_forward = FeedForward(args["d_model"], 4 * args["d_model"], args["multiple_of"])
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

    def forward(self, tokens):
        _bsz, seqlen = tokens.shape
        h = self.tok_embeddings(tokens)
        freqs_cis = precompute_freqs_cis(self.args["d_model"] // self.args["n_heads"], seqlen,
                                         self.args["rope_theta"], dtype=h.dtype)
        mask = torch.full((seqlen, seqlen), float("-inf"), dtype=h.dtype).triu(1)
        for layer in self.layers:
            h = layer(h, freqs_cis, mask)
        return self.output(self.norm(h))


# ---- running ----
def expected_params(name, a):
    d, V, L = a["d_model"], a["vocab_size"], a["n_layers"]
    if name == "article_llama":
        swiglu = 2 * (d * d + d) + 1
        block = a["context"] * d + a["n_heads"] * 3 * d * d + (a["n_heads"] * d * d + d) \
            + (d * d + d) + swiglu
        return V * d + L * block + (d * d + d) + swiglu + (d * V + V)
    m = a["multiple_of"]
    hidden = m * ((int(2 * 4 * d / 3) + m - 1) // m)  # Meta's rule: d 128 -> 352
    return V * d + L * (4 * d * d + 3 * d * hidden + 2 * d) + d + V * d


def fixed_inputs(vocab, context):
    torch.manual_seed(0)
    ids = torch.randint(0, vocab, (BATCH, context), dtype=torch.int64)
    targets = torch.randint(0, vocab, (BATCH, context), dtype=torch.int64)
    return ids, targets


def run(model, weights, ids, targets, dtype):
    model.load_state_dict(OrderedDict(weights), strict=True)  # every key, every shape
    model.to(dtype).eval()
    model.zero_grad(set_to_none=True)
    logits = model(ids)
    loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
    loss.backward()
    grads = dict((n, p.grad) for n, p in model.named_parameters())
    return logits.detach(), loss.detach(), grads


def rel_err(got, want):
    """max |got - want| / max |want|, in float64."""
    got, want = got.double(), want.double()
    return ((got - want).abs().max() / want.abs().max()).item()


def build_golden(name, weights_dir):
    weights_file, golden_file, config = CONFIGS[name]
    args = model_args(config)
    weights = read_safetensors(os.path.join(weights_dir, weights_file))
    for key, t in weights:
        assert t.dtype == torch.float32, (key, t.dtype)
    make = ArticleLlama if name == "article_llama" else Transformer
    model = make(args)
    names = [n for n, _ in model.named_parameters()]
    assert sorted(names) == sorted(k for k, _ in weights), \
        f"{name}: stride's state_dict keys differ from the PyTorch model's parameters"
    n_params = sum(t.numel() for _, t in weights)
    assert n_params == expected_params(name, args), (name, n_params)
    ids, targets = fixed_inputs(args["vocab_size"], args["context"])

    logits, loss, grads = run(model, weights, ids, targets, torch.float64)
    # What float32 can reach: the same PyTorch model in float32, against float64.
    logits32, loss32, grads32 = run(make(args), weights, ids, targets, torch.float32)
    worst = max((rel_err(grads32[k], grads[k]), k) for k, _ in weights)
    print(f"{name}: {n_params} params, loss {loss.item():.6f}; torch float32 vs float64: "
          f"logits {rel_err(logits32, logits):.2e}, loss {rel_err(loss32, loss):.2e}, "
          f"worst grad {worst[0]:.2e} ({worst[1]})")

    entries = [(f"weight.{k}", t) for k, t in weights]
    entries += [("ids", ids), ("targets", targets), ("logits", logits), ("loss", loss)]
    entries += [(f"grad.{k}", grads[k].float()) for k, _ in weights]
    blob = serialize(entries, {
        "generator": COMMAND,
        "torch_version": torch.__version__,
        "numpy_version": np.__version__,
        "cpu_capability": cpu_capability(),
        "config": json.dumps(config, sort_keys=True),
        "layout": "weight.NAME stride's initial parameters (f32); ids, targets (B, T); "
                  "logits (B, T, V) and loss computed in float64; grad.NAME d loss / d NAME (f32)",
    })
    write(os.path.join(GOLDEN_DIR, golden_file), blob, MAX_BYTES, "gen_llama_goldens.py",
          len(weights))


def main():
    if sys.byteorder != "little":
        sys.exit("gen_llama_goldens.py: run on a little-endian machine")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--weights-dir", help="holds article_llama.safetensors and "
                       "llama.safetensors, stride's initial state_dicts")
    group.add_argument("--write-configs", metavar="DIR",
                       help="write the two stride configs (article_llama.json, llama.json)")
    opts = parser.parse_args()
    if opts.write_configs:
        os.makedirs(opts.write_configs, exist_ok=True)
        for name, (_, _, config) in CONFIGS.items():
            path = os.path.join(opts.write_configs, name + ".json")
            with open(path, "w") as f:
                json.dump(config, f, indent=2, sort_keys=True)
                f.write("\n")
            print(f"wrote {path}")
        return
    torch.set_num_threads(1)  # one summation order, whatever the machine
    for name in CONFIGS:
        build_golden(name, opts.weights_dir)


if __name__ == "__main__":
    main()
