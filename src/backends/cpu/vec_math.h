// Float32 math over 16-lane GCC vector extensions, for kernels whose scalar
// loops stall on libm calls (std::exp does not vectorise). With -march=native
// on an AVX-512 machine a Vec16f is one zmm register; elsewhere the compiler
// splits it into narrower registers (and -Wpsabi would flag every by-value
// vector; cmake/warnings.cmake turns it off).
//
// Every lane is computed by the same instructions, so a kernel that routes
// its scalar tail through a padded vector (load_partial/store_partial) gives
// each element the same bits wherever a thread split puts it (docs/design.md:
// bit-identical across thread counts).
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__AVX__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

#include "backends/cpu/capability.h"
#include "stride/dtype.h"

namespace STRIDE_CPU_NAMESPACE::vec {

inline constexpr int kLanes = 16;
using Vec16f = float __attribute__((vector_size(64)));
using Vec16i = int32_t __attribute__((vector_size(64)));
using Vec8d = double __attribute__((vector_size(64)));
using Vec8f = float __attribute__((vector_size(32)));
using Vec8i = int32_t __attribute__((vector_size(32)));
using Vec4f = float __attribute__((vector_size(16)));
using Vec4i = int32_t __attribute__((vector_size(16)));

// The CPU's own float vector, one zmm register on AVX-512, one q register
// (4 floats) on AArch64, else one ymm (Note [Register width]), for kernels
// written at the register width. On AArch64 the pair of q registers that
// would match AVX2's 8 lanes is no register to GCC 12, which has no 32-byte
// vector mode there: such vectors live in memory, and the small GEMM's
// accumulators went to the stack on every step; 4-lane vectors stay in
// NEON's 32 registers.
#if defined(__AVX512F__)
using NativeVec = Vec16f;
#elif defined(__aarch64__)
using NativeVec = Vec4f;
#else
using NativeVec = Vec8f;
#endif
inline constexpr int64_t kNativeLanes = int64_t(sizeof(NativeVec) / sizeof(float));

inline NativeVec load_native(const float* p) {
  NativeVec v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// kNativeLanes bfloat16 values widened to float (a bfloat16 is the top half
// of a float, so widening is a shift).
inline NativeVec load_native(const BFloat16* p) {
  using Halves = uint16_t __attribute__((vector_size(kNativeLanes * 2)));
  using Words = uint32_t __attribute__((vector_size(kNativeLanes * 4)));
  Halves h;
  std::memcpy(&h, p, sizeof(h));
  const Words w = __builtin_convertvector(h, Words) << 16;
  NativeVec v;
  std::memcpy(&v, &w, sizeof(v));
  return v;
}

inline void store_native(float* p, NativeVec v) {
  std::memcpy(p, &v, sizeof(v));
}

// Float64 vectors of the register width (4 doubles to a ymm register
// without AVX-512), for float32 kernels that accumulate in double: written
// as 8-double vectors, GCC spills such accumulators to the stack through
// general registers on AVX2 (Note [Register width]).
using NativeVecd = double __attribute__((vector_size(sizeof(NativeVec))));
inline constexpr int64_t kNativeDoubles = int64_t(sizeof(NativeVecd) / sizeof(double));

// kNativeDoubles floats from p, widened to double. (GCC 12 lowers
// __builtin_convertvector here to two-lane conversions, so the CPU's own is
// named; AVX-512's all-ones maskz form, as it warns on _mm512_cvtps_pd's
// undefined pass-through operand.)
inline NativeVecd widen_native(const float* p) {
#if defined(__AVX512F__)
  return _mm512_maskz_cvtps_pd(0xFF, _mm256_loadu_ps(p));
#elif defined(__AVX__)
  return _mm256_cvtps_pd(_mm_loadu_ps(p));
#elif defined(__aarch64__)
  return vcvt_f64_f32(vld1_f32(p));
#else
  using Half = float __attribute__((vector_size(sizeof(NativeVecd) / 2)));
  Half h;
  std::memcpy(&h, p, sizeof(h));
  return __builtin_convertvector(h, NativeVecd);
#endif
}

// Lanes [H * kNativeDoubles, (H + 1) * kNativeDoubles) of v widened to
// double, H = 0 or 1.
template <int H>
inline NativeVecd widen_part(NativeVec v) {
  static_assert(H == 0 || H == 1, "a float vector has two double-width parts");
#if defined(__AVX512F__)
  // (Shuffles: GCC 12's _mm512_castps512_ps256 reads an undefined operand.)
  const Vec8f part = H == 0 ? __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7)
                            : __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
  return _mm512_maskz_cvtps_pd(0xFF, part);
#elif defined(__AVX__)
  return _mm256_cvtps_pd(H == 0 ? _mm256_castps256_ps128(v) : _mm256_extractf128_ps(v, 1));
#elif defined(__aarch64__)
  return H == 0 ? vcvt_f64_f32(vget_low_f32(v)) : vcvt_high_f64_f32(v);
#else
  using Half = float __attribute__((vector_size(sizeof(NativeVecd) / 2)));
  Half h;
  std::memcpy(&h, reinterpret_cast<const char*>(&v) + H * sizeof(Half), sizeof(h));
  return __builtin_convertvector(h, NativeVecd);
#endif
}

// wide += f's float lanes widened to double, lane for lane: lane l of f
// (f[l / kNativeLanes][l % kNativeLanes]) into wide[l / kNativeDoubles]
// [l % kNativeDoubles]. For float lane sums flushed into float64 ones. In
// registers: through a float array, f and wide lived on the stack.
template <size_t N, size_t M>
inline void add_widened(NativeVecd (&wide)[M], const NativeVec (&f)[N]) {
  static_assert(2 * N == M, "as many float as double lanes");
  for (size_t v = 0; v < N; ++v) {
    wide[2 * v] += widen_part<0>(f[v]);
    wide[2 * v + 1] += widen_part<1>(f[v]);
  }
}

// The sum of 16 float64 lanes, lane l being wide[l / kNativeDoubles]
// [l % kNativeDoubles]: lane k + 8 added to lane k, then the eight pairs in
// order. A fixed order, so a row's sum does not depend on how rows were split
// among threads.
template <size_t M>
inline double sum_in_order(const NativeVecd (&wide)[M]) {
  static_assert(M * kNativeDoubles == 16, "16 lanes");
  NativeVecd pairs[M / 2];
  for (size_t w = 0; w < M / 2; ++w) pairs[w] = wide[w] + wide[w + M / 2];
  double lanes[8];
  std::memcpy(lanes, pairs, sizeof(lanes));
  double sum = 0;
  for (double l : lanes) sum += l;
  return sum;
}

inline NativeVecd load_native(const double* p) {
  NativeVecd v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

#if defined(__AVX2__) && !defined(__AVX512F__)
namespace detail {
// All ones in the first n lanes of eight.
inline __m256i tail_mask(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
}  // namespace detail
#endif

// The first n (<= kNativeLanes) lanes from p, the others `fill`, and the
// store of the first n lanes: the tails of kernels written at the register
// width. Masked moves where the CPU has them: a tail assembled in memory
// stalls on store forwarding when it is loaded as a vector.
inline NativeVec load_native_n(const float* p, int64_t n, float fill = 0.0f) {
  if (n == kNativeLanes) return load_native(p);
#if defined(__AVX512F__)
  return _mm512_mask_loadu_ps(_mm512_set1_ps(fill), __mmask16((1u << n) - 1), p);
#elif defined(__AVX2__)
  const __m256i mask = detail::tail_mask(n);
  return _mm256_blendv_ps(_mm256_set1_ps(fill), _mm256_maskload_ps(p, mask),
                          _mm256_castsi256_ps(mask));
#elif defined(__aarch64__)
  // Lane loads into the fill: no store of the tail to forward.
  float32x4_t v = vdupq_n_f32(fill);
  if (n >= 2) v = vcombine_f32(vld1_f32(p), vget_high_f32(v));
  if (n == 1) v = vld1q_lane_f32(p, v, 0);
  if (n == 3) v = vld1q_lane_f32(p + 2, v, 2);
  return v;
#else
  NativeVec v = NativeVec{} + fill;
  std::memcpy(&v, p, size_t(n) * sizeof(float));
  return v;
#endif
}

inline void store_native_n(float* p, NativeVec v, int64_t n) {
  if (n == kNativeLanes) {
    store_native(p, v);
    return;
  }
#if defined(__AVX512F__)
  _mm512_mask_storeu_ps(p, __mmask16((1u << n) - 1), v);
#elif defined(__AVX2__)
  const __m256i mask = detail::tail_mask(n);
  _mm256_maskstore_ps(p, mask, v);
#elif defined(__aarch64__)
  if (n >= 2) vst1_f32(p, vget_low_f32(v));
  if (n == 1) vst1q_lane_f32(p, v, 0);
  if (n == 3) vst1q_lane_f32(p + 2, v, 2);
#else
  std::memcpy(p, &v, size_t(n) * sizeof(float));
#endif
}

// v's first n (<= kNativeLanes) lanes, the others +0.
inline NativeVec first_n(NativeVec v, int64_t n) {
#if defined(__AVX512F__)
  return _mm512_maskz_mov_ps(__mmask16((1u << n) - 1), v);
#elif defined(__AVX2__)
  const __m256i mask = detail::tail_mask(n);
  return _mm256_and_ps(v, _mm256_castsi256_ps(mask));
#elif defined(__aarch64__)
  const uint32x4_t mask = vcltq_u32(uint32x4_t{0, 1, 2, 3}, vdupq_n_u32(uint32_t(n)));
  return vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(v), mask));
#else
  for (int64_t k = n; k < kNativeLanes; ++k) v[k] = 0.0f;
  return v;
#endif
}

// a * b + c in each lane, rounded once where the CPU has FMA.
inline NativeVec fmadd(NativeVec a, NativeVec b, NativeVec c) {
#if defined(__AVX512F__)
  return _mm512_fmadd_ps(a, b, c);
#elif defined(__FMA__)
  return _mm256_fmadd_ps(a, b, c);
#elif defined(__aarch64__)
  return vfmaq_f32(c, a, b);
#else
  return a * b + c;
#endif
}

inline Vec16f broadcast(float v) {
  return Vec16f{} + v;
}

// Note [Register width]
// ~~~~~~~~~~~~~~~~~~~~~~
// Without AVX-512 a Vec16f is two ymm registers. GCC 12 splits arithmetic on
// it fine, but not always comparisons, selects (`c ? a : b`) or shuffles:
// those it may lower lane by lane through the stack (exp's clamp and NaN
// check, for one, can become 16 scalar compares a vector). native(f, v...)
// applies f, a generic lambda, to the vectors the CPU's registers hold: to
// v... themselves on AVX-512, else to their 8-lane halves, whose results are
// joined. Every lane gets the same operations either way, so the bits do not
// change.
#if defined(__AVX512F__)
template <class F, class... V>
inline auto native(F f, V... v) {
  return f(v...);
}
#elif defined(__aarch64__)
// On AArch64 the registers are quarters (q registers, NativeVec).
namespace detail {
template <class Part, class Whole>
inline Part part(Whole v, int q) {
  Part r;
  std::memcpy(&r, reinterpret_cast<const char*>(&v) + q * sizeof(Part), sizeof(Part));
  return r;
}
inline Vec4f quarter(Vec16f v, int q) {
  return part<Vec4f>(v, q);
}
inline Vec4i quarter(Vec16i v, int q) {
  return part<Vec4i>(v, q);
}
template <class Whole, class Part>
inline Whole join(Part a, Part b, Part c, Part d) {
  Whole v;
  char* w = reinterpret_cast<char*>(&v);
  std::memcpy(w, &a, sizeof(Part));
  std::memcpy(w + sizeof(Part), &b, sizeof(Part));
  std::memcpy(w + 2 * sizeof(Part), &c, sizeof(Part));
  std::memcpy(w + 3 * sizeof(Part), &d, sizeof(Part));
  return v;
}
inline Vec16f join(Vec4f a, Vec4f b, Vec4f c, Vec4f d) {
  return join<Vec16f>(a, b, c, d);
}
inline Vec16i join(Vec4i a, Vec4i b, Vec4i c, Vec4i d) {
  return join<Vec16i>(a, b, c, d);
}
}  // namespace detail

template <class F, class... V>
inline auto native(F f, V... v) {
  return detail::join(f(detail::quarter(v, 0)...), f(detail::quarter(v, 1)...),
                      f(detail::quarter(v, 2)...), f(detail::quarter(v, 3)...));
}
#else
namespace detail {
template <class Half, class Whole>
inline Half half(Whole v, int h) {
  Half r;
  std::memcpy(&r, reinterpret_cast<const char*>(&v) + h * sizeof(Half), sizeof(Half));
  return r;
}
inline Vec8f half(Vec16f v, int h) {
  return half<Vec8f>(v, h);
}
inline Vec8i half(Vec16i v, int h) {
  return half<Vec8i>(v, h);
}
template <class Whole, class Half>
inline Whole join(Half lo, Half hi) {
  Whole v;
  std::memcpy(&v, &lo, sizeof(Half));
  std::memcpy(reinterpret_cast<char*>(&v) + sizeof(Half), &hi, sizeof(Half));
  return v;
}
inline Vec16f join(Vec8f lo, Vec8f hi) {
  return join<Vec16f>(lo, hi);
}
inline Vec16i join(Vec8i lo, Vec8i hi) {
  return join<Vec16i>(lo, hi);
}
}  // namespace detail

template <class F, class... V>
inline auto native(F f, V... v) {
  return detail::join(f(detail::half(v, 0)...), f(detail::half(v, 1)...));
}
#endif

// x in every lane of a vector of type V (for the lambdas given to native).
template <class V>
inline V splat(float x) {
  return V{} + x;
}

inline Vec16f load(const float* p) {
  Vec16f v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// Sixteen bfloat16 values widened to float (a bfloat16 is the top half of a
// float, so widening is a shift).
inline Vec16f load(const BFloat16* p) {
  using Vec16u16 = uint16_t __attribute__((vector_size(32)));
  using Vec16u32 = uint32_t __attribute__((vector_size(64)));
  Vec16u16 h;
  std::memcpy(&h, p, sizeof(h));
  const Vec16u32 w = __builtin_convertvector(h, Vec16u32) << 16;
  Vec16f v;
  std::memcpy(&v, &w, sizeof(v));
  return v;
}

inline void store(float* p, Vec16f v) {
  std::memcpy(p, &v, sizeof(v));
}

// The first n (< kLanes) lanes from p; the other lanes are `fill`. Masked
// on AVX-512: through memory, the vector's halves would come from a store
// of a different width and stall on store forwarding.
inline Vec16f load_partial(const float* p, int64_t n, float fill = 0.0f) {
#if defined(__AVX512F__)
  return _mm512_mask_loadu_ps(broadcast(fill), __mmask16((1u << n) - 1), p);
#else
  Vec16f v = broadcast(fill);
  std::memcpy(&v, p, size_t(n) * sizeof(float));
  return v;
#endif
}

inline void store_partial(float* p, Vec16f v, int64_t n) {
#if defined(__AVX512F__)
  _mm512_mask_storeu_ps(p, __mmask16((1u << n) - 1), v);
#else
  std::memcpy(p, &v, size_t(n) * sizeof(float));
#endif
}

// n (<= kLanes) lanes: a full load when n == kLanes, which folds to a plain
// vector load inside for_each_block's main loop.
inline Vec16f load_n(const float* p, int64_t n, float fill = 0.0f) {
  return n == kLanes ? load(p) : load_partial(p, n, fill);
}

inline void store_n(float* p, Vec16f v, int64_t n) {
  if (n == kLanes) {
    store(p, v);
  } else {
    store_partial(p, v, n);
  }
}

// body(i, n) for the blocks [i, i + n) of [begin, end): n == kLanes except in
// a last, partial block. Both run the same vector code (see the top note).
template <class Body>
inline void for_each_block(int64_t begin, int64_t end, Body body) {
  int64_t i = begin;
  for (; i + kLanes <= end; i += kLanes) body(i, int64_t(kLanes));
  if (i < end) body(i, end - i);
}

// Lanes 0-7 and 8-15 (Note [Register width]: a shuffle on AVX-512, the
// registers themselves without it).
inline Vec8f low8(Vec16f v) {
#if defined(__AVX512F__)
  return __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7);
#elif defined(__aarch64__)
  return detail::part<Vec8f>(v, 0);
#else
  return detail::half(v, 0);
#endif
}

inline Vec8f high8(Vec16f v) {
#if defined(__AVX512F__)
  return __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
#elif defined(__aarch64__)
  return detail::part<Vec8f>(v, 1);
#else
  return detail::half(v, 1);
#endif
}

// Lanes 0-7 and 8-15 widened to double, for sums accumulated in double.
inline Vec8d low_f64(Vec16f v) {
  return __builtin_convertvector(low8(v), Vec8d);
}

inline Vec8d high_f64(Vec16f v) {
  return __builtin_convertvector(high8(v), Vec8d);
}

// The lanes of a and then b added in lane order: a fixed order, so a row sum
// does not depend on how rows were split among threads.
inline double sum(Vec8d a, Vec8d b) {
  const Vec8d s = a + b;
  double t = 0;
  for (int k = 0; k < 8; ++k) t += s[k];
  return t;
}

// The sum of the lanes by a fixed tree (halves added, then their halves):
// four dependent adds instead of fifteen, and the same bits on every call.
inline float sum_lanes(Vec4f q) {
#if defined(__aarch64__)
  // The halves added (one fadd of d registers), then the pair (faddp).
  const float32x2_t h = vadd_f32(vget_low_f32(q), vget_high_f32(q));
  return vaddv_f32(h);
#else
  return (q[0] + q[2]) + (q[1] + q[3]);
#endif
}

inline float sum_lanes(Vec8f h) {
  return sum_lanes(
      Vec4f(__builtin_shufflevector(h, h, 0, 1, 2, 3) + __builtin_shufflevector(h, h, 4, 5, 6, 7)));
}

inline float sum_lanes(Vec16f v) {
  return sum_lanes(low8(v) + high8(v));
}

// The largest lane of v, which holds no NaN (a running max kept as
// `x > m ? x : m` never takes one); a max needs no fixed order.
inline float max_lanes(Vec4f q) {
#if defined(__aarch64__)
  return vmaxvq_f32(q);
#else
  float m = -__builtin_inff();
  for (int k = 0; k < 4; ++k) m = q[k] > m ? q[k] : m;
  return m;
#endif
}

inline float max_lanes(Vec8f h) {
  const Vec4f c = __builtin_shufflevector(h, h, 0, 1, 2, 3),
              d = __builtin_shufflevector(h, h, 4, 5, 6, 7);
  const Vec4f q = d > c ? d : c;
  float m = -__builtin_inff();
  for (int k = 0; k < 4; ++k) m = q[k] > m ? q[k] : m;
  return m;
}

inline float max_lanes(Vec16f v) {
  const Vec8f a = low8(v), b = high8(v);
  return max_lanes(b > a ? b : a);
}

// The smallest lane of v, which holds no NaN (as max_lanes).
inline float min_lanes(Vec4f q) {
#if defined(__aarch64__)
  return vminvq_f32(q);
#else
  float m = __builtin_inff();
  for (int k = 0; k < 4; ++k) m = q[k] < m ? q[k] : m;
  return m;
#endif
}

inline float min_lanes(Vec8f h) {
  const Vec4f c = __builtin_shufflevector(h, h, 0, 1, 2, 3),
              d = __builtin_shufflevector(h, h, 4, 5, 6, 7);
  const Vec4f q = d < c ? d : c;
  float m = __builtin_inff();
  for (int k = 0; k < 4; ++k) m = q[k] < m ? q[k] : m;
  return m;
}

inline float min_lanes(Vec16f v) {
  const Vec8f a = low8(v), b = high8(v);
  return min_lanes(b < a ? b : a);
}

// Whether every lane of a comparison's result is true.
template <class M>
inline bool all_lanes_scalar(M m) {
  for (size_t k = 0; k < sizeof(M) / sizeof(m[0]); ++k) {
    if (m[k] == 0) return false;
  }
  return true;
}

inline bool all_lanes(Vec4i m) {
#if defined(__aarch64__)
  return vminvq_u32(vreinterpretq_u32_s32(m)) != 0;
#else
  return all_lanes_scalar(m);
#endif
}

inline bool all_lanes(Vec8i m) {
#if defined(__AVX__)
  return _mm256_movemask_ps(__m256(m)) == 0xFF;
#else
  return all_lanes_scalar(m);
#endif
}

inline bool all_lanes(Vec16i m) {
#if defined(__AVX512F__)
  return _mm512_test_epi32_mask(__m512i(m), __m512i(m)) == 0xFFFF;
#else
  return all_lanes_scalar(m);
#endif
}

// The largest and the smallest of a row of floats.
struct Range {
  float max;  // NaN when any element is NaN; -inf for no elements
  float min;  // of the elements that are not NaN; +inf for none
};

// The range of p[0, n) (softmax and cross_entropy keep a NaN logit visible
// through the max). Two running maxima and minima and a separate NaN flag
// keep each step's dependency to one compare-select: a NaN-taking select in
// a single chain makes each step wait on a longer one, enough for softmax's
// max to cost as much as its exps. At the register width (Note [Register
// width]): in 16-lane vectors on AVX2, the maxima and the flag would go
// through the stack on every step.
inline Range range_of(const float* p, int64_t n) {
  constexpr float kInf = __builtin_inff();
  constexpr int64_t W = kNativeLanes;
  using Mask = decltype(NativeVec{} != NativeVec{});
  NativeVec hi0 = splat<NativeVec>(-kInf), hi1 = hi0, lo0 = splat<NativeVec>(kInf), lo1 = lo0;
  Mask nan{};
  int64_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    const NativeVec a = load_native(p + i), b = load_native(p + i + W);
    hi0 = a > hi0 ? a : hi0;
    hi1 = b > hi1 ? b : hi1;
    lo0 = a < lo0 ? a : lo0;
    lo1 = b < lo1 ? b : lo1;
    nan |= (a != a) | (b != b);
  }
  for (; i < n; i += W) {
    const int64_t k = n - i < W ? n - i : W;
    const NativeVec a = load_native_n(p + i, k, -kInf), b = load_native_n(p + i, k, kInf);
    hi0 = a > hi0 ? a : hi0;
    lo0 = b < lo0 ? b : lo0;
    nan |= a != a;
  }
  const float min = min_lanes(lo1 < lo0 ? lo1 : lo0);
  if (!all_lanes(nan == 0)) return {__builtin_nanf(""), min};
  return {max_lanes(hi1 > hi0 ? hi1 : hi0), min};
}

// The functions below are written once for any vector width (the *_lanes
// templates in detail, V = Vec16f or Vec8f) and run through native() as a
// whole (Note [Register width]): on a CPU without AVX-512, e^x on 8-lane
// halves stays in registers, where the same code on a 16-lane vector goes
// through the stack and takes several times as long.

namespace detail {

inline Vec16i bits(Vec16f v) {
  Vec16i b;
  std::memcpy(&b, &v, sizeof(b));
  return b;
}

inline Vec8i bits(Vec8f v) {
  Vec8i b;
  std::memcpy(&b, &v, sizeof(b));
  return b;
}

inline Vec4i bits(Vec4f v) {
  Vec4i b;
  std::memcpy(&b, &v, sizeof(b));
  return b;
}

inline Vec16f from_bits(Vec16i b) {
  Vec16f v;
  std::memcpy(&v, &b, sizeof(v));
  return v;
}

inline Vec8f from_bits(Vec8i b) {
  Vec8f v;
  std::memcpy(&v, &b, sizeof(v));
  return v;
}

inline Vec4f from_bits(Vec4i b) {
  Vec4f v;
  std::memcpy(&v, &b, sizeof(v));
  return v;
}

template <class V>
inline V abs(V x) {
  return from_bits(bits(x) & 0x7FFFFFFF);
}

// |m| with the sign of s (m must be non-negative or NaN).
template <class V>
inline V with_sign_of(V m, V s) {
  return from_bits(bits(m) | (bits(s) & int32_t(0x80000000u)));
}

// c0 + x (c1 + x (c2 + ...)): Horner's rule, unrolled at compile time.
template <class V, class... C>
inline V poly(V x, float c0, C... cs) {
  if constexpr (sizeof...(cs) == 0) {
    return splat<V>(c0);
  } else {
    return poly(x, cs...) * x + c0;
  }
}

// The reduction and polynomial of e^x (see exp below): e^x = y 2^n, with n
// in the integer lanes (x must lie in [-104, 89], where n is in [-150, 128]).
template <class V>
struct ExpParts {
  V y;
  decltype(bits(V{})) n;
};

template <class V>
inline ExpParts<V> exp_parts(V x) {
  // Round x / ln2 to nearest: adding 1.5 * 2^23 leaves the integer in the low
  // mantissa bits.
  constexpr float kShift = 12582912.0f;
  const V t = x * 1.44269504088896341f + kShift;
  const V n = t - kShift;
  // ln2 split in two (C1 has few mantissa bits, so n * C1 is exact).
  V r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  V p = splat<V>(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  return {p * (r * r) + r + 1.0f, bits(t) - 0x4B400000};  // n: t's bits less kShift's
}

// e^x for any x (see exp below).
template <class V>
inline V exp_any_lanes(V x) {
  // Clamping keeps n within [-150, 128] so that the scale below stays exact;
  // beyond these bounds the result is already inf or 0.
  const V xc = x > 89.0f ? splat<V>(89.0f) : (x < -104.0f ? splat<V>(-104.0f) : x);
  const ExpParts<V> e = exp_parts(xc);
  // 2^n as two factors 2^(n/2) and 2^(n - n/2), each a normal float for n in
  // [-150, 128]: y * 2^n1 is exact and the second product rounds once, also
  // into the subnormal range.
  const auto n1 = e.n >> 1;
  const auto n2 = e.n - n1;
  const V r = e.y * from_bits((n1 + 127) << 23) * from_bits((n2 + 127) << 23);
  return x != x ? x : r;
}

// e^x (see exp below). A vector whose lanes all lie in [-87, 88], where
// e^x is a normal float (nearly every vector in practice), takes 2^n as one
// factor and skips the clamp and the NaN test: n is in [-126, 127] there,
// so 2^n is a normal float and y 2^n rounds once, as y 2^n1 2^n2 does (the
// same bits as exp_any_lanes). That is a much shorter path than
// exp_any_lanes; the test is off the dependency chain and predicted.
template <class V>
inline V exp_lanes(V x) {
  if (!all_lanes((x >= -87.0f) & (x <= 88.0f))) return exp_any_lanes(x);
  const ExpParts<V> e = exp_parts(x);
  return e.y * from_bits((e.n + 127) << 23);
}

// 2^v for v in [-126, 0] (normal results only; no clamping or special
// values): v = n + f with f in [-1/2, 1/2] (exact), 2^f = 1 + f P(f), P of
// degree 5 (fit relative to 2^f), times 2^n built in the exponent bits.
template <class V>
inline V exp2_nonpositive(V v) {
  constexpr float kShift = 12582912.0f;  // 1.5 * 2^23: rounds v to an integer
  const V t = v + kShift;
  const V f = v - (t - kShift);
  const V p = poly(f, 6.931472421e-01f, 2.402265221e-01f, 5.550310388e-02f, 9.617692791e-03f,
                   1.340664341e-03f, 1.559467637e-04f) *
                  f +
              1.0f;
  // bits(t) = 0x4B400000 + n: re-biased to n + 127, it is 2^n's exponent.
  return p * from_bits((bits(t) + (127 - 0x4B400000)) << 23);
}

// Phi(x) (see normal_cdf below).
template <class V>
inline V normal_cdf_lanes(V x) {
  constexpr float kFar = 5.65685424949238f;  // 4 sqrt 2
  const V u = abs(x);
  const auto far = u > kFar;
  const V uc = far ? splat<V>(kFar) : u;
  const V r = poly(uc, -1.151105165e+00f, -4.592135251e-01f, -5.245504528e-02f, 6.949121132e-03f,
                   1.895613059e-05f, -3.031072556e-04f, 8.951647760e-05f, -1.498786605e-05f,
                   1.563393312e-06f, -9.468847395e-08f, 2.549940703e-09f) *
              uc;
  const V half_erfc = 0.5f * exp2_nonpositive(r);
  const V lower = far ? splat<V>(0.0f) : half_erfc;
  return x < 0.0f ? lower : 1.0f - half_erfc;
}

// tanh (see tanh below).
template <class V>
inline V tanh_lanes(V x) {
  // On |x|: x + x s P(s) would give tanh(-0) = +0 (x s P(s) is +0 there).
  const V t = abs(x);
  const V s = t * t;
  const V p = poly(s, -3.333329558e-01f, 1.333234459e-01f, -5.387980118e-02f, 2.148665674e-02f,
                   -7.946105674e-03f, 2.301363740e-03f, -3.584517690e-04f);
  const V small = (p * s) * t + t;
  const V big = 1.0f - 2.0f / (exp_lanes(t + t) + 1.0f);
  return with_sign_of(t <= 1.0f ? small : big, x);
}

// log (see log below).
template <class V>
inline V log_lanes(V x) {
  const auto sub = x < 1.17549435e-38f;  // FLT_MIN
  const V xn = sub ? x * 8388608.0f : x;
  // Offsetting the bits by those of sqrt(1/2) moves the exponent's carry to
  // m = sqrt(1/2), so the shift gives e and the low bits m, both at once.
  constexpr int32_t kSqrtHalfBits = 0x3F3504F3;
  // In uint32 lanes: negative x (sign bit set) would overflow int32; their
  // lanes become NaN below whatever k holds.
  using I = decltype(bits(x));
  typedef uint32_t U __attribute__((vector_size(sizeof(I))));
  const I k = I(U(bits(xn)) - uint32_t(kSqrtHalfBits));
  const I e = (k >> 23) + (sub & -23);
  const V f = from_bits((k & 0x007FFFFF) + kSqrtHalfBits) - 1.0f;
  const V ef = __builtin_convertvector(e, V);
  const V p = poly(f, -4.999998808e-01f, 3.333332539e-01f, -2.500158250e-01f, 2.000197321e-01f,
                   -1.660908312e-01f, 1.418182850e-01f, -1.324298531e-01f, 1.290441006e-01f,
                   -7.621756196e-02f);
  const V y = (f * f) * p + ef * -2.12194440e-4f;
  constexpr float kInf = __builtin_inff();
  V r = ef * 0.693359375f + (f + y);
  r = x == kInf ? x : r;
  r = x == 0.0f ? splat<V>(-kInf) : r;
  return (x < 0.0f) | (x != x) ? splat<V>(__builtin_nanf("")) : r;
}

}  // namespace detail

// e^x per lane, after Cephes expf: x = n ln2 + r with |r| <= ln2 / 2, e^r from
// a degree-7 polynomial (1 + r + r^2 P5(r)), times 2^n built in the exponent
// bits. Measured against exp in double over every float: at most 1.01 ulp
// (0.75 ulp for subnormal results), and 99.2% of results correctly rounded
// (tests/backends/vec_math_test.cpp). x > ln(FLT_MAX) gives
// +inf, x < ln(2^-150) gives 0 (results in between are subnormal, rounded
// once more), NaN gives NaN.
inline Vec16f exp(Vec16f x) {
  return native([](auto v) { return detail::exp_lanes(v); }, x);
}

// out[i] = e^in[i]; in and out may be the same array.
inline void exp_array(const float* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) store(out + i, exp(load(in + i)));
  if (i < n) store_partial(out + i, exp(load_partial(in + i, n - i)), n - i);
}

// 1 / (1 + e^-x) per lane: at most 2.3 ulp (measured) while the result is
// normal (x > -87.3); 0 for x below about -88.7 (e^-x is inf), 1 for large x.
inline Vec16f sigmoid(Vec16f x) {
  return native([](auto v) { return 1.0f / (1.0f + detail::exp_lanes(-v)); }, x);
}

// The polynomials of the functions below are minimax fits (Remez, in the
// variable and with the weight each comment names) made by
// tools/fit_vec_math.py and rounded to float. The ulp figures are measured
// on that rounded, float-evaluated form against libm in double, over every
// float for tanh and log (a one-off run) and densely for the rest;
// tests/backends/vec_math_test.cpp holds the bounds.

// Phi(x) = (1 + erf(x / sqrt 2)) / 2 per lane, the standard normal CDF,
// relatively accurate in the lower tail too, where 1 + erf(x / sqrt 2) from a
// rounded erf would cancel (2^-24 of absolute error, all of the value by
// x ~ -5.5). With u = |x|, erfc(u / sqrt 2) = 2^R(u), R a degree-11 fit of
// log2(erfc(u / sqrt 2)) on [0, 4 sqrt 2] (absolute error, i.e. relative to
// erfc; R(0) = 0), and Phi(x) is 2^R(u) / 2 for x < 0, 1 - 2^R(u) / 2 above.
// One polynomial over the whole range: a two-branch erf would cost a vector
// both branches. Measured: 1.24 ulp for x >= 0, 2.7 ulp on [-1.3, 0), then
// the rounding of R (~x^2 / 1.4) takes over: <= 1.7 x^2 ulp down to -5.6. 0
// below -4 sqrt 2 (Phi < 1.6e-8 there), as (1 + erf(x / sqrt 2)) / 2 in
// float; NaN gives NaN.
inline Vec16f normal_cdf(Vec16f x) {
  return native([](auto v) { return detail::normal_cdf_lanes(v); }, x);
}

// x Phi(x), the exact (erf) GELU. Measured: 2.3 ulp for x >= -1.3, <= 2.2 x^2
// ulp down to -5.6; -0 below -4 sqrt 2 (|gelu| < 4.4e-8 there) and
// gelu(-inf) = NaN, as the scalar 0.5 x (1 + erf(x / sqrt 2)) in float.
inline Vec16f gelu(Vec16f x) {
  return native([](auto v) { return v * detail::normal_cdf_lanes(v); }, x);
}

// tanh per lane, at most 0.95 ulp over every float (measured). For t = |x|
// <= 1, t + t s P(s) with s = t^2, P of degree 6 (fit relative to tanh);
// above, 1 - 2 / (e^2t + 1), where 2 / (e^2t + 1) <= 0.24 so the errors of
// e^ and of the division reach the result scaled down. The sign of x is put
// back last. tanh(+-0) = +-0, subnormal x gives x, +-inf gives +-1, NaN gives
// NaN.
inline Vec16f tanh(Vec16f x) {
  return native([](auto v) { return detail::tanh_lanes(v); }, x);
}

// Natural log per lane, at most 0.88 ulp over every float (measured), after
// Cephes logf: x = 2^e m with m in [sqrt(1/2), sqrt(2)), f = m - 1 (exact),
// log(1 + f) = f + f^2 P(f) (P of degree 8, fit relative to log(1 + f)),
// plus e ln2 in two parts (e times the 9-bit high part is exact). Subnormal x
// are scaled by 2^23 first. log(+-0) = -inf, log(x < 0) = NaN, log(inf) =
// inf, log(1) = +0, NaN gives NaN.
inline Vec16f log(Vec16f x) {
  return native([](auto v) { return detail::log_lanes(v); }, x);
}

}  // namespace STRIDE_CPU_NAMESPACE::vec
