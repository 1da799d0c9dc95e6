// libFuzzer target: a GGUF file of arbitrary bytes as `stride generate
// --gguf` reads it (include/stride/gguf.h): mapped and validated, its
// tokenizer built from its metadata (include/stride/data/gguf_tokenizer.h)
// and run, and its small tensors decoded to float32. Each step either
// succeeds or throws one of stride's errors; a crash, a hang, an
// out-of-memory or another exception is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "scratch_file.h"
#include "stride/data/gguf_tokenizer.h"
#include "stride/error.h"
#include "stride/gguf.h"

namespace {

// Tensors decoded per input at most: larger ones would only cost time.
constexpr int64_t kMaxDecoded = int64_t(1) << 16;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = stride::fuzz::write_scratch_file("gguf_model", ".gguf", data, size);
  try {
    const stride::io::GgufContents contents = stride::io::map_gguf(path);
    for (const stride::io::GgufTensor& t : contents.tensors) {
      if (t.data.numel() <= kMaxDecoded) {
        try {
          (void)stride::io::gguf_to_float32(t);
        } catch (const stride::Error&) {
          // a type stride does not decode
        }
      }
    }
    const auto tokenizer = stride::data::load_gguf_tokenizer(contents.header, path);
    (void)tokenizer->decode(tokenizer->encode("Hello, world! 123 \xE4\xB8\xAD  \n"));
  } catch (const stride::Error&) {
    // a refused file, tokenizer or text
  }
  std::remove(path.c_str());
  return 0;
}
