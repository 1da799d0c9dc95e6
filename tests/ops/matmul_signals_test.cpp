// Signals handled while products run: a program's handlers (stride train's
// Ctrl-C, Python's KeyboardInterrupt, a sampling profiler's timer) must not
// corrupt memory. oneDNN's AVX-512 float32 GEMM kernel points the stack
// pointer into a heap buffer while it runs, so a handler's frame pushed on
// that thread lands in the heap (Note [Signals and oneDNN's kernels] in
// src/backends/cpu/onednn_signals.h). Here a timer interrupts the process
// every 50 microseconds while it multiplies matrices on two threads: the
// heap must stay whole (glibc aborts on a corrupted chunk) and every
// product exact.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/time.h>

#include <atomic>
#include <vector>

#include "stride/ops.h"
#include "support/thread_count.h"

namespace stride {
namespace {

std::atomic<int> g_alarms{0};

extern "C" void count_alarm(int /*sig*/) {
  g_alarms.fetch_add(1, std::memory_order_relaxed);
}

// Arms a timer that raises SIGALRM every `interval_us`, with count_alarm
// as its handler, and restores both on destruction.
class AlarmEvery {
 public:
  explicit AlarmEvery(long interval_us) {
    struct sigaction action {};
    action.sa_handler = count_alarm;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &action, &previous_action_);
    const itimerval every{{0, interval_us}, {0, interval_us}};
    setitimer(ITIMER_REAL, &every, &previous_timer_);
  }
  ~AlarmEvery() {
    setitimer(ITIMER_REAL, &previous_timer_, nullptr);
    sigaction(SIGALRM, &previous_action_, nullptr);
  }
  AlarmEvery(const AlarmEvery&) = delete;
  AlarmEvery& operator=(const AlarmEvery&) = delete;

 private:
  struct sigaction previous_action_ {};
  itimerval previous_timer_{};
};

TEST(MatmulUnderSignals, HandlersLeaveTheHeapAndTheProductsWhole) {
  stride::testing::ThreadCount threads(2);
  Generator gen(7);
  // Large enough for oneDNN's GEMM (Note [GEMM backend choice]).
  const Tensor a = randn({256, 384}, {}, &gen), b = randn({384, 320}, {}, &gen);
  const Tensor want = matmul(a, b);
  g_alarms = 0;
  {
    AlarmEvery alarm(50);
    for (int i = 0; i < 1000; ++i) {
      const Tensor got = matmul(a, b);
      ASSERT_TRUE(equal(got, want)) << "product " << i;
      // Allocations between products, which a corrupted heap fails.
      std::vector<std::vector<float>> churn;
      for (int j = 1; j < 8; ++j) churn.emplace_back(size_t(j * 1000 + i), 1.0f);
    }
  }
  EXPECT_GT(g_alarms.load(), 0) << "the timer never fired";
}

}  // namespace
}  // namespace stride
