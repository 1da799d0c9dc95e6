// Memory-overlap tests used by TensorIter and copy_ to refuse writes whose
// result would depend on the order of element writes.
#pragma once

#include <cstdint>
#include <utility>

#include "stride/tensor.h"

namespace stride::detail {

// True when two elements of `t` may share a memory location (an expanded or
// self-overlapping as_strided view). Conservative for exotic as_strided views.
bool has_internal_overlap(const Tensor& t);
// The bytes a view's elements span, [lo, hi), as addresses (empty views:
// callers skip them).
std::pair<uintptr_t, uintptr_t> byte_span(const Tensor& t);
// True when `a` and `b` share memory but are not the very same view.
bool partially_overlap(const Tensor& a, const Tensor& b);

}  // namespace stride::detail
