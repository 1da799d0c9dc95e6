#include "run_dir.h"

#include "llama/inspect.h"
#include "llama/weights.h"
#include "stride/allocator.h"
#include "stride/data/tiny_shakespeare.h"
#include "stride/io.h"
#include "support/text.h"

namespace stride::app {

LoadedRun load_run(const fs::path& dir) {
  if (!fs::exists(checkpoint_path(dir)) || !fs::exists(tokenizer_path(dir))) {
    throw IOError("no trained run in " + dir.string() + " (expected " +
                  checkpoint_path(dir).filename().string() + " and " +
                  tokenizer_path(dir).filename().string() +
                  "). Hint: pass the --out directory of `stride train`, e.g. --ckpt runs/demo.");
  }
  CheckpointState state = load_checkpoint(checkpoint_path(dir).string());
  llama::RunConfig config = llama::parse_saved_config(state.config, checkpoint_path(dir).string());
  llama::check_config_fits_checkpoint(config, state, checkpoint_path(dir).string());
  data::CharTokenizer tokenizer = data::CharTokenizer::load(tokenizer_path(dir));
  if (tokenizer.vocab_size() != config.model.vocab_size) {
    throw ValueError(
        "the tokenizer in " + dir.string() + " has " + std::to_string(tokenizer.vocab_size()) +
        " symbols but the model was built for " + std::to_string(config.model.vocab_size) +
        ". Hint: the directory mixes files of two runs.");
  }
  auto model = llama::build_model(config.model);
  try {
    restore_checkpoint(state, *model, nullptr, nullptr);
  } catch (const Error& e) {
    throw ValueError("the checkpoint in " + dir.string() +
                     " does not fit the model of its config (" +
                     std::string(llama::arch_name(config.model.arch)) + "): " + e.what());
  }
  return {std::move(config), std::move(tokenizer), std::move(model), std::move(state)};
}

namespace {

// The run of a weights file: its tensors as the checkpoint's model state.
LoadedRun load_weights(const ModelSource& source, const std::optional<std::string>& data) {
  const std::string& path = *source.weights;
  io::SafetensorsContents file = io::load_safetensors(path);
  const auto meta = [&](const char* key) -> const std::string* {
    const auto it = file.metadata.find(key);
    return it == file.metadata.end() ? nullptr : &it->second;
  };
  llama::RunConfig config;
  if (source.config) {
    config = llama::load_config(*source.config);
  } else if (const std::string* saved = meta("stride.config")) {
    config = llama::parse_saved_config(*saved, path);
  } else {
    throw ValueError(path +
                     " carries no config (\"stride.config\" metadata). Hint: pass "
                     "--config FILE describing its model.");
  }
  std::optional<data::CharTokenizer> tokenizer;
  if (const std::string* saved = meta("stride.tokenizer")) {
    tokenizer = data::CharTokenizer::from_json(*saved);
  } else {
    tokenizer = load_corpus(data).tokenizer;
  }
  config.model.vocab_size = tokenizer->vocab_size();
  CheckpointState state;
  state.model = llama::state_dict_from(std::move(file));
  auto model = llama::build_with_weights(config, state.model, path);
  return {std::move(config), std::move(*tokenizer), std::move(model), std::move(state)};
}

}  // namespace

void check_fits_in_memory(const llama::RunConfig& config, bool with_train_step) {
  const llama::MemoryEstimate need = llama::estimate_memory(config, with_train_step);
  const uint64_t bytes = with_train_step ? need.train_step_bytes : need.model_bytes;
  const size_t available = available_cpu_memory();
  if (bytes <= available) return;
  throw ValueError(
      std::string(with_train_step ? "a training step of this config needs "
                                  : "the model of this config needs ") +
      bytes_text(bytes) +
      (with_train_step ? " (parameters, gradients, Adam state and activations at batch_size " +
                             std::to_string(config.train.batch_size) + " and context " +
                             std::to_string(config.model.context) + ")"
                       : std::string()) +
      ", but " + bytes_text(available) +
      " is available. Hint: lower train.batch_size, model.context or the model's size; "
      "`stride inspect --config FILE` shows where the memory goes.");
}

void check_fits_on_meta(const llama::RunConfig& config) {
  constexpr uint64_t kMaxTensors = 1'000'000;
  const llama::MemoryEstimate need = llama::estimate_memory(config, /*with_train_step=*/false);
  if (need.state_tensors > kMaxTensors) {
    throw ValueError("this config's model has " + std::to_string(need.state_tensors) +
                     " tensors (" + std::to_string(config.model.n_layers) +
                     " layers), more than the " + std::to_string(kMaxTensors) +
                     " stride lists. Hint: check model.n_layers.");
  }
}

LoadedRun load_model(const ModelSource& source, const std::optional<std::string>& data) {
  if (source.weights) return load_weights(source, data);
  if (source.ckpt) return load_run(*source.ckpt);
  throw ValueError(
      "this command needs a model: --ckpt DIR (a run of stride train) or "
      "--weights FILE (a safetensors file of weights).");
}

void export_weights(const LoadedRun& run, const std::string& path) {
  llama::save_weights(path, *run.model, run.config,
                      {{"stride.tokenizer", run.tokenizer.to_json()}});
}

data::CharCorpus load_corpus(const std::optional<std::string>& data_path,
                             const data::CharTokenizer* tokenizer) {
  return data::load_char_corpus(data::find_tinyshakespeare(data_path), tokenizer);
}

std::vector<int64_t> encode_prompt(const data::CharTokenizer& tokenizer,
                                   const std::string& prompt) {
  if (const auto unknown = tokenizer.first_unknown(prompt)) {
    throw ValueError("the prompt contains " + data::escape_char(unknown->first) + " at byte " +
                     std::to_string(unknown->second) +
                     ", which is not in the model's vocabulary of " +
                     std::to_string(tokenizer.vocab_size()) +
                     " characters. Hint: use only characters of the training text.");
  }
  return tokenizer.encode_ids(prompt);
}

}  // namespace stride::app
