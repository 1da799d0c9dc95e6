// Samplers: orders are permutations (or in-range draws), depend only on the
// generator's state, and batch as documented.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "stride/data/sampler.h"
#include "stride/error.h"

namespace stride::data {
namespace {

std::vector<int64_t> iota_vec(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), int64_t(0));
  return v;
}

TEST(Sampler, SequentialYieldsEveryIndexInOrder) {
  Generator gen(1);
  EXPECT_EQ(SequentialSampler(5).indices(gen), iota_vec(5));
  EXPECT_TRUE(SequentialSampler(0).indices(gen).empty());
  EXPECT_THROW(SequentialSampler(-1), ValueError);
}

TEST(Sampler, RandomIsAPermutationDeterminedByTheGenerator) {
  RandomSampler s(100);
  Generator a(3), b(3), c(4);
  const auto pa = s.indices(a);
  EXPECT_EQ(pa, s.indices(b));
  EXPECT_NE(pa, s.indices(c));
  EXPECT_NE(pa, iota_vec(100));
  auto sorted = pa;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, iota_vec(100));
  // The generator advanced: the next epoch's draw differs.
  EXPECT_NE(s.indices(a), pa);
}

TEST(Sampler, RandomWithoutReplacementTakesDistinctIndices) {
  RandomSampler s(10, false, 4);
  EXPECT_EQ(s.size(), 4);
  Generator gen(0);
  auto v = s.indices(gen);
  ASSERT_EQ(v.size(), 4u);
  std::sort(v.begin(), v.end());
  EXPECT_EQ(std::unique(v.begin(), v.end()), v.end());
  for (int64_t i : v) EXPECT_LT(i, 10);
  EXPECT_THROW(RandomSampler(3, false, 4), ValueError);
}

TEST(Sampler, RandomWithReplacementDrawsInRangeAndRepeats) {
  RandomSampler s(3, true, 300);
  Generator gen(5);
  const auto v = s.indices(gen);
  ASSERT_EQ(v.size(), 300u);
  std::vector<int> counts(3, 0);
  for (int64_t i : v) {
    ASSERT_GE(i, 0);
    ASSERT_LT(i, 3);
    ++counts[static_cast<size_t>(i)];
  }
  for (int c : counts) EXPECT_GT(c, 60);  // ~100 each
  EXPECT_THROW(RandomSampler(0, true, 1), ValueError);
}

TEST(Sampler, EveryPositionIsEquallyLikely) {
  // 3 elements, 6000 shuffles: each of the 6 permutations ~1000 times.
  RandomSampler s(3);
  Generator gen(11);
  std::vector<int> counts(6, 0);
  for (int t = 0; t < 6000; ++t) {
    const auto p = s.indices(gen);
    ++counts[static_cast<size_t>(p[0] * 2 + (p[1] > p[2] ? 1 : 0))];
  }
  for (int c : counts) {
    EXPECT_GT(c, 850);
    EXPECT_LT(c, 1150);
  }
}

TEST(Sampler, SubsetRandomPermutesTheSubset) {
  SubsetRandomSampler s({7, 3, 9, 1});
  Generator gen(2);
  auto v = s.indices(gen);
  std::sort(v.begin(), v.end());
  EXPECT_EQ(v, (std::vector<int64_t>{1, 3, 7, 9}));
  EXPECT_EQ(SubsetSampler({7, 3}).indices(gen), (std::vector<int64_t>{7, 3}));
}

TEST(Sampler, BatchSamplerGroupsInOrder) {
  auto base = std::make_shared<SequentialSampler>(7);
  Generator gen(0);
  BatchSampler keep(base, 3, false), drop(base, 3, true);
  EXPECT_EQ(keep.size(), 3);
  EXPECT_EQ(drop.size(), 2);
  EXPECT_EQ(keep.batches(gen), (std::vector<std::vector<int64_t>>{{0, 1, 2}, {3, 4, 5}, {6}}));
  EXPECT_EQ(drop.batches(gen), (std::vector<std::vector<int64_t>>{{0, 1, 2}, {3, 4, 5}}));
  EXPECT_THROW(BatchSampler(base, 0, false), ValueError);
  EXPECT_THROW(BatchSampler(nullptr, 1, false), ValueError);
}

TEST(Sampler, UniformIndexStaysInRange) {
  Generator gen(9);
  for (uint64_t n : {1ull, 2ull, 3ull, 1000ull, (1ull << 63) + 5}) {
    for (int t = 0; t < 200; ++t) EXPECT_LT(uniform_index(gen, n), n);
  }
  EXPECT_THROW(uniform_index(gen, 0), ValueError);
}

// Every rank draws the same permutation and takes every world-th index:
// together the ranks cover the dataset once, plus padding from its start.
TEST(Sampler, DistributedSamplerShardsOnePermutation) {
  Generator unused(0);
  for (int world : {1, 2, 3, 4}) {
    std::vector<int> seen(10, 0);
    std::vector<std::vector<int64_t>> per_rank;
    for (int r = 0; r < world; ++r) {
      DistributedSampler s(10, world, r, /*shuffle=*/true, /*seed=*/5);
      EXPECT_EQ(s.size(), (10 + world - 1) / world);
      per_rank.push_back(s.indices(unused));
      for (int64_t i : per_rank.back()) ++seen[size_t(i)];
    }
    const int padding = int(per_rank[0].size()) * world - 10;
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 0), 0);
    int twice = 0;
    for (int c : seen) twice += c - 1;
    EXPECT_EQ(twice, padding) << "world " << world;
    // Interleaved back together, the ranks' shares are the permutation.
    std::vector<int64_t> order;
    for (size_t k = 0; k < per_rank[0].size(); ++k) {
      for (int r = 0; r < world; ++r) order.push_back(per_rank[size_t(r)][k]);
    }
    DistributedSampler whole(10, 1, 0, true, 5);
    const auto all = whole.indices(unused);
    EXPECT_TRUE(std::equal(all.begin(), all.end(), order.begin()));
  }
}

// With a per-rank batch of B / world, the ranks' batches at a step together
// are the single process's batch of B at that step, whatever the world size.
TEST(Sampler, DistributedBatchesMakeTheSameGlobalBatchAtAnyWorldSize) {
  constexpr int64_t kN = 64, kGlobal = 8;
  Generator gen(0);
  auto global_batches = [&](int world) {
    std::vector<std::vector<int64_t>> steps;
    for (int r = 0; r < world; ++r) {
      auto sampler = std::make_shared<DistributedSampler>(kN, world, r, true, 11);
      sampler->set_epoch(2);
      const auto batches = BatchSampler(sampler, kGlobal / world, false).batches(gen);
      steps.resize(batches.size());
      for (size_t k = 0; k < batches.size(); ++k) {
        steps[k].insert(steps[k].end(), batches[k].begin(), batches[k].end());
      }
    }
    for (auto& step : steps) std::sort(step.begin(), step.end());
    return steps;
  };
  const auto one = global_batches(1);
  EXPECT_EQ(one.size(), size_t(kN / kGlobal));
  EXPECT_EQ(global_batches(2), one);
  EXPECT_EQ(global_batches(4), one);
}

TEST(Sampler, DistributedSamplerReshufflesPerEpochAndDropsTheTail) {
  Generator a(1), b(2);
  DistributedSampler s(12, 2, 1, true, 3);
  const auto epoch0 = s.indices(a);
  EXPECT_EQ(s.indices(b), epoch0);  // the loader's generator plays no part
  s.set_epoch(1);
  EXPECT_NE(s.indices(a), epoch0);
  s.set_epoch(0);
  EXPECT_EQ(s.indices(a), epoch0);

  DistributedSampler keep(7, 2, 1, false), drop(7, 2, 1, false, 0, /*drop_last=*/true);
  EXPECT_EQ(keep.indices(a), (std::vector<int64_t>{1, 3, 5, 0}));
  EXPECT_EQ(drop.indices(a), (std::vector<int64_t>{1, 3, 5}));
  EXPECT_EQ(DistributedSampler(0, 2, 0).size(), 0);
  EXPECT_THROW(DistributedSampler(4, 2, 2), ValueError);
  EXPECT_THROW(DistributedSampler(4, 0, 0), ValueError);
}

}  // namespace
}  // namespace stride::data
