// Character-level text: a byte tokenizer, the article's train/val/test split
// and the two ways to cut a token sequence into (input, target) windows.
//
// Shapes: B batch, T context (window length), N corpus length in tokens,
// L length of one split. Token tensors are int64.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "stride/data/tokenizer.h"
#include "stride/generator.h"
#include "stride/tensor.h"

namespace stride::data {

// A character tokenizer over Unicode code points: text is UTF-8, the
// vocabulary is the sorted set of distinct code points of a text, and a
// character's id is its rank. For TinyShakespeare that is 65 symbols with
// id 0 = '\n', as in the article (Python's sorted(set(text)) orders code
// points the same way). Text that is not valid UTF-8 is a ValueError naming
// the byte offset.
class CharTokenizer final : public Tokenizer {
 public:
  // The vocabulary of `text`; throws ValueError if it is empty or not UTF-8.
  explicit CharTokenizer(std::string_view text);
  // A tokenizer over exactly these code points, which must be distinct,
  // sorted, and Unicode scalar values.
  static CharTokenizer from_vocab(std::u32string_view symbols);

  int64_t vocab_size() const override { return int64_t(symbols_.size()); }
  // The code points in id order.
  const std::u32string& vocab() const { return symbols_; }
  // The id of a code point; throws ValueError naming it when it is not in the vocab.
  int64_t id(char32_t c) const;
  // The UTF-8 text of an id; throws IndexError when out of range.
  std::string symbol(int64_t id) const;
  bool contains(char32_t c) const { return lookup(c) >= 0; }
  // The first character of UTF-8 `text` that is not in the vocabulary and its
  // byte offset, or nullopt; throws ValueError when the text is not UTF-8.
  std::optional<std::pair<char32_t, size_t>> first_unknown(std::string_view text) const;

  // The ids of the N characters of `text`. An unknown character throws
  // ValueError naming it and its byte offset in `text`.
  std::vector<int64_t> encode(std::string_view text) const override;
  // The same as a 1-d int64 tensor (N).
  Tensor encode_tensor(std::string_view text) const;
  // The UTF-8 text of integer ids (any shape, read in row-major order); an id
  // outside [0, vocab_size) throws IndexError naming it and its position.
  std::string decode(const Tensor& ids) const;
  std::string decode(const std::vector<int64_t>& ids) const override;

  // JSON: {"format": "stride.CharTokenizer", "version": 2, "vocab_size": V,
  //        "vocab": [code points in id order]}
  // (numbers, so that any vocabulary is valid JSON). Version 1 files (byte
  // values) load when every byte is ASCII, the same code points.
  std::string to_json() const;
  static CharTokenizer from_json(std::string_view json);
  // Writes to_json() to `path` atomically; throws IOError.
  void save(const std::filesystem::path& path) const;
  static CharTokenizer load(const std::filesystem::path& path);

  friend bool operator==(const CharTokenizer& a, const CharTokenizer& b) {
    return a.symbols_ == b.symbols_;
  }

 private:
  CharTokenizer() = default;
  void index();
  int64_t lookup(char32_t c) const;  // -1 when absent
  template <class Emit>
  void encode_each(std::string_view text, const char* op, Emit&& emit) const;

  std::u32string symbols_;
  std::array<int32_t, 128> ascii_ids_{};  // ASCII code point -> id, -1 when absent
};

// Escapes a code point for messages: 'a', '\n', '\x00', 'é'.
std::string escape_char(char32_t c);

// ---- the article's split ----

enum class Split { Train, Val, Test };
std::string_view split_name(Split split);  // "train", "val", "test"

struct SplitBounds {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end - begin; }
};

// The article's split by position: train = [0, int(0.8 N)), val =
// [int(0.8 N), int(0.9 N)), test = [int(0.9 N), N). Computed exactly as
// floor(8N / 10) and floor(9N / 10) in integers, which equals Python's
// int(0.8 * len(data)) for every N below 2^49 (the double 0.8 is slightly
// above 4/5 and the fraction of 8N/10 is either 0 or at least 0.1, so the
// float rounding never crosses an integer). N = 1,115,394 gives
// 892,315 / 111,539 / 111,540.
SplitBounds split_bounds(int64_t n, Split split);

// The value cross_entropy ignores (its default ignore_index), used to pad
// targets.
inline constexpr int64_t kIgnoreIndex = -100;

// Random windows over a 1-d token tensor (L), like the article's get_batches:
// B start positions i drawn uniformly from [0, L - T - 1) -- the article's
// torch.randint(0, L - T - 1) upper bound, which never draws the last possible
// start L - T - 1 -- and x = tokens[i : i+T], y = tokens[i+1 : i+T+1], both
// (B, T) int64. y is x shifted by one. Needs L >= T + 2.
std::pair<Tensor, Tensor> random_windows_batch(const Tensor& tokens,
                                               int64_t batch_size,
                                               int64_t context,
                                               Generator* gen = nullptr);

// The same rule as a map-style dataset for the DataLoader: each of
// `windows_per_epoch` samples is one window (x (T), y (T)), its start drawn
// with the sample's own generator, so a batch of B samples is a (B, T) batch
// of random windows. x and y are views into `tokens`.
class RandomWindows {
 public:
  RandomWindows(Tensor tokens, int64_t context, int64_t windows_per_epoch);
  int64_t size() const { return windows_per_epoch_; }
  std::pair<Tensor, Tensor> get(int64_t index, Generator& gen) const;
  // The window starting at `start` in [0, num_starts()).
  std::pair<Tensor, Tensor> window_at(int64_t start) const;
  // Starts are drawn from [0, num_starts()) = [0, L - T - 1).
  int64_t num_starts() const { return tokens_.size(0) - context_ - 1; }
  int64_t context() const { return context_; }

 private:
  Tensor tokens_;
  int64_t context_;
  int64_t windows_per_epoch_;
};

// What SequentialWindows does with the last window when L - 1 is not a
// multiple of T.
enum class Tail {
  Pad,      // full length T: x padded with token 0, y with kIgnoreIndex (-100)
  Shorter,  // a shorter final window (cannot be stacked with full ones)
  Drop,     // dropped: the last (L - 1) % T targets are not covered
};

// Non-overlapping windows that cover a split exactly once, for honest
// evaluation: window k has x = tokens[kT : kT+T], y = tokens[kT+1 : kT+T+1],
// clipped at the end of the split, so the targets of all windows are the
// positions 1 .. L-1, each exactly once (position 0 is never a target: it has
// no context). With Tail::Pad, cross_entropy's default ignore_index skips the
// padding, so the mean loss over all batches weighs every position once.
// Needs L >= 2 (and L - 1 >= T for Tail::Drop).
class SequentialWindows {
 public:
  SequentialWindows(Tensor tokens, int64_t context, Tail tail = Tail::Pad);
  int64_t size() const { return num_windows_; }
  std::pair<Tensor, Tensor> get(int64_t index) const;
  int64_t context() const { return context_; }

 private:
  Tensor tokens_;
  int64_t context_;
  Tail tail_;
  int64_t num_windows_;
};

// A tokenized corpus with the article's split.
class TokenDataset {
 public:
  // `tokens`: a non-empty 1-d integer tensor; kept as contiguous int64.
  explicit TokenDataset(Tensor tokens);
  int64_t num_tokens() const { return tokens_.size(0); }
  const Tensor& tokens() const { return tokens_; }
  SplitBounds bounds(Split split) const { return split_bounds(num_tokens(), split); }
  // The split's tokens (L): a view.
  Tensor split(Split split) const;

  // The article's get_batches on a split: x, y (B, T).
  std::pair<Tensor, Tensor> random_batch(Split split,
                                         int64_t batch_size,
                                         int64_t context,
                                         Generator* gen = nullptr) const;
  RandomWindows random_windows(Split split, int64_t context, int64_t windows_per_epoch) const;
  SequentialWindows sequential_windows(Split split, int64_t context, Tail tail = Tail::Pad) const;

 private:
  Tensor tokens_;
};

// The bytes of a file; throws IOError naming the path.
std::string read_text_file(const std::filesystem::path& path);

struct CharCorpus {
  std::string text;
  CharTokenizer tokenizer;
  TokenDataset data;
};

// Tokenizes `text` with `tokenizer`, or with a tokenizer built from the text
// when none is given. Throws ValueError when the text is empty, or names the
// first byte the tokenizer cannot map and its position.
CharCorpus make_char_corpus(std::string text, const CharTokenizer* tokenizer = nullptr);
// make_char_corpus on a file's bytes; errors name the path.
CharCorpus load_char_corpus(const std::filesystem::path& path,
                            const CharTokenizer* tokenizer = nullptr);

}  // namespace stride::data
