// The two flagship models against PyTorch, as llm.c's test_gpt2.c does for
// GPT-2: tools/gen_llama_goldens.py writes each model again in PyTorch (the
// article Llama in the article's own style, the correct Llama in Meta's),
// loads stride's initial weights, and records the logits, the loss and every
// parameter gradient for fixed inputs (tests/golden/llama_article.safetensors,
// tests/golden/llama_correct.safetensors). PyTorch computes in float64.
//
// Each tensor is compared by max |stride - torch| / max |torch|: 1e-4 for
// stride in float32 (the project's bar) and 1e-6 for stride in float64 after
// to(kFloat64), which checks the math far below float32 rounding (the stored
// gradients are float32: that rounding alone is under 1e-7).
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "llama/ladder.h"
#include "llama/model.h"
#include "lm/registry.h"
#include "stride/io.h"
#include "stride/ops.h"

namespace stride::llama {
namespace {

// The model layer (models/lm): configs, training and generation, tested
// here with the Llama.
using namespace ::stride::lm;

const io::SafetensorsContents& golden(const std::string& file) {
  static std::map<std::string, io::SafetensorsContents> cache;
  auto it = cache.find(file);
  if (it == cache.end()) {
    it = cache.emplace(file, io::load_safetensors(std::string(STRIDE_GOLDEN_DIR) + "/" + file))
             .first;
  }
  return it->second;
}

// The configs of tools/gen_llama_goldens.py (CONFIGS there).
ModelConfig article_golden_config() {
  ModelConfig c = article_run_config(ladder_stages()[6]).model;
  // The article's attention-probability dropout (0.1) stays on even in eval
  // mode (bug B4): no two implementations agree with it on, so the golden
  // turns it off on both sides.
  c.dropout = 0;
  // One block instead of 4 keeps the file (every weight and every gradient in
  // float32) near 5 MB; each block computes the same math.
  c.n_layers = 1;
  return c;
}

ModelConfig correct_golden_config() {
  ModelConfig c;
  c.arch = "llama";
  c.n_layers = 2;  // 4 in the article-size run; 2 keeps the file at 3.4 MB
  return c;
}

// max |got - want| / max |want|, in float64.
double relative_error(const Tensor& got, const Tensor& want) {
  const Tensor g = got.to(kFloat64), w = want.to(kFloat64);
  return (g - w).abs().max().item<double>() / w.abs().max().item<double>();
}

// name -> relative error, for "logits", "loss" and "grad.<parameter>".
using Errors = std::vector<std::pair<std::string, double>>;

// Runs `config` with the file's weights on its inputs, in `dtype`.
Errors run_against_golden(const std::string& file_name,
                          const ModelConfig& config,
                          ScalarType dtype) {
  const io::SafetensorsContents& file = golden(file_name);
  nn::StateDict weights;
  size_t n_grads = 0;
  for (const auto& [key, t] : file.tensors) {
    if (key.rfind("weight.", 0) == 0) weights.insert(key.substr(7), t);
    if (key.rfind("grad.", 0) == 0) ++n_grads;
  }
  manual_seed(0);
  auto model = build_model(config);
  model->load_state_dict(weights, /*strict=*/true);
  model->to(dtype);
  model->eval();

  const Tensor ids = file.at("ids"), targets = file.at("targets");
  const Tensor logits = model->call(ids);
  EXPECT_EQ(shape_str(logits.sizes()), shape_str(file.at("logits").sizes()));
  EXPECT_EQ(logits.dtype(), dtype);
  const Tensor loss = model->loss(ids, targets);
  loss.backward();

  Errors errors = {{"logits", relative_error(logits, file.at("logits"))},
                   {"loss", relative_error(loss, file.at("loss"))}};
  const auto params = model->named_parameters();
  EXPECT_EQ(params.size(), n_grads) << file_name << ": one gradient per parameter";
  for (const auto& [name, p] : params) {
    EXPECT_TRUE(p.grad().defined()) << name << " got no gradient";
    if (p.grad().defined()) {
      errors.emplace_back("grad." + name, relative_error(p.grad(), file.at("grad." + name)));
    }
  }
  return errors;
}

void expect_within(const Errors& errors, double tol, const std::string& what) {
  ASSERT_FALSE(errors.empty());
  const auto grads_begin = errors.begin() + 2;  // after logits and loss
  const auto worst =
      std::max_element(errors.begin(), errors.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  const auto worst_grad = std::max_element(
      grads_begin, errors.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  std::cout << "[ golden   ] " << what << ": logits " << errors[0].second << ", loss "
            << errors[1].second << ", worst of " << (errors.end() - grads_begin) << " gradients "
            << worst_grad->second << " (" << worst_grad->first << ")\n";
  for (const auto& [name, err] : errors) EXPECT_LE(err, tol) << what << ": " << name;
  EXPECT_LE(worst->second, tol) << what << ": worst tensor " << worst->first << ", relative error "
                                << worst->second;
}

constexpr double kFloat32Tol = 1e-4, kFloat64Tol = 1e-6;

TEST(LlamaGolden, ArticleLlamaFloat32LogitsLossAndEveryGradientMatchPyTorch) {
  expect_within(run_against_golden("llama_article.safetensors", article_golden_config(), kFloat32),
                kFloat32Tol, "article Llama float32");
}

TEST(LlamaGolden, ArticleLlamaFloat64LogitsLossAndEveryGradientMatchPyTorch) {
  expect_within(run_against_golden("llama_article.safetensors", article_golden_config(), kFloat64),
                kFloat64Tol, "article Llama float64");
}

TEST(LlamaGolden, CorrectLlamaFloat32LogitsLossAndEveryGradientMatchPyTorch) {
  expect_within(run_against_golden("llama_correct.safetensors", correct_golden_config(), kFloat32),
                kFloat32Tol, "correct Llama float32");
}

TEST(LlamaGolden, CorrectLlamaFloat64LogitsLossAndEveryGradientMatchPyTorch) {
  expect_within(run_against_golden("llama_correct.safetensors", correct_golden_config(), kFloat64),
                kFloat64Tol, "correct Llama float64");
}

// The script records its config in each file; a file regenerated with
// another config must fail here, not as a wall of mismatched numbers.
TEST(LlamaGolden, FilesWereMadeWithTheConfigsTheTestsBuild) {
  const std::vector<std::pair<std::string, ModelConfig>> files = {
      {"llama_article.safetensors", article_golden_config()},
      {"llama_correct.safetensors", correct_golden_config()}};
  for (const auto& [file_name, config] : files) {
    const io::Metadata& meta = golden(file_name).metadata;
    ASSERT_TRUE(meta.contains("config")) << file_name;
    RunConfig expected;
    expected.model = config;
    const auto got = nlohmann::json::parse(to_json(parse_config(meta.at("config"), file_name)));
    EXPECT_EQ(got.at("model"), nlohmann::json::parse(to_json(expected)).at("model")) << file_name;
  }
}

}  // namespace
}  // namespace stride::llama
