#include "llama/ladder.h"

#include <string>

namespace stride::llama {

const std::vector<LadderStage>& ladder_stages() {
  static const std::vector<LadderStage> stages = {
      {"01_simple_broken", "SimpleBrokenModel", "simple_broken", 33217, {{1000, 3.9422}}, true},
      {"02_simple", "SimpleModel", "simple", 33217, {{1000, 2.5058}}, true},
      {"03_simple_rms", "SimpleModel_RMS", "simple_rms", 35265, {{1000, 2.5015}}, false},
      {"04_rope_nomask", "RopeModel (no mask)", "rope_nomask", 559681, {{1000, 0.1623}}, false},
      {"05_rope_masked",
       "RopeModel (masked)",
       "rope_masked",
       559681,
       {{1000, 2.0815}, {6000, 1.8985}},
       false},
      {"06_rope_swiglu", "RopeModel + SwiGLU", "rope_swiglu", 592706, {{5000, 1.8963}}, false},
      {"07_article_llama",
       "Llama (article)",
       "article_llama",
       2370246,
       {{5000, 1.5532}, {15000, 1.1479}, {25000, 0.9997}},
       false},
  };
  return stages;
}

lm::RunConfig article_run_config(const LadderStage& stage) {
  lm::RunConfig c;
  c.name = std::string(stage.id);
  c.model.arch = std::string(stage.arch);
  c.model.vocab_size = 65;
  c.model.d_model = 128;
  c.model.context = 16;
  c.model.n_heads = 8;
  c.model.n_layers = 4;
  c.model.dropout = 0.1;
  c.train.steps = stage.article.back().steps;
  c.train.batch_size = 32;
  c.train.optimizer = "adam";
  c.train.lr = 1e-3;
  c.train.beta1 = 0.9;
  c.train.beta2 = 0.999;
  c.train.eps = 1e-8;
  c.train.weight_decay = 0;
  c.train.schedule = "constant";
  c.train.eval_interval = 10;
  c.train.eval_batches = 10;
  return c;
}

}  // namespace stride::llama
