// Uses an installed stride the way a user's project would: the tensor
// library (stride::stride) and the Llama models (stride::llama).
#include <cstdio>

#include <stride/stride.h>

#include "llama/model.h"
#include "lm/registry.h"

int main() {
  stride::manual_seed(0);
  stride::Tensor a = stride::randn({4, 3});
  stride::Tensor b = stride::ones({3, 2});
  stride::Tensor c = a.matmul(b).softmax(-1);
  const double total = c.sum().item<double>();
  std::printf("rows of softmax sum to %.4f (expected 4)\n", total);

  stride::lm::ModelConfig config;
  config.vocab_size = 65;
  config.d_model = 32;
  config.n_layers = 2;
  config.n_heads = 4;
  config.context = 16;
  const auto model = stride::lm::build_model(config);
  const stride::Tensor logits = model->forward(stride::zeros({1, 16}, stride::kInt64));
  std::printf("a %lld-parameter Llama gives logits of shape (%lld, %lld, %lld)\n",
              static_cast<long long>(model->num_parameters()),
              static_cast<long long>(logits.size(0)), static_cast<long long>(logits.size(1)),
              static_cast<long long>(logits.size(2)));
  const bool llama_ok = logits.size(2) == 65;
  return total > 3.999 && total < 4.001 && llama_ok ? 0 : 1;
}
