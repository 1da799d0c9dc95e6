// Scans: cumsum, cumprod, logcumsumexp, cummax and cummin along one dim. The op views its input as
// (outer, n, inner) contiguous blocks; the kernel (src/backends/cpu/scan.cpp)
// runs every line along n.
#include <limits>
#include <vector>

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

// The (outer, n, inner) blocks the scan kernels walk, for a scan along dim.
DimVector scan_blocks(const Tensor& x, int64_t dim) {
  int64_t outer = 1, inner = 1;
  const int64_t n = x.dim() == 0 ? 1 : x.size(dim);
  for (int64_t i = 0; i < dim; ++i) outer *= x.size(i);
  for (int64_t i = dim + 1; i < x.dim(); ++i) inner *= x.size(i);
  return {outer, n, inner};
}

Tensor scanned(const Tensor& x, int64_t dim, ScalarType rt, kernels::ScanKind kind) {
  if (detail::is_16bit(rt)) return scanned(x, dim, kFloat32, kind).to(rt);
  const DimVector blocks = scan_blocks(x, dim);
  const Tensor src = x.to(rt).contiguous();
  Tensor out = empty(x.sizes(), x.options().dtype(rt));
  Tensor out_blocks = out.view(blocks);
  kernels::scan(x.device(), src.view(blocks), kind, out_blocks);
  return out;
}

// cummax / cummin's values and indices.
std::pair<Tensor, Tensor> scanned_extreme(const Tensor& x, int64_t dim, bool is_max) {
  if (detail::is_16bit(x.dtype())) {
    auto [values, indices] = scanned_extreme(x.to(kFloat32), dim, is_max);
    return {values.to(x.dtype()), indices};
  }
  const DimVector blocks = scan_blocks(x, dim);
  const Tensor src = x.contiguous();
  Tensor values = empty(x.sizes(), x.options());
  Tensor indices = empty(x.sizes(), x.options().dtype(kInt64));
  Tensor value_blocks = values.view(blocks), index_blocks = indices.view(blocks);
  kernels::scan_extreme(x.device(), src.view(blocks), is_max, value_blocks, index_blocks);
  return {values, indices};
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

// d cumprod / dx_i = sum over k >= i of g_k times the product of x_j
// (j <= k, j != i), each product taken by a cumprod of x with x_i set to 1:
// O(n^2) work, but a polynomial in every x_j, so its own gradient is
// cumprod's second derivative at zeros too (PyTorch's double-backward form).
Tensor cumprod_backward_differentiable(const Tensor& g, const Tensor& x, int64_t dim) {
  const int64_t n = x.size(dim);
  std::vector<Tensor> grads;
  for (int64_t i = 0; i < n; ++i) {
    const Tensor one = ones_like(x.narrow(dim, i, 1));
    const Tensor omitted =
        cat({x.narrow(dim, 0, i), one, x.narrow(dim, i + 1, n - i - 1)}, dim).cumprod(dim);
    grads.push_back((g.narrow(dim, i, n - i) * omitted.narrow(dim, i, n - i)).sum({dim}, true));
  }
  return cat(grads, dim);
}

// d cumprod / dx, zeros included. With x' = x with its zeros set to 1,
// y' = cumprod(x') and Z the running count of zeros: the gradient of x_i is
// the sum over k >= i of g_k times the product of x_j (j <= k, j != i), which
// is y'_k / x'_i where no zero (other than x_i) comes before k, and 0 past
// one. So for x_i != 0 the terms with Z_k = 0 count, divided by x_i, and for
// x_i = 0 (then the line's first zero, else its terms vanish) those with
// Z_k = 1. Written with ops; but as x_j's zero is replaced by 1 in x', the
// products past a zero do not depend on it, so where a second derivative
// is being recorded (grad mode on in the backward) and x holds a zero, the
// polynomial form above is used instead.
Tensor cumprod_backward(const Tensor& g, const Tensor& x, int64_t dim) {
  if (x.dim() == 0) return g;
  Tensor zero, zeros_so_far;
  {
    NoGradGuard no_grad;
    zero = x.eq(0);
    zeros_so_far = zero.cumsum(dim);
  }
  const bool recording = GradMode::is_enabled() && !x.device().is_meta();
  if (recording && x.numel() > 0 && any(zero).item<bool>()) {
    return cumprod_backward_differentiable(g, x, dim);
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
      Op::cumsum, {&x}, [&] { return scanned(x, d, scan_dtype(x, dtype), kernels::ScanKind::Sum); },
      [&](const Tensor&) {
        return [d, in_dtype = x.dtype()](const Grads& gs) {
          return Grads{reverse_cumsum(gs[0], d).to(in_dtype)};
        };
      });
}

Tensor cumprod(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype) {
  const int64_t d = wrap_scan_dim(x, dim, "cumprod");
  return detail::apply(
      Op::cumprod, {&x},
      [&] { return scanned(x, d, scan_dtype(x, dtype), kernels::ScanKind::Prod); },
      [&](const Tensor&) {
        return [d, sx = SavedTensor::input(x)](const Grads& gs) {
          const Tensor xv = sx.get();
          return Grads{cumprod_backward(gs[0].to(xv.dtype()), xv, d)};
        };
      });
}

namespace {

// logcumsumexp read backwards along dim.
Tensor reverse_logcumsumexp(const Tensor& t, int64_t dim) {
  if (t.dim() == 0) return t;
  return logcumsumexp(t.flip({dim}), dim).flip({dim});
}

double lowest_finite(ScalarType t) {
  switch (t) {
    case kFloat64:
      return std::numeric_limits<double>::lowest();
    case kFloat16:
      return -65504.0;
    case kBFloat16:
      return -3.3895313892515355e38;
    default:
      return double(std::numeric_limits<float>::lowest());
  }
}

// d logcumsumexp: x_i's gradient is the sum over k >= i of g_k exp(x_i - y_k),
// summed in log space for the positive and the negative g apart, as
// PyTorch's, so that no exp overflows. Written with ops.
Tensor logcumsumexp_backward(const Tensor& g, const Tensor& x, const Tensor& y, int64_t dim) {
  // The lowest finite number of g's dtype, not -inf, for the left-out
  // terms: -inf - y would be NaN where y is -inf too.
  const Tensor lowest = full({}, lowest_finite(g.dtype()), g.options());
  Tensor positive, negative;
  {
    NoGradGuard no_grad;
    positive = g.gt(Scalar(0));
    negative = g.lt(Scalar(0));
  }
  const Tensor log_abs = g.abs().log();
  return (reverse_logcumsumexp(where(positive, log_abs, lowest) - y, dim) + x).exp() -
         (reverse_logcumsumexp(where(negative, log_abs, lowest) - y, dim) + x).exp();
}

template <bool IsMax>
std::pair<Tensor, Tensor> scan_extreme_op(const Tensor& x, int64_t dim) {
  const Op id = IsMax ? Op::cummax : Op::cummin;
  const int64_t d = wrap_scan_dim(x, dim, detail::op_name(id));
  return detail::apply(
      id, {&x}, [&] { return scanned_extreme(x, d, IsMax); },
      [&](const std::pair<Tensor, Tensor>& r) {
        return [shape = x.sizes().dims(), d, indices = r.second](const Grads& gs) {
          if (shape.empty()) return Grads{gs[0]};
          return Grads{zeros(shape, gs[0].options()).scatter_add(d, indices, gs[0])};
        };
      });
}

}  // namespace

Tensor logcumsumexp(const Tensor& x, int64_t dim) {
  const int64_t d = wrap_scan_dim(x, dim, "logcumsumexp");
  return detail::apply(
      Op::logcumsumexp, {&x},
      [&] { return scanned(x, d, x.dtype(), kernels::ScanKind::LogSumExp); },
      [&](const Tensor& y) {
        return [d, sx = SavedTensor::input(x), sy = SavedTensor::output(y)](const Grads& gs) {
          return Grads{logcumsumexp_backward(gs[0], sx.get(), sy.get(), d)};
        };
      });
}

std::pair<Tensor, Tensor> cummax(const Tensor& x, int64_t dim) {
  return scan_extreme_op<true>(x, dim);
}

std::pair<Tensor, Tensor> cummin(const Tensor& x, int64_t dim) {
  return scan_extreme_op<false>(x, dim);
}

Tensor Tensor::cumsum(int64_t dim, std::optional<ScalarType> dtype) const {
  return stride::cumsum(*this, dim, dtype);
}
Tensor Tensor::cumprod(int64_t dim, std::optional<ScalarType> dtype) const {
  return stride::cumprod(*this, dim, dtype);
}

}  // namespace stride
