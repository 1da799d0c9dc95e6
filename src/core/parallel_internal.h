#pragma once

namespace stride::detail {

// Whether the calling thread is running a chunk of a parallel_for (Note
// [Thread pool]): a parallel_for from here runs inline.
bool in_parallel_region();

}  // namespace stride::detail
