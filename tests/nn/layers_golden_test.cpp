// nn layers against PyTorch: forward outputs, input and weight gradients and
// buffer updates (tools/gen_layer_goldens.py writes
// tests/golden/nn_layers.safetensors). Each case loads PyTorch's state_dict
// with load_state_dict(strict), so PyTorch's parameter names are checked too.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>

#include <stride/nn.h>
#include <stride/stride.h>

#include "support/layouts.h"

namespace stride {
namespace {

const io::SafetensorsContents& golden() {
  static const io::SafetensorsContents file =
      io::load_safetensors(STRIDE_GOLDEN_DIR "/nn_layers.safetensors");
  return file;
}

// Every tensor of the file under "prefix", with the prefix removed.
nn::StateDict with_prefix(const std::string& prefix) {
  nn::StateDict out;
  for (const auto& [key, t] : golden().tensors) {
    if (key.rfind(prefix, 0) == 0) out.insert(key.substr(prefix.size()), t);
  }
  return out;
}

using Factory = std::function<std::shared_ptr<nn::Module>()>;

// The same modules as the Python cases.
const std::map<std::string, Factory>& cases() {
  static const std::map<std::string, Factory> table = {
      {"linear", [] { return std::make_shared<nn::Linear>(6, 5); }},
      {"linear_3d_input", [] { return std::make_shared<nn::Linear>(6, 3); }},
      {"linear_no_bias", [] { return std::make_shared<nn::Linear>(7, 4, false); }},
      {"embedding", [] { return std::make_shared<nn::Embedding>(10, 4); }},
      {"rmsnorm", [] { return std::make_shared<nn::RMSNorm>(8); }},
      {"layernorm", [] { return std::make_shared<nn::LayerNorm>(8); }},
      {"layernorm_2d_shape",
       [] {
         return std::make_shared<nn::LayerNorm>(std::vector<int64_t>{4, 8}, 1e-3);
       }},
      {"batchnorm_train_2d", [] { return std::make_shared<nn::BatchNorm1d>(5); }},
      {"batchnorm_train_3d", [] { return std::make_shared<nn::BatchNorm1d>(4, 1e-5, 0.3); }},
      {"batchnorm_eval_3d", [] { return std::make_shared<nn::BatchNorm1d>(4); }},
      {"batchnorm_cumulative",
       [] { return std::make_shared<nn::BatchNorm1d>(3, 1e-5, std::nullopt); }},
      {"mlp",
       [] {
         return std::make_shared<nn::Sequential>(
             std::make_shared<nn::Linear>(6, 16), std::make_shared<nn::ReLU>(),
             std::make_shared<nn::Linear>(16, 12), std::make_shared<nn::GELU>(),
             std::make_shared<nn::Linear>(12, 8), std::make_shared<nn::SiLU>(),
             std::make_shared<nn::Linear>(8, 4));
       }},
  };
  return table;
}

// float32 results: 1e-5 relative, with an absolute floor for values near 0.
constexpr double kRtol = 1e-5, kAtol = 1e-6;

class LayerGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(LayerGolden, ForwardGradientsAndBuffersMatchPyTorch) {
  const std::string name = GetParam();
  const auto& file = golden();
  std::shared_ptr<nn::Module> m = cases().at(name)();
  m->load_state_dict(with_prefix(name + "/state/"), /*strict=*/true);
  const bool train = name.find("eval") == std::string::npos;
  m->train(train);

  Tensor x = file.at(name + "/in/x").clone();
  if (x.is_floating_point()) x.requires_grad_();
  Tensor y = m->call(x);
  EXPECT_TRUE(testing::close(y, file.at(name + "/out/y"), kRtol, kAtol)) << name << " y";
  (y * file.at(name + "/in/r")).sum().backward();

  if (x.is_floating_point()) {
    EXPECT_TRUE(testing::close(x.grad(), file.at(name + "/grad/x"), kRtol, kAtol))
        << name << " grad x";
  }
  const auto grads = with_prefix(name + "/grad/");
  const auto params = m->named_parameters();
  for (const auto& [key, p] : params) {
    ASSERT_TRUE(grads.contains(key)) << name << ": PyTorch has no parameter " << key;
    EXPECT_TRUE(testing::close(p.grad(), grads.at(key), kRtol, kAtol)) << name << " grad " << key;
  }
  EXPECT_EQ(params.size() + (x.is_floating_point() ? 1 : 0), grads.size()) << name;

  const auto after = with_prefix(name + "/after/");
  const auto buffers = m->named_buffers();
  EXPECT_EQ(buffers.size(), after.size()) << name;
  for (const auto& [key, b] : buffers) {
    ASSERT_TRUE(after.contains(key)) << name << ": PyTorch has no buffer " << key;
    EXPECT_TRUE(testing::close(b, after.at(key), kRtol, kAtol)) << name << " buffer " << key;
    EXPECT_EQ(b.dtype(), after.at(key).dtype()) << name << " buffer " << key;
  }
}

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const auto& [name, fn] : cases()) names.push_back(name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Layers,
                         LayerGolden,
                         ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& c) { return c.param; });

TEST(LayerGoldenFile, EveryFileCaseHasACppCase) {
  for (const auto& [key, t] : golden().tensors) {
    const std::string name = key.substr(0, key.find('/'));
    EXPECT_TRUE(cases().count(name)) << "file case " << name << " has no C++ counterpart";
  }
}

// Running the mlp case in float64 after to(kFloat64): the same numbers to
// float32 precision, through the converted parameters.
TEST(LayerGoldenFile, MlpInFloat64AfterToMatchesPyTorch) {
  const auto& file = golden();
  auto m = cases().at("mlp")();
  m->load_state_dict(with_prefix("mlp/state/"));
  m->to(kFloat64);
  Tensor x = file.at("mlp/in/x").to(kFloat64).requires_grad_();
  Tensor y = m->call(x);
  EXPECT_EQ(y.dtype(), kFloat64);
  (y * file.at("mlp/in/r").to(kFloat64)).sum().backward();
  EXPECT_TRUE(testing::close(y.to(kFloat32), file.at("mlp/out/y"), 1e-5, 1e-6));
  EXPECT_TRUE(testing::close(x.grad().to(kFloat32), file.at("mlp/grad/x"), 1e-5, 1e-6));
  EXPECT_TRUE(testing::close(m->named_parameters()["0.weight"].grad().to(kFloat32),
                             file.at("mlp/grad/0.weight"), 1e-5, 1e-6));
}

}  // namespace
}  // namespace stride
