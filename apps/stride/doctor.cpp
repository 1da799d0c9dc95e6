// stride doctor: the checks of stride/doctor.h on a model built from a
// config or loaded from a run, with real batches of its data.
#include <iostream>

#include "commands.h"
#include "lm/registry.h"
#include "lm/train.h"
#include "run_dir.h"
#include "stride/autograd.h"
#include "stride/doctor.h"

namespace stride::app {

int run_doctor(const DoctorArgs& args) {
  lm::RunConfig cfg;
  std::shared_ptr<lm::LanguageModel> model;
  TokenizerPtr tokenizer;
  if (args.ckpt || args.weights) {
    LoadedRun run = load_model({args.ckpt, args.weights, args.config}, args.data);
    cfg = run.config;
    model = run.model;
    tokenizer = run.tokenizer;
  } else {
    cfg = lm::load_config(*args.config);
  }
  const Corpus corpus = load_corpus(args.data, tokenizer);
  // A config's character model gets the corpus's vocabulary; a run's model
  // keeps its own.
  if (!model) cfg.model.vocab_size = corpus.tokenizer->vocab_size();
  // The checks run a training step at the config's batch and context.
  check_fits_in_memory(cfg, {lm::Workload::Kind::Training});
  if (!model) {
    manual_seed(cfg.train.seed);
    model = lm::build_model(cfg.model);
  }
  std::cout << "doctor: " << cfg.name << " (" << cfg.model.arch << ", "
            << model->num_parameters(true) << " parameters)\n";
  int failures = 0;
  auto report = [&](const char* check, bool ok, const std::string& detail) {
    std::cout << (ok ? "  PASS  " : "  FAIL  ") << check << ": " << detail << "\n";
    failures += ok ? 0 : 1;
  };

  model->eval();
  const auto causal =
      doctor::check_causality([&](const Tensor& ids) { return model->forward(ids); },
                              cfg.model.vocab_size, cfg.model.context, {.batch = 2, .trials = 2});
  report("causality", causal.causal, causal.message);

  Generator gen(cfg.train.seed);
  auto [x, y] =
      corpus.data.random_batch(data::Split::Train, cfg.train.batch_size, cfg.model.context, &gen);
  {
    NoGradGuard no_grad;
    const auto logits = doctor::check_logits(model->forward(x));
    report("logits into cross_entropy", !logits.looks_like_probabilities, logits.message);
  }

  model->train();
  auto optimizer = lm::make_optimizer(*model, cfg.train);
  try {
    std::optional<DetectAnomalyGuard> anomaly;
    if (args.anomaly) anomaly.emplace();
    const auto audit =
        doctor::audit_parameters(*model, *optimizer, [&] { return model->loss(x, y); });
    report("parameter audit (one optimizer step)", audit.ok, audit.message);
    if (args.anomaly)
      report("anomaly detection", true, "no NaN or Inf in the forward or backward pass");
  } catch (const Error& e) {
    if (!args.anomaly) throw;
    report("anomaly detection", false, e.what());
  }

  const auto flow = doctor::gradient_flow(*model);
  int64_t silent = 0;
  for (const auto& s : flow.params) silent += s.no_signal;
  report("gradient flow", flow.ok,
         flow.ok ? "every parameter receives gradient signal"
                 : std::to_string(silent) + " parameter(s) receive no gradient signal (see table)");
  if (!flow.ok || args.verbose) std::cout << flow.table();

  std::cout << (failures == 0 ? "healthy: every check passed\n"
                              : std::to_string(failures) + " check(s) failed\n");
  return failures == 0 ? 0 : 1;
}

}  // namespace stride::app
