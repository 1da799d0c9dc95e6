// Philox4x32-10, the counter-based generator of Salmon et al., "Parallel
// random numbers: as easy as 1, 2, 3" (SC 2011), bit-compatible with
// Random123's philox4x32_10, cuRAND's Philox and PyTorch's. A pure function
// of (counter, key): the same inputs give the same 128 bits on every thread,
// machine and device, which is what makes stride's random ops reproducible.
#pragma once

#include <array>
#include <cstdint>

namespace stride::detail {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

inline constexpr uint32_t kPhiloxM0 = 0xD2511F53u;
inline constexpr uint32_t kPhiloxM1 = 0xCD9E8D57u;
inline constexpr uint32_t kPhiloxW0 = 0x9E3779B9u;  // golden ratio
inline constexpr uint32_t kPhiloxW1 = 0xBB67AE85u;  // sqrt(3) - 1
inline constexpr int kPhiloxRounds = 10;

inline constexpr PhiloxCounter philox_round(const PhiloxCounter& c, const PhiloxKey& k) {
  const uint64_t p0 = uint64_t(kPhiloxM0) * c[0];
  const uint64_t p1 = uint64_t(kPhiloxM1) * c[2];
  const auto hi0 = uint32_t(p0 >> 32), lo0 = uint32_t(p0);
  const auto hi1 = uint32_t(p1 >> 32), lo1 = uint32_t(p1);
  return {hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0};
}

// The 10-round bijection of `counter` under `key`. The key is bumped by the
// Weyl constants between rounds (9 bumps), as in Random123.
inline constexpr PhiloxCounter philox4x32(PhiloxCounter counter, PhiloxKey key) {
  counter = philox_round(counter, key);
#pragma GCC unroll 10
  for (int r = 1; r < kPhiloxRounds; ++r) {
    key[0] += kPhiloxW0;
    key[1] += kPhiloxW1;
    counter = philox_round(counter, key);
  }
  return counter;
}

// stride's layout of a 64-bit stream position and a 64-bit key: the low
// words first. Words 2 and 3 of the counter are zero for the main stream;
// other values name side streams (see Note [Philox side streams] in
// generator.cpp).
inline constexpr PhiloxCounter philox_counter(uint64_t index, uint32_t w2 = 0, uint32_t w3 = 0) {
  return {uint32_t(index), uint32_t(index >> 32), w2, w3};
}
inline constexpr PhiloxKey philox_key(uint64_t key) {
  return {uint32_t(key), uint32_t(key >> 32)};
}

// philox4x32 of N consecutive main-stream counters first, first + 1, ...,
// first + N - 1, in structure-of-arrays form: word w of counter first + l is
// out[w][l]. The lane loops have no dependences between lanes, so the compiler
// vectorises them (vpmuludq); the result equals N scalar philox4x32 calls.
template <int N>
struct PhiloxBatch {
  alignas(64) uint32_t w[4][N];
};

template <int N>
inline void philox4x32_batch(uint64_t first, PhiloxKey key, PhiloxBatch<N>& out) {
  uint32_t(&c)[4][N] = out.w;
  for (int l = 0; l < N; ++l) {
    const uint64_t index = first + uint64_t(l);
    c[0][l] = uint32_t(index);
    c[1][l] = uint32_t(index >> 32);
    c[2][l] = 0;
    c[3][l] = 0;
  }
  for (int r = 0; r < kPhiloxRounds; ++r) {
    const uint32_t k0 = key[0], k1 = key[1];
    for (int l = 0; l < N; ++l) {
      const uint64_t p0 = uint64_t(kPhiloxM0) * c[0][l];
      const uint64_t p1 = uint64_t(kPhiloxM1) * c[2][l];
      const uint32_t c1 = c[1][l], c3 = c[3][l];
      c[0][l] = uint32_t(p1 >> 32) ^ c1 ^ k0;
      c[1][l] = uint32_t(p1);
      c[2][l] = uint32_t(p0 >> 32) ^ c3 ^ k1;
      c[3][l] = uint32_t(p0);
    }
    key[0] += kPhiloxW0;
    key[1] += kPhiloxW1;
  }
}

}  // namespace stride::detail
