// The file a file-reading fuzz target writes each input to: one per fuzzing
// process (several may share $TMPDIR), rewritten for every input.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace stride::fuzz {

// Writes data to $TMPDIR/stride_fuzz_<name>.<pid><suffix> and returns its
// path; a failed write is a finding of the harness, not of stride.
inline const std::string& write_scratch_file(const char* name,
                                             const char* suffix,
                                             const uint8_t* data,
                                             size_t size) {
  static const std::string path = [&] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir ? dir : "/tmp") + "/stride_fuzz_" + name + "." +
           std::to_string(::getpid()) + suffix;
  }();
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) __builtin_trap();
  if (size > 0 && std::fwrite(data, 1, size, file) != size) __builtin_trap();
  std::fclose(file);
  return path;
}

}  // namespace stride::fuzz
