#include "backends/cpu/random_fill.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numbers>

#include "backends/cpu/capability.h"
#include "core/check.h"
#include "core/philox.h"
#include "stride/parallel.h"

namespace STRIDE_CPU_NAMESPACE {

// Philox4x32 and its batches (core/philox.h).
using namespace ::stride::detail;  // NOLINT(google-build-using-namespace)
namespace {

__extension__ typedef unsigned __int128 uint128;

// Note [Fixed batches]
// Philox runs over batches of kBatch counters aligned to the start of the
// fill, and parallel_for hands out whole batches. Every batch but the fill's
// last is mapped by the same fixed-trip-count loop, and the last one is mapped
// in full into scratch; so no element's code path (vector body or scalar
// remainder, FMA contraction or not) depends on the thread count.
constexpr int kBatch = 64;
constexpr int64_t kGrainBatches = 32;  // 2048 counters: enough to amortise a task

using Bits = PhiloxBatch<kBatch>;

// Side-stream tag of randint's rejection retries (Note [Philox side streams]
// in generator.cpp); word 3 = tag + slot, word 2 = attempt (>= 1).
constexpr uint32_t kRandintRetryTag = 0x72616E00u;  // "ran\0"

uint64_t join(uint32_t lo, uint32_t hi) {
  return uint64_t(lo) | (uint64_t(hi) << 32);
}

// The top 53 bits of the word (lo, hi), x: the [0, 1) double x 2^-53 of
// fill_uniform(double*) and the draws of bernoulli_at both come from it, so
// they cannot drift apart.
uint64_t top53(uint32_t lo, uint32_t hi) {
  return join(lo, hi) >> 11;
}

double unit_double(uint32_t lo, uint32_t hi) {
  return double(top53(lo, hi)) * 0x1p-53;
}

// The driver of Note [Counter-based fills]. map(bits, key, first, dst) writes the
// kBatch * K outputs of counters first .. first + kBatch - 1 to dst; counter
// first + l gives outputs l * K .. l * K + K - 1. `out` is never written past n.
template <int64_t K, class T, class Map>
void fill_counters(T* out, int64_t n, Generator& gen, const Map& map) {
  STRIDE_ASSERT(n >= 0, "a fill needs n >= 0; got ", n);
  if (n == 0) return;
  const int64_t counters = (n + K - 1) / K;
  const uint64_t base = gen.reserve(uint64_t(counters));
  const PhiloxKey key = philox_key(gen.key());
  const int64_t batches = (counters + kBatch - 1) / kBatch;
  parallel_for(0, batches, kGrainBatches, [&](int64_t begin, int64_t end) {
    Bits bits;
    T scratch[kBatch * K];
    for (int64_t b = begin; b < end; ++b) {
      const uint64_t first = base + uint64_t(b * kBatch);
      const int64_t done = b * kBatch * K;  // outputs of earlier batches
      philox4x32_batch(first, key, bits);
      if (n - done >= kBatch * K) {
        map(bits, key, first, out + done);
      } else {
        map(bits, key, first, scratch);
        std::copy(scratch, scratch + (n - done), out + done);
      }
    }
  });
}

// The largest output-type value that is still a valid U[from, to) sample.
template <class T>
T uniform_ceiling(double from, double to) {
  const T f = T(from), t = T(to);
  return f < t ? std::nextafter(t, f) : f;
}

void check_uniform(double from, double to) {
  STRIDE_CHECK(from <= to, ValueError, "[uniform_] expected from <= to; got from=", from,
               ", to=", to, ".");
  STRIDE_CHECK(std::isfinite(to - from), ValueError,
               "[uniform_] expected a finite range to - from; got from=", from, ", to=", to, ".");
}

void check_normal(double std) {
  STRIDE_CHECK(std >= 0.0, ValueError, "[normal_] expected std >= 0; got std=", std, ".");
}

}  // namespace

void fill_uniform(float* out, int64_t n, double from, double to, Generator& gen) {
  check_uniform(from, to);
  const double range = to - from;
  const float hi = uniform_ceiling<float>(from, to);
  // Rounding from + u * range to float may reach float(to); clamp to the ceiling.
  fill_counters<kUniformFloatPerCounter>(
      out, n, gen, [=](const Bits& bits, const PhiloxKey&, uint64_t, float* dst) {
        for (int l = 0; l < kBatch; ++l) {
          for (int s = 0; s < 4; ++s) {
            const double u = double(bits.w[s][l] >> 8) * 0x1p-24;  // [0, 1)
            dst[4 * l + s] = std::min(float(from + u * range), hi);
          }
        }
      });
}

void fill_uniform(double* out, int64_t n, double from, double to, Generator& gen) {
  check_uniform(from, to);
  const double range = to - from;
  const double hi = uniform_ceiling<double>(from, to);
  fill_counters<kUniformDoublePerCounter>(
      out, n, gen, [=](const Bits& bits, const PhiloxKey&, uint64_t, double* dst) {
        for (int l = 0; l < kBatch; ++l) {
          for (int s = 0; s < 2; ++s) {
            const double u = unit_double(bits.w[2 * s][l], bits.w[2 * s + 1][l]);
            dst[2 * l + s] = std::min(from + u * range, hi);
          }
        }
      });
}

namespace {

// Small batches for the ends of bernoulli_at's pieces, so that a short piece
// (the visible keys of one causal attention row) does not pay for kBatch
// counters.
constexpr int kTailBatch = 8;

// Writes the draws of elements [i, min(end, 2 (c + B))) to out, c = i / 2,
// from the B counters base + c, ...; returns the next element. An element is
// drawn (1) when its [0, 1) value x 2^-53 (x = top53) is below p, that is
// when x < limit = ceil(p 2^53), compared as integers (p 2^53 is exact).
template <int B>
int64_t bernoulli_draws(
    uint8_t* out, int64_t i, int64_t end, const PhiloxKey& key, uint64_t base, uint64_t limit) {
  constexpr int64_t K = kUniformDoublePerCounter;
  const int64_t c = i / K;
  PhiloxBatch<B> bits;
  philox4x32_batch(base + uint64_t(c), key, bits);
  const int64_t stop = std::min(end, (c + B) * K);
  if (i == c * K && stop == (c + B) * K) {  // a whole batch, in a loop that vectorises
    for (int l = 0; l < B; ++l) {
      out[2 * l] = top53(bits.w[0][l], bits.w[1][l]) < limit;
      out[2 * l + 1] = top53(bits.w[2][l], bits.w[3][l]) < limit;
    }
    return stop;
  }
  for (; i < stop; ++i) {
    const int64_t l = i / K - c, s = i % K;
    *out++ = top53(bits.w[2 * s][l], bits.w[2 * s + 1][l]) < limit;
  }
  return stop;
}

}  // namespace

void bernoulli_at(
    uint8_t* out, int64_t first, int64_t count, double p, uint64_t key, uint64_t base) {
  STRIDE_ASSERT(first >= 0 && count >= 0, "a piece of a fill needs first >= 0 and count >= 0; got ",
                first, " and ", count);
  STRIDE_ASSERT(p >= 0 && p <= 1, "bernoulli_at needs 0 <= p <= 1; got ", p);
  constexpr int64_t K = kUniformDoublePerCounter;
  const uint64_t limit = uint64_t(std::ceil(p * 0x1p53));
  const PhiloxKey k = philox_key(key);
  const int64_t end = first + count;
  int64_t i = first;
  while (end - i / K * K >= kBatch * K) {
    i = bernoulli_draws<kBatch>(out + (i - first), i, end, k, base, limit);
  }
  while (i < end) i = bernoulli_draws<kTailBatch>(out + (i - first), i, end, k, base, limit);
}

// Box-Muller: (u1, u2) with u1 in (0, 1] (so log(u1) is finite) and u2 in
// [0, 1) give two independent N(0, 1) values r cos(theta), r sin(theta) with
// r = sqrt(-2 log u1) and theta = 2 pi u2.
//
// Note [Float Box-Muller]
// libm's logf and sincosf are scalar calls, which keep the loop from
// vectorising, so the float kernel evaluates them with branch-free
// polynomials the compiler vectorises: log by exponent split + Cephes' logf
// polynomial (~1 ulp), and sincos of theta = 2 pi k / 2^24 by an exact
// integer reduction of k to the nearest quarter turn plus Cephes' sinf/cosf
// polynomials on [-pi/4, pi/4] (~1 ulp). u1 = (x + 1) 2^-32 keeps 32 bits
// (tails to 6.66 sigma, as in cuRAND). Tests compare the result with a
// double-precision Box-Muller.
namespace {

// log(x) for a positive normal float x.
inline float log_positive(float x) {
  const auto bits = std::bit_cast<uint32_t>(x);
  int32_t e = int32_t(bits >> 23) - 127;
  float m = std::bit_cast<float>((bits & 0x007FFFFFu) | 0x3F800000u);  // [1, 2)
  const bool high = m > std::numbers::sqrt2_v<float>;                  // fold to [0.707, 1.414)
  m = high ? 0.5f * m : m;
  e += high ? 1 : 0;
  const float f = m - 1.0f, z = f * f, fe = float(e);
  float y = 7.0376836292e-2f;
  y = y * f - 1.1514610310e-1f;
  y = y * f + 1.1676998740e-1f;
  y = y * f - 1.2420140846e-1f;
  y = y * f + 1.4249322787e-1f;
  y = y * f - 1.6668057665e-1f;
  y = y * f + 2.0000714765e-1f;
  y = y * f - 2.4999993993e-1f;
  y = y * f + 3.3333331174e-1f;
  y = y * f * z;
  y += -2.12194440e-4f * fe;  // ln 2 = 0.693359375 - 2.12194440e-4, split for exactness
  y += -0.5f * z;
  return f + y + 0.693359375f * fe;
}

// (sin, cos) of 2 pi k / 2^24 for k in [0, 2^24).
inline void sincos_turns24(uint32_t k, float& sin_out, float& cos_out) {
  const uint32_t q = (k + (1u << 21)) >> 22;                      // nearest quarter turn
  const float a = float(int32_t(k - (q << 22))) * 3.7450702e-7f;  // 2 pi / 2^24
  const float z = a * a;                                          // a in [-pi/4, pi/4)
  float s = -1.9515295891e-4f;
  s = s * z + 8.3321608736e-3f;
  s = s * z - 1.6666654611e-1f;
  s = s * z * a + a;
  float c = 2.443315711809948e-5f;
  c = c * z - 1.388731625493765e-3f;
  c = c * z + 4.166664568298827e-2f;
  c = c * z * z - 0.5f * z + 1.0f;
  // Rotate by q quarter turns: (sin, cos)(a + q pi / 2).
  const bool swap = q & 1u;
  const float s1 = swap ? c : s, c1 = swap ? s : c;
  sin_out = (q & 2u) ? -s1 : s1;
  cos_out = ((q + 1u) & 2u) ? -c1 : c1;
}

}  // namespace

// Pair p in {0, 1} of counter l uses words 2p (u1) and 2p + 1 (u2) and
// writes outputs 4l + 2p (cos) and 4l + 2p + 1 (sin).
void fill_normal(float* out, int64_t n, double mean, double std, Generator& gen) {
  check_normal(std);
  const auto fmean = float(mean), fstd = float(std);
  fill_counters<kNormalFloatPerCounter>(
      out, n, gen, [=](const Bits& bits, const PhiloxKey&, uint64_t, float* dst) {
        float r[2][kBatch];
        for (int p = 0; p < 2; ++p) {
          for (int l = 0; l < kBatch; ++l) {
            const float u1 = (float(bits.w[2 * p][l]) + 1.0f) * 0x1p-32f;  // (0, 1]
            r[p][l] = -2.0f * log_positive(u1);
          }
          for (int l = 0; l < kBatch; ++l) r[p][l] = std::sqrt(r[p][l]);  // scalar (errno)
        }
        for (int l = 0; l < kBatch; ++l) {
          for (int p = 0; p < 2; ++p) {
            float s, c;
            sincos_turns24(bits.w[2 * p + 1][l] >> 8, s, c);
            dst[4 * l + 2 * p] = fmean + fstd * (r[p][l] * c);
            dst[4 * l + 2 * p + 1] = fmean + fstd * (r[p][l] * s);
          }
        }
      });
}

void fill_normal(double* out, int64_t n, double mean, double std, Generator& gen) {
  check_normal(std);
  fill_counters<kNormalDoublePerCounter>(
      out, n, gen, [=](const Bits& bits, const PhiloxKey&, uint64_t, double* dst) {
        for (int l = 0; l < kBatch; ++l) {
          const uint64_t x1 = join(bits.w[0][l], bits.w[1][l]);
          const uint64_t x2 = join(bits.w[2][l], bits.w[3][l]);
          const double u1 = double((x1 >> 11) + 1) * 0x1p-53;  // (0, 1]
          const double u2 = double(x2 >> 11) * 0x1p-53;        // [0, 1)
          const double r = std::sqrt(-2.0 * std::log(u1));
          const double theta = 2.0 * std::numbers::pi * u2;
          dst[2 * l] = mean + std * (r * std::cos(theta));
          dst[2 * l + 1] = mean + std * (r * std::sin(theta));
        }
      });
}

namespace {

// Redraws a rejected randint sample from its own side stream (counter,
// attempt, tag + slot) until accepted. Rare (probability < range / 2^64 per
// draw), so kept out of line.
[[gnu::noinline, gnu::cold]] uint128 randint_retry(
    PhiloxKey key, uint64_t counter, uint32_t slot, uint64_t range, uint64_t threshold) {
  for (uint32_t attempt = 1;; ++attempt) {
    const auto w = philox4x32(philox_counter(counter, attempt, kRandintRetryTag + slot), key);
    const uint128 m = uint128(join(w[0], w[1])) * range;
    if (uint64_t(m) >= threshold) return m;
  }
}

}  // namespace

// Lemire, "Fast random integer generation in an interval" (2019): the high
// word of x * range is uniform once draws whose low word falls below
// 2^64 mod range are rejected. A rejected draw is redrawn from the element's
// own side stream, so it never shifts the main stream and the result stays a
// function of (key, counter, slot).
void fill_randint(int64_t* out, int64_t n, int64_t low, int64_t high, Generator& gen) {
  STRIDE_CHECK(low < high, ValueError, "[random_] expected low < high; got low=", low,
               ", high=", high, ".");
  const uint64_t range = uint64_t(high) - uint64_t(low);  // in [1, 2^64 - 1]
  const uint64_t threshold = (0 - range) % range;         // 2^64 mod range
  fill_counters<kRandintPerCounter>(
      out, n, gen, [=](const Bits& bits, const PhiloxKey& key, uint64_t first, int64_t* dst) {
        for (int l = 0; l < kBatch; ++l) {
          for (uint32_t s = 0; s < 2; ++s) {
            uint128 m = uint128(join(bits.w[2 * s][l], bits.w[2 * s + 1][l])) * range;
            if (uint64_t(m) < threshold) [[unlikely]] {
              m = randint_retry(key, first + uint64_t(l), s, range, threshold);
            }
            dst[2 * l + s] = int64_t(uint64_t(low) + uint64_t(m >> 64));
          }
        }
      });
}

}  // namespace STRIDE_CPU_NAMESPACE

namespace STRIDE_CPU_NAMESPACE {
namespace {

void uniform_fill_kernel(Tensor& out, double from, double to, Generator& gen) {
  if (out.dtype() == kFloat64) {
    fill_uniform(out.data_ptr<double>(), out.numel(), from, to, gen);
  } else {
    fill_uniform(out.data_ptr<float>(), out.numel(), from, to, gen);
  }
}

void normal_fill_kernel(Tensor& out, double mean, double std, Generator& gen) {
  if (out.dtype() == kFloat64) {
    fill_normal(out.data_ptr<double>(), out.numel(), mean, std, gen);
  } else {
    fill_normal(out.data_ptr<float>(), out.numel(), mean, std, gen);
  }
}

void randint_fill_kernel(Tensor& out, int64_t low, int64_t high, Generator& gen) {
  fill_randint(out.data_ptr<int64_t>(), out.numel(), low, high, gen);
}

}  // namespace

STRIDE_REGISTER_CPU_KERNEL(kernels::uniform_fill, uniform_fill_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::normal_fill, normal_fill_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::randint_fill, randint_fill_kernel);

}  // namespace STRIDE_CPU_NAMESPACE
