"""Weights across stride and PyTorch, checked by their logits: the two halves
that run in PyTorch of tests/models/torch_roundtrip_test.cpp.

    python tools/torch_roundtrip.py check-export WEIGHTS EXPECTED
        WEIGHTS is what `stride export` writes (llama::save_weights): PyTorch's
        safetensors reader loads it, strictly, into tools/torch_llama.py's
        model of the config in its "stride.config" metadata; the logits on
        EXPECTED's "ids" must match EXPECTED's "logits" (stride's).
    python tools/torch_roundtrip.py make CONFIG WEIGHTS EXPECTED
        The model of the stride config file CONFIG, initialised by PyTorch
        (its norm weights drawn too, so that none is all ones), saved by
        PyTorch as plain safetensors (no stride metadata) to WEIGHTS; random
        "ids" and PyTorch's "logits" on them to EXPECTED, for stride to match.

Both run in float32 on one thread. Exit code 0: the logits agree (or the
files were written); 1: they differ (the error is printed).
"""

import json
import os
import sys

import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_llama import build  # noqa: E402

# Two float32 forwards of the same weights, summed in different orders: the
# largest logit difference relative to the largest logit.
TOLERANCE = 1e-5


def check_export(weights_path, expected_path):
    with safe_open(weights_path, framework="pt") as f:
        metadata = f.metadata()
    config = json.loads(metadata["stride.config"])
    model = build(config)
    model.load_state_dict(load_file(weights_path), strict=True)
    model.eval()
    expected = load_file(expected_path)
    with torch.no_grad():
        logits = model(expected["ids"])
    want = expected["logits"]
    err = ((logits.double() - want.double()).abs().max() / want.double().abs().max()).item()
    arch = config["model"]["arch"]
    print(f"{arch}: PyTorch's logits on stride's exported weights, relative error {err:.2e}")
    return 0 if err <= TOLERANCE else 1


def make(config_path, weights_path, expected_path):
    with open(config_path) as f:
        config = json.load(f)
    torch.manual_seed(config.get("train", {}).get("seed", 0))
    model = build(config)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name or name.endswith("scale"):
                p.uniform_(0.5, 1.5)
    save_file(model.state_dict(), weights_path, metadata={"format": "pt"})
    model.eval()
    args = config["model"]
    ids = torch.randint(0, args["vocab_size"], (2, args["context"]), dtype=torch.int64)
    with torch.no_grad():
        logits = model(ids)
    save_file({"ids": ids, "logits": logits.contiguous()}, expected_path)
    print(f"{args['arch']}: PyTorch's weights in {weights_path}")
    return 0


def main(argv):
    torch.set_num_threads(1)
    if len(argv) == 4 and argv[1] == "check-export":
        return check_export(argv[2], argv[3])
    if len(argv) == 5 and argv[1] == "make":
        return make(argv[2], argv[3], argv[4])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
