#pragma once

#include <cstdint>

namespace stride::detail {

// Whether the calling thread is running a chunk of a parallel_for (Note
// [Thread pool]): a parallel_for from here runs inline.
bool in_parallel_region();

// Whether the pool runs jobs on fewer threads while the OS keeps taking its
// cores (Note [A taken core] in src/core/parallel.cpp; on by default). Off,
// every job runs on every thread: for tests of the pool's own behaviour that
// must see all its threads on a loaded machine.
void set_hold_back_threads(bool enabled);

// The pieces parallel_for cuts a job into per thread (Note [Dynamic pieces]
// in src/core/parallel.cpp): enough that a descheduled thread holds back
// little of a job, few enough that a piece's own costs (a call, a kernel's
// setup) stay small beside its work.
inline constexpr int64_t kPiecesPerThread = 4;

}  // namespace stride::detail
