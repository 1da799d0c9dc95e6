// WordPiece, BERT's tokenizer, as Hugging Face `tokenizers` runs a
// tokenizer.json of its kind and transformers' BertTokenizer a vocab.txt.
//
// Encoding: the text is cut at the added tokens ([CLS], [MASK], ...), which
// map to their ids. Each other stretch goes through BERT's normalizer (drop
// control characters and U+FFFD, map whitespace to spaces, put spaces
// around Chinese characters, strip accents by NFD and dropping nonspacing
// marks, lowercase; utf8proc gives Unicode's data), is split at whitespace
// and around each punctuation character, and each word becomes the longest
// vocabulary pieces from its start, later pieces written with "##"; a word
// with no such cut, or longer than max_input_chars_per_word, is [UNK].
// Decoding joins the tokens with spaces, gluing "##" pieces to the one
// before, and tidies spaces before punctuation (the decoder's cleanup), as
// transformers' decode does; it cannot give back the text's case, accents
// or spaces.
//
// A tokenizer.json using anything else is refused with a ValueError naming
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

class WordPieceTokenizer final : public Tokenizer {
 public:
  // A vocab.txt's settings, from its tokenizer_config.json (transformers'
  // BertTokenizer arguments).
  struct VocabOptions {
    bool lowercase = true;                 // do_lower_case
    std::optional<bool> strip_accents;     // strip_accents; unset: as lowercase
    bool split_chinese_characters = true;  // tokenize_chinese_chars
    std::string unk_token = "[UNK]", cls_token = "[CLS]", sep_token = "[SEP]", pad_token = "[PAD]",
                mask_token = "[MASK]";
  };

  // Reads a tokenizer.json whose model is WordPiece; `source` names it in
  // errors.
  static WordPieceTokenizer from_file(const std::string& path);
  static WordPieceTokenizer from_json(std::string_view json_text, const std::string& source);
  // Reads a vocab.txt: one token a line, ids in line order.
  static WordPieceTokenizer from_vocab(const std::string& path, const VocabOptions& options);
  ~WordPieceTokenizer() override;
  WordPieceTokenizer(WordPieceTokenizer&&) noexcept;
  WordPieceTokenizer& operator=(WordPieceTokenizer&&) noexcept;

  std::vector<int64_t> encode(std::string_view text) const override;
  // Throws ValueError for an id outside the vocabulary.
  std::string decode(const std::vector<int64_t>& ids) const override;
  int64_t vocab_size() const override;
  // [CLS]: what the post-processor puts before a single sequence.
  std::vector<int64_t> prefix_ids() const override;
  WithSpecialTokens with_special_tokens(const std::vector<int64_t>& first,
                                        const std::vector<int64_t>* second) const override;
  // The added tokens marked special ([PAD], [UNK], [CLS], [SEP], [MASK]).
  std::vector<int64_t> special_ids() const override;
  std::optional<int64_t> token_to_id(std::string_view token) const override;

  struct Impl;

 private:
  explicit WordPieceTokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace stride::data
