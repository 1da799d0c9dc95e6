// The correct Llama, registered as the architecture "llama" (lm/registry.h).
//
// Shapes: B batch, T sequence length (<= context), D d_model, H n_heads,
// Dh = D / H head_dim, Hkv key/value heads (n_kv_heads; H with multi-head
// attention), F SwiGLU hidden width, V vocab_size.
//
//   h = tok_embeddings(ids)                                  (B, T, D)
//   for each layer:  h = h + attention(attention_norm(h))    causal, RoPE on q and k
//                    h = h + feed_forward(ffn_norm(h))       w2(silu(w1 h) * w3 h)
//   logits = output(norm(h))                                 (B, T, V)
//
// Parameter names follow Meta's reference implementation
// (`layers.0.attention.wq.weight`, `layers.0.feed_forward.w1.weight`, ...),
// so a state_dict maps one to one onto a PyTorch port.
#pragma once

#include <memory>
#include <vector>

#include "lm/config.h"
#include "lm/language_model.h"
#include "stride/nn/functional.h"
#include "stride/nn/layers.h"
#include "stride/nn/module.h"
#include "stride/tensor.h"

namespace stride::llama {

// The model layer's names this folder builds on.
using lm::KVCache;
using lm::LanguageModel;
using lm::ModelConfig;

// The positions [offset, offset + T) a forward runs at, with their RoPE
// tables (F::rotary_tables, (T, head_dim / 2) each), made once for all layers.
struct Positions {
  // The tables live on `device`, the device of the model's activations.
  Positions(int64_t T, const ModelConfig& config, int64_t first, Device device = Device(kCPU));
  int64_t offset;
  Tensor cos, sin;
};

class Attention : public nn::Module {
 public:
  explicit Attention(const ModelConfig& config);
  // x (B, T, D) at positions `at` -> (B, T, D). With a cache, k and v are
  // appended at at.offset = cache->length and the queries attend to every
  // cached position (causal, bottom-right aligned).
  Tensor forward(
      const Tensor& x, const Positions& at, Tensor* cache_k, Tensor* cache_v, Tensor* probs);

  int64_t n_heads, n_kv_heads, head_dim;
  nn::functional::RopeConvention rope;
  std::shared_ptr<nn::Linear> wq, wk, wv, wo;
};

class FeedForward : public nn::Module {
 public:
  FeedForward(int64_t dim, int64_t hidden);
  Tensor forward(const Tensor& x) override;  // w2(silu(w1 x) * w3 x)
  std::shared_ptr<nn::Linear> w1, w2, w3;
};

class TransformerBlock : public nn::Module {
 public:
  explicit TransformerBlock(const ModelConfig& config);
  Tensor forward(
      const Tensor& x, const Positions& at, Tensor* cache_k, Tensor* cache_v, Tensor* probs);

  std::shared_ptr<Attention> attention;
  std::shared_ptr<FeedForward> feed_forward;
  std::shared_ptr<nn::RMSNorm> attention_norm, ffn_norm;
};

class Llama : public LanguageModel {
 public:
  explicit Llama(const ModelConfig& config);
  // ids (B, T) with T <= context -> logits (B, T, V).
  Tensor forward(const Tensor& ids) override;
  // Incremental decoding (LanguageModel::forward(ids, cache)).
  bool has_kv_cache() const override { return true; }
  Tensor forward(const Tensor& ids, KVCache& cache) override;
  KVCache make_cache(int64_t batch, int64_t capacity = 0) const override;
  Tensor last_logits(const Tensor& ids, KVCache& cache) override;

  std::shared_ptr<nn::Embedding> tok_embeddings;
  std::shared_ptr<nn::ModuleList> layers;
  std::shared_ptr<nn::RMSNorm> norm;
  std::shared_ptr<nn::Linear> output;

 private:
  // The last layer's output (B, T, D), advancing the cache when given; the
  // head (norm, then the output projection) makes it logits.
  Tensor hidden(const Tensor& ids, KVCache* cache);
  Tensor head(const Tensor& h);
};

}  // namespace stride::llama
