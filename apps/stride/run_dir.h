// What `stride train` writes into its --out directory, and how the other
// commands load it back (--ckpt DIR):
//
//   DIR/config.json              the effective config (every field)
//   DIR/tokenizer.json           the character vocabulary (stride's format), or,
//                                for a run started from a Hugging Face model
//                                (train --hf), that model's tokenizer.json
//   DIR/tokenizer.model          or its SentencePiece model
//   DIR/checkpoint.safetensors   model, optimizer, schedule, step, generators (atomic)
//   DIR/metrics.jsonl            one JSON object per logged step
//   DIR/loss.svg                 train and val loss against step
//   DIR/trace.json               with --profile: a Chrome trace of the profiled steps
//
// Besides loading runs, this is the bookkeeping of `stride train` around its
// loop (train.cpp): where a run starts from and what its command line
// changes, and its metrics.jsonl and loss curve across a resume.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "llama/model.h"
#include "lm/config.h"
#include "lm/inspect.h"
#include "lm/train.h"
#include "stride/checkpoint.h"
#include "stride/data/text.h"
#include "stride/weight_format.h"
#include "support/chart.h"

namespace stride::app {

namespace fs = std::filesystem;

struct TrainArgs;  // commands.h, which includes this header

inline fs::path checkpoint_path(const fs::path& dir) {
  return dir / "checkpoint.safetensors";
}
inline fs::path tokenizer_path(const fs::path& dir) {
  return dir / "tokenizer.json";
}

using TokenizerPtr = std::shared_ptr<const data::Tokenizer>;

// The tokenizer as the character tokenizer of a run trained from a config,
// or null for a Hugging Face model's subword tokenizer.
inline const data::CharTokenizer* as_chars(const data::Tokenizer& tokenizer) {
  return dynamic_cast<const data::CharTokenizer*>(&tokenizer);
}

// A run directory's tokenizer: DIR/tokenizer.model (SentencePiece) where
// there is one, else DIR/tokenizer.json, stride's character vocabulary or a
// Hugging Face tokenizer.json.
TokenizerPtr load_run_tokenizer(const fs::path& dir);
// Writes a run's tokenizer into DIR: a character tokenizer as tokenizer.json;
// a subword tokenizer by copying the tokenizer files of `source`, the
// Hugging Face directory it came from (nothing when that is DIR itself).
void save_run_tokenizer(const data::Tokenizer& tokenizer,
                        const std::optional<fs::path>& source,
                        const fs::path& dir);

// A trained model loaded from a run directory.
struct LoadedRun {
  lm::RunConfig config;
  TokenizerPtr tokenizer;
  std::shared_ptr<lm::LanguageModel> model;
  CheckpointState state;
};

// Throws IOError with a hint when DIR is not a run directory, and a
// ValueError naming the keys when the checkpoint does not fit its config.
LoadedRun load_run(const fs::path& dir);

// Where a command's model comes from: a run directory (--ckpt), or a
// weights-only safetensors file (--weights: what `stride export` writes, or
// a state dict saved from PyTorch with stride's parameter names).
struct ModelSource {
  std::optional<std::string> ckpt, weights;
  std::optional<std::string> config;  // for weights whose file carries none
};

// load_run for --ckpt. For --weights: the config from the file's
// "stride.config" metadata, else --config; the tokenizer from its
// "stride.tokenizer", else built from the corpus at `data`; the model
// checked against the file's tensors before it is built, then loaded
// strictly (a name mismatch lists every key).
LoadedRun load_model(const ModelSource& source, const std::optional<std::string>& data);

// Refuses, before anything is built or allocated in proportion to the
// context, a config whose workload (the model alone, a training step, an
// evaluation's forward pass, or generation's KV cache and forward pass:
// lm::Workload) needs more memory than is available, or whose sizes
// overflow int64. Measured on meta (lm::estimate_memory), so any config
// is checked in milliseconds.
void check_fits_in_memory(const lm::RunConfig& config, const lm::Workload& workload);
// Refuses a config too large to build even on meta (inspect): one whose
// model has more than a million tensors.
void check_fits_on_meta(const lm::RunConfig& config);

// Says once, on stderr, how bf16 autocast computes where the CPU kernels in
// use have no bf16 dot-product instructions (stride::cpu_has_bf16_dot_product);
// nothing where they have them.
void note_bf16_autocast();

// The weights of `run` in a safetensors file that PyTorch and Hugging Face
// tooling read: the state dict under its names (Meta's for the Llama), with
// the config and the tokenizer as metadata, so that --weights needs nothing
// else. With `format` other than float32, the linear layers' weights are
// stored in it (lm::pack_weights), named by "stride.weights_dtype" metadata,
// which --weights reads back.
void export_weights(const LoadedRun& run,
                    const std::string& path,
                    WeightFormat format = WeightFormat::Float32);

// Refuses a subword tokenizer with ids beyond a Hugging Face model's
// vocabulary (which may be larger: padded); `where` names the model.
void check_tokenizer_fits(const data::Tokenizer& tokenizer,
                          int64_t vocab_size,
                          const std::string& where);

// A run's text in its tokenizer's ids, with the article's split.
struct Corpus {
  TokenizerPtr tokenizer;
  data::TokenDataset data;
};

// The corpus for a run: TinyShakespeare found by --data / $STRIDE_DATA /
// data/ (or downloaded), tokenized with `tokenizer`, or with a character
// tokenizer built from the text when none is given.
Corpus load_corpus(const std::optional<std::string>& data_path, TokenizerPtr tokenizer = nullptr);

// Encodes a prompt after the tokenizer's prefix_ids() (a Hugging Face
// model's BOS, as transformers starts a sequence); with a character
// tokenizer, a character outside the vocabulary is a ValueError that names
// it.
std::vector<int64_t> encode_prompt(const data::Tokenizer& tokenizer, const std::string& prompt);

// ---- a run's start: from a config, a Hugging Face model or a run to resume ----

// What a run starts from: a fresh config, or a saved run to continue.
struct RunStart {
  lm::RunConfig cfg;
  std::optional<CheckpointState> resume_state;
  TokenizerPtr tokenizer;                 // null: built from the corpus
  std::optional<fs::path> tokenizer_dir;  // a Hugging Face model's, to copy into the run
};

RunStart load_run_start(const TrainArgs& args);

// Command-line flags win over the config; a warm-up longer than a shortened
// run would leave the schedule nothing to decay, so it shrinks with it. On
// resume, --steps is the step to end at (as most tools count), and the
// learning-rate schedule keeps the length it started with, so the lr goes
// on where it was rather than jumping to another curve. train.decay_steps
// 0 (the run's length) is recorded resolved.
void apply_overrides(const TrainArgs& args, const RunStart& run, lm::RunConfig& cfg);

// On resume, prints what the command line changed in the run's config.
void print_config_changes(const lm::RunConfig& saved, const lm::RunConfig& now);

// The run's directory: --out, the resumed run's, or runs/NAME. A new run
// never overwrites another silently (its checkpoint and metrics would be
// lost): ValueError without --force.
fs::path run_directory(const TrainArgs& args, const lm::RunConfig& cfg);

// ---- metrics.jsonl and loss.svg ----

// What loss.svg plots: the training loss of the logged steps (every
// kMetricsEvery), smoothed, beside the evaluations.
struct Curves {
  Series steps{"train loss (logged steps, smoothed)", {}, {}, ""};
  Series train{"train loss (10-batch estimate)", {}, {}, ""};
  Series val{"val loss (10-batch estimate)", {}, {}, ""};

  // An exponential moving average over the logged steps: one batch's loss
  // is noisy, and a fresh run and a resumed one smooth the same points.
  void add_step_loss(int64_t step, double loss) {
    constexpr double kWeight = 0.2;  // of the newest point
    const double smoothed =
        steps.y.empty() ? loss : steps.y.back() + kWeight * (loss - steps.y.back());
    steps.x.push_back(double(step));
    steps.y.push_back(smoothed);
  }
};

void write_curves(const fs::path& dir, const Curves& curves, const std::string& title);

// A metrics.jsonl line for a step (val_loss null until an evaluation fills it).
nlohmann::json metrics_line(const lm::StepResult& r, double tokens_per_s, double elapsed);

// What metrics.jsonl says of a run up to its checkpoint.
struct MetricsHistory {
  std::string lines;   // the lines of steps <= the checkpoint's, each with its "\n"
  Curves curves;       // their evaluations
  double elapsed = 0;  // the last line's elapsed seconds
  double first_val_loss = std::nan("");  // the run's first evaluation
  int64_t first_val_step = 0;
};

// On resume, metrics.jsonl keeps the lines up to the checkpoint's step: the
// steps after it (written before a kill) are trained again and would
// otherwise appear twice. The kept history also continues the loss curve
// and the elapsed time.
MetricsHistory truncate_metrics(const fs::path& file, int64_t checkpoint_step);

}  // namespace stride::app
