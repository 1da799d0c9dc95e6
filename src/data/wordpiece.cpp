// WordPiece (include/stride/data/wordpiece.h). The steps follow Hugging Face
// tokenizers' BertNormalizer, BertPreTokenizer, WordPiece model and
// WordPiece decoder, whose ids and texts tests/golden/tokenizers holds.
#include "stride/data/wordpiece.h"

#include <utf8proc.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "data/special_template.h"
#include "data/tokenizer_json.h"
#include "data/utf8.h"
#include "stride/data/text.h"
#include "stride/error.h"

namespace stride::data {

namespace {

using json = nlohmann::json;

constexpr char32_t kReplacement = 0xFFFD;

std::u32string code_points(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  for (size_t i = 0; i < text.size();) {
    utf8proc_int32_t c = 0;
    const utf8proc_ssize_t n = utf8proc_iterate(bytes + i, utf8proc_ssize_t(text.size() - i), &c);
    // An ill-formed byte reads as U+FFFD, which BERT's normalizer drops.
    out += n > 0 ? char32_t(c) : kReplacement;
    i += n > 0 ? size_t(n) : 1;
  }
  return out;
}

std::string to_utf8(std::u32string_view chars) {
  std::string out;
  for (char32_t c : chars) detail::append_utf8(out, c);
  return out;
}

utf8proc_category_t category(char32_t c) {
  return utf8proc_category(utf8proc_int32_t(c));
}

// Unicode's White_Space property (Rust's char::is_whitespace).
bool is_whitespace(char32_t c) {
  if ((c >= 0x09 && c <= 0x0D) || c == 0x85) return true;
  const auto k = category(c);
  return k == UTF8PROC_CATEGORY_ZS || k == UTF8PROC_CATEGORY_ZL || k == UTF8PROC_CATEGORY_ZP;
}

// Note [Unicode 8 in BERT's normalizer]: Hugging Face tokenizers classifies
// characters with the tables of Unicode 8.0 (its unicode_categories crate),
// so the format characters, punctuation and nonspacing marks Unicode
// assigned since are, to it, ordinary letters, and a few characters have
// changed class since (U+166D was punctuation, U+1734 a nonspacing mark). Equal ids need its
// classes, so these ranges amend utf8proc's current ones (tools/check_wordpiece_unicode.py compares
// every code point with tokenizers).
struct Range {
  char32_t first, last;
};

constexpr Range kFormatSinceUnicode8[] = {
    {0x0890, 0x0891}, {0x08E2, 0x08E2}, {0x110CD, 0x110CD}, {0x13430, 0x1343F}};

constexpr Range kPunctuationSinceUnicode8[] = {
    {0x061D, 0x061D},   {0x09FD, 0x09FD},   {0x0A76, 0x0A76},   {0x0C77, 0x0C77},
    {0x0C84, 0x0C84},   {0x1B7D, 0x1B7E},   {0x2E43, 0x2E4F},   {0x2E52, 0x2E5D},
    {0x10EAD, 0x10EAD}, {0x10F55, 0x10F59}, {0x10F86, 0x10F89}, {0x1144B, 0x1144F},
    {0x1145A, 0x1145B}, {0x1145D, 0x1145D}, {0x11660, 0x1166C}, {0x116B9, 0x116B9},
    {0x1183B, 0x1183B}, {0x11944, 0x11946}, {0x119E2, 0x119E2}, {0x11A3F, 0x11A46},
    {0x11A9A, 0x11A9C}, {0x11A9E, 0x11AA2}, {0x11B00, 0x11B09}, {0x11C41, 0x11C45},
    {0x11C70, 0x11C71}, {0x11EF7, 0x11EF8}, {0x11F43, 0x11F4F}, {0x11FFF, 0x11FFF},
    {0x12FF1, 0x12FF2}, {0x16E97, 0x16E9A}, {0x16FE2, 0x16FE2}, {0x1E95E, 0x1E95F}};

constexpr Range kPunctuationInUnicode8[] = {{0x166D, 0x166D}, {0x111C9, 0x111C9}};

constexpr Range kNonspacingSinceUnicode8[] = {
    {0x07FD, 0x07FD},   {0x0898, 0x089F},   {0x08CA, 0x08E1},   {0x09FE, 0x09FE},
    {0x0AFA, 0x0AFF},   {0x0B55, 0x0B55},   {0x0C04, 0x0C04},   {0x0C3C, 0x0C3C},
    {0x0D00, 0x0D00},   {0x0D3B, 0x0D3C},   {0x0D81, 0x0D81},   {0x0EBA, 0x0EBA},
    {0x0ECE, 0x0ECE},   {0x180F, 0x180F},   {0x1885, 0x1886},   {0x1ABF, 0x1ACE},
    {0x1DF6, 0x1DFB},   {0xA82C, 0xA82C},   {0xA8C5, 0xA8C5},   {0xA8FF, 0xA8FF},
    {0xA9BD, 0xA9BD},   {0x10D24, 0x10D27}, {0x10EAB, 0x10EAC}, {0x10EFD, 0x10EFF},
    {0x10F46, 0x10F50}, {0x10F82, 0x10F85}, {0x11070, 0x11070}, {0x11073, 0x11074},
    {0x110C2, 0x110C2}, {0x111C9, 0x111C9}, {0x111CF, 0x111CF}, {0x1123E, 0x1123E},
    {0x11241, 0x11241}, {0x1133B, 0x1133B}, {0x11438, 0x1143F}, {0x11442, 0x11444},
    {0x11446, 0x11446}, {0x1145E, 0x1145E}, {0x1182F, 0x11837}, {0x11839, 0x1183A},
    {0x1193B, 0x1193C}, {0x1193E, 0x1193E}, {0x11943, 0x11943}, {0x119D4, 0x119D7},
    {0x119DA, 0x119DB}, {0x119E0, 0x119E0}, {0x11A01, 0x11A0A}, {0x11A33, 0x11A38},
    {0x11A3B, 0x11A3E}, {0x11A47, 0x11A47}, {0x11A51, 0x11A56}, {0x11A59, 0x11A5B},
    {0x11A8A, 0x11A96}, {0x11A98, 0x11A99}, {0x11C30, 0x11C36}, {0x11C38, 0x11C3D},
    {0x11C3F, 0x11C3F}, {0x11C92, 0x11CA7}, {0x11CAA, 0x11CB0}, {0x11CB2, 0x11CB3},
    {0x11CB5, 0x11CB6}, {0x11D31, 0x11D36}, {0x11D3A, 0x11D3A}, {0x11D3C, 0x11D3D},
    {0x11D3F, 0x11D45}, {0x11D47, 0x11D47}, {0x11D90, 0x11D91}, {0x11D95, 0x11D95},
    {0x11D97, 0x11D97}, {0x11EF3, 0x11EF4}, {0x11F00, 0x11F01}, {0x11F36, 0x11F3A},
    {0x11F40, 0x11F40}, {0x11F42, 0x11F42}, {0x13440, 0x13440}, {0x13447, 0x13455},
    {0x16F4F, 0x16F4F}, {0x16FE4, 0x16FE4}, {0x1CF00, 0x1CF2D}, {0x1CF30, 0x1CF46},
    {0x1E000, 0x1E006}, {0x1E008, 0x1E018}, {0x1E01B, 0x1E021}, {0x1E023, 0x1E024},
    {0x1E026, 0x1E02A}, {0x1E08F, 0x1E08F}, {0x1E130, 0x1E136}, {0x1E2AE, 0x1E2AE},
    {0x1E2EC, 0x1E2EF}, {0x1E4EC, 0x1E4EF}, {0x1E944, 0x1E94A}};

constexpr Range kNonspacingInUnicode8[] = {{0x1734, 0x1734}};

template <size_t N>
bool in(const Range (&ranges)[N], char32_t c) {
  for (const Range& r : ranges) {
    if (c >= r.first && c <= r.last) return true;
  }
  return false;
}

// Controls, format characters and private use, tab and newlines aside
// (not unassigned code points, which tokenizers keeps).
bool is_control(char32_t c) {
  if (c == '\t' || c == '\n' || c == '\r') return false;
  const auto k = category(c);
  if (k == UTF8PROC_CATEGORY_CF) return !in(kFormatSinceUnicode8, c);
  return k == UTF8PROC_CATEGORY_CC || k == UTF8PROC_CATEGORY_CO || k == UTF8PROC_CATEGORY_CS;
}

// ASCII's punctuation ($, +, <, ... included) and Unicode's P categories.
bool is_punctuation(char32_t c) {
  if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
      (c >= 123 && c <= 126)) {
    return true;
  }
  if (c < 0x80) return false;
  const auto k = category(c);
  if (k >= UTF8PROC_CATEGORY_PC && k <= UTF8PROC_CATEGORY_PO)
    return !in(kPunctuationSinceUnicode8, c);
  return in(kPunctuationInUnicode8, c);
}

// The CJK Unified Ideographs blocks BERT puts spaces around (not Japanese
// kana or Korean Hangul, which are written with spaces).
bool is_chinese_character(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

bool is_nonspacing_mark(char32_t c) {
  if (category(c) == UTF8PROC_CATEGORY_MN) return !in(kNonspacingSinceUnicode8, c);
  return in(kNonspacingInUnicode8, c);
}

int combining_class(char32_t c) {
  return utf8proc_get_property(utf8proc_int32_t(c))->combining_class;
}

// NFD: each character's canonical decomposition, then the marks of each run
// of nonzero combining class in class order (stably).
std::u32string nfd(std::u32string_view text) {
  std::u32string out;
  out.reserve(text.size());
  for (char32_t c : text) {
    utf8proc_int32_t parts[8];
    int boundclass = 0;
    const utf8proc_ssize_t n =
        utf8proc_decompose_char(utf8proc_int32_t(c), parts, 8, UTF8PROC_DECOMPOSE, &boundclass);
    if (n <= 0 || n > 8) {
      out += c;
      continue;
    }
    for (utf8proc_ssize_t i = 0; i < n; ++i) out += char32_t(parts[i]);
  }
  for (size_t i = 0; i < out.size();) {
    size_t end = i;
    while (end < out.size() && combining_class(out[end]) != 0) ++end;
    if (end - i > 1) {
      std::stable_sort(
          out.begin() + std::ptrdiff_t(i), out.begin() + std::ptrdiff_t(end),
          [](char32_t a, char32_t b) { return combining_class(a) < combining_class(b); });
    }
    i = end + 1;
  }
  return out;
}

// BertNormalizer, in its order: clean, Chinese characters, accents, case.
struct BertNormalizer {
  bool clean_text = true;
  bool split_chinese_characters = true;
  bool strip_accents = true;
  bool lowercase = true;

  std::u32string operator()(std::u32string text) const {
    std::u32string out;
    if (clean_text) {
      for (char32_t c : text) {
        if (c == 0 || c == kReplacement || is_control(c)) continue;
        out += is_whitespace(c) ? U' ' : c;
      }
      text.swap(out);
    }
    if (split_chinese_characters) {
      out.clear();
      for (char32_t c : text) {
        if (!is_chinese_character(c)) {
          out += c;
          continue;
        }
        out += U' ';
        out += c;
        out += U' ';
      }
      text.swap(out);
    }
    if (strip_accents) {
      out.clear();
      for (char32_t c : nfd(text)) {
        if (!is_nonspacing_mark(c)) out += c;
      }
      text.swap(out);
    }
    if (lowercase) {
      out.clear();
      for (char32_t c : text) {
        // U+0130's lowercase is two characters (SpecialCasing.txt's one
        // unconditional entry); utf8proc gives the one-character mappings.
        if (c == 0x130) {
          out += U"i\u0307";
        } else {
          out += char32_t(utf8proc_tolower(utf8proc_int32_t(c)));
        }
      }
      text.swap(out);
    }
    return text;
  }
};

// Transparent hashing: the vocabulary is looked up by string_view.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// The decoder's cleanup (Hugging Face tokenizers' wordpiece::cleanup), on
// each token with its leading space.
std::string cleanup(std::string token) {
  static const std::pair<std::string_view, std::string_view> kRules[] = {
      {" .", "."},   {" ?", "?"},     {" !", "!"},    {" ,", ","},
      {" ' ", "'"},  {" n't", "n't"}, {" 'm", "'m"},  {" do not", " don't"},
      {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& [from, to] : kRules) {
    for (size_t at = token.find(from); at != std::string::npos; at = token.find(from, at)) {
      token.replace(at, from.size(), to);
      at += to.size();
    }
  }
  return token;
}

}  // namespace

struct WordPieceTokenizer::Impl {
  std::string source;
  std::unordered_map<std::string, int64_t, StringHash, std::equal_to<>> vocab;
  std::vector<std::string> tokens;  // by id
  int64_t unk_id = 0;
  std::string subword_prefix = "##";
  size_t max_word_chars = 100;
  size_t longest_token = 0;  // bytes, of the vocabulary's longest token
  BertNormalizer normalizer;
  std::vector<detail::AddedToken> added;  // longest first
  std::vector<int64_t> special;
  detail::SpecialTemplate post_processor;
  std::string decoder_prefix = "##";
  bool decoder_cleanup = true;

  [[noreturn]] void refuse(const std::string& key, const std::string& why) const {
    throw ValueError(source + ": key \"" + key + "\": " + why);
  }

  void add_token(const std::string& content, int64_t id, bool is_special) {
    if (content.empty()) refuse("added_tokens", "a token with empty content");
    vocab[content] = id;
    added.push_back({content, id});
    if (is_special) special.push_back(id);
  }

  // The table of tokens by id, once the vocabulary is read; checks the
  // ids and the unknown token.
  void index(const std::string& unk_token) {
    tokens = detail::tokens_by_id(vocab, source);
    for (const std::string& t : tokens) longest_token = std::max(longest_token, t.size());
    auto unk = vocab.find(unk_token);
    if (unk == vocab.end())
      refuse("model.unk_token", "\"" + unk_token + "\" is not in the vocabulary");
    unk_id = unk->second;
    detail::sort_longest_first(added);
    post_processor.check_ids(int64_t(tokens.size()), source);
  }

  void read_normalizer(const json& n) {
    if (n.is_null()) {
      normalizer = {false, false, false, false};
      return;
    }
    if (n.value("type", "") != "BertNormalizer")
      refuse("normalizer", "only BertNormalizer is implemented (WordPiece)");
    normalizer.clean_text = n.value("clean_text", true);
    normalizer.split_chinese_characters = n.value("handle_chinese_chars", true);
    normalizer.lowercase = n.value("lowercase", true);
    const json& strip = n.contains("strip_accents") ? n["strip_accents"] : json();
    normalizer.strip_accents = strip.is_null() ? normalizer.lowercase : strip.get<bool>();
  }

  void read_decoder(const json& d) {
    if (d.is_null()) {
      decoder_prefix.clear();
      decoder_cleanup = false;
      return;
    }
    if (d.value("type", "") != "WordPiece")
      refuse("decoder", "only the WordPiece decoder is implemented");
    decoder_prefix = d.value("prefix", "##");
    decoder_cleanup = d.value("cleanup", true);
  }

  void read(const json& root) {
    if (!root.is_object()) throw ValueError(source + ": not a tokenizer.json (not a JSON object)");
    const json& model = root.at("model");
    if (model.value("type", "") != "WordPiece") refuse("model.type", "is not WordPiece");
    subword_prefix = model.value("continuing_subword_prefix", "##");
    max_word_chars = model.value("max_input_chars_per_word", size_t(100));
    for (const auto& item : model.at("vocab").items())
      vocab[item.key()] = item.value().get<int64_t>();
    read_normalizer(root.contains("normalizer") ? root["normalizer"] : json());
    const json pre = root.contains("pre_tokenizer") ? root["pre_tokenizer"] : json();
    if (pre.is_null() || pre.value("type", "") != "BertPreTokenizer")
      refuse("pre_tokenizer", "only BertPreTokenizer is implemented (WordPiece)");
    read_decoder(root.contains("decoder") ? root["decoder"] : json());
    if (root.contains("added_tokens")) {
      for (const json& t : root["added_tokens"]) {
        // Such tokens match the normalized text, or whole words only.
        if (t.value("normalized", false) || t.value("single_word", false))
          refuse("added_tokens", "normalized or single_word added tokens are not implemented");
        add_token(t.at("content").get<std::string>(), t.at("id").get<int64_t>(),
                  t.value("special", false));
      }
    }
    if (root.contains("post_processor") && !root["post_processor"].is_null()) {
      post_processor.read(root["post_processor"], "post_processor", source);
    }
    index(model.value("unk_token", "[UNK]"));
  }

  // The longest vocabulary pieces from the word's start; [UNK] for the
  // whole word when some rest has no piece. A piece is tried from its
  // longest possible end, no further than the vocabulary's longest token,
  // so that a long word (a file may allow any max_input_chars_per_word)
  // costs its length times that, not its length squared.
  void encode_word(std::string_view word, size_t chars, std::vector<int64_t>& out) const {
    if (chars > max_word_chars) {
      out.push_back(unk_id);
      return;
    }
    const size_t mark = out.size();
    std::string candidate;
    for (size_t start = 0; start < word.size();) {
      size_t end = std::min(word.size(), start + longest_token);
      while (end < word.size() && (uint8_t(word[end]) & 0xC0) == 0x80) --end;  // a whole character
      int64_t found = -1;
      while (start < end) {
        candidate.assign(start > 0 ? subword_prefix : std::string());
        candidate.append(word.substr(start, end - start));
        if (auto it = vocab.find(candidate); it != vocab.end()) {
          found = it->second;
          break;
        }
        do --end;  // one character back
        while (end > start && (uint8_t(word[end]) & 0xC0) == 0x80);
      }
      if (found < 0) {
        out.resize(mark);
        out.push_back(unk_id);
        return;
      }
      out.push_back(found);
      start = end;
    }
  }

  // Normalizes, splits at whitespace (dropped) and around punctuation,
  // and encodes each word.
  void encode_ordinary(std::string_view text, std::vector<int64_t>& out) const {
    const std::u32string chars = normalizer(code_points(text));
    std::u32string word;
    const auto flush = [&] {
      if (!word.empty()) encode_word(to_utf8(word), word.size(), out);
      word.clear();
    };
    for (char32_t c : chars) {
      if (is_whitespace(c)) {
        flush();
      } else if (is_punctuation(c)) {
        flush();
        word = c;
        flush();
      } else {
        word += c;
      }
    }
    flush();
  }
};

WordPieceTokenizer::WordPieceTokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
WordPieceTokenizer::~WordPieceTokenizer() = default;
WordPieceTokenizer::WordPieceTokenizer(WordPieceTokenizer&&) noexcept = default;
WordPieceTokenizer& WordPieceTokenizer::operator=(WordPieceTokenizer&&) noexcept = default;

WordPieceTokenizer WordPieceTokenizer::from_file(const std::string& path) {
  return from_json(read_text_file(path), path);
}

WordPieceTokenizer WordPieceTokenizer::from_json(std::string_view json_text,
                                                 const std::string& source) {
  auto impl = std::make_unique<Impl>();
  impl->source = source;
  detail::read_tokenizer_json(json_text, source, [&](const json& root) { impl->read(root); });
  return WordPieceTokenizer(std::move(impl));
}

WordPieceTokenizer WordPieceTokenizer::from_vocab(const std::string& path,
                                                  const VocabOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->source = path;
  std::string text = read_text_file(path);
  int64_t id = 0;
  for (size_t start = 0; start < text.size(); ++id) {
    const size_t end = std::min(text.find('\n', start), text.size());
    impl->vocab[text.substr(start, end - start)] = id;
    start = end + 1;
  }
  impl->normalizer.lowercase = options.lowercase;
  impl->normalizer.strip_accents = options.strip_accents.value_or(options.lowercase);
  impl->normalizer.split_chinese_characters = options.split_chinese_characters;
  // transformers makes the special tokens the vocabulary has added tokens,
  // matched in the raw text.
  for (const std::string* name : {&options.pad_token, &options.unk_token, &options.cls_token,
                                  &options.sep_token, &options.mask_token}) {
    if (auto it = impl->vocab.find(*name); it != impl->vocab.end())
      impl->add_token(*name, it->second, true);
  }
  const auto id_of = [&](const std::string& token) {
    auto it = impl->vocab.find(token);
    if (it == impl->vocab.end()) impl->refuse("vocab", "has no \"" + token + "\" token");
    return it->second;
  };
  impl->post_processor.read({{"type", "BertProcessing"},
                             {"cls", {options.cls_token, id_of(options.cls_token)}},
                             {"sep", {options.sep_token, id_of(options.sep_token)}}},
                            "post_processor", path);
  impl->index(options.unk_token);
  return WordPieceTokenizer(std::move(impl));
}

std::vector<int64_t> WordPieceTokenizer::encode(std::string_view text) const {
  return detail::encode_with_added_tokens(text, impl_->added,
                                          [&](std::string_view stretch, std::vector<int64_t>& out) {
                                            impl_->encode_ordinary(stretch, out);
                                          });
}

std::string WordPieceTokenizer::decode(const std::vector<int64_t>& ids) const {
  std::string out;
  const std::string& prefix = impl_->decoder_prefix;
  for (size_t i = 0; i < ids.size(); ++i) {
    const int64_t id = ids[i];
    if (id < 0 || id >= vocab_size() || impl_->tokens[size_t(id)].empty()) {
      throw ValueError(impl_->source + ": id " + std::to_string(id) + " is not in the vocabulary");
    }
    const std::string& token = impl_->tokens[size_t(id)];
    std::string piece;
    if (i == 0) {
      piece = token;
    } else if (!prefix.empty() && token.starts_with(prefix)) {
      piece = token.substr(prefix.size());
    } else {
      piece = " " + token;
    }
    out += impl_->decoder_cleanup ? cleanup(std::move(piece)) : piece;
  }
  return out;
}

int64_t WordPieceTokenizer::vocab_size() const {
  return int64_t(impl_->tokens.size());
}

std::vector<int64_t> WordPieceTokenizer::prefix_ids() const {
  return impl_->post_processor.prefix();
}

Tokenizer::WithSpecialTokens WordPieceTokenizer::with_special_tokens(
    const std::vector<int64_t>& first, const std::vector<int64_t>* second) const {
  return impl_->post_processor.apply(first, second);
}

std::vector<int64_t> WordPieceTokenizer::special_ids() const {
  return impl_->special;
}

std::optional<int64_t> WordPieceTokenizer::token_to_id(std::string_view token) const {
  auto it = impl_->vocab.find(token);
  if (it == impl_->vocab.end()) return std::nullopt;
  return it->second;
}

}  // namespace stride::data
