"""Checks that PyTorch's safetensors reader opens a stride checkpoint and sees
the values stride wrote.

    build-venv/bin/python tools/check_checkpoint_torch.py PATH   (make venv)

tests/io/checkpoint_test.cpp (Checkpoint.PyTorchReadsIt) writes PATH with every
floating tensor filled with arange(numel) * 0.25 in row-major order, then runs
this script. Exit code 0: every tensor matches; 1: a mismatch (printed).
"""

import json
import sys

import torch
from safetensors import safe_open
from safetensors.torch import load_file


def main(path):
    tensors = load_file(path)
    with safe_open(path, framework="pt") as f:
        meta = f.metadata()
    assert meta["stride.format"] == "checkpoint-v1", meta
    assert json.loads(meta["stride.config"]) == {"source": "stride"}, meta["stride.config"]
    assert int(meta["stride.step"]) == 7, meta["stride.step"]
    assert any(k.startswith("model.") for k in tensors), list(tensors)
    for name, t in tensors.items():
        if not t.is_floating_point():
            continue
        want = (torch.arange(t.numel(), dtype=torch.float64) * 0.25).to(t.dtype).reshape(t.shape)
        if not torch.equal(t, want):
            print(f"{name}: values differ ({t.dtype}, {tuple(t.shape)})")
            return 1
    print(f"PyTorch read {len(tensors)} tensors from {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
