// The CPU kernels of the packed weight formats (include/stride/weight_format.h):
// packing a float32 weight, unpacking it, and the linear layer over it.
//
// Note [Weight formats]
// Decoding a token reads every weight once, so its speed is the bytes of
// weights per token: bfloat16 halves them, 8-bit blocks (34 bytes per 32
// weights) make them 0.27 of float32's and 4-bit blocks (18 bytes) 0.14.
// The blocks are GGUF's Q8_0 and Q4_0, quantized as llama.cpp's reference
// quantizer does (round half away from zero to d = max |w| / 127; and d =
// the signed largest-magnitude weight / -8, q = min(15, trunc(w / d + 8.5))),
// so an int8 or int4 export is what llama.cpp writes for the same weights
// (tested against its Python package, tools/gen_gguf_goldens.py).
//
// The activations stay float32: each block's 32 products are summed in
// float32 and scaled by the block's d (bfloat16 weights are widened), so a
// format's only error is its weights' rounding, which `eval
// --weights-dtype` measures. Up to kPackedDecodeRows rows of x are dot
// products that read each stored row once (bound by its bytes, as Note
// [Decoding GEMM]); more rows (a prompt, an evaluation window) unpack tiles
// of the weight to float32 and run the float32 GEMM on them, which is bound
// by arithmetic, not by the weight's bytes.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "backends/cpu/blas.h"
#include "backends/cpu/capability.h"
#include "backends/cpu/scratch_buffer.h"
#include "backends/cpu/vec_math.h"
#include "backends/kernels.h"
#include "stride/parallel.h"

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace STRIDE_CPU_NAMESPACE {
namespace {

using vec::NativeVec;
constexpr int64_t kLanes = vec::kNativeLanes;
constexpr int64_t kBlock = kWeightBlock;

// The rows of x that run as dot products over the stored rows.
constexpr int64_t kPackedDecodeRows = 4;
// Stored rows per task of the dot products (each row is 0.5-4 KiB at the
// models' widths, so a task reads at least 32 KiB).
constexpr int64_t kRowsPerTask = 16;
// Floats of one unpacked tile of the weight for the GEMM path: 4 MiB, few
// tiles per weight, and little memory beside the model.
constexpr int64_t kTileFloats = int64_t(1) << 20;

inline float half_to_float(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
#if defined(__F16C__)
  return _cvtsh_ss(h);
#elif defined(__aarch64__)
  __fp16 v;
  std::memcpy(&v, &h, 2);
  return float(v);
#else
  return Half::to_float(h);
#endif
}

inline void store_half(uint8_t* p, float d) {
  const uint16_t h = Half::from_float(d);
  std::memcpy(p, &h, 2);
}

// ---- packing (llama.cpp's reference quantizers) ----

void pack_int8_row(const float* w, uint8_t* out, int64_t cols) {
  for (int64_t b = 0; b < cols; b += kBlock, out += kInt8BlockBytes) {
    float amax = 0;
    for (int64_t j = 0; j < kBlock; ++j) amax = std::max(amax, std::fabs(w[b + j]));
    const float d = amax / 127.0f;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    store_half(out, d);
    for (int64_t j = 0; j < kBlock; ++j) out[2 + j] = uint8_t(int8_t(std::round(w[b + j] * id)));
  }
}

void pack_int4_row(const float* w, uint8_t* out, int64_t cols) {
  for (int64_t b = 0; b < cols; b += kBlock, out += kInt4BlockBytes) {
    // The weight of the largest magnitude, with its sign (the first such).
    float amax = 0, max = 0;
    for (int64_t j = 0; j < kBlock; ++j) {
      if (amax < std::fabs(w[b + j])) {
        amax = std::fabs(w[b + j]);
        max = w[b + j];
      }
    }
    const float d = max / -8.0f;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    store_half(out, d);
    for (int64_t j = 0; j < kBlock / 2; ++j) {
      const auto lo = uint8_t(std::min(15, int(int8_t(w[b + j] * id + 8.5f))));
      const auto hi = uint8_t(std::min(15, int(int8_t(w[b + kBlock / 2 + j] * id + 8.5f))));
      out[2 + j] = uint8_t(lo | (hi << 4));
    }
  }
}

// ---- unpacking ----

void unpack_int8_row(const uint8_t* p, float* w, int64_t cols) {
  for (int64_t b = 0; b < cols; b += kBlock, p += kInt8BlockBytes) {
    const float d = half_to_float(p);
    for (int64_t j = 0; j < kBlock; ++j) w[b + j] = d * float(int8_t(p[2 + j]));
  }
}

void unpack_int4_row(const uint8_t* p, float* w, int64_t cols) {
  for (int64_t b = 0; b < cols; b += kBlock, p += kInt4BlockBytes) {
    const float d = half_to_float(p);
    for (int64_t j = 0; j < kBlock / 2; ++j) {
      w[b + j] = d * float(int(p[2 + j] & 0x0F) - 8);
      w[b + kBlock / 2 + j] = d * float(int(p[2 + j] >> 4) - 8);
    }
  }
}

void unpack_bf16_row(const BFloat16* p, float* w, int64_t cols) {
  for (int64_t j = 0; j < cols; ++j) w[j] = float(p[j]);
}

// Row r of `packed` unpacked into w (cols floats).
void unpack_row(const Tensor& packed, WeightFormat format, int64_t r, float* w, int64_t cols) {
  switch (format) {
    case WeightFormat::Float32:
      std::memcpy(w, packed.data_ptr<float>() + r * cols, size_t(cols) * sizeof(float));
      return;
    case WeightFormat::BFloat16:
      unpack_bf16_row(packed.data_ptr<BFloat16>() + r * cols, w, cols);
      return;
    case WeightFormat::Int8:
      unpack_int8_row(packed.data_ptr<uint8_t>() + r * packed.size(1), w, cols);
      return;
    case WeightFormat::Int4:
      unpack_int4_row(packed.data_ptr<uint8_t>() + r * packed.size(1), w, cols);
      return;
  }
}

// ---- the dot products of decoding ----

// Sixteen quants of a block, as signed bytes, and as unsigned ones (whose
// shift brings in zeros).
using Quants16 = int8_t __attribute__((vector_size(16)));
using Quants16U = uint8_t __attribute__((vector_size(16)));

inline Quants16 load_quants(const uint8_t* p) {
  Quants16 q;
  std::memcpy(&q, p, sizeof(q));
  return q;
}

// Lanes [C kLanes, (C + 1) kLanes) of q widened to float: one sign
// extension and one conversion (GCC 12 lowers __builtin_convertvector from
// bytes to floats to a conversion per lane).
template <int C>
inline NativeVec widen_part(Quants16 q) {
#if defined(__AVX512F__)
  static_assert(C == 0);
  // The zero-masked forms: GCC 12 warns that the plain ones' undefined
  // pass-through may be used (-Wmaybe-uninitialized).
  const __mmask16 all = 0xFFFF;
  return NativeVec(_mm512_maskz_cvtepi32_ps(all, _mm512_maskz_cvtepi8_epi32(all, __m128i(q))));
#elif defined(__AVX2__)
  static_assert(C < 2);
  __m128i v = __m128i(q);
  if constexpr (C == 1) v = _mm_unpackhi_epi64(v, v);
  return NativeVec(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(v)));
#elif defined(__aarch64__)
  static_assert(C < 4);
  const int8x16_t b = int8x16_t(q);
  const int16x8_t h = C < 2 ? vmovl_s8(vget_low_s8(b)) : vmovl_s8(vget_high_s8(b));
  const int32x4_t w = C % 2 == 0 ? vmovl_s16(vget_low_s16(h)) : vmovl_s16(vget_high_s16(h));
  return vcvtq_f32_s32(w);
#else
  NativeVec out;
  for (int64_t i = 0; i < kLanes; ++i) out[i] = float(q[C * kLanes + i]);
  return out;
#endif
}

// s + x[0..16) . q, lane by lane.
template <int... C>
inline NativeVec dot16(const float* x,
                       Quants16 q,
                       NativeVec s,
                       std::integer_sequence<int, C...> /*parts*/) {
  ((s = vec::fmadd(vec::load_native(x + C * kLanes), widen_part<C>(q), s)), ...);
  return s;
}

inline NativeVec dot16(const float* x, Quants16 q, NativeVec s) {
  return dot16(x, q, s, std::make_integer_sequence<int, int(16 / kLanes)>());
}

// The sum of a vector's lanes, in a fixed order.
inline float lane_sum(NativeVec v) {
  float lanes[kLanes];
  std::memcpy(lanes, &v, sizeof(v));
  float total = 0;
  for (float lane : lanes) total += lane;
  return total;
}

// Asks for the cache lines of [p, p + bytes) into L2 (Note [Decode prefetch]
// in gemv.cpp: the stored row some 16 KiB ahead of the one being read).
inline void prefetch_row(const uint8_t* p, int64_t bytes) {
  for (int64_t line = 0; line < bytes; line += 64) __builtin_prefetch(p + line, 0, 2);
}

// acc[m] += x_m . w over one row for R rows of x (each cols long, ldx
// apart): each block's 32 products in float32, scaled by its d. A row's sum
// is the same whatever R is.
template <int R>
void dot_int8(const float* x, int64_t ldx, const uint8_t* w, int64_t cols, NativeVec* acc) {
  for (int64_t b = 0; b < cols; b += kBlock, w += kInt8BlockBytes) {
    const NativeVec d = vec::splat<NativeVec>(half_to_float(w));
    const Quants16 lo = load_quants(w + 2), hi = load_quants(w + 18);
    for (int m = 0; m < R; ++m) {
      const float* xb = x + m * ldx + b;
      acc[m] = vec::fmadd(d, dot16(xb + 16, hi, dot16(xb, lo, NativeVec{})), acc[m]);
    }
  }
}

template <int R>
void dot_int4(const float* x, int64_t ldx, const uint8_t* w, int64_t cols, NativeVec* acc) {
  const Quants16 low_bits = Quants16{} + int8_t(0x0F), eight = Quants16{} + int8_t(8);
  for (int64_t b = 0; b < cols; b += kBlock, w += kInt4BlockBytes) {
    const NativeVec d = vec::splat<NativeVec>(half_to_float(w));
    const Quants16 bytes = load_quants(w + 2);
    // Nibbles from 0 to 15, made signed: the first 16 weights, then the last.
    const Quants16 lo = (bytes & low_bits) - eight;
    const Quants16 hi = (Quants16(__builtin_convertvector(bytes, Quants16U) >> 4)) - eight;
    for (int m = 0; m < R; ++m) {
      const float* xb = x + m * ldx + b;
      acc[m] = vec::fmadd(d, dot16(xb + 16, hi, dot16(xb, lo, NativeVec{})), acc[m]);
    }
  }
}

// Independent sums per row of x, so that consecutive steps' FMAs do not
// all wait on each other (4 cycles each). The same number whatever the rows
// of x, so that a row's sum does not depend on the rows beside it; two
// keep four rows' chains in registers on AVX2.
constexpr int kChains = 2;

// bfloat16 weights widened to float32 (a shift), in kChains independent
// sums per row of x; cols a multiple of kLanes is the vector part, the rest
// is summed after it.
template <int R>
void dot_bf16(const float* x, int64_t ldx, const BFloat16* w, int64_t cols, NativeVec* acc) {
  constexpr int C = kChains;
  NativeVec chains[R][C] = {};
  auto step = [&](int64_t p, int c) {
    const NativeVec wv = vec::load_native(w + p);
    for (int m = 0; m < R; ++m)
      chains[m][c] = vec::fmadd(vec::load_native(x + m * ldx + p), wv, chains[m][c]);
  };
  int64_t p = 0;
  for (; p + C * kLanes <= cols; p += C * kLanes) {
    for (int c = 0; c < C; ++c) step(p + c * kLanes, c);
  }
  for (int c = 0; p + kLanes <= cols; p += kLanes, ++c) step(p, c);
  for (int m = 0; m < R; ++m) {
    for (int c = 0; c < C; ++c) acc[m] += chains[m][c];
  }
  for (; p < cols; ++p) {
    for (int m = 0; m < R; ++m) acc[m][0] += x[m * ldx + p] * float(w[p]);
  }
}

#if defined(__AVX2__)
// ---- the integer dot products of decoding (x86 with AVX2) ----
//
// Note [Quantized activations]
// With float32 activations each block costs a widening of its 32 quants to
// float and as many FMAs, which is slower than reading the block (the
// decode GEMV of int8 and int4 weights is then bound by arithmetic, not by
// memory). So decoding quantizes each row of x by blocks of 32 to int8 with
// a float scale (llama.cpp's Q8_0 of its activations) and multiplies bytes:
// a block's 32 products are summed exactly in int32 (vpmaddubsw and vpmaddwd,
// or one vpdpbusd where the CPU has AVX512-VNNI), then scaled by both
// blocks' d. The products need one unsigned operand: int4 quants are
// 0..15 before their offset of 8, whose share, 8 sum(q_x), comes off per
// block; int8 weights take x's sign (vpsignb) and multiply |q_x|. The
// result differs from x @ unpacked w by x's rounding (at most half of
// max |x| / 127 per element of a block), as llama.cpp's does; more rows (a
// prompt) run the float32 GEMM on unpacked tiles instead.

// x's rows (M of K floats) by blocks of 32: q (int8, |q| <= 127), |q|, each
// block's scale d (a half's value) and sum(q).
struct QuantizedRows {
  const int8_t* q = nullptr;
  const uint8_t* abs = nullptr;
  const float* d = nullptr;
  const int32_t* sum = nullptr;
  int64_t k = 0, blocks = 0;
};

QuantizedRows quantize_rows(const float* x, int64_t M, int64_t K) {
  const int64_t blocks = K / kBlock;
  thread_local ScratchBuffer buffer;
  const size_t bytes = size_t(M * K) * 2 + size_t(M * blocks) * (sizeof(float) + sizeof(int32_t));
  auto* base = static_cast<uint8_t*>(buffer.get(bytes, "quantized activations"));
  auto* q = reinterpret_cast<int8_t*>(base);
  uint8_t* abs = base + M * K;
  auto* d = reinterpret_cast<float*>(base + 2 * M * K);
  auto* sum = reinterpret_cast<int32_t*>(d + M * blocks);
  for (int64_t i = 0; i < M * blocks; ++i) {
    const float* xb = x + i * kBlock;
    float amax = 0;
    for (int64_t j = 0; j < kBlock; ++j) amax = std::max(amax, std::fabs(xb[j]));
    // As llama.cpp's x86 quantizer of its activations: d rounded to a half
    // as its blocks store it, x scaled by 127 / max |x|, nearest even.
    const float scale = Half::to_float(Half::from_float(amax / 127.0f));
    const float inverse = amax != 0 ? 127.0f / amax : 0.0f;
    int32_t total = 0;
    for (int64_t j = 0; j < kBlock; ++j) {
      const auto v = int8_t(std::nearbyint(xb[j] * inverse));
      q[i * kBlock + j] = v;
      abs[i * kBlock + j] = uint8_t(v < 0 ? -v : v);
      total += v;
    }
    d[i] = scale;
    sum[i] = total;
  }
  return {q, abs, d, sum, K, blocks};
}

inline __m256i load32(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

// An int4 block's 32 quants as bytes 0..15, in order.
inline __m256i int4_quants(const uint8_t* p) {
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(bytes, 4), bytes),
                          _mm256_set1_epi8(0x0F));
}

inline float lane_sum8(__m256 v) {
  const __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 q = _mm_add_ps(h, _mm_movehl_ps(h, h));
  return _mm_cvtss_f32(_mm_add_ss(q, _mm_shuffle_ps(q, q, 1)));
}

// c + the sums of 4 adjacent products of a (u8) and b (s8), in 8 int32 lanes.
struct BytePairs {
  static __m256i dot(__m256i c, __m256i a, __m256i b) {
    const __m256i pairs = _mm256_maddubs_epi16(a, b);  // |pair| <= 2 * 127 * 128: no saturation
    return _mm256_add_epi32(c, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
  }
};

#if defined(__AVX512F__)
struct Vnni {
  [[gnu::target("avx512vnni,avx512vl")]] static __m256i dot(__m256i c, __m256i a, __m256i b) {
    return _mm256_dpbusd_epi32(c, a, b);
  }
};

bool cpu_has_avx512_vnni() {
  static const bool has = __builtin_cpu_supports("avx512vnni") != 0;
  return has;
}
#endif

// acc[m][c] += x_m's block b . w's block b, for R rows of x.
template <class Dot, WeightFormat F, int R>
[[gnu::always_inline]] inline void int_block(
    const QuantizedRows& x, const uint8_t* w, int64_t b, __m256 (*acc)[kChains], int c) {
  constexpr int64_t kBytes = F == WeightFormat::Int8 ? kInt8BlockBytes : kInt4BlockBytes;
  const uint8_t* wb = w + b * kBytes;
  const float dw = half_to_float(wb);
  const __m256i q = F == WeightFormat::Int8 ? load32(wb + 2) : int4_quants(wb + 2);
  for (int m = 0; m < R; ++m) {
    const int64_t at = m * x.k + b * kBlock, i = m * x.blocks + b;
    __m256i s;
    if constexpr (F == WeightFormat::Int8) {
      s = Dot::dot(_mm256_setzero_si256(), load32(x.abs + at),
                   _mm256_sign_epi8(q, load32(x.q + at)));
    } else {
      s = Dot::dot(_mm256_setr_epi32(-8 * x.sum[i], 0, 0, 0, 0, 0, 0, 0), q, load32(x.q + at));
    }
    acc[m][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_set1_ps(dw * x.d[i]), acc[m][c]);
  }
}

// out[m * ldo] = x_m . w for one stored row of int8 or int4 blocks and R
// rows of x (Note [Quantized activations]). Block b goes to chain
// b % kChains; the chains are added in a fixed order, so a row's sum does
// not depend on R.
template <class Dot, WeightFormat F, int R>
[[gnu::always_inline]] inline void int_row(const QuantizedRows& x,
                                           const uint8_t* w,
                                           float* out,
                                           int64_t ldo) {
  constexpr int C = kChains;
  __m256 acc[R][C];
  for (int m = 0; m < R; ++m) {
    for (int c = 0; c < C; ++c) acc[m][c] = _mm256_setzero_ps();
  }
  int64_t b = 0;
  for (; b + C <= x.blocks; b += C) {
    for (int c = 0; c < C; ++c) int_block<Dot, F, R>(x, w, b + c, acc, c);
  }
  for (int c = 0; b < x.blocks; ++b, ++c) int_block<Dot, F, R>(x, w, b, acc, c);
  for (int m = 0; m < R; ++m) {
    __m256 sum = acc[m][0];
    for (int c = 1; c < C; ++c) sum = _mm256_add_ps(sum, acc[m][c]);
    out[m * ldo] = lane_sum8(sum);
  }
}

// Rows [r0, r1) of a stored weight, and where their products go: y[m * ldy
// + r] for row r and x's row m.
struct RowRange {
  const Tensor& packed;
  WeightFormat format;
  int64_t r0, r1;
  float* y;
  int64_t ldy;
};

template <class Dot, WeightFormat F, int R>
[[gnu::always_inline]] inline void int_rows(const QuantizedRows& x, const RowRange& rows) {
  const auto* base = static_cast<const uint8_t*>(rows.packed.data_ptr());
  const int64_t row_bytes = rows.packed.size(1), count = rows.packed.size(0);
  const int64_t ahead = std::max<int64_t>(1, 16 * 1024 / std::max<int64_t>(row_bytes, 1));
  for (int64_t r = rows.r0; r < rows.r1; ++r) {
    const uint8_t* row = base + r * row_bytes;
    if (r + ahead < count) prefetch_row(row + ahead * row_bytes, row_bytes);
    int_row<Dot, F, R>(x, row, rows.y + r, rows.ldy);
  }
}

template <class Dot, int R>
[[gnu::always_inline]] inline void int_rows_of(const QuantizedRows& x, const RowRange& rows) {
  if (rows.format == WeightFormat::Int8) {
    int_rows<Dot, WeightFormat::Int8, R>(x, rows);
  } else {
    int_rows<Dot, WeightFormat::Int4, R>(x, rows);
  }
}

#if defined(__AVX512F__)
// Compiled for VNNI as a whole (flatten: the products' vpdpbusd inlines
// only into code compiled for it), taken where the CPU has it.
template <int R>
[[gnu::target("avx512vnni,avx512vl"), gnu::flatten]] void vnni_rows(const QuantizedRows& x,
                                                                    const RowRange& rows) {
  int_rows_of<Vnni, R>(x, rows);
}
#endif

template <int R>
void integer_rows(const QuantizedRows& x, const RowRange& rows) {
#if defined(__AVX512F__)
  if (cpu_has_avx512_vnni()) return vnni_rows<R>(x, rows);
#endif
  int_rows_of<BytePairs, R>(x, rows);
}
#endif  // __AVX2__

// y[m, r] = x_m . w_r for rows [r0, r1) of the stored weight and R rows of x.
template <int R>
void dot_rows(const float* x,
              const Tensor& packed,
              WeightFormat format,
              int64_t cols,
              int64_t r0,
              int64_t r1,
              float* y,
              int64_t ldy) {
  const auto* base = static_cast<const uint8_t*>(packed.data_ptr());
  const int64_t row_bytes = packed.size(1) * int64_t(packed.element_size());
  const int64_t rows = packed.size(0);
  const int64_t ahead = std::max<int64_t>(1, 16 * 1024 / std::max<int64_t>(row_bytes, 1));
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = base + r * row_bytes;
    if (r + ahead < rows) prefetch_row(row + ahead * row_bytes, row_bytes);
    NativeVec acc[R] = {};
    switch (format) {
      case WeightFormat::Int8:
        dot_int8<R>(x, cols, row, cols, acc);
        break;
      case WeightFormat::Int4:
        dot_int4<R>(x, cols, row, cols, acc);
        break;
      case WeightFormat::BFloat16:
        dot_bf16<R>(x, cols, reinterpret_cast<const BFloat16*>(row), cols, acc);
        break;
      case WeightFormat::Float32:
        break;  // float32 weights take the float32 GEMM (linear_packed)
    }
    for (int m = 0; m < R; ++m) y[m * ldy + r] = lane_sum(acc[m]);
  }
}

void linear_packed_decode(const Tensor& x, const Tensor& packed, WeightFormat format, Tensor& y) {
  const int64_t M = x.size(0), K = x.size(1), N = packed.size(0);
  const float* xp = x.data_ptr<float>();
  float* yp = y.data_ptr<float>();
#if defined(__AVX2__)
  if (is_blocked(format)) {
    const QuantizedRows xq = quantize_rows(xp, M, K);
    parallel_for(0, N, kRowsPerTask, [&](int64_t r0, int64_t r1) {
      const RowRange rows{packed, format, r0, r1, yp, N};
      switch (M) {
        case 1:
          return integer_rows<1>(xq, rows);
        case 2:
          return integer_rows<2>(xq, rows);
        case 3:
          return integer_rows<3>(xq, rows);
        default:
          return integer_rows<4>(xq, rows);
      }
    });
    return;
  }
#endif
  parallel_for(0, N, kRowsPerTask, [&](int64_t r0, int64_t r1) {
    switch (M) {
      case 1:
        return dot_rows<1>(xp, packed, format, K, r0, r1, yp, N);
      case 2:
        return dot_rows<2>(xp, packed, format, K, r0, r1, yp, N);
      case 3:
        return dot_rows<3>(xp, packed, format, K, r0, r1, yp, N);
      default:
        return dot_rows<4>(xp, packed, format, K, r0, r1, yp, N);
    }
  });
}

// More rows: tiles of the weight unpacked to float32, each multiplied by
// the float32 GEMM (on all threads).
void linear_packed_gemm(const Tensor& x, const Tensor& packed, WeightFormat format, Tensor& y) {
  const int64_t M = x.size(0), K = x.size(1), N = packed.size(0);
  const int64_t tile_rows = std::clamp<int64_t>(kTileFloats / std::max<int64_t>(K, 1), 1, N);
  thread_local ScratchBuffer buffer;
  auto* tile = static_cast<float*>(
      buffer.get(size_t(tile_rows * K) * sizeof(float), "unpacked weight tile"));
  for (int64_t r0 = 0; r0 < N; r0 += tile_rows) {
    const int64_t rows = std::min(tile_rows, N - r0);
    parallel_for(0, rows, kRowsPerTask, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) unpack_row(packed, format, r0 + r, tile + r * K, K);
    });
    gemm({.trans_b = true,
          .m = M,
          .n = rows,
          .k = K,
          .a = x.data_ptr<float>(),
          .lda = K,
          .b = tile,
          .ldb = K,
          .c = y.data_ptr<float>() + r0,
          .ldc = N});
  }
}

void linear_packed_kernel(const Tensor& x, const Tensor& packed, WeightFormat format, Tensor& y) {
  if (x.size(0) <= kPackedDecodeRows && format != WeightFormat::Float32) {
    linear_packed_decode(x, packed, format, y);
  } else {
    linear_packed_gemm(x, packed, format, y);
  }
}

void pack_weight_kernel(const Tensor& w, WeightFormat format, Tensor& out) {
  const int64_t N = w.size(0), K = w.size(1);
  const float* src = w.data_ptr<float>();
  parallel_for(0, N, kRowsPerTask, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      switch (format) {
        case WeightFormat::Float32:
          std::memcpy(out.data_ptr<float>() + r * K, src + r * K, size_t(K) * sizeof(float));
          break;
        case WeightFormat::BFloat16:
          round_to_bf16(src + r * K, out.data_ptr<BFloat16>() + r * K, K);
          break;
        case WeightFormat::Int8:
          pack_int8_row(src + r * K, out.data_ptr<uint8_t>() + r * out.size(1), K);
          break;
        case WeightFormat::Int4:
          pack_int4_row(src + r * K, out.data_ptr<uint8_t>() + r * out.size(1), K);
          break;
      }
    }
  });
}

void unpack_weight_kernel(const Tensor& packed, WeightFormat format, Tensor& out) {
  const int64_t N = out.size(0), K = out.size(1);
  float* dst = out.data_ptr<float>();
  parallel_for(0, N, kRowsPerTask, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) unpack_row(packed, format, r, dst + r * K, K);
  });
}

}  // namespace

STRIDE_REGISTER_CPU_KERNEL(kernels::pack_weight, pack_weight_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::unpack_weight, unpack_weight_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::linear_packed, linear_packed_kernel);

}  // namespace STRIDE_CPU_NAMESPACE
