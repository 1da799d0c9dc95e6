#!/usr/bin/env bash
# The GPT-2 and Llama parity tests against a fresh run of transformers, where
# it is installed (tools/requirements-hf.txt; CI's environment has it not,
# and uses the committed goldens): regenerate the goldens, run stride's tests
# on them, then load each of stride's exports with transformers (among them a
# Llama trained with Meta's interleaved RoPE, whose q and k rows the export
# permutes) and compare its logits with stride's. Skips (exit 77) without
# transformers.
# Usage: hf_live.sh PYTHON STRIDE_TESTS SOURCE_DIR
set -euo pipefail
python="$1" tests="$2" src="$3"
if ! "$python" -c "import transformers, safetensors" 2>/dev/null; then
  echo "skipped: $python cannot import transformers (pip install -r tools/requirements-hf.txt)"
  exit 77
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# The script writes the goldens of the installed transformers (4.x or 5.x);
# the committed ones of the other stand beside them.
cp -r "$src/tests/golden/hf" "$work/hf"
"$python" "$src/tools/gen_hf_goldens.py" --out "$work/hf"
STRIDE_HF_GOLDEN_DIR="$work/hf" STRIDE_HF_EXPORT_DIR="$work/export" \
  "$tests" --gtest_filter='*HuggingFace*'
"$python" - "$work/export" "$work/hf/gpt2_tiny_outputs.safetensors" <<'PY'
import pathlib
import sys

import torch
from safetensors.torch import load_file
from transformers import AutoModelForCausalLM

exports, outputs = pathlib.Path(sys.argv[1]), sys.argv[2]
ids = load_file(outputs)["ids"]
worst = 0.0
for export in sorted(p for p in exports.iterdir() if (p / "stride_logits.safetensors").exists()):
    model = AutoModelForCausalLM.from_pretrained(export, attn_implementation="eager").eval()
    with torch.no_grad():
        logits = model(ids).logits
    want = load_file(export / "stride_logits.safetensors")["logits"]
    diff = (logits - want).abs().max().item()
    print(f"{export.name}: loaded by transformers, max |logits - stride's| = {diff:.3g}")
    worst = max(worst, diff)
sys.exit(0 if worst <= 1e-4 else 1)
PY
