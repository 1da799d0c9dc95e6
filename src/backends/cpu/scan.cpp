// The CPU kernel of cumsum and cumprod (backends/kernels.h). As PyTorch's
// CPU kernel, floating values accumulate in double and each running value is
// rounded to the output's dtype as it is written; integers accumulate in
// int64. Each (outer, inner) line is one serial chain, so results do not
// depend on the thread count.
#include <cstdint>
#include <type_traits>
#include <vector>

#include "backends/kernels.h"
#include "core/dispatch.h"
#include "stride/parallel.h"

namespace stride::cpu {

namespace {

template <class T>
using Accumulator = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

// Lines of x (outer, n, inner): for each outer block, the running values of
// every inner column advance together, row by row, so the reads are
// contiguous whatever the inner size.
template <class T>
void scan_block(
    const T* x, T* out, int64_t n, int64_t inner, bool product, std::vector<Accumulator<T>>& acc) {
  using A = Accumulator<T>;
  acc.assign(size_t(inner), product ? A(1) : A(0));
  for (int64_t i = 0; i < n; ++i) {
    const T* row = x + i * inner;
    T* dst = out + i * inner;
    for (int64_t j = 0; j < inner; ++j) {
      A& a = acc[size_t(j)];
      a = product ? a * A(row[j]) : a + A(row[j]);
      dst[j] = T(a);
    }
  }
}

void scan_kernel(const Tensor& x, bool product, Tensor& out) {
  const int64_t outer = x.size(0), n = x.size(1), inner = x.size(2);
  detail::dispatch_numeric(x.dtype(), product ? "cumprod" : "cumsum", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = x.data_ptr<T>();
    T* dst = out.data_ptr<T>();
    const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, n * inner));
    parallel_for(0, outer, grain, [&](int64_t begin, int64_t end) {
      std::vector<Accumulator<T>> acc;
      for (int64_t o = begin; o < end; ++o) {
        scan_block(src + o * n * inner, dst + o * n * inner, n, inner, product, acc);
      }
    });
  });
}

}  // namespace

STRIDE_REGISTER_KERNEL(kernels::scan, CPU, scan_kernel);

}  // namespace stride::cpu
