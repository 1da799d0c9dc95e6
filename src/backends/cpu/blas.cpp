#include "backends/cpu/blas.h"

#include <cblas.h>
#include <dnnl.h>
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <dnnl.hpp>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>

#include "backends/cpu/small_gemm.h"
#include "backends/cpu/transpose.h"
#include "backends/cpu/vec_math.h"
#include "core/check.h"
#include "core/parallel_internal.h"
#include "stride/parallel.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

// Note [Deterministic GEMM]
// docs/design.md invariant 9 asks for bit-identical results at every thread count.
// The libraries' own threading does not give it: from 8 threads on, oneDNN
// splits the k dimension of e.g. 128x128x4096 across threads and adds the
// parts, which changes the rounding (its sgemm and its matmul primitive
// alike). So every library call here runs on one thread, on a piece of the
// work fixed by the shape alone -- a tile of C, a chunk of a batch -- and
// stride's parallel_for spreads the pieces over its threads. Each element of
// C then comes from the same call whatever the thread count.

// Note [GEMM backend choice]
// Each library runs the GEMMs it is fastest at (measured: bench/RESULTS.md,
// GEMM backends; the mid-size comparison on packing kernels is in
// bench/HISTORY.md):
//  - float32, GEMMs of 2^20 multiply-adds (~100^3) and more: oneDNN's
//    dnnl_sgemm, which outruns OpenBLAS there.
//  - float32, smaller GEMMs: OpenBLAS, since dnnl_sgemm has a fixed cost per
//    call whatever the size, which small GEMMs do not amortise. But where
//    OpenBLAS's kernel packs even small matrices (its Haswell and Zen
//    families, openblas_packs_small_sgemm()), the smallest GEMMs run in
//    stride's own kernel (Note [Small GEMM]) and the rest in oneDNN, which
//    beats those packing kernels on mid-size shapes such as the large
//    Llama's attention blocks (64 x 64 x 64 to 64 x 256 x 64).
//  - float32 batches of small A @ B^T with k < 64 (attention scores): oneDNN's
//    batched matmul primitive, cached by shape; OpenBLAS is slow there.
//  - float64 (gradient checks): OpenBLAS, as oneDNN has no double GEMM.
// Threads (docs/design.md: one pool, no oversubscription): OpenBLAS's pthread pool
// is kept at one thread and oneDNN sees one OpenMP thread during a call; all
// parallelism is stride's parallel_for (Note [Deterministic GEMM]). Not
// OpenBLAS's serial build, though it has no threads: Debian builds it without
// USE_LOCKING, so calls from two threads at once share its buffers, which
// corrupts their results. The pthread build's server thread costs only a
// short spin after the library loads.

namespace stride::cpu {
namespace {

void check_args(const char* op,
                bool trans_a,
                bool trans_b,
                int64_t m,
                int64_t n,
                int64_t k,
                int64_t lda,
                int64_t ldb,
                int64_t ldc) {
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
void check_batch_args(const char* op,
                      int64_t batch,
                      bool trans_a,
                      bool trans_b,
                      int64_t m,
                      int64_t n,
                      int64_t k,
                      int64_t lda,
                      int64_t ldb,
                      int64_t ldc,
                      int64_t stride_c) {
  STRIDE_CHECK(batch >= 0, ValueError, "[", op, "] expected batch >= 0; got ", batch, ".");
  check_args(op, trans_a, trans_b, m, n, k, lda, ldb, ldc);
  STRIDE_CHECK(
      batch <= 1 || m == 0 || n == 0 || stride_c != 0, ValueError, "[", op,
      "] expected stride_c != 0 when batch > 1 (the outputs would alias); got batch=", batch, ".");
}

// m * n * k, saturating: each size fits 31 bits, their product may not.
int64_t macs_of(int64_t m, int64_t n, int64_t k) {
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
  SingleThreadedLibraries() : saved_(omp_get_max_threads()) {
    if (saved_ != 1) omp_set_num_threads(1);
    // The setter must not race with OpenBLAS calls, so only outside regions.
    if (!detail::in_parallel_region() && openblas_get_num_threads() != 1) {
      openblas_set_num_threads(1);
    }
  }
  ~SingleThreadedLibraries() {
    if (saved_ != 1) omp_set_num_threads(saved_);
  }
  SingleThreadedLibraries(const SingleThreadedLibraries&) = delete;
  SingleThreadedLibraries& operator=(const SingleThreadedLibraries&) = delete;

 private:
  int saved_;
};

// OpenBLAS starts with one thread per core; stride never lets it use them.
[[maybe_unused]] const bool openblas_single_threaded = [] {
  openblas_set_num_threads(1);
  return true;
}();

void sgemm_onednn(bool trans_a,
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
                  int64_t ldc) {
  const dnnl_status_t status = dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha,
                                          a, lda, b, ldb, beta, c, ldc);
  STRIDE_ASSERT(status == dnnl_success, "dnnl_sgemm returned status ", int(status));
}

void gemm_openblas(bool trans_a,
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
                   int64_t ldc) {
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, blasint(m), blasint(n), blasint(k), alpha, a,
              blasint(lda), b, blasint(ldb), beta, c, blasint(ldc));
}

void gemm_openblas(bool trans_a,
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
                   int64_t ldc) {
  cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, blasint(m), blasint(n), blasint(k), alpha, a,
              blasint(lda), b, blasint(ldb), beta, c, blasint(ldc));
}

// Note [Decoding GEMM]
// Decoding one token multiplies 1-4 rows by every weight matrix: the GEMM is
// bound by reading B once, and the libraries' GEMM setup costs more than the
// arithmetic (OpenBLAS's sgemm and oneDNN's matmul take several times as
// long as a plain pass over B). So rows of A up to kDecodeRows are done
// here, one pass over B: with B transposed (a linear layer's (out, in)
// weight) as dot products over contiguous rows, otherwise as row updates.
// Each C element is summed in a fixed order whatever the thread count.
constexpr int64_t kDecodeRows = 4;

using vec::Vec16f;
using vec::Vec4f;
using vec::Vec8f;

inline float widen(float x) {
  return x;
}
inline float widen(BFloat16 x) {
  return float(x);
}

// A bfloat16 dot product on CPUs without vdpbf16ps: four vector accumulators
// (independent FMA chains), then the tail, summed in a fixed order.
template <class TA, class TB>
float dot(const TA* a, const TB* b, int64_t k) {
  vec::Vec16f acc[4] = {};
  int64_t p = 0;
  for (; p + 64 <= k; p += 64) {
    for (int v = 0; v < 4; ++v) acc[v] += vec::load(a + p + 16 * v) * vec::load(b + p + 16 * v);
  }
  for (; p + 16 <= k; p += 16) acc[0] += vec::load(a + p) * vec::load(b + p);
  const vec::Vec16f sum = (acc[0] + acc[1]) + (acc[2] + acc[3]);
  float total = 0;
  for (int l = 0; l < 16; ++l) total += sum[l];
  for (; p < k; ++p) total += widen(a[p]) * widen(b[p]);
  return total;
}

// The lane sums of four vectors, {sum(v0), sum(v1), sum(v2), sum(v3)}, each
// by the same tree of adds. (Vector-extension shuffles: GCC 12 warns on the
// _mm512_unpack*/extract intrinsics, -Wmaybe-uninitialized.)
inline Vec4f lane_sums4(Vec16f v0, Vec16f v1, Vec16f v2, Vec16f v3) {
  // Within each block of four lanes: {v0, v1, v0, v1} pairs, then {v0, v1, v2, v3}.
  const Vec16f s01 =
      __builtin_shufflevector(v0, v1, 0, 16, 1, 17, 4, 20, 5, 21, 8, 24, 9, 25, 12, 28, 13, 29) +
      __builtin_shufflevector(v0, v1, 2, 18, 3, 19, 6, 22, 7, 23, 10, 26, 11, 27, 14, 30, 15, 31);
  const Vec16f s23 =
      __builtin_shufflevector(v2, v3, 0, 16, 1, 17, 4, 20, 5, 21, 8, 24, 9, 25, 12, 28, 13, 29) +
      __builtin_shufflevector(v2, v3, 2, 18, 3, 19, 6, 22, 7, 23, 10, 26, 11, 27, 14, 30, 15, 31);
  const Vec16f s =
      __builtin_shufflevector(s01, s23, 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29) +
      __builtin_shufflevector(s01, s23, 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31);
  // Then the four blocks.
  const Vec8f h = __builtin_shufflevector(s, s, 0, 1, 2, 3, 4, 5, 6, 7) +
                  __builtin_shufflevector(s, s, 8, 9, 10, 11, 12, 13, 14, 15);
  return __builtin_shufflevector(h, h, 0, 1, 2, 3) + __builtin_shufflevector(h, h, 4, 5, 6, 7);
}

// lane_sums4 for 8-lane vectors, by the same tree.
inline Vec4f lane_sums4(Vec8f v0, Vec8f v1, Vec8f v2, Vec8f v3) {
  const Vec8f s01 = __builtin_shufflevector(v0, v1, 0, 8, 1, 9, 4, 12, 5, 13) +
                    __builtin_shufflevector(v0, v1, 2, 10, 3, 11, 6, 14, 7, 15);
  const Vec8f s23 = __builtin_shufflevector(v2, v3, 0, 8, 1, 9, 4, 12, 5, 13) +
                    __builtin_shufflevector(v2, v3, 2, 10, 3, 11, 6, 14, 7, 15);
  const Vec8f s = __builtin_shufflevector(s01, s23, 0, 1, 8, 9, 4, 5, 12, 13) +
                  __builtin_shufflevector(s01, s23, 2, 3, 10, 11, 6, 7, 14, 15);
  return __builtin_shufflevector(s, s, 0, 1, 2, 3) + __builtin_shufflevector(s, s, 4, 5, 6, 7);
}

// Note [Decode prefetch]
// A decode GEMV reads its weight from memory once, yet plain dot products
// run well behind a bare sum over the same bytes, and holding x in registers
// instead of reloading it with each weight line closes only part of the gap
// (the likely cause: loads retire in order, and the reloads of x take
// load-queue entries that would otherwise keep more weight lines in flight).
// So each 64-float step also asks for the lines 16 KiB ahead of it, into L2
// (prefetcht1), and a tile asks for its first 16 KiB up front: nearer, or
// into L1, the lines arrive too late; much further, they evict lines before
// use. With it a GEMV runs as fast as the bare sum (measured: see
// bench/HISTORY.md, with the distances tried).
constexpr uintptr_t kPrefetchAheadBytes = 16 * 1024;

// Asks for the cache line at `address` into L2 (prefetcht1 on x86).
inline void prefetch_l2(uintptr_t address) {
  __builtin_prefetch(reinterpret_cast<const void*>(address), 0, 2);
}

// Asks for the cache lines of [from, end) that lie within kPrefetchAheadBytes
// of from, into L2: a tile's first lines, which no step is ahead of.
inline void prefetch_start(const float* from, uintptr_t end) {
  const uintptr_t stop = std::min(uintptr_t(from) + kPrefetchAheadBytes, end);
  for (uintptr_t line = uintptr_t(from); line < stop; line += 64) {
    prefetch_l2(line);
  }
}

// The decode GEMV's vectors: those of the CPU's registers (GCC lowers the
// shuffles of lane_sums4 on 16-lane vectors without AVX-512 to scalar moves
// through the stack).
using DotVec = vec::NativeVec;
constexpr int64_t kDotLanes = vec::kNativeLanes;

// The first n (< kDotLanes) floats from p, the other lanes 0.
inline DotVec load_dot_partial(const float* p, int64_t n) {
#if defined(__AVX512F__)
  return vec::load_partial(p, n);
#else
  DotVec v{};
  std::memcpy(&v, p, size_t(n) * sizeof(float));
  return v;
#endif
}

// The kDotLanes lane partial sums of a float32 dot product of length k: four
// FMA chains over steps of four vectors, then single vectors and a partial
// tail, added in a fixed order. Each four-vector step asks for the lines
// kPrefetchAheadBytes past it in b when they lie before `end` (Note [Decode
// prefetch]).
inline DotVec dot_lanes(const float* a, const float* b, int64_t k, uintptr_t end) {
  constexpr int64_t kStep = 4 * kDotLanes;
  constexpr uintptr_t kStepBytes = uintptr_t(kStep) * sizeof(float);
  DotVec acc[4] = {};
  int64_t p = 0;
  for (; p + kStep <= k; p += kStep) {
    const uintptr_t ahead = uintptr_t(b + p) + kPrefetchAheadBytes;
    if (ahead + kStepBytes - 64 < end) {
      for (uintptr_t line = 0; line < kStepBytes; line += 64) prefetch_l2(ahead + line);
    }
    for (int v = 0; v < 4; ++v) {
      acc[v] = vec::fmadd(vec::load_native(a + p + kDotLanes * v),
                          vec::load_native(b + p + kDotLanes * v), acc[v]);
    }
  }
  for (; p + kDotLanes <= k; p += kDotLanes) {
    acc[0] = vec::fmadd(vec::load_native(a + p), vec::load_native(b + p), acc[0]);
  }
  if (p < k)
    acc[1] = vec::fmadd(load_dot_partial(a + p, k - p), load_dot_partial(b + p, k - p), acc[1]);
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

// R (1 to 4) float32 dot products of a with consecutive rows of b, times
// alpha, into out[0..R). Each row is read whole before the next (one
// sequential stream, as the hardware prefetcher likes it, rather than four
// interleaved ones), and the R rows share one reduction, which costs less
// than reducing each row's lanes on its own. A row's sum does not depend on
// R.
template <int R>
void dot_rows(float alpha,
              const float* a,
              const float* b,
              int64_t ldb,
              int64_t k,
              uintptr_t end,
              float* out) {
  DotVec sums[4];
  for (int r = 0; r < 4; ++r) sums[r] = r < R ? dot_lanes(a, b + r * ldb, k, end) : sums[0];
  const Vec4f total = lane_sums4(sums[0], sums[1], sums[2], sums[3]);
  for (int r = 0; r < R; ++r) out[r] = alpha * total[r];
}

#ifdef __AVX512BF16__
// bf16 x bf16: vdpbf16ps multiplies 32 pairs exactly and adds them into 16
// float lanes, twice the rate of widening first.
template <>
float dot(const BFloat16* a, const BFloat16* b, int64_t k) {
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  int64_t p = 0;
  for (; p + 64 <= k; p += 64) {
    acc0 = _mm512_dpbf16_ps(acc0, __m512bh(_mm512_loadu_si512(a + p)),
                            __m512bh(_mm512_loadu_si512(b + p)));
    acc1 = _mm512_dpbf16_ps(acc1, __m512bh(_mm512_loadu_si512(a + p + 32)),
                            __m512bh(_mm512_loadu_si512(b + p + 32)));
  }
  for (; p + 32 <= k; p += 32) {
    acc0 = _mm512_dpbf16_ps(acc0, __m512bh(_mm512_loadu_si512(a + p)),
                            __m512bh(_mm512_loadu_si512(b + p)));
  }
  // Summed by hand: GCC 12's _mm512_reduce_add_ps warns (-Wmaybe-uninitialized).
  float lanes[16];
  _mm512_storeu_ps(lanes, _mm512_add_ps(acc0, acc1));
  float total = 0;
  for (float lane : lanes) total += lane;
  for (; p < k; ++p) total += float(a[p]) * float(b[p]);
  return total;
}
#endif

// C (m <= kDecodeRows, n) = alpha * A (m, k) @ op(B), A row-major (beta = 0).
template <class TA, class TB>
void gemm_decode(bool trans_b,
                 int64_t m,
                 int64_t n,
                 int64_t k,
                 float alpha,
                 const TA* a,
                 int64_t lda,
                 const TB* b,
                 int64_t ldb,
                 float* c,
                 int64_t ldc) {
  if (trans_b) {
    if constexpr (std::is_same_v<TA, float> && std::is_same_v<TB, float>) {
      const auto end = uintptr_t(b + (n - 1) * ldb + k);  // past B's last row
      prefetch_start(b, end);
      int64_t j = 0;
      for (; j + 4 <= n; j += 4) {
        for (int64_t i = 0; i < m; ++i)
          dot_rows<4>(alpha, a + i * lda, b + j * ldb, ldb, k, end, c + i * ldc + j);
      }
      for (; j < n; ++j) {
        for (int64_t i = 0; i < m; ++i)
          dot_rows<1>(alpha, a + i * lda, b + j * ldb, ldb, k, end, c + i * ldc + j);
      }
    } else {
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t i = 0; i < m; ++i) {
          c[i * ldc + j] = alpha * dot(a + i * lda, b + j * ldb, k);
        }
      }
    }
    return;
  }
  // Row updates: C's row stays in L1 while the rows of B stream past.
  for (int64_t i = 0; i < m; ++i) {
    float* ci = c + i * ldc;
    std::fill(ci, ci + n, 0.0f);
    for (int64_t p = 0; p < k; ++p) {
      const float x = widen(a[i * lda + p]);
      const TB* bp = b + p * ldb;
      for (int64_t j = 0; j < n; ++j) ci[j] += x * widen(bp[j]);
    }
    if (alpha != 1.0f) {
      for (int64_t j = 0; j < n; ++j) ci[j] *= alpha;
    }
  }
}

// Float GEMMs (or tiles) below this many multiply-adds go to OpenBLAS where
// its kernel has a small-matrix path (Note [GEMM backend choice]).
constexpr int64_t kSmallMacs = int64_t(1) << 20;

// One GEMM on the calling thread, by one library call (or none when k == 0
// or alpha == 0, cases where C = beta * C and A, B must not be read).
template <class T>
void gemm_serial(bool trans_a,
                 bool trans_b,
                 int64_t m,
                 int64_t n,
                 int64_t k,
                 T alpha,
                 const T* a,
                 int64_t lda,
                 const T* b,
                 int64_t ldb,
                 T beta,
                 T* c,
                 int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0 || alpha == T(0)) {
    scale_c(m, n, beta, c, ldc);
    return;
  }
  if constexpr (std::is_same_v<T, float>) {
    if (m <= kDecodeRows && !trans_a && beta == 0.0f) {
      gemm_decode(trans_b, m, n, k, alpha, a, lda, b, ldb, c, ldc);
      return;
    }
    if (prefers_small_sgemm(m, n, k)) {
      sgemm_small(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
      return;
    }
    if (macs_of(m, n, k) >= kSmallMacs || openblas_packs_small_sgemm()) {
      sgemm_onednn(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
      return;
    }
  }
  gemm_openblas(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// Tiles of C, (bm, bn) each, chosen from the shape alone (Note [Deterministic
// GEMM]). Small GEMMs stay whole; medium ones are halved so two threads share
// them; large ones are cut into tiles of at most 2^22 multiply-adds, or into
// at most ~64 tiles, halving the longer side while it exceeds 32. At the
// model shapes this keeps up with oneDNN's own threading (measured: see
// bench/RESULTS.md, GEMM backends).
struct Tiling {
  int64_t bm, bn;
};

constexpr int64_t kMaxTiles = 64;
constexpr int64_t kMaxTileMacs = int64_t(1) << 22;

Tiling tiling_for(int64_t m, int64_t n, int64_t k, int64_t max_tile = kMaxTileMacs) {
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

// A growable, 64-byte aligned buffer; each of its users keeps one per thread.
class ScratchBuffer {
 public:
  ScratchBuffer() = default;
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;
  ~ScratchBuffer() { std::free(data_); }

  // At least `bytes`; the contents are not kept when it grows.
  void* get(size_t bytes, const char* what) {
    if (bytes > size_) {
      std::free(data_);
      const size_t rounded = (bytes + 63) / 64 * 64;
      data_ = std::aligned_alloc(64, rounded);
      size_ = data_ != nullptr ? rounded : 0;
      STRIDE_ASSERT(data_ != nullptr, "out of memory for a ", bytes, "-byte ", what);
    }
    return data_;
  }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

// Per-thread buffers for copies of A and B (Notes [Transposed B], [Aliasing
// leading dimensions]). Tiles only read them, so the calling thread's
// buffers serve all of them.
float* copy_of_a_buffer(int64_t elements) {
  thread_local ScratchBuffer buffer;
  return static_cast<float*>(buffer.get(size_t(elements) * sizeof(float), "copy of A"));
}
float* copy_of_b_buffer(int64_t elements) {
  thread_local ScratchBuffer buffer;
  return static_cast<float*>(buffer.get(size_t(elements) * sizeof(float), "copy of B"));
}

// Note [Aliasing leading dimensions]
// oneDNN 2.6's AVX2 sgemm (CPUs without AVX-512) runs far below its speed
// when the leading dimension of B, or of A^T, is a multiple of 512 floats,
// 2 KiB: the rows it reads together then fall in few cache sets. Rows 1024
// floats long cost it most, rows 512 long less but still much; OpenBLAS's
// Zen kernel suffers far less. A not transposed loses little, less than
// copying it costs when it comes from memory (measured: see
// bench/HISTORY.md). The large Llama (d = 384, FFN 1024), the article's
// (1024-wide heads) and any d_model of 512 hit this in every layer. So
// there, a float GEMM whose B, or transposed A, has such a leading dimension
// copies it first into rows 16 floats longer (Note [Transposed B]'s copy of
// B^T too), k*n or m*k copies against m*n*k multiply-adds: only when the
// other side has at least kCopyMinRows.
constexpr int64_t kLdPadding = 16;
constexpr int64_t kCopyMinRows = 32;

bool onednn_is_avx2() {
  static const bool avx2 = [] {
    const auto isa = unsigned(dnnl_get_effective_cpu_isa());
    return (isa & unsigned(dnnl_cpu_isa_avx512_core)) != unsigned(dnnl_cpu_isa_avx512_core);
  }();
  return avx2;
}

bool aliases(int64_t ld) {
  return ld % kAliasingFloats == 0 && onednn_is_avx2();
}

// The leading dimension of a copy whose rows are `cols` floats long.
int64_t copy_ld(int64_t cols) {
  return aliases(cols) ? cols + kLdPadding : cols;
}

// Copies rows x cols floats, ld apart, into rows copy_ld(cols) apart.
const float* copy_rows(const float* src, int64_t ld, int64_t rows, int64_t cols, float* dst) {
  const int64_t dst_ld = copy_ld(cols);
  parallel_for(0, rows, std::max<int64_t>(1, (int64_t(1) << 14) / std::max<int64_t>(cols, 1)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t r = begin; r < end; ++r) {
                   std::memcpy(dst + r * dst_ld, src + r * ld, size_t(cols) * sizeof(float));
                 }
               });
  return dst;
}

// Note [Transposed B]
// Both libraries' sgemm slow down when B is transposed (a linear layer's
// (out, in) weight in x @ W^T) and k is long; at short k the two layouts run
// alike. The tiles of Note [Deterministic GEMM] are small enough for that to
// matter, e.g. for the article Llama's 1024 -> 128 projection. So a float
// GEMM with a transposed B, k >= 256 and at least 32 rows copies B^T once
// into a row-major (k, n) buffer (Note [Transposed copy]) that all its tiles
// share, and runs NN. The copy moves n*k floats against m*n*k multiply-adds,
// which does not pay with fewer rows (measured: see bench/RESULTS.md, GEMM
// backends, and bench/HISTORY.md).
constexpr int64_t kTransposeBMinK = 256;
constexpr int64_t kTransposeBMinRows = 32;

// Whether a float GEMM copies a transposed B first (Note [Transposed B]).
bool transposes_b(bool trans_b, int64_t m, int64_t n, int64_t k) {
  return trans_b && m >= kTransposeBMinRows && k >= kTransposeBMinK &&
         macs_of(m, n, k) >= kSmallMacs;
}

// Note [Split k]
// Tiles of C (Note [Deterministic GEMM]) are at most ~1/64 of the work, so
// when k is long against m x n -- weight gradients, where k counts tokens --
// they come out narrow and each library call packs long, thin panels (the
// large Llama's 384x384x4096 TN as 48 x 48 tiles, 4096 deep). Cutting k into
// chunks of kSplitDepth as well lets each chunk use tiles four times the
// area, which packs less per multiply-add (measured: see bench/HISTORY.md).
// So such a GEMM computes each chunk's product into a buffer of its own and
// then sums the chunks, in order, into C: the chunks and tiles are fixed by
// the shape, so the bits still do not depend on the thread count.
constexpr int64_t kSplitDepth = 1024;

// Whether a float GEMM splits k (Note [Split k]): the 64-tile rule, not the
// tile size cap, sets its tiles, and there are at least two chunks.
bool splits_k(int64_t m, int64_t n, int64_t k) {
  return k >= 2 * kSplitDepth && macs_of(m, n, k) / kMaxTiles > kMaxTileMacs;
}

void sgemm_split_k(bool trans_a,
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
                   int64_t ldc) {
  const int64_t chunks = (k + kSplitDepth - 1) / kSplitDepth;
  const Tiling t = tiling_for(m, n, kSplitDepth, macs_of(m, n, k) / kMaxTiles);
  const int64_t tiles_m = (m + t.bm - 1) / t.bm, tiles_n = (n + t.bn - 1) / t.bn;
  const int64_t tiles = tiles_m * tiles_n;
  thread_local ScratchBuffer buffer;
  float* const parts = static_cast<float*>(
      buffer.get(size_t(chunks * m * n) * sizeof(float), "GEMM's k-chunk products"));
  parallel_for(0, chunks * tiles, 1, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t chunk = task / tiles, tile = task % tiles;
      const int64_t p0 = chunk * kSplitDepth, depth = std::min(kSplitDepth, k - p0);
      const int64_t i0 = tile / tiles_n * t.bm, j0 = tile % tiles_n * t.bn;
      const float* a0 = trans_a ? a + p0 * lda + i0 : a + i0 * lda + p0;
      const float* b0 = trans_b ? b + j0 * ldb + p0 : b + p0 * ldb + j0;
      gemm_serial(trans_a, trans_b, std::min(t.bm, m - i0), std::min(t.bn, n - j0), depth, 1.0f, a0,
                  lda, b0, ldb, 0.0f, parts + chunk * m * n + i0 * n + j0, n);
    }
  });
  parallel_for(0, m, std::max<int64_t>(1, (int64_t(1) << 14) / (n * chunks)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t i = begin; i < end; ++i) {
                   float* ci = c + i * ldc;
                   for (int64_t j = 0; j < n; ++j) {
                     float sum = parts[i * n + j];
                     for (int64_t ch = 1; ch < chunks; ++ch) sum += parts[(ch * m + i) * n + j];
                     ci[j] = beta == 0.0f ? alpha * sum : alpha * sum + beta * ci[j];
                   }
                 }
               });
}

// One GEMM, its tiles spread over stride's threads.
template <class T>
void gemm_tiled(bool trans_a,
                bool trans_b,
                int64_t m,
                int64_t n,
                int64_t k,
                T alpha,
                const T* a,
                int64_t lda,
                const T* b,
                int64_t ldb,
                T beta,
                T* c,
                int64_t ldc) {
  if (m == 0 || n == 0) return;
  if constexpr (std::is_same_v<T, float>) {
    if (alpha != 0.0f && k > 0 && macs_of(m, n, k) >= kSmallMacs) {
      if (transposes_b(trans_b, m, n, k)) {
        float* bt = copy_of_b_buffer(k * copy_ld(n));
        transpose_matrix(b, ldb, bt, copy_ld(n), n, k);
        gemm_tiled(trans_a, false, m, n, k, alpha, a, lda, bt, copy_ld(n), beta, c, ldc);
        return;
      }
      if (aliases(ldb) && m >= kCopyMinRows) {
        const int64_t rows = trans_b ? n : k, cols = trans_b ? k : n;
        const float* copy = copy_rows(b, ldb, rows, cols, copy_of_b_buffer(rows * copy_ld(cols)));
        gemm_tiled(trans_a, trans_b, m, n, k, alpha, a, lda, copy, copy_ld(cols), beta, c, ldc);
        return;
      }
      if (trans_a && aliases(lda) && n >= kCopyMinRows) {
        const int64_t rows = trans_a ? k : m, cols = trans_a ? m : k;
        const float* copy = copy_rows(a, lda, rows, cols, copy_of_a_buffer(rows * copy_ld(cols)));
        gemm_tiled(trans_a, trans_b, m, n, k, alpha, copy, copy_ld(cols), b, ldb, beta, c, ldc);
        return;
      }
      if (splits_k(m, n, k)) {
        sgemm_split_k(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        return;
      }
    }
  }
  const Tiling t = tiling_for(m, n, k);
  const int64_t tiles_m = (m + t.bm - 1) / t.bm, tiles_n = (n + t.bn - 1) / t.bn;
  if (tiles_m * tiles_n == 1) {
    gemm_serial(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  parallel_for(0, tiles_m * tiles_n, 1, [&](int64_t begin, int64_t end) {
    for (int64_t tile = begin; tile < end; ++tile) {
      const int64_t i0 = tile / tiles_n * t.bm, j0 = tile % tiles_n * t.bn;
      const T* a0 = trans_a ? a + i0 : a + i0 * lda;
      const T* b0 = trans_b ? b + j0 * ldb : b + j0;
      gemm_serial(trans_a, trans_b, std::min(t.bm, m - i0), std::min(t.bn, n - j0), k, alpha, a0,
                  lda, b0, ldb, beta, c + i0 * ldc + j0, ldc);
    }
  });
}

// ---- oneDNN matmul primitive for batches of small float matrices ----

struct MatmulKey {
  int64_t batch, m, n, k, lda, ldb, ldc, stride_a, stride_b, stride_c;
  bool trans_a, trans_b;
  float alpha, beta;
  bool bf16 = false;  // bfloat16 A and B (C stays float32)
  bool operator==(const MatmulKey&) const = default;
};

struct MatmulKeyHash {
  size_t operator()(const MatmulKey& key) const {
    size_t h = 0;
    auto mix = [&h](auto v) {
      h ^= std::hash<decltype(v)>()(v) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    };
    for (int64_t v : {key.batch, key.m, key.n, key.k, key.lda, key.ldb, key.ldc, key.stride_a,
                      key.stride_b, key.stride_c}) {
      mix(v);
    }
    mix(key.trans_a);
    mix(key.trans_b);
    mix(key.alpha);
    mix(key.beta);
    mix(key.bf16);
    return h;
  }
};

// A matmul primitive for one key, or none when oneDNN offers only its
// gemm-based or reference implementation for that layout (no faster than a
// loop of GEMMs).
struct Matmul {
  dnnl::matmul primitive;
  dnnl::memory::desc a, b, c, scratchpad;
  bool usable = false;
};

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// Made while oneDNN sees one OpenMP thread (SingleThreadedLibraries), so the
// primitive is planned for one thread, and run on one.
std::shared_ptr<const Matmul> make_matmul(const MatmulKey& key) {
  using dims = dnnl::memory::dims;
  const auto f32 = dnnl::memory::data_type::f32;
  const auto ab_type = key.bf16 ? dnnl::memory::data_type::bf16 : f32;
  auto result = std::make_shared<Matmul>();
  // Stride 0 broadcasts: a batch dimension of 1.
  const int64_t batch_a = key.stride_a == 0 ? 1 : key.batch;
  const int64_t batch_b = key.stride_b == 0 ? 1 : key.batch;
  const int64_t sa = key.stride_a == 0 ? key.m * key.k : key.stride_a;
  const int64_t sb = key.stride_b == 0 ? key.k * key.n : key.stride_b;
  try {
    result->a = {dims{batch_a, key.m, key.k}, ab_type,
                 key.trans_a ? dims{sa, 1, key.lda} : dims{sa, key.lda, 1}};
    result->b = {dims{batch_b, key.k, key.n}, ab_type,
                 key.trans_b ? dims{sb, 1, key.ldb} : dims{sb, key.ldb, 1}};
    result->c = {dims{key.batch, key.m, key.n}, f32, dims{key.stride_c, key.ldc, 1}};
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    if (key.alpha != 1.0f) attr.set_output_scales(0, {key.alpha});
    if (key.beta != 0.0f) {
      dnnl::post_ops ops;
      ops.append_sum(key.beta);
      attr.set_post_ops(ops);
    }
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(result->a, result->b, result->c), attr,
                                          cpu_engine());
    const std::string impl = pd.impl_info_str();
    // A batch wants brgemm (gemm-based ones loop like gemm_serial would);
    // a bf16 GEMM takes any JIT kernel, never the reference one.
    const bool good = key.bf16 ? impl.rfind("ref", 0) != 0 : impl.rfind("brg", 0) == 0;
    if (!good) return result;
    result->scratchpad = pd.scratchpad_desc();
    result->primitive = dnnl::matmul(pd);
    result->usable = true;
  } catch (const dnnl::error&) {
    result->usable = false;
  }
  return result;
}

std::shared_ptr<const Matmul> get_matmul(const MatmulKey& key) {
  // Models use a handful of shapes; the cap only bounds pathological callers.
  constexpr size_t kMaxEntries = 256;
  static std::mutex mutex;
  static std::unordered_map<MatmulKey, std::shared_ptr<const Matmul>, MatmulKeyHash> cache;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  auto made = make_matmul(key);  // outside the lock: creation is slow
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() >= kMaxEntries) cache.clear();
  return cache.emplace(key, std::move(made)).first->second;
}

// Per-thread scratchpad for matmul primitives.
void* scratchpad(size_t bytes) {
  thread_local ScratchBuffer buffer;
  return buffer.get(bytes, "GEMM scratchpad");
}

// Runs a batch as one matmul primitive on the calling thread.
void run_matmul(const Matmul& mm, const void* a, const void* b, float* c) {
  dnnl::engine& engine = cpu_engine();
  thread_local dnnl::stream stream(engine);
  try {
    dnnl::memory am(mm.a, engine, const_cast<void*>(a));
    dnnl::memory bm(mm.b, engine, const_cast<void*>(b));
    dnnl::memory cm(mm.c, engine, c);
    dnnl::memory sm(mm.scratchpad, engine, scratchpad(mm.scratchpad.get_size()));
    mm.primitive.execute(stream, {{DNNL_ARG_SRC, am},
                                  {DNNL_ARG_WEIGHTS, bm},
                                  {DNNL_ARG_DST, cm},
                                  {DNNL_ARG_SCRATCHPAD, sm}});
    stream.wait();
  } catch (const dnnl::error& e) {
    STRIDE_ASSERT(false, "oneDNN matmul failed: ", e.what());
  }
}

// Per-matrix multiply-adds from which a batch runs one tiled GEMM after the
// other instead of spreading matrices over threads.
constexpr int64_t kLargeMacs = int64_t(1) << 22;
// Matrices of a batch are grouped into chunks of about this many
// multiply-adds, the unit of work of a thread.
constexpr int64_t kChunkMacs = int64_t(1) << 18;

// Whether a float batch goes to the matmul primitive (Note [GEMM backend
// choice]): small A @ B^T with a short inner dimension.
bool prefer_matmul_primitive(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k) {
  return !trans_a && trans_b && k < 64 && macs_of(m, n, k) < kSmallMacs;
}

template <class T>
void gemm_batched_impl(int64_t batch,
                       bool trans_a,
                       bool trans_b,
                       int64_t m,
                       int64_t n,
                       int64_t k,
                       T alpha,
                       const T* a,
                       int64_t lda,
                       int64_t stride_a,
                       const T* b,
                       int64_t ldb,
                       int64_t stride_b,
                       T beta,
                       T* c,
                       int64_t ldc,
                       int64_t stride_c) {
  check_batch_args("gemm_batched", batch, trans_a, trans_b, m, n, k, lda, ldb, ldc, stride_c);
  if (batch == 0 || m == 0 || n == 0) return;
  SingleThreadedLibraries single;
  const int64_t macs = macs_of(m, n, k);
  if (batch == 1 || macs >= kLargeMacs) {
    for (int64_t i = 0; i < batch; ++i) {
      gemm_tiled(trans_a, trans_b, m, n, k, alpha, a + i * stride_a, lda, b + i * stride_b, ldb,
                 beta, c + i * stride_c, ldc);
    }
    return;
  }
  const int64_t chunk = std::clamp<int64_t>(kChunkMacs / std::max<int64_t>(macs, 1), 1, batch);
  const int64_t chunks = (batch + chunk - 1) / chunk;
  if constexpr (std::is_same_v<T, float>) {
    if (k > 0 && alpha != 0.0f && stride_a >= 0 && stride_b >= 0 && stride_c > 0 &&
        prefer_matmul_primitive(trans_a, trans_b, m, n, k)) {
      // One primitive per chunk size: the full one and the last, shorter one.
      MatmulKey key{chunk,    m,        n,        k,       lda,     ldb,   ldc,
                    stride_a, stride_b, stride_c, trans_a, trans_b, alpha, beta};
      const std::shared_ptr<const Matmul> full = get_matmul(key);
      key.batch = batch - (chunks - 1) * chunk;
      const std::shared_ptr<const Matmul> last = get_matmul(key);
      if (full->usable && last->usable) {
        parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
          for (int64_t ch = begin; ch < end; ++ch) {
            const int64_t i = ch * chunk;
            run_matmul(ch == chunks - 1 ? *last : *full, a + i * stride_a, b + i * stride_b,
                       c + i * stride_c);
          }
        });
        return;
      }
    }
  }
  parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin * chunk; i < std::min(batch, end * chunk); ++i) {
      gemm_serial(trans_a, trans_b, m, n, k, alpha, a + i * stride_a, lda, b + i * stride_b, ldb,
                  beta, c + i * stride_c, ldc);
    }
  });
}

// ---- bfloat16 operands (autocast) ----

// One bf16 GEMM (or tile) on the calling thread, as a matmul primitive.
void gemm_bf16_serial(bool trans_a,
                      bool trans_b,
                      int64_t m,
                      int64_t n,
                      int64_t k,
                      const BFloat16* a,
                      int64_t lda,
                      const BFloat16* b,
                      int64_t ldb,
                      float* c,
                      int64_t ldc) {
  if (m <= kDecodeRows && !trans_a) {
    gemm_decode(trans_b, m, n, k, 1.0f, a, lda, b, ldb, c, ldc);
    return;
  }
  // Batch strides of 0 for A and B mean a batch of one; C needs a real one.
  const MatmulKey key{1, m, n, k, lda, ldb, ldc, 0, 0, m * ldc, trans_a, trans_b, 1.0f, 0.0f, true};
  const std::shared_ptr<const Matmul> mm = get_matmul(key);
  STRIDE_ASSERT(mm->usable, "no bf16 matmul kernel for ", m, "x", n, "x", k,
                " (callers check has_bf16_gemm() first)");
  run_matmul(*mm, a, b, c);
}

}  // namespace

bool has_bf16_gemm() {
  static const bool available = [] {
    SingleThreadedLibraries single;
    return get_matmul({1, 64, 64, 64, 64, 64, 64, 0, 0, 64 * 64, false, false, 1.0f, 0.0f, true})
        ->usable;
  }();
  return available;
}

bool prefers_bf16_gemm(int64_t batch, bool trans_a, int64_t m, int64_t n, int64_t k) {
  // Below ~2^19 multiply-adds oneDNN's per-call cost makes bf16 slower than
  // float32 (measured: bench/RESULTS.md, "Mixed precision").
  constexpr double kMinMacs = double(int64_t(1) << 19);
  if (!has_bf16_gemm()) return false;
  if (m <= kDecodeRows && !trans_a) return true;
  return double(batch) * double(m) * double(n) * double(k) >= kMinMacs;
}

void round_to_bf16(const float* src, BFloat16* dst, int64_t n) {
  // BFloat16::round, branch-free so that it vectorises: NaNs become quiet
  // NaNs, everything else rounds to nearest even.
  for (int64_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, src + i, 4);
    const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
    const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    dst[i].bits = uint16_t(nan ? (u >> 16) | 0x40u : rounded);
  }
}

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
                       int64_t stride_c) {
  check_batch_args("gemm_batched_bf16", batch, trans_a, trans_b, m, n, k, lda, ldb, ldc, stride_c);
  if (batch == 0 || m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < batch; ++i) scale_c(m, n, 0.0f, c + i * stride_c, ldc);
    return;
  }
  SingleThreadedLibraries single;
  const int64_t macs = macs_of(m, n, k);
  if (batch == 1 || macs >= kLargeMacs) {
    // Tiles of C as for float32 (Note [Deterministic GEMM]).
    // Tiles 4x larger than float32's: the bf16 kernels get through a tile
    // faster, so per-call costs weigh more on small tiles (measured: see
    // bench/RESULTS.md, "Mixed precision").
    const Tiling t = tiling_for(m, n, k, int64_t(1) << 24);
    const int64_t tiles_m = (m + t.bm - 1) / t.bm, tiles_n = (n + t.bn - 1) / t.bn;
    for (int64_t i = 0; i < batch; ++i) {
      const BFloat16* ai = a + i * stride_a;
      const BFloat16* bi = b + i * stride_b;
      float* ci = c + i * stride_c;
      parallel_for(0, tiles_m * tiles_n, 1, [&](int64_t begin, int64_t end) {
        for (int64_t tile = begin; tile < end; ++tile) {
          const int64_t i0 = tile / tiles_n * t.bm, j0 = tile % tiles_n * t.bn;
          gemm_bf16_serial(trans_a, trans_b, std::min(t.bm, m - i0), std::min(t.bn, n - j0), k,
                           trans_a ? ai + i0 : ai + i0 * lda, lda,
                           trans_b ? bi + j0 * ldb : bi + j0, ldb, ci + i0 * ldc + j0, ldc);
        }
      });
    }
    return;
  }
  // Small matrices: chunks of the batch, one primitive per chunk.
  const int64_t chunk = std::clamp<int64_t>(kChunkMacs / std::max<int64_t>(macs, 1), 1, batch);
  const int64_t chunks = (batch + chunk - 1) / chunk;
  MatmulKey key{chunk,    m,        n,       k,       lda,  ldb,  ldc, stride_a,
                stride_b, stride_c, trans_a, trans_b, 1.0f, 0.0f, true};
  const std::shared_ptr<const Matmul> full = get_matmul(key);
  key.batch = batch - (chunks - 1) * chunk;
  const std::shared_ptr<const Matmul> last = get_matmul(key);
  STRIDE_ASSERT(full->usable && last->usable, "no bf16 batched matmul kernel for ", m, "x", n, "x",
                k);
  parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t ch = begin; ch < end; ++ch) {
      const int64_t i = ch * chunk;
      run_matmul(ch == chunks - 1 ? *last : *full, a + i * stride_a, b + i * stride_b,
                 c + i * stride_c);
    }
  });
}

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
          int64_t ldc) {
  check_args("gemm", trans_a, trans_b, m, n, k, lda, ldb, ldc);
  // The small kernel's products (Note [Small GEMM]) are one tile and call
  // no library, so they skip the tiling and the libraries' thread settings:
  // at attention's 16 x 16 x 16 heads those cost a quarter of the product.
  if (prefers_small_sgemm(m, n, k)) {
    gemm_serial(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  SingleThreadedLibraries single;
  gemm_tiled(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

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
          int64_t ldc) {
  check_args("gemm", trans_a, trans_b, m, n, k, lda, ldb, ldc);
  SingleThreadedLibraries single;
  gemm_tiled(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

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
                  int64_t stride_c) {
  gemm_batched_impl(batch, trans_a, trans_b, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b,
                    beta, c, ldc, stride_c);
}

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
                  int64_t stride_c) {
  gemm_batched_impl(batch, trans_a, trans_b, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b,
                    beta, c, ldc, stride_c);
}

const char* gemm_backend(ScalarType t) {
  switch (t) {
    case ScalarType::Float32:
      return "onednn+openblas";  // OpenBLAS for small GEMMs, see the Note above
    case ScalarType::Float64:
      return "openblas";
    default:
      return "none";
  }
}

}  // namespace stride::cpu
