// Byte-level BPE, as Hugging Face `tokenizers` runs a tokenizer.json of
// GPT-2's kind (the ByteLevel pre-tokenizer and its regex) or Llama 3's (a
// Split regex, then ByteLevel without one, and ignore_merges).
//
// Encoding: the text is cut at the added tokens (`<|endoftext|>`, ...),
// which map to their ids; each other stretch is cut into pieces by the
// pre-tokenizer's regex (PCRE2 with Unicode properties runs the pattern the
// file gives), each piece's bytes become the 256 printable stand-ins of
// byte-level BPE, and the BPE merges join them, lowest rank first. Decoding
// maps the tokens' characters back to bytes, so decode(encode(s)) == s for
// any UTF-8 s.
//
// A tokenizer.json using anything else (a normalizer, Metaspace,
// byte fallback, ...) is refused with a ConfigError-like ValueError naming
// the file and the key, never run approximately.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stride/data/tokenizer.h"

namespace stride::data {

class BPETokenizer final : public Tokenizer {
 public:
  // Reads a tokenizer.json; `source` names it in errors.
  static BPETokenizer from_file(const std::string& path);
  static BPETokenizer from_json(std::string_view json_text, const std::string& source);
  ~BPETokenizer() override;
  BPETokenizer(BPETokenizer&&) noexcept;
  BPETokenizer& operator=(BPETokenizer&&) noexcept;

  std::vector<int64_t> encode(std::string_view text) const override;
  // Throws ValueError for an id outside the vocabulary.
  std::string decode(const std::vector<int64_t>& ids) const override;
  // Ids run 0..vocab_size()-1 (added tokens included).
  int64_t vocab_size() const override;
  // The special tokens the file's TemplateProcessing puts before a single
  // sequence (Llama 3's <|begin_of_text|>); none for GPT-2's.
  std::vector<int64_t> prefix_ids() const override;
  // The file's post-processor template (TemplateProcessing, BertProcessing).
  WithSpecialTokens with_special_tokens(const std::vector<int64_t>& first,
                                        const std::vector<int64_t>* second) const override;
  // The added tokens marked special.
  std::vector<int64_t> special_ids() const override;
  std::optional<int64_t> token_to_id(std::string_view token) const override;

  struct Impl;

 private:
  explicit BPETokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace stride::data
