// parallel_for on stride's thread pool (Note [Thread pool]): chunks cover the
// range once, run on several threads, nest inline, carry exceptions back,
// and callers on other threads (a DataLoader's workers) run alongside; a
// thread that is held up holds back only the piece it runs (Note [Dynamic
// pieces]).
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
      EXPECT_LE(int64_t(chunks.size()), threads * detail::kPiecesPerThread);
    }
  }
  EXPECT_TRUE(chunks_of(4, 4, 1).empty());
  EXPECT_TRUE(chunks_of(4, 2, 1).empty());
}

// For a test that must see every thread of the pool at work: no holds
// (Note [A taken core]) while it runs, though other processes (CTest's) take
// the cores.
struct EveryThread {
  EveryThread() { detail::set_hold_back_threads(false); }
  ~EveryThread() { detail::set_hold_back_threads(true); }
  EveryThread(const EveryThread&) = delete;
  EveryThread& operator=(const EveryThread&) = delete;
};

// The threads that run the chunks of jobs of `pieces` pieces, each piece
// long enough (1 ms) for every worker to wake and claim its own: jobs until
// `threads` threads have run some, or for 10 s (a worker the OS does not run
// in time finds its pieces taken by the others).
std::set<std::thread::id> threads_running(int64_t pieces, size_t threads) {
  EveryThread every_thread;
  std::mutex mutex;
  std::set<std::thread::id> ids;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (ids.size() < threads && std::chrono::steady_clock::now() < deadline) {
    parallel_for(0, pieces, 1, [&](int64_t, int64_t) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      std::lock_guard<std::mutex> lock(mutex);
      ids.insert(std::this_thread::get_id());
    });
  }
  return ids;
}

TEST(ParallelFor, SpreadsChunksOverThreadsAndMarksThemAsInsideARegion) {
  ThreadCount guard(3);
  EXPECT_FALSE(detail::in_parallel_region());
  EXPECT_EQ(threads_running(3, 3).size(), 3u);
  // A job run in pieces runs each inside the region; one run as a single
  // call (Note [A taken core]) is the caller's own loop, as on one thread.
  for (int job = 0; job < 50; ++job) {
    std::atomic<int> inside{0}, chunks{0};
    parallel_for(0, 3, 1, [&](int64_t, int64_t) {
      inside += detail::in_parallel_region() ? 1 : 0;
      ++chunks;
    });
    EXPECT_EQ(inside.load(), chunks.load() > 1 ? chunks.load() : 0);
  }
  EXPECT_FALSE(detail::in_parallel_region());
}

// A thread held up in its first piece (descheduled, in the OS's terms) until
// every other piece has run: the pieces of its share are run by the others,
// so the job ends. With one static chunk per thread it would wait forever.
TEST(ParallelFor, ThreadsRunThePiecesOfAThreadThatIsHeldUp) {
  ThreadCount guard(2);
  const int64_t pieces = 2 * detail::kPiecesPerThread;
  const std::thread::id caller = std::this_thread::get_id();
  for (int job = 0; job < 20; ++job) {
    std::atomic<int64_t> run_by_caller{0}, ran{0};
    std::atomic<bool> timed_out{false};
    parallel_for(0, pieces, 1, [&](int64_t b, int64_t e) {
      if (std::this_thread::get_id() == caller) {
        run_by_caller += e - b;
      } else {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (ran.load() < pieces - (e - b) && !timed_out) {
          timed_out = std::chrono::steady_clock::now() > deadline;
          std::this_thread::yield();
        }
      }
      ran += e - b;
    });
    EXPECT_FALSE(timed_out.load());
    EXPECT_GE(run_by_caller.load(), pieces - 1);
    EXPECT_EQ(ran.load(), pieces);
  }
}

// With every core taken by a spinning thread, the OS takes the pool
// threads' cores from them, and the pool soon runs jobs on one thread
// fewer: with two, a job is one call on the caller's thread.
TEST(ParallelFor, RunsOnFewerThreadsWhileTheCoresAreTaken) {
  ThreadCount guard(2);
  std::atomic<bool> stop{false};
  std::vector<std::thread> spinners;
  for (unsigned i = 0; i < std::max(2u, std::thread::hardware_concurrency()); ++i) {
    spinners.emplace_back([&stop] {
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  }
  bool whole_range_in_one_call = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!whole_range_in_one_call && std::chrono::steady_clock::now() < deadline) {
    std::atomic<int> calls{0};
    parallel_for(0, 64, 1, [&](int64_t b, int64_t e) {
      ++calls;
      volatile int64_t sink = 0;
      for (int64_t i = 0; i < (e - b) * 20000; ++i) sink = sink + i;
    });
    whole_range_in_one_call = calls.load() == 1;
  }
  stop = true;
  for (std::thread& t : spinners) t.join();
  EXPECT_TRUE(whole_range_in_one_call);
  // The hold ends and, the cores idle again, the threads come back.
  const auto hold_ends = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  bool pieces_again = false;
  while (!pieces_again && std::chrono::steady_clock::now() < hold_ends) {
    std::atomic<int> calls{0};
    parallel_for(0, 64, 1, [&](int64_t, int64_t) { ++calls; });
    pieces_again = calls.load() > 1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(pieces_again);
}

// Short jobs one after another, of changing sizes: a worker that wakes late
// for one job claims nothing of the next, so every piece runs exactly once.
TEST(ParallelFor, EveryPieceOfManyShortJobsRunsOnce) {
  ThreadCount guard(3);
  std::vector<std::atomic<int>> hits(64);
  for (int job = 0; job < 3000; ++job) {
    const int64_t n = 2 + job % 63;
    parallel_for(0, n, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) ++hits[size_t(i)];
    });
    for (int64_t i = 0; i < 64; ++i) {
      ASSERT_EQ(hits[size_t(i)].exchange(0), i < n ? 1 : 0) << "job " << job << ", index " << i;
    }
  }
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

// Every chunk has ended when the exception reaches the caller: none is
// still running, and every index but the failing one ran where its chunk
// ran on (a job may run as one chunk: Note [A taken core]).
TEST(ParallelFor, RethrowsAChunksExceptionAfterEveryChunkEnded) {
  ThreadCount guard(4);
  for (int64_t failing : {0, 1, 3}) {
    std::atomic<int> running{0}, ended{0}, calls{0};
    try {
      parallel_for(0, 4, 1, [&](int64_t b, int64_t e) {
        ++running;
        ++calls;
        for (int64_t i = b; i < e; ++i) {
          if (i == failing) {
            --running;
            throw ValueError("index " + std::to_string(i));
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
          ++ended;
        }
        --running;
      });
      ADD_FAILURE() << "no exception";
    } catch (const ValueError& e) {
      EXPECT_EQ(std::string(e.what()), "index " + std::to_string(failing));
    }
    EXPECT_EQ(running.load(), 0);
    if (calls.load() == 4) {
      EXPECT_EQ(ended.load(), 3);
    }
  }
  // The pool still works.
  const auto chunks = chunks_of(0, 4, 1);
  ASSERT_FALSE(chunks.empty());
  EXPECT_EQ(chunks.front().first, 0);
  EXPECT_EQ(chunks.back().second, 4);
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
    EXPECT_EQ(threads_running(threads * detail::kPiecesPerThread, size_t(threads)).size(),
              size_t(threads));
  }
  EXPECT_THROW(set_num_threads(0), ValueError);
  EXPECT_THROW(set_num_threads(1 << 16), ValueError);
}

}  // namespace
}  // namespace stride
