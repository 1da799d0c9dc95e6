// GPT-2's initialisation (models/gpt/model.h): weights ~ N(0, 0.02), the
// residual projections ~ N(0, 0.02 / sqrt(2 n_layers)), biases zero, so a
// fresh model's loss is the uniform guess ln V, built directly or
// materialised from meta. PyTorch's module defaults (the seed bug here) gave
// the tied embedding N(0, 1) and a first loss of ~250 nats.
#include <gtest/gtest.h>

#include <cmath>

#include "gpt/model.h"
#include "llama/model.h"
#include "lm/registry.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"

namespace stride::gpt {
namespace {

ModelConfig tiny() {
  ModelConfig c;
  c.arch = "gpt2";
  c.vocab_size = 65;
  c.d_model = 128;
  c.n_layers = 8;
  c.n_heads = 4;
  c.context = 32;
  c.tie_embeddings = true;
  c.dropout = 0.0;
  return c;
}

double std_of(const Tensor& t) {
  return std::sqrt(var(t.to(kFloat64)).item<double>());
}

void expect_gpt2_initialisation(lm::LanguageModel& model) {
  const auto params = model.named_parameters();
  const double residual = 0.02 / std::sqrt(2.0 * 8.0);
  for (const auto& [name, p] : params) {
    SCOPED_TRACE(name);
    if (name.ends_with("c_proj.weight")) {
      EXPECT_NEAR(std_of(p), residual, 0.1 * residual);
    } else if (name.ends_with(".weight") && p.dim() == 2) {
      EXPECT_NEAR(std_of(p), 0.02, 0.002);
    } else if (name.ends_with(".bias") && name.find("ln_") == std::string::npos) {
      EXPECT_EQ(p.abs().max().item<double>(), 0.0);
    }
  }
  manual_seed(5);
  const Tensor ids = randint(0, 65, {4, 32});
  NoGradGuard no_grad;
  model.eval();
  const double loss = model.loss(ids.slice(1, 0, 31), ids.slice(1, 1, 32)).item<double>();
  EXPECT_NEAR(loss, std::log(65.0), 0.2);
}

TEST(GPT, DrawsItsWeightsAsGPT2Does) {
  manual_seed(1);
  auto model = lm::build_model(tiny());
  expect_gpt2_initialisation(*model);
  const auto& gpt = dynamic_cast<const GPT&>(*model);
  EXPECT_TRUE(gpt.lm_head->weight.is_same(gpt.transformer->wte->weight));
}

TEST(GPT, MaterialisedFromMetaDrawsTheSame) {
  std::shared_ptr<lm::LanguageModel> model;
  {
    DefaultDeviceGuard on_meta(kMeta);
    model = lm::build_model(tiny());
  }
  model->to_empty(Device(kCPU));
  manual_seed(1);
  model->reset_all_parameters();
  expect_gpt2_initialisation(*model);
}

}  // namespace
}  // namespace stride::gpt
