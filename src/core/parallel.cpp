#include "stride/parallel.h"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>

#include "core/check.h"

namespace stride {
namespace {

int initial_threads() {
  if (const char* env = std::getenv("STRIDE_NUM_THREADS")) {
    int n = std::atoi(env);
    if (n > 0) return n;
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

}  // namespace

int get_num_threads() {
  return num_threads_ref();
}

void set_num_threads(int n) {
  STRIDE_CHECK(n > 0, ValueError, "[set_num_threads] expected a positive count; got ", n, ".");
  num_threads_ref() = n;
  omp_set_num_threads(n);
}

void parallel_for(int64_t begin,
                  int64_t end,
                  int64_t grain,
                  FunctionRef<void(int64_t, int64_t)> fn) {
  if (begin >= end) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t n = end - begin;
  const int64_t max_chunks = (n + grain - 1) / grain;
  const int threads = int(std::min<int64_t>(get_num_threads(), max_chunks));
  if (threads <= 1 || omp_in_parallel()) {
    fn(begin, end);
    return;
  }
  // One contiguous chunk per thread; an exception in any chunk is rethrown
  // on the calling thread after the region ends (OpenMP forbids unwinding
  // out of a parallel region).
  std::exception_ptr error;
  std::once_flag error_once;
  const int64_t chunk = (n + threads - 1) / threads;
#pragma omp parallel num_threads(threads)
  {
    const int64_t b = begin + int64_t(omp_get_thread_num()) * chunk;
    const int64_t e = std::min(end, b + chunk);
    if (b < e) {
      try {
        fn(b, e);
      } catch (...) {
        std::call_once(error_once, [&] { error = std::current_exception(); });
      }
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace stride
