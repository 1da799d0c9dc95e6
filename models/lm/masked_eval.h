// An encoder's (BERT's) loss on a text: the tokens it recovers at masked
// positions, the measure its pretraining optimises. The causal models'
// next-token loss is lm/train.h's evaluate_split.
#pragma once

#include <cstdint>
#include <vector>

#include "lm/language_model.h"
#include "stride/data/text.h"

namespace stride::lm {

struct MaskedEvalOptions {
  int64_t mask_id = 0;  // the tokenizer's [MASK]
  // The special tokens around each window, as the tokenizer puts them
  // around one sequence (BERT: [CLS] before, [SEP] after).
  std::vector<int64_t> prefix, suffix;
  double fraction = 0.15;  // of each window's text tokens, masked
  uint64_t seed = 0;       // which positions are masked
  int64_t batch_size = 8;
  int64_t max_windows = 0;  // > 0: the first windows only
  int64_t context = 0;      // > 0: windows of this many positions (at most the model's)
};

struct MaskedLoss {
  double loss = 0;      // mean cross entropy at the masked positions (nats)
  double accuracy = 0;  // how often the arg max is the original token
  int64_t masked = 0;   // positions scored
  int64_t windows = 0;
};

// The split in non-overlapping windows of (context - prefix - suffix) text
// tokens, each between prefix and suffix (the last window shorter, at its
// own length); in each, round(fraction * n) of its n text tokens (at least
// one), drawn uniformly without replacement from a generator seeded by
// `seed`, replaced by mask_id, all of them (the 80/10/10 mix of BERT's
// pretraining is a training device, not part of the measure). The model
// sees one segment without padding, in eval mode and without grad (its mode
// is restored). ValueError when the context leaves no room for text.
MaskedLoss evaluate_masked_split(LanguageModel& model,
                                 const data::TokenDataset& data,
                                 data::Split split,
                                 const MaskedEvalOptions& options);

}  // namespace stride::lm
