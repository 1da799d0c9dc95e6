// The interface every language model shares (the article's ladder, the
// correct Llama, GPT-2), and the cache of keys and values they decode with.
// The architectures themselves live in their own folders and add
// themselves to the registry (lm/registry.h).
#pragma once

#include <string>
#include <vector>

#include "lm/config.h"
#include "stride/nn/module.h"
#include "stride/tensor.h"

namespace stride::lm {

// Keys and values of every layer for incremental decoding: k[l], v[l] are
// (B, Hkv, capacity, Dh), Hkv the key/value heads; positions [0, length) hold
// the tokens seen so far.
struct KVCache {
  std::vector<Tensor> k, v;
  int64_t length = 0;
  int64_t capacity() const { return k.empty() ? 0 : k.front().size(2); }
};

// Puts a module in eval mode for a scope, and restores its training mode
// when the scope ends (by an exception too).
class EvalScope {
 public:
  explicit EvalScope(nn::Module& m) : m_(m), was_training_(m.is_training()) { m_.eval(); }
  ~EvalScope() { m_.train(was_training_); }
  EvalScope(const EvalScope&) = delete;
  EvalScope& operator=(const EvalScope&) = delete;

 private:
  nn::Module& m_;
  bool was_training_;
};

// A language model: ids (B, T) int64 -> (B, T, V), the tensor its loss is
// computed from: next-token logits for the causal models, every position's
// token for an encoder (is_causal() false). That is logits for every model
// except the article's SimpleBrokenModel, which (faithfully to the article)
// returns probabilities.
class LanguageModel : public nn::Module {
 public:
  LanguageModel(std::string name, ModelConfig config);
  const ModelConfig& config() const { return config_; }
  // False for an encoder (BERT), whose positions see the whole sequence: it
  // fills in masked tokens and neither generates nor trains on next tokens
  // (its architecture's `causal`, lm/registry.h).
  bool is_causal() const;
  // cross_entropy(forward(ids), targets) over all B * T positions; targets
  // equal to -100 are ignored.
  Tensor loss(const Tensor& ids, const Tensor& targets);
  // The attention probabilities of the last forward(), one (B, H, T, S)
  // tensor per attention layer, when recording is on (see record_attention);
  // models without attention return none.
  void record_attention(bool on) { record_attention_ = on; }
  const std::vector<Tensor>& attention_maps() const { return attention_maps_; }

  // Incremental decoding, in the models that have it (the correct Llama,
  // GPT-2): ids (B, T) are the tokens at positions [cache.length,
  // cache.length + T), which must stay within the cache's capacity; returns
  // their logits (B, T, V), the same as forward() on the whole sequence, and
  // advances cache.length. The others (the article's ladder) throw.
  virtual bool has_kv_cache() const { return false; }
  using nn::Module::forward;
  virtual Tensor forward(const Tensor& ids, KVCache& cache);
  // An empty cache for `batch` sequences of up to `capacity` tokens
  // (default: the context).
  virtual KVCache make_cache(int64_t batch, int64_t capacity = 0) const;
  // forward(ids, cache)'s logits at the last position alone, (B, V): what
  // generation samples from after a prefill. The models with a cache run
  // their output projection for that position only: a prompt's other rows
  // would cost T - 1 rows of the largest GEMM of a small model (GPT-2's
  // 50257-word head is a third of its multiply-adds).
  virtual Tensor last_logits(const Tensor& ids, KVCache& cache);
  // forward(ids)'s logits at `rows`, indices (R) into its B * T positions
  // flattened, (R, V): what a masked-token loss scores. By default
  // forward(ids)'s rows; an encoder runs its head on those rows alone.
  virtual Tensor logits_at(const Tensor& ids, const Tensor& rows);

 protected:
  void check_ids(const Tensor& ids) const;  // (B, T) integer ids with T <= context
  // check_cache with a cache (its capacity bounds the positions), else
  // check_ids.
  void check_input(const Tensor& ids, const KVCache* cache) const;
  // For forward(ids, cache): the cache was made for this model and batch, and
  // has room for ids.
  void check_cache(const Tensor& ids, const KVCache& cache) const;
  // Zeroed keys and values (B, kv_heads, capacity, head_dim) per layer.
  KVCache empty_cache(int64_t batch, int64_t capacity, TensorOptions options) const;
  bool record_attention_ = false;
  std::vector<Tensor> attention_maps_;

 private:
  ModelConfig config_;
};

}  // namespace stride::lm
