// Philox known answers, Generator semantics (seeding, fork, state, moves,
// thread-safe reserve) and the counter-based fill kernels (thread-count
// invariance, counter accounting, ranges and loose statistics).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numbers>
#include <set>
#include <thread>
#include <vector>

#include "backends/cpu/random_fill.h"
#include "core/philox.h"
#include "stride/error.h"
#include "stride/generator.h"
#include "stride/parallel.h"
#include "support/thread_count.h"

namespace stride {
namespace {

using detail::PhiloxCounter;
using detail::PhiloxKey;
__extension__ typedef unsigned __int128 uint128;

// ---- Philox ----------------------------------------------------------------

// Random123 kat_vectors, philox4x32 10 rows: counter, key -> output.
TEST(Philox, MatchesRandom123KnownAnswers) {
  struct Kat {
    PhiloxCounter ctr;
    PhiloxKey key;
    PhiloxCounter expected;
  };
  const Kat kats[] = {
      {{0x00000000, 0x00000000, 0x00000000, 0x00000000},
       {0x00000000, 0x00000000},
       {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const Kat& kat : kats) EXPECT_EQ(detail::philox4x32(kat.ctr, kat.key), kat.expected);
}

TEST(Philox, BatchEqualsScalarCalls) {
  const PhiloxKey key = {0xdeadbeef, 0x01234567};
  const uint64_t first = (uint64_t(1) << 32) - 5;  // crosses into the high word
  detail::PhiloxBatch<16> batch;
  detail::philox4x32_batch(first, key, batch);
  for (int l = 0; l < 16; ++l) {
    const auto expected = detail::philox4x32(detail::philox_counter(first + uint64_t(l)), key);
    for (int w = 0; w < 4; ++w) EXPECT_EQ(batch.w[w][l], expected[size_t(w)]) << l << "," << w;
  }
}

TEST(Philox, IsUsableAtCompileTime) {
  static_assert(detail::philox4x32({0, 0, 0, 0}, {0, 0})[0] == 0x6627e8d5u);
}

// ---- Generator -------------------------------------------------------------

std::vector<uint64_t> draws(Generator& gen, int n) {
  std::vector<uint64_t> v(static_cast<size_t>(n));
  for (auto& x : v) x = gen.next_u64();
  return v;
}

TEST(Generator, SameSeedGivesIdenticalSequences) {
  Generator a(123), b(123);
  EXPECT_EQ(draws(a, 100), draws(b, 100));
}

TEST(Generator, DifferentSeedsDiffer) {
  Generator a(1), b(2);
  const auto da = draws(a, 100), db = draws(b, 100);
  int equal = 0;
  for (size_t i = 0; i < da.size(); ++i) equal += da[i] == db[i];
  EXPECT_EQ(equal, 0);
  EXPECT_NE(Generator(1).key(), Generator(2).key());
}

TEST(Generator, NextU64IsPhiloxOfTheCounter) {
  Generator gen(7);
  gen.reserve(5);
  const auto out = detail::philox4x32(detail::philox_counter(5), detail::philox_key(gen.key()));
  EXPECT_EQ(gen.next_u64(), uint64_t(out[0]) | (uint64_t(out[1]) << 32));
  EXPECT_EQ(gen.get_state().offset, 6u);
}

TEST(Generator, ManualSeedRestartsTheStream) {
  Generator gen(5);
  const auto first = draws(gen, 10);
  gen.manual_seed(5);
  EXPECT_EQ(gen.get_state().offset, 0u);
  EXPECT_EQ(draws(gen, 10), first);
  gen.manual_seed(6);
  EXPECT_EQ(gen.seed(), 6u);
  EXPECT_NE(draws(gen, 10), first);
}

TEST(Generator, ReserveAdvancesTheOffset) {
  Generator gen(9);
  EXPECT_EQ(gen.reserve(10), 0u);
  EXPECT_EQ(gen.reserve(3), 10u);
  EXPECT_EQ(gen.reserve(0), 13u);
  EXPECT_EQ(gen.get_state().offset, 13u);
}

TEST(Generator, ConcurrentReservesAreDisjoint) {
  Generator gen(11);
  constexpr int kThreads = 4, kPerThread = 2000;
  std::vector<std::vector<uint64_t>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) got[size_t(t)].push_back(gen.reserve(3));
    });
  }
  for (auto& th : threads) th.join();
  std::set<uint64_t> firsts;
  for (const auto& v : got) firsts.insert(v.begin(), v.end());
  ASSERT_EQ(firsts.size(), size_t(kThreads * kPerThread));
  uint64_t expected = 0;
  for (uint64_t f : firsts) {  // blocks of 3 tile [0, total) exactly
    EXPECT_EQ(f, expected);
    expected += 3;
  }
  EXPECT_EQ(gen.get_state().offset, expected);
}

TEST(Generator, ForkedStreamsDiffer) {
  Generator parent(42);
  Generator s1 = parent.fork(1), s2 = parent.fork(2);
  EXPECT_NE(s1.seed(), s2.seed());
  EXPECT_NE(s1.seed(), parent.seed());
  EXPECT_NE(draws(s1, 10), draws(s2, 10));
  // The same stream id under another parent seed is another stream.
  EXPECT_NE(Generator(43).fork(1).seed(), Generator(42).fork(1).seed());
}

TEST(Generator, ForkIsReproducibleAndIgnoresParentOffset) {
  Generator parent(42);
  const uint64_t before = parent.fork(3).seed();
  parent.reserve(1000);
  parent.next_u64();
  const GeneratorState state = parent.get_state();
  Generator child = parent.fork(3);
  EXPECT_EQ(child.seed(), before);
  EXPECT_EQ(child.get_state().offset, 0u);
  EXPECT_EQ(parent.get_state().offset, state.offset);  // fork does not consume
  Generator again = Generator(42).fork(3);
  EXPECT_EQ(draws(child, 20), draws(again, 20));
}

TEST(Generator, StateRoundTripReproducesTheContinuation) {
  Generator gen(2024);
  draws(gen, 17);
  const GeneratorState state = gen.get_state();
  const auto continuation = draws(gen, 50);

  Generator other(1);
  other.set_state(state);
  EXPECT_EQ(other.get_state().seed, state.seed);
  EXPECT_EQ(other.get_state().offset, state.offset);
  EXPECT_EQ(other.key(), gen.key());
  EXPECT_EQ(draws(other, 50), continuation);

  gen.set_state(state);
  EXPECT_EQ(draws(gen, 50), continuation);
}

TEST(Generator, MoveKeepsTheStream) {
  Generator reference(77);
  draws(reference, 5);
  const auto expected = draws(reference, 10);

  Generator src(77);
  draws(src, 5);
  Generator moved(std::move(src));
  EXPECT_EQ(draws(moved, 10), expected);

  Generator src2(77);
  draws(src2, 5);
  Generator assigned(1);
  assigned = std::move(src2);
  EXPECT_EQ(assigned.seed(), 77u);
  EXPECT_EQ(draws(assigned, 10), expected);
}

TEST(Generator, ManualSeedFixesTheDefaultGenerator) {
  Generator& def = default_generator();
  EXPECT_EQ(&def, &default_generator());
  const GeneratorState saved = def.get_state();
  manual_seed(31337);
  Generator ref(31337);
  EXPECT_EQ(def.seed(), 31337u);
  EXPECT_EQ(draws(def, 10), draws(ref, 10));
  def.set_state(saved);
}

// ---- Fill kernels ----------------------------------------------------------

// Large enough that parallel_for splits it (grain: 2048 counters).
constexpr int64_t kBig = 100003;

// Runs fill(gen, buffer) with 1 and with 2 threads from the same seed.
template <class T, class Fill>
void expect_thread_invariant(Fill fill) {
  std::vector<T> one(static_cast<size_t>(kBig)), two(static_cast<size_t>(kBig));
  Generator g1(99), g2(99);
  {
    testing::ThreadCount guard(1);
    fill(one.data(), g1);
  }
  {
    testing::ThreadCount guard(2);
    fill(two.data(), g2);
  }
  EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(T)), 0);
  EXPECT_EQ(g1.get_state().offset, g2.get_state().offset);
}

TEST(RandomFill, IsThreadCountInvariant) {
  expect_thread_invariant<float>(
      [](float* p, Generator& g) { cpu::fill_uniform(p, kBig, -2.0, 3.0, g); });
  expect_thread_invariant<double>(
      [](double* p, Generator& g) { cpu::fill_uniform(p, kBig, -2.0, 3.0, g); });
  expect_thread_invariant<float>(
      [](float* p, Generator& g) { cpu::fill_normal(p, kBig, 1.0, 2.0, g); });
  expect_thread_invariant<double>(
      [](double* p, Generator& g) { cpu::fill_normal(p, kBig, 1.0, 2.0, g); });
  expect_thread_invariant<int64_t>(
      [](int64_t* p, Generator& g) { cpu::fill_randint(p, kBig, -5, 1000, g); });
  // range = 3 * 2^62: a quarter of the first draws are rejected and redrawn.
  const int64_t low = std::numeric_limits<int64_t>::min();
  const int64_t high = int64_t(1) << 62;
  expect_thread_invariant<int64_t>(
      [=](int64_t* p, Generator& g) { cpu::fill_randint(p, kBig, low, high, g); });
}

TEST(RandomFill, ReservesCeilNOverKCounters) {
  Generator gen(1);
  std::vector<float> f(10);
  std::vector<double> d(10);
  std::vector<int64_t> i(10);
  cpu::fill_uniform(f.data(), 10, 0.0, 1.0, gen);  // ceil(10 / 4) = 3
  EXPECT_EQ(gen.get_state().offset, 3u);
  cpu::fill_uniform(d.data(), 9, 0.0, 1.0, gen);  // 5
  EXPECT_EQ(gen.get_state().offset, 8u);
  cpu::fill_normal(f.data(), 5, 0.0, 1.0, gen);  // 2
  EXPECT_EQ(gen.get_state().offset, 10u);
  cpu::fill_normal(d.data(), 3, 0.0, 1.0, gen);  // 2
  EXPECT_EQ(gen.get_state().offset, 12u);
  cpu::fill_randint(i.data(), 10, 0, 7, gen);  // 5
  EXPECT_EQ(gen.get_state().offset, 17u);
  cpu::fill_randint(i.data(), 0, 0, 7, gen);
  EXPECT_EQ(gen.get_state().offset, 17u);
}

TEST(RandomFill, ConsecutiveFillsDiffer) {
  Generator gen(3);
  std::vector<float> a(1000), b(1000);
  cpu::fill_uniform(a.data(), 1000, 0.0, 1.0, gen);
  cpu::fill_uniform(b.data(), 1000, 0.0, 1.0, gen);
  EXPECT_NE(a, b);
  std::vector<int64_t> c(1000), d(1000);
  cpu::fill_randint(c.data(), 1000, 0, 1 << 30, gen);
  cpu::fill_randint(d.data(), 1000, 0, 1 << 30, gen);
  EXPECT_NE(c, d);
}

// A fill of n then a fill of m is a prefix and a later slice of one big fill:
// the second fill starts at the next unused counter, element ceil(n / k) * k.
template <class T, int64_t K, class Fill>
void expect_continuation(Fill fill) {
  const int64_t n = 10 * K + 1, m = 7 * K + 3;
  const int64_t skip = (n + K - 1) / K * K;
  Generator split(5), whole(5);
  std::vector<T> first(static_cast<size_t>(n)), second(static_cast<size_t>(m)),
      all(static_cast<size_t>(skip + m));
  fill(first.data(), n, split);
  fill(second.data(), m, split);
  fill(all.data(), skip + m, whole);
  EXPECT_TRUE(std::equal(first.begin(), first.end(), all.begin()));
  EXPECT_TRUE(std::equal(second.begin(), second.end(), all.begin() + skip));
  EXPECT_EQ(split.get_state().offset, whole.get_state().offset);
}

TEST(RandomFill, SecondFillContinuesTheCounterStream) {
  expect_continuation<float, kernels::kUniformFloatPerCounter>(
      [](float* p, int64_t n, Generator& g) { cpu::fill_uniform(p, n, 0.0, 1.0, g); });
  expect_continuation<double, kernels::kUniformDoublePerCounter>(
      [](double* p, int64_t n, Generator& g) { cpu::fill_uniform(p, n, 0.0, 1.0, g); });
  expect_continuation<float, kernels::kNormalFloatPerCounter>(
      [](float* p, int64_t n, Generator& g) { cpu::fill_normal(p, n, 0.0, 1.0, g); });
  expect_continuation<double, kernels::kNormalDoublePerCounter>(
      [](double* p, int64_t n, Generator& g) { cpu::fill_normal(p, n, 0.0, 1.0, g); });
  expect_continuation<int64_t, kernels::kRandintPerCounter>(
      [](int64_t* p, int64_t n, Generator& g) { cpu::fill_randint(p, n, -3, 3, g); });
}

// Element i of a fill is a fixed function of Philox at counter base + i / k
// (here across several internal batches and from a nonzero base).
TEST(RandomFill, ElementsAreTheDocumentedFunctionOfTheirCounter) {
  constexpr int64_t n = 301;
  Generator gen(8);
  gen.reserve(4);
  std::vector<double> u(static_cast<size_t>(n));
  cpu::fill_uniform(u.data(), n, 0.0, 1.0, gen);
  std::vector<int64_t> r(static_cast<size_t>(n));
  cpu::fill_randint(r.data(), n, -5, 5, gen);  // 2^64 mod 10 = 6: no rejections in practice
  const uint64_t r_base = 4 + (n + 1) / 2;

  const auto key = detail::philox_key(gen.key());
  auto word64 = [&](uint64_t counter, int64_t slot) {
    const auto bits = detail::philox4x32(detail::philox_counter(counter), key);
    return uint64_t(bits[size_t(2 * slot)]) | (uint64_t(bits[size_t(2 * slot + 1)]) << 32);
  };
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t x = word64(4 + uint64_t(i / 2), i % 2);
    ASSERT_EQ(u[size_t(i)], double(x >> 11) * 0x1p-53) << "element " << i;
    const uint64_t y = word64(r_base + uint64_t(i / 2), i % 2);
    const auto expected = int64_t(uint64_t(-5) + (uint128(y) * 10 >> 64));
    ASSERT_EQ(r[size_t(i)], expected) << "element " << i;
  }
}

// bernoulli_at gives any piece of bernoulli_(p)'s draws from (key, base)
// alone: pieces from odd and even elements, shorter than a batch and
// spanning several whole batches, tile the fill's comparison u < p bit for
// bit, at the edges p = 0 and 1 too.
TEST(RandomFill, BernoulliAtReproducesPiecesOfAFill) {
  constexpr int64_t n = 1001;
  Generator gen(12);
  gen.reserve(3);
  const uint64_t base = gen.get_state().offset;
  std::vector<double> whole(static_cast<size_t>(n));
  cpu::fill_uniform(whole.data(), n, 0.0, 1.0, gen);
  const std::vector<int64_t> cuts = {0, 1, 2, 5, 6, 6, 19, 150, 151, 280, 537, 538, 1000, 1001};
  // An element's own value u and the next double above it, where u < p
  // flips. Below 0.5 that double is less than 2^-53 above u, so p 2^53 has a
  // fraction, which the integer threshold must round up; 0.5 has none.
  const double u =
      *std::find_if(whole.begin(), whole.end(), [](double x) { return x > 0.25 && x < 0.5; });
  for (double p : {0.0, 0.1, 0.5, 0.9, 1.0, u, std::nextafter(u, 1.0)}) {
    std::vector<uint8_t> pieces(static_cast<size_t>(n), 7);
    for (size_t c = 0; c + 1 < cuts.size(); ++c) {
      const int64_t first = cuts[c], count = cuts[c + 1] - cuts[c];
      cpu::bernoulli_at(pieces.data() + first, first, count, p, gen.key(), base);
    }
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(pieces[size_t(i)], whole[size_t(i)] < p ? 1 : 0) << "p " << p << " element " << i;
    }
  }
}

template <class T>
void expect_moments(const std::vector<T>& v, double mean, double var, double tol) {
  double sum = 0, sq = 0;
  for (T x : v) sum += double(x);
  const double m = sum / double(v.size());
  for (T x : v) sq += (double(x) - m) * (double(x) - m);
  EXPECT_NEAR(m, mean, tol);
  EXPECT_NEAR(sq / double(v.size()), var, tol * 4);
}

TEST(RandomFill, UniformHasTheRightMomentsAndRange) {
  constexpr int64_t n = 1000000;
  Generator gen(12);
  std::vector<float> f(static_cast<size_t>(n));
  cpu::fill_uniform(f.data(), n, -1.0, 3.0, gen);
  EXPECT_GE(*std::min_element(f.begin(), f.end()), -1.0f);
  EXPECT_LT(*std::max_element(f.begin(), f.end()), 3.0f);
  expect_moments(f, 1.0, 16.0 / 12.0, 0.01);

  std::vector<double> d(static_cast<size_t>(n));
  cpu::fill_uniform(d.data(), n, 0.0, 1.0, gen);
  EXPECT_GE(*std::min_element(d.begin(), d.end()), 0.0);
  EXPECT_LT(*std::max_element(d.begin(), d.end()), 1.0);
  expect_moments(d, 0.5, 1.0 / 12.0, 0.003);
}

// With a one-ulp range, about half the samples round up to `to`; they must
// be clamped below it.
TEST(RandomFill, UniformNeverReturnsTo) {
  Generator gen(13);
  const float ff = 1.0f, tf = std::nextafter(1.0f, 2.0f);
  std::vector<float> f(10000);
  cpu::fill_uniform(f.data(), 10000, ff, tf, gen);
  for (float x : f) ASSERT_EQ(x, ff);

  const double td = std::nextafter(1.0, 2.0);
  std::vector<double> d(10000);
  cpu::fill_uniform(d.data(), 10000, 1.0, td, gen);
  for (double x : d) ASSERT_EQ(x, 1.0);

  std::vector<double> point(10);
  cpu::fill_uniform(point.data(), 10, 2.5, 2.5, gen);  // an empty range gives `from`
  for (double x : point) EXPECT_EQ(x, 2.5);
}

TEST(RandomFill, NormalHasTheRightMoments) {
  constexpr int64_t n = 1000000;
  Generator gen(14);
  std::vector<float> f(static_cast<size_t>(n));
  cpu::fill_normal(f.data(), n, 0.0, 1.0, gen);
  for (float x : f) ASSERT_TRUE(std::isfinite(x));
  expect_moments(f, 0.0, 1.0, 0.01);

  std::vector<double> d(static_cast<size_t>(n));
  cpu::fill_normal(d.data(), n, 3.0, 0.5, gen);
  for (double x : d) ASSERT_TRUE(std::isfinite(x));
  expect_moments(d, 3.0, 0.25, 0.005);
  // About 68.3% within one sigma.
  const auto within =
      std::count_if(d.begin(), d.end(), [](double x) { return std::abs(x - 3.0) < 0.5; });
  EXPECT_NEAR(double(within) / double(n), 0.6827, 0.005);
}

// The float kernel evaluates log and sincos with polynomials (Note [Float
// Box-Muller]); they must agree with double-precision Box-Muller on the same
// float-quantised uniforms to a few float ulps.
TEST(RandomFill, NormalFloatMatchesDoublePrecisionBoxMuller) {
  constexpr int64_t n = 400000;
  Generator gen(18);
  std::vector<float> f(static_cast<size_t>(n));
  cpu::fill_normal(f.data(), n, 0.0, 1.0, gen);
  const auto key = detail::philox_key(gen.key());
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    const auto bits = detail::philox4x32(detail::philox_counter(uint64_t(i / 4)), key);
    const auto p = size_t(i % 4 / 2);
    const double u1 = double((float(bits[2 * p]) + 1.0f) * 0x1p-32f);
    const double u2 = double(bits[2 * p + 1] >> 8) * 0x1p-24;
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double theta = 2.0 * std::numbers::pi * u2;
    const double ref = i % 2 == 0 ? r * std::cos(theta) : r * std::sin(theta);
    worst = std::max(worst, std::abs(double(f[size_t(i)]) - ref) / std::max(1.0, std::abs(ref)));
  }
  EXPECT_LT(worst, 1e-6);
  EXPECT_GT(*std::max_element(f.begin(), f.end()), 4.0f);  // the tails are there
  EXPECT_LT(*std::min_element(f.begin(), f.end()), -4.0f);
}

TEST(RandomFill, RandintCoversTheRangeAndNeverHitsHigh) {
  constexpr int64_t n = 100000, low = -3, high = 7;
  Generator gen(15);
  std::vector<int64_t> v(static_cast<size_t>(n));
  cpu::fill_randint(v.data(), n, low, high, gen);
  std::vector<int64_t> counts(size_t(high - low), 0);
  for (int64_t x : v) {
    ASSERT_GE(x, low);
    ASSERT_LT(x, high);
    ++counts[size_t(x - low)];
  }
  for (int64_t c : counts) EXPECT_NEAR(double(c), double(n) / 10.0, 600.0);  // ~6 sigma

  cpu::fill_randint(v.data(), 100, 5, 6, gen);  // a single value
  for (int i = 0; i < 100; ++i) EXPECT_EQ(v[size_t(i)], 5);
}

// range = 3 * 2^62 exposes both classic biases. A plain x % range gives
// offsets below 2^62 twice the weight (1/2 of the mass instead of 1/3);
// multiply-shift without rejection, floor(3x / 4), gives offsets divisible by
// 3 twice the weight (1/2 instead of 1/3). An unbiased draw gives 1/3 each.
TEST(RandomFill, RandintIsUnbiasedForHugeRanges) {
  constexpr int64_t n = 300000;
  const int64_t low = std::numeric_limits<int64_t>::min();
  const int64_t high = int64_t(1) << 62;
  Generator gen(16);
  std::vector<int64_t> v(static_cast<size_t>(n));
  cpu::fill_randint(v.data(), n, low, high, gen);
  int64_t below = 0, multiple_of_3 = 0;
  for (int64_t x : v) {
    ASSERT_GE(x, low);
    ASSERT_LT(x, high);
    const uint64_t offset = uint64_t(x) - uint64_t(low);
    below += offset < (uint64_t(1) << 62);
    multiple_of_3 += offset % 3 == 0;
  }
  EXPECT_NEAR(double(below) / double(n), 1.0 / 3.0, 0.01);
  EXPECT_NEAR(double(multiple_of_3) / double(n), 1.0 / 3.0, 0.01);

  // The full int64 range minus one value does not overflow.
  const int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  cpu::fill_randint(v.data(), 1000, lo, hi, gen);
  EXPECT_LT(*std::max_element(v.begin(), v.begin() + 1000), hi);
  EXPECT_LT(*std::min_element(v.begin(), v.begin() + 1000), 0);
  EXPECT_GT(*std::max_element(v.begin(), v.begin() + 1000), 0);
}

TEST(RandomFill, RejectsBadArgumentsWithoutConsumingCounters) {
  Generator gen(17);
  std::vector<int64_t> i(4);
  std::vector<float> f(4);
  try {
    cpu::fill_randint(i.data(), 4, 5, 5, gen);
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "[random_] expected low < high; got low=5, high=5.");
  }
  EXPECT_THROW(cpu::fill_randint(i.data(), 4, 6, 5, gen), ValueError);
  EXPECT_THROW(cpu::fill_uniform(f.data(), 4, 1.0, 0.0, gen), ValueError);
  EXPECT_THROW(cpu::fill_uniform(f.data(), 4, std::nan(""), 1.0, gen), ValueError);
  EXPECT_THROW(cpu::fill_uniform(f.data(), 4, -1e308, 1e308, gen), ValueError);
  EXPECT_THROW(cpu::fill_normal(f.data(), 4, 0.0, -1.0, gen), ValueError);
  EXPECT_EQ(gen.get_state().offset, 0u);
}

}  // namespace
}  // namespace stride
