#include "core/overlap.h"

#include <algorithm>

namespace stride::detail {

bool has_internal_overlap(const Tensor& t) {
  if (t.numel() <= 1) return false;
  struct Dim {
    int64_t stride, size;
    bool operator<(const Dim& o) const { return stride < o.stride; }
  };
  SmallVector<Dim, 8> dims;  // dims with size > 1
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.sizes()[size_t(d)] > 1) dims.push_back({t.strides()[size_t(d)], t.sizes()[size_t(d)]});
  }
  std::sort(dims.begin(), dims.end());
  // Non-overlapping when each stride exceeds the span of all smaller dims.
  int64_t span = 0;
  for (auto [stride, size] : dims) {
    if (stride <= span) return true;
    span += (size - 1) * stride;
  }
  return false;
}

bool partially_overlap(const Tensor& a, const Tensor& b) {
  if (a.storage() != b.storage() || a.numel() == 0 || b.numel() == 0) return false;
  if (a.storage_offset() == b.storage_offset() && a.sizes() == b.sizes() &&
      a.strides() == b.strides() && a.dtype() == b.dtype()) {
    return false;
  }
  auto range = [](const Tensor& t) {
    const int64_t es = int64_t(t.element_size());
    int64_t lo = t.storage_offset() * es, hi = lo;
    for (int64_t d = 0; d < t.dim(); ++d)
      hi += (t.sizes()[size_t(d)] - 1) * t.strides()[size_t(d)] * es;
    return std::pair{lo, hi + es};
  };
  auto [alo, ahi] = range(a);
  auto [blo, bhi] = range(b);
  return alo < bhi && blo < ahi;
}

}  // namespace stride::detail
