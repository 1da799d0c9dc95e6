#include "lm/weights.h"

#include "lm/inspect.h"
#include "lm/registry.h"
#include "stride/checkpoint.h"
#include "stride/device.h"
#include "stride/io.h"

namespace stride::lm {

void save_weights(const std::string& path,
                  const nn::Module& model,
                  const RunConfig& config,
                  const std::map<std::string, std::string>& extra_metadata) {
  io::Metadata metadata = extra_metadata;
  metadata["format"] = "pt";
  metadata["stride.config"] = to_json(config);
  io::save_safetensors(path, model.state_dict().items(), metadata);
}

nn::StateDict state_dict_from(io::SafetensorsContents file) {
  nn::StateDict weights;
  for (auto& [name, t] : file.tensors) weights.insert(name, std::move(t));
  return weights;
}

namespace {

std::string not_the_model_of(const RunConfig& config, const std::string& path) {
  return path + " does not hold the weights of the config's model (" + config.model.arch + "): ";
}

// When a config and a weights file disagree and the config's model is about
// the file's size, a build on meta lists every missing, unexpected and
// mis-shaped key (load_state_dict checks them all before it copies). A
// config far larger than the file (a hostile one) is not built even there.
void list_key_mismatches(const RunConfig& config,
                         const nn::StateDict& weights,
                         const std::string& path) {
  const MemoryEstimate estimate = estimate_memory(config);
  if (estimate.state_tensors > 2 * weights.size() + 16) return;
  DefaultDeviceGuard on_meta(kMeta);
  const auto model = build_model(config.model);
  try {
    model->load_state_dict(weights, /*strict=*/true);
  } catch (const nn::StateDictError& e) {
    throw ValueError(not_the_model_of(config, path) + e.what());
  } catch (const Error&) {
    // The keys fit; only the copy onto meta failed.
  }
}

}  // namespace

std::shared_ptr<LanguageModel> build_with_weights(const RunConfig& config,
                                                  const nn::StateDict& weights,
                                                  const std::string& path) {
  CheckpointState state;
  state.model = weights;
  try {
    check_config_fits_checkpoint(config, state, path);
  } catch (const IOError&) {
    list_key_mismatches(config, weights, path);
    throw;
  }
  auto model = build_model(config.model);
  try {
    model->load_state_dict(weights, /*strict=*/true);
  } catch (const Error& e) {
    throw ValueError(not_the_model_of(config, path) + e.what());
  }
  return model;
}

}  // namespace stride::lm
