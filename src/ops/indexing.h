// What the indexing files share (src/ops/indexing.cpp, scatter.cpp).
#pragma once

#include "stride/tensor.h"

namespace stride::detail {

// A DTypeError naming op unless index is int64 or int32.
void check_index(const Tensor& index, const char* op);
// `t` viewed with `shape` (same rank) and stride 0 along `dim` (Note
// [Restrided indexing] in src/ops/indexing.cpp).
Tensor restride(const Tensor& t, IntArrayRef shape, int64_t dim);

}  // namespace stride::detail
