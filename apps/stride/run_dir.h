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

// The corpus for a run: TinyShakespeare found by --data / $STRIDE_DATA /
// data/ (or downloaded), tokenized with `tokenizer` when given.
data::CharCorpus load_corpus(const std::optional<std::string>& data_path,
                             const data::CharTokenizer* tokenizer = nullptr);

// Encodes a prompt; a character outside the vocabulary is a ValueError that
// names it and lists the vocabulary.
std::vector<int64_t> encode_prompt(const data::CharTokenizer& tokenizer, const std::string& prompt);

}  // namespace stride::app
