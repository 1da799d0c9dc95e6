#include "lm/config.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>
#include <variant>

#include "lm/registry.h"

namespace stride::lm {

namespace {

using nlohmann::json;

std::string join_keys(const json& known) {
  std::string out;
  for (const auto& [key, value] : known.items()) out += (out.empty() ? "" : ", ") + key;
  return out;
}

// Each key of a section, declared once: its name and the field it sets.
// Its default is the field's initializer; its JSON form, its type check on
// reading and `--set` (which edits the JSON) follow from the field's type.
// `saved_since_start` is false for a key added after runs were first saved:
// a saved config without it means the field's default.
template <class Section>
struct Key {
  using Field = std::variant<int64_t Section::*,
                             uint64_t Section::*,
                             double Section::*,
                             bool Section::*,
                             std::string Section::*>;
  const char* name;
  Field field;
  bool saved_since_start = true;
};

const Key<ModelConfig> kModelKeys[] = {
    {"arch", &ModelConfig::arch},
    {"vocab_size", &ModelConfig::vocab_size},
    {"d_model", &ModelConfig::d_model},
    {"n_layers", &ModelConfig::n_layers},
    {"n_heads", &ModelConfig::n_heads},
    {"n_kv_heads", &ModelConfig::n_kv_heads},
    {"context", &ModelConfig::context},
    {"ffn_hidden", &ModelConfig::ffn_hidden},
    {"multiple_of", &ModelConfig::multiple_of},
    {"norm_eps", &ModelConfig::norm_eps},
    {"rope_theta", &ModelConfig::rope_theta},
    {"rope_type", &ModelConfig::rope_type, false},
    {"rope_factor", &ModelConfig::rope_factor, false},
    {"rope_low_freq_factor", &ModelConfig::rope_low_freq_factor, false},
    {"rope_high_freq_factor", &ModelConfig::rope_high_freq_factor, false},
    {"rope_original_context", &ModelConfig::rope_original_context, false},
    {"rope_style", &ModelConfig::rope_style},
    {"type_vocab_size", &ModelConfig::type_vocab_size, false},
    {"tie_embeddings", &ModelConfig::tie_embeddings},
    {"dropout", &ModelConfig::dropout},
};

const Key<TrainConfig> kTrainKeys[] = {
    {"steps", &TrainConfig::steps},
    {"batch_size", &TrainConfig::batch_size},
    {"optimizer", &TrainConfig::optimizer},
    {"lr", &TrainConfig::lr},
    {"beta1", &TrainConfig::beta1},
    {"beta2", &TrainConfig::beta2},
    {"eps", &TrainConfig::eps},
    {"weight_decay", &TrainConfig::weight_decay},
    {"schedule", &TrainConfig::schedule},
    {"warmup_steps", &TrainConfig::warmup_steps},
    {"decay_steps", &TrainConfig::decay_steps},
    {"min_lr_ratio", &TrainConfig::min_lr_ratio},
    {"grad_clip", &TrainConfig::grad_clip},
    {"precision", &TrainConfig::precision},
    {"eval_interval", &TrainConfig::eval_interval},
    {"eval_batches", &TrainConfig::eval_batches},
    {"checkpoint_interval", &TrainConfig::checkpoint_interval},
    {"seed", &TrainConfig::seed},
    {"deterministic_shards", &TrainConfig::deterministic_shards},
    {"zero_stage", &TrainConfig::zero_stage},
};

// Reads the object `section` of the config into the fields that `known` (the
// defaults, serialised) lists: unknown keys and wrong types are errors that
// name the key and the file.
class SectionReader {
 public:
  SectionReader(const json& root, const char* section, json known, std::string_view source)
      : known_(std::move(known)), section_(section), source_(source) {
    if (!root.contains(section)) return;
    values_ = root.at(section);
    if (!values_.is_object()) fail("\"", section, "\" must be an object");
    for (const auto& [key, value] : values_.items()) {
      if (!known_.contains(key)) {
        fail("unknown key \"", key, "\" in \"", section, "\". Known keys: ", join_keys(known_));
      }
    }
  }

  // Every key of `keys` the section holds, into `section`.
  template <class Section, size_t N>
  void read_all(Section& section, const Key<Section> (&keys)[N]) const {
    for (const Key<Section>& key : keys) {
      std::visit([&](auto field) { read(key.name, section.*field); }, key.field);
    }
  }

  template <class T>
  void read(const char* key, T& field) const {
    if (!values_.contains(key)) return;
    const json& v = values_.at(key);
    const json& def = known_.at(key);
    const bool ok = (def.is_number_integer() && v.is_number_integer()) ||
                    (def.is_number_float() && v.is_number()) ||
                    (def.is_boolean() && v.is_boolean()) || (def.is_string() && v.is_string());
    if (!ok) {
      fail("\"", section_, ".", key, "\" must be ",
           def.is_number_integer() ? "an integer"
           : def.is_number()       ? "a number"
           : def.is_boolean()      ? "true or false"
                                   : "a string",
           "; got ", v.dump());
    }
    field = v.get<T>();
  }

  template <class... Args>
  [[noreturn]] void fail(const Args&... args) const {
    std::ostringstream msg;
    msg << source_ << ": ";
    (msg << ... << args);
    throw ConfigError(msg.str());
  }

 private:
  json values_ = json::object();
  json known_;
  const char* section_;
  std::string_view source_;
};

template <class T>
json value_json(const T& value) {
  return value;
}

template <class Section, size_t N>
json section_json(const Section& section, const Key<Section> (&keys)[N]) {
  json out = json::object();
  for (const Key<Section>& key : keys) {
    std::visit([&](auto field) { out[key.name] = value_json(section.*field); }, key.field);
  }
  return out;
}

json model_json(const ModelConfig& m) {
  return section_json(m, kModelKeys);
}

json train_json(const TrainConfig& t) {
  return section_json(t, kTrainKeys);
}

}  // namespace

void require_config(bool ok, const std::string& what) {
  if (!ok) throw ConfigError("invalid config: " + what);
}

int64_t ModelConfig::hidden_dim() const {
  return ffn_hidden > 0 ? ffn_hidden : architecture(arch).hidden_dim(*this);
}

int64_t swiglu_hidden_dim(const ModelConfig& m) {
  // A hostile d_model or multiple_of must not overflow here: a width past
  // int64 saturates, and building the model then refuses it.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t h = 0;
  if (__builtin_mul_overflow(m.d_model, 8, &h)) return kMax;
  const int64_t multiple = std::max<int64_t>(m.multiple_of, 1);
  int64_t rounded = 0;
  if (__builtin_add_overflow(h / 3, multiple - 1, &rounded)) return kMax;
  return rounded / multiple * multiple;
}

int64_t four_times_width(const ModelConfig& m) {
  int64_t h = 0;
  return __builtin_mul_overflow(m.d_model, 4, &h) ? std::numeric_limits<int64_t>::max() : h;
}

void refuse_llama_only_settings(const ModelConfig& m) {
  require_config(m.rope_type == "default",
                 "rope_type is a setting of the correct Llama only (the ladder's RoPE is the "
                 "article's)");
  require_config(m.n_kv_heads == 0 || m.n_kv_heads == m.n_heads,
                 "n_kv_heads (grouped-query attention) is a setting of the correct Llama only");
  require_config(m.rope_style == "interleaved",
                 "rope_style is a setting of the correct Llama only (the ladder's RoPE is the "
                 "article's)");
}

void ModelConfig::validate() const {
  const Architecture& architecture_of_config = architecture(arch);
  require_config(vocab_size > 0 && d_model > 0 && n_layers > 0 && n_heads > 0 && context > 0,
                 "vocab_size, d_model, n_layers, n_heads and context must be positive");
  require_config(multiple_of > 0, "multiple_of must be positive");
  require_config(ffn_hidden >= 0, "ffn_hidden must be >= 0 (0 derives it from d_model)");
  require_config(norm_eps >= 0, "norm_eps must be >= 0");
  require_config(rope_theta > 0, "rope_theta must be positive");
  require_config(dropout >= 0 && dropout < 1, "dropout must be in [0, 1)");
  require_config(type_vocab_size >= 0, "type_vocab_size must be >= 0");
  require_config(type_vocab_size == 0 || architecture_of_config.token_types,
                 "type_vocab_size is a setting of the architectures with token types (bert); " +
                     arch + " has none");
  architecture_of_config.validate(*this);
}

void TrainConfig::validate() const {
  require_config(steps >= 0, "train.steps must be >= 0");
  require_config(batch_size > 0, "train.batch_size must be positive");
  require_config(optimizer == "adam" || optimizer == "adamw",
                 "train.optimizer must be \"adam\" or \"adamw\"; got \"" + optimizer + "\"");
  require_config(schedule == "constant" || schedule == "cosine",
                 "train.schedule must be \"constant\" or \"cosine\"; got \"" + schedule + "\"");
  require_config(precision == "fp32" || precision == "bf16",
                 "train.precision must be \"fp32\" or \"bf16\"; got \"" + precision + "\"");
  require_config(lr > 0, "train.lr must be positive");
  require_config(beta1 >= 0 && beta1 < 1 && beta2 >= 0 && beta2 < 1,
                 "train.beta1/beta2 must be in [0, 1)");
  require_config(eps >= 0 && weight_decay >= 0 && grad_clip >= 0,
                 "eps, weight_decay, grad_clip >= 0");
  require_config(warmup_steps >= 0, "train.warmup_steps must be >= 0");
  require_config(decay_steps >= 0, "train.decay_steps must be >= 0 (0: train.steps)");
  require_config(schedule != "cosine" || warmup_steps < std::max<int64_t>(schedule_steps(), 1),
                 "train.warmup_steps must be below the schedule's length (train.decay_steps, else "
                 "train.steps) for the cosine schedule");
  require_config(min_lr_ratio >= 0 && min_lr_ratio <= 1, "train.min_lr_ratio must be in [0, 1]");
  require_config(eval_interval > 0 && eval_batches > 0,
                 "eval_interval and eval_batches must be positive");
  require_config(checkpoint_interval >= 0, "train.checkpoint_interval must be >= 0");
  require_config(deterministic_shards >= 0 &&
                     (deterministic_shards == 0 || batch_size % deterministic_shards == 0),
                 "train.deterministic_shards must be 0 or divide train.batch_size");
  require_config(zero_stage == 0 || zero_stage == 1, "train.zero_stage must be 0 or 1");
}

RunConfig parse_config(std::string_view json_text, std::string_view source) {
  json root;
  try {
    root = json::parse(json_text);
  } catch (const json::parse_error& e) {
    throw ConfigError(std::string(source) + ": not valid JSON: " + e.what());
  }
  RunConfig cfg;
  if (!root.is_object()) throw ConfigError(std::string(source) + ": expected a JSON object");
  for (const auto& [key, value] : root.items()) {
    if (key != "name" && key != "model" && key != "train" && key != "comment") {
      throw ConfigError(std::string(source) + ": unknown top-level key \"" + key +
                        "\". Known keys: name, model, train, comment");
    }
  }
  if (root.contains("name")) {
    if (!root["name"].is_string())
      throw ConfigError(std::string(source) + ": name must be a string");
    cfg.name = root["name"].get<std::string>();
  }

  ModelConfig& m = cfg.model;
  SectionReader(root, "model", model_json(m), source).read_all(m, kModelKeys);
  TrainConfig& t = cfg.train;
  SectionReader(root, "train", train_json(t), source).read_all(t, kTrainKeys);

  try {
    m.validate();
    t.validate();
  } catch (const ConfigError& e) {
    throw ConfigError(std::string(source) + ": " + e.what());
  }
  return cfg;
}

RunConfig parse_saved_config(std::string_view json_text, std::string_view source) {
  RunConfig cfg = parse_config(json_text, source);
  const json root = json::parse(json_text);  // parse_config has checked it
  const json model = root.contains("model") ? root.at("model") : json::object();
  std::string missing;
  for (const Key<ModelConfig>& key : kModelKeys) {
    if (key.saved_since_start && !model.contains(key.name)) {
      missing += (missing.empty() ? "" : ", ") + std::string(key.name);
    }
  }
  if (!missing.empty()) {
    throw ConfigError(std::string(source) + ": the saved config lacks model." +
                      (missing.find(',') == std::string::npos ? "" : "{") + missing +
                      (missing.find(',') == std::string::npos ? "" : "}") +
                      ". Hint: the run's metadata is corrupt or was edited.");
  }
  return cfg;
}

RunConfig load_config(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw IOError("cannot read config " + path.string() +
                  ". Hint: the configs shipped with stride are in configs/, e.g. "
                  "configs/llama.json");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_config(text.str(), path.string());
}

RunConfig with_setting(const RunConfig& config, std::string_view setting) {
  const std::string source = "--set " + std::string(setting);
  const size_t eq = setting.find('=');
  const size_t dot = setting.find('.');
  if (eq == std::string_view::npos || dot == std::string_view::npos || dot > eq) {
    throw ConfigError(source + ": expected SECTION.KEY=VALUE, e.g. --set train.lr=1e-3");
  }
  const std::string section(setting.substr(0, dot)), key(setting.substr(dot + 1, eq - dot - 1));
  const std::string text(setting.substr(eq + 1));
  json root = json::parse(to_json(config));
  if (!root.contains(section) || !root[section].is_object()) {
    throw ConfigError(source + ": unknown section \"" + section + "\"; known: model, train");
  }
  json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) value = text;  // a bare word: a string
  root[section][key] = value;
  return parse_config(root.dump(), source);
}

std::string to_json(const RunConfig& config, int indent) {
  const json root = {{"name", config.name},
                     {"model", model_json(config.model)},
                     {"train", train_json(config.train)}};
  return root.dump(indent);
}

}  // namespace stride::lm
