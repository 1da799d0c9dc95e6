// Elementwise ops that PyTorch's users reach for and that are compositions
// of the listed ones: the logical ops, fmax/fmin, round with decimals,
// isclose, the out-of-place addcmul/addcdiv, and the linspace/logspace
// factories. No kernel or node of their own, so their gradients are those
// of the ops they are written with.
#include <cmath>
#include <vector>

#include "core/check.h"
#include "ops/apply.h"
#include "ops/elementwise_common.h"
#include "stride/ops.h"

namespace stride {

using detail::Op;

namespace {

Tensor nonzero_mask(const Tensor& x) {
  return x.dtype() == kBool ? x : x.ne(Scalar(0));
}

void check_floating(const Tensor& x, const char* op) {
  STRIDE_CHECK(x.is_floating_point(), DTypeError, "[", op, "] takes a floating-point tensor; got ",
               to_string(x.dtype()), ".");
}

}  // namespace

Tensor logical_and(const Tensor& a, const Tensor& b) {
  detail::check_dtype_rule(Op::logical_and, a);
  return nonzero_mask(a) * nonzero_mask(b);
}

Tensor logical_or(const Tensor& a, const Tensor& b) {
  detail::check_dtype_rule(Op::logical_or, a);
  return maximum(nonzero_mask(a), nonzero_mask(b));
}

Tensor logical_xor(const Tensor& a, const Tensor& b) {
  detail::check_dtype_rule(Op::logical_xor, a);
  return nonzero_mask(a).ne(nonzero_mask(b));
}

Tensor logical_not(const Tensor& x) {
  detail::check_dtype_rule(Op::logical_not, x);
  return x.eq(Scalar(0));
}

Tensor fmax(const Tensor& a, const Tensor& b) {
  detail::check_dtype_rule(Op::fmax, a);
  const Tensor m = maximum(a, b);
  if (!m.is_floating_point()) return m;
  // Where one side is NaN, the other (NaN only where both are).
  return where(b.isnan(), a.to(m.dtype()), where(a.isnan(), b.to(m.dtype()), m));
}

Tensor fmin(const Tensor& a, const Tensor& b) {
  detail::check_dtype_rule(Op::fmin, a);
  const Tensor m = minimum(a, b);
  if (!m.is_floating_point()) return m;
  return where(b.isnan(), a.to(m.dtype()), where(a.isnan(), b.to(m.dtype()), m));
}

Tensor round(const Tensor& x, int64_t decimals) {
  if (decimals == 0) return round(x);
  check_floating(x, "round");
  // PyTorch's order: scale, round half to even, scale back by the same power.
  const double ten_pow = std::pow(10.0, double(decimals < 0 ? -decimals : decimals));
  return decimals > 0 ? round(x * ten_pow) / ten_pow : round(x / ten_pow) * ten_pow;
}

Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  detail::check_dtype_rule(Op::isclose, a);
  STRIDE_CHECK(a.dtype() == b.dtype(), DTypeError, "[isclose] compares tensors of one dtype; got ",
               to_string(a.dtype()), " and ", to_string(b.dtype()), ". Convert one with .to().");
  STRIDE_CHECK(rtol >= 0 && atol >= 0, ValueError,
               "[isclose] takes non-negative rtol and atol; got rtol=", rtol, ", atol=", atol, ".");
  Tensor close = a.eq(b);
  if (equal_nan && a.is_floating_point()) close = logical_or(close, a.isnan() * b.isnan());
  if (rtol == 0 && atol == 0) return close;
  // Bools compare in float32; integers keep their dtype for the difference,
  // as PyTorch's (so an overflowing difference is as far off there).
  const Tensor ca = a.dtype() == kBool ? a.to(kFloat32) : a;
  const Tensor cb = b.dtype() == kBool ? b.to(kFloat32) : b;
  const Tensor allowed = (cb * rtol).abs() + atol;
  const Tensor actual = (ca - cb).abs();
  return logical_or(close, actual.isfinite() * actual.le(allowed));
}

Tensor addcmul(const Tensor& input, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  return input + t1 * value * t2;  // PyTorch's order: (value * t1) * t2
}

Tensor addcdiv(const Tensor& input, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  STRIDE_CHECK(t1.is_floating_point() || t2.is_floating_point(), DTypeError,
               "[addcdiv] dividing integer tensors is not supported (PyTorch neither); convert "
               "tensor1 or tensor2 to a floating dtype.");
  return input + t1 * value / t2;
}

namespace {

// Point i of `steps` from start to end: the first half counts up from
// start, the second half down from end, so both ends are exact. As
// PyTorch's kernel: start and end first rounded to the dtype (`round`;
// truncated for the integers), then computed in C (float for float32 and
// the 16-bit floats, double otherwise); point() of each converted to the
// dtype.
template <class C, class Round, class Point>
Tensor evenly_spaced(
    double start, double end, int64_t steps, TensorOptions options, Round round, Point point) {
  std::vector<double> values(static_cast<size_t>(steps));
  const C first = round(C(start)), last = round(C(end));
  const C step = steps > 1 ? (last - first) / C(steps - 1) : C(0);
  const int64_t halfway = steps == 1 ? 1 : steps / 2;  // one point: start
  for (int64_t i = 0; i < steps; ++i) {
    const C v = i < halfway ? first + step * C(i) : last - step * C(steps - i - 1);
    values[size_t(i)] = point(double(v));
  }
  return tensor(values).to(options.dtype()).to(options.device());
}

template <class Point>
Tensor spaced(
    const char* op, double start, double end, int64_t steps, TensorOptions options, Point point) {
  STRIDE_CHECK(steps >= 0, ValueError, "[", op, "] takes a non-negative number of steps; got ",
               steps, ".");
  const ScalarType d = options.dtype();
  const auto exact = [](auto v) { return v; };
  switch (d) {
    case kFloat32:
      return evenly_spaced<float>(start, end, steps, options, exact, point);
    case kBFloat16:
      return evenly_spaced<float>(
          start, end, steps, options, [](float v) { return float(BFloat16(v)); }, point);
    case kFloat16:
      return evenly_spaced<float>(
          start, end, steps, options, [](float v) { return float(Half(v)); }, point);
    case kFloat64:
      return evenly_spaced<double>(start, end, steps, options, exact, point);
    default:  // integers and bool
      return evenly_spaced<double>(std::trunc(start), std::trunc(end), steps, options, exact,
                                   point);
  }
}

}  // namespace

Tensor linspace(double start, double end, int64_t steps, TensorOptions options) {
  return spaced("linspace", start, end, steps, options, [](double v) { return v; });
}

namespace {

// PyTorch's logspace of a floating dtype, which differs from linspace's
// points: start, end and their difference are rounded to the dtype
// (`round`), but the exponents are computed in double from the step
// (end - start) / (steps - 1) and each power is rounded once. One point is
// base^start of the unrounded start.
template <class Round>
Tensor floating_logspace(
    double start, double end, int64_t steps, double base, TensorOptions options, Round round) {
  if (steps == 1) return full({1}, std::pow(base, start), options);
  std::vector<double> values(static_cast<size_t>(steps));
  const double first = round(start), last = round(end);
  const double step = round(last - first) / double(steps - 1);
  for (int64_t i = 0; i < steps; ++i) {
    const double e = i < steps / 2 ? first + step * double(i) : last - step * double(steps - i - 1);
    values[size_t(i)] = std::pow(base, e);
  }
  return tensor(values).to(options.dtype()).to(options.device());
}

}  // namespace

Tensor logspace(double start, double end, int64_t steps, double base, TensorOptions options) {
  const auto power = [base](double v) { return std::pow(base, v); };
  STRIDE_CHECK(steps >= 0, ValueError, "[logspace] takes a non-negative number of steps; got ",
               steps, ".");
  switch (options.dtype()) {
    case kFloat64:
      return floating_logspace(start, end, steps, base, options, [](double v) { return v; });
    case kFloat32:
      return floating_logspace(start, end, steps, base, options,
                               [](double v) { return double(float(v)); });
    case kBFloat16:  // rounded to float first, as PyTorch's bfloat16 arithmetic
      return floating_logspace(start, end, steps, base, options,
                               [](double v) { return double(float(BFloat16(float(v)))); });
    case kFloat16:
      return floating_logspace(start, end, steps, base, options,
                               [](double v) { return double(float(Half(float(v)))); });
    default:  // integers and bool
      return spaced("logspace", start, end, steps, options, power);
  }
}

}  // namespace stride
