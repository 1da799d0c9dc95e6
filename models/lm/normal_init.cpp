#include "lm/normal_init.h"

#include "stride/nn/init.h"

namespace stride::lm {

NormalLinear::NormalLinear(int64_t in, int64_t out, bool with_bias, double std)
    : nn::Linear(in, out, with_bias), std_(std) {
  reset_parameters();
}

void NormalLinear::reset_parameters(Generator* gen) {
  nn::init::normal_(weight, 0.0, std_, gen);
  if (bias.defined()) nn::init::zeros_(bias);
}

NormalEmbedding::NormalEmbedding(int64_t num, int64_t dim, double std)
    : nn::Embedding(num, dim), std_(std) {
  reset_parameters();
}

void NormalEmbedding::reset_parameters(Generator* gen) {
  nn::init::normal_(weight, 0.0, std_, gen);
}

}  // namespace stride::lm
