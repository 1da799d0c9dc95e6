// libFuzzer target: a SentencePiece model (tokenizer.model) read by
// SentencePieceTokenizer (include/stride/data/sentencepiece.h) from arbitrary
// bytes. Every input is either refused with IOError, or gives a tokenizer
// that encodes and decodes text without crashing or hanging; a crash (the
// library's too: it is not instrumented, but an abort or a fault still
// ends the run), a hang or another exception is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "stride/data/sentencepiece.h"
#include "stride/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    const auto tok =
        stride::data::SentencePieceTokenizer::from_bytes(bytes, "fuzz/tokenizer.model");
    for (std::string_view text : {std::string_view("Hello, world! 123 \xE4\xB8\xAD  \n"),
                                  std::string_view(bytes.substr(0, 256))}) {
      const std::string back = tok.decode(tok.encode(text));
      (void)back;
    }
  } catch (const stride::IOError&) {
    // a refused file
  } catch (const stride::ValueError&) {
    // a text the model cannot encode, or ids it cannot decode
  }
  return 0;
}
