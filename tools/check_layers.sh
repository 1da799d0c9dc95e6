#!/usr/bin/env bash
# Checks that stride's layers point one way: a file may include its own layer
# and the layers below it, never one above, and every scanned file belongs to
# a layer. Usage: check_layers.sh [REPO_ROOT]
# Exit 0 when clean, 1 on any violation (printed as file:line and the rule
# broken).
set -euo pipefail
# The layer patterns below are globs on repository paths, matched with [[ ==
# ]]: never expanded against the file system.
set -f

# ---- the layers, lowest first: "name: path patterns" (globs on repo paths;
# `*` also matches `/`). A path takes the first layer that matches it. The op
# list is macros only, so every layer may expand it; as the lowest layer it
# may include nothing of stride's. ----
LAYERS=(
  "op-list: src/core/op_list.h"
  "core: src/core/* include/stride/cpu_capability.h include/stride/device.h include/stride/dtype.h include/stride/error.h
         include/stride/shape.h include/stride/storage.h include/stride/allocator.h
         include/stride/tensor.h include/stride/scalar.h include/stride/generator.h
         include/stride/parallel.h include/stride/logging.h include/stride/function_ref.h
         include/stride/profiler.h include/stride/factory.h include/stride/backend.h
         include/stride/weight_format.h"
  "backends: src/backends/* include/stride/cuda.h"
  "autograd: src/autograd/* include/stride/autograd.h"
  "ops: src/ops/* include/stride/ops.h include/stride/fft.h include/stride/autocast.h include/stride/linalg.h include/stride/masked.h"
  "engine: src/engine/*"
  "nn: src/nn/* include/stride/nn.h include/stride/nn/*"
  "optim: src/optim/* include/stride/optim.h include/stride/optim/*"
  "data-io-profiler-doctor: src/data/* src/io/* src/profiler/* src/doctor/* src/plot/*
         include/stride/data.h include/stride/data/* include/stride/io.h include/stride/plot.h
         include/stride/checkpoint.h include/stride/doctor.h include/stride/gguf.h"
  "distributed: src/distributed/* include/stride/distributed.h include/stride/distributed/*"
  "umbrella: include/stride/stride.h"
  "models-lm: models/lm/*"
  "models: models/llama/* models/gpt/* models/bert/*"
  "models-hf: models/hf/* models/gguf/*"
  "apps: apps/*"
  "python: python/src/*"
)

# ---- includes forbidden even though they point down: "from -> to" ----
FORBIDDEN=(
  "src/ops/* -> src/backends/cpu/*"
  "src/ops/* -> src/backends/cuda/*"
  "src/engine/* -> src/backends/cpu/*"
  "src/engine/* -> src/backends/cuda/*"
  "src/nn/* -> src/backends/cpu/*"
  "src/nn/* -> src/backends/cuda/*"
  "src/optim/* -> src/backends/cpu/*"
  "src/optim/* -> src/backends/cuda/*"
  "python/src/* -> apps/*"
  "models/llama/* -> models/gpt/*"
  "models/gpt/* -> models/llama/*"
  "models/llama/* -> models/bert/*"
  "models/gpt/* -> models/bert/*"
  "models/bert/* -> models/llama/*"
  "models/bert/* -> models/gpt/*"
)

# Directories scanned, relative to the root.
SCANNED=(src include/stride models apps python/src)

root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
cd "$root"

# Sets REPLY to the layer index of repo path $1, or to "" when no layer
# claims it. Cached: the check runs in CTest on every build.
declare -A LAYER_CACHE=()
layer_of() {
  local i entry pattern
  if [[ -v "LAYER_CACHE[$1]" ]]; then
    REPLY="${LAYER_CACHE[$1]}"
    return
  fi
  REPLY=""
  for i in "${!LAYERS[@]}"; do
    entry="${LAYERS[$i]}"
    for pattern in ${entry#*:}; do
      # shellcheck disable=SC2053  # the pattern is a glob on purpose
      if [[ "$1" == $pattern ]]; then
        REPLY="$i"
        break 2
      fi
    done
  done
  LAYER_CACHE[$1]="$REPLY"
}

layer_name() { echo "${LAYERS[$1]%%:*}"; }

# Sets REPLY to the repo path that `#include "$2"` in file $1 names, as the
# build's include path finds it (include/, src/, models/, then the file's own
# folder), or to "" for a header outside the repo.
resolve() {
  local candidate
  REPLY=""
  for candidate in "include/$2" "src/$2" "models/$2" "${1%/*}/$2"; do
    if [[ -f "$candidate" ]]; then
      # A path through ".." is named as the file it reaches.
      [[ "$candidate" != *..* ]] || candidate="$(realpath -m --relative-to=. "$candidate")"
      REPLY="$candidate"
      return
    fi
  done
}

# True when "$1 -> $2" matches a FORBIDDEN rule; prints the rule.
forbidden_rule() {
  local rule
  for rule in "${FORBIDDEN[@]}"; do
    # shellcheck disable=SC2053
    if [[ "$1" == ${rule%% -> *} && "$2" == ${rule##* -> } ]]; then
      echo "$rule"
      return 0
    fi
  done
  return 1
}

failures=0

# Records a broken rule for the include of $2 at $1 (file:line).
report() {
  local where="$1" header="$2" rule="$3"
  echo "error: $where: includes \"$header\" ($rule)"
  failures=$((failures + 1))
}

check_include() {
  local where="$1" file="$2" header="$3" target from to rule
  resolve "$file" "$header"
  target="$REPLY"
  [[ -n "$target" ]] || return 0
  layer_of "$file"
  from="$REPLY"
  layer_of "$target"
  to="$REPLY"
  if [[ -n "$from" && -n "$to" && "$to" -gt "$from" ]]; then
    report "$where" "$header" \
      "layer $(layer_name "$from") may not include layer $(layer_name "$to")"
  fi
  if rule="$(forbidden_rule "$file" "$target")"; then
    report "$where" "$header" "forbidden: $rule"
  fi
}

while IFS= read -r -d '' file; do
  file="${file#./}"
  layer_of "$file"
  if [[ -z "$REPLY" ]]; then
    echo "error: $file: no layer claims it (add its path to a layer in tools/check_layers.sh)"
    failures=$((failures + 1))
  fi
  lineno=0
  while IFS= read -r line || [[ -n "$line" ]]; do
    lineno=$((lineno + 1))
    if [[ "$line" =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\"([^\"]+)\" ]]; then
      check_include "$file:$lineno" "$file" "${BASH_REMATCH[1]}"
    fi
  done <"$file"
done < <(find "${SCANNED[@]}" -type f \( -name '*.h' -o -name '*.hpp' -o -name '*.cpp' \
  -o -name '*.cc' -o -name '*.cu' -o -name '*.cuh' \) -print0 2>/dev/null | sort -z)

if ((failures > 0)); then
  echo "check_layers: $failures violation(s)"
  exit 1
fi
echo "check_layers: ok"
