#!/usr/bin/python3
"""Generates tests/golden/autograd.safetensors: composite expressions whose
loss and input gradients tests/autograd/golden_test.cpp recomputes with
stride's autograd.

    /usr/bin/python3 tools/gen_autograd_goldens.py

For a case NAME: NAME/in0.. are the inputs (the float ones get gradients),
NAME/loss the scalar loss, NAME/grad0.. the gradient of each float input.
The safetensors writing is shared with tools/gen_goldens.py.
"""

import os
import zlib

import torch
import torch.nn.functional as F
from gen_goldens import cpu_capability, serialize, write

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_PATH = os.path.join(ROOT, "tests", "golden", "autograd.safetensors")
f32, f64, i64 = torch.float32, torch.float64, torch.int64
CASES = []


def case(name):
    def register(fn):
        CASES.append((name, fn))
        return fn

    return register


def randn(g, *shape, dtype=f32):
    return torch.randn(*shape, generator=g, dtype=dtype)


@case("mlp_cross_entropy_f32")
def _(g):
    x, w1, b1 = randn(g, 8, 6), randn(g, 6, 16) * 0.5, randn(g, 16)
    w2, b2 = randn(g, 16, 5) * 0.5, randn(g, 5)
    t = torch.randint(0, 5, (8,), generator=g)

    def loss(x, w1, b1, w2, b2):
        h = torch.tanh(x @ w1 + b1)
        logits = h @ w2 + b2
        return -torch.log_softmax(logits, 1).gather(1, t.unsqueeze(1)).mean()

    return [x, w1, b1, w2, b2, t], loss


@case("mlp_gelu_relu_f64")
def _(g):
    x, w1, w2 = randn(g, 4, 6, dtype=f64), randn(g, 6, 8, dtype=f64), randn(g, 8, 3, dtype=f64)
    t = torch.randint(0, 3, (4,), generator=g)

    def loss(x, w1, w2):
        h = F.gelu(x @ w1) + torch.relu(x @ w1) * 0.5
        return -torch.log_softmax(h @ w2, 1).gather(1, t.unsqueeze(1)).sum()

    return [x, w1, w2, t], loss


@case("causal_attention_f32")
def _(g):
    B, T, C = 2, 5, 8
    x = randn(g, B, T, C)
    wq, wk, wv, wo = (randn(g, C, C) * 0.3 for _ in range(4))
    r = randn(g, B, T, C)

    def loss(x, wq, wk, wv, wo, r):
        q, k, v = x @ wq, x @ wk, x @ wv
        scores = q @ k.transpose(1, 2) / C**0.5
        mask = torch.ones(T, T, dtype=torch.bool).tril()
        scores = scores.masked_fill(~mask, float("-inf"))
        out = torch.softmax(scores, -1) @ v @ wo
        return (out * r).sum()

    return [x, wq, wk, wv, wo, r], loss


@case("multihead_views_f64")
def _(g):
    B, T, H, D = 2, 4, 2, 3
    x = randn(g, B, T, H * D, dtype=f64)
    w = randn(g, H * D, 3 * H * D, dtype=f64) * 0.4

    def loss(x, w):
        q, k, v = (x @ w).chunk(3, -1)
        q = q.reshape(B, T, H, D).transpose(1, 2)
        k = k.reshape(B, T, H, D).transpose(1, 2)
        v = v.reshape(B, T, H, D).transpose(1, 2)
        p = torch.softmax(q @ k.transpose(-2, -1) * D**-0.5, -1)
        y = (p @ v).transpose(1, 2).reshape(B, T, H * D)
        return (y.pow(2).sum(-1).sqrt() + y.logsumexp(-1)).mean()

    return [x, w], loss


@case("broadcast_reductions_f32")
def _(g):
    a, b, c = randn(g, 3, 1, 4), randn(g, 5, 1), randn(g, 4)

    def loss(a, b, c):
        y = (a * b - c).pow(2)
        return y.mean(1).amax(0).sum() + y.var(2).sum() + torch.maximum(a, c).sum()

    return [a, b, c], loss


@case("indexing_cat_f32")
def _(g):
    emb, w = randn(g, 7, 4), randn(g, 4, 4)
    ids = torch.tensor([[1, 3, 3], [6, 0, 1]])

    def loss(emb, w):
        e = F.embedding(ids, emb)
        z = torch.cat([e, e[:, ::2] @ w], 1)
        picked = z.index_select(2, torch.tensor([3, 0])).gather(
            1, torch.tensor([[[0, 1]], [[4, 2]]])
        )
        return picked.sum() + z.clamp(-0.5, 0.5).square().sum()

    return [emb, w, ids], loss


def build():
    torch.set_num_threads(1)
    entries = []
    for name, builder in CASES:
        g = torch.Generator().manual_seed(zlib.crc32(name.encode()))
        inputs, loss_fn = builder(g)
        leaves = [t.clone().requires_grad_() for t in inputs if t.is_floating_point()]
        loss = loss_fn(*leaves)
        loss.backward()
        for i, t in enumerate(inputs):
            entries.append((f"{name}/in{i}", t))
        entries.append((f"{name}/loss", loss.detach()))
        for i, leaf in enumerate(leaves):
            entries.append((f"{name}/grad{i}", leaf.grad))
    return serialize(
        entries,
        {
            "generator": "/usr/bin/python3 tools/gen_autograd_goldens.py",
            "torch_version": torch.__version__,
            "cpu_capability": cpu_capability(),
            "cases": str(len(CASES)),
        },
    )


if __name__ == "__main__":
    write(OUT_PATH, build(), 1_000_000, "gen_autograd_goldens.py", len(CASES))
