#include "hf/hf.h"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "lm/registry.h"
#include "lm/weights.h"
#include "stride/autograd.h"
#include "stride/data/text.h"
#include "stride/io.h"
#include "stride/ops.h"

namespace stride::hf {

namespace fs = std::filesystem;
using json = nlohmann::json;
using lm::ConfigError;
using lm::ModelConfig;

namespace {

json read_json(const fs::path& file) {
  try {
    return json::parse(data::read_text_file(file));
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

bool present(const json& config, const char* key) {
  return config.contains(key) && !config[key].is_null();
}

// A config.json key of another architecture (or a newer transformers) that
// changes what the model computes, with the value at which it changes
// nothing. stride refuses such a key at any other value rather than compute
// a different function silently; keys outside these lists and the ones each
// layout reads (token ids, initialisation, caching flags) are ignored, as
// they change no arithmetic.
struct ArithmeticKey {
  const char* key;
  json neutral;  // null: only absence (or null) is neutral
};

void refuse_unimplemented(const json& c,
                          const fs::path& file,
                          std::initializer_list<ArithmeticKey> keys,
                          const char* model) {
  for (const ArithmeticKey& k : keys) {
    if (!present(c, k.key) || c[k.key] == k.neutral) continue;
    // 1 and 1.0 are the same setting.
    if (c[k.key].is_number() && k.neutral.is_number() &&
        c[k.key].get<double>() == k.neutral.get<double>()) {
      continue;
    }
    throw ConfigError(file.string() + ": key \"" + k.key + "\" (" + c[k.key].dump() +
                      ") changes the arithmetic and " + model + " does not implement it");
  }
}

// Every layer of `layer_types` is full attention (the one kind stride has).
bool all_full_attention(const json& c) {
  if (!present(c, "layer_types")) return true;
  if (!c["layer_types"].is_array()) return false;
  return std::all_of(c["layer_types"].begin(), c["layer_types"].end(),
                     [](const json& t) { return t == "full_attention"; });
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

// config.validate()'s complaint, named after the file it came from.
ModelConfig validated(ModelConfig m, const fs::path& file) {
  try {
    m.validate();
  } catch (const ConfigError& e) {
    throw ConfigError(file.string() + ": " + e.what());
  }
  return m;
}

// How one architecture's checkpoints map onto stride's model: the config's
// keys, the tensors' names, and how a tensor is stored.
class Layout {
 public:
  virtual ~Layout() = default;
  virtual const char* architecture() const = 0;  // "LlamaForCausalLM"
  virtual const char* model_type() const = 0;    // "llama"
  // Whether a config.json's "architectures" names a model this layout
  // loads (by default, architecture() alone).
  virtual bool reads(const std::string& architecture_name) const {
    return architecture_name == architecture();
  }
  virtual ModelConfig read_config(const json& c, const fs::path& file) const = 0;
  virtual json write_config(const ModelConfig& m) const = 0;
  // stride's name of a checkpoint tensor; nullopt for one to skip (buffers
  // that old checkpoints carry). An unknown name comes back as it is, and is
  // then reported as not a parameter of the model.
  virtual std::optional<std::string> to_stride(const std::string& hf_name) const = 0;
  virtual std::string to_hf(const std::string& name) const = 0;
  // stride's tensor `name` as the checkpoint stores it, and back (views
  // where possible).
  virtual Tensor to_hf_value(const std::string& /*name*/,
                             const Tensor& value,
                             const ModelConfig& /*m*/) const {
    return value;
  }
  virtual Tensor from_hf_value(const std::string& /*name*/,
                               const Tensor& value,
                               const ModelConfig& /*m*/) const {
    return value;
  }
  // stride's names of the embedding and of the output projection it may be
  // tied to.
  virtual const char* embedding() const = 0;
  virtual const char* output() const = 0;
};

// ---- LlamaForCausalLM ----

// The RoPE settings of a Llama config.json, in each form transformers
// writes: 5.x's "rope_parameters" object (rope_theta inside it), and 4.x's
// top-level "rope_theta" with an optional "rope_scaling" object (whose type
// is "rope_type", or "type" in older files). As in transformers 5, a
// non-empty rope_scaling wins over rope_parameters, and the object's
// rope_theta over the top-level one. A rope_type stride does not implement
// is refused by name; keys the type does not read are ignored, as
// transformers ignores them, but for partial_rotary_factor, which every type
// reads.
void read_rope(const json& c, const fs::path& file, ModelConfig& m) {
  const bool scaling =
      present(c, "rope_scaling") && !(c["rope_scaling"].is_object() && c["rope_scaling"].empty());
  const char* key = scaling ? "rope_scaling" : "rope_parameters";
  const json rope = present(c, key) ? c[key] : json::object();
  require(rope.is_object(), file, key, "must be an object; got " + rope.dump());
  const std::string field = std::string(key) + ".";
  const auto param = [&](const char* name, auto fallback) {
    using T = decltype(fallback);
    if (!present(rope, name)) return fallback;
    try {
      return rope[name].get<T>();
    } catch (const json::exception&) {
      throw ConfigError(file.string() + ": key \"" + field + name + "\" has the wrong type (" +
                        rope[name].dump() + ")");
    }
  };
  m.rope_theta = param("rope_theta", get<double>(c, file, "rope_theta", 10000.0));
  m.rope_type = param("rope_type", param("type", std::string("default")));
  require(
      m.rope_type == "default" || m.rope_type == "linear" || m.rope_type == "llama3", file,
      field + "rope_type",
      "\"" + m.rope_type + "\" is not implemented (stride implements default, linear and llama3)");
  const double partial =
      param("partial_rotary_factor", get<double>(c, file, "partial_rotary_factor", 1.0));
  require(partial == 1.0, file, field + "partial_rotary_factor",
          std::to_string(partial) + "; stride's Llama rotates every feature of a head");
  if (m.rope_type == "default") return;
  require(present(rope, "factor"), file, field + "factor",
          "missing, and rope_type " + m.rope_type + " needs it");
  m.rope_factor = param("factor", 1.0);
  if (m.rope_type != "llama3") return;
  for (const char* needed : {"low_freq_factor", "high_freq_factor"}) {
    require(present(rope, needed), file, field + needed, "missing, and rope_type llama3 needs it");
  }
  m.rope_low_freq_factor = param("low_freq_factor", 1.0);
  m.rope_high_freq_factor = param("high_freq_factor", 4.0);
  // As transformers 5: a top-level original_max_position_embeddings first,
  // then the object's, then the context.
  m.rope_original_context = get<int64_t>(c, file, "original_max_position_embeddings",
                                         param("original_max_position_embeddings", m.context));
}

// transformers 4.x's rope_scaling for `m`: null without scaling, else the
// scaling's parameters (rope_theta stays at the top level).
json legacy_rope_scaling(const ModelConfig& m) {
  if (m.rope_type == "default") return nullptr;
  json scaling = {{"rope_type", m.rope_type}, {"factor", m.rope_factor}};
  if (m.rope_type != "llama3") return scaling;
  scaling["low_freq_factor"] = m.rope_low_freq_factor;
  scaling["high_freq_factor"] = m.rope_high_freq_factor;
  scaling["original_max_position_embeddings"] = m.rope_original_context;
  return scaling;
}

// The rope_parameters object transformers 5 writes for `m`.
json rope_parameters(const ModelConfig& m) {
  json rope = {{"rope_theta", m.rope_theta}, {"rope_type", m.rope_type}};
  if (m.rope_type == "default") return rope;
  rope["factor"] = m.rope_factor;
  if (m.rope_type != "llama3") return rope;
  rope["low_freq_factor"] = m.rope_low_freq_factor;
  rope["high_freq_factor"] = m.rope_high_freq_factor;
  rope["original_max_position_embeddings"] = m.rope_original_context;
  return rope;
}

class LlamaLayout final : public Layout {
 public:
  const char* architecture() const override { return "LlamaForCausalLM"; }
  const char* model_type() const override { return "llama"; }
  const char* embedding() const override { return "tok_embeddings.weight"; }
  const char* output() const override { return "output.weight"; }

  ModelConfig read_config(const json& c, const fs::path& file) const override {
    ModelConfig m;
    m.arch = "llama";
    m.vocab_size = get<int64_t>(c, file, "vocab_size");
    m.d_model = get<int64_t>(c, file, "hidden_size");
    m.ffn_hidden = get<int64_t>(c, file, "intermediate_size");
    m.n_layers = get<int64_t>(c, file, "num_hidden_layers");
    m.n_heads = get<int64_t>(c, file, "num_attention_heads");
    m.n_kv_heads = get<int64_t>(c, file, "num_key_value_heads", m.n_heads);
    m.context = get<int64_t>(c, file, "max_position_embeddings");
    m.norm_eps = get<double>(c, file, "rms_norm_eps", 1e-6);
    read_rope(c, file, m);
    m.rope_style = "half";  // rotate_half
    m.tie_embeddings = get<bool>(c, file, "tie_word_embeddings", false);
    m.dropout = 0.0;
    const std::string act = get<std::string>(c, file, "hidden_act", std::string("silu"));
    require(act == "silu", file, "hidden_act",
            "\"" + act + "\"; stride's Llama computes SwiGLU with silu");
    require(!get<bool>(c, file, "attention_bias", false), file, "attention_bias",
            "true; stride's Llama projections have no bias");
    require(!get<bool>(c, file, "mlp_bias", false), file, "mlp_bias",
            "true; stride's Llama projections have no bias");
    require(get<double>(c, file, "attention_dropout", 0.0) == 0.0, file, "attention_dropout",
            "stride's Llama has no attention dropout");
    refuse_unimplemented(c, file,
                         {{"sliding_window", nullptr},
                          {"use_sliding_window", false},
                          {"attn_logit_softcapping", nullptr},
                          {"final_logit_softcapping", nullptr},
                          {"query_pre_attn_scalar", nullptr},
                          {"clip_qkv", nullptr},
                          {"qk_norm", false},
                          {"use_qk_norm", false},
                          {"no_rope_layers", nullptr},
                          {"embedding_multiplier", 1.0},
                          {"residual_multiplier", 1.0},
                          {"attention_multiplier", nullptr},
                          {"logits_scaling", 1.0},
                          {"logit_scale", 1.0},
                          {"num_local_experts", nullptr},
                          {"num_experts", nullptr},
                          {"quantization_config", nullptr}},
                         "stride's Llama");
    require(all_full_attention(c), file, "layer_types",
            c.value("layer_types", json()).dump() +
                "; stride's Llama has full attention in every layer");
    if (m.n_heads > 0 && c.contains("head_dim") && !c["head_dim"].is_null()) {
      require(get<int64_t>(c, file, "head_dim") == m.d_model / m.n_heads, file, "head_dim",
              "stride's Llama has head_dim = hidden_size / num_attention_heads");
    }
    return validated(m, file);
  }

  json write_config(const ModelConfig& m) const override {
    return {{"architectures", {architecture()}},
            {"model_type", model_type()},
            {"vocab_size", m.vocab_size},
            {"hidden_size", m.d_model},
            {"intermediate_size", m.hidden_dim()},
            {"num_hidden_layers", m.n_layers},
            {"num_attention_heads", m.n_heads},
            {"num_key_value_heads", m.kv_heads()},
            {"head_dim", m.head_dim()},
            {"max_position_embeddings", m.context},
            {"rms_norm_eps", m.norm_eps},
            // transformers 5's form, and beside it 4.x's, which 4.x would
            // otherwise miss without a word (falling back to rope_theta
            // 10000); 5.x reads the two alike.
            {"rope_parameters", rope_parameters(m)},
            {"rope_theta", m.rope_theta},
            {"rope_scaling", legacy_rope_scaling(m)},
            {"tie_word_embeddings", m.tie_embeddings},
            {"hidden_act", "silu"},
            {"attention_bias", false},
            {"mlp_bias", false},
            {"attention_dropout", 0.0},
            {"torch_dtype", "float32"}};
  }

  std::optional<std::string> to_stride(const std::string& hf_name) const override {
    for (const auto& [hf, name] : kGlobal) {
      if (hf_name == hf) return std::string(name);
    }
    const std::string prefix = "model.layers.";
    if (!hf_name.starts_with(prefix)) return hf_name;
    const size_t dot = hf_name.find('.', prefix.size());
    if (dot == std::string::npos) return hf_name;
    const std::string layer = hf_name.substr(prefix.size(), dot - prefix.size());
    const std::string_view suffix = std::string_view(hf_name).substr(dot + 1);
    if (suffix == "self_attn.rotary_emb.inv_freq") return std::nullopt;  // a buffer
    for (const auto& [hf, name] : kPerLayer) {
      if (suffix == hf) return "layers." + layer + "." + name;
    }
    return hf_name;
  }

  std::string to_hf(const std::string& name) const override {
    for (const auto& [hf, stride_name] : kGlobal) {
      if (name == stride_name) return hf;
    }
    const std::string prefix = "layers.";
    const size_t dot = name.find('.', prefix.size());
    if (name.starts_with(prefix) && dot != std::string::npos) {
      const std::string_view suffix = std::string_view(name).substr(dot + 1);
      for (const auto& [hf, stride_name] : kPerLayer) {
        if (suffix == stride_name) {
          return "model." + name.substr(0, dot) + "." + std::string(hf);
        }
      }
    }
    throw ValueError("[hf::save] stride's Llama tensor \"" + name + "\" has no Hugging Face name");
  }

  // A model trained with Meta's interleaved RoPE pairs exports its q and k
  // rows reordered so that rotate_half pairs the same features: within a
  // head, interleaved row 2i + j becomes half-split row j * head_dim/2 + i.
  Tensor to_hf_value(const std::string& name,
                     const Tensor& value,
                     const ModelConfig& m) const override {
    if (m.rope_style != "interleaved") return value;
    const bool q = name.ends_with(".attention.wq.weight");
    if (!q && !name.ends_with(".attention.wk.weight")) return value;
    const int64_t heads = q ? m.n_heads : m.kv_heads(), dh = m.head_dim(), d = value.size(1);
    return value.view({heads, dh / 2, 2, d}).transpose(1, 2).reshape({heads * dh, d});
  }

 private:
  static constexpr std::array<std::pair<const char*, const char*>, 3> kGlobal = {{
      {"model.embed_tokens.weight", "tok_embeddings.weight"},
      {"model.norm.weight", "norm.weight"},
      {"lm_head.weight", "output.weight"},
  }};
  static constexpr std::array<std::pair<const char*, const char*>, 9> kPerLayer = {{
      {"self_attn.q_proj.weight", "attention.wq.weight"},
      {"self_attn.k_proj.weight", "attention.wk.weight"},
      {"self_attn.v_proj.weight", "attention.wv.weight"},
      {"self_attn.o_proj.weight", "attention.wo.weight"},
      {"mlp.gate_proj.weight", "feed_forward.w1.weight"},
      {"mlp.up_proj.weight", "feed_forward.w3.weight"},
      {"mlp.down_proj.weight", "feed_forward.w2.weight"},
      {"input_layernorm.weight", "attention_norm.weight"},
      {"post_attention_layernorm.weight", "ffn_norm.weight"},
  }};
};

// ---- GPT2LMHeadModel ----

class GPT2Layout final : public Layout {
 public:
  const char* architecture() const override { return "GPT2LMHeadModel"; }
  const char* model_type() const override { return "gpt2"; }
  const char* embedding() const override { return "transformer.wte.weight"; }
  const char* output() const override { return "lm_head.weight"; }

  ModelConfig read_config(const json& c, const fs::path& file) const override {
    ModelConfig m;
    m.arch = "gpt2";
    m.vocab_size = get<int64_t>(c, file, "vocab_size");
    m.d_model = get<int64_t>(c, file, "n_embd");
    m.n_layers = get<int64_t>(c, file, "n_layer");
    m.n_heads = get<int64_t>(c, file, "n_head");
    m.context = get<int64_t>(c, file, "n_positions");
    m.norm_eps = get<double>(c, file, "layer_norm_epsilon", 1e-5);
    m.tie_embeddings = get<bool>(c, file, "tie_word_embeddings", true);
    m.ffn_hidden = get<int64_t>(c, file, "n_inner", 4 * m.d_model);
    m.dropout = get<double>(c, file, "resid_pdrop", 0.1);
    const std::string act =
        get<std::string>(c, file, "activation_function", std::string("gelu_new"));
    require(act == "gelu_new", file, "activation_function",
            "\"" + act + "\"; stride's GPT-2 computes gelu_new (the tanh approximation)");
    require(get<bool>(c, file, "scale_attn_weights", true), file, "scale_attn_weights",
            "false; stride scales attention scores by 1/sqrt(head_dim)");
    require(!get<bool>(c, file, "scale_attn_by_inverse_layer_idx", false), file,
            "scale_attn_by_inverse_layer_idx", "true is not implemented");
    refuse_unimplemented(c, file,
                         {{"add_cross_attention", false}, {"quantization_config", nullptr}},
                         "stride's GPT-2");
    return validated(m, file);
  }

  json write_config(const ModelConfig& m) const override {
    return {{"architectures", {architecture()}},
            {"model_type", model_type()},
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
  }

  std::optional<std::string> to_stride(const std::string& hf_name) const override {
    if (hf_name.ends_with(".attn.bias") || hf_name.ends_with(".attn.masked_bias")) {
      return std::nullopt;  // old checkpoints' causal-mask buffers
    }
    const bool prefixed = hf_name.starts_with("lm_head.") || hf_name.starts_with("transformer.");
    return prefixed ? hf_name : "transformer." + hf_name;
  }

  std::string to_hf(const std::string& name) const override { return name; }

  Tensor to_hf_value(const std::string& name,
                     const Tensor& value,
                     const ModelConfig& /*m*/) const override {
    return is_conv1d_weight(name) ? value.t() : value;
  }
  Tensor from_hf_value(const std::string& name,
                       const Tensor& value,
                       const ModelConfig& /*m*/) const override {
    return is_conv1d_weight(name) ? value.t() : value;
  }

 private:
  // Hugging Face's Conv1D projections of a GPT-2 block, stored (in, out).
  static bool is_conv1d_weight(const std::string& name) {
    for (const char* suffix :
         {".attn.c_attn.weight", ".attn.c_proj.weight", ".mlp.c_fc.weight", ".mlp.c_proj.weight"}) {
      if (name.ends_with(suffix)) return true;
    }
    return false;
  }
};

// ---- BertForMaskedLM ----

class BertLayout final : public Layout {
 public:
  const char* architecture() const override { return "BertForMaskedLM"; }
  const char* model_type() const override { return "bert"; }
  const char* embedding() const override { return "bert.embeddings.word_embeddings.weight"; }
  const char* output() const override { return "cls.predictions.decoder.weight"; }
  // BertForPreTraining's checkpoints hold the same encoder and masked-LM
  // head, beside the next-sentence head that loading skips.
  bool reads(const std::string& architecture_name) const override {
    return architecture_name == "BertForMaskedLM" || architecture_name == "BertForPreTraining";
  }

  ModelConfig read_config(const json& c, const fs::path& file) const override {
    ModelConfig m;
    m.arch = "bert";
    m.vocab_size = get<int64_t>(c, file, "vocab_size");
    m.d_model = get<int64_t>(c, file, "hidden_size");
    m.n_layers = get<int64_t>(c, file, "num_hidden_layers");
    m.n_heads = get<int64_t>(c, file, "num_attention_heads");
    m.ffn_hidden = get<int64_t>(c, file, "intermediate_size");
    m.context = get<int64_t>(c, file, "max_position_embeddings");
    m.type_vocab_size = get<int64_t>(c, file, "type_vocab_size", 2);
    m.norm_eps = get<double>(c, file, "layer_norm_eps", 1e-12);
    m.tie_embeddings = get<bool>(c, file, "tie_word_embeddings", true);
    m.dropout = get<double>(c, file, "hidden_dropout_prob", 0.1);
    const std::string act = get<std::string>(c, file, "hidden_act", std::string("gelu"));
    require(act == "gelu", file, "hidden_act",
            "\"" + act + "\"; stride's BERT computes gelu (the exact one, with erf)");
    const std::string positions =
        get<std::string>(c, file, "position_embedding_type", std::string("absolute"));
    require(positions == "absolute", file, "position_embedding_type",
            "\"" + positions + "\"; stride's BERT has absolute position embeddings");
    require(!get<bool>(c, file, "is_decoder", false), file, "is_decoder",
            "true; stride's BERT is the encoder (every position sees the whole text)");
    refuse_unimplemented(c, file,
                         {{"add_cross_attention", false}, {"quantization_config", nullptr}},
                         "stride's BERT");
    return validated(m, file);
  }

  json write_config(const ModelConfig& m) const override {
    return {{"architectures", {architecture()}},
            {"model_type", model_type()},
            {"vocab_size", m.vocab_size},
            {"hidden_size", m.d_model},
            {"num_hidden_layers", m.n_layers},
            {"num_attention_heads", m.n_heads},
            {"intermediate_size", m.hidden_dim()},
            {"max_position_embeddings", m.context},
            {"type_vocab_size", m.type_vocab_size},
            {"layer_norm_eps", m.norm_eps},
            {"hidden_act", "gelu"},
            {"hidden_dropout_prob", m.dropout},
            {"attention_probs_dropout_prob", m.dropout},
            {"position_embedding_type", "absolute"},
            {"tie_word_embeddings", m.tie_embeddings},
            {"torch_dtype", "float32"}};
  }

  std::optional<std::string> to_stride(const std::string& hf_name) const override {
    // What BertForMaskedLM does not compute: the pooler and the
    // next-sentence head (BertForPreTraining's), and position ids that
    // older checkpoints saved as a buffer.
    if (hf_name.starts_with("bert.pooler.") || hf_name.starts_with("cls.seq_relationship.") ||
        hf_name == "bert.embeddings.position_ids") {
      return std::nullopt;
    }
    // The decoder's bias is the head's (Hugging Face ties the two).
    if (hf_name == "cls.predictions.decoder.bias") return "cls.predictions.bias";
    // Google's original checkpoints, converted as they were (bert-base-uncased's
    // model.safetensors among them), name LayerNorm's weight and bias gamma and beta.
    for (const auto& [old_name, name] : {std::pair{".LayerNorm.gamma", ".LayerNorm.weight"},
                                         std::pair{".LayerNorm.beta", ".LayerNorm.bias"}}) {
      if (hf_name.ends_with(old_name)) {
        return hf_name.substr(0, hf_name.size() - std::string_view(old_name).size()) + name;
      }
    }
    return hf_name;
  }

  std::string to_hf(const std::string& name) const override { return name; }
};

const LlamaLayout kLlama;
const GPT2Layout kGPT2;
const BertLayout kBert;
constexpr std::array<const Layout*, 3> kLayouts = {&kLlama, &kGPT2, &kBert};

// The layout of a config.json: its "architectures", else its "model_type".
const Layout& layout_of(const json& c, const fs::path& file) {
  const auto architectures =
      get<std::vector<std::string>>(c, file, "architectures", std::vector<std::string>{});
  const std::string model_type = get<std::string>(c, file, "model_type", std::string());
  std::string known;
  for (const Layout* layout : kLayouts) {
    const bool named = architectures.empty() ? model_type == layout->model_type()
                                             : layout->reads(architectures.front());
    if (named) return *layout;
    known += (known.empty() ? "" : ", ") + std::string(layout->architecture());
  }
  const std::string named = architectures.empty() ? "model_type \"" + model_type + "\""
                                                  : "\"" + architectures.front() + "\"";
  // A BERT without the masked-LM head (BertModel, or a task's head): say
  // what it lacks and where it runs, rather than only what is missing.
  if (model_type == "bert") {
    throw ConfigError(file.string() + ": key \"architectures\": " + named +
                      " is a BERT without the masked-language-model head (cls.predictions) "
                      "that the command line evaluates; load it from Python with "
                      "stride.models.from_pretrained");
  }
  throw ConfigError(file.string() + ": key \"architectures\": " + named +
                    " is not an architecture stride implements (" + known + ")");
}

const Layout& layout_of(const lm::LanguageModel& model) {
  const std::string& arch = model.config().arch;
  if (arch == "llama") return kLlama;
  if (arch == "gpt2") return kGPT2;
  if (arch == "bert") return kBert;
  throw ValueError(
      "hf::save: only the correct Llama, GPT-2 and BERT export to Hugging Face's layout; this "
      "is " +
      arch);
}

// A directory's layout and model config, from its config.json.
std::pair<const Layout*, ModelConfig> config_of(const fs::path& dir) {
  const fs::path file = dir / "config.json";
  const json c = read_json(file);
  const Layout& layout = layout_of(c, file);
  return {&layout, layout.read_config(c, file)};
}

// Gives `target` the checkpoint's `value`: the mapped tensor itself where it
// is stored as the model holds it (same dtype and shape, no transform), so
// that the parameter is the file's mapping and nothing is copied; a copy
// otherwise.
void assign(Tensor& target, const Tensor& value, const Tensor& mapped) {
  const bool as_stored = value.impl() == mapped.impl() && value.dtype() == target.dtype() &&
                         target.is_contiguous() && value.sizes() == target.sizes();
  if (as_stored) {
    target.impl()->set_data(*value.impl());
  } else {
    target.copy_(value);
  }
}

}  // namespace

ModelConfig read_config(const fs::path& dir) {
  return config_of(dir).second;
}

std::shared_ptr<lm::LanguageModel> load(const fs::path& dir) {
  const auto [layout_ptr, config] = config_of(dir);
  const Layout& layout = *layout_ptr;
  const std::vector<fs::path> files = weight_files(dir);
  auto model = lm::build_uninitialised(config);
  const nn::StateDict params = model->state_dict();
  // The parameters themselves (state_dict's entries are detached views),
  // which a mapped tensor can replace.
  const auto handles = model->named_parameters();
  std::set<std::string> filled;
  NoGradGuard no_grad;
  for (const fs::path& file : files) {
    io::SafetensorsContents contents = io::map_safetensors(file.string());
    for (auto& [hf_name, mapped] : contents.tensors) {
      // The mapping lives on in the parameter that takes it, else ends here.
      const Tensor t = std::exchange(mapped, Tensor());
      const std::optional<std::string> name = layout.to_stride(hf_name);
      if (!name) continue;
      if (!params.contains(*name)) {
        throw ValueError(file.string() + ": tensor \"" + hf_name + "\" is not a parameter of " +
                         layout.architecture() + " as config.json describes it");
      }
      // Tied, the output is the embedding (as transformers ties them after
      // loading).
      if (config.tie_embeddings && *name == layout.output()) continue;
      Tensor target = params[*name];
      const Tensor stored = layout.to_hf_value(
          *name, empty(target.sizes(), TensorOptions(target.dtype()).device(kMeta)), config);
      if (!(t.sizes() == stored.sizes())) {
        throw ValueError(file.string() + ": tensor \"" + hf_name + "\" has shape " +
                         shape_str(t.sizes()) + " but config.json implies " +
                         shape_str(stored.sizes()));
      }
      if (handles.contains(*name)) target = handles[*name];
      assign(target, layout.from_hf_value(*name, t, config), t);
      filled.insert(*name);
    }
  }
  if (config.tie_embeddings && filled.contains(layout.embedding())) filled.insert(layout.output());
  std::string missing;
  for (const auto& [name, t] : params) {
    if (!filled.contains(name)) missing += (missing.empty() ? "" : ", ") + layout.to_hf(name);
  }
  if (!missing.empty()) {
    throw ValueError(dir.string() + ": the weights lack " + missing +
                     " (config.json implies them)");
  }
  model->eval();
  return model;
}

void save(const lm::LanguageModel& model, const fs::path& dir) {
  const Layout& layout = layout_of(model);
  const ModelConfig& m = model.config();
  io::create_directories(dir.string(), "hf::save");
  io::write_file_atomically((dir / "config.json").string(), layout.write_config(m).dump(2) + "\n",
                            "hf::save");
  io::NamedTensors tensors;
  for (const auto& [name, t] : model.state_dict()) {
    if (m.tie_embeddings && name == layout.output()) continue;  // as save_pretrained
    tensors.emplace_back(layout.to_hf(name), layout.to_hf_value(name, t, m).contiguous());
  }
  io::save_safetensors((dir / "model.safetensors").string(), tensors, {{"format", "pt"}});
}

}  // namespace stride::hf
