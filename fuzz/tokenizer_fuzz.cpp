// libFuzzer target: a Hugging Face tokenizer.json read by BPETokenizer
// (include/stride/data/bpe.h) and by WordPieceTokenizer
// (include/stride/data/wordpiece.h) from arbitrary bytes. Every input is
// either refused with ValueError or IOError, or gives a tokenizer that
// encodes, adds its special tokens and decodes text without crashing or
// hanging; a crash, a hang or another exception is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stride/data/bpe.h"
#include "stride/data/wordpiece.h"
#include "stride/error.h"

namespace {

void exercise(const stride::data::Tokenizer& tok, std::string_view input) {
  // The input itself as text too: odd bytes, added tokens, long runs.
  for (std::string_view text : {std::string_view("Hello, world! 123 \xE4\xB8\xAD  \n"), input}) {
    const std::vector<int64_t> ids = tok.encode(text);
    const auto with_special = tok.with_special_tokens(ids, &ids);
    (void)with_special;
    const std::string back = tok.decode(ids);
    (void)back;
  }
}

template <typename Reader>
void try_reader(Reader read, std::string_view bytes) {
  try {
    exercise(read(bytes), bytes);
  } catch (const stride::ValueError&) {
    // a refused file, or a text its vocabulary cannot encode
  } catch (const stride::IOError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try_reader(
      [](std::string_view b) {
        return stride::data::BPETokenizer::from_json(b, "fuzz/tokenizer.json");
      },
      bytes);
  try_reader(
      [](std::string_view b) {
        return stride::data::WordPieceTokenizer::from_json(b, "fuzz/tokenizer.json");
      },
      bytes);
  return 0;
}
