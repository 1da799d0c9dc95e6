// libFuzzer target: the GGUF format layer (src/io/gguf_format.h) on
// arbitrary bytes. Every input either parses into a header whose tensors
// follow each other, aligned, inside the file, or throws IOError; a crash, a
// hang, another exception or a broken invariant is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "io/gguf_format.h"
#include "stride/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    const stride::io::detail::GgufHeader h = stride::io::detail::parse_gguf(bytes, "fuzz.gguf");
    if (h.alignment == 0 || (h.alignment & (h.alignment - 1)) != 0) __builtin_trap();
    uint64_t end = 0;
    for (const stride::io::detail::GgufTensorInfo& t : h.tensors) {
      if (t.offset < end || t.offset % h.alignment != 0) __builtin_trap();
      end = t.offset + t.bytes;
      if (h.data_start + end > size) __builtin_trap();
    }
  } catch (const stride::IOError&) {
    // a refused file: what malformed input must give
  }
  return 0;
}
