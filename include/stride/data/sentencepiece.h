// SentencePiece models (the tokenizer.model of Llama 2, Mistral, T5, ...),
// run by Google's own library (Debian's libsentencepiece): the ids of the
// `sentencepiece` Python package and of transformers' LlamaTokenizer
// (legacy), without the BOS id those add. decode(encode(s)) == s for text
// the model's normalizer leaves as it is (Llama 2's: identity, with byte
// fallback for characters outside the vocabulary).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stride/data/tokenizer.h"

namespace stride::data {

class SentencePieceTokenizer final : public Tokenizer {
 public:
  // Reads a model file; throws IOError naming it when it cannot be read or
  // is not a SentencePiece model.
  static SentencePieceTokenizer from_file(const std::string& path);
  // The serialized model (the file's bytes); `source` names it in errors.
  static SentencePieceTokenizer from_bytes(std::string_view bytes, const std::string& source);
  ~SentencePieceTokenizer() override;
  SentencePieceTokenizer(SentencePieceTokenizer&&) noexcept;
  SentencePieceTokenizer& operator=(SentencePieceTokenizer&&) noexcept;

  std::vector<int64_t> encode(std::string_view text) const override;
  std::string decode(const std::vector<int64_t>& ids) const override;
  int64_t vocab_size() const override;
  // {BOS} where the model has one: transformers' LlamaTokenizer starts
  // every sequence with it by default (Llama 2 was trained so).
  std::vector<int64_t> prefix_ids() const override;
  std::optional<int64_t> token_to_id(std::string_view piece) const override;
  // The model's special ids; nullopt where it has none.
  std::optional<int64_t> bos_id() const;
  std::optional<int64_t> eos_id() const;

  struct Impl;

 private:
  explicit SentencePieceTokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace stride::data
