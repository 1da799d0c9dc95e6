// llama.cpp's model files (GGUF) as stride models: the Llama architecture
// ("general.architecture": "llama"), its config from the file's llama.*
// metadata, its weights from the file's tensors, and its tokenizer from
// tokenizer.ggml.* (data::load_gguf_tokenizer).
//
// llama.cpp's converter stores a Llama's q and k projections with Meta's
// interleaved RoPE pairs (it permutes Hugging Face's rows back), so a GGUF
// Llama is rope_style "interleaved" with the weights as they are. Tensor
// names map onto Meta's (token_embd -> tok_embeddings, blk.N.attn_q ->
// layers.N.attention.wq, ffn_gate/ffn_up/ffn_down -> w1/w3/w2, ...); a file
// without output.weight ties the head to the embedding.
//
// Each linear layer's weight is the file's bytes, mapped without a copy,
// where stride computes on them as stored (Note [Weight formats]): F32,
// BF16, Q8_0 (int8) and Q4_0 (int4). F16 and the k-quants (Q4_K, Q6_K) are
// decoded to float32 on load, as are the embedding and the norms of any
// type; a tensor of another type is refused with its name and type.
#pragma once

#include <filesystem>
#include <memory>

#include "lm/config.h"
#include "lm/language_model.h"
#include "stride/gguf.h"

namespace stride::gguf {

// The model config of a GGUF file's metadata (`file` names it in errors).
// Throws lm::ConfigError naming the key for an architecture other than
// Llama, a missing or ill-typed key, or a setting stride does not compute
// (RoPE scaling other than linear, frequency factors, a head size other
// than d_model / n_heads).
lm::ModelConfig read_config(const io::GgufContents& contents, const std::string& file);

// The model of a GGUF file, with its weights, in eval mode. Throws IOError
// for a file that is not valid GGUF, lm::ConfigError as read_config, and
// ValueError naming the file and the tensor for one that is missing,
// unexpected, or of another shape than the config implies.
std::shared_ptr<lm::LanguageModel> load(const std::filesystem::path& file);

}  // namespace stride::gguf
