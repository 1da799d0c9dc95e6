// Sampling from a language model: temperature, top-k, top-p (nucleus), and
// generation with a KV cache for the Llama (a sliding window of the last
// `context` tokens for the article's models, as the article's generate).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "lm/language_model.h"
#include "stride/generator.h"

namespace stride::lm {

struct SamplingOptions {
  double temperature = 1.0;  // 0: greedy (argmax)
  int64_t top_k = 0;         // keep the k most likely tokens; 0: all
  double top_p = 1.0;        // keep the smallest set whose probability reaches p; 1: all
};

// One token drawn from logits (V) with `gen`. Throws ValueError for a
// negative temperature or top_k, or top_p outside (0, 1].
int64_t sample_token(const Tensor& logits, const SamplingOptions& options, Generator& gen);

struct GenerateOptions {
  SamplingOptions sampling;
  int64_t max_new_tokens = 200;
  uint64_t seed = 0;
  // Models with a KV cache: once the cache holds `context` tokens, the window slides by
  // this many positions (the last context - slide tokens are re-encoded), so
  // every token is predicted from at least context - slide tokens of history.
  // 0: a quarter of the context (at least 1).
  int64_t slide = 0;
};

// Continues `prompt` (non-empty ids) by max_new_tokens tokens and returns the
// new ids. The model runs in eval mode without recording gradients (its mode
// is restored). `on_token` sees each new id as it is drawn.
std::vector<int64_t> generate(LanguageModel& model,
                              const std::vector<int64_t>& prompt,
                              const GenerateOptions& options,
                              const std::function<void(int64_t)>& on_token = {});

}  // namespace stride::lm
