// Loading a Hugging Face checkpoint of 1.1B parameters (TinyLlama-1.1B's
// shapes, random weights): the stride side of bench/compare_hf_load.
//   hf_load_bench write DIR   writes the checkpoint (float32, one file)
//   hf_load_bench load DIR    loads it, decodes one token, and prints
//                             "load_s X" (from_pretrained's part),
//                             "ready_s X" (load and the first token's logits),
//                             "weights_bytes N", "peak_rss_bytes N", then
//                             decoding speed from the mapped weights and
//                             after pack_parameters() ("decode_tok_s X",
//                             "packed_decode_tok_s X", "pack_s X")
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "hf/hf.h"
#include "llama/model.h"
#include "lm/registry.h"
#include "stride/stride.h"

using namespace stride;

namespace {

lm::ModelConfig tinyllama_shapes() {
  lm::ModelConfig c;
  c.vocab_size = 32000;
  c.d_model = 2048;
  c.n_layers = 22;
  c.n_heads = 32;
  c.n_kv_heads = 4;
  c.ffn_hidden = 5632;
  c.context = 2048;
  c.norm_eps = 1e-5;
  c.rope_style = "half";
  c.dropout = 0;
  return c;
}

// Random weights, drawn without running the initialisers (which take
// minutes at this size on two cores): built on meta, then filled.
int write(const std::string& dir) {
  std::shared_ptr<lm::LanguageModel> model;
  {
    DefaultDeviceGuard on_meta(kMeta);
    model = lm::build_model(tinyllama_shapes());
  }
  model->to_empty(Device(kCPU));
  manual_seed(1);
  NoGradGuard no_grad;
  for (Tensor p : model->parameters()) p.uniform_(-0.05, 0.05);
  hf::save(*model, dir);
  std::printf("wrote %s: %lld parameters\n", dir.c_str(), (long long)model->num_parameters());
  return 0;
}

// Tokens per second decoding 16 tokens with the KV cache, after 4 of warm-up.
double decode_speed(lm::LanguageModel& model) {
  NoGradGuard no_grad;
  lm::KVCache cache = model.make_cache(1, 32);
  const Tensor token = full({1, 1}, 1, TensorOptions(kInt64));
  for (int i = 0; i < 4; ++i) model.forward(token, cache);
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 16; ++i) model.forward(token, cache);
  return 16.0 / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int load(const std::string& dir) {
  const auto t0 = std::chrono::steady_clock::now();
  auto model = hf::load(dir);
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  const double load_s = seconds();
  NoGradGuard no_grad;
  lm::KVCache cache = model->make_cache(1, 8);
  const Tensor logits = model->forward(full({1, 1}, 1, TensorOptions(kInt64)), cache);
  const double ready_s = seconds();
  int64_t bytes = 0;
  for (const Tensor& p : model->parameters()) bytes += p.nbytes();
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("load_s %.3f\nready_s %.3f\nweights_bytes %lld\npeak_rss_bytes %lld\nlogit0 %.6f\n",
              load_s, ready_s, (long long)bytes, (long long)usage.ru_maxrss * 1024,
              logits.flatten()[0].item<double>());
  std::printf("decode_tok_s %.3f\n", decode_speed(*model));
  const auto p0 = std::chrono::steady_clock::now();
  model->pack_parameters();
  std::printf("pack_s %.3f\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - p0).count());
  std::printf("packed_decode_tok_s %.3f\n", decode_speed(*model));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "write") == 0) return write(argv[2]);
  if (argc == 3 && std::strcmp(argv[1], "load") == 0) return load(argv[2]);
  std::fprintf(stderr, "usage: hf_load_bench write|load DIR\n");
  return 2;
}
