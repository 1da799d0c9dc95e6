// The tokenizer a GGUF file carries in its tokenizer.ggml.* metadata, as
// llama.cpp runs it:
//  - "llama": SentencePiece (tokens, scores and token types; BPE with byte
//    fallback, as Llama 2's tokenizer.model), run by libsentencepiece on a
//    model rebuilt from the metadata (SentencePieceTokenizer);
//  - "gpt2": byte-level BPE (tokens and merges; the control and
//    user-defined tokens as added tokens) with the pre-tokenizer that
//    tokenizer.ggml.pre names, "gpt2" or "llama-bpe" (BPETokenizer).
// A prompt starts with the BOS token where tokenizer.ggml.add_bos_token says
// so (by default: yes for "llama", no for "gpt2", as llama.cpp).
#pragma once

#include <memory>
#include <string>

#include "stride/data/tokenizer.h"
#include "stride/gguf.h"

namespace stride::data {

// Throws ValueError naming `file` and the key for a tokenizer or
// pre-tokenizer stride does not run, or metadata of the wrong type or size.
std::unique_ptr<Tokenizer> load_gguf_tokenizer(const io::GgufHeader& header,
                                               const std::string& file);

}  // namespace stride::data
