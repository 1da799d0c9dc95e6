#!/usr/bin/env bash
# `stride --version` names the CPU kernels' level (Note [CPU capabilities]),
# STRIDE_CPU_CAPABILITY forces a lower one, and a value that names no level
# is a one-line warning, not a failure.
# Usage: cli_cpu_capability_test.sh STRIDE_BINARY GGUF_FILE
set -euo pipefail
stride="$1"

best=$("$stride" --version | sed -n 's/^CPU capability: \([a-z0-9]*\).*/\1/p')
case "$best" in
  default | avx2 | avx512) ;;
  *) echo "FAIL: --version names no CPU capability"; "$stride" --version; exit 1 ;;
esac

forced=$(STRIDE_CPU_CAPABILITY=default "$stride" --version | grep '^CPU capability:')
if [ "$best" = default ]; then
  [ "$forced" = "CPU capability: default" ] || { echo "FAIL: $forced"; exit 1; }
else
  expected="CPU capability: default (CPU supports $best; STRIDE_CPU_CAPABILITY=default)"
  [ "$forced" = "$expected" ] || { echo "FAIL: '$forced', expected '$expected'"; exit 1; }
fi

warning=$(STRIDE_CPU_CAPABILITY=sse9 "$stride" --version 2>&1 >/dev/null)
case "$warning" in
  *"STRIDE_CPU_CAPABILITY=sse9 names no CPU level; use default, avx2 or avx512"*) ;;
  *) echo "FAIL: no warning for an unknown level: '$warning'"; exit 1 ;;
esac
[ "$(STRIDE_CPU_CAPABILITY=sse9 "$stride" --version 2>/dev/null | grep '^CPU capability:')" = \
  "$("$stride" --version | grep '^CPU capability:')" ] || { echo "FAIL: unknown level changed the level"; exit 1; }

if [ "$best" != avx512 ]; then
  warning=$(STRIDE_CPU_CAPABILITY=avx512 "$stride" --version 2>&1 >/dev/null)
  case "$warning" in
    *"asks for more than this CPU supports ($best)"*) ;;
    *) echo "FAIL: no warning for a level above the CPU's: '$warning'"; exit 1 ;;
  esac
fi
# Kernels without bf16 instructions (the baseline level has none): bf16
# autocast says once how it computes, and still decodes.
note=$(STRIDE_CPU_CAPABILITY=default "$stride" generate --gguf "$2" --prompt "ROMEO:" --tokens 4 \
  --temperature 0 --precision bf16 2>&1 >/dev/null)
case "$note" in
  *"have no bf16 dot-product instructions"*) ;;
  *) echo "FAIL: no note for bf16 autocast without bf16 instructions: '$note'"; exit 1 ;;
esac
echo "PASS: --version says $best; forcing and refusing levels work; bf16 autocast says how it computes"
