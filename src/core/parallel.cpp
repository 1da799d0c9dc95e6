#include "stride/parallel.h"

#include <omp.h>
#include <strings.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "core/check.h"
#include "core/parallel_internal.h"

// Note [Thread pool]
// parallel_for runs on stride's own pool: the calling thread takes the first
// chunk and one worker per further chunk takes the others. A parallel region
// of libgomp costs a team hand-off and two barriers, each a round trip of
// cache lines between the cores, and decoding a token of the large Llama
// opens ~50 of them. Here a job is one cache line that the workers watch and
// one counter that the caller watches, a fraction of libgomp's cost.
//
// Waiting threads spin for a while, then sleep on a condition variable, as
// libgomp's do; the spin honours OMP_WAIT_POLICY (passive: sleep at once,
// active: spin long) so that the settings users know keep working. One job
// runs at a time: a parallel_for from inside a chunk, or from another thread
// while the pool is busy (a DataLoader worker), runs inline on its thread.
// Results never depend on that, since chunking is for speed only (kernels
// that reduce choose fixed pieces, docs/design.md invariant 9).
//
// oneDNN and OpenBLAS run single-threaded inside chunks (Note [Deterministic
// GEMM]): workers set their OpenMP thread count to 1 once, so a library call
// on a worker never opens an OpenMP team of its own, and the process has one
// pool of threads as docs/design.md asks.

namespace stride {
namespace {

// A job's chunk count fits the low bits of its ticket (ThreadPool).
constexpr int kMaxThreads = 1 << 16;

// $STRIDE_NUM_THREADS, else $OMP_NUM_THREADS (as every OpenMP program
// honours it; its first entry when it lists one per nesting level), else the
// cores. A value that is not a positive count is ignored.
int initial_threads() {
  for (const char* name : {"STRIDE_NUM_THREADS", "OMP_NUM_THREADS"}) {
    if (const char* env = std::getenv(name)) {
      const int n = std::atoi(env);
      if (n > 0) return std::min(n, kMaxThreads - 1);
    }
  }
  return std::max(1, int(std::thread::hardware_concurrency()));
}

int& num_threads_ref() {
  static int n = [] {
    int v = initial_threads();
    omp_set_num_threads(v);
    return v;
  }();
  return n;
}

// How long a waiting thread spins before it sleeps.
std::chrono::nanoseconds spin_budget() {
  const char* env = std::getenv("OMP_WAIT_POLICY");
  if (env != nullptr && strcasecmp(env, "passive") == 0) return std::chrono::nanoseconds(0);
  if (env != nullptr && strcasecmp(env, "active") == 0) return std::chrono::seconds(1);
  // Longer than the gaps between the parallel ops of a step or a token,
  // short enough that an idle process soon stops using the cores.
  return std::chrono::microseconds(200);
}

// The spin-wait hint: x86's pause; on Arm, yield (a hint to the core's
// other hardware threads, where it has any, that costs a cycle or so).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__) || defined(__arm__)
  __asm__ __volatile__("yield" ::: "memory");
#endif
}

// Spins until ready() or the budget is spent; whether ready() held.
template <class Ready>
bool spin_until(Ready ready, std::chrono::nanoseconds budget) {
  if (ready()) return true;
  if (budget.count() == 0) return false;
  const auto deadline = std::chrono::steady_clock::now() + budget;
  for (int i = 1;; ++i) {
    cpu_relax();
    if (ready()) return true;
    if (i % 256 == 0 && std::chrono::steady_clock::now() > deadline) return false;
  }
}

thread_local bool in_pool_job = false;

class ThreadPool {
 public:
  // The process-wide pool; never destroyed, so that parallel_for stays
  // usable from other static destructors.
  static ThreadPool& instance() {
    static ThreadPool* pool = new ThreadPool();
    return *pool;
  }

  // Runs fn(begin + i * chunk, ...) for the `tasks` chunks of [begin, end),
  // chunk 0 on the calling thread. false (nothing run) when another job holds
  // the pool.
  bool run(int tasks,
           int64_t begin,
           int64_t end,
           int64_t chunk,
           FunctionRef<void(int64_t, int64_t)> fn) {
    std::unique_lock<std::mutex> job_lock(job_mutex_, std::try_to_lock);
    if (!job_lock.owns_lock()) return false;
    ensure_workers(tasks - 1);
    job_ = Job{&fn, begin, end, chunk};
    error_ = nullptr;
    pending_.store(tasks - 1);
    publish(tasks);

    in_pool_job = true;
    run_chunk(0);
    in_pool_job = false;

    wait_for([this] { return pending_.load() == 0; }, caller_sleepers_, done_cv_);
    if (error_) std::rethrow_exception(error_);
    return true;
  }

  // Ends the workers; the next job starts as many as it needs.
  void release_workers() {
    std::lock_guard<std::mutex> job_lock(job_mutex_);
    stop_workers();
  }

 private:
  struct Job {
    const FunctionRef<void(int64_t, int64_t)>* fn = nullptr;
    int64_t begin = 0, end = 0, chunk = 0;
  };

  // A job's ticket: its number above, its chunk count in the low 16 bits
  // (0: the workers are to stop). A worker reads job_ only when the ticket
  // gives it a chunk, and the caller rewrites job_ only once every chunk has
  // ended, so a worker that sleeps through jobs never reads a half-written
  // one.
  static constexpr int kTaskBits = 16;
  static_assert(kMaxThreads <= 1 << kTaskBits);
  static int tasks_of(uint64_t ticket) { return int(ticket & ((1u << kTaskBits) - 1)); }

  void publish(int tasks) {
    const uint64_t number = (ticket_.load() >> kTaskBits) + 1;
    ticket_.store(number << kTaskBits | uint64_t(tasks));  // seq_cst: publishes job_
    wake(worker_sleepers_, work_cv_);
  }

  ThreadPool() : spin_(spin_budget()) {}

  void run_chunk(int index) {
    const int64_t b = job_.begin + int64_t(index) * job_.chunk;
    const int64_t e = std::min(job_.end, b + job_.chunk);
    if (b >= e) return;
    try {
      (*job_.fn)(b, e);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex_);
      if (!error_) error_ = std::current_exception();
    }
  }

  void worker_main(int index, uint64_t seen) {
    // Library calls on a worker run on it alone (Note [Thread pool]).
    omp_set_num_threads(1);
    in_pool_job = true;
    for (;;) {
      wait_for([&] { return ticket_.load() != seen; }, worker_sleepers_, work_cv_);
      seen = ticket_.load();
      const int tasks = tasks_of(seen);
      if (tasks == 0) return;
      if (index + 1 < tasks) {
        run_chunk(index + 1);
        pending_.fetch_sub(1);
        wake(caller_sleepers_, done_cv_);
      }
    }
  }

  // Spins, then sleeps on cv until ready(). The sleeper count is raised
  // before ready() is checked under the mutex, and the waker changes the
  // state before it reads the count (both sequentially consistent), so one
  // of them sees the other: no wake-up is lost.
  template <class Ready>
  void wait_for(Ready ready, std::atomic<int>& sleepers, std::condition_variable& cv) {
    if (spin_until(ready, spin_)) return;
    std::unique_lock<std::mutex> lock(sleep_mutex_);
    sleepers.fetch_add(1);
    cv.wait(lock, ready);
    sleepers.fetch_sub(1);
  }

  void wake(std::atomic<int>& sleepers, std::condition_variable& cv) {
    if (sleepers.load() == 0) return;
    { std::lock_guard<std::mutex> lock(sleep_mutex_); }
    cv.notify_all();
  }

  void ensure_workers(int count) {
    if (int(workers_.size()) >= count) return;
    stop_workers();
    const uint64_t seen = ticket_.load();
    for (int i = 0; i < count; ++i) {
      workers_.emplace_back([this, i, seen] { worker_main(i, seen); });
    }
  }

  void stop_workers() {
    if (workers_.empty()) return;
    publish(0);
    for (std::thread& w : workers_) w.join();
    workers_.clear();
  }

  const std::chrono::nanoseconds spin_;
  std::mutex job_mutex_;    // one job at a time
  std::mutex sleep_mutex_;  // for the condition variables
  std::condition_variable work_cv_, done_cv_;
  std::atomic<int> worker_sleepers_{0}, caller_sleepers_{0};
  alignas(64) std::atomic<uint64_t> ticket_{0};
  alignas(64) std::atomic<int> pending_{0};
  alignas(64) Job job_;
  std::mutex error_mutex_;
  std::exception_ptr error_;
  std::vector<std::thread> workers_;
};

}  // namespace

namespace detail {

bool in_parallel_region() {
  return in_pool_job;
}

}  // namespace detail

int get_num_threads() {
  return num_threads_ref();
}

void set_num_threads(int n) {
  STRIDE_CHECK(n > 0 && n < kMaxThreads, ValueError, "[set_num_threads] expected a count in [1, ",
               kMaxThreads, "); got ", n, ".");
  num_threads_ref() = n;
  omp_set_num_threads(n);
  if (!in_pool_job) ThreadPool::instance().release_workers();
}

void parallel_for(int64_t begin,
                  int64_t end,
                  int64_t grain,
                  FunctionRef<void(int64_t, int64_t)> fn) {
  if (begin >= end) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t n = end - begin;
  const int64_t max_chunks = (n + grain - 1) / grain;
  const int64_t threads = std::min<int64_t>(get_num_threads(), max_chunks);
  // One contiguous chunk per thread, none shorter than the grain but the
  // last; an exception in any chunk is rethrown on the calling thread once
  // every chunk has ended.
  const int64_t chunk = std::max(grain, (n + threads - 1) / threads);
  const int tasks = int((n + chunk - 1) / chunk);
  if (tasks > 1 && !in_pool_job && ThreadPool::instance().run(tasks, begin, end, chunk, fn)) {
    return;
  }
  fn(begin, end);
}

}  // namespace stride
