#include "lm/generate.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "lm/registry.h"
#include "stride/autograd.h"
#include "stride/ops.h"

namespace stride::lm {

int64_t sample_token(const Tensor& logits, const SamplingOptions& options, Generator& gen) {
  if (options.temperature < 0 || options.top_k < 0 || !(options.top_p > 0 && options.top_p <= 1)) {
    throw ValueError("[sample] expected temperature >= 0, top_k >= 0 and 0 < top_p <= 1; got " +
                     std::to_string(options.temperature) + ", " + std::to_string(options.top_k) +
                     ", " + std::to_string(options.top_p) + ".");
  }
  const std::vector<double> z = logits.reshape({-1}).to(kFloat64).to_vector<double>();
  const int64_t V = int64_t(z.size());
  // Greedy: the first most likely id (argmax's), in one pass.
  if (options.temperature == 0) {
    int64_t best = 0;
    for (int64_t i = 1; i < V; ++i) {
      if (z[size_t(i)] > z[size_t(best)]) best = i;
    }
    return best;
  }
  const int64_t k = options.top_k > 0 ? std::min(options.top_k, V) : V;
  // The k most likely first; ties keep the lower id first.
  std::vector<int64_t> order(static_cast<size_t>(V));
  std::iota(order.begin(), order.end(), 0);
  const auto likelier = [&](int64_t a, int64_t b) {
    return z[size_t(a)] > z[size_t(b)] || (z[size_t(a)] == z[size_t(b)] && a < b);
  };
  std::partial_sort(order.begin(), order.begin() + k, order.end(), likelier);
  std::vector<double> p(static_cast<size_t>(k));
  const double top = z[size_t(order.front())];
  double total = 0;
  for (int64_t i = 0; i < k; ++i) {
    p[size_t(i)] = std::exp((z[size_t(order[size_t(i)])] - top) / options.temperature);
    total += p[size_t(i)];
  }
  // Nucleus: the shortest prefix of the sorted distribution reaching top_p.
  int64_t keep = k;
  if (options.top_p < 1) {
    double cumulative = 0;
    for (int64_t i = 0; i < k; ++i) {
      cumulative += p[size_t(i)] / total;
      if (cumulative >= options.top_p) {
        keep = i + 1;
        break;
      }
    }
  }
  const double kept_total = std::accumulate(p.begin(), p.begin() + keep, 0.0);
  const double u = double(gen.next_u64() >> 11) * 0x1.0p-53 * kept_total;
  double cumulative = 0;
  for (int64_t i = 0; i < keep; ++i) {
    cumulative += p[size_t(i)];
    if (u < cumulative) return order[size_t(i)];
  }
  return order[size_t(keep - 1)];
}

namespace {

Tensor ids_tensor(const std::vector<int64_t>& ids, size_t begin) {
  std::vector<int64_t> window(ids.begin() + std::ptrdiff_t(begin), ids.end());
  return tensor<int64_t>(window, {1, int64_t(window.size())});
}

// Logits (V) of the last position.
Tensor last_logits(const Tensor& logits) {
  return logits.select(0, 0).select(0, -1);
}

// The same from a cached forward: the head runs on the last position alone.
Tensor last_logits(LanguageModel& model, const Tensor& ids, KVCache& cache) {
  return model.last_logits(ids, cache).select(0, 0);
}

}  // namespace

std::vector<int64_t> generate(LanguageModel& model,
                              const std::vector<int64_t>& prompt,
                              const GenerateOptions& options,
                              const std::function<void(int64_t)>& on_token) {
  require_causal(model.config(), "generate");
  if (prompt.empty()) throw ValueError("[generate] the prompt is empty. Hint: start from \"\\n\".");
  const int64_t context = model.config().context;
  EvalScope eval(model);
  NoGradGuard no_grad;
  Generator gen(options.seed);
  std::vector<int64_t> ids = prompt;
  std::vector<int64_t> out;
  const bool cached = model.has_kv_cache();
  const int64_t slide =
      std::clamp<int64_t>(options.slide > 0 ? options.slide : context / 4, 1, context);

  KVCache cache;
  Tensor logits;
  // (Re)fills the cache from the last `n` ids.
  auto prefill = [&](int64_t n) {
    cache.length = 0;
    logits = last_logits(model, ids_tensor(ids, ids.size() - size_t(n)), cache);
  };
  if (cached) {
    cache = model.make_cache(1, context);
    prefill(std::min<int64_t>(int64_t(ids.size()), context));
  }
  for (int64_t i = 0; i < options.max_new_tokens; ++i) {
    if (!cached) {
      const size_t n = std::min(ids.size(), size_t(context));
      logits = last_logits(model.forward(ids_tensor(ids, ids.size() - n)));
    }
    const int64_t next = sample_token(logits, options.sampling, gen);
    ids.push_back(next);
    out.push_back(next);
    if (on_token) on_token(next);
    if (!cached || i + 1 == options.max_new_tokens) continue;
    if (cache.length < cache.capacity()) {
      logits = last_logits(model, tensor<int64_t>({next}, {1, 1}), cache);
    } else {
      prefill(context - slide + 1);
    }
  }
  return out;
}

}  // namespace stride::lm
