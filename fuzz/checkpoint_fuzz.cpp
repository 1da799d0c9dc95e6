// libFuzzer target: load_checkpoint (include/stride/checkpoint.h) on a file
// of arbitrary bytes, the way `stride eval --ckpt` meets a damaged or
// hostile checkpoint. Loading either succeeds or throws one of stride's
// errors; a crash, a hang, an out-of-memory or another exception is a
// finding.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "stride/checkpoint.h"
#include "stride/error.h"

namespace {

// One file per fuzzing process, rewritten for every input.
const std::string& scratch_path() {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir ? dir : "/tmp") + "/stride_fuzz_checkpoint." +
           std::to_string(::getpid()) + ".safetensors";
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = scratch_path();
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) __builtin_trap();
  if (size > 0 && std::fwrite(data, 1, size, file) != size) __builtin_trap();
  std::fclose(file);
  try {
    const stride::CheckpointState state = stride::load_checkpoint(path);
    (void)state;
  } catch (const stride::Error&) {
    // a refused file: what malformed input must give
  }
  std::remove(path.c_str());
  return 0;
}
