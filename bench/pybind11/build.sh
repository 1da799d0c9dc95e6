#!/usr/bin/env bash
# Builds bench/pybind11's module (stride over pybind11, for
# bench/binding_overhead.py) into build-pybind11/release/, with libstride
# static and Release as `pip install .` builds it. pybind11 comes from the
# virtual environment: build-venv/bin/pip install pybind11.
#
#   bench/pybind11/build.sh [extra cmake -D flags, e.g. -DSTRIDE_WERROR=ON]
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-build-venv/bin/python}
[[ $PYTHON = /* ]] || PYTHON=$PWD/$PYTHON
BUILD=${BUILD:-build-pybind11/release}
cmake -S bench/pybind11 -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DBUILD_SHARED_LIBS=OFF -DSTRIDE_BUILD_TESTS=OFF -DSTRIDE_BUILD_APPS=OFF \
  -DPython_EXECUTABLE="$PYTHON" "$@" >/dev/null
cmake --build "$BUILD" -j "${JOBS:-$(nproc)}"
echo "built: $(ls "$BUILD"/_stride_pybind11.*.so)"
