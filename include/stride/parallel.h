// The process-wide thread pool (Note [Thread pool] in src/core/parallel.cpp).
// The BLAS libraries run single-threaded inside its chunks, so stride's
// threads and the BLAS's are one pool and never oversubscribe the cores.
#pragma once

#include <cstdint>

#include "stride/function_ref.h"

namespace stride {

// Threads used by stride kernels (and the BLAS). Defaults to the core count,
// or to $STRIDE_NUM_THREADS when set (else $OMP_NUM_THREADS). While another
// process keeps taking the pool's cores, jobs run on fewer threads for a
// while (Note [A taken core] in src/core/parallel.cpp); this count stays.
int get_num_threads();
void set_num_threads(int n);

// Calls fn(begin, end) on disjoint chunks covering [begin, end), each at
// least `grain` long (except possibly the last). Runs inline when the range is
// smaller than grain or when already inside a parallel region. The chunk
// boundaries may depend on the thread count: kernels whose result depends on
// how the range is split (reductions) must choose their own fixed chunks.
void parallel_for(int64_t begin,
                  int64_t end,
                  int64_t grain,
                  FunctionRef<void(int64_t, int64_t)> fn);

}  // namespace stride
