// The CPU kernels of searchsorted, bincount, histc and the run finding of
// unique and unique_consecutive (backends/kernels.h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "backends/cpu/capability.h"
#include "backends/kernels.h"
#include "core/dispatch.h"
#include "stride/parallel.h"

namespace STRIDE_CPU_NAMESPACE {

namespace {

// a < b with NaN above every number, as the sort kernel orders.
template <class T>
inline bool nan_last_less(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (b != b) return a == a;
    if (a != a) return false;
  }
  return a < b;
}

// The number of elements of the sorted row [first, first + n) below v (right:
// not above v): a binary search.
template <class T>
inline int64_t insertion_point(const T* first, int64_t n, T v, bool right) {
  if (right) {
    return std::upper_bound(first, first + n, v, [](T a, T b) { return nan_last_less(a, b); }) -
           first;
  }
  return std::lower_bound(first, first + n, v, [](T a, T b) { return nan_last_less(a, b); }) -
         first;
}

void searchsorted_kernel(const Tensor& sorted, const Tensor& values, bool right, Tensor& out) {
  const int64_t rows = values.size(0), m = values.size(1), n = sorted.size(1);
  const bool shared = sorted.size(0) == 1;
  const bool int32 = out.dtype() == kInt32;
  detail::dispatch_numeric(values.dtype(), "searchsorted", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* s = sorted.data_ptr<T>();
    const T* v = values.data_ptr<T>();
    int32_t* out32 = int32 ? out.data_ptr<int32_t>() : nullptr;
    int64_t* out64 = int32 ? nullptr : out.data_ptr<int64_t>();
    parallel_for(0, rows * m, 4096, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const T* row = s + (shared ? 0 : (i / m) * n);
        const int64_t at = insertion_point(row, n, v[i], right);
        if (int32) {
          out32[i] = int32_t(at);
        } else {
          out64[i] = at;
        }
      }
    });
  });
}

// Serial: every element may land in any bin.
void bincount_kernel(const Tensor& x, const Tensor& weights, Tensor& out) {
  const int64_t* v = x.data_ptr<int64_t>();
  const int64_t n = x.numel();
  if (!weights.defined()) {
    int64_t* counts = out.data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i) ++counts[v[i]];
    return;
  }
  const double* w = weights.data_ptr<double>();
  double* sums = out.data_ptr<double>();
  for (int64_t i = 0; i < n; ++i) sums[v[i]] += w[i];
}

void histc_kernel(const Tensor& x, double lo, double hi, Tensor& out) {
  const int64_t bins = out.numel(), n = x.numel();
  detail::dispatch_floating(x.dtype(), "histc", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* v = x.data_ptr<T>();
    T* counts = out.data_ptr<T>();
    const T low = T(lo), high = T(hi);
    for (int64_t i = 0; i < n; ++i) {
      const T e = v[i];
      if (!(e >= low && e <= high)) continue;  // NaN too
      // As PyTorch's: the bin computed in x's dtype, hi in the last bin.
      int64_t b = int64_t((e - low) * T(bins) / (high - low));
      if (b == bins) b -= 1;
      counts[b] += T(1);
    }
  });
}

int64_t consecutive_groups_kernel(const Tensor& x, Tensor& group) {
  const int64_t n = x.size(0), k = x.size(1);
  const size_t bytes = size_t(k) * x.element_size();
  const char* data = static_cast<const char*>(x.data_ptr());
  int64_t* g = group.data_ptr<int64_t>();
  int64_t runs = 0;
  for (int64_t i = 0; i < n; ++i) {
    // Slices compare by their bytes: equal values of one dtype have equal
    // bytes, but for -0.0 and 0.0, which the op makes one value first.
    if (i > 0 && std::memcmp(data + (i - 1) * bytes, data + i * bytes, bytes) != 0) ++runs;
    g[i] = runs;
  }
  return n == 0 ? 0 : runs + 1;
}

}  // namespace

STRIDE_REGISTER_CPU_KERNEL(kernels::searchsorted, searchsorted_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::bincount, bincount_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::histc, histc_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::consecutive_groups, consecutive_groups_kernel);

}  // namespace STRIDE_CPU_NAMESPACE
