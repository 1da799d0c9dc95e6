// The special functions written out (polygamma, whose order is an integer
// argument, and the composites mvlgamma and logit), and the parts of the
// listed special functions' backward formulas (ops/special_grads.h). The
// listed ones are expanded in src/ops/elementwise.cpp; their kernels are the
// CPU's (src/backends/cpu/special.cpp).
#include <cmath>
#include <limits>
#include <numbers>

#include "backends/kernels.h"
#include "ops/apply.h"
#include "ops/elementwise_common.h"
#include "ops/special_grads.h"

namespace stride {

using autograd::Grads;
using autograd::SavedTensor;
using detail::Op;

namespace detail {

namespace {

// x where it is not 0, else 1: the denominators of the formulas below, so
// that their unselected branch at 0 is finite and its gradient too.
Tensor nonzero_or_one(const Tensor& x) {
  return where(x.eq(0), ones_like(x), x);
}

}  // namespace

Tensor sinc_derivative(const Tensor& x) {
  const Tensor pi_x = nonzero_or_one(x) * std::numbers::pi;
  const Tensor derivative = (pi_x * cos(pi_x) - sin(pi_x)) / (pi_x * nonzero_or_one(x));
  return where(x.eq(0), zeros_like(x), derivative);
}

Tensor bessel_i1_derivative(const Tensor& x, const Tensor& i0_x, const Tensor& i1_x) {
  return where(x.eq(0), full_like(x, 0.5), i0_x - i1_x / nonzero_or_one(x));
}

Tensor bessel_i1e_derivative(const Tensor& x) {
  const Tensor safe = nonzero_or_one(x);
  const Tensor derivative = special_i0e(x) - special_i1e(x) * (sign(x) + reciprocal(safe));
  return where(x.eq(0), full_like(x, 0.5), derivative);
}

Tensor incomplete_gamma_density(const Tensor& a, const Tensor& x) {
  return exp((a - 1.0) * log(x) - x - lgamma(a));
}

Tensor refuse_gradient(const char* op,
                       const char* argument,
                       const Tensor& operand,
                       const Tensor& g) {
  STRIDE_CHECK(!autograd::requires_grad(operand), NotImplementedError, "[", op,
               "] the derivative for '", argument,
               "' is not implemented (PyTorch has none either). Hint: detach() ", argument,
               " or compute it without requires_grad.");
  return zeros_like(g);
}

}  // namespace detail

// ---- polygamma ----

static Tensor& polygamma_kernel(Tensor& out, int64_t n, const Tensor& x) {
  STRIDE_CHECK(n >= 0, ValueError, "[polygamma] n must be non-negative; got n = ", n,
               ". Hint: polygamma(n, x) is the n-th derivative of digamma, n = 0, 1, 2, ...");
  const ScalarType rt = detail::float_result(x.dtype());
  return detail::run_elementwise("polygamma", out, {x}, rt, rt, kernels::polygamma, Scalar(n));
}

Tensor& polygamma_out(Tensor& out, int64_t n, const Tensor& x) {
  return detail::apply_out(Op::polygamma, out, {&x},
                           [&]() -> Tensor& { return polygamma_kernel(out, n, x); });
}

Tensor polygamma(int64_t n, const Tensor& x) {
  return detail::apply(
      Op::polygamma, {&x},
      [&] {
        Tensor out;
        return polygamma_kernel(out, n, x);
      },
      [&](const Tensor&) {
        return [n, sx = SavedTensor::input(x)](const Grads& gs) {
          return Grads{gs[0] * polygamma(n + 1, sx.get())};
        };
      });
}

Tensor Tensor::polygamma(int64_t n) const {
  return stride::polygamma(n, *this);
}

// ---- composites ----

namespace {

// The largest finite value of a floating dtype (torch.finfo(dtype).max).
double largest_finite(ScalarType t) {
  switch (t) {
    case kFloat16:
      return 65504.0;
    case kBFloat16:
      return 3.38953138925153547590e38;
    case kFloat32:
      return std::numeric_limits<float>::max();
    default:
      return std::numeric_limits<double>::max();
  }
}

// x in floating point: integers as float32, as the floating unary ops.
Tensor as_floating(const Tensor& x) {
  return x.is_floating_point() ? x : x.to(kFloat32);
}

}  // namespace

Tensor deg2rad(const Tensor& x) {
  detail::check_dtype_rule(Op::deg2rad, x);
  return as_floating(x) * (std::numbers::pi / 180.0);
}

Tensor rad2deg(const Tensor& x) {
  detail::check_dtype_rule(Op::rad2deg, x);
  return as_floating(x) * (180.0 / std::numbers::pi);
}

// Whether the sign bit is set: true for -0.0 and a negative NaN too.
Tensor signbit(const Tensor& x) {
  detail::check_dtype_rule(Op::signbit, x);
  NoGradGuard no_grad;
  if (!x.is_floating_point()) return x.lt(0);
  return copysign(ones_like(x), x).lt(0);
}

Tensor isposinf(const Tensor& x) {
  detail::check_dtype_rule(Op::isposinf, x);
  if (!x.is_floating_point()) return zeros(x.sizes(), x.options().dtype(kBool));
  return x.eq(Scalar(std::numeric_limits<double>::infinity()));
}

Tensor isneginf(const Tensor& x) {
  detail::check_dtype_rule(Op::isneginf, x);
  if (!x.is_floating_point()) return zeros(x.sizes(), x.options().dtype(kBool));
  return x.eq(Scalar(-std::numeric_limits<double>::infinity()));
}

// NaN, +inf and -inf replaced (by default with 0 and the dtype's largest
// and lowest finite values); the gradient flows where x is finite.
Tensor nan_to_num(const Tensor& x,
                  std::optional<double> nan,
                  std::optional<double> posinf,
                  std::optional<double> neginf) {
  detail::check_dtype_rule(Op::nan_to_num, x);
  if (!x.is_floating_point()) return x.clone();
  const double top = largest_finite(x.dtype());
  Tensor r = masked_fill(x, isnan(x), nan.value_or(0.0));
  r = masked_fill(r, isposinf(x), posinf.value_or(top));
  return masked_fill(r, isneginf(x), neginf.value_or(-top));
}

// 1 where x > 0, values where x is 0, else 0 (NaN included); no gradient,
// as PyTorch's.
Tensor heaviside(const Tensor& x, const Tensor& values) {
  detail::check_dtype_rule(Op::heaviside, x);
  STRIDE_CHECK(x.dtype() == values.dtype(), DTypeError,
               "[heaviside] input and values must have the same dtype; got ", to_string(x.dtype()),
               " and ", to_string(values.dtype()), ". Hint: convert values with .to(input.dtype).");
  NoGradGuard no_grad;
  return where(x.eq(0), values, x.gt(0).to(x.dtype()));
}

// x * 2^other in the operands' promoted floating dtype (a bfloat16 x with
// integer exponents stays bfloat16, as PyTorch's).
Tensor ldexp(const Tensor& x, const Tensor& other) {
  detail::check_dtype_rule(Op::ldexp, x);
  const ScalarType rt = detail::float_result(detail::result_type(x, other));
  return x.to(rt) * exp2(other.to(rt));
}

// x^exponent computed in float64, as PyTorch's.
Tensor float_power(const Tensor& x, const Tensor& exponent) {
  detail::check_dtype_rule(Op::float_power, x);
  return pow(x.to(kFloat64), exponent.to(kFloat64));
}
Tensor float_power(const Tensor& x, const Scalar& exponent) {
  detail::check_dtype_rule(Op::float_power, x);
  return pow(x.to(kFloat64), exponent);
}

// log of the multivariate gamma function of dimension p:
// p (p-1) / 4 log(pi) + sum_{j<p} lgamma(x - j/2).
Tensor mvlgamma(const Tensor& x, int64_t p) {
  detail::check_dtype_rule(Op::mvlgamma, x);
  STRIDE_CHECK(p >= 1, ValueError, "[mvlgamma] p must be at least 1; got p = ", p, ".");
  // (A meta tensor has no values to check.)
  STRIDE_CHECK(
      x.numel() == 0 || x.device().is_meta() || x.gt(0.5 * double(p - 1)).all().item<bool>(),
      ValueError,
      "[mvlgamma] all elements of input must be greater than (p-1)/2 = ", 0.5 * double(p - 1),
      ". Hint: shift the input, or use a smaller p.");
  // 0, -1/2, -1, ...: arange in float32 (it has no 16-bit kernel), then x's
  // floating dtype.
  const ScalarType rt = detail::float_result(x.dtype());
  const Tensor halves = arange(p, kFloat32).to(rt).to(x.device()) * -0.5;
  const double constant = double(p) * double(p - 1) / 4.0 * std::log(std::numbers::pi);
  return lgamma(x.unsqueeze(-1) + halves).sum({-1}) + constant;
}

// log(x / (1 - x)), x clamped to [eps, 1 - eps] when eps is given: below
// eps gives eps, else above 1 - eps gives 1 - eps (so eps > 1/2 clamps
// everything, as PyTorch's); the gradient flows where x is not clamped.
Tensor logit(const Tensor& x, std::optional<double> eps) {
  detail::check_dtype_rule(Op::logit, x);
  Tensor z = as_floating(x);
  if (eps) {
    const Tensor lo = full_like(z, *eps), hi = full_like(z, 1.0 - *eps);
    z = where(z.lt(*eps), lo, where(z.gt(1.0 - *eps), hi, z));
  }
  return log(z / (1.0 - z));
}

}  // namespace stride
