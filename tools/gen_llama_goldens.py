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
`stride::manual_seed(seed); auto m = stride::lm::build_model(cfg);
stride::io::save_safetensors(path, m->state_dict().items());` with seed 0
(article Llama) and 1 (Llama). Which stride-initialised weights are used does
not matter to the test: the golden files carry them.

The two models are those of tools/torch_llama.py.

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
import os
import struct
import sys
from collections import OrderedDict

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from gen_goldens import cpu_capability, serialize, write  # sets ATEN_CPU_CAPABILITY
from torch_llama import ArticleLlama, Transformer, model_args  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN_DIR = os.path.join(ROOT, "tests", "golden")
COMMAND = "/usr/bin/python3 tools/gen_llama_goldens.py --weights-dir DIR"
MAX_BYTES = 6_000_000
BATCH = 4

# name -> (weights file in --weights-dir, golden file, stride config). The
# config is stride's JSON config (models/lm/config.h); keys left out take
# stride's defaults: vocab 65, d_model 128, n_heads 8, context 16, norm_eps
# 1e-6, rope_theta 10000, ffn_hidden 0 (8d/3 rounded up to a multiple of 32).
CONFIGS = OrderedDict(
    [
        (
            "article_llama",
            (
                "article_llama.safetensors",
                "llama_article.safetensors",
                {
                    "name": "golden_article_llama",
                    # dropout 0: see the module docstring; n_layers 1 keeps the file small.
                    "model": {"arch": "article_llama", "n_layers": 1, "dropout": 0.0},
                    "train": {"seed": 0},
                },
            ),
        ),
        (
            "llama",
            (
                "llama.safetensors",
                "llama_correct.safetensors",
                {
                    "name": "golden_llama",
                    "model": {"arch": "llama", "n_layers": 2},
                    "train": {"seed": 1},
                },
            ),
        ),
    ]
)

# ---- reading stride's safetensors (no safetensors package needed) ----
ST_DTYPES = {"F32": "<f4", "F64": "<f8", "I64": "<i8", "I32": "<i4"}


def read_safetensors(path):
    """(name, tensor) pairs in the order of their data in the file."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + n])
    header.pop("__metadata__", None)
    base = 8 + n
    out = []
    for key, info in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0]):
        begin, end = info["data_offsets"]
        arr = np.frombuffer(blob[base + begin : base + end], dtype=ST_DTYPES[info["dtype"]])
        out.append((key, torch.from_numpy(arr.copy()).reshape(info["shape"])))
    return out


# ---- running ----
def expected_params(name, a):
    d, V, L = a["d_model"], a["vocab_size"], a["n_layers"]
    if name == "article_llama":
        swiglu = 2 * (d * d + d) + 1
        block = (
            a["context"] * d
            + a["n_heads"] * 3 * d * d
            + (a["n_heads"] * d * d + d)
            + (d * d + d)
            + swiglu
        )
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
    assert sorted(names) == sorted(k for k, _ in weights), (
        f"{name}: stride's state_dict keys differ from the PyTorch model's parameters"
    )
    n_params = sum(t.numel() for _, t in weights)
    assert n_params == expected_params(name, args), (name, n_params)
    ids, targets = fixed_inputs(args["vocab_size"], args["context"])

    logits, loss, grads = run(model, weights, ids, targets, torch.float64)
    # What float32 can reach: the same PyTorch model in float32, against float64.
    logits32, loss32, grads32 = run(make(args), weights, ids, targets, torch.float32)
    worst = max((rel_err(grads32[k], grads[k]), k) for k, _ in weights)
    print(
        f"{name}: {n_params} params, loss {loss.item():.6f}; torch float32 vs float64: "
        f"logits {rel_err(logits32, logits):.2e}, loss {rel_err(loss32, loss):.2e}, "
        f"worst grad {worst[0]:.2e} ({worst[1]})"
    )

    entries = [(f"weight.{k}", t) for k, t in weights]
    entries += [("ids", ids), ("targets", targets), ("logits", logits), ("loss", loss)]
    entries += [(f"grad.{k}", grads[k].float()) for k, _ in weights]
    blob = serialize(
        entries,
        {
            "generator": COMMAND,
            "torch_version": torch.__version__,
            "numpy_version": np.__version__,
            "cpu_capability": cpu_capability(),
            "config": json.dumps(config, sort_keys=True),
            "layout": "weight.NAME stride's initial parameters (f32); ids, targets (B, T); "
            "logits (B, T, V) and loss computed in float64; grad.NAME d loss / d NAME (f32)",
        },
    )
    write(
        os.path.join(GOLDEN_DIR, golden_file), blob, MAX_BYTES, "gen_llama_goldens.py", len(weights)
    )


def main():
    if sys.byteorder != "little":
        sys.exit("gen_llama_goldens.py: run on a little-endian machine")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument(
        "--weights-dir",
        help="holds article_llama.safetensors and llama.safetensors, stride's initial state_dicts",
    )
    group.add_argument(
        "--write-configs",
        metavar="DIR",
        help="write the two stride configs (article_llama.json, llama.json)",
    )
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
