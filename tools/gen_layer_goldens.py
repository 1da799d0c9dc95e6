#!/usr/bin/python3
"""Generates tests/golden/nn_layers.safetensors: PyTorch's nn layers run on
fixed weights and inputs, for tests/nn/layers_golden_test.cpp to recompute
with stride's layers.

Run with Debian's python3-torch (the pyenv `python3` has no torch):

    /usr/bin/python3 tools/gen_layer_goldens.py

Layout of the file, for a case NAME:
  NAME/state/<key>   the module's state_dict before the call, under PyTorch's
                     own names: the C++ test loads it with load_state_dict
                     (strict), so the names are checked too;
  NAME/in/x          the input; NAME/in/r a fixed weighting: loss = sum(y * r);
  NAME/out/y         PyTorch's output;
  NAME/grad/x        d loss / d x (float inputs only);
  NAME/grad/<key>    d loss / d parameter, for each parameter;
  NAME/after/<key>   the buffers after the call (BatchNorm's running stats).
"__metadata__" also holds, as JSON lists, the names PyTorch gives a nested
model's parameters, buffers, state_dict and modules ("names/..."), which the
C++ tests compare with stride's for the same structure.

Every case seeds PyTorch with a hash of its name, so adding a case leaves the
others unchanged; PyTorch runs on one thread; re-running the script
reproduces the file byte for byte. The safetensors writing is shared with
tools/gen_goldens.py.
"""

import json
import os
import sys
import zlib

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from gen_goldens import cpu_capability, serialize, write  # sets ATEN_CPU_CAPABILITY

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_PATH = os.path.join(ROOT, "tests", "golden", "nn_layers.safetensors")
COMMAND = "/usr/bin/python3 tools/gen_layer_goldens.py"
MAX_BYTES = 200_000

CASES = []  # (name, builder); builder() -> (module, x, calls)


def case(name):
    assert name.replace("_", "").isalnum() and name.islower(), name
    assert all(n != name for n, _ in CASES), f"duplicate case {name}"

    def register(builder):
        CASES.append((name, builder))
        return builder

    return register


def randomize_(module):
    """Replaces ones/zeros initialisations by random values, so that every
    weight's role is visible in the output."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            p.copy_(torch.randn_like(p) * 0.5 + (1.0 if name.endswith("weight") else 0.0))


class RMSNormRef(nn.Module):
    """torch 1.13 has no nn.RMSNorm: the same computation, per token over the
    last dim."""

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


# ---- cases: builder() -> (module, x, train) ----


@case("linear")
def _():
    return nn.Linear(6, 5), torch.randn(4, 6), True


@case("linear_3d_input")
def _():
    return nn.Linear(6, 3), torch.randn(2, 3, 6), True


@case("linear_no_bias")
def _():
    return nn.Linear(7, 4, bias=False), torch.randn(3, 7), True


@case("embedding")
def _():
    ids = torch.tensor([[1, 3, 3, 9], [0, 9, 2, 1]])
    return nn.Embedding(10, 4), ids, True


@case("rmsnorm")
def _():
    m = RMSNormRef(8)
    randomize_(m)
    return m, torch.randn(2, 3, 8) * 2.0, True


@case("layernorm")
def _():
    m = nn.LayerNorm(8)
    randomize_(m)
    return m, torch.randn(3, 4, 8) * 1.5 + 0.3, True


@case("layernorm_2d_shape")
def _():
    m = nn.LayerNorm([4, 8], eps=1e-3)
    randomize_(m)
    return m, torch.randn(3, 4, 8), True


@case("batchnorm_train_2d")
def _():
    m = nn.BatchNorm1d(5)
    randomize_(m)
    m.running_mean.copy_(torch.randn(5) * 0.3)
    m.running_var.copy_(torch.rand(5) + 0.5)
    return m, torch.randn(8, 5) * 2.0 + 1.0, True


@case("batchnorm_train_3d")
def _():
    m = nn.BatchNorm1d(4, momentum=0.3)
    randomize_(m)
    return m, torch.randn(3, 4, 6) * 1.5 - 0.5, True


@case("batchnorm_eval_3d")
def _():
    m = nn.BatchNorm1d(4)
    randomize_(m)
    m.running_mean.copy_(torch.randn(4) * 0.3)
    m.running_var.copy_(torch.rand(4) + 0.5)
    m.num_batches_tracked.fill_(7)
    return m, torch.randn(3, 4, 6), False


@case("batchnorm_cumulative")
def _():
    m = nn.BatchNorm1d(3, momentum=None)
    randomize_(m)
    m.num_batches_tracked.fill_(3)
    m.running_mean.copy_(torch.randn(3))
    return m, torch.randn(6, 3), True


@case("mlp")
def _():
    m = nn.Sequential(
        nn.Linear(6, 16),
        nn.ReLU(),
        nn.Linear(16, 12),
        nn.GELU(),
        nn.Linear(12, 8),
        nn.SiLU(),
        nn.Linear(8, 4),
    )
    return m, torch.randn(5, 6), True


# ---- the nested model whose names the C++ tests compare ----


class Attention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, dim, bias=False)
        self.wv = nn.Linear(dim, dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.attn_norm = nn.LayerNorm(dim)
        self.attn = Attention(dim)
        self.ffn = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.bn = nn.BatchNorm1d(dim)
        self.drop = nn.Dropout(0.1)


class Model(nn.Module):
    def __init__(self, vocab=20, dim=8, layers=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList([Block(dim) for _ in range(layers)])
        self.heads = nn.ModuleDict(
            {"lm": nn.Linear(dim, vocab, bias=False), "cls": nn.Linear(dim, 3)}
        )
        # Registered after the children, listed before them.
        self.scale = nn.Parameter(torch.ones(1))
        self.register_buffer("mask", torch.ones(4, 4), persistent=False)
        self.register_buffer("pos", torch.zeros(4, dim))
        # Weight tying: one tensor, two names.
        self.heads["lm"].weight = self.tok.weight


def nested_names():
    m = Model()
    return {
        "names/parameters": [n for n, _ in m.named_parameters()],
        "names/buffers": [n for n, _ in m.named_buffers()],
        "names/state_dict": list(m.state_dict().keys()),
        "names/modules": [n for n, _ in m.named_modules()],
        "names/num_parameters": [str(sum(p.numel() for p in m.parameters()))],
    }


def run_case(name, builder):
    torch.manual_seed(zlib.crc32(name.encode()))
    module, x, train = builder()
    module.train(train)
    entries = [(f"{name}/state/{k}", v.clone()) for k, v in module.state_dict().items()]
    x = x.clone()
    if x.is_floating_point():
        x.requires_grad_()
    y = module(x)
    r = torch.randn(y.shape)
    (y * r).sum().backward()
    entries.append((f"{name}/in/x", x.detach()))
    entries.append((f"{name}/in/r", r))
    entries.append((f"{name}/out/y", y.detach()))
    if x.is_floating_point():
        entries.append((f"{name}/grad/x", x.grad))
    for k, p in module.named_parameters():
        entries.append((f"{name}/grad/{k}", p.grad))
    for k, b in module.named_buffers():
        entries.append((f"{name}/after/{k}", b.clone()))
    return entries


def build():
    torch.set_num_threads(1)  # one summation order, whatever the machine
    entries = []
    for name, builder in CASES:
        entries += run_case(name, builder)
    metadata = {
        "generator": COMMAND,
        "torch_version": torch.__version__,
        "cpu_capability": cpu_capability(),
        "cases": str(len(CASES)),
        "layout": "CASE/state/KEY, CASE/in/{x,r}, CASE/out/y, CASE/grad/{x,KEY}, CASE/after/KEY",
    }
    for key, names in nested_names().items():
        metadata[key] = json.dumps(names)
    return serialize(entries, metadata)


def main():
    if sys.byteorder != "little":
        sys.exit("gen_layer_goldens.py: run on a little-endian machine")
    write(OUT_PATH, build(), MAX_BYTES, "gen_layer_goldens.py", len(CASES))


if __name__ == "__main__":
    main()
