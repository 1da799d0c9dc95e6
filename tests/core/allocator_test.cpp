// The caching CPU allocator (Note [Caching allocator]): reuse, size classes,
// alignment (2 MiB for huge-page blocks), the cap on cached bytes,
// empty_cpu_cache and thread safety; empty_packed's blocks.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <thread>
#include <vector>

#include "stride/allocator.h"
#include "stride/stride.h"

namespace stride {
namespace {

bool aligned(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % kCpuAlignment == 0;
}

TEST(CachingAllocator, AFreedLargeBufferServesTheNextRequestOfItsClass) {
  const void* first = nullptr;
  {
    Tensor t = empty({256, 1024});  // 1 MiB
    first = t.data_ptr();
  }
  const CpuAllocatorStats before = cpu_allocator_stats();
  EXPECT_GE(before.cached_bytes, size_t(1) << 20);
  Tensor again = empty({1024, 256});
  const CpuAllocatorStats after = cpu_allocator_stats();
  EXPECT_EQ(after.hits, before.hits + 1);
  EXPECT_EQ(after.misses, before.misses);
  EXPECT_EQ(again.data_ptr(), first);
  EXPECT_EQ(after.cached_bytes, before.cached_bytes - (size_t(1) << 20));
}

TEST(CachingAllocator, SizeClassesWasteAtMostAnEighth) {
  // Room in the cache (its cap is the peak of live bytes) for every block below.
  { Tensor big = empty({int64_t(8) << 20}); }
  empty_cpu_cache();
  for (size_t nbytes : {kMinCachedBytes, kMinCachedBytes + 1, size_t(100'000), size_t(1) << 20,
                        (size_t(1) << 20) + 4, size_t(3'000'001)}) {
    size_t capacity = 0;
    void* p = detail::cpu_allocate(nbytes, &capacity);
    EXPECT_TRUE(aligned(p)) << nbytes;
    EXPECT_GE(capacity, nbytes);
    EXPECT_LE(double(capacity), 1.125 * double(nbytes) + double(kCpuAlignment)) << nbytes;
    detail::cpu_free(p, capacity);
    // The same request finds the block just freed.
    const int64_t hits = cpu_allocator_stats().hits;
    size_t capacity2 = 0;
    void* q = detail::cpu_allocate(nbytes, &capacity2);
    EXPECT_EQ(capacity2, capacity);
    EXPECT_EQ(q, p);
    EXPECT_EQ(cpu_allocator_stats().hits, hits + 1);
    detail::cpu_free(q, capacity2);
  }
}

TEST(CachingAllocator, SmallBuffersBypassTheCacheAndStayAligned) {
  const CpuAllocatorStats before = cpu_allocator_stats();
  for (size_t nbytes : {size_t(0), size_t(1), size_t(63), size_t(65), kMinCachedBytes - 100}) {
    size_t capacity = 0;
    void* p = detail::cpu_allocate(nbytes, &capacity);
    EXPECT_TRUE(aligned(p)) << nbytes;
    EXPECT_LT(capacity, kMinCachedBytes);
    detail::cpu_free(p, capacity);
  }
  const CpuAllocatorStats after = cpu_allocator_stats();
  EXPECT_EQ(after.hits + after.misses, before.hits + before.misses);
  EXPECT_EQ(after.cached_bytes, before.cached_bytes);
}

TEST(CachingAllocator, CacheNeverExceedsThePeakOfLiveBytes) {
  // Many distinct classes, each freed once: a cache without a cap would keep
  // all of them.
  for (int64_t rows = 64; rows < 4096; rows += 37) {
    Tensor t = empty({rows, 1024});
    const CpuAllocatorStats s = cpu_allocator_stats();
    EXPECT_LE(s.cached_bytes, s.peak_allocated_bytes);
  }
  const CpuAllocatorStats s = cpu_allocator_stats();
  EXPECT_LE(s.cached_bytes, s.peak_allocated_bytes);
}

TEST(CachingAllocator, EmptyCacheReleasesEveryCachedBlock) {
  { Tensor t = empty({512, 1024}); }
  EXPECT_GT(cpu_allocator_stats().cached_bytes, size_t(0));
  Tensor live = ones({512, 1024});
  empty_cpu_cache();
  EXPECT_EQ(cpu_allocator_stats().cached_bytes, size_t(0));
  EXPECT_EQ(live.sum().item<float>(), 512.0f * 1024.0f);  // live blocks untouched
  const int64_t misses = cpu_allocator_stats().misses;
  Tensor fresh = empty({512, 1024});
  EXPECT_EQ(cpu_allocator_stats().misses, misses + 1);
}

TEST(CachingAllocator, ConcurrentAllocationAndFree) {
  const size_t before = cpu_allocator_stats().allocated_bytes;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < 200; ++i) {
        Tensor a = full({64 + (i + t) % 5, 1024}, float(t));
        Tensor b = empty({128, 1024});
        b.fill_(float(i));
        EXPECT_EQ(a.max().item<float>(), float(t));
        EXPECT_EQ(b.min().item<float>(), float(i));
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(cpu_allocator_stats().allocated_bytes, before);
}

// Note [Huge pages]: what stride controls is the alignment; whether the
// kernel backs the block with huge pages is its call.
TEST(CachingAllocator, BlocksOfTwoMiBOrMoreStartOnATwoMiBBoundary) {
  constexpr uintptr_t kTwoMiB = uintptr_t(2) << 20;
  for (int64_t floats : {int64_t(1) << 19, (int64_t(3) << 18) + 1, int64_t(5) << 20}) {
    Tensor t = empty({floats});
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data_ptr()) % kTwoMiB, 0u) << floats;
    t.fill_(1.0);  // all of it is usable
    EXPECT_EQ(t.sum().item<double>(), double(floats));
  }
}

TEST(EmptyPacked, TensorsFollowEachOtherInOneBlockWithStoragesOfTheirOwn) {
  const std::vector<DimVector> shapes = {{3, 5}, {0}, {1000}, {7}, {2, 1, 3}};
  std::vector<Tensor> t = empty_packed(shapes, kFloat64);
  ASSERT_EQ(t.size(), shapes.size());
  uintptr_t next = reinterpret_cast<uintptr_t>(t[0].data_ptr());
  for (size_t i = 0; i < t.size(); ++i) {
    EXPECT_EQ(t[i].sizes(), IntArrayRef(shapes[i])) << i;
    EXPECT_EQ(t[i].dtype(), kFloat64) << i;
    EXPECT_TRUE(t[i].is_contiguous()) << i;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t[i].data_ptr()), next) << i;
    next += (t[i].nbytes() + kCpuAlignment - 1) / kCpuAlignment * kCpuAlignment;
    for (size_t j = 0; j < i; ++j) EXPECT_NE(t[i].storage(), t[j].storage()) << i << " " << j;
  }
  // Writing one leaves the others' bytes and version counters alone.
  for (Tensor& x : t) x.fill_(2.0);
  const uint64_t before = t[3].version();
  t[2].fill_(-1.0);
  EXPECT_EQ(t[3].version(), before);
  EXPECT_TRUE(equal(t[3], full({7}, 2.0, kFloat64)));
  EXPECT_TRUE(equal(t[4], full({2, 1, 3}, 2.0, kFloat64)));
  // The block lives while any of them does (ASan builds check the reads).
  const Tensor last = t.back();
  t.clear();
  EXPECT_TRUE(equal(last, full({2, 1, 3}, 2.0, kFloat64)));
  EXPECT_TRUE(empty_packed({}, kFloat32).empty());
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;  // their shadow memory needs an unlimited address space
#else
constexpr bool kSanitized = false;
#endif

// The process's virtual size in bytes (/proc/self/statm counts pages).
size_t virtual_size() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0;
  statm >> pages;
  return pages * size_t(sysconf(_SC_PAGESIZE));
}

// Fills `held` with tensors of `numel` floats until allocation fails.
void allocate_until_exhausted(std::vector<Tensor>& held, int64_t numel) {
  try {
    while (held.size() < held.capacity()) held.push_back(empty({numel}));
  } catch (const std::exception&) {
    // memory is exhausted: what the test wants
  }
}

// Takes malloc's last crumbs, so that the next allocation of any size fails.
void take_crumbs(std::vector<void*>& crumbs) {
  while (crumbs.size() < crumbs.capacity()) {
    void* p = std::malloc(16);
    if (p == nullptr) return;
    crumbs.push_back(p);
  }
}

// The child of a fork caps its address space, fills it with cached blocks
// and then malloc's memory, and frees the cached blocks one at a time, each
// with nothing left to allocate: a free that allocated (a free list growing)
// would throw out of a destructor and abort the child. The freed blocks must
// then serve new requests.
int exhaust_then_free_everything() {
  set_num_threads(1);  // no OpenMP pool in a forked child
  empty_cpu_cache();   // room under the cache's cap for every block freed below
  // A size class no other test uses, so that its free list starts empty.
  constexpr int64_t kBigNumel = (int64_t(1) << 18) + 4099;
  std::vector<Tensor> big, small;
  std::vector<void*> crumbs;
  big.reserve(1 << 16);
  small.reserve(1 << 18);
  crumbs.reserve(1 << 22);
  const rlimit cap{virtual_size() + (size_t(256) << 20), RLIM_INFINITY};
  if (setrlimit(RLIMIT_AS, &cap) != 0) return 10;
  allocate_until_exhausted(big, kBigNumel);
  allocate_until_exhausted(small, 1 << 10);
  if (big.size() < 16) return 11;
  const size_t filled = big.size();
  while (!big.empty()) {
    take_crumbs(crumbs);
    big.pop_back();
  }
  for (void* p : crumbs) std::free(p);
  small.clear();
  allocate_until_exhausted(big, kBigNumel);
  return big.size() >= filled ? 0 : 12;
}

TEST(CachingAllocator, FreeingNeverAllocatesEvenWhenMemoryIsExhausted) {
  if (kSanitized) GTEST_SKIP() << "sanitizers cannot run under an address-space cap";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(exhaust_then_free_everything());
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace stride
