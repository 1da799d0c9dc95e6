#include "gpt/model.h"

#include <cmath>
#include <limits>
#include <numbers>
#include <optional>
#include <string>

#include "lm/registry.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"

namespace stride::gpt {

namespace F = nn::functional;

Tensor gelu_tanh(const Tensor& x) {
  // The formula as Hugging Face's NewGELUActivation writes it, so that the
  // float32 roundings are the same.
  const double k = std::sqrt(2.0 / std::numbers::pi);
  return x * 0.5 * ((x + x * x * x * 0.044715) * k).tanh().add(1.0);
}

namespace {

constexpr double kInitStd = 0.02;

// The projections that add into the residual stream: two per block, so
// their sum's variance does not grow with depth (GPT-2's paper, section 2.3).
double residual_std(const ModelConfig& config) {
  return kInitStd / std::sqrt(2.0 * double(config.n_layers));
}

}  // namespace

CausalSelfAttention::CausalSelfAttention(const ModelConfig& config)
    : nn::Module("CausalSelfAttention"),
      n_heads(config.n_heads),
      head_dim(config.head_dim()),
      dropout(config.dropout) {
  c_attn = register_module("c_attn", std::make_shared<lm::NormalLinear>(
                                         config.d_model, 3 * config.d_model, true, kInitStd));
  c_proj =
      register_module("c_proj", std::make_shared<lm::NormalLinear>(config.d_model, config.d_model,
                                                                   true, residual_std(config)));
  resid_dropout = register_module("resid_dropout", std::make_shared<nn::Dropout>(config.dropout));
}

Tensor CausalSelfAttention::forward(
    const Tensor& x, Tensor* probs, Tensor* cache_k, Tensor* cache_v, int64_t offset) {
  const int64_t B = x.size(0), T = x.size(1), D = n_heads * head_dim;
  const Tensor qkv = c_attn->call(x);  // (B, T, 3D): q | k | v
  auto heads = [&](int64_t part) {
    return qkv.narrow(2, part * D, D).view({B, T, n_heads, head_dim}).transpose(1, 2);
  };
  const Tensor q = heads(0);
  Tensor k = heads(1), v = heads(2);
  std::optional<F::CausalAlignment> alignment;
  if (cache_k != nullptr) {
    cache_k->narrow(2, offset, T).copy_(k);
    cache_v->narrow(2, offset, T).copy_(v);
    k = cache_k->narrow(2, 0, offset + T);
    v = cache_v->narrow(2, 0, offset + T);
    alignment = F::CausalAlignment::BottomRight;
  }
  const double p = is_training() ? dropout : 0.0;
  Tensor y;
  if (probs) {
    const int64_t S = k.size(2);
    Tensor scores = q.matmul(k.transpose(-2, -1)) * (1.0 / std::sqrt(double(head_dim)));
    const Tensor keep = ones({T, S}, TensorOptions(kBool).device(x.device())).tril(S - T);
    *probs =
        scores.masked_fill(keep.eq(false), -std::numeric_limits<double>::infinity()).softmax(-1);
    y = F::dropout(*probs, p, is_training()).matmul(v);
  } else {
    y = F::scaled_dot_product_attention(q, k, v, {}, p, /*is_causal=*/true, std::nullopt,
                                        alignment);
  }
  return resid_dropout->call(c_proj->call(y.transpose(1, 2).reshape({B, T, D})));
}

MLP::MLP(const ModelConfig& config) : nn::Module("MLP") {
  c_fc = register_module("c_fc", std::make_shared<lm::NormalLinear>(
                                     config.d_model, config.hidden_dim(), true, kInitStd));
  c_proj = register_module(
      "c_proj", std::make_shared<lm::NormalLinear>(config.hidden_dim(), config.d_model, true,
                                                   residual_std(config)));
  dropout = register_module("dropout", std::make_shared<nn::Dropout>(config.dropout));
}

Tensor MLP::forward(const Tensor& x) {
  return dropout->call(c_proj->call(gelu_tanh(c_fc->call(x))));
}

Block::Block(const ModelConfig& config) : nn::Module("Block") {
  // Hugging Face's registration order, so that state_dict lists keys as its
  // checkpoints do.
  ln_1 = register_module("ln_1", std::make_shared<nn::LayerNorm>(
                                     std::vector<int64_t>{config.d_model}, config.norm_eps));
  attn = register_module("attn", std::make_shared<CausalSelfAttention>(config));
  ln_2 = register_module("ln_2", std::make_shared<nn::LayerNorm>(
                                     std::vector<int64_t>{config.d_model}, config.norm_eps));
  mlp = register_module("mlp", std::make_shared<MLP>(config));
}

Tensor Block::forward(
    const Tensor& x, Tensor* probs, Tensor* cache_k, Tensor* cache_v, int64_t offset) {
  const Tensor h = x + attn->forward(ln_1->call(x), probs, cache_k, cache_v, offset);
  return h + mlp->call(ln_2->call(h));
}

Transformer::Transformer(const ModelConfig& config) : nn::Module("Transformer") {
  wte = register_module(
      "wte", std::make_shared<lm::NormalEmbedding>(config.vocab_size, config.d_model, kInitStd));
  wpe = register_module(
      "wpe", std::make_shared<lm::NormalEmbedding>(config.context, config.d_model, kInitStd));
  drop = register_module("drop", std::make_shared<nn::Dropout>(config.dropout));
  h = register_module("h", std::make_shared<nn::ModuleList>());
  for (int64_t i = 0; i < config.n_layers; ++i) h->push_back(std::make_shared<Block>(config));
  ln_f = register_module("ln_f", std::make_shared<nn::LayerNorm>(
                                     std::vector<int64_t>{config.d_model}, config.norm_eps));
}

GPT::GPT(const ModelConfig& config) : LanguageModel("GPT", config) {
  transformer = register_module("transformer", std::make_shared<Transformer>(config));
  lm_head = register_module("lm_head", std::make_shared<lm::NormalLinear>(
                                           config.d_model, config.vocab_size, false, kInitStd));
  if (config.tie_embeddings) {
    lm_head->weight = lm_head->replace_parameter("weight", transformer->wte->weight);
  }
}

Tensor GPT::forward(const Tensor& ids) {
  return head(hidden(ids, nullptr));
}

Tensor GPT::forward(const Tensor& ids, lm::KVCache& cache) {
  return head(hidden(ids, &cache));
}

Tensor GPT::last_logits(const Tensor& ids, lm::KVCache& cache) {
  return head(hidden(ids, &cache).select(1, -1));
}

lm::KVCache GPT::make_cache(int64_t batch, int64_t capacity) const {
  const int64_t context = config().context;
  if (capacity > context) {
    throw ValueError("[GPT] a cache of " + std::to_string(capacity) +
                     " positions outruns the learned positions (context " +
                     std::to_string(context) + ").");
  }
  return empty_cache(batch, capacity > 0 ? capacity : context, transformer->wte->weight.options());
}

Tensor GPT::hidden(const Tensor& ids, lm::KVCache* cache) {
  check_input(ids, cache);
  attention_maps_.clear();
  const int64_t offset = cache ? cache->length : 0, T = ids.size(1);
  const Tensor positions = arange(offset, offset + T, 1, kInt64).to(ids.device());
  Tensor h =
      transformer->drop->call(transformer->wte->call(ids) + transformer->wpe->call(positions));
  for (int64_t l = 0; l < int64_t(transformer->h->size()); ++l) {
    Tensor probs;
    h = transformer->h->at<Block>(l)->forward(h, record_attention_ ? &probs : nullptr,
                                              cache ? &cache->k[size_t(l)] : nullptr,
                                              cache ? &cache->v[size_t(l)] : nullptr, offset);
    if (record_attention_) attention_maps_.push_back(probs.detach());
  }
  if (cache != nullptr) cache->length += T;
  return h;
}

Tensor GPT::head(const Tensor& h) {
  return lm_head->call(transformer->ln_f->call(h));
}

// ---- the architecture (lm/registry.h) ----

namespace {

void validate_gpt2(const ModelConfig& m) {
  lm::refuse_llama_only_settings(m);
  lm::require_config(m.d_model % m.n_heads == 0, "d_model (" + std::to_string(m.d_model) +
                                                     ") must be divisible by n_heads (" +
                                                     std::to_string(m.n_heads) + ")");
}

}  // namespace

STRIDE_REGISTER_ARCHITECTURE(gpt2,
                             {.name = "gpt2",
                              .build =
                                  [](const ModelConfig& c) -> std::shared_ptr<lm::LanguageModel> {
                                return std::make_shared<GPT>(c);
                              },
                              .hidden_dim = lm::four_times_width,
                              .validate = validate_gpt2});

}  // namespace stride::gpt
