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
#include "hf/hf.h"
#include "lm/generate.h"
#include "lm/registry.h"
#include "lm/train.h"
#include "lm/weights.h"
#include "run_dir.h"
#include "stride/distributed.h"
#include "stride/io.h"
#include "stride/ops.h"
#include "stride/parallel.h"
#include "stride/profiler.h"
#include "support/progress.h"

namespace stride::app {

namespace {

// The signal that stopped the run (0: none). SIGINT is Ctrl-C; SIGTERM is
// what timeout, systemd, Slurm and Kubernetes send; SIGHUP, a closed
// terminal. Each ends the run as Ctrl-C does: after the current step, with
// a checkpoint.
std::atomic<int> g_stop_signal{0};
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};

extern "C" void on_stop_signal(int sig) {
  g_stop_signal = sig;
}

// Installs on_stop_signal for the run's loop, and restores the previous
// handlers after it.
class StopSignals {
 public:
  StopSignals() {
    g_stop_signal = 0;
    for (size_t i = 0; i < std::size(kStopSignals); ++i)
      previous_[i] = std::signal(kStopSignals[i], on_stop_signal);
  }
  ~StopSignals() {
    for (size_t i = 0; i < std::size(kStopSignals); ++i) std::signal(kStopSignals[i], previous_[i]);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  static int received() { return g_stop_signal; }

 private:
  void (*previous_[std::size(kStopSignals)])(int);
};

// True when `mine` is true on any rank. In a data-parallel run the ranks
// must stop, and save (a collective with sharded optimizer state), after
// the same step, though each gets the launcher's forwarded signal, and sees
// the clock of time-based checkpoints, at its own moment.
bool on_any_rank(bool mine) {
  if (!distributed::is_initialized() || distributed::world_size() == 1) return mine;
  Tensor flag = full({1}, int64_t(mine), TensorOptions(kInt64));
  distributed::all_reduce(flag, distributed::ReduceOp::Max);
  return flag.item<int64_t>() != 0;
}

// Rank 0 of a data-parallel run (and every single-process run) prints, logs
// metrics, evaluates and writes the run's files; the other ranks only train.
bool is_lead_rank() {
  return !distributed::is_initialized() || distributed::rank() == 0;
}

// Steps between metrics lines: every step is too much for long runs.
constexpr int64_t kMetricsEvery = 10;

// A character model's vocabulary must be the corpus's, whatever the config
// said; a Hugging Face model must have an id for each of its tokenizer's.
void fit_vocab_to_corpus(const Corpus& corpus, lm::RunConfig& cfg) {
  const int64_t have = corpus.tokenizer->vocab_size();
  if (!as_chars(*corpus.tokenizer)) {
    check_tokenizer_fits(*corpus.tokenizer, cfg.model.vocab_size, cfg.name);
    return;
  }
  if (have == cfg.model.vocab_size) return;
  std::cout << "note: the corpus has " << have
            << " distinct characters; model.vocab_size set to that (config said "
            << cfg.model.vocab_size << ")\n";
  cfg.model.vocab_size = have;
}

// Writes config.json and the tokenizer, so the run can be resumed or
// inspected; returns the config as saved (checkpoints embed it).
std::string write_run_files(const fs::path& dir,
                            const lm::RunConfig& cfg,
                            const Corpus& corpus,
                            const std::optional<fs::path>& tokenizer_dir) {
  io::create_directories(dir.string(), "train --out");
  const std::string config_json = lm::to_json(cfg);
  std::cout << "config (saved to " << (dir / "config.json").string() << "):\n"
            << config_json << "\n";
  io::write_file_atomically((dir / "config.json").string(), config_json + "\n", "train");
  save_run_tokenizer(*corpus.tokenizer, tokenizer_dir, dir);
  return config_json;
}

void print_model_summary(const lm::LanguageModel& model, const lm::RunConfig& cfg) {
  std::cout << model.name() << " (" << cfg.model.arch << "): " << model.num_parameters(true)
            << " parameters, " << get_num_threads() << " threads, batch " << cfg.train.batch_size
            << " x context " << cfg.model.context << ", " << cfg.train.steps << " steps\n";
}

// Tokens per second over windows of at least a second, so that the number
// shown is steady yet recent.
class Throughput {
 public:
  using Clock = std::chrono::steady_clock;
  explicit Throughput(double tokens_per_step)
      : tokens_per_step_(tokens_per_step), start_(Clock::now()), window_start_(start_) {}

  // Counts one step ending at `now`; returns the current rate.
  double step(Clock::time_point now) {
    ++window_steps_;
    const double window = std::chrono::duration<double>(now - window_start_).count();
    if (window >= 1.0 || tokens_per_s_ == 0) {
      tokens_per_s_ = tokens_per_step_ * double(window_steps_) / window;
      window_start_ = now;
      window_steps_ = 0;
    }
    return tokens_per_s_;
  }
  double seconds_since_start(Clock::time_point now) const {
    return std::chrono::duration<double>(now - start_).count();
  }

 private:
  double tokens_per_step_;
  Clock::time_point start_;
  Clock::time_point window_start_;
  int64_t window_steps_ = 0;
  double tokens_per_s_ = 0;
};

// Ends the profile of the first `profile_steps` steps once they are done.
void finish_profile(std::optional<profiler::Profiler>& prof,
                    int64_t profile_steps,
                    const fs::path& dir,
                    Progress& progress) {
  prof->stop();
  prof->export_chrome_trace((dir / "trace.json").string());
  progress.message(prof->key_averages().table("self_cpu_time_total", 25));
  progress.message("profile of " + std::to_string(profile_steps) + " steps written to " +
                   (dir / "trace.json").string());
  prof.reset();
}

// The loss over the whole val split, not a 10-batch estimate.
void print_final_report(lm::LanguageModel& model,
                        const Corpus& corpus,
                        const lm::RunConfig& cfg,
                        const fs::path& dir,
                        int64_t steps_trained,
                        double seconds,
                        int64_t first_step,
                        double first_val_loss) {
  const lm::SplitLoss honest =
      lm::evaluate_split(model, corpus.data, data::Split::Val, cfg.train.batch_size);
  std::cout << "trained " << steps_trained << " steps in " << format_duration(seconds) << "\n"
            << "val loss over the whole split (" << honest.positions
            << " positions, sequential windows): " << honest.loss << "   (step " << first_step
            << ": " << first_val_loss << ")\n"
            << "wrote " << checkpoint_path(dir).string() << ", metrics.jsonl, loss.svg\n";
}

void print_sample(lm::LanguageModel& model,
                  const Corpus& corpus,
                  const lm::RunConfig& cfg,
                  int64_t sample_tokens) {
  lm::GenerateOptions gen;
  gen.max_new_tokens = sample_tokens;
  gen.sampling.temperature = 0.8;
  gen.seed = cfg.train.seed;
  const auto ids = lm::generate(model, corpus.tokenizer->encode("\n"), gen);
  std::cout << "sample (temperature 0.8):\n"
            << "----------------------------------------\n"
            << corpus.tokenizer->decode(ids) << "\n"
            << "----------------------------------------\n";
}

// With ZeRO-1, the optimizer state this rank held beside the whole of it.
// Collective.
void report_sharded_state(const lm::Trainer& trainer) {
  if (!trainer.zero()) return;
  const int64_t mine = trainer.zero()->state_bytes();
  Tensor total = full({1}, mine, TensorOptions(kInt64));
  distributed::all_reduce(total);
  char text[160];
  std::snprintf(text, sizeof text,
                "ZeRO-1: rank 0 held %.2f MB of the optimizer state's %.2f MB (%d processes)\n",
                double(mine) / 1e6, double(total.item<int64_t>()) / 1e6, distributed::world_size());
  std::cout << text;
}

// A Hugging Face model to train: its weights copied out of the file's
// mapping into one block (Note [Packed parameters]), since every step writes
// them all.
std::shared_ptr<lm::LanguageModel> load_to_fine_tune(const std::string& dir) {
  auto model = hf::load(dir);
  model->pack_parameters();
  return model;
}

// The first lines of a run: where it starts and what it will do.
void print_plan(const lm::RunConfig& cfg,
                const fs::path& dir,
                int64_t first_step,
                bool resumed,
                double checkpoint_minutes) {
  std::cout << (resumed ? "resuming " : "starting ") << dir.string() << " at step " << first_step
            << ": " << cfg.train.steps - first_step << " steps to step " << cfg.train.steps;
  if (cfg.train.schedule == "cosine") {
    std::cout << "; cosine lr schedule over " << cfg.train.schedule_steps() << " steps";
  }
  std::cout << "; checkpoints every " << cfg.train.checkpoint_interval << " steps";
  if (checkpoint_minutes > 0) std::cout << " and " << checkpoint_minutes << " minutes";
  std::cout << "\n";
}

}  // namespace

int run_train(const TrainArgs& args) {
  RunStart run = load_run_start(args);
  lm::RunConfig& cfg = run.cfg;
  const lm::RunConfig saved = cfg;
  apply_overrides(args, run, cfg);
  if (run.resume_state) print_config_changes(saved, cfg);
  // Before the run directory exists: an encoder leaves nothing behind.
  lm::require_causal(cfg.model, "train");
  const fs::path dir = run_directory(args, cfg);
  const Corpus corpus = load_corpus(args.data, run.tokenizer);
  fit_vocab_to_corpus(corpus, cfg);
  check_fits_in_memory(cfg, {lm::Workload::Kind::Training});
  const bool lead = is_lead_rank();
  const std::string config_json =
      lead ? write_run_files(dir, cfg, corpus, run.tokenizer_dir) : lm::to_json(cfg);

  manual_seed(cfg.train.seed);
  auto model = args.hf        ? load_to_fine_tune(*args.hf)
               : args.weights ? lm::build_with_weights(
                                    cfg, lm::state_dict_from(io::load_safetensors(*args.weights)),
                                    *args.weights)
                              : lm::build_model(cfg.model);
  if (cfg.train.precision == "bf16") note_bf16_autocast();
  lm::Trainer trainer(model, cfg.train, corpus.data);
  if (run.resume_state) trainer.restore(*run.resume_state);
  print_model_summary(*model, cfg);
  const int64_t first_step = trainer.steps_done();
  print_plan(cfg, dir, first_step, run.resume_state.has_value(), args.checkpoint_minutes);

  MetricsHistory history;
  if (run.resume_state && lead) history = truncate_metrics(dir / "metrics.jsonl", first_step);
  Curves& curves = history.curves;
  auto evaluate = [&](int64_t step) {
    const auto [train_loss, val_loss] = trainer.estimate_train_val();
    curves.train.x.push_back(double(step));
    curves.train.y.push_back(train_loss);
    curves.val.x.push_back(double(step));
    curves.val.y.push_back(val_loss);
    if (std::isnan(history.first_val_loss)) {
      history.first_val_loss = val_loss;
      history.first_val_step = step;
    }
    return std::pair{train_loss, val_loss};
  };
  // A resumed run does not evaluate at its first step: the uninterrupted run
  // did not either (or did before saving), and an extra evaluation would
  // move the evaluation generator and change every later val_loss.
  if (!run.resume_state && lead) {
    const auto [train0, val0] = evaluate(first_step);
    std::cout << "step " << first_step << ": train loss " << train0 << ", val loss " << val0
              << " (uniform guess: " << std::log(double(cfg.model.vocab_size)) << ")\n";
  }

  std::ofstream metrics;  // written by the lead rank only
  if (lead) {
    metrics.open(dir / "metrics.jsonl", run.resume_state ? std::ios::app : std::ios::trunc);
  }
  Progress progress(cfg.train.steps, std::cout, stdout_is_terminal());
  using Clock = Throughput::Clock;
  Clock::time_point last_save = Clock::now();
  auto save = [&] {
    CheckpointState state = trainer.capture(config_json);  // every rank: it may gather
    if (lead) save_checkpoint(checkpoint_path(dir).string(), state);
    last_save = Clock::now();
  };
  const auto save_is_due = [&](int64_t step, Clock::time_point now) {
    const bool by_steps =
        cfg.train.checkpoint_interval > 0 && step % cfg.train.checkpoint_interval == 0;
    const bool by_time =
        args.checkpoint_minutes > 0 &&
        std::chrono::duration<double>(now - last_save).count() >= args.checkpoint_minutes * 60;
    return by_steps || by_time;
  };
  std::optional<profiler::Profiler> prof;
  if (args.profile_steps > 0) {
    prof.emplace(profiler::ProfilerOptions{.record_shapes = false});
    prof->start();
  }
  Throughput throughput(double(cfg.train.batch_size * cfg.model.context));
  bool stopped = false;
  {
    StopSignals stop_signals;
    while (trainer.steps_done() < cfg.train.steps &&
           !(stopped = on_any_rank(StopSignals::received() != 0))) {
      const lm::StepResult r = trainer.step();
      const auto now = Clock::now();
      const double tokens_per_s = throughput.step(now);
      const double elapsed = history.elapsed + throughput.seconds_since_start(now);
      progress.update(r.step, r.loss, tokens_per_s, elapsed);
      if (prof && r.step - first_step == args.profile_steps)
        finish_profile(prof, args.profile_steps, dir, progress);
      nlohmann::json line = metrics_line(r, tokens_per_s, elapsed);
      const bool eval_now =
          lead && (r.step % cfg.train.eval_interval == 0 || r.step == cfg.train.steps);
      if (eval_now) {
        const auto [train_loss, val_loss] = evaluate(r.step);
        line["val_loss"] = val_loss;
        line["train_loss_estimate"] = train_loss;
        char text[160];
        std::snprintf(text, sizeof text, "step %lld: train loss %.4f, val loss %.4f, lr %.2e",
                      static_cast<long long>(r.step), train_loss, val_loss, r.lr);
        progress.message(text);
      }
      if (eval_now || r.step % kMetricsEvery == 0) {
        metrics << line.dump() << "\n" << std::flush;
        curves.add_step_loss(r.step, r.loss);
      }
      if (on_any_rank(save_is_due(r.step, now))) save();
    }
  }
  progress.finish();
  if (prof) prof->stop();
  save();
  if (lead) write_curves(dir, curves, cfg.name);
  if (stopped) {
    const int sig = StopSignals::received();
    std::cout << "stopped by "
              << (sig == SIGINT    ? "Ctrl-C"
                  : sig == SIGTERM ? "SIGTERM"
                  : sig == SIGHUP  ? "SIGHUP"
                                   : "a signal to another rank")
              << " at step " << trainer.steps_done() << ": checkpoint saved to "
              << checkpoint_path(dir).string() << " (continue with --resume " << dir.string()
              << ")\n";
    return 128 + (sig != 0 ? sig : SIGTERM);
  }
  report_sharded_state(trainer);
  if (!lead) return 0;
  const double seconds = throughput.seconds_since_start(Clock::now());
  print_final_report(*model, corpus, cfg, dir, trainer.steps_done() - first_step, seconds,
                     history.first_val_step, history.first_val_loss);
  if (args.sample_tokens > 0) print_sample(*model, corpus, cfg, args.sample_tokens);
  return 0;
}

}  // namespace stride::app
