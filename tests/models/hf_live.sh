#!/usr/bin/env bash
# The GPT-2 parity tests against a fresh run of transformers, where it is
# installed (tools/requirements-hf.txt; CI's environment has it not, and
# uses the committed goldens): regenerate the goldens, run stride's tests on
# them, then load stride's export with transformers and compare its logits
# with stride's. Skips (exit 77) without transformers.
# Usage: hf_live.sh PYTHON STRIDE_TESTS SOURCE_DIR
set -euo pipefail
python="$1" tests="$2" src="$3"
if ! "$python" -c "import transformers, safetensors" 2>/dev/null; then
  echo "skipped: $python cannot import transformers (pip install -r tools/requirements-hf.txt)"
  exit 77
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$python" "$src/tools/gen_hf_goldens.py" --out "$work/hf"
STRIDE_HF_GOLDEN_DIR="$work/hf" STRIDE_HF_EXPORT_DIR="$work/export" \
  "$tests" --gtest_filter='HuggingFaceGPT2.*'
"$python" - "$work/export" "$work/hf/gpt2_tiny_outputs.safetensors" <<'PY'
import sys

import torch
from safetensors.torch import load_file
from transformers import GPT2LMHeadModel

export, outputs = sys.argv[1], sys.argv[2]
model = GPT2LMHeadModel.from_pretrained(export, attn_implementation="eager").eval()
ids = load_file(outputs)["ids"]
with torch.no_grad():
    logits = model(ids).logits
diff = (logits - load_file(f"{export}/stride_logits.safetensors")["logits"]).abs().max().item()
print(f"stride export loaded by transformers: max |logits - stride's| = {diff:.3g}")
sys.exit(0 if diff <= 1e-4 else 1)
PY
