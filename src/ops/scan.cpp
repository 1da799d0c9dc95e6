// Scans: cumsum and cumprod along one dim. The op views its input as
// (outer, n, inner) contiguous blocks; the kernel (src/backends/cpu/scan.cpp)
// runs every line along n.
#include "backends/kernels.h"
#include "ops/apply.h"
#include "ops/elementwise_common.h"

namespace stride {

using autograd::Grads;
using autograd::SavedTensor;
using detail::Op;

namespace {

// PyTorch's result dtype: the given one, else int64 for integers and bool
// (a complex x keeps its dtype, which the kernel refuses by name).
ScalarType scan_dtype(const Tensor& x, std::optional<ScalarType> dtype) {
  if (dtype) return *dtype;
  return is_floating_point(x.dtype()) || x.is_complex() ? x.dtype() : kInt64;
}

Tensor scanned(const Tensor& x, int64_t dim, ScalarType rt, bool product) {
  if (detail::is_16bit(rt)) return scanned(x, dim, kFloat32, product).to(rt);
  const Tensor src = x.to(rt).contiguous();
  int64_t outer = 1, inner = 1;
  const int64_t n = x.dim() == 0 ? 1 : x.size(dim);
  for (int64_t i = 0; i < dim; ++i) outer *= x.size(i);
  for (int64_t i = dim + 1; i < x.dim(); ++i) inner *= x.size(i);
  Tensor out = empty(x.sizes(), x.options().dtype(rt));
  Tensor out_blocks = out.view({outer, n, inner});
  kernels::scan(x.device(), src.view({outer, n, inner}), product, out_blocks);
  return out;
}

// A 0-d tensor scans as one element along dim 0 (or -1), as PyTorch's.
int64_t wrap_scan_dim(const Tensor& x, int64_t dim, const char* op) {
  if (x.dim() > 0) return wrap_dim(dim, x.dim(), op);
  wrap_dim(dim, 1, op);
  return 0;
}

// The sums from each position to the end of its line: the gradient of a
// cumsum.
Tensor reverse_cumsum(const Tensor& g, int64_t dim) {
  if (g.dim() == 0) return g;
  return g.flip({dim}).cumsum(dim).flip({dim});
}

// d cumprod / dx, zeros included. With x' = x with its zeros set to 1,
// y' = cumprod(x') and Z the running count of zeros: the gradient of x_i is
// the sum over k >= i of g_k times the product of x_j (j <= k, j != i), which
// is y'_k / x'_i where no zero (other than x_i) comes before k, and 0 past
// one. So for x_i != 0 the terms with Z_k = 0 count, divided by x_i, and for
// x_i = 0 (then the line's first zero, else its terms vanish) those with
// Z_k = 1. Written with ops, so it is differentiable again.
Tensor cumprod_backward(const Tensor& g, const Tensor& x, int64_t dim) {
  if (x.dim() == 0) return g;
  Tensor zero, zeros_so_far;
  {
    NoGradGuard no_grad;
    zero = x.eq(0);
    zeros_so_far = zero.cumsum(dim);
  }
  const Tensor x1 = where(zero, ones_like(x), x);
  const Tensor gy = g * x1.cumprod(dim);
  const Tensor before_zeros = reverse_cumsum(gy * zeros_so_far.eq(0).to(g.dtype()), dim) / x1;
  const Tensor at_first_zero = reverse_cumsum(gy * zeros_so_far.eq(1).to(g.dtype()), dim);
  return where(zero, at_first_zero, before_zeros);
}

}  // namespace

Tensor cumsum(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype) {
  const int64_t d = wrap_scan_dim(x, dim, "cumsum");
  return detail::apply(
      Op::cumsum, {&x}, [&] { return scanned(x, d, scan_dtype(x, dtype), false); },
      [&](const Tensor&) {
        return [d, in_dtype = x.dtype()](const Grads& gs) {
          return Grads{reverse_cumsum(gs[0], d).to(in_dtype)};
        };
      });
}

Tensor cumprod(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype) {
  const int64_t d = wrap_scan_dim(x, dim, "cumprod");
  return detail::apply(
      Op::cumprod, {&x}, [&] { return scanned(x, d, scan_dtype(x, dtype), true); },
      [&](const Tensor&) {
        return [d, sx = SavedTensor::input(x)](const Grads& gs) {
          const Tensor xv = sx.get();
          return Grads{cumprod_backward(gs[0].to(xv.dtype()), xv, d)};
        };
      });
}

Tensor Tensor::cumsum(int64_t dim, std::optional<ScalarType> dtype) const {
  return stride::cumsum(*this, dim, dtype);
}
Tensor Tensor::cumprod(int64_t dim, std::optional<ScalarType> dtype) const {
  return stride::cumprod(*this, dim, dtype);
}

}  // namespace stride
