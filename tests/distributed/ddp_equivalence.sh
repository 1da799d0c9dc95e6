#!/usr/bin/env bash
# DDP gives the same training at any world size: the correct Llama, 50 steps
# of a global batch of 32, on 1, 2 and 4 processes. Deterministic shards must
# agree bit for bit (cmp); the all-reduce within float32 rounding.
# Usage: ddp_equivalence.sh PROGRAM MPIRUN [MPIRUN ARGS...]
set -euo pipefail
program="$1"
shift
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

run() {  # run NP OUT [ARGS...]
  local np="$1" out="$2"
  shift 2
  "$@" -np "$np" "$program" --out "$out" "${extra[@]}"
}

extra=(--shards 4)
for np in 1 2 4; do run "$np" "$tmp/shards_$np.safetensors" "$@"; done
cmp "$tmp/shards_1.safetensors" "$tmp/shards_2.safetensors"
cmp "$tmp/shards_1.safetensors" "$tmp/shards_4.safetensors"
echo "deterministic shards: bit for bit the same on 1, 2 and 4 processes"

extra=()
for np in 1 2; do run "$np" "$tmp/reduce_$np.safetensors" "$@"; done
"$program" --compare "$tmp/reduce_1.safetensors" "$tmp/reduce_2.safetensors" --tolerance 1e-5
