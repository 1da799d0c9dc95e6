// The activations of torch.nn.functional beyond relu, silu and gelu, each
// composed of ops (listed as Composite in src/core/op_list.h), so that
// autograd, double backward and every device come with the ops. Each is
// written so that PyTorch's value and its gradient at the kinks come out of
// the composition: a `where` picks the branch PyTorch's kernel picks at a
// tie, and a branch that would overflow where it is not taken (exp of a
// large x) is fed a clamped x, since a `where` passes it a zero gradient and
// 0 * inf would be NaN.
#include <cmath>

#include "core/check.h"
#include "ops/apply.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"

namespace stride::nn::functional {

namespace {

using ::stride::detail::check_dtype_rule;
using ::stride::detail::Op;

// x clamped into [lo, hi] with PyTorch's hardtanh gradient: x's gradient
// strictly inside, none at the bounds (clamp's includes them) or for NaN
// (which stays NaN). An integer x keeps its dtype (the bounds are truncated
// to integers, where clamp would promote to float for float bounds).
Tensor clamp_open(const Tensor& x, const Scalar& lo, const Scalar& hi) {
  const bool integral = !x.is_floating_point();
  const Scalar l = integral ? Scalar(lo.to_int64()) : lo, h = integral ? Scalar(hi.to_int64()) : hi;
  return where(x.gt(l) * x.lt(h), x, x.clamp(l, h).detach());
}

// x > 0 ? scale x : alpha scale (exp(x input_scale) - 1): PyTorch's elu
// kernel, which elu, selu and celu share. At x = 0 the exponential branch
// is taken, so its gradient there is alpha * scale * input_scale, as
// PyTorch's.
Tensor elu_form(const Tensor& x, double alpha, double scale, double input_scale) {
  const Tensor negative = expm1(x.clamp(std::nullopt, 0.0) * input_scale) * (alpha * scale);
  return where(x.gt(0.0), scale == 1.0 ? x : x * scale, negative);
}

}  // namespace

Tensor leaky_relu(const Tensor& x, double negative_slope) {
  check_dtype_rule(Op::leaky_relu, x);
  return where(x.gt(0.0), x, x * negative_slope);
}

Tensor elu(const Tensor& x, double alpha) {
  check_dtype_rule(Op::elu, x);
  return elu_form(x, alpha, 1.0, 1.0);
}

Tensor selu(const Tensor& x) {
  check_dtype_rule(Op::selu, x);
  // The constants of the SELU paper, as PyTorch writes them.
  constexpr double kAlpha = 1.6732632423543772848170429916717;
  constexpr double kScale = 1.0507009873554804934193349852946;
  return elu_form(x, kAlpha, kScale, 1.0);
}

Tensor celu(const Tensor& x, double alpha) {
  check_dtype_rule(Op::celu, x);
  STRIDE_CHECK(alpha != 0.0, ValueError,
               "[celu] alpha must not be 0: celu divides x by it. Hint: alpha = 1 is elu.");
  return elu_form(x, alpha, 1.0, 1.0 / alpha);
}

Tensor softplus(const Tensor& x, double beta, double threshold) {
  check_dtype_rule(Op::softplus, x);
  const Tensor bx = x * beta;
  const Tensor smooth = log1p(exp(bx.clamp(std::nullopt, threshold))) / beta;
  return where(bx.gt(threshold), x, smooth);
}

Tensor hardtanh(const Tensor& x, const Scalar& min_val, const Scalar& max_val) {
  check_dtype_rule(Op::hardtanh, x);
  STRIDE_CHECK(min_val.to_double() <= max_val.to_double(), ValueError,
               "[hardtanh] min_val cannot be greater than max_val; got min_val = ",
               min_val.to_double(), " and max_val = ", max_val.to_double(), ".");
  return clamp_open(x, min_val, max_val);
}

Tensor relu6(const Tensor& x) {
  check_dtype_rule(Op::relu6, x);
  return clamp_open(x, 0, 6);
}

Tensor hardswish(const Tensor& x) {
  check_dtype_rule(Op::hardswish, x);
  // PyTorch's value x * min(max(x + 3, 0), 6) / 6 (so -inf gives NaN and
  // x <= -3 a signed zero) and its gradient: 0 for x <= -3, x / 3 + 0.5
  // below 3, 1 from 3 on. The middle branch reads x clamped, so that an
  // infinite x there gives no 0 * inf.
  const Tensor middle = x.clamp(-3.0, 3.0);
  return where(x.le(-3.0), x * 0.0, where(x.lt(3.0), middle * (middle + 3.0) / 6.0, x));
}

Tensor hardsigmoid(const Tensor& x) {
  check_dtype_rule(Op::hardsigmoid, x);
  return clamp_open(x + 3.0, 0.0, 6.0) / 6.0;
}

Tensor mish(const Tensor& x) {
  check_dtype_rule(Op::mish, x);
  // PyTorch's mish has no threshold; above 20, tanh(softplus(x)) is 1 in
  // float64 already, so softplus's threshold changes no value.
  return x * tanh(softplus(x));
}

Tensor logsigmoid(const Tensor& x) {
  check_dtype_rule(Op::logsigmoid, x);
  // PyTorch's min(x, 0) - log1p(exp(-|x|)), split at 0 so that the
  // gradient at 0 is 1/2 (|x| would give 0 there).
  const Tensor negative = x - log1p(exp(x.clamp(std::nullopt, 0.0)));
  const Tensor positive = -log1p(exp(-x.clamp(0.0, std::nullopt)));
  return where(x.lt(0.0), negative, positive);
}

Tensor softsign(const Tensor& x) {
  check_dtype_rule(Op::softsign, x);
  return x / (x.abs() + 1);
}

Tensor tanhshrink(const Tensor& x) {
  check_dtype_rule(Op::tanhshrink, x);
  return x - tanh(x);
}

Tensor softshrink(const Tensor& x, double lambd) {
  check_dtype_rule(Op::softshrink, x);
  STRIDE_CHECK(lambd >= 0, ValueError, "[softshrink] lambd must be >= 0; got ", lambd, ".");
  // x * 0 in the middle keeps NaN (and -0.0) as PyTorch's kernel does.
  return where(x.gt(lambd), x - lambd, where(x.lt(-lambd), x + lambd, x * 0.0));
}

Tensor hardshrink(const Tensor& x, double lambd) {
  check_dtype_rule(Op::hardshrink, x);
  // x where |x| > lambd; elsewhere 0 for numbers and NaN for NaN, with no
  // gradient (PyTorch's).
  const Tensor inside = x.abs().le(lambd);
  return where(x.abs().gt(lambd), x, x.masked_fill(inside, 0.0).detach());
}

Tensor threshold(const Tensor& x, const Scalar& threshold, const Scalar& value) {
  check_dtype_rule(Op::threshold, x);
  return x.masked_fill(x.le(threshold), value);
}

Tensor glu(const Tensor& x, int64_t dim) {
  check_dtype_rule(Op::glu, x);
  STRIDE_CHECK(x.dim() > 0, ShapeError,
               "[glu] expected an input with at least one dim to halve; got a 0-d tensor.");
  const int64_t d = dim < 0 ? dim + x.dim() : dim;
  STRIDE_CHECK(d >= 0 && d < x.dim(), IndexError, "[glu] dim ", dim,
               " is out of range for an input of ", x.dim(), " dims.");
  const int64_t n = x.size(d);
  STRIDE_CHECK(n % 2 == 0, ShapeError, "[glu] the halved dim must have an even size; got dim ", dim,
               " of size ", n, " in ", shape_str(x.sizes()), ".");
  return x.narrow(d, 0, n / 2) * sigmoid(x.narrow(d, n / 2, n / 2));
}

Tensor prelu(const Tensor& x, const Tensor& weight) {
  check_dtype_rule(Op::prelu, x);
  STRIDE_CHECK(weight.dim() <= 1, ShapeError,
               "[prelu] expected weight to be one value or a 1-d tensor of one per channel; got "
               "weight ",
               shape_str(weight.sizes()), ".");
  const int64_t channels = x.dim() >= 2 ? x.size(1) : 1;
  STRIDE_CHECK(weight.numel() == 1 || weight.numel() == channels, ShapeError,
               "[prelu] expected 1 weight or one per channel (dim 1 of input ",
               shape_str(x.sizes()), ": ", channels, "); got ", weight.numel(), ".");
  // One weight broadcasts as a 0-d tensor; one per channel as (C, 1, ...).
  Tensor w;
  if (weight.numel() == 1) {
    w = weight.reshape({});
  } else {
    DimVector shape(size_t(x.dim() - 1), 1);
    shape[0] = channels;
    w = weight.view(shape);
  }
  return where(x.gt(0.0), x, w * x);
}

Tensor softmin(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype) {
  // dtype= casts first, so an integer input with a floating dtype is taken.
  const Tensor y = dtype ? x.to(*dtype) : x;
  check_dtype_rule(Op::softmin, y);
  return stride::softmax(-y, dim);
}

}  // namespace stride::nn::functional
