// Layers drawn as GPT-2 and BERT draw them (nanoGPT's and Hugging Face's
// _init_weights): weight ~ N(0, std), bias zero. Built as PyTorch's layers,
// then re-drawn; reset_parameters() draws the same distributions, so a
// model materialised from meta (to_empty, reset_all_parameters) gets them
// too.
#pragma once

#include "stride/nn/layers.h"

namespace stride::lm {

class NormalLinear : public nn::Linear {
 public:
  NormalLinear(int64_t in, int64_t out, bool with_bias, double std);
  void reset_parameters(Generator* gen = nullptr) override;

 private:
  double std_;
};

class NormalEmbedding : public nn::Embedding {
 public:
  NormalEmbedding(int64_t num, int64_t dim, double std);
  void reset_parameters(Generator* gen = nullptr) override;

 private:
  double std_;
};

}  // namespace stride::lm
