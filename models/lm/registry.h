// The architectures a config can name ("arch"), each added by its own
// folder (models/llama, models/gpt): how to build it, the width of its
// feed-forward layers, and what its config must satisfy. The model layer
// (models/lm) knows none of them, so an architecture is added without
// touching it.
//
//   // models/gpt/model.cpp
//   STRIDE_REGISTER_ARCHITECTURE(gpt2, {.name = "gpt2", .build = ..., ...});
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lm/config.h"
#include "lm/language_model.h"

namespace stride::lm {

struct Architecture {
  std::string name;  // the config's "arch"
  // The model, its parameters drawn from the default generator.
  std::function<std::shared_ptr<LanguageModel>(const ModelConfig&)> build;
  // The feed-forward width when the config's ffn_hidden is 0.
  std::function<int64_t(const ModelConfig&)> hidden_dim;
  // ConfigError for what this architecture cannot build, after the checks
  // every config passes (ModelConfig::validate).
  std::function<void(const ModelConfig&)> validate;
  // A causal language model (each position sees the ones before it: it
  // generates and trains on next tokens), or an encoder (BERT: every
  // position sees the whole sequence; it fills in masked tokens).
  bool causal = true;
  // Whether its inputs carry token types (segments), type_vocab_size of
  // them; the config of any other architecture leaves type_vocab_size 0.
  bool token_types = false;
};

// Adds an architecture; a second one of the same name is an internal error.
void register_architecture(Architecture architecture);
// The architecture named `name`; a ConfigError listing the known ones.
const Architecture& architecture(std::string_view name);
// Every registered name, sorted.
std::vector<std::string> architecture_names();

// ValueError unless config.arch is a causal language model: `task`
// ("generate", "train") needs one, and an encoder is told so by name.
void require_causal(const ModelConfig& config, std::string_view task);

// A model of config.arch, validated, with PyTorch's default initialisation
// drawn from the default generator (manual_seed first to fix the weights),
// its weights in one block (Note [Packed parameters]).
std::shared_ptr<LanguageModel> build_model(const ModelConfig& config);

// Registers an architecture when the library loads; `id` names the
// registration (one per architecture).
#define STRIDE_REGISTER_ARCHITECTURE(id, ...)                   \
  [[maybe_unused]] static const bool stride_architecture_##id = \
      (::stride::lm::register_architecture(::stride::lm::Architecture __VA_ARGS__), true)

}  // namespace stride::lm
