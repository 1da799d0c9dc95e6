// One forward pass of a Hugging Face model through the command line's C++
// path (hf::load, then the model's forward, no gradient): the C++ side of
// bench/pretrained_forward.py, which times stride.models' Python forward of
// the same directory beside it.
//   hf_forward_bench DIR BATCH TOKENS CALLS ROUNDS
// Prints "forward_ms X" per round: the mean time of CALLS forwards of the
// same (BATCH, TOKENS) ids, after one of warm-up.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "hf/hf.h"
#include "stride/stride.h"

using namespace stride;

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: hf_forward_bench DIR BATCH TOKENS CALLS ROUNDS\n");
    return 2;
  }
  const int64_t batch = std::atoll(argv[2]), tokens = std::atoll(argv[3]);
  const int calls = std::atoi(argv[4]), rounds = std::atoi(argv[5]);
  auto model = hf::load(argv[1]);
  model->eval();
  NoGradGuard no_grad;
  // The ids bench/pretrained_forward.py gives the Python side: i * 7 % V.
  const int64_t vocab = model->config().vocab_size;
  const Tensor ids = arange(batch * tokens, kInt64).mul(7).remainder(vocab).view({batch, tokens});
  model->forward(ids);
  for (int r = 0; r < rounds; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int c = 0; c < calls; ++c) model->forward(ids);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("forward_ms %.3f\n", ms / calls);
    std::fflush(stdout);
  }
  return 0;
}
