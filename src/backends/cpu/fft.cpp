// The CPU kernel of the discrete Fourier transform (backends/kernels.h):
// KISS FFT's kissfft<T> (mixed radix, any length) on every line along N of
// an (O, N, I) block. The plan (twiddles and factors) is made once per call
// and shared by the threads, each of which gathers a strided line into a
// buffer, transforms it and scatters the result.
#include <kissfft.hh>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <vector>

#include "backends/cpu/capability.h"
#include "backends/kernels.h"
#include "core/dispatch.h"
#include "stride/parallel.h"

namespace STRIDE_CPU_NAMESPACE {

namespace {

template <class C>
void transform_lines(const C* x, C* out, int64_t outer, int64_t n, int64_t inner, bool inverse) {
  using Real = typename C::value_type;
  const kissfft<Real> plan(size_t(n), inverse);
  const int64_t grain = std::max<int64_t>(1, 16384 / n);
  parallel_for(0, outer * inner, grain, [&](int64_t begin, int64_t end) {
    std::vector<C> line(static_cast<size_t>(n));
    for (int64_t l = begin; l < end; ++l) {
      const int64_t o = l / inner, i = l % inner;
      const int64_t base = o * n * inner + i;
      plan.transform(x + base, line.data(), 0, 1, size_t(inner));
      for (int64_t k = 0; k < n; ++k) out[base + k * inner] = line[size_t(k)];
    }
  });
}

void fft_c2c_kernel(const Tensor& x, bool inverse, Tensor& out) {
  const int64_t outer = x.size(0), n = x.size(1), inner = x.size(2);
  if (n == 0 || outer * inner == 0) return;
  detail::dispatch_complex(x.dtype(), "fft", [&](auto tag) {
    using C = typename decltype(tag)::type;
    transform_lines(x.data_ptr<C>(), out.data_ptr<C>(), outer, n, inner, inverse);
  });
}

}  // namespace

STRIDE_REGISTER_CPU_KERNEL(kernels::fft_c2c, fft_c2c_kernel);

}  // namespace STRIDE_CPU_NAMESPACE
