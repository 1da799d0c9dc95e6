#include "stride/allocator.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <new>
#include <optional>
#include <string>

#include "stride/storage.h"

#if defined(__linux__)
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
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

// The index of size class `capacity` (a value of size_class): with k =
// bit_width(capacity - 1) and step 2^k / 16, capacity is 2^(k-1) + m * step
// for m in [1, 8].
constexpr size_t kNumSizeClasses = 65 * 8;
size_t class_index(size_t capacity) {
  const int k = std::bit_width(capacity - 1);
  const size_t step = (size_t(1) << k) / 16;
  return size_t(k) * 8 + capacity / step - 9;
}
// The capacity of size class `index` (class_index's inverse).
size_t class_capacity(size_t index) {
  const size_t k = index / 8, m = index % 8 + 1;
  return (size_t(1) << (k - 1)) + m * ((size_t(1) << k) / 16);
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

// Free blocks of each size class, linked through their own first bytes:
// freeing never allocates, so it cannot fail when memory is exhausted (a
// free that threw would escape a destructor and end the process).
class CachingAllocator {
 public:
  void* allocate(size_t capacity) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      note_allocated(capacity);
      if (void* p = pop(capacity)) {
        stats_.cached_bytes -= capacity;
        ++stats_.hits;
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

  void free(void* p, size_t capacity) noexcept {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stats_.allocated_bytes -= capacity;
      if (stats_.cached_bytes + capacity <= stats_.peak_allocated_bytes) {
        push(p, capacity);
        stats_.cached_bytes += capacity;
        return;
      }
    }
    std::free(p);
  }

  void empty_cache() {
    std::array<void*, kNumSizeClasses> released;
    {
      std::lock_guard<std::mutex> lock(mu_);
      released = heads_;
      heads_.fill(nullptr);
      stats_.cached_bytes = 0;
    }
    for (size_t index = 0; index < released.size(); ++index) {
      for (void* p = released[index]; p != nullptr;) {
        void* next = load_next(p);
        set_poisoned(p, class_capacity(index), false);
        std::free(p);
        p = next;
      }
    }
  }

  CpuAllocatorStats stats() {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
  }

 private:
  static void* load_next(void* block) {
    void* next;
    std::memcpy(&next, block, sizeof(next));
    return next;
  }

  // Under ASan the block is poisoned but for its link: LeakSanitizer does
  // not read pointers in poisoned memory, and would report every cached
  // block after the first as leaked.
  void push(void* p, size_t capacity) {
    void*& head = heads_[class_index(capacity)];
    std::memcpy(p, &head, sizeof(head));
    head = p;
    set_poisoned(static_cast<char*>(p) + sizeof(void*), capacity - sizeof(void*), true);
  }

  void* pop(size_t capacity) {
    void*& head = heads_[class_index(capacity)];
    void* p = head;
    if (p == nullptr) return nullptr;
    set_poisoned(p, capacity, false);
    head = load_next(p);
    return p;
  }

  void note_allocated(size_t capacity) {
    stats_.allocated_bytes += capacity;
    stats_.peak_allocated_bytes = std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
  }

  std::mutex mu_;
  std::array<void*, kNumSizeClasses> heads_{};  // size class -> first free block
  CpuAllocatorStats stats_;
};

// Never destroyed: storages that outlive static destruction (globals of other
// translation units) still free into it.
CachingAllocator& allocator() {
  static auto* instance = new CachingAllocator();
  return *instance;
}

// The first number of the file at `path` (times `unit`) after the word
// `key` (the whole file when key is empty), or nullopt.
std::optional<size_t> read_number(const char* path, const std::string& key, size_t unit) {
  std::ifstream in(path);
  std::string word;
  if (!key.empty()) {
    while (in >> word && word != key) {
    }
  }
  size_t value = 0;
  if (!(in >> value)) return std::nullopt;
  return value * unit;
}

}  // namespace

size_t available_cpu_memory() {
  size_t available = SIZE_MAX;
#if defined(__linux__)
  auto limit = [&](std::optional<size_t> room) {
    if (room) available = std::min(available, *room);
  };
  limit(read_number("/proc/meminfo", "MemAvailable:", 1024));
  const auto cgroup_max = read_number("/sys/fs/cgroup/memory.max", "", 1);  // "max": none
  const auto cgroup_used = read_number("/sys/fs/cgroup/memory.current", "", 1);
  if (cgroup_max && cgroup_used) limit(*cgroup_max > *cgroup_used ? *cgroup_max - *cgroup_used : 0);
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    const auto used = read_number("/proc/self/statm", "", size_t(sysconf(_SC_PAGESIZE)));
    if (used) limit(as.rlim_cur > *used ? as.rlim_cur - *used : 0);
  }
#endif
  const size_t cached = cpu_allocator_stats().cached_bytes;
  return available > SIZE_MAX - cached ? SIZE_MAX : available + cached;
}

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

void cpu_free(void* data, size_t capacity) noexcept {
  if (capacity >= kMinCachedBytes) {
    allocator().free(data, capacity);
  } else {
    std::free(data);
  }
}

}  // namespace detail

}  // namespace stride
