#include "llama/model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <typeinfo>
#include <utility>
#include <vector>

#include "lm/registry.h"
#include "stride/autocast.h"
#include "stride/autograd.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"

namespace stride::llama {

namespace F = nn::functional;

// ---- projections ----

namespace {

// Note [Grouped projections]
// The projections of one input (q, k and v; w1 and w3) run as one
// linear_groups instead of one layer each:
//  - Decoding a token, each projection is a matrix-vector product bound by
//    reading its weight; grouped, one parallel region reads all three
//    weights, which saves the hand-offs between regions (measured: see
//    bench/HISTORY.md).
//    Each output is the same row's dot product either way (Note [Linear
//    over concatenated weights]), so the bits do not change.
//  - Training, x's gradient is summed by blocks of rows that stay in cache,
//    instead of by autograd's adds of one whole gradient per layer (12 adds
//    of (B T, D) a step of the correct Llama at the article's size), and one
//    node replaces three. The sums are added in autograd's order (v, then k,
//    then q), so with B T a multiple of 64 the bits are those of separate
//    layers (Note [Linear over concatenated weights]).
// The grouping is taken only where the layers cannot tell: float32 x, and
// plain bias-free Linear layers without hooks whose weights are float32 (not
// packed, Note [Weight formats]); otherwise each layer is called as usual.
// Under autocast linear_groups rounds each weight once per scope, as the
// layers do, and where it multiplies in bfloat16 it calls linear per group.
std::vector<Tensor> project(const Tensor& x, std::initializer_list<nn::Linear*> layers) {
  const bool grouped =
      x.dtype() == kFloat32 && std::all_of(layers.begin(), layers.end(), [](const nn::Linear* l) {
        return typeid(*l) == typeid(nn::Linear) && !l->has_hooks() && !l->bias.defined() &&
               l->weight_format() == WeightFormat::Float32;
      });
  std::vector<Tensor> out;
  if (!grouped) {
    for (nn::Linear* l : layers) out.push_back(l->call(x));
    return out;
  }
  std::vector<std::vector<Tensor>> weights;
  for (const nn::Linear* l : layers) weights.push_back({l->weight});
  return F::linear_groups(x, weights);
}

}  // namespace

// ---- attention ----

namespace {

F::RopeScaling rope_scaling(const ModelConfig& config) {
  F::RopeScaling s;
  if (config.rope_type == "linear") s.type = F::RopeScaling::Type::Linear;
  if (config.rope_type == "llama3") s.type = F::RopeScaling::Type::Llama3;
  s.factor = config.rope_factor;
  s.low_freq_factor = config.rope_low_freq_factor;
  s.high_freq_factor = config.rope_high_freq_factor;
  s.original_context = config.rope_original_context;
  return s;
}

}  // namespace

Positions::Positions(int64_t T, const ModelConfig& config, int64_t first, Device device)
    : offset(first) {
  const int64_t half = config.head_dim() / 2;
  // On meta (a memory estimate) the tables have their shapes and no values:
  // computing T rows of angles would cost time and host memory in proportion
  // to the context being estimated.
  if (device.is_meta()) {
    cos = empty({T, half}, TensorOptions(kFloat64).device(device));
    sin = empty({T, half}, TensorOptions(kFloat64).device(device));
    return;
  }
  std::tie(cos, sin) =
      F::rotary_tables(T, config.head_dim(), first, config.rope_theta, rope_scaling(config));
  cos = cos.to(device);
  sin = sin.to(device);
}

Attention::Attention(const ModelConfig& config)
    : nn::Module("Attention"),
      n_heads(config.n_heads),
      n_kv_heads(config.kv_heads()),
      head_dim(config.head_dim()),
      rope(config.rope_style == "half" ? F::RopeConvention::HalfSplit
                                       : F::RopeConvention::Interleaved) {
  const int64_t d = config.d_model, kv = n_kv_heads * head_dim;
  wq = register_module("wq", std::make_shared<nn::Linear>(d, d, false));
  wk = register_module("wk", std::make_shared<nn::Linear>(d, kv, false));
  wv = register_module("wv", std::make_shared<nn::Linear>(d, kv, false));
  wo = register_module("wo", std::make_shared<nn::Linear>(d, d, false));
}

Tensor Attention::forward(
    const Tensor& x, const Positions& at, Tensor* cache_k, Tensor* cache_v, Tensor* probs) {
  const int64_t B = x.size(0), T = x.size(1);
  // (B, T, heads * Dh) -> (B, heads, T, Dh): the heads are views of one projection.
  auto heads = [&](const Tensor& t, int64_t count) {
    return t.view({B, T, count, head_dim}).transpose(1, 2);
  };
  // Grouped-query attention: (B, Hkv, S, Dh) -> (B, H, S, Dh), each key/value
  // head serving n_heads / n_kv_heads consecutive query heads (Hugging Face's
  // repeat_kv).
  auto share = [&](const Tensor& t) {
    if (n_kv_heads == n_heads) return t;
    const int64_t S = t.size(2), group = n_heads / n_kv_heads;
    return t.unsqueeze(2)
        .expand({B, n_kv_heads, group, S, head_dim})
        .reshape({B, n_heads, S, head_dim});
  };
  const std::vector<Tensor> qkv = project(x, {wq.get(), wk.get(), wv.get()});
  Tensor y;
  if (cache_k == nullptr && probs == nullptr) {
    // Training and full-sequence scoring: the rotation inside the attention
    // kernel (Note [Rotary attention]).
    y = F::rotary_attention(heads(qkv[0], n_heads), share(heads(qkv[1], n_kv_heads)),
                            share(heads(qkv[2], n_kv_heads)), at.cos, at.sin, rope, 0.0,
                            /*is_causal=*/true);
  } else {
    Tensor q = F::rotary_embedding(heads(qkv[0], n_heads), at.cos, at.sin, rope);
    Tensor k = F::rotary_embedding(heads(qkv[1], n_kv_heads), at.cos, at.sin, rope);
    Tensor v = heads(qkv[2], n_kv_heads);
    std::optional<F::CausalAlignment> alignment;
    if (cache_k != nullptr) {
      cache_k->narrow(2, at.offset, T).copy_(k);
      cache_v->narrow(2, at.offset, T).copy_(v);
      k = cache_k->narrow(2, 0, at.offset + T);
      v = cache_v->narrow(2, 0, at.offset + T);
      alignment = F::CausalAlignment::BottomRight;
    }
    k = share(k);
    v = share(v);
    if (probs != nullptr) {
      // The probabilities themselves are wanted (stride attention): the same
      // math as SDPA, written out.
      const int64_t S = k.size(2);
      Tensor scores = q.matmul(k.transpose(-2, -1)) * (1.0 / std::sqrt(double(head_dim)));
      Tensor keep = ones({T, S}, TensorOptions(kBool).device(x.device())).tril(S - T);
      *probs =
          scores.masked_fill(keep.eq(false), -std::numeric_limits<double>::infinity()).softmax(-1);
      y = probs->matmul(v);
    } else {
      y = F::scaled_dot_product_attention(q, k, v, {}, 0.0, /*is_causal=*/true, std::nullopt,
                                          alignment);
    }
  }
  return wo->call(y.transpose(1, 2).reshape({B, T, n_heads * head_dim}));
}

FeedForward::FeedForward(int64_t dim, int64_t hidden) : nn::Module("FeedForward") {
  w1 = register_module("w1", std::make_shared<nn::Linear>(dim, hidden, false));
  w2 = register_module("w2", std::make_shared<nn::Linear>(hidden, dim, false));
  w3 = register_module("w3", std::make_shared<nn::Linear>(dim, hidden, false));
}

Tensor FeedForward::forward(const Tensor& x) {
  const std::vector<Tensor> gate_up = project(x, {w1.get(), w3.get()});
  return w2->call(F::swiglu(gate_up[0], gate_up[1]));
}

TransformerBlock::TransformerBlock(const ModelConfig& config) : nn::Module("TransformerBlock") {
  // Meta's registration order, so that state_dict lists keys as its checkpoints do.
  attention = register_module("attention", std::make_shared<Attention>(config));
  feed_forward = register_module(
      "feed_forward", std::make_shared<FeedForward>(config.d_model, config.hidden_dim()));
  attention_norm = register_module("attention_norm",
                                   std::make_shared<nn::RMSNorm>(config.d_model, config.norm_eps));
  ffn_norm =
      register_module("ffn_norm", std::make_shared<nn::RMSNorm>(config.d_model, config.norm_eps));
}

Tensor TransformerBlock::forward(
    const Tensor& x, const Positions& at, Tensor* cache_k, Tensor* cache_v, Tensor* probs) {
  Tensor h = x + attention->forward(attention_norm->call(x), at, cache_k, cache_v, probs);
  return h + feed_forward->call(ffn_norm->call(h));
}

// ---- Llama ----

Llama::Llama(const ModelConfig& config) : LanguageModel("Llama", config) {
  tok_embeddings = register_module(
      "tok_embeddings", std::make_shared<nn::Embedding>(config.vocab_size, config.d_model));
  layers = register_module("layers", std::make_shared<nn::ModuleList>());
  for (int64_t i = 0; i < config.n_layers; ++i) {
    layers->push_back(std::make_shared<TransformerBlock>(config));
  }
  norm = register_module("norm", std::make_shared<nn::RMSNorm>(config.d_model, config.norm_eps));
  output = register_module("output",
                           std::make_shared<nn::Linear>(config.d_model, config.vocab_size, false));
  if (config.tie_embeddings) {
    output->weight = output->replace_parameter("weight", tok_embeddings->weight);
  }
}

Tensor Llama::forward(const Tensor& ids) {
  return head(hidden(ids, nullptr));
}

Tensor Llama::forward(const Tensor& ids, KVCache& cache) {
  return head(hidden(ids, &cache));
}

Tensor Llama::last_logits(const Tensor& ids, KVCache& cache) {
  return head(hidden(ids, &cache).select(1, -1));
}

KVCache Llama::make_cache(int64_t batch, int64_t capacity) const {
  return empty_cache(batch, capacity > 0 ? capacity : config().context,
                     tok_embeddings->weight.options());
}

Tensor Llama::hidden(const Tensor& ids, KVCache* cache) {
  const int64_t offset = cache != nullptr ? cache->length : 0;
  // The positions a cache may hold are bounded by its capacity, not by the
  // training context: RoPE itself has no table to run out of.
  check_input(ids, cache);
  attention_maps_.clear();
  Tensor h = tok_embeddings->call(ids);
  const Positions at(ids.size(1), config(), offset, ids.device());
  for (int64_t l = 0; l < int64_t(layers->size()); ++l) {
    Tensor probs;
    auto& block = *layers->at<TransformerBlock>(l);
    h = block.forward(h, at, cache ? &cache->k[size_t(l)] : nullptr,
                      cache ? &cache->v[size_t(l)] : nullptr, record_attention_ ? &probs : nullptr);
    if (record_attention_) attention_maps_.push_back(probs.detach());
  }
  if (cache != nullptr) cache->length += ids.size(1);
  return h;
}

Tensor Llama::head(const Tensor& h) {
  return output->call(norm->call(h));
}

// ---- the architecture ----

namespace {

void validate_rope_scaling(const ModelConfig& m) {
  lm::require_config(
      m.rope_type == "default" || m.rope_type == "linear" || m.rope_type == "llama3",
      "rope_type must be \"default\", \"linear\" or \"llama3\"; got \"" + m.rope_type + "\"");
  if (m.rope_type == "default") return;
  lm::require_config(m.rope_factor > 0, "rope_factor must be positive");
  if (m.rope_type != "llama3") return;
  lm::require_config(m.rope_low_freq_factor > 0 && m.rope_high_freq_factor > m.rope_low_freq_factor,
                     "llama3 RoPE needs 0 < rope_low_freq_factor < rope_high_freq_factor");
  lm::require_config(m.rope_original_context > 0, "rope_original_context must be positive");
}

void validate_llama(const ModelConfig& m) {
  lm::require_config(m.d_model % 2 == 0, "RoPE needs an even d_model");
  lm::require_config(m.d_model % m.n_heads == 0, "d_model (" + std::to_string(m.d_model) +
                                                     ") must be divisible by n_heads (" +
                                                     std::to_string(m.n_heads) + ")");
  lm::require_config(m.head_dim() % 2 == 0, "RoPE needs an even head_dim = d_model / n_heads");
  lm::require_config(m.n_kv_heads >= 0 && m.n_heads % m.kv_heads() == 0,
                     "n_kv_heads (" + std::to_string(m.n_kv_heads) + ") must divide n_heads (" +
                         std::to_string(m.n_heads) + "); 0 means n_heads");
  lm::require_config(
      m.rope_style == "interleaved" || m.rope_style == "half",
      "rope_style must be \"interleaved\" or \"half\"; got \"" + m.rope_style + "\"");
  validate_rope_scaling(m);
}

}  // namespace

STRIDE_REGISTER_ARCHITECTURE(llama,
                             {.name = "llama",
                              .build = [](const ModelConfig& c) -> std::shared_ptr<LanguageModel> {
                                return std::make_shared<Llama>(c);
                              },
                              .hidden_dim = lm::swiglu_hidden_dim,
                              .validate = validate_llama});

}  // namespace stride::llama
