// Storage owns a tensor's bytes. Every view of a tensor shares its Storage, and
// with it the version counter that autograd uses to detect in-place changes to
// saved tensors.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "stride/device.h"

namespace stride {

// CPU buffers are aligned to 64 bytes: one cache line, one AVX-512 vector.
inline constexpr size_t kCpuAlignment = 64;

class StorageImpl {
 public:
  using Deleter = void (*)(void* data, void* ctx);

  // Allocates `nbytes` (uninitialised) on `device`.
  StorageImpl(size_t nbytes, Device device);
  // Wraps memory owned elsewhere; `deleter(data, ctx)` runs on destruction.
  StorageImpl(void* data, size_t nbytes, Device device, Deleter deleter, void* ctx);
  StorageImpl(const StorageImpl&) = delete;
  StorageImpl& operator=(const StorageImpl&) = delete;
  ~StorageImpl();

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }

  uint64_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }

 private:
  void* data_;
  size_t nbytes_;
  Device device_;
  Deleter deleter_;
  void* ctx_;
  std::atomic<uint64_t> version_{0};
};

using Storage = std::shared_ptr<StorageImpl>;

}  // namespace stride
