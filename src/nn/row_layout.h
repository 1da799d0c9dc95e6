// The layout of the fused kernels' operands and outputs (Note [Row layout]
// in backends/row_layout.h): an op brings its operands into it and allocates
// outputs that keep it.
//
// Outputs follow their input's memory order when it is non-overlapping and
// dense (PyTorch's empty_like with preserve_format), so heads views stay
// heads views: the gradients reach the projection's (B, T, D) buffer as free
// views, and y.transpose(1, 2).reshape({B, T, D}) after attention is free.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>

#include "backends/row_layout.h"
#include "core/layout.h"
#include "stride/ops.h"

namespace stride::nn::functional::detail {

using ::stride::detail::has_row_layout;
using ::stride::detail::RowMatrices;

// t itself when it has a row layout, else a contiguous copy.
inline Tensor with_row_layout(const Tensor& t) {
  return has_row_layout(t) ? t : t.contiguous();
}

// A new uninitialised tensor of t's shape, with the last dim resized to
// `cols`, and t's dtype. When t has a row layout and is non-overlapping and
// dense, its leading dims keep t's memory order (ties, which only size-1
// dims make, in dim order) and its rows stay innermost; else it is row-major.
inline Tensor empty_preserving_layout(const Tensor& t, int64_t cols) {
  DimVector sizes = t.sizes().dims();
  sizes.back() = cols;
  if (t.is_contiguous() || !has_row_layout(t) ||
      !::stride::detail::is_non_overlapping_and_dense(t)) {
    return empty(sizes, t.options());
  }
  DimVector order(sizes.size() - 1);
  std::iota(order.begin(), order.end(), int64_t(0));
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return t.stride(a) > t.stride(b); });
  DimVector strides(sizes.size());
  strides.back() = 1;
  int64_t inner = cols;
  for (size_t i = order.size(); i-- > 0;) {
    strides[size_t(order[i])] = inner;
    inner *= sizes[size_t(order[i])];
  }
  return empty_strided(sizes, strides, t.options());
}

}  // namespace stride::nn::functional::detail
