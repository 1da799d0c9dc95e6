// What a subword tokenizer does, whichever file it comes from: text to ids
// and back. Two implementations: BPETokenizer (stride/data/bpe.h), byte-level
// BPE from a Hugging Face tokenizer.json (GPT-2, Llama 3), and
// SentencePieceTokenizer (stride/data/sentencepiece.h), a SentencePiece model
// file (Llama 2's tokenizer.model).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace stride::data {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  virtual std::vector<int64_t> encode(std::string_view text) const = 0;
  // Throws ValueError for an id outside the vocabulary.
  virtual std::string decode(const std::vector<int64_t>& ids) const = 0;
  // Ids run 0..vocab_size()-1.
  virtual int64_t vocab_size() const = 0;
  // The ids a text to be continued (a prompt) starts with: the special
  // tokens that the reference tokenizer puts before a sequence by default
  // (transformers' add_special_tokens), such as a BOS. encode() adds none.
  virtual std::vector<int64_t> prefix_ids() const { return {}; }
};

// The tokenizer of a Hugging Face model directory: its tokenizer.model
// (SentencePiece) where it has one, which is the reference its
// tokenizer.json was converted from, else its tokenizer.json (byte-level
// BPE). Throws IOError naming the directory when it has neither.
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& dir);

}  // namespace stride::data
