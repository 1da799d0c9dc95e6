// load_tokenizer (include/stride/data/tokenizer.h).
#include "stride/data/tokenizer.h"

#include <filesystem>

#include "stride/data/bpe.h"
#include "stride/data/sentencepiece.h"
#include "stride/error.h"

namespace stride::data {

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path model = fs::path(dir) / "tokenizer.model";
  const fs::path json = fs::path(dir) / "tokenizer.json";
  if (fs::exists(model)) {
    return std::make_unique<SentencePieceTokenizer>(
        SentencePieceTokenizer::from_file(model.string()));
  }
  if (fs::exists(json)) {
    return std::make_unique<BPETokenizer>(BPETokenizer::from_file(json.string()));
  }
  throw IOError(dir + ": no tokenizer.model (SentencePiece) or tokenizer.json (byte-level BPE)");
}

}  // namespace stride::data
