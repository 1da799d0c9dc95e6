// A float32 GEMM for matrices too small for a library's packing to pay off
// (Note [Small GEMM] in small_gemm.cpp). Internal to blas.cpp's dispatch.
#pragma once

#include <cstdint>

#include "backends/cpu/blas.h"
#include "backends/cpu/capability.h"

namespace STRIDE_CPU_NAMESPACE {

// Rows a multiple of this many floats (2 KiB) apart fall in few cache sets:
// L1's 64 sets of 64 bytes span 4 KiB. Both the small kernel and oneDNN's
// AVX2 sgemm copy such operands first (Note [Small GEMM], Note [Aliasing
// leading dimensions] in blas.cpp).
inline constexpr int64_t kAliasingFloats = 512;

// Whether OpenBLAS's sgemm on this CPU packs both operands whatever their
// size (all its kernel families but the AVX-512 ones; Note [Small GEMM]).
bool openblas_packs_small_sgemm();

// Whether sgemm_small is the faster way to do an m x n x k float32 GEMM on
// this machine (by shape and by the BLAS kernel the CPU gets; never by
// timing, so the choice, and with it the bits, is fixed per machine).
bool prefers_small_sgemm(int64_t m, int64_t n, int64_t k);

// C = alpha * op(A) @ op(B) + beta * C on the calling thread, with blas.h's
// contract (beta == 0 ignores C; k > 0 and alpha != 0 here). Each element of
// C sums its k products in order p = 0, 1, ..., k - 1, one FMA each.
void sgemm_small(const GemmArgs<float>& g);

}  // namespace STRIDE_CPU_NAMESPACE
