// The caching CPU allocator (Note [Caching allocator]): reuse, size classes,
// alignment, the cap on cached bytes, empty_cpu_cache and thread safety.
#include <gtest/gtest.h>

#include <cstdint>
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

}  // namespace
}  // namespace stride
