// libFuzzer target: load_checkpoint (include/stride/checkpoint.h) on a file
// of arbitrary bytes, the way `stride eval --ckpt` meets a damaged or
// hostile checkpoint. Loading either succeeds or throws one of stride's
// errors; a crash, a hang, an out-of-memory or another exception is a
// finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "scratch_file.h"
#include "stride/checkpoint.h"
#include "stride/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path =
      stride::fuzz::write_scratch_file("checkpoint", ".safetensors", data, size);
  try {
    const stride::CheckpointState state = stride::load_checkpoint(path);
    (void)state;
  } catch (const stride::Error&) {
    // a refused file: what malformed input must give
  }
  std::remove(path.c_str());
  return 0;
}
