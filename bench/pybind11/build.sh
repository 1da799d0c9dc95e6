#!/usr/bin/env bash
# Builds bench/pybind11's module (stride over pybind11, for
# bench/binding_overhead.py), with libstride static and Release as
# `pip install .` builds it. pybind11 is PyPI's, from the virtual environment
# (build-venv/bin/pip install pybind11), built into build-pybind11/pypi/;
# with PYBIND11=debian, Debian's (apt-get install pybind11-dev), built into
# build-pybind11/debian/.
#
#   bench/pybind11/build.sh [extra cmake -D flags, e.g. -DSTRIDE_WERROR=ON]
#   PYBIND11=debian bench/pybind11/build.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-build-venv/bin/python}
[[ $PYTHON = /* ]] || PYTHON=$PWD/$PYTHON
PYBIND11=${PYBIND11:-pypi}
BUILD=${BUILD:-build-pybind11/$PYBIND11}
case $PYBIND11 in
  pypi) FROM=() ;;
  debian) FROM=(-Dpybind11_DIR=/usr/lib/cmake/pybind11) ;;
  *) echo "PYBIND11 is pypi or debian, not $PYBIND11" >&2; exit 2 ;;
esac
cmake -S bench/pybind11 -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DBUILD_SHARED_LIBS=OFF -DSTRIDE_BUILD_TESTS=OFF -DSTRIDE_BUILD_APPS=OFF \
  -DPython_EXECUTABLE="$PYTHON" "${FROM[@]}" "$@" >/dev/null
cmake --build "$BUILD" -j "${JOBS:-$(nproc)}"
echo "built: $(ls "$BUILD"/_stride_pybind11_*.so)"
