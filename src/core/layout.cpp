#include "core/layout.h"

#include <algorithm>

#include "stride/factory.h"

namespace stride::detail {

bool is_non_overlapping_and_dense(const Tensor& t) {
  if (t.numel() == 0) return false;
  DimVector dims;  // of size > 1, innermost first
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) != 1) dims.push_back(d);
  }
  std::sort(dims.begin(), dims.end(),
            [&](int64_t a, int64_t b) { return t.stride(a) < t.stride(b); });
  int64_t expected = 1;
  for (int64_t d : dims) {
    if (t.stride(d) != expected) return false;
    expected *= t.size(d);
  }
  return true;
}

Tensor empty_preserving_strides(const Tensor& t, TensorOptions options) {
  if (t.is_contiguous() || !is_non_overlapping_and_dense(t)) return empty(t.sizes(), options);
  return empty_strided(t.sizes(), t.strides(), options);
}

}  // namespace stride::detail
