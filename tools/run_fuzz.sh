#!/usr/bin/env bash
# Runs stride's libFuzzer targets (fuzz/CMakeLists.txt): each first replays
# its regression files (fuzz/regressions/<target>/, inputs that once broke
# stride), then fuzzes for SECONDS from the seed corpus (fuzz/corpus/<target>/)
# and what earlier runs found (BUILD/work/<target>/). A finding is written to
# BUILD/findings/ and fails the run; once fixed, it belongs in
# fuzz/regressions/<target>/.
# Usage: run_fuzz.sh BUILD SECONDS
set -euo pipefail
build="$1"
seconds="$2"
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$build/findings"
for target in safetensors_header gguf gguf_model checkpoint tokenizer sentencepiece store_protocol; do
  binary="$build/fuzz_$target"
  regressions=("$root/fuzz/regressions/$target"/*)
  if [ -e "${regressions[0]}" ]; then
    "$binary" "${regressions[@]}" > "$build/$target.replay.log" 2>&1 ||
      { tail -30 "$build/$target.replay.log"; echo "fuzz_$target: a regression file fails again"; exit 1; }
  fi
  mkdir -p "$build/work/$target"
  # -timeout: one input taking 10 s is a finding (a parse gone quadratic).
  "$binary" "$build/work/$target" "$root/fuzz/corpus/$target" -max_total_time="$seconds" \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$build/findings/$target-" > "$build/$target.log" 2>&1 ||
    { tail -40 "$build/$target.log"; echo "fuzz_$target: a finding is in $build/findings/"; exit 1; }
  echo "fuzz_$target: $(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$build/$target.log" |
    grep -o '[0-9]*$') inputs in ${seconds} s, no finding"
done
