// nn layers and nn::init: shapes, errors, modes, running statistics and
// PyTorch's default initialisation (bounds and moments).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <stride/nn.h>
#include <stride/stride.h>

#include "support/error_message.h"
#include "support/layouts.h"

namespace stride {
namespace {

::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << part << "' is not in: " << text;
}

using testing::message_of;

double min_of(const Tensor& t) {
  return t.min().item<double>();
}
double max_of(const Tensor& t) {
  return t.max().item<double>();
}

// ---- Linear ----

TEST(LayersLinear, MapsTheLastDimAndKeepsLeadingDims) {
  nn::Linear lin(5, 3);
  EXPECT_EQ(lin.weight.sizes(), IntArrayRef({3, 5}));
  EXPECT_EQ(lin.bias.sizes(), IntArrayRef({3}));
  Tensor x = randn({2, 4, 5});
  Tensor y = lin.call(x);
  EXPECT_EQ(y.sizes(), IntArrayRef({2, 4, 3}));
  EXPECT_TRUE(testing::close(y, x.matmul(lin.weight.t()) + lin.bias, 1e-5, 1e-6));
}

TEST(LayersLinear, WithoutBiasHasOnlyAWeight) {
  nn::Linear lin(4, 2, /*bias=*/false);
  EXPECT_FALSE(lin.bias.defined());
  EXPECT_EQ(lin.named_parameters().keys(), (std::vector<std::string>{"weight"}));
  Tensor x = randn({3, 4});
  EXPECT_TRUE(testing::close(lin.call(x), x.matmul(lin.weight.t()), 1e-5, 1e-6));
}

TEST(LayersLinear, WrongInputSizeNamesBothShapes) {
  nn::Linear lin(128, 10);
  const std::string msg = message_of<ShapeError>([&] { lin.call(zeros({32, 64})); });
  EXPECT_TRUE(contains(msg, "[Linear] expected input (..., 128); got (32, 64). Hint:"));
}

TEST(LayersLinear, MixedDtypesAreRefusedAsInPyTorch) {
  nn::Linear lin(2, 3);
  const std::string msg = message_of<DTypeError>([&] { lin.call(randn({4, 2}, kFloat64)); });
  EXPECT_TRUE(contains(msg,
                       "[Linear] expected a float32 input like the layer's parameters; got "
                       "float64. Hint: convert the input to float32, or the model to float64"));
  EXPECT_THROW(nn::LayerNorm(2).call(randn({4, 2}, kFloat64)), DTypeError);
  EXPECT_THROW(nn::RMSNorm(2).call(randn({4, 2}, kFloat64)), DTypeError);
  EXPECT_THROW(nn::BatchNorm1d(2).call(randn({4, 2}, kFloat64)), DTypeError);
}

TEST(LayersLinear, NegativeSizesAreRejected) {
  EXPECT_THROW(nn::Linear(-1, 3), ValueError);
}

// ---- PyTorch's default initialisation ----

TEST(InitDefaults, LinearWeightAndBiasBoundsAreOneOverSqrtFanIn) {
  const int64_t fan_in = 256, fan_out = 128;
  Generator gen(7);
  nn::Linear lin(fan_in, fan_out, true, &gen);
  // kaiming_uniform_(a = sqrt(5)): sqrt(6 / ((1 + a^2) fan_in)) = 1 / sqrt(fan_in).
  const double a = std::sqrt(5.0);
  const double bound = std::sqrt(6.0 / ((1.0 + a * a) * double(fan_in)));
  EXPECT_NEAR(bound, 1.0 / 16.0, 1e-15);
  const Tensor w = lin.weight.detach().to(kFloat64);
  EXPECT_GE(min_of(w), -bound);
  EXPECT_LE(max_of(w), bound);
  EXPECT_GT(max_of(w), 0.99 * bound);  // fills the whole range
  EXPECT_LT(min_of(w), -0.99 * bound);
  EXPECT_NEAR(w.mean().item<double>(), 0.0, 0.01 * bound);
  EXPECT_NEAR(w.var().item<double>(), bound * bound / 3.0, 0.03 * bound * bound / 3.0);

  const Tensor b = lin.bias.detach().to(kFloat64);
  EXPECT_GE(min_of(b), -1.0 / 16.0);
  EXPECT_LE(max_of(b), 1.0 / 16.0);
  EXPECT_GT(max_of(b), 0.8 / 16.0);
  EXPECT_LT(min_of(b), -0.8 / 16.0);
}

TEST(InitDefaults, GeneratorMakesInitialisationReproducible) {
  Generator g1(3), g2(3), g3(4);
  nn::Linear a(8, 8, true, &g1), b(8, 8, true, &g2), c(8, 8, true, &g3);
  EXPECT_TRUE(equal(a.weight, b.weight));
  EXPECT_TRUE(equal(a.bias, b.bias));
  EXPECT_FALSE(equal(a.weight, c.weight));
  manual_seed(11);
  nn::Linear d(8, 8);
  manual_seed(11);
  nn::Linear e(8, 8);
  EXPECT_TRUE(equal(d.weight, e.weight));
}

TEST(InitDefaults, EmbeddingIsStandardNormal) {
  Generator gen(5);
  nn::Embedding emb(1000, 64, &gen);
  const Tensor w = emb.weight.detach().to(kFloat64);
  EXPECT_NEAR(w.mean().item<double>(), 0.0, 0.01);
  EXPECT_NEAR(w.var().item<double>(), 1.0, 0.02);
  EXPECT_TRUE(emb.weight.requires_grad());
}

TEST(InitDefaults, NormsStartAsIdentity) {
  nn::LayerNorm ln(6);
  EXPECT_TRUE(equal(ln.weight, ones({6})));
  EXPECT_TRUE(equal(ln.bias, zeros({6})));
  nn::RMSNorm rms(6);
  EXPECT_TRUE(equal(rms.weight, ones({6})));
  nn::BatchNorm1d bn(3);
  EXPECT_TRUE(equal(bn.running_mean, zeros({3})));
  EXPECT_TRUE(equal(bn.running_var, ones({3})));
  EXPECT_EQ(bn.num_batches_tracked.dtype(), kInt64);
  EXPECT_EQ(bn.num_batches_tracked.dim(), 0);
}

// ---- nn::init ----

TEST(Init, FanInAndFanOutFollowPyTorch) {
  EXPECT_EQ(nn::init::calculate_fan_in_and_fan_out(empty({8, 3})),
            std::make_pair(int64_t(3), int64_t(8)));
  EXPECT_EQ(nn::init::calculate_fan_in_and_fan_out(empty({16, 4, 3, 5})),
            std::make_pair(int64_t(4 * 15), int64_t(16 * 15)));
  const std::string msg =
      message_of<ValueError>([] { nn::init::calculate_fan_in_and_fan_out(empty({5})); });
  EXPECT_TRUE(contains(msg, "at least 2 dims"));
  EXPECT_TRUE(contains(msg, "(5)"));
}

TEST(Init, GainsFollowPyTorch) {
  using nn::init::Nonlinearity;
  EXPECT_DOUBLE_EQ(nn::init::calculate_gain(Nonlinearity::Linear), 1.0);
  EXPECT_DOUBLE_EQ(nn::init::calculate_gain(Nonlinearity::Sigmoid), 1.0);
  EXPECT_DOUBLE_EQ(nn::init::calculate_gain(Nonlinearity::Tanh), 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(nn::init::calculate_gain(Nonlinearity::ReLU), std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(nn::init::calculate_gain(Nonlinearity::LeakyReLU),
                   std::sqrt(2.0 / (1.0 + 0.01 * 0.01)));
  EXPECT_DOUBLE_EQ(nn::init::calculate_gain(Nonlinearity::LeakyReLU, 0.2), std::sqrt(2.0 / 1.04));
  EXPECT_DOUBLE_EQ(nn::init::calculate_gain(Nonlinearity::SELU), 0.75);
}

TEST(Init, KaimingUniformUsesTheChosenFan) {
  Generator gen(1);
  Tensor w = empty({50, 200});  // fan_in 200, fan_out 50
  nn::init::kaiming_uniform_(w, 0.0, nn::init::FanMode::FanOut, nn::init::Nonlinearity::ReLU, &gen);
  const double bound = std::sqrt(3.0) * std::sqrt(2.0) / std::sqrt(50.0);
  EXPECT_LE(max_of(w), bound);
  EXPECT_GE(min_of(w), -bound);
  EXPECT_GT(max_of(w), 0.98 * bound);
  nn::init::kaiming_uniform_(w, 0.0, nn::init::FanMode::FanIn, nn::init::Nonlinearity::ReLU, &gen);
  EXPECT_LE(max_of(w), bound / 2.0 + 1e-7);  // sqrt(200 / 50) = 2
}

TEST(Init, XavierAndKaimingNormalHaveTheirStd) {
  Generator gen(2);
  Tensor w = empty({300, 500}, kFloat64);
  nn::init::xavier_uniform_(w, 2.0, &gen);
  const double xb = 2.0 * std::sqrt(6.0 / 800.0);
  EXPECT_LE(max_of(w), xb);
  EXPECT_GT(max_of(w), 0.99 * xb);
  nn::init::xavier_normal_(w, 1.0, &gen);
  EXPECT_NEAR(std::sqrt(w.var().item<double>()), std::sqrt(2.0 / 800.0),
              0.01 * std::sqrt(2.0 / 800.0));
  nn::init::kaiming_normal_(w, 0.0, nn::init::FanMode::FanIn, nn::init::Nonlinearity::ReLU, &gen);
  EXPECT_NEAR(std::sqrt(w.var().item<double>()), std::sqrt(2.0 / 500.0),
              0.01 * std::sqrt(2.0 / 500.0));
}

TEST(Init, FillsParametersWithoutRecordingAndAnyLayout) {
  nn::Linear lin(4, 6);
  nn::init::constant_(lin.weight, 0.5);
  EXPECT_TRUE(lin.weight.is_leaf());
  EXPECT_TRUE(equal(lin.weight, full({6, 4}, 0.5)));
  nn::init::zeros_(lin.bias);
  EXPECT_TRUE(equal(lin.bias, zeros({6})));
  nn::init::ones_(lin.bias);
  EXPECT_TRUE(equal(lin.bias, ones({6})));

  Tensor base = zeros({4, 6});
  nn::init::ones_(base.t());  // a transposed view
  EXPECT_TRUE(equal(base, ones({4, 6})));
  Generator gen(9);
  nn::init::uniform_(base.slice(1, 0, std::nullopt, 2), 2.0, 3.0, &gen);
  EXPECT_GE(min_of(base.slice(1, 0, std::nullopt, 2)), 2.0);
  EXPECT_TRUE(equal(base.slice(1, 1, std::nullopt, 2), ones({4, 3})));
  nn::init::normal_(lin.weight, 0.0, 0.02, &gen);
  EXPECT_LT(max_of(lin.weight.abs()), 0.2);
}

TEST(Init, EmptyTensorIsLeftAlone) {
  Tensor w = empty({0, 4});
  EXPECT_NO_THROW(nn::init::kaiming_uniform_(w));
  EXPECT_THROW(nn::init::uniform_(Tensor()), ValueError);
}

// ---- Embedding ----

TEST(LayersEmbedding, LooksUpRowsForAnyIdShape) {
  nn::Embedding emb(10, 4);
  Tensor ids = tensor<int64_t>({1, 3, 3, 9, 0, 2}, {2, 3});
  Tensor y = emb.call(ids);
  EXPECT_EQ(y.sizes(), IntArrayRef({2, 3, 4}));
  EXPECT_TRUE(equal(y[0][1], emb.weight[3]));
  EXPECT_TRUE(equal(y[1][0], emb.weight[9]));
}

TEST(LayersEmbedding, OutOfRangeIdNamesTheIdAndTheVocabulary) {
  nn::Embedding emb(65, 8);
  const std::string msg = message_of<IndexError>([&] { emb.call(tensor<int64_t>({3, 70, 1})); });
  EXPECT_TRUE(contains(msg, "id 70"));
  EXPECT_TRUE(contains(msg, "vocabulary of 65"));
  EXPECT_TRUE(contains(message_of<IndexError>([&] { emb.call(tensor<int64_t>({-1})); }), "id -1"));
  EXPECT_TRUE(contains(message_of<DTypeError>([&] { emb.call(zeros({2})); }), "[Embedding]"));
}

// ---- norms ----

TEST(LayersRMSNorm, NormalisesEachTokenOverTheLastDim) {
  nn::RMSNorm norm(4, 1e-6);
  Tensor x = randn({2, 3, 4}, kFloat64);
  norm.to(kFloat64);
  nn::init::normal_(norm.weight);
  Tensor expected = x * (x.square().mean({-1}, true) + 1e-6).rsqrt() * norm.weight;
  EXPECT_TRUE(testing::close(norm.call(x), expected, 1e-12, 1e-12));
  // Per token: changing one token leaves the others' outputs unchanged.
  Tensor x2 = x.clone();
  x2[0][2].mul_(5.0);
  EXPECT_TRUE(equal(norm.call(x2)[0][1], norm.call(x)[0][1]));
  EXPECT_TRUE(contains(message_of<ShapeError>([&] {
                         norm.call(zeros({2, 5}, kFloat64));
                       }),
                       "[RMSNorm] expected input (..., 4); got (2, 5)"));
}

TEST(LayersLayerNorm, NormalisesTheTrailingDims) {
  nn::LayerNorm ln(std::vector<int64_t>{3, 4});
  ln.to(kFloat64);
  Tensor x = randn({2, 3, 4}, kFloat64);
  Tensor mean = x.mean({1, 2}, true), var = x.var({1, 2}, 0, true);
  EXPECT_TRUE(testing::close(ln.call(x), (x - mean) / (var + 1e-5).sqrt(), 1e-10, 1e-10));
  EXPECT_TRUE(contains(message_of<ShapeError>([&] {
                         ln.call(zeros({2, 4, 3}, kFloat64));
                       }),
                       "[LayerNorm] expected input (..., 3, 4); got (2, 4, 3)"));
  nn::LayerNorm plain(4, 1e-5, /*elementwise_affine=*/false);
  EXPECT_TRUE(plain.parameters().empty());
  nn::LayerNorm no_bias(4, 1e-5, true, /*bias=*/false);
  EXPECT_EQ(no_bias.named_parameters().keys(), (std::vector<std::string>{"weight"}));
}

// ---- BatchNorm1d ----

TEST(LayersBatchNorm, TrainingUsesBatchStatsAndUpdatesRunningStats) {
  nn::BatchNorm1d bn(3);
  bn.to(kFloat64);
  Tensor x = randn({6, 3}, kFloat64) * 2.0 + 1.0;
  Tensor y = bn.call(x);
  Tensor mean = x.mean({0}), biased = x.var({0}, 0), unbiased = x.var({0}, 1);
  EXPECT_TRUE(testing::close(y, (x - mean) / (biased + 1e-5).sqrt(), 1e-10, 1e-10));
  EXPECT_TRUE(testing::close(bn.running_mean, mean * 0.1, 1e-12, 1e-12));
  EXPECT_TRUE(testing::close(bn.running_var, unbiased * 0.1 + 0.9, 1e-12, 1e-12));
  EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 1);
  EXPECT_FALSE(bn.running_mean.requires_grad());

  bn.call(x);
  EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 2);
  EXPECT_TRUE(testing::close(bn.running_mean, mean * 0.1 * 0.9 + mean * 0.1, 1e-12, 1e-12));
}

TEST(LayersBatchNorm, EvalUsesRunningStatsAndLeavesThemAlone) {
  nn::BatchNorm1d bn(2);
  bn.to(kFloat64);
  NoGradGuard no_grad;
  bn.running_mean.copy_(tensor<double>({1.0, -2.0}));
  bn.running_var.copy_(tensor<double>({4.0, 0.25}));
  bn.eval();
  Tensor x = randn({3, 2, 5}, kFloat64);  // (N, C, L)
  Tensor rm = bn.running_mean.view({2, 1}), rv = bn.running_var.view({2, 1});
  EXPECT_TRUE(testing::close(bn.call(x), (x - rm) / (rv + 1e-5).sqrt(), 1e-12, 1e-12));
  EXPECT_TRUE(equal(bn.running_mean, tensor<double>({1.0, -2.0})));
  EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 0);
  // One sample is fine in eval, an error in training.
  EXPECT_NO_THROW(bn.call(randn({1, 2}, kFloat64)));
  bn.train();
  EXPECT_TRUE(contains(message_of<ValueError>([&] {
                         bn.call(randn({1, 2}, kFloat64));
                       }),
                       "more than 1 value per channel"));
}

TEST(LayersBatchNorm, FunctionalFormNeedsRunningStatsOnlyToEvaluate) {
  Tensor x = randn({5, 3}, kFloat64);
  Tensor mean = x.mean({0}), biased = x.var({0}, 0);
  // Training without running statistics: batch statistics, nothing updated.
  EXPECT_TRUE(testing::close(nn::functional::batch_norm(x, {}, {}, {}, {}, /*training=*/true),
                             (x - mean) / (biased + 1e-5).sqrt(), 1e-12, 1e-12));
  EXPECT_TRUE(contains(message_of<ValueError>([&] { nn::functional::batch_norm(x, {}, {}); }),
                       "running_mean and running_var"));
  EXPECT_THROW(nn::functional::batch_norm(x, zeros({3}), ones({3})), DTypeError);
  EXPECT_THROW(nn::functional::batch_norm(x, zeros({4}, kFloat64), ones({4}, kFloat64)),
               ShapeError);
  // The update uses the momentum given.
  Tensor rm = zeros({3}, kFloat64), rv = ones({3}, kFloat64);
  nn::functional::batch_norm(x, rm, rv, {}, {}, /*training=*/true, /*momentum=*/0.25);
  EXPECT_TRUE(testing::close(rm, mean * 0.25, 1e-12, 1e-12));
}

TEST(LayersBatchNorm, ThreeDimInputReducesOverBatchAndLength) {
  nn::BatchNorm1d bn(4, 1e-5, 0.5);
  bn.to(kFloat64);
  Tensor x = randn({2, 4, 3}, kFloat64);
  bn.call(x);
  Tensor mean = x.mean({0, 2});
  EXPECT_TRUE(testing::close(bn.running_mean, mean * 0.5, 1e-12, 1e-12));
  EXPECT_TRUE(testing::close(bn.running_var, x.var({0, 2}, 1) * 0.5 + 0.5, 1e-12, 1e-12));
  EXPECT_TRUE(contains(message_of<ShapeError>([&] {
                         bn.call(randn({2, 3, 4}, kFloat64));
                       }),
                       "[BatchNorm1d] expected input (N, 4) or (N, 4, L); got (2, 3, 4)"));
}

TEST(LayersBatchNorm, NoMomentumIsACumulativeAverage) {
  nn::BatchNorm1d bn(2, 1e-5, std::nullopt);
  bn.to(kFloat64);
  Tensor a = randn({4, 2}, kFloat64), b = randn({4, 2}, kFloat64);
  bn.call(a);
  bn.call(b);
  EXPECT_TRUE(testing::close(bn.running_mean, (a.mean({0}) + b.mean({0})) / 2.0, 1e-12, 1e-12));
}

TEST(LayersBatchNorm, WithoutTrackingAlwaysUsesBatchStats) {
  nn::BatchNorm1d bn(2, 1e-5, 0.1, /*affine=*/false, /*track_running_stats=*/false);
  EXPECT_TRUE(bn.parameters().empty());
  EXPECT_TRUE(bn.buffers().empty());
  bn.eval();
  Tensor x = randn({5, 2}, kFloat64);
  bn.to(kFloat64);
  EXPECT_TRUE(
      testing::close(bn.call(x), (x - x.mean({0})) / (x.var({0}, 0) + 1e-5).sqrt(), 1e-10, 1e-10));
}

// ---- Dropout ----

TEST(LayersDropout, EvalIsTheIdentity) {
  nn::Dropout drop(0.5);
  drop.eval();
  Tensor x = randn({100});
  EXPECT_TRUE(equal(drop.call(x), x));
}

TEST(LayersDropout, TrainingZeroesAboutPAndScalesTheRest) {
  Generator gen(3);
  nn::Dropout drop(0.25, &gen);
  Tensor x = ones({20000});
  Tensor y = drop.call(x);
  const double zero_fraction = y.eq(0.0).to(kFloat64).mean().item<double>();
  EXPECT_NEAR(zero_fraction, 0.25, 0.02);
  EXPECT_NEAR(max_of(y), 1.0 / 0.75, 1e-6);
  EXPECT_TRUE(
      contains(message_of<ValueError>([] { nn::Dropout(1.5); }), "[Dropout] p is the probability"));
}

// ---- activations ----

TEST(LayersActivations, MatchTheOps) {
  Tensor x = randn({3, 4});
  EXPECT_TRUE(equal(nn::ReLU().call(x), relu(x)));
  EXPECT_TRUE(testing::close(nn::SiLU().call(x), silu(x)));
  EXPECT_TRUE(testing::close(nn::GELU().call(x), gelu(x)));
  EXPECT_TRUE(nn::ReLU().parameters().empty());
}

// ---- containers ----

TEST(LayersSequential, ChainsModulesAndNamesThemByPosition) {
  auto seq = std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(4, 8),
                                              std::make_shared<nn::ReLU>());
  seq->push_back(std::make_shared<nn::Linear>(8, 2));
  EXPECT_EQ(seq->size(), 3u);
  EXPECT_EQ(seq->named_parameters().keys(),
            (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}));
  Tensor x = randn({5, 4});
  auto l0 = seq->at<nn::Linear>(0);
  auto l2 = seq->at<nn::Linear>(-1);
  EXPECT_TRUE(testing::close(seq->call(x), l2->call(relu(l0->call(x)))));
  std::vector<std::string> names;
  for (const auto& m : *seq) names.push_back(m->name());
  EXPECT_EQ(names, (std::vector<std::string>{"Linear", "ReLU", "Linear"}));
  EXPECT_TRUE(contains(message_of<IndexError>([&] { (*seq)[3]; }),
                       "[Sequential] index 3 is out of range for 3 modules"));
  EXPECT_TRUE(contains(message_of<ValueError>([&] { seq->at<nn::Linear>(1); }), "is a ReLU"));
}

TEST(LayersSequential, EmptyReturnsItsInput) {
  nn::Sequential seq;
  Tensor x = randn({2});
  EXPECT_TRUE(seq.call(x).is_same(x));
}

TEST(LayersModuleList, IndexesAndIterates) {
  nn::ModuleList list(std::make_shared<nn::Linear>(2, 2), std::make_shared<nn::ReLU>());
  list.push_back(std::make_shared<nn::Linear>(2, 3));
  EXPECT_EQ(list.size(), 3u);
  EXPECT_EQ(list.named_children().keys(), (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_EQ(list.at<nn::Linear>(2)->out_features, 3);
  EXPECT_EQ(list[-3].get(), list[0].get());
  int n = 0;
  for (const auto& m : list) n += m != nullptr;
  EXPECT_EQ(n, 3);
  EXPECT_THROW(list[5], IndexError);
}

TEST(LayersModuleDict, KeepsInsertionOrder) {
  nn::ModuleDict dict{{"proj", std::make_shared<nn::Linear>(2, 4)},
                      {"act", std::make_shared<nn::GELU>()}};
  dict.insert("out", std::make_shared<nn::Linear>(4, 1));
  EXPECT_EQ(dict.keys(), (std::vector<std::string>{"proj", "act", "out"}));
  EXPECT_EQ(dict.named_parameters().keys(),
            (std::vector<std::string>{"proj.weight", "proj.bias", "out.weight", "out.bias"}));
  EXPECT_TRUE(dict.contains("act"));
  EXPECT_EQ(dict.at<nn::Linear>("out")->in_features, 4);
  EXPECT_TRUE(contains(message_of<IndexError>([&] { dict["missing"]; }), "no key 'missing'"));
  EXPECT_THROW(dict.insert("act", std::make_shared<nn::ReLU>()), ValueError);
  std::vector<std::string> keys;
  for (const auto& [name, m] : dict) keys.push_back(name);
  EXPECT_EQ(keys, dict.keys());
}

}  // namespace
}  // namespace stride
