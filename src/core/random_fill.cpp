#include "core/random_fill.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "core/check.h"
#include "core/philox.h"
#include "stride/parallel.h"

namespace stride::detail {
namespace {

__extension__ typedef unsigned __int128 uint128;

// Note [Fixed batches]
// Philox runs over batches of kBatch counters aligned to the start of the
// fill, and parallel_for hands out whole batches. Every batch but the fill's
// last is mapped by the same fixed-trip-count loop, and the last one is mapped
// in full into scratch; so no element's code path (vector body or scalar
// remainder, FMA contraction or not) depends on the thread count.
constexpr int kBatch = 64;
constexpr int64_t kGrainBatches = 32;  // 2048 counters, ~10 us: amortises a task

using Bits = PhiloxBatch<kBatch>;

// Side-stream tag of randint's rejection retries (Note [Philox side streams]
// in generator.cpp); word 3 = tag + slot, word 2 = attempt (>= 1).
constexpr uint32_t kRandintRetryTag = 0x72616E00u;  // "ran\0"

uint64_t join(uint32_t lo, uint32_t hi) {
  return uint64_t(lo) | (uint64_t(hi) << 32);
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
  STRIDE_CHECK(
      from <= to, ValueError, "[uniform_] expected from <= to; got from=", from, ", to=", to, ".");
  STRIDE_CHECK(std::isfinite(to - from),
               ValueError,
               "[uniform_] expected a finite range to - from; got from=",
               from,
               ", to=",
               to,
               ".");
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
            const uint64_t x = join(bits.w[2 * s][l], bits.w[2 * s + 1][l]);
            const double u = double(x >> 11) * 0x1p-53;  // [0, 1)
            dst[2 * l + s] = std::min(from + u * range, hi);
          }
        }
      });
}

// Box-Muller: (u1, u2) with u1 in (0, 1] (so log(u1) is finite) and u2 in
// [0, 1) give two independent N(0, 1) values r cos(theta), r sin(theta).
// Float uses a 32-bit u1 (tails to 6.66 sigma, like cuRAND) and float math.
void fill_normal(float* out, int64_t n, double mean, double std, Generator& gen) {
  check_normal(std);
  // Pair q = 2 * l + p of counter l uses words 2p (u1) and 2p + 1 (u2) and
  // writes outputs 2q (cos) and 2q + 1 (sin). Separate passes keep the libm
  // calls in tight loops and let the arithmetic vectorise.
  constexpr int kPairs = 2 * kBatch;
  fill_counters<kNormalFloatPerCounter>(
      out, n, gen, [=](const Bits& bits, const PhiloxKey&, uint64_t, float* dst) {
        float r[kPairs], c[kPairs], s[kPairs];
        for (int q = 0; q < kPairs; ++q) {
          const float u1 = (float(bits.w[2 * (q % 2)][q / 2]) + 1.0f) * 0x1p-32f;  // (0, 1]
          r[q] = std::log(u1);
        }
        for (int q = 0; q < kPairs; ++q) r[q] = std::sqrt(-2.0f * r[q]);
        for (int q = 0; q < kPairs; ++q) {
          const float u2 = float(bits.w[2 * (q % 2) + 1][q / 2] >> 8) * 0x1p-24f;  // [0, 1)
          const float theta = 2.0f * std::numbers::pi_v<float> * u2;
          c[q] = std::cos(theta);
          s[q] = std::sin(theta);
        }
        for (int q = 0; q < kPairs; ++q) {
          dst[2 * q] = float(mean + std * double(r[q] * c[q]));
          dst[2 * q + 1] = float(mean + std * double(r[q] * s[q]));
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
  STRIDE_CHECK(
      low < high, ValueError, "[random_] expected low < high; got low=", low, ", high=", high, ".");
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

}  // namespace stride::detail
