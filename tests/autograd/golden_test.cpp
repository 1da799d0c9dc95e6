// Gradients of composite expressions against PyTorch
// (tools/gen_autograd_goldens.py writes tests/golden/autograd.safetensors).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include <stride/stride.h>

#include <algorithm>

#include "support/layouts.h"

namespace stride {
namespace {

using Leaves = std::vector<Tensor>;
using LossFn = std::function<Tensor(const Leaves&, const std::vector<Tensor>& inputs)>;

const io::SafetensorsContents& golden() {
  static const io::SafetensorsContents file =
      io::load_safetensors(STRIDE_GOLDEN_DIR "/autograd.safetensors");
  return file;
}

Tensor causal_mask(int64_t t) {
  return ones({t, t}, kBool).tril();
}

// The same expressions as the Python cases, written with stride.
const std::map<std::string, LossFn>& cases() {
  static const std::map<std::string, LossFn> table = {
      {"mlp_cross_entropy_f32",
       [](const Leaves& p, const std::vector<Tensor>& in) {
         Tensor h = tanh(p[0].matmul(p[1]) + p[2]);
         Tensor logits = h.matmul(p[3]) + p[4];
         return -logits.log_softmax(1).gather(1, in[5].unsqueeze(1)).mean();
       }},
      {"mlp_gelu_relu_f64",
       [](const Leaves& p, const std::vector<Tensor>& in) {
         Tensor h = gelu(p[0].matmul(p[1])) + relu(p[0].matmul(p[1])) * 0.5;
         return -h.matmul(p[2]).log_softmax(1).gather(1, in[3].unsqueeze(1)).sum();
       }},
      {"causal_attention_f32",
       [](const Leaves& p, const std::vector<Tensor>&) {
         const int64_t t = p[0].size(1), c = p[0].size(2);
         Tensor q = p[0].matmul(p[1]), k = p[0].matmul(p[2]), v = p[0].matmul(p[3]);
         Tensor scores = q.matmul(k.transpose(1, 2)) / std::sqrt(double(c));
         scores =
             scores.masked_fill(causal_mask(t).eq(false), -std::numeric_limits<double>::infinity());
         Tensor out = scores.softmax(-1).matmul(v).matmul(p[4]);
         return (out * p[5]).sum();
       }},
      {"multihead_views_f64",
       [](const Leaves& p, const std::vector<Tensor>&) {
         const int64_t b = 2, t = 4, h = 2, d = 3;
         auto qkv = p[0].matmul(p[1]).chunk(3, -1);
         auto heads = [&](const Tensor& x) { return x.reshape({b, t, h, d}).transpose(1, 2); };
         Tensor q = heads(qkv[0]), k = heads(qkv[1]), v = heads(qkv[2]);
         Tensor att = (q.matmul(k.transpose(-2, -1)) * std::pow(double(d), -0.5)).softmax(-1);
         Tensor y = att.matmul(v).transpose(1, 2).reshape({b, t, h * d});
         return (y.pow(2).sum({-1}).sqrt() + y.logsumexp({-1})).mean();
       }},
      {"broadcast_reductions_f32",
       [](const Leaves& p, const std::vector<Tensor>&) {
         Tensor y = (p[0] * p[1] - p[2]).pow(2);
         return y.mean({1}).amax({0}).sum() + y.var({2}).sum() + maximum(p[0], p[2]).sum();
       }},
      {"indexing_cat_f32",
       [](const Leaves& p, const std::vector<Tensor>& in) {
         Tensor e = embedding(p[0], in[2]);
         Tensor z = cat({e, e.slice(1, 0, std::nullopt, 2).matmul(p[1])}, 1);
         Tensor picked = z.index_select(2, tensor<int64_t>({3, 0}))
                             .gather(1, tensor<int64_t>({0, 1, 4, 2}, {2, 1, 2}));
         return picked.sum() + z.clamp(-0.5, 0.5).square().sum();
       }},
  };
  return table;
}

class AutogradGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(AutogradGolden, LossAndGradientsMatchPyTorch) {
  const std::string name = GetParam();
  const auto& file = golden();
  std::vector<Tensor> inputs;
  Leaves leaves;
  for (int i = 0;; ++i) {
    const std::string key = name + "/in" + std::to_string(i);
    auto it = std::find_if(file.tensors.begin(), file.tensors.end(),
                           [&](const auto& kv) { return kv.first == key; });
    if (it == file.tensors.end()) break;
    inputs.push_back(it->second);
    if (it->second.is_floating_point()) leaves.push_back(it->second.clone().requires_grad_());
  }
  ASSERT_FALSE(leaves.empty()) << name;
  Tensor loss = cases().at(name)(leaves, inputs);
  const bool f64 = loss.dtype() == kFloat64;
  const double rtol = f64 ? 1e-10 : 2e-5, atol = f64 ? 1e-12 : 1e-6;
  EXPECT_TRUE(testing::close(loss, file.at(name + "/loss"), rtol, atol)) << name << " loss";
  loss.backward();
  for (size_t i = 0; i < leaves.size(); ++i) {
    EXPECT_TRUE(
        testing::close(leaves[i].grad(), file.at(name + "/grad" + std::to_string(i)), rtol, atol))
        << name << " grad" << i;
  }
}

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const auto& [name, fn] : cases()) names.push_back(name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Composite,
                         AutogradGolden,
                         ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& c) { return c.param; });

TEST(AutogradGoldenFile, EveryFileCaseHasACppCase) {
  for (const auto& [key, t] : golden().tensors) {
    const std::string name = key.substr(0, key.find('/'));
    EXPECT_TRUE(cases().count(name)) << "file case " << name << " has no C++ counterpart";
  }
}

}  // namespace
}  // namespace stride
