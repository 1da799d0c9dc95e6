// GEMM: the one interface through which stride multiplies matrices on the CPU.
// Every matmul, linear layer and attention product ends here; which library
// does the work (oneDNN or OpenBLAS, chosen per dtype and size by measurement,
// see Note [GEMM backend choice] in blas.cpp) is invisible to callers.
//
// Legend: op(X) is X or X^T; op(A) is (m, k), op(B) is (k, n), C is (m, n).
// All matrices are row-major with a leading dimension (the distance in
// elements between consecutive rows of the matrix as stored, i.e. before op):
//   A stored (m, k) with lda >= k, or (k, m) with lda >= m when trans_a;
//   B stored (k, n) with ldb >= n, or (n, k) with ldb >= k when trans_b;
//   C stored (m, n) with ldc >= n.
//
// Contract shared by every function below:
//   - C = alpha * op(A) @ op(B) + beta * C; only C is written, A and B are read.
//   - beta == 0 ignores C's previous contents (C may hold NaN/Inf garbage).
//   - k == 0 or alpha == 0: A and B are not read; C = beta * C (exact zeros
//     when beta == 0).
//   - m == 0 or n == 0: nothing is read or written.
//   - C must not overlap A or B.
//   - Uses up to stride::get_num_threads() threads, on stride's OpenMP pool;
//     single-threaded when called from inside a parallel region.
//   - Bad sizes or leading dimensions throw ValueError ("[gemm] ...").
#pragma once

#include <cstdint>

#include "backends/cpu/capability.h"
#include "stride/dtype.h"

namespace STRIDE_CPU_NAMESPACE {

// One GEMM: C = alpha * op(A) @ op(B) + beta * C, laid out as the legend
// above says. Callers name the fields they set (designated initializers);
// alpha is 1 and beta 0 unless given, so a plain product names neither. In
// is the element type of A and B, Out that of C and of the scalars: the
// bf16 GEMM reads bfloat16 and writes float32.
template <class In, class Out = In>
struct GemmArgs {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  const In* a = nullptr;
  int64_t lda = 0;
  const In* b = nullptr;
  int64_t ldb = 0;
  Out* c = nullptr;
  int64_t ldc = 0;
  Out alpha = 1, beta = 0;
};

// `count` GEMMs of one GemmArgs' sizes: matrix i of A starts at
// a + i * stride_a, likewise for B and C. stride_a or stride_b may be 0 to
// broadcast one matrix over the batch; the C matrices must not overlap each
// other (stride_c >= the size of one C matrix, or count <= 1).
struct GemmBatch {
  int64_t count = 1;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;
};

void gemm(const GemmArgs<float>& g);
void gemm(const GemmArgs<double>& g);

// Each GEMM of the batch with the contract above.
void gemm_batched(const GemmArgs<float>& g, const GemmBatch& batch);
void gemm_batched(const GemmArgs<double>& g, const GemmBatch& batch);

// Mixed precision (autocast): bfloat16 A and B, float32 accumulation and C,
// with the contract above for alpha = 1, beta = 0 only (others throw
// ValueError). Runs oneDNN's brgemm kernels (AVX512-BF16 or AMX), callable
// only when has_bf16_gemm(), and for decoding (m <= 4 rows of a row-major
// A) the decode GEMV, on any CPU.
bool has_bf16_gemm();
// Whether gemm_batched_bf16 beats the float32 GEMM on widened operands for
// this shape: with bf16 kernels, from 2^19 multiply-adds (below, oneDNN's
// per-call cost dominates), and always for decoding (m <= 4 rows of a
// row-major A, its own kernel, which widens bf16 where the CPU has no bf16
// instructions).
bool prefers_bf16_gemm(int64_t batch, bool trans_a, int64_t m, int64_t n, int64_t k);
void gemm_batched_bf16(const GemmArgs<BFloat16, float>& g, const GemmBatch& batch);

// dst[i] = bfloat16(src[i]), rounded to nearest even (BFloat16's rounding),
// vectorised: the operand conversion of the mixed-precision GEMM.
void round_to_bf16(const float* src, BFloat16* dst, int64_t n);

// The libraries behind gemm for dtype t ("onednn+openblas" for float32,
// "openblas" for float64), or "none" for dtypes gemm does not support. For
// logs and bench/RESULTS.md.
const char* gemm_backend(ScalarType t);

}  // namespace STRIDE_CPU_NAMESPACE
