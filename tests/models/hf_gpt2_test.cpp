// GPT-2 against Hugging Face transformers: tools/gen_hf_goldens.py saves tiny
// random GPT2LMHeadModels with save_pretrained (tests/golden/hf/) and records
// their logits, loss, attention probabilities and greedy continuations;
// stride loads the directories (models/gpt/hf.h) and must agree to float32
// tolerance. STRIDE_HF_GOLDEN_DIR points the test at a fresh run of the
// script (the live check, when transformers is installed).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>

#include "gpt/hf.h"
#include "gpt/model.h"
#include "llama/generate.h"
#include "stride/io.h"
#include "stride/ops.h"

namespace stride::gpt {
namespace {

namespace fs = std::filesystem;

fs::path golden_dir() {
  const char* env = std::getenv("STRIDE_HF_GOLDEN_DIR");
  return env ? fs::path(env) : fs::path(STRIDE_GOLDEN_DIR) / "hf";
}

const io::SafetensorsContents& outputs() {
  static const io::SafetensorsContents file =
      io::load_safetensors((golden_dir() / "gpt2_tiny_outputs.safetensors").string());
  return file;
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  return (a.to(kFloat64) - b.to(kFloat64)).abs().max().item<double>();
}

// The reference's logits, loss and attention probabilities for `model`.
void expect_matches_transformers(llama::LanguageModel& model, const std::string& prefix) {
  const Tensor& ids = outputs().at("ids");
  const Tensor& labels = outputs().at("labels");
  NoGradGuard no_grad;
  model.record_attention(true);
  const Tensor logits = model.forward(ids);
  model.record_attention(false);
  const double logits_diff = max_abs_diff(logits, outputs().at(prefix + "/logits"));
  std::cout << prefix << ": max |logits - transformers| = " << logits_diff << "\n";
  EXPECT_LE(logits_diff, 1e-4);
  // Hugging Face's causal-LM loss: predict token t + 1 from position t.
  const int64_t T = ids.size(1);
  const Tensor shifted = logits.slice(1, 0, T - 1).reshape({-1, logits.size(-1)});
  const Tensor targets = labels.slice(1, 1, T).reshape({-1});
  const double loss = nn::functional::cross_entropy(shifted, targets).item<double>();
  EXPECT_NEAR(loss, outputs().at(prefix + "/loss").item<double>(), 1e-5);
  const auto& maps = model.attention_maps();
  ASSERT_EQ(maps.size(), size_t(model.config().n_layers));
  for (size_t l = 0; l < maps.size(); ++l) {
    EXPECT_LE(max_abs_diff(maps[l], outputs().at(prefix + "/attn." + std::to_string(l))), 1e-5)
        << "layer " << l;
  }
}

std::vector<int64_t> greedy(llama::LanguageModel& model, const Tensor& reference) {
  const Tensor ids = outputs().at("ids");
  std::vector<int64_t> prompt;
  for (int64_t t = 0; t < 8; ++t) prompt.push_back(ids[0][t].item<int64_t>());
  llama::GenerateOptions options;
  options.sampling.temperature = 0;
  options.max_new_tokens = reference.numel() - 8;
  std::vector<int64_t> out = prompt;
  for (int64_t id : llama::generate(model, prompt, options)) out.push_back(id);
  return out;
}

std::vector<int64_t> as_vector(const Tensor& t) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t[i].item<int64_t>());
  return out;
}

TEST(HuggingFaceGPT2, TiedModelMatchesTransformers) {
  auto model = load_hf(golden_dir() / "gpt2_tiny");
  EXPECT_EQ(model->config().arch, llama::Arch::GPT2);
  EXPECT_TRUE(model->config().tie_embeddings);
  expect_matches_transformers(*model, "tied");
}

TEST(HuggingFaceGPT2, UntiedModelMatchesTransformers) {
  auto model = load_hf(golden_dir() / "gpt2_tiny_untied");
  EXPECT_FALSE(model->config().tie_embeddings);
  expect_matches_transformers(*model, "untied");
}

TEST(HuggingFaceGPT2, GreedyGenerationGivesTransformersTokens) {
  for (const char* prefix : {"tied", "untied"}) {
    auto model =
        load_hf(golden_dir() / (std::string(prefix) == "tied" ? "gpt2_tiny" : "gpt2_tiny_untied"));
    const Tensor& want = outputs().at(std::string(prefix) + "/greedy");
    EXPECT_EQ(greedy(*model, want), as_vector(want)) << prefix;
  }
}

// Decoding with the KV cache (as generate does) gives the logits of the
// whole sequence at once.
TEST(HuggingFaceGPT2, KVCacheDecodingMatchesTheFullForward) {
  auto model = load_hf(golden_dir() / "gpt2_tiny");
  ASSERT_TRUE(model->has_kv_cache());
  const Tensor ids = outputs().at("ids").slice(0, 0, 1);
  NoGradGuard no_grad;
  const Tensor full = model->forward(ids);
  llama::KVCache cache = model->make_cache(1);
  std::vector<Tensor> parts = {model->forward(ids.slice(1, 0, 10), cache)};
  for (int64_t t = 10; t < ids.size(1); ++t)
    parts.push_back(model->forward(ids.slice(1, t, t + 1), cache));
  EXPECT_EQ(cache.length, ids.size(1));
  EXPECT_LE(max_abs_diff(cat(parts, 1), full), 1e-5);
  EXPECT_THROW(model->make_cache(1, model->config().context + 1), ValueError);
}

TEST(HuggingFaceGPT2, ShardedCheckpointLoadsTheSameWeights) {
  auto single = load_hf(golden_dir() / "gpt2_tiny");
  auto sharded = load_hf(golden_dir() / "gpt2_tiny_sharded");
  const Tensor& ids = outputs().at("ids");
  NoGradGuard no_grad;
  EXPECT_TRUE(equal(single->forward(ids), sharded->forward(ids)));
}

// STRIDE_HF_EXPORT_DIR keeps the export, with stride's logits beside it,
// for transformers to load (tests/models/hf_live.sh).
TEST(HuggingFaceGPT2, ExportRoundTripsToTheSameLogits) {
  auto model = load_hf(golden_dir() / "gpt2_tiny_untied");
  const char* keep = std::getenv("STRIDE_HF_EXPORT_DIR");
  const fs::path dir =
      keep ? fs::path(keep)
           : fs::temp_directory_path() / ("stride_hf_export_" + std::to_string(getpid()));
  save_hf(*model, dir);
  auto back = load_hf(dir);
  const Tensor& ids = outputs().at("ids");
  NoGradGuard no_grad;
  const Tensor logits = model->forward(ids);
  EXPECT_TRUE(equal(logits, back->forward(ids)));
  // Hugging Face's layout: Conv1D weights (in, out), no lm_head when tied.
  const auto file = io::load_safetensors((dir / "model.safetensors").string());
  const std::vector<int64_t> conv1d = {model->config().d_model, model->config().hidden_dim()};
  EXPECT_TRUE(file.at("transformer.h.0.mlp.c_fc.weight").sizes() == IntArrayRef(conv1d));
  if (keep) {
    io::save_safetensors((dir / "stride_logits.safetensors").string(), {{"logits", logits}});
  } else {
    fs::remove_all(dir);
  }
}

// A copy of the tied model's directory whose config.json is `edit` applied
// to the original.
fs::path edited_copy(const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
  const fs::path dir = fs::temp_directory_path() / ("stride_hf_" + name + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::copy(golden_dir() / "gpt2_tiny_sharded", dir);
  nlohmann::json config = nlohmann::json::parse(std::ifstream(dir / "config.json"));
  edit(config);
  std::ofstream(dir / "config.json") << config.dump(2);
  return dir;
}

std::string error_of(const fs::path& dir) {
  try {
    load_hf(dir);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

TEST(HuggingFaceGPT2, ClearErrorsNameTheFileAndTheKey) {
  const fs::path bert = edited_copy("bert", [](nlohmann::json& c) {
    c["architectures"] = {"BertModel"};
    c["model_type"] = "bert";
  });
  std::string e = error_of(bert);
  EXPECT_NE(e.find("config.json: key \"architectures\""), std::string::npos) << e;
  EXPECT_NE(e.find("BertModel"), std::string::npos) << e;

  const fs::path wide = edited_copy("wide", [](nlohmann::json& c) { c["n_embd"] = 48; });
  e = error_of(wide);
  EXPECT_NE(e.find(".safetensors: tensor \""), std::string::npos) << e;
  EXPECT_NE(e.find("but config.json implies"), std::string::npos) << e;

  const fs::path missing = edited_copy("missing", [](nlohmann::json&) {});
  std::string shard;
  for (const auto& entry : fs::directory_iterator(missing)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("model-00002-of-", 0) == 0) shard = name;
  }
  ASSERT_FALSE(shard.empty());
  fs::remove(missing / shard);
  e = error_of(missing);
  EXPECT_NE(e.find(shard + ": shard named by"), std::string::npos) << e;

  const fs::path act =
      edited_copy("act", [](nlohmann::json& c) { c["activation_function"] = "relu"; });
  e = error_of(act);
  EXPECT_NE(e.find("key \"activation_function\""), std::string::npos) << e;

  const fs::path broken = edited_copy("broken", [](nlohmann::json&) {});
  std::ofstream(broken / "config.json") << "{\"n_embd\": ";
  e = error_of(broken);
  EXPECT_NE(e.find("config.json: not valid JSON"), std::string::npos) << e;

  for (const fs::path& dir : {bert, wide, missing, act, broken}) fs::remove_all(dir);
}

}  // namespace
}  // namespace stride::gpt
