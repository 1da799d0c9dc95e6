#!/usr/bin/env bash
# The Python package's tests against the extension built with AddressSanitizer
# and UBSan in the tree of `make test-asan`: memory shared with NumPy, DLPack
# and the buffer protocol, views that outlive their owner after `del` and
# gc.collect(), hooks and custom functions freed with the graph. The
# interpreter is not instrumented, so the ASan runtime is preloaded; Python's
# own allocations are not leak-checked. Left out: the torch tests (torch's
# libraries are not instrumented, and loading them under ASan costs minutes),
# the examples (minutes of training) and the checks of the installed stubs
# (this staged package has none).
#   tools/python_asan.sh BUILD_DIR PYTHON
set -euo pipefail
build=$(realpath "$1")
# Absolute but not resolved: a venv's python is a link to the base interpreter.
python="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
cd "$(dirname "$0")/.."

stage="$build/python-stage"
rm -rf "$stage"
mkdir -p "$stage"
cp -r python/stride "$stage/"
cp "$build"/python/_stride*.so "$stage/stride/"
# libstdc++ is preloaded too: the interpreter does not link it, and ASan's
# __cxa_throw interceptor must find it when ASan starts.
preload="$(${CXX:-c++} -print-file-name=libasan.so) $(${CXX:-c++} -print-file-name=libstdc++.so)"

cd python/tests
LD_PRELOAD="$preload" ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  PYTHONPATH="$stage" OMP_WAIT_POLICY=passive \
  "$python" -m pytest -q -p no:cacheprovider --ignore=test_torch_parity.py \
  --ignore=test_examples.py -k "not torch and not stubs" .
