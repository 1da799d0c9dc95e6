// GPT-2 and Llama against Hugging Face transformers: tools/gen_hf_goldens.py
// saves tiny random GPT2LMHeadModels and LlamaForCausalLMs (grouped-query,
// tied and untied) with save_pretrained (tests/golden/hf/) and records their
// logits, loss, attention probabilities and greedy continuations; stride
// loads the directories (models/hf/hf.h) and must agree to float32
// tolerance. STRIDE_HF_GOLDEN_DIR points the test at a fresh run of the
// script (the live check, when transformers is installed).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "hf/hf.h"
#include "llama/model.h"
#include "lm/generate.h"
#include "lm/registry.h"
#include "stride/io.h"
#include "stride/ops.h"

namespace stride::hf {
namespace {

namespace fs = std::filesystem;

fs::path golden_dir() {
  const char* env = std::getenv("STRIDE_HF_GOLDEN_DIR");
  return env ? fs::path(env) : fs::path(STRIDE_GOLDEN_DIR) / "hf";
}

// A model of the goldens: its directory, the file and prefix of its
// reference outputs, and what its config.json holds.
struct Case {
  const char* dir;
  const char* family;  // outputs in <family>_outputs.safetensors
  const char* prefix;
  std::string arch;
  bool tied;
  int64_t kv_heads;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.dir;
}

const Case kCases[] = {
    {"gpt2_tiny", "gpt2_tiny", "tied", "gpt2", true, 4},
    {"gpt2_tiny_untied", "gpt2_tiny", "untied", "gpt2", false, 4},
    {"llama_tiny_gqa", "llama_tiny", "gqa", "llama", false, 2},
    {"llama_tiny_tied", "llama_tiny", "tied", "llama", true, 1},
    // Saved by transformers 5: RoPE settings in "rope_parameters".
    {"llama5_tiny_default", "llama5_tiny", "default", "llama", false, 2},
    {"llama5_tiny_llama3", "llama5_tiny", "llama3", "llama", false, 2},
    {"llama5_tiny_linear", "llama5_tiny", "linear", "llama", true, 1},
};

const io::SafetensorsContents& outputs(const std::string& family) {
  static std::map<std::string, io::SafetensorsContents> files;
  auto it = files.find(family);
  if (it == files.end()) {
    it = files
             .emplace(family, io::load_safetensors(
                                  (golden_dir() / (family + "_outputs.safetensors")).string()))
             .first;
  }
  return it->second;
}

const Tensor& reference(const Case& c, const std::string& what) {
  return outputs(c.family).at(std::string(c.prefix) + "/" + what);
}

const Tensor& golden_ids() {
  return outputs("gpt2_tiny").at("ids");
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  return (a.to(kFloat64) - b.to(kFloat64)).abs().max().item<double>();
}

class HuggingFace : public testing::TestWithParam<Case> {};

INSTANTIATE_TEST_SUITE_P(Models, HuggingFace, testing::ValuesIn(kCases), [](const auto& model) {
  return std::string(model.param.dir);
});

// The reference's logits, loss and attention probabilities.
TEST_P(HuggingFace, MatchesTransformers) {
  const Case& c = GetParam();
  auto model = load(golden_dir() / c.dir);
  EXPECT_EQ(model->config().arch, c.arch);
  EXPECT_EQ(model->config().tie_embeddings, c.tied);
  EXPECT_EQ(model->config().kv_heads(), c.kv_heads);
  const Tensor& ids = outputs(c.family).at("ids");
  const Tensor& labels = outputs(c.family).at("labels");
  NoGradGuard no_grad;
  model->record_attention(true);
  const Tensor logits = model->forward(ids);
  model->record_attention(false);
  const double logits_diff = max_abs_diff(logits, reference(c, "logits"));
  std::cout << c.dir << ": max |logits - transformers| = " << logits_diff << "\n";
  EXPECT_LE(logits_diff, 1e-4);
  // Hugging Face's causal-LM loss: predict token t + 1 from position t.
  const int64_t T = ids.size(1);
  const Tensor shifted = logits.slice(1, 0, T - 1).reshape({-1, logits.size(-1)});
  const Tensor targets = labels.slice(1, 1, T).reshape({-1});
  const double loss = nn::functional::cross_entropy(shifted, targets).item<double>();
  EXPECT_NEAR(loss, reference(c, "loss").item<double>(), 1e-5);
  const auto& maps = model->attention_maps();
  ASSERT_EQ(maps.size(), size_t(model->config().n_layers));
  for (size_t l = 0; l < maps.size(); ++l) {
    EXPECT_LE(max_abs_diff(maps[l], reference(c, "attn." + std::to_string(l))), 1e-5)
        << "layer " << l;
  }
}

std::vector<int64_t> greedy(lm::LanguageModel& model, const Tensor& reference) {
  const Tensor ids = golden_ids();
  std::vector<int64_t> prompt;
  for (int64_t t = 0; t < 8; ++t) prompt.push_back(ids[0][t].item<int64_t>());
  lm::GenerateOptions options;
  options.sampling.temperature = 0;
  options.max_new_tokens = reference.numel() - 8;
  std::vector<int64_t> out = prompt;
  for (int64_t id : lm::generate(model, prompt, options)) out.push_back(id);
  return out;
}

std::vector<int64_t> as_vector(const Tensor& t) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t[i].item<int64_t>());
  return out;
}

// 64 greedy tokens, decoded with the KV cache, are transformers' generate's.
TEST_P(HuggingFace, GreedyGenerationGivesTransformersTokens) {
  const Case& c = GetParam();
  auto model = load(golden_dir() / c.dir);
  const Tensor& want = reference(c, "greedy");
  EXPECT_EQ(greedy(*model, want), as_vector(want));
}

// Decoding with the KV cache (as generate does) gives the logits of the
// whole sequence at once, within float32 sums taken in two orders (the
// decoding GEMV's and the full pass's GEMM): 1e-5 held on x86-64, arm64's
// NEON kernels reach 1.3e-5.
TEST_P(HuggingFace, KVCacheDecodingMatchesTheFullForward) {
  auto model = load(golden_dir() / GetParam().dir);
  ASSERT_TRUE(model->has_kv_cache());
  const Tensor ids = golden_ids().slice(0, 0, 1);
  NoGradGuard no_grad;
  const Tensor full = model->forward(ids);
  lm::KVCache cache = model->make_cache(1);
  std::vector<Tensor> parts = {model->forward(ids.slice(1, 0, 10), cache)};
  for (int64_t t = 10; t < ids.size(1); ++t)
    parts.push_back(model->forward(ids.slice(1, t, t + 1), cache));
  EXPECT_EQ(cache.length, ids.size(1));
  EXPECT_LE(max_abs_diff(cat(parts, 1), full), 2e-5);
  // Learned positions end at the context; RoPE has no table to run out of.
  if (GetParam().arch == "gpt2") {
    EXPECT_THROW(model->make_cache(1, model->config().context + 1), ValueError);
  }
}

// A prefill's head runs on the last position alone, to the same logits and
// the same cache (the sums' order differs as above).
TEST_P(HuggingFace, LastLogitsAreTheFullForwardsLastRow) {
  auto model = load(golden_dir() / GetParam().dir);
  const Tensor ids = golden_ids();
  NoGradGuard no_grad;
  lm::KVCache full_cache = model->make_cache(ids.size(0)), cache = model->make_cache(ids.size(0));
  const Tensor full = model->forward(ids, full_cache);
  const Tensor last = model->last_logits(ids, cache);
  ASSERT_EQ(last.dim(), 2);
  EXPECT_EQ(last.size(0), ids.size(0));
  EXPECT_EQ(last.size(1), model->config().vocab_size);
  EXPECT_LE(max_abs_diff(last, full.select(1, -1)), 2e-5);
  EXPECT_EQ(cache.length, ids.size(1));
  EXPECT_TRUE(equal(cache.k.back(), full_cache.k.back()));
}

TEST(HuggingFaceCheckpoint, ShardedCheckpointLoadsTheSameWeights) {
  auto single = load(golden_dir() / "gpt2_tiny");
  auto sharded = load(golden_dir() / "gpt2_tiny_sharded");
  const Tensor& ids = golden_ids();
  NoGradGuard no_grad;
  EXPECT_TRUE(equal(single->forward(ids), sharded->forward(ids)));
}

// Where an export goes: under STRIDE_HF_EXPORT_DIR, which keeps it with
// stride's logits beside it for transformers to load
// (tests/models/hf_live.sh), else a temporary directory.
fs::path export_dir(const std::string& name) {
  const char* keep = std::getenv("STRIDE_HF_EXPORT_DIR");
  return keep ? fs::path(keep) / name
              : fs::temp_directory_path() / ("stride_hf_export_" + name + std::to_string(getpid()));
}

// Saves `model`, loads it back and expects the logits within `tolerance`.
void expect_export_round_trips(lm::LanguageModel& model, const fs::path& dir, double tolerance) {
  save(model, dir);
  auto back = load(dir);
  const Tensor& ids = golden_ids();
  NoGradGuard no_grad;
  const Tensor logits = model.forward(ids);
  EXPECT_LE(max_abs_diff(logits, back->forward(ids)), tolerance);
  if (std::getenv("STRIDE_HF_EXPORT_DIR")) {
    io::save_safetensors((dir / "stride_logits.safetensors").string(), {{"logits", logits}});
  } else {
    fs::remove_all(dir);
  }
}

TEST_P(HuggingFace, ExportRoundTripsToTheSameLogits) {
  const Case& c = GetParam();
  auto model = load(golden_dir() / c.dir);
  const fs::path dir = export_dir(c.dir);
  expect_export_round_trips(*model, dir, 0.0);
}

// Hugging Face's layout: Conv1D weights (in, out), no lm_head when tied.
TEST(HuggingFaceCheckpoint, GPT2ExportStoresConv1DWeightsTransposed) {
  auto model = load(golden_dir() / "gpt2_tiny");
  const fs::path dir = export_dir("conv1d");
  save(*model, dir);
  const auto file = io::load_safetensors((dir / "model.safetensors").string());
  const std::vector<int64_t> conv1d = {model->config().d_model, model->config().hidden_dim()};
  EXPECT_TRUE(file.at("transformer.h.0.mlp.c_fc.weight").sizes() == IntArrayRef(conv1d));
  EXPECT_THROW(file.at("lm_head.weight"), IOError);
  fs::remove_all(dir);
}

// A Llama trained here rotates Meta's interleaved pairs; its export permutes
// the q and k rows so that Hugging Face's rotate_half computes the same
// function (and hf_live.sh checks transformers on it).
TEST(HuggingFaceCheckpoint, InterleavedLlamaExportsToTheSameFunction) {
  lm::ModelConfig config;
  config.vocab_size = 1000;
  config.d_model = 32;
  config.n_layers = 2;
  config.n_heads = 4;
  config.n_kv_heads = 2;
  config.context = 32;
  manual_seed(11);
  auto model = lm::build_model(config);
  model->eval();
  ASSERT_EQ(model->config().rope_style, "interleaved");
  expect_export_round_trips(*model, export_dir("llama_interleaved"), 1e-5);
}

// A copy of the tied model's directory whose config.json is `edit` applied
// to the original.
fs::path edited_copy(const std::string& name,
                     const std::function<void(nlohmann::json&)>& edit,
                     const char* source = "gpt2_tiny_sharded") {
  const fs::path dir = fs::temp_directory_path() / ("stride_hf_" + name + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::copy(golden_dir() / source, dir);
  nlohmann::json config = nlohmann::json::parse(std::ifstream(dir / "config.json"));
  edit(config);
  std::ofstream(dir / "config.json") << config.dump(2);
  return dir;
}

std::string error_of(const fs::path& dir) {
  try {
    load(dir);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

TEST(HuggingFaceCheckpoint, ClearErrorsNameTheFileAndTheKey) {
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

TEST(HuggingFaceCheckpoint, LlamaSettingsStrideDoesNotComputeAreRefused) {
  const std::pair<const char*, std::function<void(nlohmann::json&)>> edits[] = {
      {"rope_scaling",
       [](nlohmann::json& c) {
         c["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 8.0}};
       }},
      {"yarn",
       [](nlohmann::json& c) {
         c["rope_parameters"] = {{"rope_type", "yarn"}, {"factor", 8.0}};
       }},
      {"low_freq_factor",
       [](nlohmann::json& c) {
         c["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}};
       }},
      {"partial_rotary_factor", [](nlohmann::json& c) { c["partial_rotary_factor"] = 0.5; }},
      {"sliding_window", [](nlohmann::json& c) { c["sliding_window"] = 4096; }},
      {"quantization_config",
       [](nlohmann::json& c) {
         c["quantization_config"] = {{"quant_method", "gptq"}};
       }},
      {"layer_types",
       [](nlohmann::json& c) {
         c["layer_types"] = {"full_attention", "sliding_attention"};
       }},
      {"attention_bias", [](nlohmann::json& c) { c["attention_bias"] = true; }},
      {"hidden_act", [](nlohmann::json& c) { c["hidden_act"] = "gelu"; }},
      {"head_dim", [](nlohmann::json& c) { c["head_dim"] = 16; }},
      {"num_key_value_heads", [](nlohmann::json& c) { c["num_key_value_heads"] = 3; }},
  };
  for (const auto& [key, edit] : edits) {
    const fs::path dir = edited_copy(key, edit, "llama_tiny_gqa");
    const std::string e = error_of(dir);
    EXPECT_NE(e.find("config.json"), std::string::npos) << e;
    EXPECT_NE(e.find(key), std::string::npos) << e;
    fs::remove_all(dir);
  }
  // A shard whose k projection is sized for another number of key/value heads.
  const fs::path mha = edited_copy(
      "mha", [](nlohmann::json& c) { c["num_key_value_heads"] = 4; }, "llama_tiny_gqa");
  const std::string e = error_of(mha);
  EXPECT_NE(e.find("model.safetensors: tensor \"model.layers.0.self_attn.k_proj.weight\" has "
                   "shape (16, 32) but config.json implies (32, 32)"),
            std::string::npos)
      << e;
  fs::remove_all(mha);
}

// Keys that change nothing stride computes load as before: unknown ones,
// and arithmetic ones at their neutral value.
TEST(HuggingFaceCheckpoint, KeysThatChangeNoArithmeticAreIgnored) {
  const fs::path dir = edited_copy(
      "neutral",
      [](nlohmann::json& c) {
        c["a_note_of_our_own"] = "kept";
        c["sliding_window"] = nullptr;
        c["use_sliding_window"] = false;
        c["pretraining_tp"] = 1;
        c["partial_rotary_factor"] = 1.0;
        c["layer_types"] = {"full_attention", "full_attention"};
        c["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 10000.0}};
      },
      "llama_tiny_gqa");
  auto model = load(dir);
  auto reference = load(golden_dir() / "llama_tiny_gqa");
  NoGradGuard no_grad;
  EXPECT_TRUE(equal(model->forward(golden_ids()), reference->forward(golden_ids())));
  fs::remove_all(dir);
}

// transformers 5 writes rope_theta inside "rope_parameters", 4.x at the top
// level with an optional "rope_scaling": both read the same.
TEST(HuggingFaceCheckpoint, RopeSettingsReadInBothForms) {
  EXPECT_EQ(read_config(golden_dir() / "llama_tiny_tied").rope_theta, 500000.0);
  EXPECT_EQ(read_config(golden_dir() / "llama5_tiny_default").rope_theta, 500000.0);
  const lm::ModelConfig l3 = read_config(golden_dir() / "llama5_tiny_llama3");
  EXPECT_EQ(l3.rope_type, "llama3");
  EXPECT_EQ(l3.rope_factor, 8.0);
  EXPECT_EQ(l3.rope_low_freq_factor, 1.0);
  EXPECT_EQ(l3.rope_high_freq_factor, 4.0);
  EXPECT_EQ(l3.rope_original_context, 512);

  // The same model in the 4.x form, with the older "type" key.
  const fs::path v4 = edited_copy(
      "llama3_v4",
      [](nlohmann::json& c) {
        nlohmann::json rope = c["rope_parameters"];
        c["rope_theta"] = rope["rope_theta"];
        rope.erase("rope_theta");
        rope.erase("rope_type");
        rope["type"] = "llama3";
        c["rope_scaling"] = rope;
        c.erase("rope_parameters");
      },
      "llama5_tiny_llama3");
  auto model = load(v4);
  auto reference = load(golden_dir() / "llama5_tiny_llama3");
  NoGradGuard no_grad;
  EXPECT_TRUE(equal(model->forward(golden_ids()), reference->forward(golden_ids())));
  fs::remove_all(v4);
}

// The goldens tell the rope types apart: the same weights with the scaling
// left out give other logits, so a reader that ignored it would fail.
TEST(HuggingFaceCheckpoint, ScaledRopeGoldensDependOnTheScaling) {
  for (const char* source : {"llama5_tiny_llama3", "llama5_tiny_linear"}) {
    const fs::path plain = edited_copy(
        "plain", [](nlohmann::json& c) { c["rope_parameters"]["rope_type"] = "default"; }, source);
    auto model = load(plain);
    NoGradGuard no_grad;
    const double diff =
        max_abs_diff(model->forward(golden_ids()),
                     outputs("llama5_tiny").at(std::string(source).substr(12) + "/logits"));
    EXPECT_GT(diff, 1e-2) << source;
    fs::remove_all(plain);
  }
}

// Export writes RoPE as transformers 5 does, a "rope_parameters" object,
// and beside it transformers 4.x's top-level rope_theta and rope_scaling,
// which 4.x reads in its place (hf_live.sh loads the exports with either).
// Each form alone loads back to the same model.
TEST(HuggingFaceCheckpoint, ExportWritesTransformers5RopeParametersAnd4xKeys) {
  auto model = load(golden_dir() / "llama5_tiny_llama3");
  const fs::path dir = export_dir("rope_parameters");
  save(*model, dir);
  const nlohmann::json c = nlohmann::json::parse(std::ifstream(dir / "config.json"));
  EXPECT_EQ(c["rope_parameters"], nlohmann::json({{"rope_type", "llama3"},
                                                  {"rope_theta", 500000.0},
                                                  {"factor", 8.0},
                                                  {"low_freq_factor", 1.0},
                                                  {"high_freq_factor", 4.0},
                                                  {"original_max_position_embeddings", 512}}));
  EXPECT_EQ(c["rope_theta"], 500000.0);
  EXPECT_EQ(c["rope_scaling"], nlohmann::json({{"rope_type", "llama3"},
                                               {"factor", 8.0},
                                               {"low_freq_factor", 1.0},
                                               {"high_freq_factor", 4.0},
                                               {"original_max_position_embeddings", 512}}));
  NoGradGuard no_grad;
  const Tensor want = model->forward(golden_ids());
  for (const std::string form : {"rope_parameters", "4.x"}) {
    nlohmann::json only = c;
    if (form == "4.x") {
      only.erase("rope_parameters");
    } else {
      only.erase("rope_theta");
      only.erase("rope_scaling");
    }
    std::ofstream(dir / "config.json") << only.dump(2);
    EXPECT_TRUE(equal(load(dir)->forward(golden_ids()), want)) << form;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace stride::hf
