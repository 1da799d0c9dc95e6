// load_tokenizer (include/stride/data/tokenizer.h).
#include "stride/data/tokenizer.h"

#include <filesystem>
#include <string>
#include <string_view>

#include "stride/data/bpe.h"
#include "stride/data/sentencepiece.h"
#include "stride/error.h"

namespace stride::data {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

struct Lead {
  int length;               // bytes of the character; 0 for a byte that cannot start one
  unsigned char low, high;  // the range of its second byte (Unicode's Table 3-7)
};

Lead lead_of(unsigned char b) {
  if (b >= 0xC2 && b <= 0xDF) return {2, 0x80, 0xBF};
  if (b == 0xE0) return {3, 0xA0, 0xBF};
  if (b == 0xED) return {3, 0x80, 0x9F};  // no surrogates
  if (b >= 0xE1 && b <= 0xEF) return {3, 0x80, 0xBF};
  if (b == 0xF0) return {4, 0x90, 0xBF};
  if (b >= 0xF1 && b <= 0xF3) return {4, 0x80, 0xBF};
  if (b == 0xF4) return {4, 0x80, 0x8F};  // nothing past U+10FFFF
  return {0, 0, 0};
}

}  // namespace

std::string valid_utf8(std::string_view bytes, bool final, size_t* consumed) {
  std::string out;
  out.reserve(bytes.size());
  size_t i = 0;
  while (i < bytes.size()) {
    const auto b = static_cast<unsigned char>(bytes[i]);
    if (b < 0x80) {
      out += char(b);
      ++i;
      continue;
    }
    const Lead lead = lead_of(b);
    // The longest prefix of a well-formed character starting at i.
    size_t j = i + 1;
    for (int k = 1; k < lead.length && j < bytes.size(); ++k, ++j) {
      const auto c = static_cast<unsigned char>(bytes[j]);
      const unsigned char low = k == 1 ? lead.low : 0x80, high = k == 1 ? lead.high : 0xBF;
      if (c < low || c > high) break;
    }
    if (lead.length > 0 && j - i == size_t(lead.length)) {
      out.append(bytes.substr(i, j - i));
    } else if (j == bytes.size() && lead.length > 0 && !final) {
      break;  // a character that the next bytes may complete
    } else {
      out += kReplacement;
    }
    i = j;
  }
  if (consumed) *consumed = i;
  return out;
}

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
