// parallel_for on stride's thread pool (Note [Thread pool]): chunks cover the
// range once, run on several threads, nest inline, carry exceptions back,
// and callers on other threads (a DataLoader's workers) run alongside.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "core/parallel_internal.h"
#include "stride/error.h"
#include "stride/parallel.h"
#include "support/thread_count.h"

namespace stride {
namespace {

using testing::ThreadCount;

// The chunks parallel_for hands out, in order of their start.
std::vector<std::pair<int64_t, int64_t>> chunks_of(int64_t begin, int64_t end, int64_t grain) {
  std::mutex mutex;
  std::vector<std::pair<int64_t, int64_t>> chunks;
  parallel_for(begin, end, grain, [&](int64_t b, int64_t e) {
    std::lock_guard<std::mutex> lock(mutex);
    chunks.emplace_back(b, e);
  });
  std::sort(chunks.begin(), chunks.end());
  return chunks;
}

TEST(ParallelFor, CoversTheRangeOnceInContiguousChunksOfAtLeastTheGrain) {
  for (int threads : {1, 2, 3, 8}) {
    ThreadCount guard(threads);
    for (auto [begin, end, grain] : {std::tuple<int64_t, int64_t, int64_t>{0, 1, 1},
                                     {0, 2, 1},
                                     {5, 6, 1},
                                     {-3, 97, 1},
                                     {0, 1000, 7},
                                     {10, 1010, 400},
                                     {0, 3, 0}}) {
      const auto chunks = chunks_of(begin, end, grain);
      ASSERT_FALSE(chunks.empty());
      EXPECT_EQ(chunks.front().first, begin);
      EXPECT_EQ(chunks.back().second, end);
      for (size_t i = 0; i < chunks.size(); ++i) {
        EXPECT_LT(chunks[i].first, chunks[i].second);
        if (i > 0) {
          EXPECT_EQ(chunks[i].first, chunks[i - 1].second);
        }
        if (i + 1 < chunks.size()) {
          EXPECT_GE(chunks[i].second - chunks[i].first, grain);
        }
      }
      EXPECT_LE(int64_t(chunks.size()), threads);
    }
  }
  EXPECT_TRUE(chunks_of(4, 4, 1).empty());
  EXPECT_TRUE(chunks_of(4, 2, 1).empty());
}

TEST(ParallelFor, SpreadsChunksOverThreadsAndMarksThemAsInsideARegion) {
  ThreadCount guard(3);
  EXPECT_FALSE(detail::in_parallel_region());
  std::mutex mutex;
  std::set<std::thread::id> ids;
  std::atomic<int> inside{0};
  for (int job = 0; job < 50; ++job) {
    parallel_for(0, 3, 1, [&](int64_t, int64_t) {
      inside += detail::in_parallel_region() ? 1 : 0;
      std::lock_guard<std::mutex> lock(mutex);
      ids.insert(std::this_thread::get_id());
    });
  }
  EXPECT_EQ(ids.size(), 3u);
  EXPECT_EQ(inside.load(), 150);
  EXPECT_FALSE(detail::in_parallel_region());
}

TEST(ParallelFor, RunsANestedLoopInlineOnItsThread) {
  ThreadCount guard(2);
  std::vector<int> hits(64, 0);
  parallel_for(0, 8, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const std::thread::id outer = std::this_thread::get_id();
      parallel_for(0, 8, 1, [&](int64_t ib, int64_t ie) {
        EXPECT_EQ(std::this_thread::get_id(), outer);
        EXPECT_EQ(ib, 0);
        EXPECT_EQ(ie, 8);
        for (int64_t j = ib; j < ie; ++j) ++hits[size_t(i * 8 + j)];
      });
    }
  });
  EXPECT_EQ(std::count(hits.begin(), hits.end(), 1), 64);
}

TEST(ParallelFor, RethrowsAChunksExceptionAfterEveryChunkEnded) {
  ThreadCount guard(4);
  for (int64_t failing : {0, 1, 3}) {
    std::atomic<int> ended{0};
    try {
      parallel_for(0, 4, 1, [&](int64_t b, int64_t) {
        if (b == failing) throw ValueError("chunk " + std::to_string(b));
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        ++ended;
      });
      ADD_FAILURE() << "no exception";
    } catch (const ValueError& e) {
      EXPECT_EQ(std::string(e.what()), "chunk " + std::to_string(failing));
    }
    EXPECT_EQ(ended.load(), 3);
  }
  // The pool still works.
  EXPECT_EQ(chunks_of(0, 4, 1).size(), 4u);
}

TEST(ParallelFor, CallersOnSeveralThreadsEachGetTheirWholeRange) {
  ThreadCount guard(2);
  constexpr int kCallers = 4, kJobs = 200;
  std::vector<int64_t> sums(kCallers, 0);
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&sums, c] {
      for (int job = 0; job < kJobs; ++job) {
        std::atomic<int64_t> sum{0};
        parallel_for(0, 100, 1, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) sum += i;
        });
        sums[size_t(c)] += sum.load();
      }
    });
  }
  for (std::thread& t : callers) t.join();
  for (int64_t s : sums) EXPECT_EQ(s, int64_t(kJobs) * 4950);
}

TEST(ParallelFor, ThreadCountCanChangeBetweenLoops) {
  for (int threads : {4, 1, 2, 4, 3}) {
    ThreadCount guard(threads);
    EXPECT_EQ(get_num_threads(), threads);
    EXPECT_EQ(int64_t(chunks_of(0, 12, 1).size()), threads);
  }
  EXPECT_THROW(set_num_threads(0), ValueError);
  EXPECT_THROW(set_num_threads(1 << 16), ValueError);
}

}  // namespace
}  // namespace stride
