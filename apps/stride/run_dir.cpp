#include "run_dir.h"

#include "llama/inspect.h"
#include "stride/data/tiny_shakespeare.h"

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
