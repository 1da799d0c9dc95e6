// Byte-level BPE (include/stride/data/bpe.h).
#include "stride/data/bpe.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <array>
#include <limits>
#include <mutex>
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

// GPT-2's pre-tokenization regex, which the ByteLevel pre-tokenizer applies
// when its use_regex is on.
constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// Byte-level BPE's stand-ins: the printable bytes stand for themselves, the
// others for 256, 257, ... in order (GPT-2's bytes_to_unicode), as UTF-8.
struct ByteAlphabet {
  std::array<std::string, 256> of_byte;
  std::unordered_map<std::string, uint8_t> to_byte;

  ByteAlphabet() {
    uint32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
      detail::append_utf8(of_byte[size_t(b)], printable ? char32_t(b) : char32_t(next++));
      to_byte[of_byte[size_t(b)]] = uint8_t(b);
    }
  }
};

const ByteAlphabet& alphabet() {
  static const ByteAlphabet a;
  return a;
}

// The UTF-8 characters of `s` (each a string).
std::vector<std::string> utf8_chars(std::string_view s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    const auto c = uint8_t(s[i]);
    const size_t n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    out.emplace_back(s.substr(i, n));
    i += n;
  }
  return out;
}

// A compiled pre-tokenization regex (Isolated: matches and the text between
// them are the pieces).
class Splitter {
 public:
  Splitter(const std::string& pattern, const std::string& where) {
    int error = 0;
    PCRE2_SIZE offset = 0;
    code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.c_str()), pattern.size(),
                          PCRE2_UTF | PCRE2_UCP, &error, &offset, nullptr);
    if (!code_) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(error, message, sizeof message);
      throw ValueError(where + ": the regex does not compile at offset " + std::to_string(offset) +
                       ": " + reinterpret_cast<char*>(message));
    }
    pcre2_jit_compile(code_, PCRE2_JIT_COMPLETE);  // optional: falls back to the interpreter
    // A pattern from a file must not hang stride: bound the backtracking.
    context_ = pcre2_match_context_create(nullptr);
    pcre2_set_match_limit(context_, 10'000'000);
    pcre2_set_depth_limit(context_, 100'000);
    where_ = where;
  }
  ~Splitter() {
    pcre2_match_context_free(context_);
    pcre2_code_free(code_);
  }
  Splitter(const Splitter&) = delete;
  Splitter& operator=(const Splitter&) = delete;

  void split(std::string_view text, std::vector<std::string>& out) const {
    pcre2_match_data* match = pcre2_match_data_create_from_pattern(code_, nullptr);
    size_t start = 0, last = 0;
    // The first match checks that the whole text is UTF-8; the later ones
    // start at character boundaries of that text, and checking it again at
    // each would make splitting quadratic in its length.
    uint32_t options = 0;
    while (start <= text.size()) {
      const int rc = pcre2_match(code_, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(),
                                 start, options, match, context_);
      options = PCRE2_NO_UTF_CHECK;
      if (rc == PCRE2_ERROR_NOMATCH) break;
      if (rc < 0) {
        pcre2_match_data_free(match);
        PCRE2_UCHAR message[256];
        pcre2_get_error_message(rc, message, sizeof message);
        throw ValueError(where_ + ": the pre-tokenizer's regex failed on the text: " +
                         reinterpret_cast<char*>(message));
      }
      const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(match);
      if (ov[0] > last) out.emplace_back(text.substr(last, ov[0] - last));
      if (ov[1] > ov[0]) out.emplace_back(text.substr(ov[0], ov[1] - ov[0]));
      last = ov[1];
      if (ov[1] == ov[0]) {
        if (ov[1] >= text.size()) break;
        // An empty match: step over one whole character.
        start = ov[1] + 1;
        while (start < text.size() && (uint8_t(text[start]) & 0xC0) == 0x80) ++start;
      } else {
        start = ov[1];
      }
    }
    if (last < text.size()) out.emplace_back(text.substr(last));
    pcre2_match_data_free(match);
  }

 private:
  pcre2_code* code_ = nullptr;
  pcre2_match_context* context_ = nullptr;
  std::string where_;
};

}  // namespace

struct BPETokenizer::Impl {
  std::string source;
  std::unordered_map<std::string, int64_t> vocab;
  std::vector<std::string> tokens;                  // by id
  std::unordered_map<std::string, int> merge_rank;  // "left right" -> rank
  bool ignore_merges = false;
  bool add_prefix_space = false;
  std::vector<std::unique_ptr<Splitter>> splitters;  // applied in order
  std::vector<detail::AddedToken> added;             // longest first
  std::vector<bool> is_added;
  std::vector<int64_t> special;  // added tokens marked special
  detail::SpecialTemplate post_processor;
  mutable std::mutex cache_mutex;
  mutable std::unordered_map<std::string, std::vector<int64_t>> cache;

  [[noreturn]] void refuse(const std::string& key, const std::string& why) const {
    throw ValueError(source + ": key \"" + key + "\": " + why);
  }

  void read_pre_tokenizer(const json& p, const std::string& key) {
    const std::string type = p.value("type", "");
    if (type == "Sequence") {
      const json& list = p.at("pretokenizers");
      for (size_t i = 0; i < list.size(); ++i) {
        read_pre_tokenizer(list[i], key + ".pretokenizers." + std::to_string(i));
      }
    } else if (type == "ByteLevel") {
      add_prefix_space = p.value("add_prefix_space", false);
      if (p.value("use_regex", true)) {
        splitters.push_back(std::make_unique<Splitter>(kGpt2Pattern, source));
      }
    } else if (type == "Split") {
      if (p.value("behavior", "") != "Isolated" || p.value("invert", false)) {
        refuse(key, "only Split with behavior Isolated (not inverted) is implemented");
      }
      const json& pattern = p.at("pattern");
      if (!pattern.contains("Regex"))
        refuse(key + ".pattern", "only Regex patterns are implemented");
      splitters.push_back(std::make_unique<Splitter>(pattern["Regex"].get<std::string>(), source));
    } else {
      refuse(key, "pre-tokenizer \"" + type + "\" is not implemented (byte-level BPE only)");
    }
  }

  void read(const json& root) {
    if (!root.is_object()) throw ValueError(source + ": not a tokenizer.json (not a JSON object)");
    if (root.contains("normalizer") && !root["normalizer"].is_null()) {
      refuse("normalizer", "normalizers are not implemented (byte-level BPE uses none)");
    }
    const json& model = root.at("model");
    if (model.value("type", "") != "BPE") refuse("model.type", "only BPE is implemented");
    if (model.value("byte_fallback", false)) {
      refuse("model.byte_fallback", "byte fallback (SentencePiece-style BPE) is not implemented");
    }
    for (const char* k : {"continuing_subword_prefix", "end_of_word_suffix", "dropout"}) {
      if (model.contains(k) && !model[k].is_null())
        refuse(std::string("model.") + k, "must be null");
    }
    ignore_merges = model.value("ignore_merges", false);
    for (const auto& item : model.at("vocab").items()) {
      const int64_t id = item.value().get<int64_t>();
      vocab[item.key()] = id;
    }
    int rank = 0;
    for (const json& m : model.at("merges")) {
      std::string key;
      if (m.is_string()) {
        key = m.get<std::string>();
      } else {
        key = m.at(0).get<std::string>() + " " + m.at(1).get<std::string>();
      }
      merge_rank.emplace(key, rank++);
    }
    if (root.contains("added_tokens")) {
      for (const json& t : root["added_tokens"]) {
        const std::string content = t.at("content").get<std::string>();
        const int64_t id = t.at("id").get<int64_t>();
        if (content.empty()) refuse("added_tokens", "a token with empty content");
        vocab[content] = id;
        added.push_back({content, id});
        if (t.value("special", false)) special.push_back(id);
      }
    }
    detail::sort_longest_first(added);
    tokens = detail::tokens_by_id(vocab, source);
    const auto size = int64_t(tokens.size());
    is_added.assign(tokens.size(), false);
    for (const detail::AddedToken& a : added) is_added[size_t(a.id)] = true;
    if (root.contains("pre_tokenizer") && !root["pre_tokenizer"].is_null()) {
      read_pre_tokenizer(root["pre_tokenizer"], "pre_tokenizer");
    }
    if (root.contains("decoder") && !root["decoder"].is_null() &&
        root["decoder"].value("type", "") != "ByteLevel") {
      refuse("decoder", "only the ByteLevel decoder is implemented");
    }
    if (root.contains("post_processor") && !root["post_processor"].is_null()) {
      post_processor.read(root["post_processor"], "post_processor", source);
    }
    post_processor.check_ids(size, source);
  }

  // The BPE of one pre-tokenized piece, already in byte-level characters.
  std::vector<int64_t> bpe(const std::string& word) const {
    if (ignore_merges) {
      if (auto it = vocab.find(word); it != vocab.end()) return {it->second};
    }
    {
      std::lock_guard lock(cache_mutex);
      if (auto it = cache.find(word); it != cache.end()) return it->second;
    }
    std::vector<std::string> parts = utf8_chars(word);
    // GPT-2's loop: merge every occurrence of the lowest-ranked adjacent
    // pair, left to right, until no pair has a rank.
    constexpr int kNone = std::numeric_limits<int>::max();
    std::vector<int> rank;
    for (;;) {
      rank.assign(parts.size(), kNone);  // rank[i]: of the pair (parts[i], parts[i + 1])
      int best = kNone;
      for (size_t i = 0; i + 1 < parts.size(); ++i) {
        auto it = merge_rank.find(parts[i] + " " + parts[i + 1]);
        if (it != merge_rank.end()) best = std::min(best, rank[i] = it->second);
      }
      if (best == kNone) break;
      std::vector<std::string> merged;
      for (size_t i = 0; i < parts.size(); ++i) {
        if (rank[i] == best && i + 1 < parts.size()) {
          merged.push_back(parts[i] + parts[i + 1]);
          ++i;
        } else {
          merged.push_back(parts[i]);
        }
      }
      parts = std::move(merged);
    }
    std::vector<int64_t> ids;
    for (const std::string& p : parts) {
      auto it = vocab.find(p);
      if (it == vocab.end()) {
        throw ValueError(source + ": the piece \"" + p + "\" has no id (no unk_token)");
      }
      ids.push_back(it->second);
    }
    std::lock_guard lock(cache_mutex);
    cache.emplace(word, ids);
    return ids;
  }

  void encode_ordinary(std::string_view text, std::vector<int64_t>& out) const {
    const bool prefix = add_prefix_space && !text.empty() && text.front() != ' ';
    std::vector<std::string> pieces = {(prefix ? std::string(" ") : std::string()) +
                                       std::string(text)};
    for (const auto& splitter : splitters) {
      std::vector<std::string> next;
      for (const std::string& p : pieces) splitter->split(p, next);
      pieces = std::move(next);
    }
    const ByteAlphabet& a = alphabet();
    for (const std::string& piece : pieces) {
      if (piece.empty()) continue;
      std::string word;
      for (char c : piece) word += a.of_byte[uint8_t(c)];
      for (int64_t id : bpe(word)) out.push_back(id);
    }
  }
};

BPETokenizer::BPETokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BPETokenizer::~BPETokenizer() = default;
BPETokenizer::BPETokenizer(BPETokenizer&&) noexcept = default;
BPETokenizer& BPETokenizer::operator=(BPETokenizer&&) noexcept = default;

BPETokenizer BPETokenizer::from_file(const std::string& path) {
  return from_json(read_text_file(path), path);
}

BPETokenizer BPETokenizer::from_json(std::string_view json_text, const std::string& source) {
  auto impl = std::make_unique<Impl>();
  impl->source = source;
  detail::read_tokenizer_json(json_text, source, [&](const json& root) { impl->read(root); });
  return BPETokenizer(std::move(impl));
}

std::vector<int64_t> BPETokenizer::encode(std::string_view text) const {
  return detail::encode_with_added_tokens(text, impl_->added,
                                          [&](std::string_view stretch, std::vector<int64_t>& out) {
                                            impl_->encode_ordinary(stretch, out);
                                          });
}

std::string BPETokenizer::decode(const std::vector<int64_t>& ids) const {
  const ByteAlphabet& a = alphabet();
  std::string out;
  for (int64_t id : ids) {
    if (id < 0 || id >= vocab_size() || impl_->tokens[size_t(id)].empty()) {
      throw ValueError(impl_->source + ": id " + std::to_string(id) + " is not in the vocabulary");
    }
    const std::string& token = impl_->tokens[size_t(id)];
    if (impl_->is_added[size_t(id)]) {
      out += token;
      continue;
    }
    for (const std::string& c : utf8_chars(token)) {
      auto it = a.to_byte.find(c);
      if (it == a.to_byte.end()) {
        throw ValueError(impl_->source + ": token " + std::to_string(id) +
                         " holds a character outside the byte-level alphabet");
      }
      out += char(it->second);
    }
  }
  return out;
}

// The template's special tokens before a single sequence are what a text to
// be continued starts with (Llama 3's <|begin_of_text|>); those after it (an
// EOS) would end the text, so a prompt leaves them out.
std::vector<int64_t> BPETokenizer::prefix_ids() const {
  return impl_->post_processor.prefix();
}

Tokenizer::WithSpecialTokens BPETokenizer::with_special_tokens(
    const std::vector<int64_t>& first, const std::vector<int64_t>* second) const {
  return impl_->post_processor.apply(first, second);
}

std::vector<int64_t> BPETokenizer::special_ids() const {
  return impl_->special;
}

int64_t BPETokenizer::vocab_size() const {
  return int64_t(impl_->tokens.size());
}

std::optional<int64_t> BPETokenizer::token_to_id(std::string_view token) const {
  auto it = impl_->vocab.find(std::string(token));
  if (it == impl_->vocab.end()) return std::nullopt;
  return it->second;
}

}  // namespace stride::data
