// The decode GEMV: GEMMs of 1-4 rows (a decoded token times each weight),
// which the libraries run several times slower than a pass over B (Note
// [Decoding GEMM]), as dot products or row updates of stride's own. Kept
// apart from the GEMM's planning (blas.cpp) because it is a kernel of its
// own, tuned to the memory system (Note [Decode prefetch]).
#include "backends/cpu/gemv.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "backends/cpu/capability.h"
#include "backends/cpu/vec_math.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace STRIDE_CPU_NAMESPACE {
namespace {

// Note [Decoding GEMM]
// Decoding one token multiplies 1-4 rows by every weight matrix: the GEMM is
// bound by reading B once, and the libraries' GEMM setup costs more than the
// arithmetic (OpenBLAS's sgemm and oneDNN's matmul take several times as
// long as a plain pass over B). So rows of A up to kDecodeRows are done
// here, one pass over B: with B transposed (a linear layer's (out, in)
// weight) as dot products over contiguous rows, otherwise as row updates.
// Each C element is summed in a fixed order whatever the thread count.

using vec::Vec16f;
using vec::Vec4f;
using vec::Vec8f;

inline float widen(float x) {
  return x;
}
inline float widen(BFloat16 x) {
  return float(x);
}

// The decode GEMV's vectors: those of the CPU's registers (GCC lowers the
// shuffles of lane_sums4 on 16-lane vectors without AVX-512 to scalar moves
// through the stack).
using DotVec = vec::NativeVec;
constexpr int64_t kDotLanes = vec::kNativeLanes;

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

#if defined(__aarch64__)
// lane_sums4 for AArch64's 4-lane vectors (DotVec, one q register):
// pairwise adds, {v0, v1} and {v2, v3}, then of those, one faddp each.
inline Vec4f lane_sums4(Vec4f v0, Vec4f v1, Vec4f v2, Vec4f v3) {
  return vpaddq_f32(vpaddq_f32(v0, v1), vpaddq_f32(v2, v3));
}
#endif

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
template <class T>
void prefetch_start(const T* from, uintptr_t end) {
  const uintptr_t stop = std::min(uintptr_t(from) + kPrefetchAheadBytes, end);
  for (uintptr_t line = uintptr_t(from); line < stop; line += 64) {
    prefetch_l2(line);
  }
}

// The first n (< kDotLanes) values from p as floats, the other lanes 0.
inline DotVec load_dot_partial(const float* p, int64_t n) {
#if defined(__AVX512F__)
  return vec::load_partial(p, n);
#else
  DotVec v{};
  std::memcpy(&v, p, size_t(n) * sizeof(float));
  return v;
#endif
}

// Asks for the lines of a step of kStepBytes that lie kPrefetchAheadBytes
// past `from`, when they lie before `end` (Note [Decode prefetch]).
template <uintptr_t kStepBytes>
void prefetch_step_ahead(const void* from, uintptr_t end) {
  const uintptr_t ahead = uintptr_t(from) + kPrefetchAheadBytes;
  if (ahead + kStepBytes - 64 < end) {
    for (uintptr_t line = 0; line < kStepBytes; line += 64) prefetch_l2(ahead + line);
  }
}

// The kDotLanes lane partial sums of a float32 dot product of length k: four
// FMA chains over steps of four vectors, then single vectors and a partial
// tail, added in a fixed order. Each four-vector step prefetches ahead in b.
DotVec dot_lanes(const float* a, const float* b, int64_t k, uintptr_t end) {
  constexpr int64_t kStep = 4 * kDotLanes;
  constexpr uintptr_t kStepBytes = uintptr_t(kStep) * sizeof(float);
  DotVec acc[4] = {};
  int64_t p = 0;
  for (; p + kStep <= k; p += kStep) {
    prefetch_step_ahead<kStepBytes>(b + p, end);
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

// Note [Widening bfloat16 pairs]
// A bfloat16 is the top half of a float. Read as 32-bit words, a vector of
// bfloat16 pairs gives its odd elements as floats with the low halves masked
// off, and its even ones shifted left by 16: two bit operations per
// 2 x kDotLanes elements, where widening each half takes a shuffle and a
// shift, so that the FMAs, not the widening, bound a dot product over
// cached weights. Both operands split the same way; the even and the odd
// products are summed in chains of their own.
using DotWords = uint32_t __attribute__((vector_size(sizeof(DotVec))));

// The 2 x kDotLanes bfloat16 values at p: the even ones and the odd ones.
inline void split_pairs(const BFloat16* p, DotVec& even, DotVec& odd) {
  DotWords w;
  std::memcpy(&w, p, sizeof(w));
  const DotWords e = w << 16, o = w & 0xffff0000u;
  std::memcpy(&even, &e, sizeof(even));
  std::memcpy(&odd, &o, sizeof(odd));
}

// The lanes' partial sums of a bfloat16 dot product of length k, in
// float32 (Note [Widening bfloat16 pairs]): eight FMA chains over steps of
// four word vectors, then single word vectors and a zero-padded tail, added
// in a fixed order. Each step prefetches ahead in b.
DotVec dot_lanes(const BFloat16* a, const BFloat16* b, int64_t k, uintptr_t end) {
  constexpr int64_t kPairs = 2 * kDotLanes;  // the values of a word vector
  constexpr int64_t kStep = 4 * kPairs;
  constexpr uintptr_t kStepBytes = uintptr_t(kStep) * sizeof(BFloat16);
  DotVec acc[8] = {};
  DotVec ae, ao, be, bo;
  int64_t p = 0;
  for (; p + kStep <= k; p += kStep) {
    prefetch_step_ahead<kStepBytes>(b + p, end);
    for (int v = 0; v < 4; ++v) {
      split_pairs(a + p + kPairs * v, ae, ao);
      split_pairs(b + p + kPairs * v, be, bo);
      acc[2 * v] = vec::fmadd(ae, be, acc[2 * v]);
      acc[2 * v + 1] = vec::fmadd(ao, bo, acc[2 * v + 1]);
    }
  }
  for (; p + kPairs <= k; p += kPairs) {
    split_pairs(a + p, ae, ao);
    split_pairs(b + p, be, bo);
    acc[0] = vec::fmadd(ae, be, acc[0]);
    acc[1] = vec::fmadd(ao, bo, acc[1]);
  }
  if (p < k) {
    BFloat16 ta[kPairs] = {}, tb[kPairs] = {};
    std::copy(a + p, a + k, ta);
    std::copy(b + p, b + k, tb);
    split_pairs(ta, ae, ao);
    split_pairs(tb, be, bo);
    acc[2] = vec::fmadd(ae, be, acc[2]);
    acc[3] = vec::fmadd(ao, bo, acc[3]);
  }
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

// R (1 to 4) dot products of a with consecutive rows of b, times alpha,
// into out[0..R). Each row is read whole before the next (one sequential
// stream, as the hardware prefetcher likes it, rather than four interleaved
// ones), and the R rows share one reduction, which costs less than reducing
// each row's lanes on its own. A row's sum does not depend on R.
template <int R, class T>
void dot_rows(
    float alpha, const T* a, const T* b, int64_t ldb, int64_t k, uintptr_t end, float* out) {
  DotVec sums[4];
  for (int r = 0; r < 4; ++r) sums[r] = r < R ? dot_lanes(a, b + r * ldb, k, end) : sums[0];
  const Vec4f total = lane_sums4(sums[0], sums[1], sums[2], sums[3]);
  for (int r = 0; r < R; ++r) out[r] = alpha * total[r];
}

#if defined(__AVX512F__)
// bf16 x bf16: vdpbf16ps multiplies 32 pairs exactly and adds them into 16
// float lanes, twice the rate of widening first. Not every AVX-512 CPU has
// it (Zen 4, Cooper Lake and Sapphire Rapids do; Skylake-X and Ice Lake do
// not), so it is compiled for it alone and taken when the CPU has it (Note
// [CPU capabilities]).
[[gnu::target("avx512bf16")]] float dot_dpbf16(const BFloat16* a, const BFloat16* b, int64_t k) {
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
// The fields are read into locals first: C's stores could otherwise alias
// g's alpha, which the compiler would then reload in the loops.
template <class T>
void decode(const GemmArgs<T, float>& g) {
  const int64_t m = g.m, n = g.n, k = g.k, lda = g.lda, ldb = g.ldb, ldc = g.ldc;
  const float alpha = g.alpha;
  const T* const a = g.a;
  const T* const b = g.b;
  float* const c = g.c;
  if (g.trans_b) {
#if defined(__AVX512F__)
    // bfloat16 rows take vdpbf16ps where the CPU has it; else they are
    // widened as they are loaded and go the float32 rows' way.
    if constexpr (std::is_same_v<T, BFloat16>) {
      if (cpu_has_avx512_bf16()) {
        for (int64_t j = 0; j < n; ++j) {
          for (int64_t i = 0; i < m; ++i) {
            c[i * ldc + j] = alpha * dot_dpbf16(a + i * lda, b + j * ldb, k);
          }
        }
        return;
      }
    }
#endif
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
    return;
  }
  // Row updates: C's row stays in L1 while the rows of B stream past, four
  // at a time, so that C is loaded and stored once per four rows of B (a
  // (in, out) weight, as GPT-2's Conv1D stores it, is this case). Each C
  // element still adds its products in the order of p.
  for (int64_t i = 0; i < m; ++i) {
    float* ci = c + i * ldc;
    const T* ai = a + i * lda;
    std::fill(ci, ci + n, 0.0f);
    int64_t p = 0;
    for (; p + 8 <= k; p += 8) {
      float x[8];
      const T* rows[8];
      for (int r = 0; r < 8; ++r) {
        x[r] = widen(ai[p + r]);
        rows[r] = b + (p + r) * ldb;
      }
      for (int64_t j = 0; j < n; ++j) {
        float sum = ci[j];
        sum += x[0] * widen(rows[0][j]);
        sum += x[1] * widen(rows[1][j]);
        sum += x[2] * widen(rows[2][j]);
        sum += x[3] * widen(rows[3][j]);
        sum += x[4] * widen(rows[4][j]);
        sum += x[5] * widen(rows[5][j]);
        sum += x[6] * widen(rows[6][j]);
        sum += x[7] * widen(rows[7][j]);
        ci[j] = sum;
      }
    }
    for (; p < k; ++p) {
      const float x = widen(ai[p]);
      const T* bp = b + p * ldb;
      for (int64_t j = 0; j < n; ++j) ci[j] += x * widen(bp[j]);
    }
    if (alpha != 1.0f) {
      for (int64_t j = 0; j < n; ++j) ci[j] *= alpha;
    }
  }
}

}  // namespace

void gemm_decode(const GemmArgs<float>& g) {
  decode(g);
}

void gemm_decode(const GemmArgs<BFloat16, float>& g) {
  decode(g);
}

}  // namespace STRIDE_CPU_NAMESPACE
