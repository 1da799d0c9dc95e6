// What `stride train` writes into its --out directory, and how the other
// commands load it back (--ckpt DIR):
//
//   DIR/config.json              the effective config (every field)
//   DIR/tokenizer.json           the character vocabulary
//   DIR/checkpoint.safetensors   model, optimizer, schedule, step, generators (atomic)
//   DIR/metrics.jsonl            one JSON object per logged step
//   DIR/loss.svg                 train and val loss against step
//   DIR/trace.json               with --profile: a Chrome trace of the profiled steps
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "llama/config.h"
#include "llama/model.h"
#include "stride/checkpoint.h"
#include "stride/data/text.h"

namespace stride::app {

namespace fs = std::filesystem;

inline fs::path checkpoint_path(const fs::path& dir) {
  return dir / "checkpoint.safetensors";
}
inline fs::path tokenizer_path(const fs::path& dir) {
  return dir / "tokenizer.json";
}

// A trained model loaded from a run directory.
struct LoadedRun {
  llama::RunConfig config;
  data::CharTokenizer tokenizer;
  std::shared_ptr<llama::LanguageModel> model;
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

// Refuses, before anything is built, a config whose model (and with
// with_train_step, whose training step: parameters, gradients, Adam state,
// activations at its batch and context) needs more memory than is available,
// or, for a meta build, more tensors than can be listed. Measured on meta
// (llama::estimate_memory), so any config is checked in milliseconds.
void check_fits_in_memory(const llama::RunConfig& config, bool with_train_step);
// Refuses a config too large to build even on meta (inspect): one whose
// model has more than a million tensors.
void check_fits_on_meta(const llama::RunConfig& config);

// The weights of `run` in a safetensors file that PyTorch and Hugging Face
// tooling read: the state dict under its names (Meta's for the Llama), with
// the config and the tokenizer as metadata, so that --weights needs nothing
// else.
void export_weights(const LoadedRun& run, const std::string& path);

// The corpus for a run: TinyShakespeare found by --data / $STRIDE_DATA /
// data/ (or downloaded), tokenized with `tokenizer` when given.
data::CharCorpus load_corpus(const std::optional<std::string>& data_path,
                             const data::CharTokenizer* tokenizer = nullptr);

// Encodes a prompt; a character outside the vocabulary is a ValueError that
// names it and lists the vocabulary.
std::vector<int64_t> encode_prompt(const data::CharTokenizer& tokenizer, const std::string& prompt);

}  // namespace stride::app
