#!/usr/bin/env python3
"""PyTorch's side of bench/compare_pytorch: the workloads of bench/llama_bench.cpp.

    build-torch-venv/bin/python bench/pytorch_llama.py --workload correct --threads 2 \
        --warmup 2 --reps 5
    /usr/bin/python3 bench/pytorch_llama.py --workload article --threads 1   # Debian's torch 1.13

Same CLI and the same one-line JSON output as llama_bench. Workloads:
  article   the article's Llama (2,370,246 params), B 32 x T 16, Adam(lr 1e-3,
            defaults), ms per training step. Written as the article's code
            runs it: 8 per-head modules, each rotating q and k with the dense
            (T, d, d) matrix R through bmm, F.scaled_dot_product_attention with
            dropout_p 0.1 (torch >= 2; on 1.13, which has no SDPA, the same
            math written out), SwiGLU calling linear_gate twice, Dropout(0.1)
            after the projection. --article-form fused instead batches the
            heads into one matmul and rotates pairs in O(T d), as stride does
            (same numbers, less work).
  correct   the correct Llama at the article's size (820,608 params), B 32 x
            T 16, AdamW(1e-3, betas (0.9, 0.95), weight decay 0.1 on matrices
            only, as stride's make_optimizer), ms per step
  large     the correct Llama d 384, 6 layers, 6 heads, T 256, hidden 1024
            (10,671,744 params), B 16, AdamW as above, ms per step
  gpt       the lesson's tiny GPT (configs/tiny-gpt.json's model, nanoGPT's
            shakespeare_char shapes: GPT-2 blocks, d 384, 6 layers, 6 heads,
            T 256, vocab 65, dropout 0.2 in attention and after each
            projection, tied head; 10,770,816 params), B 16, AdamW(1e-3,
            betas (0.9, 0.99), weight decay 0.1 on matrices), ms per step.
            Written as nanoGPT's model.py (one c_attn projection, SDPA,
            GELU's tanh form).
  generate  the `large` model, batch 1, greedy decoding of --tokens new tokens
            (256) from a one-token prompt with a preallocated KV cache, written
            as a plain eager loop (Meta's reference style): tokens/s
  sgemm     torch.mm of two (n, n) float32 matrices, n = --n (1024): GFLOP/s

The correct Llama follows Meta's reference model (as tools/torch_llama.py
does, from which the architecture is taken) except that RoPE is written with
real cos/sin tables instead of view_as_complex (same numbers; torch.compile
handles it) and attention uses F.scaled_dot_product_attention where it exists.
One training step = zero_grad(set_to_none=True), forward, cross-entropy,
backward, optimizer.step(), loss.item(). Token ids are the splitmix64 stream
llama_bench.cpp also draws. Thread counts: OMP_NUM_THREADS, MKL_NUM_THREADS and
OPENBLAS_NUM_THREADS are set to --threads before torch is imported, then
torch.set_num_threads(--threads). --compile wraps the model in torch.compile
(torch >= 2); its first calls compile, so at least 2 warm-up reps run and the
first call's time is reported as first_call_ms. --autocast runs the forward
passes (and the loss) under torch.autocast("cpu", dtype=torch.bfloat16), the
backward outside it, as PyTorch's AMP recipe does; stride's llama_bench
--autocast does the same with stride::AutocastGuard.
"""

import json
import math
import os
import resource
import statistics
import sys

from llama_workloads import correct_config, parser, time_reps, token_stream

WORKLOADS = ("article", "correct", "large", "gpt", "generate", "sgemm")


def parse_args():
    p = parser(__doc__, WORKLOADS)
    p.add_argument("--tokens", type=int, default=256, help="generate: new tokens (default 256)")
    p.add_argument("--n", type=int, default=1024, help="sgemm: matrix size (default 1024)")
    p.add_argument("--compile", action="store_true", help="torch.compile the model (torch >= 2)")
    p.add_argument(
        "--autocast",
        action="store_true",
        help="forward passes under torch.autocast('cpu', dtype=torch.bfloat16)",
    )
    p.add_argument(
        "--article-form",
        choices=("article", "fused"),
        default="article",
        help="article: the article's per-head dense-R code (default); fused: heads in one "
        "matmul, pairwise RoPE",
    )
    a = p.parse_args()
    if a.threads < 1 or a.warmup < 0 or a.reps < 1 or a.tokens < 1 or a.n < 1:
        p.error("expected --threads >= 1, --warmup >= 0, --reps >= 1, --tokens >= 1, --n >= 1")
    return a


ARGS = parse_args()
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = str(ARGS.threads)

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

HAS_SDPA = hasattr(F, "scaled_dot_product_attention")
IMPORT_RSS_KB = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # torch's own share of the peak


def attention(q, k, v, dropout_p, is_causal):
    """softmax(q k^T / sqrt(dk) + mask) v with dropout on the probabilities: SDPA's math."""
    if HAS_SDPA:
        return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, is_causal=is_causal)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if is_causal:
        L, S = q.size(-2), k.size(-2)
        scores = scores + torch.full((L, S), float("-inf"), dtype=q.dtype).triu(1)
    probs = torch.softmax(scores, dim=-1)
    if dropout_p > 0:
        probs = F.dropout(probs, dropout_p, training=True)
    return probs @ v


# ---- the article's Llama, as the article's code runs it ----
ARTICLE = dict(vocab_size=65, d_model=128, context=16, n_heads=8, n_layers=4, dropout=0.1)


def get_rotary_matrix(context_window, embedding_dim):
    """The article's dense R (context, d, d), built without its Python loop (same values)."""
    i = torch.arange(embedding_dim // 2, dtype=torch.float64)
    theta = 10000.0 ** (-2.0 * (i - 1) / embedding_dim)  # the article's (i - 1)
    angle = torch.arange(context_window, dtype=torch.float64)[:, None] * theta  # (cw, d/2)
    cos, sin = torch.cos(angle).float(), torch.sin(angle).float()
    R = torch.zeros(context_window, embedding_dim, embedding_dim)
    even, odd = 2 * torch.arange(embedding_dim // 2), 2 * torch.arange(embedding_dim // 2) + 1
    R[:, even, even] = cos
    R[:, even, odd] = -sin
    R[:, odd, even] = sin
    R[:, odd, odd] = cos
    return R


class ArticleRMSNorm(nn.Module):
    def __init__(self, layer_shape):
        super().__init__()
        self.register_parameter("scale", nn.Parameter(torch.ones(layer_shape)))

    def forward(self, x):
        ff_rms = torch.linalg.norm(x, dim=(1, 2)) * x[0].numel() ** -0.5
        raw = x / ff_rms.unsqueeze(-1).unsqueeze(-1)
        return self.scale[: x.shape[1], :].unsqueeze(0) * raw


class RoPEMaskedAttentionHead(nn.Module):
    def __init__(self, config):
        super().__init__()
        d = config["d_model"]
        self.w_q = nn.Linear(d, d, bias=False)
        self.w_k = nn.Linear(d, d, bias=False)
        self.w_v = nn.Linear(d, d, bias=False)
        self.R = get_rotary_matrix(config["context"], d)  # one per head, a plain attribute

    def forward(self, x):
        m = x.shape[1]
        q, k, v = self.w_q(x), self.w_k(x), self.w_v(x)
        q_rotated = torch.bmm(q.transpose(0, 1), self.R[:m]).transpose(0, 1)
        k_rotated = torch.bmm(k.transpose(0, 1), self.R[:m]).transpose(0, 1)
        return attention(q_rotated, k_rotated, v, dropout_p=0.1, is_causal=True)


class RoPEMaskedMultiheadAttention(nn.Module):
    def __init__(self, config, fused):
        super().__init__()
        self.fused = fused
        self.heads = nn.ModuleList(
            [RoPEMaskedAttentionHead(config) for _ in range(config["n_heads"])]
        )
        self.linear = nn.Linear(config["n_heads"] * config["d_model"], config["d_model"])
        self.dropout = nn.Dropout(config["dropout"])
        d, half = config["d_model"], config["d_model"] // 2
        angle = torch.arange(config["context"], dtype=torch.float64)[:, None] * 10000.0 ** (
            -2.0 * (torch.arange(half, dtype=torch.float64) - 1) / d
        )
        self.register_buffer("cos", torch.cos(angle).float(), persistent=False)
        self.register_buffer("sin", torch.sin(angle).float(), persistent=False)

    def rotate(self, x):
        # x . R[p] on pairs: (a, b) -> (a cos + b sin, b cos - a sin).
        T = x.size(-2)
        a, b = x.unflatten(-1, (-1, 2)).unbind(-1)
        c, s = self.cos[:T], self.sin[:T]
        return torch.stack((a * c + b * s, b * c - a * s), -1).flatten(-2)

    def forward(self, x):
        if not self.fused:
            x = torch.cat([h(x) for h in self.heads], dim=-1)
        else:
            B, T, d = x.shape
            H = len(self.heads)

            def project(name):
                w = torch.cat([getattr(h, name).weight for h in self.heads], 0)
                return F.linear(x, w).view(B, T, H, d).transpose(1, 2)

            y = attention(
                self.rotate(project("w_q")),
                self.rotate(project("w_k")),
                project("w_v"),
                dropout_p=0.1,
                is_causal=True,
            )
            x = y.transpose(1, 2).reshape(B, T, H * d)
        return self.dropout(self.linear(x))


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
    def __init__(self, config, fused):
        super().__init__()
        self.rms = ArticleRMSNorm((config["context"], config["d_model"]))
        self.attention = RoPEMaskedMultiheadAttention(config, fused)
        self.feedforward = nn.Sequential(
            nn.Linear(config["d_model"], config["d_model"]), SwiGLU(config["d_model"])
        )

    def forward(self, x):
        x = self.rms(x)
        x = x + self.attention(x)
        x = self.rms(x)
        x = x + self.feedforward(x)
        return x


class ArticleLlama(nn.Module):
    def __init__(self, config, fused=False):
        super().__init__()
        self.config = config
        self.embeddings = nn.Embedding(config["vocab_size"], config["d_model"])
        self.llama_blocks = nn.Sequential(
            *[LlamaBlock(config, fused) for _ in range(config["n_layers"])]
        )
        self.ffn = nn.Sequential(
            nn.Linear(config["d_model"], config["d_model"]),
            SwiGLU(config["d_model"]),
            nn.Linear(config["d_model"], config["vocab_size"]),
        )

    def forward(self, idx):
        return self.ffn(self.llama_blocks(self.embeddings(idx)))


# ---- the correct Llama, after Meta's reference model ----
class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def apply_rotary_emb(x, cos, sin):
    # x (B, T, H, Dh); adjacent pairs times e^{+i p theta_j}; cos, sin (T, Dh/2).
    a, b = x.unflatten(-1, (-1, 2)).unbind(-1)
    c, s = cos[:, None, :], sin[:, None, :]
    return torch.stack((a * c - b * s, a * s + b * c), -1).flatten(-2)


class Attention(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.n_heads = args["n_heads"]
        self.head_dim = args["d_model"] // args["n_heads"]
        d = args["d_model"]
        self.wq = nn.Linear(d, d, bias=False)
        self.wk = nn.Linear(d, d, bias=False)
        self.wv = nn.Linear(d, d, bias=False)
        self.wo = nn.Linear(d, d, bias=False)

    def forward(self, x, cos, sin, cache=None, pos=0):
        B, T, _ = x.shape
        q = self.wq(x).view(B, T, self.n_heads, self.head_dim)
        k = self.wk(x).view(B, T, self.n_heads, self.head_dim)
        v = self.wv(x).view(B, T, self.n_heads, self.head_dim)
        q, k = apply_rotary_emb(q, cos, sin), apply_rotary_emb(k, cos, sin)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)  # (B, H, T, Dh)
        if cache is not None:
            cache_k, cache_v = cache
            cache_k[:, :, pos : pos + T] = k
            cache_v[:, :, pos : pos + T] = v
            k, v = cache_k[:, :, : pos + T], cache_v[:, :, : pos + T]
        # One new token attends to every cached one; a prompt from position 0 is causal.
        assert cache is None or T == 1 or pos == 0, "prefill after position 0 is not needed here"
        y = attention(q, k, v, dropout_p=0.0, is_causal=T > 1)
        return self.wo(y.transpose(1, 2).reshape(B, T, -1))


class FeedForward(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class TransformerBlock(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.attention = Attention(args)
        self.feed_forward = FeedForward(args["d_model"], args["hidden"])
        self.attention_norm = RMSNorm(args["d_model"], args["norm_eps"])
        self.ffn_norm = RMSNorm(args["d_model"], args["norm_eps"])

    def forward(self, x, cos, sin, cache=None, pos=0):
        h = x + self.attention(self.attention_norm(x), cos, sin, cache, pos)
        return h + self.feed_forward(self.ffn_norm(h))


class Transformer(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.args = args
        self.tok_embeddings = nn.Embedding(args["vocab_size"], args["d_model"])
        self.layers = nn.ModuleList([TransformerBlock(args) for _ in range(args["n_layers"])])
        self.norm = RMSNorm(args["d_model"], args["norm_eps"])
        self.output = nn.Linear(args["d_model"], args["vocab_size"], bias=False)
        dh = args["d_model"] // args["n_heads"]
        freqs = 1.0 / (args["rope_theta"] ** (torch.arange(0, dh, 2, dtype=torch.float64) / dh))
        angle = torch.outer(torch.arange(args["context"], dtype=torch.float64), freqs)
        self.register_buffer("cos", torch.cos(angle).float(), persistent=False)
        self.register_buffer("sin", torch.sin(angle).float(), persistent=False)

    def forward(self, tokens, caches=None, pos=0):
        T = tokens.shape[1]
        h = self.tok_embeddings(tokens)
        cos, sin = self.cos[pos : pos + T], self.sin[pos : pos + T]
        for i, layer in enumerate(self.layers):
            h = layer(h, cos, sin, None if caches is None else caches[i], pos)
        return self.output(self.norm(h))


# ---- the tiny GPT (nanoGPT's model.py) ----
class GPTBlock(nn.Module):
    def __init__(self, d, n_heads, dropout):
        super().__init__()
        self.n_heads, self.dropout = n_heads, dropout
        self.ln_1 = nn.LayerNorm(d, eps=1e-5)
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.ln_2 = nn.LayerNorm(d, eps=1e-5)
        self.c_fc = nn.Linear(d, 4 * d)
        self.mlp_proj = nn.Linear(4 * d, d)
        self.resid_dropout = nn.Dropout(dropout)
        self.mlp_dropout = nn.Dropout(dropout)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_heads, C // self.n_heads).transpose(1, 2) for t in (q, k, v))
        y = attention(q, k, v, self.dropout if self.training else 0.0, True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        x = x + self.resid_dropout(self.c_proj(y))
        h = F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh")
        return x + self.mlp_dropout(self.mlp_proj(h))


class GPT(nn.Module):
    def __init__(self, vocab, d, n_layers, n_heads, context, dropout):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(context, d)
        self.drop = nn.Dropout(dropout)
        self.h = nn.ModuleList(GPTBlock(d, n_heads, dropout) for _ in range(n_layers))
        self.ln_f = nn.LayerNorm(d, eps=1e-5)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.wte.weight

    def forward(self, idx):
        positions = torch.arange(idx.size(1), device=idx.device)
        x = self.drop(self.wte(idx) + self.wpe(positions))
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


# ---- running ----
def build(workload):
    """(model, config, batch, optimizer factory)."""
    if workload == "article":
        model = ArticleLlama(ARTICLE, fused=ARGS.article_form == "fused")
        return model, ARTICLE, 32, lambda m: torch.optim.Adam(m.parameters(), lr=1e-3)
    if workload == "correct":
        cfg, batch = correct_config(128, 4, 8, 16), 32
    else:
        cfg, batch = correct_config(384, 6, 6, 256), 16

    def adamw(m, beta2=0.95):
        # As stride's make_optimizer: only matrices (dim >= 2) decay.
        params = [p for p in m.parameters() if p.requires_grad]
        groups = [
            {"params": [p for p in params if p.dim() >= 2], "weight_decay": 0.1},
            {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
        ]
        return torch.optim.AdamW(groups, lr=1e-3, betas=(0.9, beta2))

    if workload == "gpt":
        cfg = {"vocab_size": 65, "d_model": 384, "n_layers": 6, "n_heads": 6, "context": 256}
        model = GPT(65, 384, 6, 6, 256, 0.2)
        return model, cfg, 16, lambda m: adamw(m, beta2=0.99)
    return Transformer(cfg), cfg, batch, adamw


def autocast():
    """bfloat16 autocast when --autocast (the training idiom: forward and loss inside)."""
    return torch.autocast("cpu", dtype=torch.bfloat16, enabled=ARGS.autocast)


def main():
    torch.set_num_threads(ARGS.threads)
    torch.manual_seed(0)
    if ARGS.compile and not hasattr(torch, "compile"):
        sys.exit(f"pytorch_llama.py: --compile needs torch >= 2; this is {torch.__version__}")
    warmup = max(ARGS.warmup, 2) if ARGS.compile else ARGS.warmup
    extra = {}
    if ARGS.workload == "sgemm":
        n = ARGS.n
        a, b = torch.randn(n, n), torch.randn(n, n)
        out = [None]

        def fn():
            out[0] = torch.mm(a, b)

        times, first = time_reps(fn, warmup, ARGS.reps)
        unit, values = "GFLOP/s", [2.0 * n**3 / (t * 1e6) for t in times]
        extra["n"] = n
    else:
        model, cfg, batch, make_opt = build(ARGS.workload)
        named = dict(model.named_parameters())
        extra["params"] = sum(p.numel() for p in named.values())
        extra["params_embedding"] = sum(p.numel() for k, p in named.items() if "embedding" in k)
        if ARGS.workload == "article":
            extra["article_form"] = ARGS.article_form
        run = torch.compile(model) if ARGS.compile else model
        if ARGS.workload == "generate":
            model.eval()
            H, dh = cfg["n_heads"], cfg["d_model"] // cfg["n_heads"]
            prompt = token_stream(3, 1, cfg["vocab_size"])[0]
            last = [None]

            def fn():
                with torch.no_grad(), autocast():
                    caches = [
                        (
                            torch.zeros(1, H, cfg["context"], dh),
                            torch.zeros(1, H, cfg["context"], dh),
                        )
                        for _ in range(cfg["n_layers"])
                    ]
                    nxt = prompt
                    for pos in range(ARGS.tokens):
                        logits = run(torch.tensor([[nxt]]), caches, pos)
                        nxt = int(logits[0, -1].argmax())
                    last[0] = nxt

            if ARGS.tokens > cfg["context"]:
                sys.exit(f"pytorch_llama.py: --tokens must be <= the context ({cfg['context']})")
            times, first = time_reps(fn, warmup, ARGS.reps)
            unit, values = "tok/s", [ARGS.tokens / (t * 1e-3) for t in times]
            extra.update(new_tokens=ARGS.tokens, last_token=last[0])
        else:
            T, V = cfg["context"], cfg["vocab_size"]
            x = torch.tensor(token_stream(1, batch * T, V)).view(batch, T)
            y = torch.tensor(token_stream(2, batch * T, V)).view(batch, T)
            opt = make_opt(model)
            model.train()
            loss = [None]

            def fn():
                opt.zero_grad(set_to_none=True)
                with autocast():
                    logits = run(x)
                    batch_loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
                batch_loss.backward()
                opt.step()
                loss[0] = batch_loss.item()

            times, first = time_reps(fn, warmup, ARGS.reps)
            unit, values = "ms", times
            extra.update(batch=batch, context=T, tokens_per_step=batch * T, final_loss=loss[0])
    if ARGS.compile:
        extra["first_call_ms"] = first
    line = {
        "system": "pytorch",
        "version": torch.__version__,
        "mode": ("compile" if ARGS.compile else "eager")
        + (", bf16 autocast" if ARGS.autocast else ""),
        "workload": ARGS.workload,
        "threads": ARGS.threads,
        "torch_threads": torch.get_num_threads(),
        "warmup": warmup,
        "reps": ARGS.reps,
        "unit": unit,
        "median": statistics.median(values),
        "values": values,
        "times_ms": times,
        "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "maxrss_after_import_kb": IMPORT_RSS_KB,
        "sdpa": HAS_SDPA,
    }
    line.update(extra)
    print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
