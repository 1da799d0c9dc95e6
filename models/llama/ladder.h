// The article's ladder as data: each stage's model, the steps behind its
// printed validation loss, its parameter count and its printed numbers
// (the article "Llama from scratch", section 1).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "lm/config.h"

namespace stride::llama {

struct ArticlePoint {
  int64_t steps;    // cumulative optimizer steps behind the printed loss
  double val_loss;  // as printed by the article
};

struct LadderStage {
  std::string_view id;             // config name: configs/ladder/<id>.json
  std::string_view article_class;  // the article's class and variant
  std::string_view arch;           // its registered architecture
  int64_t article_params;
  std::vector<ArticlePoint> article;  // in step order; the last is the run's length
  bool causal;  // the doctor's verdict for a correct implementation of the stage
};

// Stages 1-7 in the article's order.
const std::vector<LadderStage>& ladder_stages();

// The article's MASTER_CONFIG for a stage: vocab 65, d 128, context 16,
// 8 heads, 4 layers; Adam(lr 1e-3) on batches of 32, no schedule.
lm::RunConfig article_run_config(const LadderStage& stage);

}  // namespace stride::llama
