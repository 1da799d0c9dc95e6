// What the GEMM's planning (blas.cpp) shares with the bf16 GEMM
// (gemm_bf16.cpp), which checks its arguments, pins the libraries to one
// thread and cuts its work into tiles and chunks by the same rules, so
// that both stay deterministic the same way (Note [Deterministic GEMM] in
// blas.cpp). Internal to those files.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "backends/cpu/blas.h"
#include "backends/cpu/capability.h"
#include "core/check.h"

namespace STRIDE_CPU_NAMESPACE {

// Throws ValueError ("[op] ...") for the sizes and leading dimensions that
// blas.h's contract rejects.
template <class In, class Out>
void check_args(const char* op, const GemmArgs<In, Out>& g) {
  const int64_t m = g.m, n = g.n, k = g.k, lda = g.lda, ldb = g.ldb, ldc = g.ldc;
  STRIDE_CHECK(m >= 0 && n >= 0 && k >= 0, ValueError, "[", op,
               "] expected non-negative sizes; got m=", m, ", n=", n, ", k=", k, ".");
  // OpenBLAS takes 32-bit sizes.
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  STRIDE_CHECK(m <= kMax && n <= kMax && k <= kMax && lda <= kMax && ldb <= kMax && ldc <= kMax,
               ValueError, "[", op,
               "] sizes and leading dimensions above 2^31 - 1 are not supported; got m=", m,
               ", n=", n, ", k=", k, ", lda=", lda, ", ldb=", ldb, ", ldc=", ldc, ".");
  // Leading dimensions matter only for matrices that are touched.
  if (m == 0 || n == 0) return;
  STRIDE_CHECK(ldc >= n, ValueError, "[", op, "] expected ldc >= n; got ldc=", ldc, ", n=", n, ".");
  if (k == 0) return;
  const bool trans_a = g.trans_a, trans_b = g.trans_b;
  const int64_t min_lda = trans_a ? m : k;
  const int64_t min_ldb = trans_b ? k : n;
  STRIDE_CHECK(lda >= min_lda, ValueError, "[", op, "] expected lda >= ", (trans_a ? "m" : "k"),
               " (a is ", (trans_a ? "transposed" : "not transposed"), "); got lda=", lda, ", ",
               (trans_a ? "m" : "k"), "=", min_lda, ".");
  STRIDE_CHECK(ldb >= min_ldb, ValueError, "[", op, "] expected ldb >= ", (trans_b ? "k" : "n"),
               " (b is ", (trans_b ? "transposed" : "not transposed"), "); got ldb=", ldb, ", ",
               (trans_b ? "k" : "n"), "=", min_ldb, ".");
}

// check_args for a batch, plus the batch's own rules.
template <class In, class Out>
void check_batch_args(const char* op, const GemmArgs<In, Out>& g, const GemmBatch& batch) {
  STRIDE_CHECK(batch.count >= 0, ValueError, "[", op, "] expected batch >= 0; got ", batch.count,
               ".");
  check_args(op, g);
  STRIDE_CHECK(batch.count <= 1 || g.m == 0 || g.n == 0 || batch.stride_c != 0, ValueError, "[", op,
               "] expected stride_c != 0 when batch > 1 (the outputs would alias); got batch=",
               batch.count, ".");
}

// m * n * k, saturating: each size fits 31 bits, their product may not.
inline int64_t macs_of(int64_t m, int64_t n, int64_t k) {
  const double macs = double(m) * double(n) * double(k);
  return macs >= 9e18 ? std::numeric_limits<int64_t>::max() : int64_t(macs);
}

// C = beta * C, writing exact zeros when beta == 0 (C may hold NaN).
template <class T>
void scale_c(int64_t m, int64_t n, T beta, T* c, int64_t ldc) {
  if (beta == T(1)) return;
  for (int64_t i = 0; i < m; ++i) {
    T* row = c + i * ldc;
    if (beta == T(0)) {
      std::fill(row, row + n, T(0));
    } else {
      for (int64_t j = 0; j < n; ++j) row[j] *= beta;
    }
  }
}

// oneDNN sizes its thread team with omp_get_max_threads(), a setting of the
// calling thread. parallel_for's workers keep it at 1 (Note [Thread pool]);
// pinning it to 1 on the calling thread for the duration of a GEMM keeps
// every oneDNN call single-threaded there too.
class SingleThreadedLibraries {
 public:
  SingleThreadedLibraries();
  ~SingleThreadedLibraries();
  SingleThreadedLibraries(const SingleThreadedLibraries&) = delete;
  SingleThreadedLibraries& operator=(const SingleThreadedLibraries&) = delete;

 private:
  int saved_;
};

// Tiles of C, (bm, bn) each, chosen from the shape alone (Note [Deterministic
// GEMM]). Small GEMMs stay whole; medium ones are halved so two threads share
// them; large ones are cut into tiles of at most 2^22 multiply-adds, or into
// at most ~64 tiles, halving the longer side while it exceeds 32. At the
// model shapes this keeps up with oneDNN's own threading (measured: see
// bench/RESULTS.md, GEMM backends).
struct Tiling {
  int64_t bm, bn;
};

inline constexpr int64_t kMaxTiles = 64;
inline constexpr int64_t kMaxTileMacs = int64_t(1) << 22;

inline Tiling tiling_for(int64_t m, int64_t n, int64_t k, int64_t max_tile = kMaxTileMacs) {
  const int64_t macs = macs_of(m, n, k);
  // A few rows (decoding one token) make the GEMM a matrix-vector product,
  // bound by reading B: worth splitting at a much smaller size.
  const int64_t floor = m <= 4 ? int64_t(1) << 16 : int64_t(1) << 20;
  const int64_t target = std::max(std::clamp<int64_t>(macs / 2, floor, max_tile), macs / kMaxTiles);
  auto halve = [](int64_t x) { return ((x + 1) / 2 + 15) / 16 * 16; };
  Tiling t{m, n};
  while (macs_of(t.bm, t.bn, k) > target) {
    if (t.bm >= t.bn && t.bm > 32) {
      t.bm = halve(t.bm);
    } else if (t.bn > 32) {
      t.bn = halve(t.bn);
    } else {
      break;
    }
  }
  return t;
}

// The GEMM of the tile of C whose first element is (i0, j0): the tile's
// rows of op(A), its columns of op(B), its block of C.
template <class In, class Out>
GemmArgs<In, Out> tile_of(const GemmArgs<In, Out>& g, const Tiling& t, int64_t i0, int64_t j0) {
  GemmArgs<In, Out> tile = g;
  tile.m = std::min(t.bm, g.m - i0);
  tile.n = std::min(t.bn, g.n - j0);
  tile.a = g.trans_a ? g.a + i0 : g.a + i0 * g.lda;
  tile.b = g.trans_b ? g.b + j0 * g.ldb : g.b + j0;
  tile.c = g.c + i0 * g.ldc + j0;
  return tile;
}

// The i-th GEMM of a batch.
template <class In, class Out>
GemmArgs<In, Out> matrix_of(const GemmArgs<In, Out>& g, const GemmBatch& batch, int64_t i) {
  GemmArgs<In, Out> one = g;
  one.a = g.a + i * batch.stride_a;
  one.b = g.b + i * batch.stride_b;
  one.c = g.c + i * batch.stride_c;
  return one;
}

// Per-matrix multiply-adds from which a batch runs one tiled GEMM after the
// other instead of spreading matrices over threads.
inline constexpr int64_t kLargeMacs = int64_t(1) << 22;
// Matrices of a batch are grouped into chunks of about this many
// multiply-adds, the unit of work of a thread.
inline constexpr int64_t kChunkMacs = int64_t(1) << 18;

// The matrices of a batch per chunk, for matrices of `macs` multiply-adds.
inline int64_t chunk_size(int64_t macs, int64_t count) {
  return std::clamp<int64_t>(kChunkMacs / std::max<int64_t>(macs, 1), 1, count);
}

}  // namespace STRIDE_CPU_NAMESPACE
