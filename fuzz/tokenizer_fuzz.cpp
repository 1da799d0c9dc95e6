// libFuzzer target: a Hugging Face tokenizer.json read by BPETokenizer
// (include/stride/data/bpe.h) from arbitrary bytes. Every input is either
// refused with ValueError or IOError, or gives a tokenizer that encodes and
// decodes text without crashing or hanging; a crash, a hang or another
// exception is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "stride/data/bpe.h"
#include "stride/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    const stride::data::BPETokenizer tok =
        stride::data::BPETokenizer::from_json(bytes, "fuzz/tokenizer.json");
    // The input itself as text too: odd bytes, added tokens, long runs.
    for (std::string_view text : {std::string_view("Hello, world! 123 \xE4\xB8\xAD  \n"), bytes}) {
      const std::string back = tok.decode(tok.encode(text));
      (void)back;
    }
  } catch (const stride::ValueError&) {
    // a refused file, or a text its vocabulary cannot encode
  } catch (const stride::IOError&) {
  }
  return 0;
}
