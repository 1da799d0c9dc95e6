#include "llama/inspect.h"

#include <iomanip>
#include <sstream>

#include "llama/model.h"
#include "stride/allocator.h"
#include "stride/autograd.h"
#include "stride/ops.h"

namespace stride::llama {

namespace {

size_t meta_bytes_held() {
  return meta_memory_stats().allocated_bytes;
}

std::vector<ParameterInfo> describe_parameters(nn::Module& model) {
  std::vector<ParameterInfo> out;
  for (const auto& [name, p] : model.named_parameters()) {
    out.push_back({name, p.sizes().dims(), p.numel()});
  }
  return out;
}

size_t trainable_bytes(nn::Module& model) {
  size_t bytes = 0;
  for (const Tensor& p : model.parameters()) {
    if (p.requires_grad()) bytes += p.nbytes();
  }
  return bytes;
}

}  // namespace

ModelInspection inspect_model(const RunConfig& config) {
  DefaultDeviceGuard on_meta(kMeta);
  ModelInspection r;
  const size_t empty_held = meta_bytes_held();
  const std::shared_ptr<LanguageModel> model = build_model(config.model);
  r.parameter_bytes = meta_bytes_held() - empty_held;
  r.parameters = describe_parameters(*model);
  r.parameter_count = model->num_parameters();
  r.gradient_bytes = trainable_bytes(*model);
  r.optimizer_bytes = 2 * r.gradient_bytes;  // Adam and AdamW: two moments

  const int64_t B = config.train.batch_size, T = config.model.context;
  const Tensor ids = zeros({B, T}, kInt64), targets = zeros({B, T}, kInt64);
  const size_t before_step = meta_bytes_held();
  reset_meta_peak_memory();
  model->train();
  Tensor loss = model->loss(ids, targets);
  r.activation_bytes = meta_bytes_held() - before_step - loss.nbytes();
  loss.backward();
  r.step_peak_bytes = r.parameter_bytes + r.optimizer_bytes +
                      (meta_memory_stats().peak_allocated_bytes - before_step);
  return r;
}

namespace {

// a + k * (b - a) for counts measured at one layer (a) and two (b),
// saturating instead of wrapping.
uint64_t extrapolate(uint64_t one_layer, uint64_t two_layers, int64_t layers) {
  const uint64_t per_layer = two_layers > one_layer ? two_layers - one_layer : 0;
  uint64_t more = 0, total = 0;
  if (__builtin_mul_overflow(per_layer, uint64_t(layers - 1), &more) ||
      __builtin_add_overflow(one_layer, more, &total)) {
    return UINT64_MAX;
  }
  return total;
}

MemoryEstimate measure_on_meta(const RunConfig& config, bool with_train_step) {
  DefaultDeviceGuard on_meta(kMeta);
  MemoryEstimate m;
  const size_t empty_held = meta_bytes_held();
  const std::shared_ptr<LanguageModel> model = build_model(config.model);
  m.model_bytes = meta_bytes_held() - empty_held;
  for (const auto& [name, t] : model->state_dict()) {
    ++m.state_tensors;
    m.state_bytes += t.nbytes();
  }
  if (with_train_step) m.train_step_bytes = inspect_model(config).step_peak_bytes;
  return m;
}

}  // namespace

MemoryEstimate estimate_memory(const RunConfig& config, bool with_train_step) {
  config.model.validate();
  RunConfig one = config, two = config;
  one.model.n_layers = 1;
  two.model.n_layers = 2;
  const MemoryEstimate a = measure_on_meta(one, with_train_step);
  const MemoryEstimate b = measure_on_meta(two, with_train_step);
  const int64_t n = config.model.n_layers;
  return {extrapolate(a.model_bytes, b.model_bytes, n),
          extrapolate(a.state_tensors, b.state_tensors, n),
          extrapolate(a.state_bytes, b.state_bytes, n),
          extrapolate(a.train_step_bytes, b.train_step_bytes, n)};
}

namespace {

std::string gib(uint64_t bytes) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(2) << double(bytes) / double(uint64_t(1) << 30) << " GiB";
  return out.str();
}

}  // namespace

void check_config_fits_checkpoint(const RunConfig& config,
                                  const CheckpointState& state,
                                  const std::string& path) {
  const MemoryEstimate need = estimate_memory(config, /*with_train_step=*/false);
  uint64_t held = 0;
  for (const auto& [name, t] : state.model) held += t.nbytes();
  if (need.state_tensors != state.model.size() || need.state_bytes != held) {
    std::ostringstream msg;
    msg << path << ": its config describes a model of " << need.state_tensors << " tensors ("
        << need.state_bytes << " bytes), but the file holds " << state.model.size()
        << " model tensors (" << held
        << " bytes). Hint: the checkpoint's metadata is corrupt or was edited.";
    throw IOError(msg.str());
  }
  const size_t available = available_cpu_memory();
  if (need.model_bytes > available) {
    throw IOError(path + ": its model needs " + gib(need.model_bytes) + " of memory; " +
                  gib(available) + " is available.");
  }
}

}  // namespace stride::llama
