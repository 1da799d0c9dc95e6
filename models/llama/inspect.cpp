#include "llama/inspect.h"

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

}  // namespace stride::llama
