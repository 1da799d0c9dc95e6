// libFuzzer target: the safetensors format layer (src/io/safetensors_format.h)
// on arbitrary bytes. Every input either parses into a header whose tensors
// tile the data buffer exactly, or throws IOError; a crash, a hang, another
// exception or a broken invariant is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "io/safetensors_format.h"
#include "stride/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    const stride::io::detail::Header header =
        stride::io::detail::parse_file_bytes(bytes, "fuzz.safetensors");
    uint64_t covered = 0;
    for (const stride::io::detail::TensorEntry& e : header.entries) {
      if (e.begin != covered || e.end < e.begin) __builtin_trap();
      covered = e.end;
    }
    if (header.data_start > size || covered != size - header.data_start) __builtin_trap();
  } catch (const stride::IOError&) {
    // a refused file: what malformed input must give
  }
  return 0;
}
