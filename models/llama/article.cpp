#include "llama/article.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "lm/registry.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"

namespace stride::llama {

namespace F = nn::functional;

// ---- ArticleRMSNorm ----

ArticleRMSNorm::ArticleRMSNorm(int64_t context, int64_t dim) : nn::Module("RMSNorm") {
  scale = register_parameter("scale", ones({context, dim}));
}

void ArticleRMSNorm::reset_parameters(Generator*) {
  NoGradGuard no_grad;
  scale.fill_(1);
}

Tensor ArticleRMSNorm::forward(const Tensor& x) {
  if (x.dim() != 3 || x.size(1) > scale.size(0) || x.size(2) != scale.size(1)) {
    throw ShapeError("[ArticleRMSNorm] expected (B, T, " + std::to_string(scale.size(1)) +
                     ") with T <= " + std::to_string(scale.size(0)) + "; got " +
                     shape_str(x.sizes()) + ".");
  }
  const int64_t B = x.size(0), T = x.size(1), d = x.size(2);
  // One root-mean-square per sequence, over all T * d entries: the article's
  // torch.linalg.norm(x, dim=(1, 2)) * (T d)^-1/2, no epsilon, times
  // scale[:T]. That is rms_norm over the (T, d) entries of a sequence as one
  // row (PyTorch's F.rms_norm with normalized_shape (T, d) and eps 0), whose
  // fused kernel makes one pass where the composed ops made five.
  return F::rms_norm(x.reshape({B, T * d}), scale.narrow(0, 0, T).reshape({T * d}), 0.0)
      .view({B, T, d});
}

// ---- attention ----

ArticleAttentionHead::ArticleAttentionHead(int64_t dim) : nn::Module("RoPEAttentionHead") {
  w_q = register_module("w_q", std::make_shared<nn::Linear>(dim, dim, false));
  w_k = register_module("w_k", std::make_shared<nn::Linear>(dim, dim, false));
  w_v = register_module("w_v", std::make_shared<nn::Linear>(dim, dim, false));
}

namespace {

// The article's get_rotary_matrix as float32 (context, d / 2) tables of cos
// and -sin: theta_i = 10000^(-2 (i - 1) / d) (its off-by-one), angles in
// float64. Built on meta (a memory estimate), they have shapes only: their
// values would cost time and host memory in proportion to the context.
std::pair<Tensor, Tensor> article_rope_tables(int64_t context, int64_t d) {
  if (default_device().is_meta()) return {empty({context, d / 2}), empty({context, d / 2})};
  std::vector<double> cos_table(size_t(context * d / 2)), neg_sin_table(cos_table.size());
  for (int64_t p = 0; p < context; ++p) {
    for (int64_t i = 0; i < d / 2; ++i) {
      const double angle = double(p) * std::pow(10000.0, -2.0 * double(i - 1) / double(d));
      cos_table[size_t(p * d / 2 + i)] = std::cos(angle);
      neg_sin_table[size_t(p * d / 2 + i)] = -std::sin(angle);
    }
  }
  return {tensor<double>(cos_table, {context, d / 2}).to(kFloat32),
          tensor<double>(neg_sin_table, {context, d / 2}).to(kFloat32)};
}

}  // namespace

ArticleMultiheadAttention::ArticleMultiheadAttention(const ModelConfig& config, bool is_causal)
    : nn::Module(is_causal ? "RoPEMaskedMultiheadAttention" : "RoPEMultiheadAttention"),
      causal(is_causal),
      dropout_p(config.dropout) {
  const int64_t d = config.d_model, H = config.n_heads, cw = config.context;
  heads = register_module("heads", std::make_shared<nn::ModuleList>());
  for (int64_t h = 0; h < H; ++h) heads->push_back(std::make_shared<ArticleAttentionHead>(d));
  linear = register_module("linear", std::make_shared<nn::Linear>(H * d, d));
  dropout = register_module("dropout", std::make_shared<nn::Dropout>(config.dropout));
  const auto [cos, neg_sin] = article_rope_tables(cw, d);
  rope_cos = register_buffer("rope_cos", cos, /*persistent=*/false);
  rope_neg_sin = register_buffer("rope_neg_sin", neg_sin, /*persistent=*/false);
}

Tensor ArticleMultiheadAttention::rotate(const Tensor& x) const {
  // The article multiplies the row vector x[p] by R[p], whose 2x2 block for
  // pair i is [[cos, -sin], [sin, cos]]: (a, b) -> (a cos + b sin, b cos - a sin),
  // the rotation by -angle of interleaved pairs.
  const int64_t T = x.size(-2);
  return F::rotary_embedding(x, rope_cos.narrow(0, 0, T), rope_neg_sin.narrow(0, 0, T));
}

Tensor ArticleMultiheadAttention::attend(const Tensor& q, const Tensor& k, const Tensor& v) {
  // SDPA with the article's constant dropout_p: it drops probabilities in
  // eval mode too (bug B4), so that is what we do.
  if (!record) {
    return F::scaled_dot_product_attention(q, k, v, {}, dropout_p, causal);
  }
  const int64_t T = q.size(-2);
  Tensor scores = q.matmul(k.transpose(-2, -1)) * (1.0 / std::sqrt(double(q.size(-1))));
  if (causal) {
    scores =
        scores.masked_fill(ones({T, T}, TensorOptions(kBool).device(q.device())).tril().eq(false),
                           -std::numeric_limits<double>::infinity());
  }
  Tensor probs = scores.softmax(-1);
  last_probs = probs.detach();
  return F::dropout(probs, dropout_p, /*training=*/true).matmul(v);
}

Tensor ArticleMultiheadAttention::forward(const Tensor& x) {
  const int64_t B = x.size(0), T = x.size(1), d = x.size(2), H = int64_t(heads->size());
  // All heads of a projection in one op, the parameters staying per head:
  // each head's product goes into its columns, its gradient into its own .grad.
  std::vector<Tensor> wq, wk, wv;
  for (int64_t h = 0; h < H; ++h) {
    const auto& head = heads->at<ArticleAttentionHead>(h);
    wq.push_back(head->w_q->weight);
    wk.push_back(head->w_k->weight);
    wv.push_back(head->w_v->weight);
  }
  // q, k and v as one op, which also sums x's three gradients itself.
  const std::vector<Tensor> qkv = F::linear_groups(x, {wq, wk, wv});
  auto by_head = [&](const Tensor& t) { return t.view({B, T, H, d}).transpose(1, 2); };
  Tensor q = by_head(qkv[0]), k = by_head(qkv[1]), v = by_head(qkv[2]), y;  // (B, H, T, d)
  if (record) {
    y = attend(rotate(q), rotate(k), v);
  } else {
    // attend(rotate(q), rotate(k), v) in one kernel (Note [Rotary attention]).
    y = F::rotary_attention(q, k, v, rope_cos.narrow(0, 0, T), rope_neg_sin.narrow(0, 0, T),
                            F::RopeConvention::Interleaved, dropout_p, causal);
  }
  // (B, H, T, d) -> (B, T, H d): torch.cat of the head outputs along the last dim.
  return dropout->call(linear->call(y.transpose(1, 2).reshape({B, T, H * d})));
}

Tensor ArticleMultiheadAttention::forward_reference(const Tensor& x) {
  std::vector<Tensor> outs;
  for (int64_t h = 0; h < int64_t(heads->size()); ++h) {
    const auto& head = heads->at<ArticleAttentionHead>(h);
    outs.push_back(
        attend(rotate(head->w_q->call(x)), rotate(head->w_k->call(x)), head->w_v->call(x)));
  }
  return dropout->call(linear->call(cat(outs, -1)));
}

// ---- SwiGLU ----

ArticleSwiGLU::ArticleSwiGLU(int64_t size) : nn::Module("SwiGLU") {
  beta = register_parameter("beta", ones({1}));
  linear_gate = register_module("linear_gate", std::make_shared<nn::Linear>(size, size));
  linear = register_module("linear", std::make_shared<nn::Linear>(size, size));
}

void ArticleSwiGLU::reset_parameters(Generator*) {
  NoGradGuard no_grad;
  beta.fill_(1);
}

Tensor ArticleSwiGLU::forward(const Tensor& x) {
  // The article evaluates linear_gate(x) twice; once gives the same value.
  // F::swiglu with beta is g * sigmoid(beta * g) * u in one pass each way.
  return F::swiglu(linear_gate->call(x), linear->call(x), beta);
}

// ---- models ----

namespace {

const char* simple_name(const std::string& arch) {
  if (arch == "simple_broken") return "SimpleBrokenModel";
  if (arch == "simple_rms") return "SimpleModel_RMS";
  return "SimpleModel";
}

}  // namespace

SimpleModel::SimpleModel(const ModelConfig& config)
    : LanguageModel(simple_name(config.arch), config) {
  const int64_t d = config.d_model, V = config.vocab_size;
  embedding = register_module("embedding", std::make_shared<nn::Embedding>(V, d));
  if (config.arch == "simple_rms") {
    rms = register_module("rms", std::make_shared<ArticleRMSNorm>(config.context, d));
  }
  linear = register_module("linear",
                           std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(d, d),
                                                            std::make_shared<nn::ReLU>(),
                                                            std::make_shared<nn::Linear>(d, V)));
}

Tensor SimpleModel::forward(const Tensor& ids) {
  check_ids(ids);
  Tensor x = embedding->call(ids);
  if (rms) x = rms->call(x);
  Tensor a = linear->call(x);
  // SimpleBrokenModel's bug, kept: it returns softmax(a), and the loss then
  // treats these probabilities as logits.
  return config().arch == "simple_broken" ? a.softmax(-1) : a;
}

RopeModel::RopeModel(const ModelConfig& config) : LanguageModel("RopeModel", config) {
  const int64_t d = config.d_model, V = config.vocab_size;
  embedding = register_module("embedding", std::make_shared<nn::Embedding>(V, d));
  rms = register_module("rms", std::make_shared<ArticleRMSNorm>(config.context, d));
  rope_attention = register_module("rope_attention", std::make_shared<ArticleMultiheadAttention>(
                                                         config, config.arch != "rope_nomask"));
  auto ffn = std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(d, d));
  if (config.arch == "rope_swiglu") {
    ffn->push_back(std::make_shared<ArticleSwiGLU>(d));
  } else {
    ffn->push_back(std::make_shared<nn::ReLU>());
  }
  linear = register_module("linear", ffn);
  last_linear = register_module("last_linear", std::make_shared<nn::Linear>(d, V));
}

Tensor RopeModel::forward(const Tensor& ids) {
  check_ids(ids);
  rope_attention->record = record_attention_;
  Tensor x = rms->call(embedding->call(ids));
  x = x + rope_attention->call(x);
  attention_maps_.clear();
  if (record_attention_) attention_maps_.push_back(rope_attention->last_probs);
  x = rms->call(x);
  x = x + linear->call(x);
  return last_linear->call(x);
}

ArticleLlamaBlock::ArticleLlamaBlock(const ModelConfig& config) : nn::Module("LlamaBlock") {
  const int64_t d = config.d_model;
  rms = register_module("rms", std::make_shared<ArticleRMSNorm>(config.context, d));
  attention =
      register_module("attention", std::make_shared<ArticleMultiheadAttention>(config, true));
  feedforward = register_module(
      "feedforward", std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(d, d),
                                                      std::make_shared<ArticleSwiGLU>(d)));
}

Tensor ArticleLlamaBlock::forward(const Tensor& x_in) {
  // The article's wiring (B3): the normalised tensor replaces the stream.
  Tensor x = rms->call(x_in);
  x = x + attention->call(x);
  x = rms->call(x);
  return x + feedforward->call(x);
}

ArticleLlama::ArticleLlama(const ModelConfig& config) : LanguageModel("Llama", config) {
  const int64_t d = config.d_model, V = config.vocab_size;
  embeddings = register_module("embeddings", std::make_shared<nn::Embedding>(V, d));
  llama_blocks = register_module("llama_blocks", std::make_shared<nn::Sequential>());
  for (int64_t i = 0; i < config.n_layers; ++i) {
    llama_blocks->push_back("llama_" + std::to_string(i),
                            std::make_shared<ArticleLlamaBlock>(config));
  }
  ffn =
      register_module("ffn", std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(d, d),
                                                              std::make_shared<ArticleSwiGLU>(d),
                                                              std::make_shared<nn::Linear>(d, V)));
}

Tensor ArticleLlama::forward(const Tensor& ids) {
  check_ids(ids);
  Tensor x = embeddings->call(ids);
  attention_maps_.clear();
  for (const auto& m : *llama_blocks) {
    auto& block = static_cast<ArticleLlamaBlock&>(*m);
    block.attention->record = record_attention_;
    x = block.call(x);
    if (record_attention_) attention_maps_.push_back(block.attention->last_probs);
  }
  return ffn->call(x);
}

// ---- the ladder's architectures (lm/registry.h) ----

namespace {

void validate_ladder_stage(const ModelConfig& m) {
  lm::refuse_llama_only_settings(m);
}

void validate_rope_stage(const ModelConfig& m) {
  lm::require_config(m.d_model % 2 == 0, "RoPE needs an even d_model");
  lm::refuse_llama_only_settings(m);
}

template <class Model>
std::shared_ptr<LanguageModel> build(const ModelConfig& config) {
  return std::make_shared<Model>(config);
}

// Each stage under its config name, in the article's order.
struct Stage {
  const char* name;
  std::shared_ptr<LanguageModel> (*build)(const ModelConfig&);
  void (*validate)(const ModelConfig&);
};
constexpr Stage kStages[] = {
    {"simple_broken", build<SimpleModel>, validate_ladder_stage},
    {"simple", build<SimpleModel>, validate_ladder_stage},
    {"simple_rms", build<SimpleModel>, validate_ladder_stage},
    {"rope_nomask", build<RopeModel>, validate_rope_stage},
    {"rope_masked", build<RopeModel>, validate_rope_stage},
    {"rope_swiglu", build<RopeModel>, validate_rope_stage},
    {"article_llama", build<ArticleLlama>, validate_rope_stage},
};

[[maybe_unused]] const bool stages_registered = [] {
  for (const Stage& stage : kStages) {
    lm::register_architecture({.name = stage.name,
                               .build = stage.build,
                               .hidden_dim = lm::swiglu_hidden_dim,
                               .validate = stage.validate});
  }
  return true;
}();

}  // namespace

}  // namespace stride::llama
