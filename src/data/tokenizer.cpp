// load_tokenizer (include/stride/data/tokenizer.h).
#include "stride/data/tokenizer.h"

#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "stride/data/bpe.h"
#include "stride/data/sentencepiece.h"
#include "stride/data/text.h"
#include "stride/data/wordpiece.h"
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

Tokenizer::WithSpecialTokens Tokenizer::with_special_tokens(
    const std::vector<int64_t>& first, const std::vector<int64_t>* second) const {
  const std::vector<int64_t> prefix = prefix_ids();
  WithSpecialTokens out;
  for (int64_t type = 0; type < (second ? 2 : 1); ++type) {
    const std::vector<int64_t>& sequence = type == 0 ? first : *second;
    out.ids.insert(out.ids.end(), prefix.begin(), prefix.end());
    out.ids.insert(out.ids.end(), sequence.begin(), sequence.end());
    out.type_ids.resize(out.ids.size(), type);
  }
  return out;
}

namespace {

// The "model" "type" of a tokenizer.json ("" when it names none).
std::string model_type(const std::string& text) {
  const nlohmann::json root = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!root.is_object() || !root.contains("model") || !root["model"].is_object()) return "";
  const nlohmann::json& type = root["model"].contains("type") ? root["model"]["type"] : "";
  return type.is_string() ? type.get<std::string>() : "";
}

// A vocab.txt's settings from the directory's tokenizer_config.json
// (transformers' BertTokenizer arguments), defaults where it has none.
WordPieceTokenizer::VocabOptions vocab_options(const std::filesystem::path& config) {
  WordPieceTokenizer::VocabOptions options;
  if (!std::filesystem::exists(config)) return options;
  const nlohmann::json c =
      nlohmann::json::parse(read_text_file(config), nullptr, /*allow_exceptions=*/false);
  if (!c.is_object()) throw ValueError(config.string() + ": not a JSON object");
  const auto flag = [&](const char* key, bool fallback) {
    return c.contains(key) && c[key].is_boolean() ? c[key].get<bool>() : fallback;
  };
  options.lowercase = flag("do_lower_case", true);
  if (c.contains("strip_accents") && c["strip_accents"].is_boolean())
    options.strip_accents = c["strip_accents"].get<bool>();
  options.split_chinese_characters = flag("tokenize_chinese_chars", true);
  for (auto [key, token] : {std::pair{"unk_token", &options.unk_token},
                            {"cls_token", &options.cls_token},
                            {"sep_token", &options.sep_token},
                            {"pad_token", &options.pad_token},
                            {"mask_token", &options.mask_token}}) {
    if (c.contains(key) && c[key].is_string()) *token = c[key].get<std::string>();
  }
  return options;
}

}  // namespace

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path model = fs::path(dir) / "tokenizer.model";
  const fs::path json = fs::path(dir) / "tokenizer.json";
  const fs::path vocab = fs::path(dir) / "vocab.txt";
  if (fs::exists(model)) {
    return std::make_unique<SentencePieceTokenizer>(
        SentencePieceTokenizer::from_file(model.string()));
  }
  if (fs::exists(json)) {
    const std::string text = read_text_file(json);
    if (model_type(text) == "WordPiece") {
      return std::make_unique<WordPieceTokenizer>(
          WordPieceTokenizer::from_json(text, json.string()));
    }
    return std::make_unique<BPETokenizer>(BPETokenizer::from_json(text, json.string()));
  }
  if (fs::exists(vocab)) {
    return std::make_unique<WordPieceTokenizer>(WordPieceTokenizer::from_vocab(
        vocab.string(), vocab_options(fs::path(dir) / "tokenizer_config.json")));
  }
  throw IOError(dir +
                ": no tokenizer.model (SentencePiece), tokenizer.json (byte-level BPE or "
                "WordPiece) or vocab.txt (WordPiece)");
}

}  // namespace stride::data
