#include "stride/parallel.h"

#include <omp.h>
#include <strings.h>
#include <sys/resource.h>

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
// parallel_for runs on stride's own pool: the calling thread and the
// workers share the job's pieces (Note [Dynamic pieces]). A parallel region
// of libgomp costs a team hand-off and two barriers, each a round trip of
// cache lines between the cores, and decoding a token of the large Llama
// opens ~50 of them. Here a job is one cache line that the workers watch,
// one per thread that holds its pieces, and one counter that the caller
// watches, a fraction of libgomp's cost.
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

// Note [Dynamic pieces]
// A job is cut into detail::kPiecesPerThread pieces per thread, and each
// thread owns a contiguous share of them, in order: on idle cores every
// thread runs its own share front to back, as one static chunk per thread
// would (the same rows on the same core from op to op, for its caches). A thread whose share
// is done takes the pieces still unclaimed in the others', from their backs.
// So a thread that the OS has descheduled -- a core taken by another
// process, a worker still waking -- holds up the job by at most the piece it
// is running, not by a whole share: with static chunks one busy core made a
// 2-thread step twice as slow as a 1-thread one.
//
// Pieces are not all of it when a core is shared with another process
// (Note [A taken core]).
//
// A share is one word: the job's number, the next piece and the end of the
// share. A claim is a compare-and-swap of that word, so a thread still
// looking at an earlier job (it woke late) claims nothing of a later one,
// and job_ is read only after a claim, while the job cannot end.

// Note [A taken core]
// Pieces do not help when the core of the calling thread is shared with
// another process: no job starts while the caller is descheduled, and a
// worker spinning for the next job keeps the free core looking busy to the
// OS. So every pool thread counts, about once a millisecond, the times the
// OS took its core from it while it could run (involuntary context
// switches), and the caller sums them over windows of kWindow. On idle
// cores a window has next to none (the kernel's own threads: ~50 a second
// on a 2-vCPU VM); beside a process that spins on a core, one every time
// slice (~700 a second). At kTakenSwitches in a window, the pool runs jobs
// on one thread fewer for a while (the hold), so that the OS can keep the
// remaining threads on the free cores; with two threads, the caller alone.
// When the hold ends the next jobs run on every thread again, a probe: taken
// again soon after, the core is still busy and the hold grows fourfold (up
// to kMaxHold: a probe runs contended for a window or two, ~2% of a second,
// where 256 ms cost the article's step several percent); taken only long
// after, it was a passing load and the hold starts again from kMinHold. So
// a core freed again is used again within a second. Measured by
// `bench/compare_pytorch --contention`.

namespace stride {
namespace {

using Clock = std::chrono::steady_clock;
constexpr Clock::duration kMinHold = std::chrono::milliseconds(16);
constexpr Clock::duration kMaxHold = std::chrono::seconds(1);
constexpr Clock::duration kCountEvery = std::chrono::milliseconds(1);
constexpr Clock::duration kWindow = std::chrono::milliseconds(10);
constexpr int64_t kTakenSwitches = 4;

// The calling thread's involuntary context switches (Note [A taken core]);
// 0 where the OS does not count them per thread.
int64_t involuntary_switches() {
#if defined(RUSAGE_THREAD)
  rusage usage{};
  if (getrusage(RUSAGE_THREAD, &usage) == 0) return usage.ru_nivcsw;
#endif
  return 0;
}

// Adds the calling thread's involuntary switches since its last count to
// `total`, at most once per kCountEvery (a system call each).
void count_switches(Clock::time_point now, std::atomic<int64_t>& total) {
  thread_local Clock::time_point counted;
  thread_local int64_t switches = involuntary_switches();
  if (now - counted < kCountEvery) return;
  counted = now;
  const int64_t seen = involuntary_switches();
  if (seen != switches) total.fetch_add(seen - switches, std::memory_order_relaxed);
  switches = seen;
}

// A job's thread count fits the low bits of its ticket, and its piece
// indices the fields of a share word (ThreadPool).
constexpr int kMaxThreads = 1 << 16;
constexpr int64_t kMaxPieces = (1 << 16) - 1;
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

  // Runs fn over the `pieces` pieces of [begin, end), each `piece` long but
  // the last, on `threads` threads: the calling thread and threads - 1
  // workers. false (nothing run) when another job holds the pool.
  bool run(int threads,
           int64_t begin,
           int64_t end,
           int64_t piece,
           int64_t pieces,
           FunctionRef<void(int64_t, int64_t)> fn) {
    std::unique_lock<std::mutex> job_lock(job_mutex_, std::try_to_lock);
    if (!job_lock.owns_lock()) return false;
    const Clock::time_point start = Clock::now();
    threads = std::min(threads, threads_allowed(start));
    if (threads < 2) return false;
    ensure_workers(threads - 1);
    job_ = Job{&fn, begin, end, piece};
    error_ = nullptr;
    pending_.store(int(pieces));
    const uint64_t number = (ticket_.load() >> kTaskBits) + 1;
    for (int t = 0; t < threads; ++t) {
      shares_[size_t(t)].word.store(
          share_word(uint32_t(number), pieces * t / threads, pieces * (t + 1) / threads),
          std::memory_order_relaxed);
    }
    publish(number, threads);  // seq_cst: publishes job_ and the shares

    in_pool_job = true;
    work(0, uint32_t(number), threads);
    in_pool_job = false;

    wait_for([this] { return pending_.load() == 0; }, caller_sleepers_, done_cv_);
    const Clock::time_point done = Clock::now();
    count_switches(done, switches_);
    if (hold_back_ && done - window_start_ >= kWindow) {
      const int64_t switches = switches_.load(std::memory_order_relaxed);
      if (switches - window_switches_ >= kTakenSwitches) hold_back_a_thread(threads, done);
      start_window(done);
    }
    if (error_) std::rethrow_exception(error_);
    return true;
  }

  // Note [A taken core] on or off; off ends any hold.
  void set_hold_back(bool enabled) {
    std::lock_guard<std::mutex> job_lock(job_mutex_);
    hold_back_ = enabled;
    allowed_ = kMaxThreads;
    held_until_ = Clock::time_point();
    hold_ = kMinHold;
  }

  // Ends the workers; the next job starts as many as it needs.
  void release_workers() {
    std::lock_guard<std::mutex> job_lock(job_mutex_);
    stop_workers();
  }

 private:
  struct Job {
    const FunctionRef<void(int64_t, int64_t)>* fn = nullptr;
    int64_t begin = 0, end = 0, piece = 0;
  };

  // One thread's pieces of a job (Note [Dynamic pieces]): the job's number
  // in the high 32 bits, then the next piece and the share's end, 16 bits
  // each. On a cache line of its own: its owner claims from it at every
  // piece.
  struct alignas(64) Share {
    std::atomic<uint64_t> word{0};
  };
  static uint64_t share_word(uint32_t number, int64_t next, int64_t end) {
    return uint64_t(number) << 32 | uint64_t(next) << 16 | uint64_t(end);
  }

  // A job's ticket: its number above, its thread count in the low 16 bits
  // (0: the workers are to stop).
  static constexpr int kTaskBits = 16;
  static_assert(kMaxThreads <= 1 << kTaskBits);
  static int tasks_of(uint64_t ticket) { return int(ticket & ((1u << kTaskBits) - 1)); }

  void publish(uint64_t number, int threads) {
    ticket_.store(number << kTaskBits | uint64_t(threads));
    wake(worker_sleepers_, work_cv_);
  }

  ThreadPool() : spin_(spin_budget()) {}

  // The threads a job may use now (Note [A taken core]).
  int threads_allowed(Clock::time_point now) {
    if (allowed_ < kMaxThreads && now >= held_until_) {
      // A probe; the switches of the hold are not its.
      allowed_ = kMaxThreads;
      count_switches(now, switches_);
      start_window(now);
    }
    return allowed_;
  }

  void start_window(Clock::time_point now) {
    window_start_ = now;
    window_switches_ = switches_.load(std::memory_order_relaxed);
  }

  // After a job during which the OS took a pool thread's core: one thread
  // fewer, held for a time that grows while the probes find the core still
  // taken.
  void hold_back_a_thread(int used, Clock::time_point now) {
    const bool still_taken = now - held_until_ <= hold_ + 2 * kWindow;
    hold_ = still_taken ? std::min(4 * hold_, kMaxHold) : kMinHold;
    allowed_ = used - 1;
    held_until_ = now + hold_;
  }

  // A piece of share `s` of job `number`, claimed from the front (by the
  // share's owner) or from the back (by a thread whose own share is done);
  // -1 when the share has none left or the job is another.
  int64_t claim(int s, uint32_t number, bool front) {
    std::atomic<uint64_t>& word = shares_[size_t(s)].word;
    uint64_t seen = word.load(std::memory_order_acquire);
    for (;;) {
      if (uint32_t(seen >> 32) != number) return -1;
      const int64_t next = int64_t(seen >> 16 & 0xffff), end = int64_t(seen & 0xffff);
      if (next >= end) return -1;
      const uint64_t taken = front ? seen + (uint64_t(1) << 16) : seen - 1;
      if (word.compare_exchange_weak(seen, taken, std::memory_order_acq_rel,
                                     std::memory_order_acquire)) {
        return front ? next : end - 1;
      }
    }
  }

  // Runs pieces of job `number` until every share is empty: thread `self`'s
  // own from the front, then the others' from the back.
  void work(int self, uint32_t number, int threads) {
    for (int64_t p; (p = claim(self, number, true)) >= 0;) run_piece(p);
    for (int d = 1; d < threads; ++d) {
      const int other = (self + d) % threads;
      for (int64_t p; (p = claim(other, number, false)) >= 0;) run_piece(p);
    }
  }

  void run_piece(int64_t index) {
    const int64_t b = job_.begin + index * job_.piece;
    const int64_t e = std::min(job_.end, b + job_.piece);
    try {
      (*job_.fn)(b, e);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex_);
      if (!error_) error_ = std::current_exception();
    }
    if (pending_.fetch_sub(1) == 1) wake(caller_sleepers_, done_cv_);
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
        work(index + 1, uint32_t(seen >> kTaskBits), tasks);
        count_switches(Clock::now(), switches_);
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

  // Starts `count` workers, with a share for each and the caller. Only with
  // no worker running: the shares move.
  void ensure_workers(int count) {
    if (int(workers_.size()) >= count) return;
    stop_workers();
    shares_ = std::make_unique<Share[]>(size_t(count) + 1);
    const uint64_t seen = ticket_.load();
    for (int i = 0; i < count; ++i) {
      workers_.emplace_back([this, i, seen] { worker_main(i, seen); });
    }
  }

  void stop_workers() {
    if (workers_.empty()) return;
    publish((ticket_.load() >> kTaskBits) + 1, 0);
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
  std::unique_ptr<Share[]> shares_ = std::make_unique<Share[]>(1);
  // Note [A taken core]: the pool threads' involuntary switches, and (under
  // job_mutex_) how many the caller has acted on and the hold.
  std::atomic<int64_t> switches_{0};
  bool hold_back_ = true;
  Clock::time_point window_start_;
  int64_t window_switches_ = 0;
  int allowed_ = kMaxThreads;
  Clock::duration hold_ = kMinHold;
  Clock::time_point held_until_;
  std::mutex error_mutex_;
  std::exception_ptr error_;
  std::vector<std::thread> workers_;
};

}  // namespace

namespace detail {

bool in_parallel_region() {
  return in_pool_job;
}

void set_hold_back_threads(bool enabled) {
  ThreadPool::instance().set_hold_back(enabled);
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
  const int64_t max_pieces = (n + grain - 1) / grain;
  const int64_t threads = std::min<int64_t>(get_num_threads(), max_pieces);
  if (threads > 1 && !in_pool_job) {
    // Pieces none shorter than the grain but the last (Note [Dynamic
    // pieces]); an exception in any is rethrown on the calling thread once
    // every piece has ended.
    const int64_t wanted = std::min(threads * detail::kPiecesPerThread, kMaxPieces);
    const int64_t piece = std::max(grain, (n + wanted - 1) / wanted);
    const int64_t pieces = (n + piece - 1) / piece;
    if (ThreadPool::instance().run(int(std::min(threads, pieces)), begin, end, piece, pieces, fn)) {
      return;
    }
  }
  fn(begin, end);
}

}  // namespace stride
