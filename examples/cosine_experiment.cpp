// The article's cosine experiment, as written, and what the doctor says.
//
// The notebook builds a fresh `llama_with_cosine` but hands the optimizer the
// parameters of the *old* `llama`, then trains `llama_with_cosine`. Nothing
// fails: the loss is computed, backward runs, the optimizer steps (on the
// wrong model). The new model never changes, and the notebook concluded that
// cosine annealing "was worse". doctor::audit_parameters names every
// parameter nobody optimizes.
#include <cstdio>

#include "llama/ladder.h"
#include "llama/model.h"
#include "lm/registry.h"
#include "stride/doctor.h"
#include "stride/ops.h"
#include "stride/optim/adam.h"
#include "stride/optim/lr_scheduler.h"

int main() {
  using namespace stride;
  manual_seed(0);
  const lm::RunConfig cfg = llama::article_run_config(llama::ladder_stages().back());
  auto llama = lm::build_model(cfg.model);              // the model trained earlier
  auto llama_with_cosine = lm::build_model(cfg.model);  // the one meant to be trained now
  // The bug: llama's parameters, not llama_with_cosine's.
  optim::Adam optimizer(llama->parameters(),
                        optim::AdamOptions(1e-3).betas({0.9, 0.95}).weight_decay(0.1).eps(1e-9));
  optim::CosineAnnealingLR scheduler(optimizer, /*T_max=*/300, /*eta_min=*/1e-5);

  const Tensor x = randint(0, 65, {32, 16}), y = randint(0, 65, {32, 16});
  const auto audit = doctor::audit_parameters(*llama_with_cosine, optimizer,
                                              [&] { return llama_with_cosine->loss(x, y); });
  std::printf("doctor: parameter audit of llama_with_cosine: %s\n", audit.ok ? "PASS" : "FAIL");
  for (size_t i = 0; i < audit.problems.size() && i < 5; ++i) {
    std::printf("  %s\n", audit.problems[i].c_str());
  }
  if (audit.problems.size() > 5) std::printf("  ... %zu more\n", audit.problems.size() - 5);
  std::printf("fix: build the optimizer on llama_with_cosine->parameters().\n");
  // The example succeeds when the doctor catches the bug.
  return audit.ok ? 1 : 0;
}
