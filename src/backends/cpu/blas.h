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

#include "stride/dtype.h"

namespace stride::cpu {

void gemm(bool trans_a,
          bool trans_b,
          int64_t m,
          int64_t n,
          int64_t k,
          float alpha,
          const float* a,
          int64_t lda,
          const float* b,
          int64_t ldb,
          float beta,
          float* c,
          int64_t ldc);
void gemm(bool trans_a,
          bool trans_b,
          int64_t m,
          int64_t n,
          int64_t k,
          double alpha,
          const double* a,
          int64_t lda,
          const double* b,
          int64_t ldb,
          double beta,
          double* c,
          int64_t ldc);

// `batch` independent GEMMs with the contract above: matrix i of A starts at
// a + i * stride_a, likewise for B and C. stride_a or stride_b may be 0 to
// broadcast one matrix over the batch; the C matrices must not overlap each
// other (stride_c >= the size of one C matrix, or batch <= 1).
void gemm_batched(int64_t batch,
                  bool trans_a,
                  bool trans_b,
                  int64_t m,
                  int64_t n,
                  int64_t k,
                  float alpha,
                  const float* a,
                  int64_t lda,
                  int64_t stride_a,
                  const float* b,
                  int64_t ldb,
                  int64_t stride_b,
                  float beta,
                  float* c,
                  int64_t ldc,
                  int64_t stride_c);
void gemm_batched(int64_t batch,
                  bool trans_a,
                  bool trans_b,
                  int64_t m,
                  int64_t n,
                  int64_t k,
                  double alpha,
                  const double* a,
                  int64_t lda,
                  int64_t stride_a,
                  const double* b,
                  int64_t ldb,
                  int64_t stride_b,
                  double beta,
                  double* c,
                  int64_t ldc,
                  int64_t stride_c);

// Mixed precision (autocast): bfloat16 A and B, float32 accumulation and C,
// with the contract above for alpha = 1, beta = 0. Runs oneDNN's brgemm
// kernels (AVX512-BF16 or AMX); only callable when has_bf16_gemm().
bool has_bf16_gemm();
// Whether gemm_batched_bf16 beats the float32 GEMM on widened operands for
// this shape: with bf16 kernels, from 2^19 multiply-adds (below, oneDNN's
// per-call cost dominates), and always for decoding (m <= 4 rows of a
// row-major A, its own kernel).
bool prefers_bf16_gemm(int64_t batch, bool trans_a, int64_t m, int64_t n, int64_t k);
void gemm_batched_bf16(int64_t batch,
                       bool trans_a,
                       bool trans_b,
                       int64_t m,
                       int64_t n,
                       int64_t k,
                       const BFloat16* a,
                       int64_t lda,
                       int64_t stride_a,
                       const BFloat16* b,
                       int64_t ldb,
                       int64_t stride_b,
                       float* c,
                       int64_t ldc,
                       int64_t stride_c);

// dst[i] = bfloat16(src[i]), rounded to nearest even (BFloat16's rounding),
// vectorised: the operand conversion of the mixed-precision GEMM.
void round_to_bf16(const float* src, BFloat16* dst, int64_t n);

// The libraries behind gemm for dtype t ("onednn+openblas" for float32,
// "openblas" for float64), or "none" for dtypes gemm does not support. For
// logs and bench/RESULTS.md.
const char* gemm_backend(ScalarType t);

}  // namespace stride::cpu
