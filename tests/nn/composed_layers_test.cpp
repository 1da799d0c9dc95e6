// The composed nn functions of src/nn/composed_layers.cpp and
// src/nn/margin_losses.cpp beyond what their PyTorch goldens, layout-matrix
// and gradcheck rows cover: the random dropouts' masks and scales (PyTorch
// has no values to compare with stride's Philox draws), the argument forms
// that take a different path (class weights, probability targets, the
// shapes of gaussian_nll_loss's var), and the errors.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "stride/generator.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"

namespace stride::testing {
namespace {

namespace F = nn::functional;
using F::Reduction;

Tensor idx(std::vector<int64_t> v, IntArrayRef shape = {}) {
  return tensor<int64_t>(v, shape);
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  return (a - b).abs().max().item<double>();
}

TEST(FeatureDropout, ZeroesWholeChannelsAndScalesTheRest) {
  Generator gen(3);
  const Tensor x = ones({8, 16, 5, 4});
  const Tensor y = F::dropout2d(x, 0.25, true, &gen);
  // Each (sample, channel) plane is all 0 or all 1 / (1 - p).
  const Tensor plane_max = y.amax({2, 3}), plane_min = y.amin({2, 3});
  EXPECT_EQ(max_abs_diff(plane_max, plane_min), 0.0);
  const Tensor dropped = plane_max.eq(0.0).to(kFloat64).mean();
  EXPECT_NEAR(dropped.item<double>(), 0.25, 0.1);
  EXPECT_NEAR(y.max().item<double>(), 1.0 / 0.75, 1e-6);
}

TEST(FeatureDropout, EvalAndPZeroAreTheInputAndPOneZeroes) {
  const Tensor x = randn({2, 3, 4});
  EXPECT_TRUE(F::dropout1d(x, 0.5, false).is_same(x));
  EXPECT_TRUE(F::dropout1d(x, 0.0, true).is_same(x));
  EXPECT_EQ(F::dropout1d(x, 1.0, true).abs().sum().item<double>(), 0.0);
  // Unbatched (C, L): one mask entry per channel.
  Generator gen(5);
  const Tensor u = F::dropout1d(ones({64, 7}), 0.5, true, &gen);
  EXPECT_EQ(max_abs_diff(u.amax({1}), u.amin({1})), 0.0);
}

TEST(FeatureDropout, RefusesOtherRanksAndProbabilities) {
  EXPECT_THROW(F::dropout2d(ones({3, 4})), ValueError);
  EXPECT_THROW(F::dropout3d(ones({3, 4, 5})), ValueError);
  EXPECT_THROW(F::dropout1d(ones({3, 4}), 1.5), ValueError);
  EXPECT_THROW(F::feature_alpha_dropout(ones({3}), 0.5, true), ShapeError);
}

TEST(AlphaDropout, KeepsAStandardInputsMeanAndVariance) {
  Generator gen(11);
  const Tensor x = randn({200000}, {}, &gen);
  const Tensor y = F::alpha_dropout(x, 0.3, true, &gen);
  EXPECT_NEAR(y.mean().item<double>(), 0.0, 0.02);
  EXPECT_NEAR(y.var().item<double>(), 1.0, 0.03);
  EXPECT_TRUE(F::alpha_dropout(x, 0.3, false).is_same(x));
}

TEST(AlphaDropout, FeatureFormDropsWholeChannels) {
  Generator gen(13);
  const Tensor y = F::feature_alpha_dropout(zeros({4, 32, 6}), 0.5, true, &gen);
  EXPECT_EQ(max_abs_diff(y.amax({2}), y.amin({2})), 0.0);
}

TEST(Rrelu, EvalIsLeakyReluWithTheMeanSlopeAndTrainingDrawsSlopesInRange) {
  const Tensor x = randn({1000});
  EXPECT_EQ(max_abs_diff(F::rrelu(x, 0.1, 0.3), F::leaky_relu(x, 0.2)), 0.0);
  Generator gen(17);
  const Tensor neg = -ones({1000});
  const Tensor slopes = -F::rrelu(neg, 0.1, 0.3, true, &gen);
  EXPECT_GE(slopes.min().item<double>(), 0.1);
  EXPECT_LE(slopes.max().item<double>(), 0.3);
  EXPECT_GT(slopes.var().item<double>(), 0.0);
  const Tensor pos = ones({10});
  EXPECT_EQ(max_abs_diff(F::rrelu(pos, 0.1, 0.3, true, &gen), pos), 0.0);
}

TEST(ComposedLayers, ChannelShuffleInterleavesTheGroups) {
  const Tensor x = arange(6).to(kFloat32).view({1, 6, 1});
  const Tensor y = F::channel_shuffle(x, 2).view({6});
  EXPECT_EQ(max_abs_diff(y, tensor<float>({0, 3, 1, 4, 2, 5})), 0.0);
  EXPECT_THROW(F::channel_shuffle(x, 4), ValueError);
  EXPECT_THROW(F::channel_shuffle(ones({2, 6}), 2), ShapeError);
}

TEST(ComposedLayers, PdistOfFewerThanTwoRowsIsEmptyAndStillDifferentiable) {
  const Tensor x = ones({1, 3}).requires_grad_();
  const Tensor d = F::pdist(x);
  EXPECT_EQ(d.numel(), 0);
  d.sum().backward();
  EXPECT_EQ(x.grad().abs().sum().item<double>(), 0.0);
  EXPECT_THROW(F::pdist(ones({3})), ShapeError);
  EXPECT_THROW(F::pdist(ones({3, 2}), -1.0), ValueError);
}

TEST(ComposedLayers, BilinearChecksItsShapes) {
  EXPECT_THROW(F::bilinear(ones({2, 3}), ones({2, 4}), ones({5, 4, 4})), ShapeError);
  EXPECT_THROW(F::bilinear(ones({2, 3}), ones({2, 4}), ones({5, 3, 3})), ShapeError);
  EXPECT_EQ(F::bilinear(ones({2, 3}), ones({2, 4}), ones({5, 3, 4})).sizes(), IntArrayRef({2, 5}));
}

TEST(MarginLosses, ClassWeightsOfOneAreTheUnweightedLoss) {
  const Tensor x = randn({6, 5});
  const Tensor y = idx({4, 0, -100, 2, 2, 1});
  for (const Reduction r : {Reduction::None, Reduction::Mean, Reduction::Sum}) {
    EXPECT_LT(max_abs_diff(F::cross_entropy(x, y, ones({5}), -100, r, 0.1),
                           F::cross_entropy(x, y, -100, r, 0.1)),
              1e-6);
    const Tensor logp = log_softmax(x, 1);
    EXPECT_LT(max_abs_diff(F::nll_loss(logp, y, ones({5}), -100, r), F::nll_loss(logp, y, -100, r)),
              1e-6);
  }
}

TEST(MarginLosses, OneHotProbabilitiesAreTheIndexLoss) {
  const Tensor x = randn({4, 3, 2});
  const Tensor y = idx({0, 2, 1, 1, 2, 0, 0, 1}, {4, 2});
  const Tensor probabilities = F::one_hot(y, 3).permute({0, 2, 1}).to(kFloat32);
  EXPECT_LT(max_abs_diff(F::cross_entropy(x, probabilities, Tensor(), -100, Reduction::Mean, 0.2),
                         F::cross_entropy(x, y, -100, Reduction::Mean, 0.2)),
            1e-6);
}

TEST(MarginLosses, CrossEntropyRefusesWrongWeightsAndProbabilityShapes) {
  const Tensor x = randn({3, 4});
  EXPECT_THROW(F::cross_entropy(x, idx({0, 1, 2}), ones({3})), ValueError);
  EXPECT_THROW(F::cross_entropy(x, randn({3, 5}), Tensor()), DTypeError);
  EXPECT_THROW(F::nll_loss(x, idx({0, 1, 2}), ones({5})), ValueError);
}

TEST(MarginLosses, GaussianVarianceMayDropOrShrinkTheLastDim) {
  const Tensor x = randn({4, 3}), t = randn({4, 3});
  const Tensor var = rand({4}) + 0.5;
  const Tensor full = F::gaussian_nll_loss(x, t, var.unsqueeze(1).expand({4, 3}));
  EXPECT_LT(max_abs_diff(F::gaussian_nll_loss(x, t, var), full), 1e-6);
  EXPECT_LT(max_abs_diff(F::gaussian_nll_loss(x, t, var.unsqueeze(1)), full), 1e-6);
  EXPECT_THROW(F::gaussian_nll_loss(x, t, ones({2})), ValueError);
  EXPECT_THROW(F::gaussian_nll_loss(x, t, -ones({4, 3})), ValueError);
}

TEST(MarginLosses, MultilabelTargetsEndAtTheFirstMinusOne) {
  // Row targets {3, 0}: the 1 after the -1 is not a target.
  const Tensor x = tensor<float>({0.1f, 0.2f, 0.4f, 0.8f}, {1, 4});
  const Tensor loss = F::multilabel_margin_loss(x, idx({3, 0, -1, 1}, {1, 4}), Reduction::Sum);
  // Pairs (3, 1), (3, 2), (0, 1), (0, 2): max(0, 1 - (x_j - x_k)) / 4.
  const double expected = ((1 - 0.6) + (1 - 0.4) + (1 + 0.1) + (1 + 0.3)) / 4;
  EXPECT_NEAR(loss.item<double>(), expected, 1e-6);
  EXPECT_THROW(F::multilabel_margin_loss(x, idx({3}, {1, 1})), ShapeError);
  EXPECT_THROW(F::multi_margin_loss(x, idx({1}), 3), ValueError);
}

}  // namespace
}  // namespace stride::testing
