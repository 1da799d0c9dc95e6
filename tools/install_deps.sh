#!/usr/bin/env bash
# Installs the Debian packages stride needs; does nothing when all are present.
set -euo pipefail

# ocl-icd-opencl-dev: Debian's oneDNN is built with an OpenCL runtime, and its
# CMake config (find_package(dnnl)) requires OpenCL; the package is only a
# Recommends of libdnnl-dev, which --no-install-recommends skips.
# libopenmpi-dev and openmpi-bin: the distributed MPI backend, and mpirun for
# its tests. libgloo-dev: the distributed backend of processes launched
# without MPI (by environment variables). libpcre2-dev: the regexes of Hugging Face tokenizer.json files.
# libutf8proc-dev: Unicode's data for BERT's WordPiece normalizer.
# libsentencepiece-dev: SentencePiece tokenizer.model files (Llama 2).
# libkissfft-dev: the CPU's Fourier transforms (torch.fft), header-only.
# libboost-dev: Boost.Math's special functions (header only; src/backends/cpu/special_math.h).
# debootstrap: the minimal Debian root the wheel is tested in (tools/wheel_check.sh).
packages=(
  g++ cmake ninja-build ccache pkg-config make
  libopenblas-dev libdnnl-dev ocl-icd-opencl-dev nlohmann-json3-dev libcli11-dev libpng-dev zlib1g-dev
  libgtest-dev libbenchmark-dev clang-format clang libclang-rt-14-dev libboost-dev
  python3-dev python3-venv libopenmpi-dev openmpi-bin libgloo-dev libpcre2-dev libsentencepiece-dev
  libutf8proc-dev libkissfft-dev debootstrap
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "stride: installing missing packages: ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
