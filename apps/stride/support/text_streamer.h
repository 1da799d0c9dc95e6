// Generated tokens printed as text as they come.
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include "stride/data/tokenizer.h"

namespace stride::app {

// Prints the decode of the prompt and every token so far, less what is
// already out. Decoding token by token would drop the space SentencePiece
// folds into a piece ("\u2581the" alone decodes to "the") and split
// characters that byte-fallback pieces or byte-level BPE make only together.
// What is printed is valid UTF-8, as transformers' decode gives it: bytes
// that cannot form a character become U+FFFD (data::valid_utf8), and a tail
// that may still become one (raw bytes from byte-level BPE, or the U+FFFD
// SentencePiece decodes an unfinished byte-fallback character to) waits for
// the next token, or for finish(), which flushes it.
class TextStreamer {
 public:
  TextStreamer(const data::Tokenizer& tokenizer, std::vector<int64_t> prompt, std::ostream& out);

  void push(int64_t id);
  void finish();

 private:
  void emit(bool final);

  const data::Tokenizer& tokenizer_;
  std::vector<int64_t> ids_;
  std::ostream& out_;
  size_t printed_;  // bytes of the decode already out
};

}  // namespace stride::app
