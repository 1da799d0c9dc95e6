#!/usr/bin/env bash
# Packs what tools/gpu_check.sh runs on a GPU machine, which has the CUDA
# toolkit and driver but none of stride's Debian libraries and no network:
# a Release build with the CUDA backend (build-gpu), its test program and
# benchmark, and every shared library they load that a stock Linux image
# lacks, in .gpu/stride-gpu.tar.xz (ignored by git; the device tool carries
# it: `carry: [".gpu"]`).
# Usage: tools/gpu_bundle.sh
set -euo pipefail
cd "$(dirname "$0")/.."
build=build-gpu
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTRIDE_CUDA=ON \
  -DSTRIDE_BUILD_APPS=OFF -DSTRIDE_BUILD_BENCH=OFF -DSTRIDE_NATIVE=OFF >/dev/null
cmake --build "$build" --target stride_tests -j "$(nproc)"

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib"
cp "$build/tests/stride_tests" "$stage/bin/"
# The C library and the compiler's runtime come from the machine itself
# (theirs are newer, and these must match its loader).
ldd "$build/tests/stride_tests" | awk '$3 ~ /^\// {print $3}' |
  grep -Ev '/(libc|libm|libstdc\+\+|libgcc_s|libpthread|libdl|librt|ld-linux[^/]*)\.so' |
  while read -r lib; do cp -L "$lib" "$stage/lib/"; done
strip --strip-unneeded "$stage"/lib/*.so* "$stage/bin/stride_tests" 2>/dev/null || true
mkdir -p .gpu
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >>.git/info/exclude
tar -C "$stage" -cJf .gpu/stride-gpu.tar.xz bin lib
echo "tools/gpu_bundle.sh: .gpu/stride-gpu.tar.xz, $(du -h .gpu/stride-gpu.tar.xz | cut -f1)"
