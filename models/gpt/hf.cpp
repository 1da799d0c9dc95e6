#include "gpt/hf.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "stride/io.h"
#include "stride/ops.h"

namespace stride::gpt {

namespace fs = std::filesystem;
using json = nlohmann::json;
using llama::ConfigError;

namespace {

json read_json(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw IOError(file.string() + ": cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  try {
    return json::parse(text.str());
  } catch (const json::parse_error& e) {
    throw ConfigError(file.string() + ": not valid JSON: " + e.what());
  }
}

// config[key] as T, or `fallback` when absent (or null) and a fallback is given.
template <class T>
T get(const json& config, const fs::path& file, const char* key, std::optional<T> fallback = {}) {
  if (!config.contains(key) || config[key].is_null()) {
    if (fallback) return *fallback;
    throw ConfigError(file.string() + ": missing key \"" + key + "\"");
  }
  try {
    return config[key].get<T>();
  } catch (const json::exception&) {
    throw ConfigError(file.string() + ": key \"" + key + "\" has the wrong type (" +
                      config[key].dump() + ")");
  }
}

void require(bool ok, const fs::path& file, const std::string& key, const std::string& why) {
  if (!ok) throw ConfigError(file.string() + ": key \"" + key + "\": " + why);
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Hugging Face's Conv1D projections of a GPT-2 block, stored (in, out).
bool is_conv1d_weight(const std::string& name) {
  for (const char* suffix :
       {".attn.c_attn.weight", ".attn.c_proj.weight", ".mlp.c_fc.weight", ".mlp.c_proj.weight"}) {
    if (ends_with(name, suffix)) return true;
  }
  return false;
}

// The weight files of a directory: the shards its index names, or
// model.safetensors.
std::vector<fs::path> weight_files(const fs::path& dir) {
  const fs::path index = dir / "model.safetensors.index.json";
  if (fs::exists(index)) {
    const json map = read_json(index);
    if (!map.contains("weight_map") || !map["weight_map"].is_object()) {
      throw ConfigError(index.string() + ": missing key \"weight_map\"");
    }
    std::set<std::string> shards;
    for (const auto& item : map["weight_map"].items())
      shards.insert(item.value().get<std::string>());
    std::vector<fs::path> files;
    for (const std::string& shard : shards) {
      if (!fs::exists(dir / shard)) {
        throw IOError((dir / shard).string() + ": shard named by " + index.string() +
                      " is missing");
      }
      files.push_back(dir / shard);
    }
    return files;
  }
  if (fs::exists(dir / "model.safetensors")) return {dir / "model.safetensors"};
  throw IOError(dir.string() + ": no model.safetensors or model.safetensors.index.json" +
                (fs::exists(dir / "pytorch_model.bin")
                     ? std::string(" (pytorch_model.bin is a pickle, which stride does not "
                                   "read: save with safe_serialization=True)")
                     : std::string()));
}

}  // namespace

llama::ModelConfig read_hf_config(const fs::path& dir) {
  const fs::path file = dir / "config.json";
  const json c = read_json(file);
  const auto architectures =
      get<std::vector<std::string>>(c, file, "architectures", std::vector<std::string>{});
  const std::string model_type = get<std::string>(c, file, "model_type", std::string());
  const bool gpt2 = model_type == "gpt2" ||
                    (!architectures.empty() && architectures.front() == "GPT2LMHeadModel");
  if (!gpt2) {
    throw ConfigError(file.string() + ": key \"architectures\": " +
                      (architectures.empty() ? "model_type \"" + model_type + "\""
                                             : "\"" + architectures.front() + "\"") +
                      " is not an architecture stride implements (GPT2LMHeadModel)");
  }
  llama::ModelConfig m;
  m.arch = llama::Arch::GPT2;
  m.vocab_size = get<int64_t>(c, file, "vocab_size");
  m.d_model = get<int64_t>(c, file, "n_embd");
  m.n_layers = get<int64_t>(c, file, "n_layer");
  m.n_heads = get<int64_t>(c, file, "n_head");
  m.context = get<int64_t>(c, file, "n_positions");
  m.norm_eps = get<double>(c, file, "layer_norm_epsilon", 1e-5);
  m.tie_embeddings = get<bool>(c, file, "tie_word_embeddings", true);
  m.ffn_hidden = get<int64_t>(c, file, "n_inner", 4 * m.d_model);
  m.dropout = get<double>(c, file, "resid_pdrop", 0.1);
  const std::string act = get<std::string>(c, file, "activation_function", std::string("gelu_new"));
  require(act == "gelu_new", file, "activation_function",
          "\"" + act + "\"; stride's GPT-2 computes gelu_new (the tanh approximation)");
  require(get<bool>(c, file, "scale_attn_weights", true), file, "scale_attn_weights",
          "false; stride scales attention scores by 1/sqrt(head_dim)");
  require(!get<bool>(c, file, "scale_attn_by_inverse_layer_idx", false), file,
          "scale_attn_by_inverse_layer_idx", "true is not implemented");
  try {
    m.validate();
  } catch (const ConfigError& e) {
    throw ConfigError(file.string() + ": " + e.what());
  }
  return m;
}

std::shared_ptr<llama::LanguageModel> load_hf(const fs::path& dir) {
  const llama::ModelConfig config = read_hf_config(dir);
  auto model = llama::build_model(config);
  const nn::StateDict expected = model->state_dict();
  nn::StateDict weights;
  std::map<std::string, std::string> source;  // stride name -> file
  for (const fs::path& file : weight_files(dir)) {
    for (auto& [hf_name, t] : io::load_safetensors(file.string()).tensors) {
      if (ends_with(hf_name, ".attn.bias") || ends_with(hf_name, ".attn.masked_bias")) continue;
      const std::string name =
          hf_name.rfind("lm_head.", 0) == 0 || hf_name.rfind("transformer.", 0) == 0
              ? hf_name
              : "transformer." + hf_name;
      if (!expected.contains(name)) {
        throw ValueError(file.string() + ": tensor \"" + hf_name +
                         "\" is not a parameter of GPT2LMHeadModel as config.json describes it");
      }
      Tensor value = is_conv1d_weight(name) && t.dim() == 2 ? t.t().contiguous() : t;
      const Tensor& want = expected[name];
      if (!(value.sizes() == want.sizes())) {
        throw ValueError(file.string() + ": tensor \"" + hf_name + "\" has shape " +
                         shape_str(t.sizes()) + " but config.json implies " +
                         shape_str(is_conv1d_weight(name) ? want.t().sizes() : want.sizes()));
      }
      source[name] = file.string();
      weights.insert(name, value.to(want.dtype()));
    }
  }
  if (config.tie_embeddings && !weights.contains("lm_head.weight") &&
      weights.contains("transformer.wte.weight")) {
    weights.insert("lm_head.weight", weights["transformer.wte.weight"]);
  }
  std::string missing;
  for (const auto& [name, t] : expected) {
    if (!weights.contains(name)) missing += (missing.empty() ? "" : ", ") + name;
  }
  if (!missing.empty()) {
    throw ValueError(dir.string() + ": the weights lack " + missing +
                     " (config.json implies them)");
  }
  model->load_state_dict(weights, /*strict=*/true);
  model->eval();
  return model;
}

void save_hf(const llama::LanguageModel& model, const fs::path& dir) {
  const llama::ModelConfig& m = model.config();
  if (m.arch != llama::Arch::GPT2) {
    throw ValueError("save_hf: only GPT-2 models export to Hugging Face's layout; this is " +
                     std::string(llama::arch_name(m.arch)));
  }
  fs::create_directories(dir);
  const json config = {{"architectures", {"GPT2LMHeadModel"}},
                       {"model_type", "gpt2"},
                       {"vocab_size", m.vocab_size},
                       {"n_embd", m.d_model},
                       {"n_layer", m.n_layers},
                       {"n_head", m.n_heads},
                       {"n_positions", m.context},
                       {"n_inner", m.hidden_dim()},
                       {"layer_norm_epsilon", m.norm_eps},
                       {"activation_function", "gelu_new"},
                       {"resid_pdrop", m.dropout},
                       {"embd_pdrop", m.dropout},
                       {"attn_pdrop", m.dropout},
                       {"tie_word_embeddings", m.tie_embeddings},
                       {"scale_attn_weights", true},
                       {"torch_dtype", "float32"}};
  io::write_file_atomically((dir / "config.json").string(), config.dump(2) + "\n", "save_hf");
  io::NamedTensors tensors;
  for (const auto& [name, t] : model.state_dict()) {
    if (name == "lm_head.weight" && m.tie_embeddings) continue;  // the embedding, as HF saves it
    tensors.emplace_back(name, is_conv1d_weight(name) ? t.t().contiguous() : t);
  }
  io::save_safetensors((dir / "model.safetensors").string(), tensors, {{"format", "pt"}});
}

}  // namespace stride::gpt
