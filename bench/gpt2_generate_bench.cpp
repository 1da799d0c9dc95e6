// GPT-2 124M (random weights) generating with its KV cache, batch 1: the
// stride side of bench/compare_gpt2_generate, which runs transformers'
// generate beside it. Prints "tokens_per_s X" for each of `runs` runs.
//   gpt2_generate_bench [NEW_TOKENS] [RUNS]
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "llama/model.h"
#include "lm/generate.h"
#include "lm/registry.h"
#include "stride/stride.h"

using namespace stride;

int main(int argc, char** argv) {
  const int64_t new_tokens = argc > 1 ? std::atoll(argv[1]) : 64;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 5;
  lm::ModelConfig config;  // GPT-2 small's shapes
  config.arch = "gpt2";
  config.vocab_size = 50257;
  config.d_model = 768;
  config.n_layers = 12;
  config.n_heads = 12;
  config.context = 1024;
  config.norm_eps = 1e-5;
  config.tie_embeddings = true;
  config.dropout = 0;
  manual_seed(1);
  auto model = lm::build_model(config);
  std::vector<int64_t> prompt;
  for (int64_t i = 0; i < 16; ++i) prompt.push_back((i * 7919) % config.vocab_size);
  lm::GenerateOptions options;
  options.sampling.temperature = 0;  // greedy, as the transformers side
  options.max_new_tokens = new_tokens;
  lm::generate(*model, prompt, options);  // warm-up
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    lm::generate(*model, prompt, options);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("tokens_per_s %.3f\n", double(new_tokens) / s);
  }
  return 0;
}
