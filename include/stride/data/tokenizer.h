// What a subword tokenizer does, whichever file it comes from: text to ids
// and back. Three implementations: BPETokenizer (stride/data/bpe.h),
// byte-level BPE from a Hugging Face tokenizer.json (GPT-2, Llama 3),
// SentencePieceTokenizer (stride/data/sentencepiece.h), a SentencePiece model
// file (Llama 2's tokenizer.model), and WordPieceTokenizer
// (stride/data/wordpiece.h), BERT's tokenizer.json or vocab.txt.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
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
  // The id of a token (a piece) of the vocabulary; nullopt where it has
  // none, or where the tokenizer has no tokens by name.
  virtual std::optional<int64_t> token_to_id(std::string_view /*token*/) const {
    return std::nullopt;
  }
  // The ids a text to be continued (a prompt) starts with: the special
  // tokens that the reference tokenizer puts before a sequence by default
  // (transformers' add_special_tokens), such as a BOS. encode() adds none.
  virtual std::vector<int64_t> prefix_ids() const { return {}; }

  // Ids with the special tokens the reference tokenizer adds around one
  // sequence or a pair (its post-processor: BERT's [CLS] a [SEP] b [SEP]),
  // and each id's token type (segment): 0 in the first sequence's part, 1
  // in the second's, as the template says.
  struct WithSpecialTokens {
    std::vector<int64_t> ids;
    std::vector<int64_t> type_ids;
  };
  // The default: prefix_ids() before each sequence.
  virtual WithSpecialTokens with_special_tokens(const std::vector<int64_t>& first,
                                                const std::vector<int64_t>* second = nullptr) const;
  // The ids a decoding with skip_special_tokens leaves out (transformers'
  // all_special_ids, as far as the files name them); by default the
  // prefix's.
  virtual std::vector<int64_t> special_ids() const { return prefix_ids(); }
};

// `bytes` as valid UTF-8, as Python's bytes.decode("utf-8", "replace")
// gives it (and so transformers' tokenizer decode): each maximal ill-formed
// subsequence becomes one U+FFFD (Unicode's "substitution of maximal
// subparts"). Tokenizers' decode returns the raw bytes, which byte-level BPE
// and byte fallback can leave mid-character; text for a reader goes through
// this. With `final` false, a trailing sequence that later bytes may still
// complete into a character is left out instead; `consumed`, when given,
// receives how many bytes of `bytes` the result stands for.
std::string valid_utf8(std::string_view bytes, bool final = true, size_t* consumed = nullptr);

// The tokenizer of a Hugging Face model directory: its tokenizer.model
// (SentencePiece) where it has one, which is the reference its
// tokenizer.json was converted from, else its tokenizer.json (byte-level
// BPE, or WordPiece where its model says so), else its vocab.txt (WordPiece,
// with the settings of its tokenizer_config.json). Throws IOError naming the
// directory when it has none of them.
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& dir);

}  // namespace stride::data
