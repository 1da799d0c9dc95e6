// Note [The CUDA caching allocator]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// cudaMalloc and cudaFree synchronise the device and cost tens of
// microseconds, so, as PyTorch's CUDA allocator, stride keeps freed blocks
// and hands them out again: a training step that repeats the previous one's
// allocations gets every block from the cache and calls the driver for
// none. Requests are rounded to a size class (512 bytes below 1 MiB, then 8
// classes per power of two, at most 12.5% more) and each class has its free
// list per device. A block freed is at once reusable: every kernel runs on
// the device's default stream, so a later kernel that gets the block runs
// after the one that last used it (a second stream will need the block's
// stream recorded, and events before reuse elsewhere). When the driver has
// no memory left, the cache is returned to it and the request tried again;
// failing that, the error says how much was asked, how much is in live
// tensors and how much the cache held.
#include "backends/cuda/allocator.h"

#include <cuda_runtime.h>

#include <array>
#include <bit>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "backends/cuda/runtime.h"
#include "stride/cuda.h"

namespace stride::cuda_detail {

namespace {

constexpr int kMaxDevices = 64;

size_t size_class(size_t nbytes) {
  constexpr size_t kSmall = size_t(1) << 20;
  if (nbytes <= kSmall) return std::max<size_t>(512, (nbytes + 511) / 512 * 512);
  // 8 classes per power of two: round up to a multiple of 2^(floor(log2)-3).
  const size_t step = std::bit_floor(nbytes) >> 3;
  return (nbytes + step - 1) / step * step;
}

struct DeviceCache {
  std::map<size_t, std::vector<void*>> free;  // size class -> cached blocks
  size_t cached = 0;
  DeviceMemoryStats stats;
};

class CachingAllocator {
 public:
  DataPtr allocate(size_t nbytes, int device) {
    STRIDE_CHECK(device >= 0 && device < kMaxDevices, DeviceError, "[cuda] no device cuda:", device,
                 ".");
    const size_t size = size_class(nbytes);
    std::lock_guard lock(mutex_);
    DeviceCache& cache = caches_[size_t(device)];
    void* block = nullptr;
    if (auto it = cache.free.find(size); it != cache.free.end() && !it->second.empty()) {
      block = it->second.back();
      it->second.pop_back();
      cache.cached -= size;
    } else {
      block = driver_allocate(size, device, cache);
    }
    cache.stats.allocated += size;
    cache.stats.peak_allocated = std::max(cache.stats.peak_allocated, cache.stats.allocated);
    // The block's size class (a multiple of 512) and device travel in the
    // deleter's context.
    return {block, reinterpret_cast<void*>(uintptr_t(size) | uintptr_t(device)),
            &CachingAllocator::release};
  }

  DeviceMemoryStats stats(int device) {
    std::lock_guard lock(mutex_);
    return caches_.at(size_t(device)).stats;
  }
  void reset_peak(int device) {
    std::lock_guard lock(mutex_);
    DeviceMemoryStats& s = caches_.at(size_t(device)).stats;
    s.peak_allocated = s.allocated;
  }
  void empty_cache() {
    std::lock_guard lock(mutex_);
    for (int d = 0; d < kMaxDevices; ++d) release_cached(d, caches_[size_t(d)]);
  }

 private:
  static void release(void* data, void* ctx);

  void give_back(void* block, size_t size, int device) {
    std::lock_guard lock(mutex_);
    DeviceCache& cache = caches_[size_t(device)];
    cache.free[size].push_back(block);
    cache.cached += size;
    cache.stats.allocated -= size;
  }

  void* driver_allocate(size_t size, int device, DeviceCache& cache) {
    DeviceGuard guard(device);
    void* block = nullptr;
    cudaError_t e = cudaMalloc(&block, size);
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();  // clears the error, so that the retry is judged alone
      const size_t held = cache.cached;
      release_cached(device, cache);
      e = cudaMalloc(&block, size);
      if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        STRIDE_CHECK(false, DeviceError, "[cuda] out of memory on cuda:", device, ": asked ", size,
                     " bytes with ", cache.stats.allocated, " bytes in live tensors and ", held,
                     " bytes cached (returned to the driver before trying again). Hint: a ",
                     "smaller batch, bf16 autocast, or freeing tensors that are no longer used.");
      }
    }
    STRIDE_CUDA_CHECK(e, "cuda allocate");
    cache.stats.reserved += size;
    ++cache.stats.driver_allocations;
    return block;
  }

  void release_cached(int device, DeviceCache& cache) {
    if (cache.cached == 0) return;
    DeviceGuard guard(device);
    for (auto& [size, blocks] : cache.free) {
      for (void* b : blocks) cudaFree(b);
      cache.stats.reserved -= size * blocks.size();
      blocks.clear();
    }
    cache.cached = 0;
  }

  std::mutex mutex_;
  std::array<DeviceCache, kMaxDevices> caches_;
};

// Never destroyed: tensors may be freed during exit, after static
// destructors would have run.
CachingAllocator& allocator() {
  static CachingAllocator* a = new CachingAllocator;
  return *a;
}

void CachingAllocator::release(void* data, void* ctx) {
  const uintptr_t bits = reinterpret_cast<uintptr_t>(ctx);
  allocator().give_back(data, size_t(bits & ~uintptr_t(511)), int(bits & 511));
}

}  // namespace

DataPtr cuda_allocate(size_t nbytes, int device) {
  return allocator().allocate(nbytes, device);
}
DeviceMemoryStats cuda_memory_stats(int device) {
  return allocator().stats(device);
}
void cuda_reset_peak(int device) {
  allocator().reset_peak(device);
}
void cuda_empty_cache() {
  allocator().empty_cache();
}

}  // namespace stride::cuda_detail
