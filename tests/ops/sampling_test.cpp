// multinomial: its draws follow the probabilities, without replacement they
// are distinct and never pick a zero-probability category, a seed repeats
// them, and a bad distribution is a sentence naming the op.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <vector>

#include "stride/generator.h"
#include "stride/ops.h"
#include "support/error_message.h"

namespace stride {
namespace {

TEST(Multinomial, DrawsWithReplacementFollowTheProbabilities) {
  const Tensor weights = tensor<double>({1, 0, 3, 6});  // not normalised
  Generator gen(11);
  const int64_t n = 200000;
  const Tensor draws = multinomial(weights, n, true, &gen);
  ASSERT_EQ(draws.sizes(), IntArrayRef({n}));
  std::vector<int64_t> counts(4, 0);
  for (int64_t v : draws.to_vector<int64_t>()) ++counts[size_t(v)];
  EXPECT_EQ(counts[1], 0);
  // Each frequency within 5 standard deviations of its expectation.
  for (const auto& [category, p] : {std::pair{0, 0.1}, {2, 0.3}, {3, 0.6}}) {
    const double expected = p * double(n), sd = std::sqrt(double(n) * p * (1 - p));
    EXPECT_NEAR(double(counts[size_t(category)]), expected, 5 * sd) << "category " << category;
  }
}

TEST(Multinomial, DrawsWithoutReplacementAreDistinctAndPositive) {
  Generator gen(3);
  const Tensor probs = tensor<float>({0.2f, 0, 0.5f, 0.1f, 0, 0.2f, 0.0f, 0.3f}, {2, 4});
  for (int round = 0; round < 200; ++round) {
    const Tensor s = multinomial(probs, 2, false, &gen);
    ASSERT_EQ(s.sizes(), IntArrayRef({2, 2}));
    const std::vector<int64_t> v = s.to_vector<int64_t>();
    EXPECT_NE(v[0], v[1]);
    EXPECT_EQ(std::set<int64_t>({v[2], v[3]}), std::set<int64_t>({1, 3}));
    for (int64_t c : {v[0], v[1]}) EXPECT_TRUE(c == 0 || c == 2 || c == 3) << c;
  }
}

TEST(Multinomial, TheFirstDrawWithoutReplacementFollowsTheProbabilities) {
  Generator gen(5);
  const Tensor probs = tensor<double>({0.7, 0.2, 0.1}).expand({100000, 3});
  const Tensor first = multinomial(probs, 2, false, &gen).select(1, 0);
  const double share_of_0 = first.eq(0).to(kFloat64).mean().item<double>();
  EXPECT_NEAR(share_of_0, 0.7, 0.01);
}

TEST(Multinomial, ASeedRepeatsTheDraws) {
  const Tensor probs = rand({3, 50});
  Generator a(42), b(42);
  EXPECT_TRUE(equal(multinomial(probs, 5, false, &a), multinomial(probs, 5, false, &b)));
  EXPECT_TRUE(equal(multinomial(probs, 9, true, &a), multinomial(probs, 9, true, &b)));
}

TEST(Multinomial, RefusesBadDistributionsNamingTheOp) {
  using testing::message_of;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<std::pair<std::function<void()>, std::string>> cases = {
      {[] {
         multinomial(tensor<float>({0.5f, -0.1f}), 1);
       },
       "negative"},
      {[nan] {
         multinomial(tensor<float>({1, nan}), 1);
       },
       "NaN"},
      {[] {
         multinomial(zeros({2, 3}), 1);
       },
       "sums to 0"},
      {[] {
         multinomial(tensor<float>({0.5f, 0.5f}), 3);
       },
       "replacement=True"},
      {[] {
         multinomial(tensor<float>({1, 0, 0}), 2);
       },
       "fewer than 2"},
      {[] {
         multinomial(zeros({2, 2, 2}), 1);
       },
       "1-d or 2-d"},
  };
  for (const auto& [call, expected] : cases) {
    const std::string message = message_of<Error>(call);
    EXPECT_NE(message.find("[multinomial]"), std::string::npos) << message;
    EXPECT_NE(message.find(expected), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace stride
