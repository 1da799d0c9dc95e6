#!/usr/bin/env bash
# The GPU checks in one command, for a GPU machine (the device tool): runs
# the CUDA tests of the bundle tools/gpu_bundle.sh made here (stride's
# libraries travel in it; that machine has none) and prints what the GPU
# and the driver are. Exit status: the tests'. Output also goes to
# $OUT/gpu_check.log when OUT is set.
# Usage (device tool): carry [".gpu"], command `bash tools/gpu_check.sh`
set -uo pipefail
cd "$(dirname "$0")/.."
log="${OUT:-/tmp}/gpu_check.log"
exec > >(tee "$log") 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
dir="$(mktemp -d)"
tar -C "$dir" -xJf .gpu/stride-gpu.tar.xz || { echo "no bundle: run tools/gpu_bundle.sh here first"; exit 2; }
export LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The CUDA tests (the rest of the suite reads files by paths of this machine).
timeout 300 "$dir/bin/stride_tests" --gtest_filter='Cuda*' --gtest_brief=0
status=$?
echo "gpu_check: CUDA tests exit $status (git $(git rev-parse --short HEAD 2>/dev/null || echo '?'))"
exit $status
