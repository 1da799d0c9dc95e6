// stride train: the training loop with its outputs (progress, metrics,
// evaluation, checkpoints, loss curve, profile) and, at the end, the honest
// loss over the whole val split and a sample.
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "llama/generate.h"
#include "llama/train.h"
#include "run_dir.h"
#include "stride/io.h"
#include "stride/parallel.h"
#include "stride/profiler.h"
#include "support/chart.h"
#include "support/progress.h"

namespace stride::app {

namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void on_sigint(int) {
  g_interrupted = true;
}

// Steps between metrics lines: every step is too much for long runs.
constexpr int64_t kMetricsEvery = 10;

struct Curves {
  Series train{"train loss (10-batch estimate)", {}, {}, ""};
  Series val{"val loss (10-batch estimate)", {}, {}, ""};
};

void write_curves(const fs::path& dir, const Curves& curves, const std::string& title) {
  write_line_chart_svg(dir / "loss.svg", {curves.train, curves.val}, {.title = title});
}

}  // namespace

int run_train(const TrainArgs& args) {
  using Clock = std::chrono::steady_clock;
  llama::RunConfig cfg;
  std::optional<CheckpointState> resume_state;
  std::optional<data::CharTokenizer> tokenizer;
  if (args.resume) {
    LoadedRun run = load_run(*args.resume);
    cfg = run.config;
    tokenizer = run.tokenizer;
    resume_state = std::move(run.state);
  } else {
    cfg = llama::load_config(args.config);
  }
  if (args.steps) {
    cfg.train.steps = *args.steps;
    if (cfg.train.schedule == "cosine" && cfg.train.warmup_steps >= cfg.train.steps) {
      cfg.train.warmup_steps = cfg.train.steps / 10;
      std::cout << "note: --steps " << cfg.train.steps
                << " is shorter than the warm-up; warmup_steps set to " << cfg.train.warmup_steps
                << "\n";
    }
  }
  if (args.seed) cfg.train.seed = *args.seed;
  if (args.precision) cfg.train.precision = *args.precision;
  cfg.train.validate();
  const fs::path dir = args.out      ? fs::path(*args.out)
                       : args.resume ? fs::path(*args.resume)
                                     : fs::path("runs") / cfg.name;

  data::CharCorpus corpus = load_corpus(args.data, tokenizer ? &*tokenizer : nullptr);
  if (corpus.tokenizer.vocab_size() != cfg.model.vocab_size) {
    std::cout << "note: the corpus has " << corpus.tokenizer.vocab_size()
              << " distinct characters; model.vocab_size set to that (config said "
              << cfg.model.vocab_size << ")\n";
    cfg.model.vocab_size = corpus.tokenizer.vocab_size();
  }
  fs::create_directories(dir);
  const std::string config_json = llama::to_json(cfg);
  std::cout << "config (saved to " << (dir / "config.json").string() << "):\n"
            << config_json << "\n";
  { std::ofstream(dir / "config.json") << config_json << "\n"; }
  corpus.tokenizer.save(tokenizer_path(dir));

  manual_seed(cfg.train.seed);
  auto model = llama::build_model(cfg.model);
  llama::Trainer trainer(model, cfg.train, corpus.data);
  if (resume_state) trainer.restore(*resume_state);
  std::cout << model->name() << " (" << llama::arch_name(cfg.model.arch)
            << "): " << model->num_parameters(true) << " parameters, " << get_num_threads()
            << " threads, batch " << cfg.train.batch_size << " x context " << cfg.model.context
            << ", " << cfg.train.steps << " steps\n";

  Curves curves;
  auto evaluate = [&](int64_t step) {
    const auto [train_loss, val_loss] = trainer.estimate_train_val();
    curves.train.x.push_back(double(step));
    curves.train.y.push_back(train_loss);
    curves.val.x.push_back(double(step));
    curves.val.y.push_back(val_loss);
    return std::pair{train_loss, val_loss};
  };
  const int64_t first_step = trainer.steps_done();
  const auto [train0, val0] = evaluate(first_step);
  std::cout << "step " << first_step << ": train loss " << train0 << ", val loss " << val0
            << " (uniform guess: " << std::log(double(cfg.model.vocab_size)) << ")\n";

  std::ofstream metrics(dir / "metrics.jsonl", args.resume ? std::ios::app : std::ios::trunc);
  Progress progress(cfg.train.steps - first_step, std::cout, stdout_is_terminal());
  auto save = [&] { save_checkpoint(checkpoint_path(dir).string(), trainer.capture(config_json)); };
  std::optional<profiler::Profiler> prof;
  if (args.profile_steps > 0) {
    prof.emplace(profiler::ProfilerOptions{.record_shapes = false});
    prof->start();
  }
  g_interrupted = false;
  auto previous = std::signal(SIGINT, on_sigint);
  const auto start = Clock::now();
  auto window_start = start;
  int64_t window_steps = 0;
  double tokens_per_s = 0;
  const double tokens_per_step = double(cfg.train.batch_size * cfg.model.context);
  while (trainer.steps_done() < cfg.train.steps && !g_interrupted) {
    const llama::StepResult r = trainer.step();
    ++window_steps;
    const auto now = Clock::now();
    const double window = std::chrono::duration<double>(now - window_start).count();
    if (window >= 1.0 || tokens_per_s == 0) {
      tokens_per_s = tokens_per_step * double(window_steps) / window;
      window_start = now;
      window_steps = 0;
    }
    const double elapsed = std::chrono::duration<double>(now - start).count();
    progress.update(r.step - first_step, r.loss, tokens_per_s, elapsed);
    if (prof && r.step - first_step == args.profile_steps) {
      prof->stop();
      prof->export_chrome_trace((dir / "trace.json").string());
      progress.message(prof->key_averages().table("self_cpu_time_total", 25));
      progress.message("profile of " + std::to_string(args.profile_steps) + " steps written to " +
                       (dir / "trace.json").string());
      prof.reset();
    }
    nlohmann::json line = {
        {"step", r.step},           {"train_loss", r.loss},         {"lr", r.lr},
        {"grad_norm", r.grad_norm}, {"tokens_per_s", tokens_per_s}, {"elapsed", elapsed},
        {"val_loss", nullptr}};
    const bool eval_now = r.step % cfg.train.eval_interval == 0 || r.step == cfg.train.steps;
    if (eval_now) {
      const auto [train_loss, val_loss] = evaluate(r.step);
      line["val_loss"] = val_loss;
      line["train_loss_estimate"] = train_loss;
      char text[160];
      std::snprintf(text, sizeof text, "step %lld: train loss %.4f, val loss %.4f, lr %.2e",
                    static_cast<long long>(r.step), train_loss, val_loss, r.lr);
      progress.message(text);
    }
    if (eval_now || r.step % kMetricsEvery == 0) metrics << line.dump() << "\n" << std::flush;
    if (cfg.train.checkpoint_interval > 0 && r.step % cfg.train.checkpoint_interval == 0) save();
  }
  std::signal(SIGINT, previous);
  progress.finish();
  if (prof) prof->stop();
  save();
  write_curves(dir, curves, cfg.name);
  if (g_interrupted) {
    std::cout << "interrupted at step " << trainer.steps_done() << ": checkpoint saved to "
              << checkpoint_path(dir).string() << " (continue with --resume " << dir.string()
              << ")\n";
    return 130;
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const llama::SplitLoss honest =
      llama::evaluate_split(*model, corpus.data, data::Split::Val, cfg.train.batch_size);
  std::cout << "trained " << trainer.steps_done() - first_step << " steps in "
            << format_duration(seconds) << "\n"
            << "val loss over the whole split (" << honest.positions
            << " positions, sequential windows): " << honest.loss << "   (step " << first_step
            << ": " << val0 << ")\n"
            << "wrote " << checkpoint_path(dir).string() << ", metrics.jsonl, loss.svg\n";
  if (args.sample_tokens > 0) {
    llama::GenerateOptions gen;
    gen.max_new_tokens = args.sample_tokens;
    gen.sampling.temperature = 0.8;
    gen.seed = cfg.train.seed;
    const auto ids = llama::generate(*model, corpus.tokenizer.encode_ids("\n"), gen);
    std::cout << "sample (temperature 0.8):\n"
              << "----------------------------------------\n"
              << corpus.tokenizer.decode(ids) << "\n"
              << "----------------------------------------\n";
  }
  return 0;
}

}  // namespace stride::app
