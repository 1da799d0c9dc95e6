// The decode GEMV (Note [Decoding GEMM] in gemv.cpp): the kernel behind
// GEMMs of a few rows, for the float32 GEMM's planning (blas.cpp), the bf16
// GEMM (gemm_bf16.cpp) and autocast's choice of operands (autocast.cpp).
// Internal to those files.
#pragma once

#include <cstdint>

#include "backends/cpu/blas.h"
#include "backends/cpu/capability.h"

namespace STRIDE_CPU_NAMESPACE {

// The most rows of A that the decode GEMV takes.
inline constexpr int64_t kDecodeRows = 4;

// C (m, n) = alpha * A (m, k) @ op(B) on the calling thread, for
// m <= kDecodeRows, A not transposed and beta == 0 (C's previous contents
// are not read; g.trans_a and g.beta are not looked at).
void gemm_decode(const GemmArgs<float>& g);
void gemm_decode(const GemmArgs<BFloat16, float>& g);

}  // namespace STRIDE_CPU_NAMESPACE
