// GPT-2 (Radford et al. 2019), as Hugging Face's GPT2LMHeadModel computes it,
// and the lesson's tiny character-level GPT (configs/tiny-gpt.json) with it.
//
// Shapes: B batch, T sequence length (<= context), D d_model, H n_heads,
// Dh = D / H, V vocab_size.
//
//   h = wte(ids) + wpe(0..T-1)                      (B, T, D), then dropout
//   for each block:  h = h + attn(ln_1(h))          causal, fused q|k|v projection
//                    h = h + mlp(ln_2(h))           c_proj(gelu_tanh(c_fc x))
//   logits = ln_f(h) wte^T                          (B, T, V), the embedding tied
//
// Parameter names are Hugging Face's (`transformer.h.0.attn.c_attn.weight`,
// ...), so its checkpoints map one to one; its Conv1D layers store weights
// as (in, out), stride's Linear as (out, in), so loading and exporting
// transpose them (models/hf/hf.h).
//
// Initialisation is GPT-2's (nanoGPT's and Hugging Face's _init_weights):
// every Linear and Embedding weight ~ N(0, 0.02), the projections into the
// residual stream (attn.c_proj, mlp.c_proj) ~ N(0, 0.02 / sqrt(2 n_layers)),
// biases zero, LayerNorms one and zero. PyTorch's module defaults would give
// the tied embedding N(0, 1) and logits of standard deviation ~sqrt(d): a
// first loss of ~250 nats where the uniform guess is ln V.
#pragma once

#include <memory>

#include "lm/language_model.h"
#include "lm/normal_init.h"
#include "stride/nn/layers.h"

namespace stride::gpt {

using lm::ModelConfig;

// GPT-2's GELU, the tanh approximation ("gelu_new" in Hugging Face):
// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
Tensor gelu_tanh(const Tensor& x);

class CausalSelfAttention : public nn::Module {
 public:
  explicit CausalSelfAttention(const ModelConfig& config);
  // x (B, T, D) -> (B, T, D); with `probs`, the attention probabilities
  // (B, H, T, S) are computed explicitly and stored there. With a cache, k
  // and v are written at [offset, offset + T) and the queries attend to
  // every cached position (causal, bottom-right aligned).
  Tensor forward(const Tensor& x, Tensor* probs, Tensor* cache_k, Tensor* cache_v, int64_t offset);

  int64_t n_heads, head_dim;
  double dropout;
  std::shared_ptr<nn::Linear> c_attn, c_proj;
  std::shared_ptr<nn::Dropout> resid_dropout;
};

class MLP : public nn::Module {
 public:
  explicit MLP(const ModelConfig& config);
  Tensor forward(const Tensor& x) override;

  std::shared_ptr<nn::Linear> c_fc, c_proj;
  std::shared_ptr<nn::Dropout> dropout;
};

class Block : public nn::Module {
 public:
  explicit Block(const ModelConfig& config);
  Tensor forward(const Tensor& x, Tensor* probs, Tensor* cache_k, Tensor* cache_v, int64_t offset);

  std::shared_ptr<nn::LayerNorm> ln_1, ln_2;
  std::shared_ptr<CausalSelfAttention> attn;
  std::shared_ptr<MLP> mlp;
};

// The body ("transformer" in Hugging Face's names).
class Transformer : public nn::Module {
 public:
  explicit Transformer(const ModelConfig& config);

  std::shared_ptr<nn::Embedding> wte, wpe;
  std::shared_ptr<nn::Dropout> drop;
  std::shared_ptr<nn::ModuleList> h;
  std::shared_ptr<nn::LayerNorm> ln_f;
};

class GPT : public lm::LanguageModel {
 public:
  explicit GPT(const ModelConfig& config);
  // ids (B, T) with T <= context -> logits (B, T, V).
  Tensor forward(const Tensor& ids) override;
  // Incremental decoding (LanguageModel::forward(ids, cache)); the learned
  // positions end at the context, so a cache holds at most that many.
  bool has_kv_cache() const override { return true; }
  Tensor forward(const Tensor& ids, lm::KVCache& cache) override;
  lm::KVCache make_cache(int64_t batch, int64_t capacity = 0) const override;
  Tensor last_logits(const Tensor& ids, lm::KVCache& cache) override;

  std::shared_ptr<Transformer> transformer;
  std::shared_ptr<nn::Linear> lm_head;

 private:
  // The last block's output (B, T, D), advancing the cache when given; the
  // head (ln_f, then lm_head) makes it logits.
  Tensor hidden(const Tensor& ids, lm::KVCache* cache);
  Tensor head(const Tensor& h);
};

}  // namespace stride::gpt
