#include "bert/model.h"

#include <cmath>
#include <limits>
#include <string>

#include "lm/normal_init.h"
#include "lm/registry.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"

namespace stride::bert {

namespace F = nn::functional;

namespace {

constexpr double kInitStd = 0.02;  // Hugging Face's initializer_range

std::shared_ptr<nn::Linear> linear(int64_t in, int64_t out) {
  return std::make_shared<lm::NormalLinear>(in, out, /*with_bias=*/true, kInitStd);
}

std::shared_ptr<nn::LayerNorm> layer_norm(const ModelConfig& config) {
  return std::make_shared<nn::LayerNorm>(std::vector<int64_t>{config.d_model}, config.norm_eps);
}

// The attention mask (B, T) as scores add it, (B, 1, 1, T): 0 at the tokens
// attended to, float32's lowest value at padding (Hugging Face's
// (1 - mask) * finfo.min).
Tensor additive_mask(const Tensor& attention_mask, const TensorOptions& options) {
  const int64_t B = attention_mask.size(0), T = attention_mask.size(1);
  const Tensor padding = attention_mask.eq(0).view({B, 1, 1, T});
  return zeros({B, 1, 1, T}, options)
      .masked_fill(padding, double(std::numeric_limits<float>::lowest()));
}

}  // namespace

Embeddings::Embeddings(const ModelConfig& config) : nn::Module("BertEmbeddings") {
  word_embeddings = register_module(
      "word_embeddings",
      std::make_shared<lm::NormalEmbedding>(config.vocab_size, config.d_model, kInitStd));
  position_embeddings = register_module(
      "position_embeddings",
      std::make_shared<lm::NormalEmbedding>(config.context, config.d_model, kInitStd));
  token_type_embeddings = register_module(
      "token_type_embeddings",
      std::make_shared<lm::NormalEmbedding>(config.type_vocab_size, config.d_model, kInitStd));
  LayerNorm = register_module("LayerNorm", layer_norm(config));
  dropout = register_module("dropout", std::make_shared<nn::Dropout>(config.dropout));
}

Tensor Embeddings::forward(const Tensor& ids, const Tensor& token_type_ids) {
  const int64_t T = ids.size(1);
  const Tensor positions = arange(0, T, 1, kInt64).to(ids.device());
  Tensor h = word_embeddings->call(ids) + position_embeddings->call(positions);
  // Without types every token is of type 0: one row, broadcast.
  h = token_type_ids.defined() ? h + token_type_embeddings->call(token_type_ids)
                               : h + token_type_embeddings->weight.select(0, 0);
  return dropout->call(LayerNorm->call(h));
}

SelfAttention::SelfAttention(const ModelConfig& config)
    : nn::Module("BertSelfAttention"),
      n_heads(config.n_heads),
      head_dim(config.head_dim()),
      dropout(config.dropout) {
  query = register_module("query", linear(config.d_model, config.d_model));
  key = register_module("key", linear(config.d_model, config.d_model));
  value = register_module("value", linear(config.d_model, config.d_model));
}

Tensor SelfAttention::forward(const Tensor& x, const Tensor& mask, Tensor* probs) {
  const int64_t B = x.size(0), T = x.size(1), D = n_heads * head_dim;
  auto heads = [&](nn::Linear& projection) {
    return projection.call(x).view({B, T, n_heads, head_dim}).transpose(1, 2);
  };
  const Tensor q = heads(*query), k = heads(*key), v = heads(*value);
  const double p = is_training() ? dropout : 0.0;
  Tensor y;
  if (probs) {
    Tensor scores = q.matmul(k.transpose(-2, -1)) * (1.0 / std::sqrt(double(head_dim)));
    if (mask.defined()) scores = scores + mask;
    *probs = scores.softmax(-1);
    y = F::dropout(*probs, p, is_training()).matmul(v);
  } else {
    // Without a mask, the fused kernel.
    y = F::scaled_dot_product_attention(q, k, v, mask, p, /*is_causal=*/false);
  }
  return y.transpose(1, 2).reshape({B, T, D});
}

Output::Output(const ModelConfig& config, int64_t in) : nn::Module("BertOutput") {
  dense = register_module("dense", linear(in, config.d_model));
  LayerNorm = register_module("LayerNorm", layer_norm(config));
  dropout = register_module("dropout", std::make_shared<nn::Dropout>(config.dropout));
}

Tensor Output::forward(const Tensor& x, const Tensor& residual) {
  return LayerNorm->call(dropout->call(dense->call(x)) + residual);
}

Attention::Attention(const ModelConfig& config) : nn::Module("BertAttention") {
  self = register_module("self", std::make_shared<SelfAttention>(config));
  output = register_module("output", std::make_shared<Output>(config, config.d_model));
}

Tensor Attention::forward(const Tensor& x, const Tensor& mask, Tensor* probs) {
  return output->forward(self->forward(x, mask, probs), x);
}

Intermediate::Intermediate(const ModelConfig& config) : nn::Module("BertIntermediate") {
  dense = register_module("dense", linear(config.d_model, config.hidden_dim()));
}

Tensor Intermediate::forward(const Tensor& x) {
  return F::gelu(dense->call(x));
}

Layer::Layer(const ModelConfig& config) : nn::Module("BertLayer") {
  attention = register_module("attention", std::make_shared<Attention>(config));
  intermediate = register_module("intermediate", std::make_shared<Intermediate>(config));
  output = register_module("output", std::make_shared<Output>(config, config.hidden_dim()));
}

Tensor Layer::forward(const Tensor& x, const Tensor& mask, Tensor* probs) {
  const Tensor attended = attention->forward(x, mask, probs);
  return output->forward(intermediate->call(attended), attended);
}

Encoder::Encoder(const ModelConfig& config) : nn::Module("BertEncoder") {
  layer = register_module("layer", std::make_shared<nn::ModuleList>());
  for (int64_t i = 0; i < config.n_layers; ++i) layer->push_back(std::make_shared<Layer>(config));
}

BertModel::BertModel(const ModelConfig& config) : nn::Module("BertModel") {
  embeddings = register_module("embeddings", std::make_shared<Embeddings>(config));
  encoder = register_module("encoder", std::make_shared<Encoder>(config));
}

HeadTransform::HeadTransform(const ModelConfig& config)
    : nn::Module("BertPredictionHeadTransform") {
  dense = register_module("dense", linear(config.d_model, config.d_model));
  LayerNorm = register_module("LayerNorm", layer_norm(config));
}

Tensor HeadTransform::forward(const Tensor& x) {
  return LayerNorm->call(F::gelu(dense->call(x)));
}

Predictions::Predictions(const ModelConfig& config) : nn::Module("BertLMPredictionHead") {
  bias = register_parameter("bias", zeros({config.vocab_size}));
  transform = register_module("transform", std::make_shared<HeadTransform>(config));
  decoder = register_module("decoder", std::make_shared<lm::NormalLinear>(
                                           config.d_model, config.vocab_size, false, kInitStd));
}

Tensor Predictions::forward(const Tensor& h) {
  return decoder->call(transform->call(h)) + bias;
}

MaskedLMHead::MaskedLMHead(const ModelConfig& config) : nn::Module("BertOnlyMLMHead") {
  predictions = register_module("predictions", std::make_shared<Predictions>(config));
}

BertForMaskedLM::BertForMaskedLM(const ModelConfig& config)
    : LanguageModel("BertForMaskedLM", config) {
  bert = register_module("bert", std::make_shared<BertModel>(config));
  cls = register_module("cls", std::make_shared<MaskedLMHead>(config));
  if (config.tie_embeddings) {
    Predictions& p = *cls->predictions;
    p.decoder->weight =
        p.decoder->replace_parameter("weight", bert->embeddings->word_embeddings->weight);
  }
}

Tensor BertForMaskedLM::forward(const Tensor& ids) {
  return forward(ids, Inputs{});
}

Tensor BertForMaskedLM::forward(const Tensor& ids, const Inputs& inputs) {
  return cls->predictions->call(encode(ids, inputs));
}

Tensor BertForMaskedLM::logits_at(const Tensor& ids, const Tensor& rows) {
  const Tensor h = encode(ids);
  return cls->predictions->call(h.reshape({-1, h.size(-1)}).index_select(0, rows));
}

Tensor BertForMaskedLM::encode(const Tensor& ids, const Inputs& inputs) {
  check_inputs(ids, inputs);
  attention_maps_.clear();
  Tensor h = bert->embeddings->forward(ids, inputs.token_type_ids);
  const Tensor mask = inputs.attention_mask.defined()
                          ? additive_mask(inputs.attention_mask.to(ids.device()), h.options())
                          : Tensor();
  for (int64_t l = 0; l < int64_t(bert->encoder->layer->size()); ++l) {
    Tensor probs;
    h = bert->encoder->layer->at<Layer>(l)->forward(h, mask, record_attention_ ? &probs : nullptr);
    if (record_attention_) attention_maps_.push_back(probs.detach());
  }
  return h;
}

void BertForMaskedLM::check_inputs(const Tensor& ids, const Inputs& inputs) const {
  check_ids(ids);
  for (const auto& [name, t] : {std::pair{"token_type_ids", inputs.token_type_ids},
                                std::pair{"attention_mask", inputs.attention_mask}}) {
    if (t.defined() && !(t.sizes() == ids.sizes())) {
      throw ShapeError("[BertForMaskedLM] " + std::string(name) + " must have the ids' shape " +
                       shape_str(ids.sizes()) + "; got " + shape_str(t.sizes()) + ".");
    }
  }
}

// ---- the architecture (lm/registry.h) ----

namespace {

void validate_bert(const ModelConfig& m) {
  lm::refuse_llama_only_settings(m);
  lm::require_config(m.d_model % m.n_heads == 0, "d_model (" + std::to_string(m.d_model) +
                                                     ") must be divisible by n_heads (" +
                                                     std::to_string(m.n_heads) + ")");
  lm::require_config(m.type_vocab_size > 0,
                     "bert needs type_vocab_size >= 1 (the rows of its token-type embedding)");
}

}  // namespace

STRIDE_REGISTER_ARCHITECTURE(bert,
                             {.name = "bert",
                              .build =
                                  [](const ModelConfig& c) -> std::shared_ptr<lm::LanguageModel> {
                                return std::make_shared<BertForMaskedLM>(c);
                              },
                              .hidden_dim = lm::four_times_width,
                              .validate = validate_bert,
                              .causal = false,
                              .token_types = true});

}  // namespace stride::bert
