// A growable, aligned buffer for the GEMM's per-thread scratch space (the
// operand copies and split-k products of blas.cpp, the oneDNN primitives'
// scratchpads of onednn_matmul.cpp): kept per thread and reused, since
// allocating at every GEMM would cost as much as a small one.
#pragma once

#include <cstddef>
#include <cstdlib>

#include "backends/cpu/capability.h"
#include "core/check.h"

namespace STRIDE_CPU_NAMESPACE {

// 64-byte aligned; each of its users keeps one per thread.
class ScratchBuffer {
 public:
  ScratchBuffer() = default;
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;
  ~ScratchBuffer() { std::free(data_); }

  // At least `bytes`; the contents are not kept when it grows.
  void* get(size_t bytes, const char* what) {
    if (bytes > size_) {
      std::free(data_);
      const size_t rounded = (bytes + 63) / 64 * 64;
      data_ = std::aligned_alloc(64, rounded);
      size_ = data_ != nullptr ? rounded : 0;
      STRIDE_ASSERT(data_ != nullptr, "out of memory for a ", bytes, "-byte ", what);
    }
    return data_;
  }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace STRIDE_CPU_NAMESPACE
