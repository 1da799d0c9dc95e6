#include "lm/weights.h"

#include "lm/inspect.h"
#include "lm/registry.h"
#include "stride/checkpoint.h"
#include "stride/device.h"
#include "stride/io.h"
#include "stride/nn/layers.h"

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

namespace {

// The model of `config` with its linear layers in `format`, holding
// `weights`: built and packed on meta, where the keys and shapes are checked
// (every mismatch listed), then given CPU memory and loaded.
std::shared_ptr<LanguageModel> build_packed_with_weights(const RunConfig& config,
                                                         const nn::StateDict& weights,
                                                         const std::string& path,
                                                         WeightFormat format) {
  std::shared_ptr<LanguageModel> model;
  {
    DefaultDeviceGuard on_meta(kMeta);
    model = build_model(config.model);
  }
  pack_weights(*model, format);
  try {
    model->load_state_dict(weights, /*strict=*/true);
  } catch (const nn::StateDictError& e) {
    throw ValueError(not_the_model_of(config, path) + e.what());
  } catch (const Error&) {
    // The keys and shapes fit; only the copy onto meta failed.
  }
  model->to_empty(Device(kCPU));
  model->load_state_dict(weights, /*strict=*/true);
  return model;
}

}  // namespace

std::shared_ptr<LanguageModel> build_with_weights(const RunConfig& config,
                                                  const nn::StateDict& weights,
                                                  const std::string& path,
                                                  WeightFormat format) {
  if (format != WeightFormat::Float32) {
    return build_packed_with_weights(config, weights, path, format);
  }
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

namespace {

int64_t bytes_of(const Tensor& t) {
  return t.numel() * int64_t(t.element_size());
}

// The bytes of the model's parameters and buffers, each shared tensor once.
int64_t state_bytes(nn::Module& model) {
  int64_t total = 0;
  for (const Tensor& t : model.parameters()) total += bytes_of(t);
  for (const Tensor& t : model.buffers()) total += bytes_of(t);
  return total;
}

}  // namespace

std::shared_ptr<LanguageModel> build_uninitialised(const ModelConfig& config) {
  std::shared_ptr<LanguageModel> model;
  {
    DefaultDeviceGuard on_meta(kMeta);
    model = build_model(config);
  }
  model->to_empty(Device(kCPU));
  return model;
}

PackedWeights pack_weights(nn::Module& model, WeightFormat format) {
  PackedWeights result;
  result.bytes_before = state_bytes(model);
  for (const auto& module : model.modules()) {
    auto* linear = dynamic_cast<nn::Linear*>(module.get());
    if (linear == nullptr) continue;
    // A layer stored packed already (a GGUF file's) is not rounded again.
    if (linear->weight_format() != WeightFormat::Float32 ||
        (is_blocked(format) && linear->in_features % kWeightBlock != 0)) {
      ++result.kept_layers;
      continue;
    }
    linear->pack_weight(format);
    ++result.packed_layers;
  }
  result.bytes_after = state_bytes(model);
  return result;
}

}  // namespace stride::lm
