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

std::pair<uintptr_t, uintptr_t> byte_span(const Tensor& t) {
  // From the storage's start, which meta storages (no memory) have too.
  const int64_t es = int64_t(t.element_size());
  const auto base =
      reinterpret_cast<uintptr_t>(t.storage()->data()) + uintptr_t(t.storage_offset() * es);
  int64_t lo = 0, hi = es;
  for (int64_t d = 0; d < t.dim(); ++d) {
    const int64_t reach = (t.size(d) - 1) * t.stride(d) * es;
    (reach < 0 ? lo : hi) += reach;
  }
  return {base + uintptr_t(lo), base + uintptr_t(hi)};
}

bool partially_overlap(const Tensor& a, const Tensor& b) {
  if (a.storage() != b.storage() || a.numel() == 0 || b.numel() == 0) return false;
  if (a.storage_offset() == b.storage_offset() && a.sizes() == b.sizes() &&
      a.strides() == b.strides() && a.dtype() == b.dtype()) {
    return false;
  }
  const auto [alo, ahi] = byte_span(a);
  const auto [blo, bhi] = byte_span(b);
  return alo < bhi && blo < ahi;
}

}  // namespace stride::detail
