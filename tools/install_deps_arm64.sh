#!/usr/bin/env bash
# The cross toolchain, qemu and the arm64 builds of the Debian libraries
# stride uses, for `make test-arm64` (docs/design.md, "arm64"); does nothing
# when all are present. Usage: tools/install_deps_arm64.sh [DIR]
#
# Most come with Debian's multiarch (dpkg --add-architecture arm64), beside
# the amd64 ones. Three cannot: libdnnl-dev:arm64 ships an arm64
# dnnl_config.h at the same path as the amd64 one (dpkg refuses to
# overwrite it), and libsentencepiece-dev and libgloo-dev are not
# Multi-Arch: same, so installing them would remove the amd64 packages. Those
# are unpacked, without installing, into DIR (default build-arm64-deps/),
# which cmake/toolchains/aarch64-linux-gnu.cmake searches before the
# system's directories. The headers stride needs from the others
# (nlohmann-json3-dev, libcli11-dev, libkissfft-dev, libboost-dev) are
# the amd64 packages' (tools/install_deps.sh), the same for every
# architecture. Open MPI is left out of the arm64 build; CUDA and Python too.
set -euo pipefail

dir="${1:-build-arm64-deps}"

packages=(
  g++-aarch64-linux-gnu qemu-user libc6:arm64
  libopenblas-dev:arm64 libdnnl2:arm64 ocl-icd-opencl-dev:arm64 zlib1g-dev:arm64
  libpcre2-dev:arm64 libutf8proc-dev:arm64 libpng-dev:arm64 libgtest-dev:arm64
  libhiredis0.14:arm64 libibverbs1:arm64
)
# Unpacked into $dir: the packages, then the file that says they are there.
# libdnnl2 again: the CMake config of libdnnl-dev names the library beside it.
unpacked=(libdnnl2 libdnnl-dev libsentencepiece0 libsentencepiece-dev libgloo0 libgloo-dev)

sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -ne 0 ]; then
  echo "stride: installing missing arm64 packages: ${missing[*]}"
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $sudo dpkg --add-architecture arm64
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

stamp="$dir/.unpacked"
want="${unpacked[*]}"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "stride: unpacking ${unpacked[*]} (arm64) into $dir"
  rm -rf "$dir"
  mkdir -p "$dir/debs"
  # apt-get download writes into the current directory.
  (cd "$dir/debs" && apt-get download -qq -o APT::Sandbox::User=root "${unpacked[@]/%/:arm64}")
  for deb in "$dir"/debs/*.deb; do
    dpkg-deb -x "$deb" "$dir"
  done
  rm -rf "$dir/debs"
  echo "$want" >"$stamp"
fi
