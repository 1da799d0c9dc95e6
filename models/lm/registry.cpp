#include "lm/registry.h"

#include <map>

#include "stride/error.h"

namespace stride::lm {

namespace {

// Built on first use, so that registrations from any translation unit's
// static initialisers find it.
std::map<std::string, Architecture, std::less<>>& registry() {
  static std::map<std::string, Architecture, std::less<>> architectures;
  return architectures;
}

}  // namespace

void register_architecture(Architecture arch) {
  const std::string name = arch.name;
  const bool added = registry().emplace(name, std::move(arch)).second;
  if (!added) throw Error("lm::register_architecture: \"" + name + "\" is registered twice");
}

const Architecture& architecture(std::string_view name) {
  const auto it = registry().find(name);
  if (it != registry().end()) return it->second;
  std::string known;
  for (const std::string& n : architecture_names()) known += (known.empty() ? "" : ", ") + n;
  throw ConfigError("unknown arch \"" + std::string(name) + "\". Known: " + known);
}

std::vector<std::string> architecture_names() {
  std::vector<std::string> names;
  for (const auto& [name, arch] : registry()) names.push_back(name);
  return names;  // a std::map's keys, already sorted
}

void require_causal(const ModelConfig& config, std::string_view task) {
  if (architecture(config.arch).causal) return;
  std::string causal;
  for (const auto& [name, arch] : registry()) {
    if (arch.causal) causal += (causal.empty() ? "" : ", ") + name;
  }
  throw ValueError(std::string(task) + ": arch " + config.arch +
                   " is an encoder (a masked language model): every position sees the whole "
                   "text and it fills in masked tokens instead of continuing a text, so " +
                   std::string(task) + " needs a causal language model (" + causal +
                   "). Hint: `stride eval --hf DIR` reports an encoder's masked-token loss, and "
                   "`stride attention --hf DIR` draws its attention maps.");
}

std::shared_ptr<LanguageModel> build_model(const ModelConfig& config) {
  config.validate();
  std::shared_ptr<LanguageModel> model = architecture(config.arch).build(config);
  // One block of memory for the weights (Note [Packed parameters]).
  model->pack_parameters();
  return model;
}

}  // namespace stride::lm
