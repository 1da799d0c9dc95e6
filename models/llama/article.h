// The article's ladder ("Llama from scratch", Kitano 2023), reproduced
// faithfully: the same math, parameter shapes, names and counts, including
// the deviations and bugs the article's numbers depend on. See
// the article "Llama from scratch" and docs/llama.md; the correct model is in
// model.h.
//
// Shapes: B batch, T sequence length (<= context = 16), d = d_model = 128,
// H = n_heads = 8, V vocab. Parameter names are the article's
// (`llama_blocks.llama_0.attention.heads.3.w_q.weight`).
//
// Kept on purpose (each is a difference from LLaMA):
//   * ArticleRMSNorm normalises each sequence as a whole (one scalar per
//     (T, d) slab), so a token's output depends on future tokens (bug B1), and
//     its scale is per position, (context, d), with no epsilon (B2);
//   * blocks overwrite the residual stream: x = norm(x); x = x + f(x) (B3),
//     with one norm module shared by both sub-layers;
//   * H full-width heads (each with its own d x d w_q, w_k, w_v), concatenated
//     to H*d and projected back with a biased Linear, scale 1/sqrt(d);
//   * RoPE with theta_i = 10000^(-2(i-1)/d) (B5), applied as a row vector
//     q . R (a rotation by -angle);
//   * attention-probability dropout that stays on in eval mode (B4), plus
//     Dropout after the projection;
//   * SwiGLU with a learnable beta, biases, width d and no down-projection.
// Reorganised for speed only (same numbers): the H heads' q, k and v
// projections run as one linear_groups over their weights, RoPE is O(T d) on
// pairs inside the fused rotary_attention instead of the article's dense
// (T, d, d) bmm, and ArticleRMSNorm and the SwiGLU run as the fused rms_norm
// and swiglu.
#pragma once

#include <memory>

#include "llama/model.h"

namespace stride::llama {

// The article's RMSNorm: x (B, T, d) -> scale[:T] * x / rms(x_b), with
// rms(x_b) = ||x_b||_F / sqrt(T d) over each whole sequence. scale
// (context, d) = ones.
class ArticleRMSNorm : public nn::Module {
 public:
  ArticleRMSNorm(int64_t context, int64_t dim);
  Tensor forward(const Tensor& x) override;
  void reset_parameters(Generator* gen = nullptr) override;  // scale = ones
  Tensor scale;
};

// One of the article's heads: its parameters only (the multi-head module
// computes all heads at once; forward_reference runs them one by one).
class ArticleAttentionHead : public nn::Module {
 public:
  explicit ArticleAttentionHead(int64_t dim);
  std::shared_ptr<nn::Linear> w_q, w_k, w_v;
};

// RoPEMultiheadAttention / RoPEMaskedMultiheadAttention: x (B, T, d) -> (B, T, d).
class ArticleMultiheadAttention : public nn::Module {
 public:
  ArticleMultiheadAttention(const ModelConfig& config, bool causal);
  Tensor forward(const Tensor& x) override;
  // The article's computation: each head separately, outputs concatenated.
  // The same numbers as forward() (tested); dropout draws differ.
  Tensor forward_reference(const Tensor& x);
  // The attention probabilities (B, H, T, T) of the last forward() when
  // recording, before dropout (as the article's debug path).
  bool record = false;
  Tensor last_probs;

  bool causal;
  double dropout_p;
  std::shared_ptr<nn::ModuleList> heads;
  std::shared_ptr<nn::Linear> linear;  // (H d) -> d, with bias
  std::shared_ptr<nn::Dropout> dropout;
  // (context, d/2), non-persistent buffers: the article's R as cos and -sin.
  Tensor rope_cos, rope_neg_sin;

 private:
  Tensor rotate(const Tensor& x) const;  // (..., T, d), rotation by -p theta_i
  Tensor attend(const Tensor& q, const Tensor& k, const Tensor& v);
};

// The article's SwiGLU(size): linear_gate(x) * sigmoid(beta * linear_gate(x)) * linear(x).
class ArticleSwiGLU : public nn::Module {
 public:
  explicit ArticleSwiGLU(int64_t size);
  Tensor forward(const Tensor& x) override;
  void reset_parameters(Generator* gen = nullptr) override;  // beta = 1
  Tensor beta;                                               // (1) = 1, learnable
  std::shared_ptr<nn::Linear> linear_gate, linear;
};

// SimpleBrokenModel (softmax output), SimpleModel, SimpleModel_RMS:
// embedding -> [ArticleRMSNorm] -> Linear-ReLU-Linear.
class SimpleModel : public LanguageModel {
 public:
  explicit SimpleModel(const ModelConfig& config);
  Tensor forward(const Tensor& ids) override;
  std::shared_ptr<nn::Embedding> embedding;
  std::shared_ptr<ArticleRMSNorm> rms;  // SimpleModel_RMS only
  std::shared_ptr<nn::Sequential> linear;
};

// RopeModel without mask, with mask, and with SwiGLU:
//   x = rms(emb); x = x + attn(x); x = rms(x); x = x + linear(x); last_linear(x).
class RopeModel : public LanguageModel {
 public:
  explicit RopeModel(const ModelConfig& config);
  Tensor forward(const Tensor& ids) override;
  std::shared_ptr<nn::Embedding> embedding;
  std::shared_ptr<ArticleRMSNorm> rms;
  std::shared_ptr<ArticleMultiheadAttention> rope_attention;
  std::shared_ptr<nn::Sequential> linear;  // Linear + ReLU, or Linear + ArticleSwiGLU
  std::shared_ptr<nn::Linear> last_linear;
};

class ArticleLlamaBlock : public nn::Module {
 public:
  explicit ArticleLlamaBlock(const ModelConfig& config);
  Tensor forward(const Tensor& x) override;
  std::shared_ptr<ArticleRMSNorm> rms;  // shared by both sub-layers
  std::shared_ptr<ArticleMultiheadAttention> attention;
  std::shared_ptr<nn::Sequential> feedforward;  // Linear + ArticleSwiGLU
};

// The article's Llama: embeddings -> 4 ArticleLlamaBlocks -> ffn
// (Linear, ArticleSwiGLU, Linear(d -> V)); no final norm.
class ArticleLlama : public LanguageModel {
 public:
  explicit ArticleLlama(const ModelConfig& config);
  Tensor forward(const Tensor& ids) override;
  std::shared_ptr<nn::Embedding> embeddings;
  std::shared_ptr<nn::Sequential> llama_blocks;
  std::shared_ptr<nn::Sequential> ffn;
};

}  // namespace stride::llama
