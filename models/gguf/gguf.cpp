#include "gguf/gguf.h"

#include <charconv>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "lm/registry.h"
#include "lm/weights.h"
#include "stride/autograd.h"
#include "stride/device.h"
#include "stride/factory.h"
#include "stride/nn/layers.h"
#include "stride/weight_format.h"

namespace stride::gguf {

namespace {

using lm::ConfigError;
using lm::ModelConfig;

// ---- metadata ----

class Metadata {
 public:
  Metadata(const io::GgufHeader& header, std::string file)
      : header_(header), file_(std::move(file)) {}

  bool has(const std::string& key) const { return header_.find(key) != nullptr; }

  // An integer value (of any of the format's integer types) that fits int64.
  std::optional<int64_t> integer(const std::string& key) const {
    const io::GgufValue* v = header_.find(key);
    if (v == nullptr) return std::nullopt;
    if (const auto* u = std::get_if<uint64_t>(&v->value)) {
      if (*u <= uint64_t(INT64_MAX)) return int64_t(*u);
    } else if (const auto* i = std::get_if<int64_t>(&v->value)) {
      return *i;
    }
    throw ConfigError(file_ + ": metadata \"" + key + "\" must be an integer; it is " +
                      std::string(io::gguf_value_type_name(v->type)));
  }

  int64_t integer_or_throw(const std::string& key) const {
    const std::optional<int64_t> v = integer(key);
    if (!v) throw ConfigError(file_ + ": the metadata lacks \"" + key + "\"");
    return *v;
  }

  std::optional<double> real(const std::string& key) const {
    const io::GgufValue* v = header_.find(key);
    if (v == nullptr) return std::nullopt;
    if (const auto* d = std::get_if<double>(&v->value)) return *d;
    throw ConfigError(file_ + ": metadata \"" + key + "\" must be a float; it is " +
                      std::string(io::gguf_value_type_name(v->type)));
  }

  std::optional<std::string> text(const std::string& key) const {
    const io::GgufValue* v = header_.find(key);
    if (v == nullptr) return std::nullopt;
    if (const auto* s = std::get_if<std::string>(&v->value)) return *s;
    throw ConfigError(file_ + ": metadata \"" + key + "\" must be a string; it is " +
                      std::string(io::gguf_value_type_name(v->type)));
  }

  const std::string& file() const { return file_; }

 private:
  const io::GgufHeader& header_;
  std::string file_;
};

void require(bool ok, const std::string& file, const std::string& key, const std::string& why) {
  if (!ok) throw ConfigError(file + ": metadata \"" + key + "\": " + why);
}

const io::GgufTensor* find_tensor(const io::GgufContents& contents, std::string_view name) {
  for (const io::GgufTensor& t : contents.tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

void read_rope_scaling(const Metadata& meta, ModelConfig& m) {
  const std::string type = meta.text("llama.rope.scaling.type").value_or("none");
  if (type == "none") return;
  require(type == "linear", meta.file(), "llama.rope.scaling.type",
          "\"" + type +
              "\" RoPE scaling is not implemented (stride computes \"none\" and "
              "\"linear\")");
  m.rope_type = "linear";
  m.rope_factor = meta.real("llama.rope.scaling.factor").value_or(1.0);
}

// ---- tensors ----

// stride's name of a GGUF Llama tensor, or nullopt for one a Llama lacks.
std::optional<std::string> stride_name(const std::string& name) {
  static const std::map<std::string, std::string, std::less<>> kTop = {
      {"token_embd.weight", "tok_embeddings.weight"},
      {"output_norm.weight", "norm.weight"},
      {"output.weight", "output.weight"},
  };
  static const std::map<std::string, std::string, std::less<>> kBlock = {
      {"attn_norm.weight", "attention_norm.weight"}, {"attn_q.weight", "attention.wq.weight"},
      {"attn_k.weight", "attention.wk.weight"},      {"attn_v.weight", "attention.wv.weight"},
      {"attn_output.weight", "attention.wo.weight"}, {"ffn_norm.weight", "ffn_norm.weight"},
      {"ffn_gate.weight", "feed_forward.w1.weight"}, {"ffn_down.weight", "feed_forward.w2.weight"},
      {"ffn_up.weight", "feed_forward.w3.weight"},
  };
  if (auto it = kTop.find(name); it != kTop.end()) return it->second;
  constexpr std::string_view kPrefix = "blk.";
  if (name.rfind(kPrefix, 0) != 0) return std::nullopt;
  const size_t dot = name.find('.', kPrefix.size());
  if (dot == std::string::npos) return std::nullopt;
  int64_t layer = -1;
  const char* first = name.data() + kPrefix.size();
  const auto [end, error] = std::from_chars(first, name.data() + dot, layer);
  if (error != std::errc() || end != name.data() + dot || layer < 0) return std::nullopt;
  const auto it = kBlock.find(std::string_view(name).substr(dot + 1));
  if (it == kBlock.end()) return std::nullopt;
  return "layers." + std::to_string(layer) + "." + it->second;
}

// The weight format stride computes on a GGUF type as stored, if any.
std::optional<WeightFormat> stored_format(io::GgmlType type) {
  switch (type) {
    case io::GgmlType::F32:
      return WeightFormat::Float32;
    case io::GgmlType::BF16:
      return WeightFormat::BFloat16;
    case io::GgmlType::Q8_0:
      return WeightFormat::Int8;
    case io::GgmlType::Q4_0:
      return WeightFormat::Int4;
    default:
      return std::nullopt;
  }
}

// The nn::Linear whose weight is stride's tensor `name`, or nullptr.
nn::Linear* linear_of(lm::LanguageModel& model, const std::string& name) {
  constexpr std::string_view kSuffix = ".weight";
  const std::string module = name.substr(0, name.size() - kSuffix.size());
  for (const auto& [path, m] : model.named_modules()) {
    if (path == module) return dynamic_cast<nn::Linear*>(m.get());
  }
  return nullptr;
}

// Gives parameter `target` the file's tensor: the mapping itself when it is
// float32 of the parameter's shape, else its values decoded to float32.
void assign_float(Tensor& target, const io::GgufTensor& t) {
  if (t.type == io::GgmlType::F32) {
    target.impl()->set_data(*t.data.impl());
  } else {
    target.copy_(io::gguf_to_float32(t));
  }
}

// A GGUF Llama's tensors per layer (attn_norm, attn_q/k/v/output, ffn_norm,
// ffn_gate/up/down) and outside them (token_embd, output_norm, output).
constexpr int64_t kTensorsPerLayer = 9;

// Checks the file's tensors against the model the metadata describes, before
// any memory is given to it: their count first (a file claiming more layers
// than it holds is refused before a module is built), then, against the
// model built on meta, every name and shape, and nothing missing.
void check_tensors(const ModelConfig& config,
                   const io::GgufContents& contents,
                   const std::string& file) {
  const int64_t expected = kTensorsPerLayer * config.n_layers + (config.tie_embeddings ? 2 : 3);
  if (int64_t(contents.tensors.size()) != expected) {
    throw ValueError(file + ": the metadata describes a Llama of " +
                     std::to_string(config.n_layers) + " layers, " + std::to_string(expected) +
                     " tensors, but the file holds " + std::to_string(contents.tensors.size()));
  }
  std::shared_ptr<lm::LanguageModel> meta;
  {
    DefaultDeviceGuard on_meta(kMeta);
    meta = lm::build_model(config);
  }
  const nn::StateDict params = meta->state_dict();
  std::set<std::string> filled;
  for (const io::GgufTensor& t : contents.tensors) {
    const std::optional<std::string> name = stride_name(t.name);
    if (!name || !params.contains(*name) || (config.tie_embeddings && *name == "output.weight")) {
      throw ValueError(file + ": tensor \"" + t.name + "\" is not part of a Llama as the " +
                       "metadata describes it (" + std::to_string(config.n_layers) +
                       " layers; stride reads token_embd, output_norm, output and blk.N's "
                       "attn_norm, attn_q/k/v/output, ffn_norm, ffn_gate/up/down)");
    }
    if (!(IntArrayRef(t.shape) == params[*name].sizes())) {
      throw ValueError(file + ": tensor \"" + t.name + "\" has shape " +
                       shape_str(IntArrayRef(t.shape)) + " but the metadata implies " +
                       shape_str(params[*name].sizes()));
    }
    filled.insert(*name);
  }
  if (config.tie_embeddings) filled.insert("output.weight");
  std::string missing;
  for (const auto& [name, _] : params) {
    if (!filled.contains(name)) missing += (missing.empty() ? "" : ", ") + name;
  }
  if (!missing.empty()) {
    throw ValueError(file + ": the tensors lack " + missing + " (the metadata implies them)");
  }
}

// Gives the model (checked by check_tensors) the file's tensors.
void fill_weights(lm::LanguageModel& model, const io::GgufContents& contents) {
  const auto handles = model.named_parameters();
  NoGradGuard no_grad;
  for (const io::GgufTensor& t : contents.tensors) {
    const std::string name = *stride_name(t.name);
    nn::Linear* linear = linear_of(model, name);
    const std::optional<WeightFormat> format = stored_format(t.type);
    if (linear != nullptr && format && *format != WeightFormat::Float32) {
      linear->set_packed_weight(t.data, *format);
    } else {
      Tensor target = handles[name];
      assign_float(target, t);
    }
  }
}

}  // namespace

ModelConfig read_config(const io::GgufContents& contents, const std::string& file) {
  const Metadata meta(contents.header, file);
  const std::string arch = meta.text("general.architecture").value_or("");
  require(arch == "llama", file, "general.architecture",
          "stride reads GGUF files of the Llama architecture (\"llama\"); this one is \"" + arch +
              "\"");
  ModelConfig m;
  m.arch = "llama";
  m.d_model = meta.integer_or_throw("llama.embedding_length");
  m.n_layers = meta.integer_or_throw("llama.block_count");
  m.n_heads = meta.integer_or_throw("llama.attention.head_count");
  m.n_kv_heads = meta.integer("llama.attention.head_count_kv").value_or(m.n_heads);
  m.ffn_hidden = meta.integer_or_throw("llama.feed_forward_length");
  m.context = meta.integer_or_throw("llama.context_length");
  m.norm_eps = meta.real("llama.attention.layer_norm_rms_epsilon").value_or(1e-5);
  m.rope_theta = meta.real("llama.rope.freq_base").value_or(10000.0);
  m.rope_style = "interleaved";  // llama.cpp's converter permutes q and k back to Meta's pairs
  m.dropout = 0.0;
  read_rope_scaling(meta, m);
  require(m.n_heads > 0, file, "llama.attention.head_count", "must be positive");
  const int64_t head_dim = m.d_model / m.n_heads;
  for (const char* key : {"llama.rope.dimension_count", "llama.attention.key_length",
                          "llama.attention.value_length"}) {
    if (const std::optional<int64_t> v = meta.integer(key)) {
      require(*v == head_dim, file, key,
              std::to_string(*v) + " differs from embedding_length / head_count = " +
                  std::to_string(head_dim) + ", which stride's Llama computes with");
    }
  }
  require(find_tensor(contents, "rope_freqs.weight") == nullptr, file, "rope_freqs.weight",
          "the file scales RoPE's frequencies by a tensor (Llama 3.1's), which stride does not "
          "read from GGUF yet");
  const io::GgufTensor* embedding = find_tensor(contents, "token_embd.weight");
  if (embedding == nullptr) throw ValueError(file + ": the tensors lack token_embd.weight");
  if (embedding->shape.size() != 2) {
    throw ValueError(file + ": token_embd.weight has shape " +
                     shape_str(IntArrayRef(embedding->shape)) + "; expected (vocab, d_model)");
  }
  m.vocab_size = meta.integer("llama.vocab_size").value_or(embedding->shape[0]);
  m.tie_embeddings = find_tensor(contents, "output.weight") == nullptr;
  try {
    m.validate();
  } catch (const ConfigError& e) {
    throw ConfigError(file + ": " + e.what());
  }
  return m;
}

std::shared_ptr<lm::LanguageModel> load(const std::filesystem::path& path) {
  const std::string file = path.string();
  const io::GgufContents contents = io::map_gguf(file);
  const ModelConfig config = read_config(contents, file);
  check_tensors(config, contents, file);
  auto model = lm::build_uninitialised(config);
  fill_weights(*model, contents);
  model->eval();
  return model;
}

}  // namespace stride::gguf
