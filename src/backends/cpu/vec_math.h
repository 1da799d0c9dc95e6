// Float32 math over 16-lane GCC vector extensions, for kernels whose scalar
// loops stall on libm calls (std::exp does not vectorise). With -march=native
// on an AVX-512 machine a Vec16f is one zmm register; elsewhere the compiler
// splits it into narrower registers (and -Wpsabi would flag every by-value
// vector; cmake/warnings.cmake turns it off).
//
// Every lane is computed by the same instructions, so a kernel that routes
// its scalar tail through a padded vector (load_partial/store_partial) gives
// each element the same bits wherever a thread split puts it (DESIGN.md:
// bit-identical across thread counts).
#pragma once

#include <cstdint>
#include <cstring>

#include "stride/dtype.h"

namespace stride::cpu::vec {

inline constexpr int kLanes = 16;
using Vec16f = float __attribute__((vector_size(64)));
using Vec16i = int32_t __attribute__((vector_size(64)));
using Vec8d = double __attribute__((vector_size(64)));

inline Vec16f broadcast(float v) {
  return Vec16f{} + v;
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

// The first n (< kLanes) lanes from p; the other lanes are `fill`.
inline Vec16f load_partial(const float* p, int64_t n, float fill = 0.0f) {
  Vec16f v = broadcast(fill);
  std::memcpy(&v, p, size_t(n) * sizeof(float));
  return v;
}

inline void store_partial(float* p, Vec16f v, int64_t n) {
  std::memcpy(p, &v, size_t(n) * sizeof(float));
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

// Lanes 0-7 and 8-15 widened to double, for sums accumulated in double.
inline Vec8d low_f64(Vec16f v) {
  return __builtin_convertvector(__builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7), Vec8d);
}

inline Vec8d high_f64(Vec16f v) {
  return __builtin_convertvector(__builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15),
                                 Vec8d);
}

// The lanes of a and then b added in lane order: a fixed order, so a row sum
// does not depend on how rows were split among threads.
inline double sum(Vec8d a, Vec8d b) {
  const Vec8d s = a + b;
  double t = 0;
  for (int k = 0; k < 8; ++k) t += s[k];
  return t;
}

// e^x per lane, after Cephes expf: x = n ln2 + r with |r| <= ln2 / 2, e^r from
// a degree-7 polynomial (1 + r + r^2 P5(r)), times 2^n built in the exponent
// bits. Measured against exp in double over every float: at most 1.01 ulp
// (0.75 ulp for subnormal results), and 99.2% of results correctly rounded
// (tests/backends/vec_math_test.cpp). x > ln(FLT_MAX) gives
// +inf, x < ln(2^-150) gives 0 (results in between are subnormal, rounded
// once more), NaN gives NaN.
inline Vec16f exp(Vec16f x) {
  // Clamping keeps n within [-150, 128] so that the scale below stays exact;
  // beyond these bounds the result is already inf or 0.
  const Vec16f xc = x > 89.0f ? broadcast(89.0f) : (x < -104.0f ? broadcast(-104.0f) : x);
  // Round x / ln2 to nearest: adding 1.5 * 2^23 leaves the integer in the low
  // mantissa bits.
  constexpr float kShift = 12582912.0f;
  const Vec16f t = xc * 1.44269504088896341f + kShift;
  const Vec16f n = t - kShift;
  Vec16i ni;
  std::memcpy(&ni, &t, sizeof(ni));
  ni -= 0x4B400000;  // the bits of kShift
  // ln2 split in two (C1 has few mantissa bits, so n * C1 is exact).
  Vec16f r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  Vec16f p = broadcast(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const Vec16f y = p * (r * r) + r + 1.0f;
  // 2^n as two factors 2^(n/2) and 2^(n - n/2), each a normal float for n in
  // [-150, 128]: y * 2^n1 is exact and the second product rounds once, also
  // into the subnormal range.
  const Vec16i n1 = ni >> 1;
  const Vec16i n2 = ni - n1;
  const Vec16i b1 = (n1 + 127) << 23, b2 = (n2 + 127) << 23;
  Vec16f s1, s2;
  std::memcpy(&s1, &b1, sizeof(s1));
  std::memcpy(&s2, &b2, sizeof(s2));
  const Vec16f e = y * s1 * s2;
  return x != x ? x : e;
}

// out[i] = e^in[i]; in and out may be the same array.
inline void exp_array(const float* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) store(out + i, exp(load(in + i)));
  if (i < n) store_partial(out + i, exp(load_partial(in + i, n - i)), n - i);
}

// 1 / (1 + e^-x) per lane: 0 for x below about -88.7 (e^-x is inf), 1 for
// large x.
inline Vec16f sigmoid(Vec16f x) {
  return 1.0f / (1.0f + exp(-x));
}

}  // namespace stride::cpu::vec
