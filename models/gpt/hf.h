// Hugging Face checkpoints in and out: a directory as `save_pretrained`
// writes it (config.json, model.safetensors or model-0000N-of-0000M shards
// with model.safetensors.index.json) for GPT2LMHeadModel.
//
// Hugging Face's GPT-2 stores its projections as Conv1D weights, (in, out);
// stride's Linear holds (out, in), so those four per block are transposed on
// the way in and out. Names gain or lose the "transformer." prefix (older
// checkpoints omit it), the causal-mask buffers of old checkpoints
// ("attn.bias", "attn.masked_bias") are skipped, and a tied lm_head, which
// save_pretrained leaves out, is the embedding.
#pragma once

#include <filesystem>
#include <memory>

#include "llama/config.h"
#include "llama/model.h"

namespace stride::gpt {

// The model config of a Hugging Face model directory's config.json. Throws
// llama::ConfigError naming the file and the key for an architecture stride
// does not implement, a missing or ill-typed key, or a setting that would
// change the arithmetic (another activation, scaled attention off, ...).
llama::ModelConfig read_hf_config(const std::filesystem::path& dir);

// The model of a Hugging Face directory, with its weights. Throws IOError
// naming the file for a missing shard or weights file, and naming the file
// and the key for a tensor missing, unexpected or of another shape than the
// config implies.
std::shared_ptr<llama::LanguageModel> load_hf(const std::filesystem::path& dir);

// Writes `model` (arch gpt2) as save_pretrained would: config.json and
// model.safetensors, so that transformers' from_pretrained loads it.
void save_hf(const llama::LanguageModel& model, const std::filesystem::path& dir);

}  // namespace stride::gpt
