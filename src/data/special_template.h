// The special tokens a tokenizer.json's post-processor puts around one
// sequence or a pair, shared by the byte-level BPE and WordPiece readers
// (Hugging Face tokenizers' TemplateProcessing and BertProcessing; ByteLevel
// and RobertaProcessing's offsets change no ids).
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "stride/data/tokenizer.h"

namespace stride::data::detail {

class SpecialTemplate {
 public:
  // Without a post-processor: the sequences alone, the second of type 1.
  SpecialTemplate();

  // Reads the post-processor `p` at `key` of the file `source`; throws
  // ValueError naming both for a kind it does not implement.
  void read(const nlohmann::json& p, const std::string& key, const std::string& source);
  // Throws ValueError when a special id is outside [0, vocab_size).
  void check_ids(int64_t vocab_size, const std::string& source) const;

  Tokenizer::WithSpecialTokens apply(const std::vector<int64_t>& first,
                                     const std::vector<int64_t>* second) const;
  // The single template's special ids before its sequence.
  std::vector<int64_t> prefix() const;
  // Every special id of either template.
  std::vector<int64_t> ids() const;

 private:
  struct Piece {
    int sequence;  // 0 or 1: that sequence; -1: the special ids
    std::vector<int64_t> ids;
    int64_t type_id;
  };
  static std::vector<Piece> read_pieces(const nlohmann::json& list,
                                        const nlohmann::json& special,
                                        const std::string& key,
                                        const std::string& source,
                                        bool pair);

  std::vector<Piece> single_, pair_;
};

}  // namespace stride::data::detail
