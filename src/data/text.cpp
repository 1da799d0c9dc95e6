// Character tokenizer, the article's split and token windows (text.h).
#include "stride/data/text.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/check.h"
#include "data/utf8.h"
#include "stride/data/sampler.h"
#include "stride/io.h"
#include "stride/ops.h"

namespace stride::data {

using detail::append_utf8;

using stride::detail::str_cat;

namespace {

constexpr const char* kTokenizerFormat = "stride.CharTokenizer";
constexpr int kTokenizerVersion = 2;

// The checks shared by the window makers: a 1-d int64 token tensor.
Tensor as_token_tensor(const Tensor& tokens, const char* op) {
  STRIDE_CHECK(tokens.defined(), ValueError, "[", op, "] the token tensor is undefined.");
  STRIDE_CHECK(tokens.dim() == 1, ShapeError, "[", op, "] expected a 1-d token tensor; got shape ",
               shape_str(tokens.sizes()), ".");
  STRIDE_CHECK(is_integral(tokens.dtype()), DTypeError, "[", op,
               "] expected integer tokens; got dtype ", to_string(tokens.dtype()), ".");
  return tokens.to(kInt64).contiguous();
}

void check_random_window_fits(int64_t length, int64_t context, const char* op) {
  STRIDE_CHECK(context >= 1, ValueError, "[", op, "] context must be at least 1; got ", context,
               ".");
  STRIDE_CHECK(length >= context + 2, ValueError, "[", op, "] the tokens (", length,
               ") are shorter than a window: random windows of context ", context,
               " need at least ", context + 2,
               " tokens (starts are drawn from [0, L - T - 1)). Hint: use a longer corpus or a "
               "shorter context.");
}

// The code point starting at text[*pos], advancing *pos past it; nullopt
// for a byte sequence that is not UTF-8 (a stray continuation byte, a
// truncated or overlong sequence, a surrogate, a value past U+10FFFF).
std::optional<char32_t> next_code_point(std::string_view text, size_t* pos) {
  const auto byte = [&](size_t k) { return uint8_t(text[*pos + k]); };
  const uint8_t b0 = byte(0);
  if (b0 < 0x80) {
    *pos += 1;
    return b0;
  }
  const int extra = b0 >= 0xf0 ? 3 : b0 >= 0xe0 ? 2 : b0 >= 0xc0 ? 1 : -1;
  if (extra < 0 || b0 > 0xf4 || text.size() - *pos <= size_t(extra)) return std::nullopt;
  char32_t c = b0 & (0x3f >> extra);
  for (int k = 1; k <= extra; ++k) {
    if ((byte(size_t(k)) & 0xc0) != 0x80) return std::nullopt;
    c = (c << 6) | (byte(size_t(k)) & 0x3f);
  }
  constexpr char32_t kMinOf[] = {0, 0x80, 0x800, 0x10000};
  if (c < kMinOf[extra] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return std::nullopt;
  *pos += size_t(extra) + 1;
  return c;
}

// Calls f(code point, byte offset) for each character of UTF-8 `text`.
template <class F>
void for_each_code_point(std::string_view text, const char* op, F&& f) {
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t start = pos;
    const std::optional<char32_t> c = next_code_point(text, &pos);
    if (!c) [[unlikely]] {
      char byte[8];
      std::snprintf(byte, sizeof byte, "0x%02x", unsigned(uint8_t(text[start])));
      throw ValueError(str_cat("[", op, "] the text is not valid UTF-8: byte ", byte, " at offset ",
                               start,
                               " does not start a well-formed character. Hint: convert the file "
                               "to UTF-8 (e.g. iconv -f latin1 -t utf-8)."));
    }
    f(*c, start);
  }
}

std::string code_point_name(char32_t c) {
  char name[16];
  std::snprintf(name, sizeof name, "U+%04X", unsigned(c));
  return name;
}

[[noreturn]] void throw_unknown_char(char32_t c, size_t offset, int64_t vocab_size) {
  throw ValueError(str_cat("[CharTokenizer::encode] character ", escape_char(c), " (",
                           code_point_name(c), ") at byte ", offset,
                           " is not in the vocabulary of ", vocab_size,
                           " symbols. Hint: build the tokenizer from a text that contains it."));
}

}  // namespace

std::string escape_char(char32_t c) {
  switch (c) {
    case U'\n':
      return "'\\n'";
    case U'\t':
      return "'\\t'";
    case U'\r':
      return "'\\r'";
    case U'\'':
      return "'\\''";
    case U'\\':
      return "'\\\\'";
    default:
      break;
  }
  char buf[16];
  if (c < 0x20 || c == 0x7f) {
    std::snprintf(buf, sizeof buf, "'\\x%02x'", unsigned(c));
    return buf;
  }
  if (c >= 0x80 && c < 0xa0) {  // C1 controls print as nothing
    std::snprintf(buf, sizeof buf, "'\\u%04x'", unsigned(c));
    return buf;
  }
  std::string out = "'";
  append_utf8(out, c);
  return out + "'";
}

// ---- CharTokenizer ----

CharTokenizer::CharTokenizer(std::string_view text) {
  STRIDE_CHECK(!text.empty(), ValueError,
               "[CharTokenizer] cannot build a vocabulary from an empty text.");
  std::array<bool, 128> ascii{};
  std::vector<char32_t> others;
  for_each_code_point(text, "CharTokenizer", [&](char32_t c, size_t) {
    if (c < 128) {
      ascii[c] = true;
    } else {
      others.push_back(c);
    }
  });
  for (char32_t c = 0; c < 128; ++c) {
    if (ascii[c]) symbols_.push_back(c);
  }
  std::sort(others.begin(), others.end());
  others.erase(std::unique(others.begin(), others.end()), others.end());
  symbols_.append(others.begin(), others.end());
  index();
}

CharTokenizer CharTokenizer::from_vocab(std::u32string_view symbols) {
  STRIDE_CHECK(!symbols.empty(), ValueError,
               "[CharTokenizer::from_vocab] the vocabulary is empty.");
  for (size_t i = 0; i < symbols.size(); ++i) {
    const char32_t c = symbols[i];
    STRIDE_CHECK(c <= 0x10ffff && (c < 0xd800 || c > 0xdfff), ValueError,
                 "[CharTokenizer::from_vocab] ", code_point_name(c), " at id ", i,
                 " is not a Unicode scalar value.");
    STRIDE_CHECK(i == 0 || symbols[i - 1] < c, ValueError,
                 "[CharTokenizer::from_vocab] symbols must be distinct and sorted by code point; "
                 "got ",
                 escape_char(c), " at id ", i, " after ", escape_char(symbols[i - 1]), ".");
  }
  CharTokenizer t;
  t.symbols_ = std::u32string(symbols);
  t.index();
  return t;
}

void CharTokenizer::index() {
  ascii_ids_.fill(-1);
  for (size_t i = 0; i < symbols_.size() && symbols_[i] < 128; ++i) {
    ascii_ids_[symbols_[i]] = int32_t(i);
  }
}

int64_t CharTokenizer::lookup(char32_t c) const {
  if (c < 128) return ascii_ids_[c];
  const auto it = std::lower_bound(symbols_.begin(), symbols_.end(), c);
  return it != symbols_.end() && *it == c ? int64_t(it - symbols_.begin()) : -1;
}

int64_t CharTokenizer::id(char32_t c) const {
  const int64_t v = lookup(c);
  STRIDE_CHECK(v >= 0, ValueError, "[CharTokenizer] character ", escape_char(c), " (",
               code_point_name(c), ") is not in the vocabulary of ", vocab_size(), " symbols.");
  return v;
}

std::string CharTokenizer::symbol(int64_t id) const {
  STRIDE_CHECK(id >= 0 && id < vocab_size(), IndexError, "[CharTokenizer] id ", id,
               " is out of range for a vocabulary of ", vocab_size(), " symbols.");
  std::string out;
  append_utf8(out, symbols_[size_t(id)]);
  return out;
}

std::optional<std::pair<char32_t, size_t>> CharTokenizer::first_unknown(
    std::string_view text) const {
  std::optional<std::pair<char32_t, size_t>> unknown;
  for_each_code_point(text, "CharTokenizer", [&](char32_t c, size_t offset) {
    if (!unknown && lookup(c) < 0) unknown.emplace(c, offset);
  });
  return unknown;
}

template <class Emit>
void CharTokenizer::encode_each(std::string_view text, const char* op, Emit&& emit) const {
  for_each_code_point(text, op, [&](char32_t c, size_t offset) {
    const int64_t v = lookup(c);
    if (v < 0) [[unlikely]]
      throw_unknown_char(c, offset, vocab_size());
    emit(v);
  });
}

std::vector<int64_t> CharTokenizer::encode(std::string_view text) const {
  std::vector<int64_t> out;
  out.reserve(text.size());
  encode_each(text, "CharTokenizer::encode", [&](int64_t v) { out.push_back(v); });
  return out;
}

Tensor CharTokenizer::encode_tensor(std::string_view text) const {
  const std::vector<int64_t> ids = encode(text);
  Tensor out = empty({int64_t(ids.size())}, kInt64);
  std::copy(ids.begin(), ids.end(), out.data_ptr<int64_t>());
  return out;
}

std::string CharTokenizer::decode(const std::vector<int64_t>& ids) const {
  std::string out;
  out.reserve(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    const int64_t id = ids[i];
    STRIDE_CHECK(id >= 0 && id < vocab_size(), IndexError, "[CharTokenizer::decode] id ", id,
                 " at position ", i, " is out of range for a vocabulary of ", vocab_size(),
                 " symbols.");
    append_utf8(out, symbols_[size_t(id)]);
  }
  return out;
}

std::string CharTokenizer::decode(const Tensor& ids) const {
  STRIDE_CHECK(ids.defined(), ValueError, "[CharTokenizer::decode] the id tensor is undefined.");
  STRIDE_CHECK(is_integral(ids.dtype()), DTypeError,
               "[CharTokenizer::decode] expected integer ids; got dtype ", to_string(ids.dtype()),
               ".");
  return decode(ids.to_vector<int64_t>());
}

std::string CharTokenizer::to_json() const {
  nlohmann::json j;
  j["format"] = kTokenizerFormat;
  j["version"] = kTokenizerVersion;
  j["vocab_size"] = vocab_size();
  std::vector<uint32_t> code_points(symbols_.begin(), symbols_.end());
  j["vocab"] = code_points;
  return j.dump(1);
}

CharTokenizer CharTokenizer::from_json(std::string_view text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw IOError(str_cat("[CharTokenizer::from_json] not valid JSON: ",
                          stride::detail::printable_excerpt(e.what())));
  }
  STRIDE_CHECK(j.is_object() && j.contains("format") && j["format"] == kTokenizerFormat, IOError,
               "[CharTokenizer::from_json] expected an object with \"format\": \"",
               kTokenizerFormat, "\".");
  const bool bytes = j.contains("version") && j["version"] == 1;
  STRIDE_CHECK(bytes || (j.contains("version") && j["version"] == kTokenizerVersion), IOError,
               "[CharTokenizer::from_json] unsupported version ",
               j.contains("version") ? j["version"].dump() : std::string("(missing)"),
               "; expected 1 or ", kTokenizerVersion, ".");
  STRIDE_CHECK(j.contains("vocab") && j["vocab"].is_array(), IOError,
               "[CharTokenizer::from_json] \"vocab\" must be an array of code points.");
  // Version 1 held bytes: for ASCII they are the code points; a byte above
  // 127 was part of a UTF-8 character that the model saw byte by byte.
  const int64_t max = bytes ? 127 : 0x10ffff;
  std::u32string symbols;
  for (const auto& v : j["vocab"]) {
    STRIDE_CHECK(v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() <= max, IOError,
                 "[CharTokenizer::from_json] vocab entry ", v.dump(), " is not ",
                 bytes ? "an ASCII byte (a version 1 tokenizer of non-ASCII text tokenized "
                         "bytes; retrain the run with this stride)"
                       : "a code point (0..0x10FFFF)",
                 ".");
    symbols.push_back(char32_t(v.get<int64_t>()));
  }
  if (j.contains("vocab_size")) {
    STRIDE_CHECK(j["vocab_size"].is_number_integer() &&
                     j["vocab_size"].get<int64_t>() == int64_t(symbols.size()),
                 IOError, "[CharTokenizer::from_json] vocab_size ", j["vocab_size"].dump(),
                 " does not match the ", symbols.size(), " vocab entries.");
  }
  try {
    return from_vocab(symbols);
  } catch (const ValueError& e) {
    throw IOError(str_cat("[CharTokenizer::from_json] bad vocabulary: ", e.what()));
  }
}

void CharTokenizer::save(const std::filesystem::path& path) const {
  // Atomically: an interrupted save must not leave a run without its tokenizer.
  io::write_file_atomically(path.string(), to_json() + '\n', "CharTokenizer::save");
}

CharTokenizer CharTokenizer::load(const std::filesystem::path& path) {
  const std::string text = read_text_file(path);
  try {
    return from_json(text);
  } catch (const IOError& e) {
    throw IOError(str_cat(path.string(), ": ", e.what()));
  }
}

// ---- split ----

std::string_view split_name(Split split) {
  switch (split) {
    case Split::Train:
      return "train";
    case Split::Val:
      return "val";
    case Split::Test:
      return "test";
  }
  return "?";
}

SplitBounds split_bounds(int64_t n, Split split) {
  STRIDE_CHECK(n >= 0, ValueError, "[split_bounds] the corpus length must be non-negative; got ", n,
               ".");
  STRIDE_CHECK(n < (int64_t(1) << 49), ValueError, "[split_bounds] corpus of ", n,
               " tokens is too long for the int(0.8 N) rule.");
  const int64_t train_end = n * 8 / 10;
  const int64_t val_end = n * 9 / 10;
  switch (split) {
    case Split::Train:
      return {0, train_end};
    case Split::Val:
      return {train_end, val_end};
    case Split::Test:
      return {val_end, n};
  }
  return {};
}

// ---- windows ----

std::pair<Tensor, Tensor> random_windows_batch(const Tensor& tokens,
                                               int64_t batch_size,
                                               int64_t context,
                                               Generator* gen) {
  const Tensor t = as_token_tensor(tokens, "random_windows_batch");
  const int64_t length = t.size(0);
  check_random_window_fits(length, context, "random_windows_batch");
  STRIDE_CHECK(batch_size >= 1, ValueError,
               "[random_windows_batch] batch_size must be at least 1; got ", batch_size, ".");
  const Tensor starts = randint(0, length - context - 1, {batch_size}, kInt64, gen);
  const int64_t* s = starts.data_ptr<int64_t>();
  const int64_t* src = t.data_ptr<int64_t>();
  Tensor x = empty({batch_size, context}, kInt64);
  Tensor y = empty({batch_size, context}, kInt64);
  int64_t* px = x.data_ptr<int64_t>();
  int64_t* py = y.data_ptr<int64_t>();
  for (int64_t b = 0; b < batch_size; ++b) {
    std::copy_n(src + s[b], context, px + b * context);
    std::copy_n(src + s[b] + 1, context, py + b * context);
  }
  return {x, y};
}

RandomWindows::RandomWindows(Tensor tokens, int64_t context, int64_t windows_per_epoch)
    : tokens_(as_token_tensor(tokens, "RandomWindows")),
      context_(context),
      windows_per_epoch_(windows_per_epoch) {
  check_random_window_fits(tokens_.size(0), context, "RandomWindows");
  STRIDE_CHECK(windows_per_epoch >= 0, ValueError,
               "[RandomWindows] windows_per_epoch must be non-negative; got ", windows_per_epoch,
               ".");
}

std::pair<Tensor, Tensor> RandomWindows::get(int64_t /*index*/, Generator& gen) const {
  return window_at(int64_t(uniform_index(gen, uint64_t(num_starts()))));
}

std::pair<Tensor, Tensor> RandomWindows::window_at(int64_t start) const {
  STRIDE_CHECK(start >= 0 && start < num_starts(), IndexError, "[RandomWindows] start ", start,
               " is outside [0, ", num_starts(), ").");
  return {tokens_.narrow(0, start, context_), tokens_.narrow(0, start + 1, context_)};
}

SequentialWindows::SequentialWindows(Tensor tokens, int64_t context, Tail tail)
    : tokens_(as_token_tensor(tokens, "SequentialWindows")), context_(context), tail_(tail) {
  STRIDE_CHECK(context >= 1, ValueError, "[SequentialWindows] context must be at least 1; got ",
               context, ".");
  const int64_t targets = tokens_.size(0) - 1;
  STRIDE_CHECK(targets >= 1, ValueError, "[SequentialWindows] the tokens (", tokens_.size(0),
               ") are too short: a window needs at least 2 tokens (an input and its target).");
  const int64_t full = targets / context;
  const bool partial = targets % context != 0;
  num_windows_ = full + (partial && tail != Tail::Drop ? 1 : 0);
  STRIDE_CHECK(num_windows_ >= 1, ValueError, "[SequentialWindows] the tokens (", tokens_.size(0),
               ") are shorter than one window of context ", context,
               " and Tail::Drop drops the partial one. Hint: use Tail::Pad or Tail::Shorter.");
}

std::pair<Tensor, Tensor> SequentialWindows::get(int64_t index) const {
  STRIDE_CHECK(index >= 0 && index < num_windows_, IndexError, "[SequentialWindows] window ", index,
               " is out of range for ", num_windows_, " windows.");
  const int64_t targets = tokens_.size(0) - 1;
  const int64_t start = index * context_;
  const int64_t length = std::min(context_, targets - start);
  Tensor x = tokens_.narrow(0, start, length);
  Tensor y = tokens_.narrow(0, start + 1, length);
  if (length == context_ || tail_ != Tail::Pad) return {x, y};
  Tensor px = zeros({context_}, kInt64);
  Tensor py = full({context_}, kIgnoreIndex, kInt64);
  px.narrow(0, 0, length).copy_(x);
  py.narrow(0, 0, length).copy_(y);
  return {px, py};
}

// ---- TokenDataset ----

TokenDataset::TokenDataset(Tensor tokens) : tokens_(as_token_tensor(tokens, "TokenDataset")) {
  STRIDE_CHECK(tokens_.size(0) > 0, ValueError, "[TokenDataset] the corpus is empty.");
}

Tensor TokenDataset::split(Split split) const {
  const SplitBounds b = bounds(split);
  return tokens_.narrow(0, b.begin, b.size());
}

std::pair<Tensor, Tensor> TokenDataset::random_batch(Split s,
                                                     int64_t batch_size,
                                                     int64_t context,
                                                     Generator* gen) const {
  const Tensor t = split(s);
  STRIDE_CHECK(t.size(0) >= context + 2, ValueError, "[random_batch] the ", split_name(s),
               " split has ", t.size(0), " tokens; random windows of context ", context,
               " need at least ", context + 2, ". Hint: use a longer corpus or a shorter context.");
  return random_windows_batch(t, batch_size, context, gen);
}

RandomWindows TokenDataset::random_windows(Split s,
                                           int64_t context,
                                           int64_t windows_per_epoch) const {
  const Tensor t = split(s);
  STRIDE_CHECK(t.size(0) >= context + 2, ValueError, "[random_windows] the ", split_name(s),
               " split has ", t.size(0), " tokens; random windows of context ", context,
               " need at least ", context + 2, ". Hint: use a longer corpus or a shorter context.");
  return RandomWindows(t, context, windows_per_epoch);
}

SequentialWindows TokenDataset::sequential_windows(Split s, int64_t context, Tail tail) const {
  const Tensor t = split(s);
  STRIDE_CHECK(t.size(0) >= 2, ValueError, "[sequential_windows] the ", split_name(s),
               " split has ", t.size(0), " tokens; a window needs at least 2.");
  return SequentialWindows(t, context, tail);
}

// ---- corpora ----

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  STRIDE_CHECK(in.good(), IOError, "[read_text_file] cannot open ", path, " for reading.");
  std::ostringstream ss;
  ss << in.rdbuf();
  STRIDE_CHECK(!in.bad(), IOError, "[read_text_file] failed reading ", path, ".");
  return ss.str();
}

CharCorpus make_char_corpus(std::string text, const CharTokenizer* tokenizer) {
  STRIDE_CHECK(!text.empty(), ValueError, "[make_char_corpus] the corpus is empty.");
  CharTokenizer tok = tokenizer ? *tokenizer : CharTokenizer(text);
  Tensor ids = tok.encode_tensor(text);
  return CharCorpus{std::move(text), std::move(tok), TokenDataset(std::move(ids))};
}

CharCorpus load_char_corpus(const std::filesystem::path& path, const CharTokenizer* tokenizer) {
  std::string text = read_text_file(path);
  STRIDE_CHECK(!text.empty(), ValueError, "[load_char_corpus] ", path,
               " is empty. Hint: point --data or STRIDE_DATA at a non-empty text file.");
  try {
    return make_char_corpus(std::move(text), tokenizer);
  } catch (const ValueError& e) {
    throw ValueError(str_cat("[load_char_corpus] ", path.string(), ": ", e.what()));
  }
}

}  // namespace stride::data
