#include "lm/language_model.h"

#include "lm/registry.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"

namespace stride::lm {

namespace F = nn::functional;

LanguageModel::LanguageModel(std::string name, ModelConfig config)
    : nn::Module(std::move(name)), config_(std::move(config)) {
  config_.validate();
}

bool LanguageModel::is_causal() const {
  return architecture(config_.arch).causal;
}

Tensor LanguageModel::loss(const Tensor& ids, const Tensor& targets) {
  const Tensor out = (*this)(ids);
  return F::cross_entropy(out.reshape({-1, out.size(-1)}), targets.reshape({-1}));
}

Tensor LanguageModel::forward(const Tensor& /*ids*/, KVCache& /*cache*/) {
  throw ValueError("[" + name() +
                   "] has no KV cache (has_kv_cache() is false): decode with "
                   "forward(ids) over the window.");
}

Tensor LanguageModel::last_logits(const Tensor& ids, KVCache& cache) {
  return forward(ids, cache).select(1, -1);
}

Tensor LanguageModel::logits_at(const Tensor& ids, const Tensor& rows) {
  const Tensor logits = forward(ids);
  return logits.reshape({-1, logits.size(-1)}).index_select(0, rows);
}

KVCache LanguageModel::make_cache(int64_t /*batch*/, int64_t /*capacity*/) const {
  throw ValueError("[" + name() + "] has no KV cache (has_kv_cache() is false).");
}

void LanguageModel::check_cache(const Tensor& ids, const KVCache& cache) const {
  if (ids.dim() != 2 || cache.k.size() != size_t(config_.n_layers) ||
      ids.size(0) != cache.k.front().size(0)) {
    throw ShapeError("[" + name() +
                     "] the KV cache was made for another batch or model (cache "
                     "batch " +
                     std::to_string(cache.k.empty() ? 0 : cache.k.front().size(0)) + ", ids " +
                     shape_str(ids.sizes()) + "). Hint: make it with model.make_cache(batch).");
  }
  if (cache.length + ids.size(1) > cache.capacity()) {
    throw ShapeError("[" + name() + "] the KV cache holds " + std::to_string(cache.capacity()) +
                     " positions; " + std::to_string(cache.length) + " are used and " +
                     std::to_string(ids.size(1)) + " more were given.");
  }
}

KVCache LanguageModel::empty_cache(int64_t batch, int64_t capacity, TensorOptions options) const {
  KVCache cache;
  for (int64_t l = 0; l < config_.n_layers; ++l) {
    cache.k.push_back(zeros({batch, config_.kv_heads(), capacity, config_.head_dim()}, options));
    cache.v.push_back(zeros({batch, config_.kv_heads(), capacity, config_.head_dim()}, options));
  }
  return cache;
}

void LanguageModel::check_input(const Tensor& ids, const KVCache* cache) const {
  if (cache != nullptr) {
    check_cache(ids, *cache);
  } else {
    check_ids(ids);
  }
}

void LanguageModel::check_ids(const Tensor& ids) const {
  if (ids.dim() != 2 || (ids.dtype() != kInt64 && ids.dtype() != kInt32)) {
    throw ShapeError("[" + name() + "] expected token ids (B, T) of dtype int64; got " +
                     shape_str(ids.sizes()) + " " + std::string(to_string(ids.dtype())) + ".");
  }
  if (ids.size(1) > config_.context) {
    throw ShapeError("[" + name() + "] got " + std::to_string(ids.size(1)) +
                     " positions but the model's context is " + std::to_string(config_.context) +
                     ". Hint: feed at most the last `context` tokens (generation slides its "
                     "window for you).");
  }
}

}  // namespace stride::lm
