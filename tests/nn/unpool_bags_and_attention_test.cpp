// The nn functions that moved from Python to C++ (src/nn/unpool_and_bags.cpp,
// multi_head_attention.cpp, margin_losses.cpp's
// triplet_margin_with_distance_loss, and nonzero_static) beyond their
// PyTorch goldens, layout-matrix and gradcheck rows: edge cases (empty bags,
// padding_idx, output_size, static keys, masks) against values worked out
// by hand or by an equivalent composition, and their argument errors.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "stride/autograd.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"
#include "support/error_message.h"
#include "support/options.h"

namespace stride::testing {
namespace {

namespace F = nn::functional;

Tensor idx(std::vector<int64_t> v, IntArrayRef shape = {}) {
  return tensor<int64_t>(v, shape);
}

std::vector<float> values(const Tensor& t) {
  return t.contiguous().to(kFloat32).to_vector<float>();
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  return (a - b).abs().max().item<double>();
}

void expect_message(const std::string& message, const std::vector<std::string>& parts) {
  for (const std::string& part : parts) {
    EXPECT_NE(message.find(part), std::string::npos) << message << " lacks " << part;
  }
}

// ---- max_unpool ----

TEST(MaxUnpool, InvertsMaxPoolOnItsMaxima) {
  const Tensor x = tensor<float>({1, 5, 2, 3, 7, 4, 6, 0}, {1, 1, 2, 4});
  const auto [pooled, indices] = F::max_pool2d_with_indices(x, {2});
  const Tensor y = F::max_unpool2d(pooled, indices, {2});
  EXPECT_EQ(values(y), (std::vector<float>{0, 0, 0, 0, 7, 0, 6, 0}));
}

TEST(MaxUnpool, OutputSizeTakesSpatialOrWholeShapes) {
  const Tensor x = tensor<float>({3, 4}, {1, 1, 2});
  const Tensor at = idx({1, 4}, {1, 1, 2});
  const auto sized = [&](std::vector<int64_t> size) {
    return F::max_unpool1d(x, at, {2}, testing::with([&](auto& o) { o.output_size = size; }));
  };
  EXPECT_EQ(values(sized({5})), (std::vector<float>{0, 3, 0, 0, 4}));
  EXPECT_EQ(sized({1, 1, 5}).sizes(), sized({5}).sizes());
  // The default size is (2 - 1) * 2 + 2 = 4; 6 is a whole stride away.
  expect_message(message_of<ValueError>([&] { sized({6}); }),
                 {"[max_unpool1d] output_size", "between 2 and 6"});
  expect_message(message_of<ValueError>([&] {
                   sized({1, 5});
                 }),
                 {"[max_unpool1d] output_size must hold 1 spatial sizes"});
}

TEST(MaxUnpool, UnbatchedInputKeepsItsRank) {
  const Tensor y = F::max_unpool3d(ones({2, 1, 1, 1}), idx({0, 7}, {2, 1, 1, 1}), {2});
  EXPECT_EQ(y.sizes(), IntArrayRef({2, 2, 2, 2}));
  EXPECT_EQ(y.sum().item<float>(), 2.0f);
}

TEST(MaxUnpool, RefusesIndicesOutsideThePlaneAndMismatchedShapes) {
  const Tensor x = ones({1, 1, 2});
  expect_message(message_of<ValueError>([&] {
                   F::max_unpool1d(x, idx({0, 4}, {1, 1, 2}), {2});
                 }),
                 {"[max_unpool1d] indices must lie in [0, 4)"});
  expect_message(message_of<ShapeError>([&] {
                   F::max_unpool1d(x, idx({0}, {1, 1, 1}), {2});
                 }),
                 {"[max_unpool1d] indices must have input's shape"});
  expect_message(message_of<DTypeError>([&] { F::max_unpool1d(x, x, {2}); }),
                 {"[max_unpool1d] indices must be int64"});
  expect_message(message_of<ShapeError>([&] {
                   F::max_unpool2d(ones({1, 2}), idx({0, 1}, {1, 2}), {2});
                 }),
                 {"[max_unpool2d] input must be 3-d"});
}

// ---- embedding_bag ----

const Tensor& bag_weight() {
  static const Tensor w = arange(12, kFloat32).view({4, 3});
  return w;
}

TEST(EmbeddingBag, EmptyBagsGiveZerosInEveryMode) {
  for (const F::EmbeddingBagMode mode :
       {F::EmbeddingBagMode::Sum, F::EmbeddingBagMode::Mean, F::EmbeddingBagMode::Max}) {
    const Tensor y = F::embedding_bag(idx({1, 3}), bag_weight(), testing::with([&](auto& o) {
                                        o.offsets = idx({0, 0, 2});
                                        o.mode = mode;
                                      }));
    EXPECT_EQ(y.sizes(), IntArrayRef({3, 3}));
    EXPECT_EQ(values(y.select(0, 0)), (std::vector<float>{0, 0, 0}));
    EXPECT_EQ(values(y.select(0, 2)), (std::vector<float>{0, 0, 0}));
  }
}

TEST(EmbeddingBag, PaddingIdxIsLeftOutOfSumsMeansAndCounts) {
  // Bags {1, 2, 2} and {2, 3} with padding_idx -2 (row 2).
  const auto bag = [](F::EmbeddingBagMode mode) {
    return F::embedding_bag(idx({1, 2, 2, 2, 3}), bag_weight(), testing::with([&](auto& o) {
                              o.offsets = idx({0, 3});
                              o.mode = mode;
                              o.padding_idx = -2;
                            }));
  };
  EXPECT_EQ(values(bag(F::EmbeddingBagMode::Mean)), (std::vector<float>{3, 4, 5, 9, 10, 11}));
  EXPECT_EQ(values(bag(F::EmbeddingBagMode::Max)), (std::vector<float>{3, 4, 5, 9, 10, 11}));
  // A bag of padding only is empty: zeros.
  const Tensor only_padding = F::embedding_bag(idx({2, 2}, {1, 2}), bag_weight(),
                                               testing::with([](auto& o) { o.padding_idx = 2; }));
  EXPECT_EQ(values(only_padding), (std::vector<float>{0, 0, 0}));
}

TEST(EmbeddingBag, IncludeLastOffsetClosesTheLastBag) {
  const Tensor y = F::embedding_bag(idx({0, 1, 2, 3}), bag_weight(), testing::with([](auto& o) {
                                      o.offsets = idx({0, 1, 4});
                                      o.mode = F::EmbeddingBagMode::Sum;
                                      o.include_last_offset = true;
                                    }));
  EXPECT_EQ(values(y), (std::vector<float>{0, 1, 2, 18, 21, 24}));
}

TEST(EmbeddingBag, MaxNormRenormalisesLookedUpRowsInPlace) {
  Tensor w = ones({3, 4}) * 2.0;  // every row's norm is 4
  F::embedding_bag(idx({0, 2}, {1, 2}), w, testing::with([](auto& o) { o.max_norm = 1.0; }));
  EXPECT_NEAR(w.select(0, 0).norm().item<double>(), 1.0, 1e-5);
  EXPECT_NEAR(w.select(0, 1).norm().item<double>(), 4.0, 1e-6);
  EXPECT_NEAR(w.select(0, 2).norm().item<double>(), 1.0, 1e-5);
}

TEST(EmbeddingBag, ScaleGradByFreqDividesEachRowsGradient) {
  const Tensor w = ones({3, 2}).requires_grad_(true);
  const Tensor y = F::embedding_bag(idx({0, 0, 1}, {1, 3}), w, testing::with([](auto& o) {
                                      o.mode = F::EmbeddingBagMode::Sum;
                                      o.scale_grad_by_freq = true;
                                    }));
  EXPECT_EQ(values(y), (std::vector<float>{3, 3}));
  y.sum().backward();
  EXPECT_EQ(values(w.grad()), (std::vector<float>{1, 1, 1, 1, 0, 0}));
}

TEST(EmbeddingBag, ErrorsNameTheArgument) {
  const Tensor& w = bag_weight();
  expect_message(message_of<ValueError>([&] {
                   F::embedding_bag(idx({0, 1}), w);
                 }),
                 {"[embedding_bag] input must be (B, N), or 1-d with 1-d offsets"});
  expect_message(message_of<ValueError>([&] {
                   F::embedding_bag(idx({0, 1}, {1, 2}), w,
                                    testing::with([](auto& o) { o.offsets = idx({0}); }));
                 }),
                 {"[embedding_bag] offsets must be undefined for a 2-d input"});
  expect_message(
      message_of<ValueError>([&] {
        F::embedding_bag(idx({0, 1}), w, testing::with([](auto& o) { o.offsets = idx({1}); }));
      }),
      {"[embedding_bag] offsets must start at 0"});
  expect_message(message_of<NotImplementedError>([&] {
                   F::embedding_bag(idx({0, 1}, {1, 2}), w, testing::with([](auto& o) {
                                      o.per_sample_weights = ones({1, 2});
                                    }));
                 }),
                 {"[embedding_bag] per_sample_weights is only supported in mode sum"});
  expect_message(
      message_of<ValueError>([&] {
        F::embedding_bag(idx({0, 1}, {1, 2}), w, testing::with([](auto& o) { o.padding_idx = 4; }));
      }),
      {"[embedding_bag] padding_idx must be within [-4, 4)"});
  expect_message(message_of<DTypeError>([&] { F::embedding_bag(w, w); }),
                 {"[embedding_bag] input must hold int64 or int32 ids"});
}

// ---- triplet_margin_with_distance_loss ----

TEST(TripletMarginWithDistanceLoss, DefaultsToPairwiseDistanceAndCallsTheGivenOne) {
  Generator gen(5);
  const Tensor a = randn({4, 3}, {}, &gen), p = randn({4, 3}, {}, &gen),
               n = randn({4, 3}, {}, &gen);
  EXPECT_LT(max_abs_diff(F::triplet_margin_with_distance_loss(a, p, n, {}, 0.7, true),
                         F::triplet_margin_loss(a, p, n, 0.7, 2.0, 1e-6, true)),
            1e-6);
  int calls = 0;
  const F::DistanceFunction l1 = [&](const Tensor& x, const Tensor& y) {
    ++calls;
    return (x - y).abs().sum({1});
  };
  const Tensor loss =
      F::triplet_margin_with_distance_loss(a, p, n, l1, 0.7, false, F::Reduction::None);
  EXPECT_EQ(calls, 2);
  const Tensor want = (l1(a, p) - l1(a, n) + 0.7).clamp(0.0);
  EXPECT_LT(max_abs_diff(loss, want), 1e-6);
}

TEST(TripletMarginWithDistanceLoss, RefusesANonPositiveMarginAndMismatchedRanks) {
  const Tensor x = ones({2, 3});
  expect_message(
      message_of<ValueError>([&] { F::triplet_margin_with_distance_loss(x, x, x, {}, 0.0); }),
      {"[triplet_margin_with_distance_loss] margin must be greater than 0"});
  expect_message(
      message_of<ShapeError>([&] { F::triplet_margin_with_distance_loss(x, x, ones({3})); }),
      {"[triplet_margin_with_distance_loss] anchor, positive and negative"});
}

// ---- multi_head_attention_forward ----

struct Attention {
  Tensor q, w_in, b_in, w_out, b_out;
};

Attention attention_inputs() {
  Generator gen(9);
  return {randn({3, 2, 4}, {}, &gen), randn({12, 4}, {}, &gen), randn({12}, {}, &gen),
          randn({4, 4}, {}, &gen), randn({4}, {}, &gen)};
}

std::pair<Tensor, Tensor> self_attention(const Attention& in,
                                         const F::MultiHeadAttentionOptions& o) {
  return F::multi_head_attention_forward(in.q, in.q, in.q, 4, 2, in.w_in, in.b_in, Tensor(),
                                         Tensor(), false, 0.0, in.w_out, in.b_out, o);
}

TEST(MultiHeadAttentionForward, MatchesScaledDotProductAttentionOfTheProjections) {
  const Attention in = attention_inputs();
  const auto [out, weights] = self_attention(in, {});
  EXPECT_EQ(weights.sizes(), IntArrayRef({2, 3, 3}));
  // The same attention written with linear and scaled_dot_product_attention.
  const Tensor qkv = F::linear(in.q, in.w_in, in.b_in);  // (L, N, 3E)
  const auto heads = [&](int64_t part) {
    return qkv.narrow(2, part * 4, 4).reshape({3, 2, 2, 2}).permute({1, 2, 0, 3});
  };
  const Tensor attended = F::scaled_dot_product_attention(heads(0), heads(1), heads(2));
  const Tensor want =
      F::linear(attended.permute({2, 0, 1, 3}).reshape({3, 2, 4}), in.w_out, in.b_out);
  EXPECT_LT(max_abs_diff(out, want), 1e-5);
  // need_weights=false takes the fused path: the same output, no weights.
  const auto [fused, none] =
      self_attention(in, testing::with([](auto& o) { o.need_weights = false; }));
  EXPECT_LT(max_abs_diff(fused, out), 1e-5);
  EXPECT_FALSE(none.defined());
}

TEST(MultiHeadAttentionForward, BoolAndFloatMasksAgreeAndPaddedKeysGetNoWeight) {
  const Attention in = attention_inputs();
  const Tensor bool_mask = tensor<bool>({false, true, false, false, false, true}, {2, 3});
  const auto [out, weights] =
      self_attention(in, testing::with([&](auto& o) { o.key_padding_mask = bool_mask; }));
  EXPECT_EQ(values(weights.select(2, 1).select(0, 0)), (std::vector<float>{0, 0, 0}));
  const Tensor float_mask = zeros({2, 3}).masked_fill(bool_mask, -INFINITY);
  const auto [float_out, float_weights] =
      self_attention(in, testing::with([&](auto& o) { o.key_padding_mask = float_mask; }));
  EXPECT_LT(max_abs_diff(out, float_out), 1e-6);
}

TEST(MultiHeadAttentionForward, UnbatchedInputsDropTheBatchDim) {
  const Attention in = attention_inputs();
  const Tensor q = in.q.select(1, 0);
  const auto [out, weights] = F::multi_head_attention_forward(
      q, q, q, 4, 2, in.w_in, in.b_in, Tensor(), Tensor(), false, 0.0, in.w_out, in.b_out,
      testing::with([](auto& o) { o.average_attn_weights = false; }));
  EXPECT_EQ(out.sizes(), IntArrayRef({3, 4}));
  EXPECT_EQ(weights.sizes(), IntArrayRef({2, 3, 3}));
  const auto [batched, batched_weights] = self_attention(in, {});
  EXPECT_LT(max_abs_diff(out, batched.select(1, 0)), 1e-5);
}

TEST(MultiHeadAttentionForward, StaticKeysAndValuesReplaceTheProjectedOnes) {
  const Attention in = attention_inputs();
  Generator gen(11);
  const Tensor static_k = randn({4, 5, 2}, {}, &gen), static_v = randn({4, 5, 2}, {}, &gen);
  const auto [out, weights] = self_attention(in, testing::with([&](auto& o) {
                                               o.static_k = static_k;
                                               o.static_v = static_v;
                                             }));
  EXPECT_EQ(weights.sizes(), IntArrayRef({2, 3, 5}));
  const Tensor q = F::linear(in.q, in.w_in.narrow(0, 0, 4), in.b_in.narrow(0, 0, 4))
                       .reshape({3, 4, 2})
                       .transpose(0, 1);
  const Tensor attended = F::scaled_dot_product_attention(q, static_k, static_v);
  const Tensor want = F::linear(attended.transpose(0, 1).reshape({3, 2, 4}), in.w_out, in.b_out);
  EXPECT_LT(max_abs_diff(out, want), 1e-5);
}

TEST(MultiHeadAttentionForward, ErrorsNameTheArgument) {
  const Attention in = attention_inputs();
  const auto call = [&](const F::MultiHeadAttentionOptions& o, int64_t embed = 4,
                        int64_t heads = 2) {
    F::multi_head_attention_forward(in.q, in.q, in.q, embed, heads, in.w_in, in.b_in, Tensor(),
                                    Tensor(), false, 0.0, in.w_out, in.b_out, o);
  };
  expect_message(message_of<ShapeError>([&] { call({}, 5); }),
                 {"[multi_head_attention_forward] query's embed dim is 4"});
  expect_message(message_of<ValueError>([&] { call({}, 4, 3); }), {"not divisible by num_heads 3"});
  expect_message(
      message_of<Error>([&] { call(testing::with([](auto& o) { o.is_causal = true; })); }),
      {"[multi_head_attention_forward] is_causal needs attn_mask"});
  expect_message(message_of<ShapeError>([&] {
                   call(testing::with([](auto& o) { o.attn_mask = zeros({3, 4}); }));
                 }),
                 {"the 2-d attn_mask must be (3, 3)"});
  expect_message(message_of<DTypeError>([&] {
                   call(testing::with([](auto& o) { o.key_padding_mask = zeros({2, 3}, kInt64); }));
                 }),
                 {"key_padding_mask must be bool or floating-point"});
  expect_message(message_of<ShapeError>([&] {
                   call(testing::with([](auto& o) { o.key_padding_mask = zeros({2, 4}); }));
                 }),
                 {"key_padding_mask must be (N, S) = (2, 3)"});
  expect_message(message_of<ValueError>([&] {
                   call(testing::with([](auto& o) { o.use_separate_proj_weight = true; }));
                 }),
                 {"use_separate_proj_weight needs q_proj_weight"});
}

// ---- nonzero_static ----

TEST(NonzeroStatic, PadsWithFillValueOrTruncates) {
  const Tensor x = tensor<int64_t>({0, 1, 2, 0}, {2, 2});
  EXPECT_EQ(nonzero_static(x, 3, -7).to_vector<int64_t>(),
            (std::vector<int64_t>{0, 1, 1, 0, -7, -7}));
  EXPECT_EQ(nonzero_static(x, 1).to_vector<int64_t>(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(nonzero_static(x, 0).sizes(), IntArrayRef({0, 2}));
  expect_message(message_of<ValueError>([&] { nonzero_static(x, -1); }),
                 {"[nonzero_static] size must be non-negative"});
}

TEST(NonzeroStatic, RunsOnMetaWithItsStaticShape) {
  const Tensor x = empty({3, 5}, TensorOptions(kFloat32).device(kMeta));
  const Tensor y = nonzero_static(x, 4);
  EXPECT_TRUE(y.device().is_meta());
  EXPECT_EQ(y.sizes(), IntArrayRef({4, 2}));
  EXPECT_EQ(y.dtype(), kInt64);
}

}  // namespace
}  // namespace stride::testing
