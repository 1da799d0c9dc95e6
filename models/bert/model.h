// BERT (Devlin et al. 2018) with its masked-language-model head, as Hugging
// Face's BertForMaskedLM computes it; registered as the architecture "bert"
// (lm/registry.h), an encoder: is_causal() is false.
//
// Shapes: B batch, T sequence length (<= context, the learned positions),
// D d_model, H n_heads, Dh = D / H, F the feed-forward width, V vocab_size.
//
//   h = LayerNorm(word(ids) + position(0..T-1) + token_type(types))  (B, T, D)
//   for each layer:  a = LayerNorm(h + dense(attention(h)))          no causal mask
//                    h = LayerNorm(a + dense(gelu(dense(a))))         post-norm
//   logits = LayerNorm(gelu(dense(h))) word^T + bias                  (B, T, V)
//
// GELU is the exact one (erf). Padding is masked with an attention mask
// (1 attend, 0 padding), added to the scores as Hugging Face adds it:
// float32's lowest value at the padded keys, so a row of padding alone is
// uniform, not NaN. Parameter names and the module tree are Hugging Face's
// (`bert.encoder.layer.0.attention.self.query.weight`,
// `cls.predictions.transform.dense.weight`, ...), so its checkpoints map
// one to one (models/hf/hf.h). The decoder to the vocabulary is the word
// embedding (tie_embeddings), its bias `cls.predictions.bias`.
//
// Initialisation is BERT's: Linear and Embedding weights ~ N(0, 0.02),
// biases zero, LayerNorms one and zero.
#pragma once

#include <memory>

#include "lm/language_model.h"
#include "stride/nn/layers.h"

namespace stride::bert {

using lm::ModelConfig;

// The inputs of one forward beside the ids, each (B, T) or undefined:
// token_type_ids, each token's segment (default 0), and attention_mask, 1
// where a token is attended to and 0 at padding (default: no padding).
struct Inputs {
  Tensor token_type_ids;
  Tensor attention_mask;
};

class Embeddings : public nn::Module {
 public:
  explicit Embeddings(const ModelConfig& config);
  Tensor forward(const Tensor& ids, const Tensor& token_type_ids);

  std::shared_ptr<nn::Embedding> word_embeddings, position_embeddings, token_type_embeddings;
  std::shared_ptr<nn::LayerNorm> LayerNorm;
  std::shared_ptr<nn::Dropout> dropout;
};

class SelfAttention : public nn::Module {
 public:
  explicit SelfAttention(const ModelConfig& config);
  // x (B, T, D) -> (B, T, D) before the output projection; `mask` is
  // additive, (B, 1, 1, T), or undefined. With `probs`, the attention
  // probabilities (B, H, T, T) are computed explicitly and stored there.
  Tensor forward(const Tensor& x, const Tensor& mask, Tensor* probs);

  int64_t n_heads, head_dim;
  double dropout;
  std::shared_ptr<nn::Linear> query, key, value;
};

// LayerNorm(residual + dropout(dense(x))): how both halves of a layer end
// (Hugging Face's BertSelfOutput and BertOutput).
class Output : public nn::Module {
 public:
  Output(const ModelConfig& config, int64_t in);
  Tensor forward(const Tensor& x, const Tensor& residual);

  std::shared_ptr<nn::Linear> dense;
  std::shared_ptr<nn::LayerNorm> LayerNorm;
  std::shared_ptr<nn::Dropout> dropout;
};

class Attention : public nn::Module {
 public:
  explicit Attention(const ModelConfig& config);
  Tensor forward(const Tensor& x, const Tensor& mask, Tensor* probs);

  // `self` is Hugging Face's name for it.
  std::shared_ptr<SelfAttention> self;
  std::shared_ptr<Output> output;
};

class Intermediate : public nn::Module {
 public:
  explicit Intermediate(const ModelConfig& config);
  Tensor forward(const Tensor& x) override;  // gelu(dense(x))

  std::shared_ptr<nn::Linear> dense;
};

class Layer : public nn::Module {
 public:
  explicit Layer(const ModelConfig& config);
  Tensor forward(const Tensor& x, const Tensor& mask, Tensor* probs);

  std::shared_ptr<Attention> attention;
  std::shared_ptr<Intermediate> intermediate;
  std::shared_ptr<Output> output;
};

class Encoder : public nn::Module {
 public:
  explicit Encoder(const ModelConfig& config);

  std::shared_ptr<nn::ModuleList> layer;
};

// Hugging Face's BertModel without its pooler (BertForMaskedLM has none).
class BertModel : public nn::Module {
 public:
  explicit BertModel(const ModelConfig& config);

  std::shared_ptr<Embeddings> embeddings;
  std::shared_ptr<Encoder> encoder;
};

// LayerNorm(gelu(dense(h))): the prediction head's transform.
class HeadTransform : public nn::Module {
 public:
  explicit HeadTransform(const ModelConfig& config);
  Tensor forward(const Tensor& x) override;

  std::shared_ptr<nn::Linear> dense;
  std::shared_ptr<nn::LayerNorm> LayerNorm;
};

class Predictions : public nn::Module {
 public:
  explicit Predictions(const ModelConfig& config);
  Tensor forward(const Tensor& h) override;  // (..., D) -> (..., V)

  Tensor bias;  // (V), the decoder's
  std::shared_ptr<HeadTransform> transform;
  std::shared_ptr<nn::Linear> decoder;
};

// Hugging Face's BertOnlyMLMHead.
class MaskedLMHead : public nn::Module {
 public:
  explicit MaskedLMHead(const ModelConfig& config);

  std::shared_ptr<Predictions> predictions;
};

class BertForMaskedLM : public lm::LanguageModel {
 public:
  explicit BertForMaskedLM(const ModelConfig& config);
  using lm::LanguageModel::forward;
  // ids (B, T) with T <= context -> logits (B, T, V): one segment (token
  // type 0), no padding.
  Tensor forward(const Tensor& ids) override;
  Tensor forward(const Tensor& ids, const Inputs& inputs);
  // The encoder's last hidden states (B, T, D), before the head.
  Tensor encode(const Tensor& ids, const Inputs& inputs = {});
  // The head runs on `rows` alone (LanguageModel::logits_at).
  Tensor logits_at(const Tensor& ids, const Tensor& rows) override;

  std::shared_ptr<BertModel> bert;
  std::shared_ptr<MaskedLMHead> cls;

 private:
  void check_inputs(const Tensor& ids, const Inputs& inputs) const;
};

}  // namespace stride::bert
