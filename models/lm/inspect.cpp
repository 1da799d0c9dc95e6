#include "lm/inspect.h"

#include <iomanip>
#include <sstream>

#include "lm/language_model.h"
#include "lm/registry.h"
#include "stride/allocator.h"
#include "stride/autograd.h"
#include "stride/ops.h"

namespace stride::lm {

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

ModelInspection inspect_model(const RunConfig& config, int64_t batch, int64_t length) {
  DefaultDeviceGuard on_meta(kMeta);
  ModelInspection r;
  const size_t empty_held = meta_bytes_held();
  const std::shared_ptr<LanguageModel> model = build_model(config.model);
  r.parameter_bytes = meta_bytes_held() - empty_held;
  r.parameters = describe_parameters(*model);
  r.parameter_count = model->num_parameters();
  r.gradient_bytes = trainable_bytes(*model);
  r.optimizer_bytes = 2 * r.gradient_bytes;  // Adam and AdamW: two moments

  const int64_t B = batch > 0 ? batch : config.train.batch_size;
  const int64_t T = length > 0 ? length : config.model.context;
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

// The most a no-grad forward of `model` over (B, T) holds at once, beside
// what is held before it; with a KV cache of (B, T) first where `cached`.
uint64_t forward_peak_bytes(LanguageModel& model, int64_t B, int64_t T, bool cached) {
  NoGradGuard no_grad;
  model.eval();
  const size_t before = meta_bytes_held();
  reset_meta_peak_memory();
  const Tensor ids = zeros({B, T}, kInt64);
  if (cached && model.has_kv_cache()) {
    KVCache cache = model.make_cache(B, T);
    model.forward(ids, cache);
  } else {
    model.forward(ids);
  }
  return meta_memory_stats().peak_allocated_bytes - before;
}

uint64_t workload_peak_bytes(LanguageModel& model,
                             const RunConfig& config,
                             const Workload& w,
                             uint64_t model_bytes) {
  const int64_t B = w.batch_of(config), T = w.length_of(config);
  switch (w.kind) {
    case Workload::Kind::Model:
      return model_bytes;
    case Workload::Kind::Training:
      return inspect_model(config, B, T).step_peak_bytes;
    case Workload::Kind::Evaluation:
      return model_bytes + forward_peak_bytes(model, B, T, /*cached=*/false);
    case Workload::Kind::Generation:
      return model_bytes + forward_peak_bytes(model, B, T, /*cached=*/true);
  }
  return model_bytes;
}

MemoryEstimate measure_on_meta(const RunConfig& config, const Workload& workload) {
  DefaultDeviceGuard on_meta(kMeta);
  MemoryEstimate m;
  const size_t empty_held = meta_bytes_held();
  const std::shared_ptr<LanguageModel> model = build_model(config.model);
  m.model_bytes = meta_bytes_held() - empty_held;
  for (const auto& [name, t] : model->state_dict()) {
    ++m.state_tensors;
    m.state_bytes += t.nbytes();
  }
  m.peak_bytes = workload_peak_bytes(*model, config, workload, m.model_bytes);
  return m;
}

std::string sizes_of(const RunConfig& config, const Workload& w) {
  const ModelConfig& m = config.model;
  std::ostringstream out;
  out << "model.vocab_size " << m.vocab_size << ", d_model " << m.d_model << ", n_layers "
      << m.n_layers << ", n_heads " << m.n_heads << ", ffn_hidden " << m.ffn_hidden << ", context "
      << m.context;
  if (w.kind != Workload::Kind::Model) {
    out << "; " << w.batch_of(config) << " sequences of " << w.length_of(config) << " tokens";
  }
  return out.str();
}

}  // namespace

int64_t Workload::batch_of(const RunConfig& config) const {
  if (batch > 0) return batch;
  return kind == Kind::Generation ? 1 : config.train.batch_size;
}

int64_t Workload::length_of(const RunConfig& config) const {
  return length > 0 ? length : config.model.context;
}

MemoryEstimate estimate_memory(const RunConfig& config, const Workload& workload) {
  config.model.validate();
  RunConfig one = config, two = config;
  one.model.n_layers = 1;
  two.model.n_layers = 2;
  MemoryEstimate a, b;
  try {
    a = measure_on_meta(one, workload);
    b = measure_on_meta(two, workload);
  } catch (const ShapeError& e) {
    throw ConfigError("this config's sizes (" + sizes_of(config, workload) +
                      ") give tensors larger than int64 can count: " + e.what() +
                      " Hint: check the sizes for a typo.");
  }
  const int64_t n = config.model.n_layers;
  return {extrapolate(a.model_bytes, b.model_bytes, n),
          extrapolate(a.state_tensors, b.state_tensors, n),
          extrapolate(a.state_bytes, b.state_bytes, n), extrapolate(a.peak_bytes, b.peak_bytes, n)};
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
  const MemoryEstimate need = estimate_memory(config);
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

}  // namespace stride::lm
