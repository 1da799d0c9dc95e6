#include "stride/allocator.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include "stride/storage.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define STRIDE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STRIDE_ASAN 1
#endif
#endif
#ifdef STRIDE_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace stride {
namespace {

// Note [Caching allocator]: 8 classes per power of two.
size_t size_class(size_t nbytes) {
  const size_t step = (size_t(1) << std::bit_width(nbytes - 1)) / 16;
  return (nbytes + step - 1) / step * step;
}

// Note [Huge pages]
// Blocks of at least 2 MiB start on a 2 MiB boundary and ask Linux for
// transparent huge pages (madvise; the kernel's default "madvise" mode gives
// them only where asked), as PyTorch does under THP_MEM_ALLOC_ENABLE. Read
// in a stream, 4 KiB pages cost a TLB miss every 64 cache lines and stop the
// hardware prefetchers at each page boundary, which slows a model's decoding,
// as each token streams every weight (measured: see bench/HISTORY.md). The
// hint may be refused (then 4 KiB pages it is).
constexpr size_t kHugePage = size_t(2) << 20;

void* os_allocate(size_t capacity) {
  if (capacity < kHugePage) {
    void* p = std::aligned_alloc(kCpuAlignment, capacity);
    if (!p) throw std::bad_alloc();
    return p;
  }
  const size_t rounded = (capacity + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, rounded);
  if (!p) throw std::bad_alloc();
#if defined(__linux__)
  madvise(p, rounded, MADV_HUGEPAGE);
#endif
  return p;
}

// Cached blocks are off limits to the program: under ASan, a use after free
// of one still reports.
void set_poisoned(void* p, size_t n, bool poisoned) {
#ifdef STRIDE_ASAN
  if (poisoned) {
    ASAN_POISON_MEMORY_REGION(p, n);
  } else {
    ASAN_UNPOISON_MEMORY_REGION(p, n);
  }
#else
  (void)p, (void)n, (void)poisoned;
#endif
}

class CachingAllocator {
 public:
  void* allocate(size_t capacity) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      note_allocated(capacity);
      auto it = free_.find(capacity);
      if (it != free_.end() && !it->second.empty()) {
        void* p = it->second.back();
        it->second.pop_back();
        stats_.cached_bytes -= capacity;
        ++stats_.hits;
        set_poisoned(p, capacity, false);
        return p;
      }
      ++stats_.misses;
    }
    try {
      return os_allocate(capacity);  // outside the lock: it may call the OS
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      stats_.allocated_bytes -= capacity;
      throw;
    }
  }

  void free(void* p, size_t capacity) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stats_.allocated_bytes -= capacity;
      if (stats_.cached_bytes + capacity <= stats_.peak_allocated_bytes) {
        set_poisoned(p, capacity, true);
        free_[capacity].push_back(p);
        stats_.cached_bytes += capacity;
        return;
      }
    }
    std::free(p);
  }

  void empty_cache() {
    std::unordered_map<size_t, std::vector<void*>> released;
    {
      std::lock_guard<std::mutex> lock(mu_);
      released.swap(free_);
      stats_.cached_bytes = 0;
    }
    for (auto& [capacity, blocks] : released) {
      for (void* p : blocks) {
        set_poisoned(p, capacity, false);
        std::free(p);
      }
    }
  }

  CpuAllocatorStats stats() {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
  }

 private:
  void note_allocated(size_t capacity) {
    stats_.allocated_bytes += capacity;
    stats_.peak_allocated_bytes = std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
  }

  std::mutex mu_;
  std::unordered_map<size_t, std::vector<void*>> free_;  // size class -> free blocks
  CpuAllocatorStats stats_;
};

// Never destroyed: storages that outlive static destruction (globals of other
// translation units) still free into it.
CachingAllocator& allocator() {
  static auto* instance = new CachingAllocator();
  return *instance;
}

}  // namespace

CpuAllocatorStats cpu_allocator_stats() {
  return allocator().stats();
}

void empty_cpu_cache() {
  allocator().empty_cache();
}

namespace detail {

void* cpu_allocate(size_t nbytes, size_t* capacity) {
  // aligned_alloc needs a size that is a multiple of the alignment.
  const size_t rounded =
      (std::max<size_t>(nbytes, 1) + kCpuAlignment - 1) / kCpuAlignment * kCpuAlignment;
  if (rounded >= kMinCachedBytes) {
    *capacity = size_class(rounded);
    return allocator().allocate(*capacity);
  }
  *capacity = rounded;
  return os_allocate(rounded);
}

void cpu_free(void* data, size_t capacity) {
  if (capacity >= kMinCachedBytes) {
    allocator().free(data, capacity);
  } else {
    std::free(data);
  }
}

}  // namespace detail

}  // namespace stride
