// Hugging Face checkpoints in and out: a directory as `save_pretrained`
// writes it (config.json, model.safetensors or model-0000N-of-0000M shards
// with model.safetensors.index.json) for LlamaForCausalLM, GPT2LMHeadModel
// and BertForMaskedLM.
//
// Each architecture has a layout (hf.cpp) that maps Hugging Face's tensor
// names and storage onto stride's modules:
//  - LlamaForCausalLM: `model.layers.N.self_attn.q_proj` is stride's
//    `layers.N.attention.wq`, `mlp.gate_proj/up_proj/down_proj` are
//    `feed_forward.w1/w3/w2`, and so on. Hugging Face rotates RoPE pairs
//    (x[i], x[i + d/2]) (rotate_half), so a loaded model gets rope_style
//    "half" and uses the weights as they are; a model trained here with
//    Meta's interleaved pairs has its q and k projections' rows permuted on
//    export (the permutation of Hugging Face's own conversion script), so
//    transformers computes the same function. Grouped-query attention
//    (num_key_value_heads) maps onto n_kv_heads.
//  - GPT2LMHeadModel: stride's names are Hugging Face's; its Conv1D
//    projections are stored (in, out) and stride's Linear holds (out, in), so
//    those four per block are transposed both ways. Older checkpoints omit
//    the "transformer." prefix and carry causal-mask buffers ("attn.bias",
//    "attn.masked_bias"), which are skipped.
//  - BertForMaskedLM (and BertForPreTraining's checkpoints): stride's names
//    are Hugging Face's. Loading skips what the masked LM does not compute
//    (the pooler, the next-sentence head, saved position ids), reads the
//    decoder's bias as the head's, and Google's original names LayerNorm.gamma
//    and .beta (bert-base-uncased's files) as .weight and .bias. A BertModel
//    alone, without the masked-LM head, is refused with a sentence.
// A tied output projection, which save_pretrained leaves out, is the
// embedding.
//
// Loading maps the safetensors files (io::map_safetensors) and copies each
// tensor into a model materialised without initialisation, dropping each
// mapping once copied: the process holds the weights once, plus at most one
// tensor's mapped pages.
#pragma once

#include <filesystem>
#include <memory>

#include "llama/model.h"
#include "lm/config.h"

namespace stride::hf {

// The model config of a Hugging Face model directory's config.json. Throws
// lm::ConfigError naming the file and the key for an architecture stride
// does not implement, a missing or ill-typed key, or a setting that would
// change the arithmetic (another activation, biases, RoPE scaling, ...).
lm::ModelConfig read_config(const std::filesystem::path& dir);

// The model of a Hugging Face directory, with its weights, in eval mode.
// Throws IOError naming the file for a missing shard or weights file, and
// ValueError naming the file and the key for a tensor missing, unexpected or
// of another shape than the config implies.
std::shared_ptr<lm::LanguageModel> load(const std::filesystem::path& dir);

// Writes `model` (the correct Llama, GPT-2 or BERT) as save_pretrained would:
// config.json and model.safetensors, so that transformers' from_pretrained
// loads it and computes the same logits. Other models throw ValueError.
void save(const lm::LanguageModel& model, const std::filesystem::path& dir);

}  // namespace stride::hf
