#include "backends/cpu/small_gemm.h"

#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <string_view>
#include <vector>

#include "backends/cpu/capability.h"
#include "backends/cpu/transpose.h"
#include "backends/cpu/vec_math.h"

#if defined(__AVX512F__) || defined(__AVX__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

// Note [Small GEMM]
// ~~~~~~~~~~~~~~~~~
// Attention multiplies many tiny matrices: the article Llama's heads are 16
// queries by 16 keys by 128 features, 256 heads a layer, six products a
// head forward and backward, and the correct Llama's are 16 x 16 x 16. A
// library GEMM packs both operands into its own layout before it
// multiplies, and scales C by beta in a pass of its own: worth it when each
// packed element is reused hundreds of times, not at these sizes, where
// OpenBLAS's Haswell-family kernels spend more of attention's time in those
// copies and that pass than in the multiply.
//
// So small float32 GEMMs run here, on one register tile of C at a time:
// MR rows by NV vectors of columns held in registers while k runs, each
// step one load of B's row segment and MR broadcasts of A's elements, A read
// where it lies (any transpose, any leading dimension). B is read in place
// when its rows are whole vectors; otherwise (B transposed, or n not a
// multiple of the vector width) it is first copied into a row-major (k, n)
// panel padded to whole vectors, n * k copies against m * n * k
// multiply-adds. C is written once, alpha and beta applied in the store.
// B is copied too when its rows are a multiple of 512 floats (2 KiB) apart
// and more than one row tile reads them: a head's v or dout viewed in a
// (B, T, H E) projection has rows 1024 floats apart, so a column block's 16
// rows all fall in one of L1's 64 sets (8 ways) and each row tile would
// fetch them again from L2.
//
// This beats cblas_sgemm at these sizes for every transpose, except B
// transposed with a long k, where copying B^T leaves it at par (measured:
// see bench/HISTORY.md).
//
// OpenBLAS's SkylakeX-family kernels (AVX-512 Intel and Zen 4 CPUs) have a
// small-matrix path of their own that does not pack; there the library
// keeps these GEMMs, since an own small kernel for attention was slower
// than that path (measured: see bench/HISTORY.md).

namespace STRIDE_CPU_NAMESPACE {
namespace {

using Vec = vec::NativeVec;
constexpr int64_t W = vec::kNativeLanes;
#if defined(__AVX512F__)
constexpr int kMaxVectors = 3;  // 32 registers: up to 8 x 3 accumulators
#elif defined(__aarch64__)
// 32 q registers of 4 floats: up to 6 x 4 accumulators, so that a 16-wide
// attention head is one column block, as on AVX2.
constexpr int kMaxVectors = 4;
#else
constexpr int kMaxVectors = 2;  // 16 registers: up to 6 x 2 accumulators
#endif

// Rows of C in a register tile of nv vectors: accumulators plus B's nv
// vectors and a broadcast fill the register file without spilling.
template <int NV>
constexpr int tile_rows() {
#if defined(__AVX512F__)
  return NV == 1 ? 16 : 8;
#elif defined(__aarch64__)
  return NV == 1 ? 16 : NV == 2 ? 12 : NV == 3 ? 8 : 6;  // 24 accumulators at most
#else
  return NV == 1 ? 12 : 6;
#endif
}

// x in every lane: one broadcast from memory (`Vec{} + x` adds first).
inline Vec splat(float x) {
#if defined(__AVX512F__)
  return _mm512_set1_ps(x);
#elif defined(__AVX__)
  return _mm256_set1_ps(x);
#elif defined(__aarch64__)
  return vld1q_dup_f32(&x);  // ld1r from A
#else
  Vec v;
  for (int64_t l = 0; l < W; ++l) v[l] = x;
  return v;
#endif
}

// alpha * acc + beta * c[0, w) stored to c[0, w), w <= W; C is not read
// when beta == 0.
inline void store_lanes(float* c, Vec acc, float alpha, float beta, int64_t w) {
  Vec out = acc * alpha;
  if (w == W) {
    if (beta != 0.0f) out += beta * vec::load_native(c);
    vec::store_native(c, out);
    return;
  }
  float lanes[W] = {};
  if (beta != 0.0f) {
    std::memcpy(lanes, c, size_t(w) * sizeof(float));
    out += beta * vec::load_native(lanes);
  }
  vec::store_native(lanes, out);
  std::memcpy(c, lanes, size_t(w) * sizeof(float));
}

// C rows [0, MR) by columns [0, cols) (cols <= NV * W, more than
// (NV - 1) * W) of alpha * A B + beta * C, A(r, p) at
// a[r * a_row + p * a_col], B's row p at b + p * ldb with NV whole vectors.
template <int MR, int NV>
void tile(int64_t k,
          const float* a,
          int64_t a_row,
          int64_t a_col,
          const float* b,
          int64_t ldb,
          float alpha,
          float beta,
          float* c,
          int64_t ldc,
          int64_t cols) {
  // The loops over the tile are unrolled whole, so that the accumulators
  // live in registers from start to end (GCC otherwise kept the array on
  // the stack around the k loop: 24 stores and 12 loads a tile, against
  // 16 steps of k in attention's products).
  Vec acc[MR][NV];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[r][v] = Vec{};
  }
  for (int64_t p = 0; p < k; ++p) {
    Vec bp[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bp[v] = vec::load_native(b + p * ldb + v * W);
    const float* ap = a + p * a_col;
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const Vec ar = splat(ap[r * a_row]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] = vec::fmadd(ar, bp[v], acc[r][v]);
    }
  }
  const int64_t last = cols - (NV - 1) * W;  // lanes of the last vector
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    float* cr = c + r * ldc;
#pragma GCC unroll 4
    for (int v = 0; v + 1 < NV; ++v) store_lanes(cr + v * W, acc[r][v], alpha, beta, W);
    store_lanes(cr + (NV - 1) * W, acc[r][NV - 1], alpha, beta, last);
  }
}

// Rows [0, rows) (< MR) of a column block: the tile of that many rows.
template <int NV, int MR = tile_rows<NV>() - 1>
void edge_tile(int64_t rows,
               int64_t k,
               const float* a,
               int64_t a_row,
               int64_t a_col,
               const float* b,
               int64_t ldb,
               float alpha,
               float beta,
               float* c,
               int64_t ldc,
               int64_t cols) {
  if constexpr (MR > 0) {
    if (rows == MR) {
      tile<MR, NV>(k, a, a_row, a_col, b, ldb, alpha, beta, c, ldc, cols);
    } else {
      edge_tile<NV, MR - 1>(rows, k, a, a_row, a_col, b, ldb, alpha, beta, c, ldc, cols);
    }
  }
}

// All rows of C's columns [0, cols), cols <= NV * W.
template <int NV>
void column_block(int64_t m,
                  int64_t k,
                  const float* a,
                  int64_t a_row,
                  int64_t a_col,
                  const float* b,
                  int64_t ldb,
                  float alpha,
                  float beta,
                  float* c,
                  int64_t ldc,
                  int64_t cols) {
  constexpr int MR = tile_rows<NV>();
  int64_t i = 0;
  for (; i + MR <= m; i += MR) {
    tile<MR, NV>(k, a + i * a_row, a_row, a_col, b, ldb, alpha, beta, c + i * ldc, ldc, cols);
  }
  if (i < m) {
    edge_tile<NV>(m - i, k, a + i * a_row, a_row, a_col, b, ldb, alpha, beta, c + i * ldc, ldc,
                  cols);
  }
}

}  // namespace

bool openblas_packs_small_sgemm() {
  static const bool packs = [] {
    // All but the kernel families with a small-matrix sgemm path of their own.
    const std::string_view core = openblas_get_corename();
    return core != "SkylakeX" && core != "Cooperlake" && core != "SapphireRapids";
  }();
  return packs;
}

bool prefers_small_sgemm(int64_t m, int64_t n, int64_t k) {
  constexpr double kMaxMacs = double(1 << 16);
  return double(m) * double(n) * double(k) <= kMaxMacs && openblas_packs_small_sgemm();
}

void sgemm_small(const GemmArgs<float>& g) {
  // In locals: C's stores could otherwise alias g's scalars, and B may be
  // replaced by a panel.
  const bool trans_a = g.trans_a, trans_b = g.trans_b;
  const int64_t m = g.m, n = g.n, k = g.k, lda = g.lda, ldc = g.ldc;
  const float alpha = g.alpha, beta = g.beta;
  const float* const a = g.a;
  const float* b = g.b;
  int64_t ldb = g.ldb;
  float* const c = g.c;
  // B as row-major (k, n) rows of whole vectors: in place, or a padded panel.
  const int64_t n_padded = (n + W - 1) / W * W;
  if (trans_b || n_padded != n || (ldb % kAliasingFloats == 0 && m > tile_rows<kMaxVectors>())) {
    thread_local std::vector<float> panel;
    if (panel.size() < size_t(k * n_padded)) panel.resize(size_t(k * n_padded));
    if (trans_b) {
      transpose_matrix(b, ldb, panel.data(), n_padded, n, k);
    } else {
      for (int64_t p = 0; p < k; ++p) std::copy_n(b + p * ldb, n, panel.data() + p * n_padded);
    }
    for (int64_t p = 0; p < k; ++p) {
      std::fill(panel.data() + p * n_padded + n, panel.data() + (p + 1) * n_padded, 0.0f);
    }
    b = panel.data();
    ldb = n_padded;
  }
  const int64_t a_row = trans_a ? 1 : lda, a_col = trans_a ? lda : 1;
  constexpr int64_t kBlock = kMaxVectors * W;
  int64_t j = 0;
  for (; j + kBlock <= n; j += kBlock) {
    column_block<kMaxVectors>(m, k, a, a_row, a_col, b + j, ldb, alpha, beta, c + j, ldc, kBlock);
  }
  switch ((n - j + W - 1) / W) {  // the last, narrower block's vectors
    case 1:
      column_block<1>(m, k, a, a_row, a_col, b + j, ldb, alpha, beta, c + j, ldc, n - j);
      break;
    case 2:
      column_block<2>(m, k, a, a_row, a_col, b + j, ldb, alpha, beta, c + j, ldc, n - j);
      break;
    case 3:  // a part of a vector past two whole ones
      if constexpr (kMaxVectors >= 3) {
        column_block<3>(m, k, a, a_row, a_col, b + j, ldb, alpha, beta, c + j, ldc, n - j);
      }
      break;
    case 4:  // past three (AArch64's 4-float vectors)
      if constexpr (kMaxVectors >= 4) {
        column_block<4>(m, k, a, a_row, a_col, b + j, ldb, alpha, beta, c + j, ldc, n - j);
      }
      break;
    default:
      break;
  }
}

}  // namespace STRIDE_CPU_NAMESPACE
