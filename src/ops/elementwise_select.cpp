// The elementwise ops that select or combine more than two operands: clamp
// (scalar and tensor bounds), where, masked_fill, tril/triu, div with a
// rounding mode, and lerp, addcmul and addcdiv with their in-place kernels
// for the optimizers. As in elementwise.cpp, each runs through
// run_elementwise, so through TensorIter and the op's kernel stub.
#include <optional>
#include <string_view>

#include "ops/apply.h"
#include "ops/elementwise_common.h"

namespace stride {

using detail::apply;
using detail::apply_inplace;
using detail::apply_out;
using detail::Op;
using detail::out_of_place;
using detail::result_type;
using detail::run_elementwise;
using detail::wrap_scalar;

using autograd::Grads;
using autograd::SavedTensor;

// ---- clamp, where, masked_fill ----
static Tensor& clamp_kernel(Tensor& out,
                            const Tensor& x,
                            std::optional<Scalar> lo,
                            std::optional<Scalar> hi) {
  STRIDE_CHECK(lo || hi, ValueError, "[clamp] at least one of min and max must be given.");
  ScalarType rt = x.dtype();
  if (lo) rt = result_type(x, wrap_scalar(*lo, x));
  if (hi) rt = promote_types(rt, result_type(x, wrap_scalar(*hi, x)));
  return run_elementwise("clamp", out, {x}, rt, rt, kernels::clamp, lo, hi);
}

Tensor& clamp_out(Tensor& out,
                  const Tensor& x,
                  std::optional<Scalar> lo,
                  std::optional<Scalar> hi) {
  return apply_out(Op::clamp, out, {&x}, [&]() -> Tensor& { return clamp_kernel(out, x, lo, hi); });
}

Tensor clamp(const Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  return apply(
      Op::clamp, {&x}, [&] { return out_of_place(clamp_kernel, x, lo, hi); },
      [&](const Tensor&) {
        return [sx = SavedTensor::input(x), lo, hi](const Grads& gs) {
          const Tensor xv = sx.get();
          Tensor inside;
          {
            NoGradGuard no_grad;
            inside = ones_like(xv).to(kBool);
            if (lo) inside = where(xv.lt(wrap_scalar(*lo, xv)), zeros_like(inside), inside);
            if (hi) inside = where(xv.gt(wrap_scalar(*hi, xv)), zeros_like(inside), inside);
          }
          return Grads{gs[0] * inside.to(gs[0].dtype())};
        };
      });
}

static Tensor& where_kernel(Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  STRIDE_CHECK(cond.dtype() == kBool, DTypeError, "[where] condition must be bool; got ",
               to_string(cond.dtype()), ". Hint: build it with a comparison such as x.gt(0).");
  const ScalarType rt = result_type(a, b);
  const Tensor ac = a.to(rt), bc = b.to(rt);
  TensorIter iter = TensorIterConfig("where")
                        .add_output(out)
                        .add_input(cond)
                        .add_input(ac)
                        .add_input(bc)
                        .output_dtype(rt)
                        .check_all_same_dtype(false)
                        .build();
  kernels::where(iter.output().device(), iter, rt);
  return out;
}

Tensor& where_out(Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  return apply_out(Op::where, out, {&cond, &a, &b},
                   [&]() -> Tensor& { return where_kernel(out, cond, a, b); });
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  return apply(
      Op::where, {&cond, &a, &b}, [&] { return out_of_place(where_kernel, cond, a, b); },
      [&](const Tensor&) {
        return [c = cond](const Grads& gs) {
          const Tensor zero = zeros_like(gs[0]);
          return Grads{Tensor(), where(c, gs[0], zero), where(c, zero, gs[0])};
        };
      });
}

// Out of place, x and mask broadcast together (the result may be larger
// than x), as PyTorch's.
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Scalar& value) {
  STRIDE_CHECK(mask.dtype() == kBool, DTypeError, "[masked_fill] mask must be bool; got ",
               to_string(mask.dtype()), ".");
  return where(mask, scalar_tensor(value, x.options()), x);
}

// A 0-d tensor value (which may require grad: its gradient is the sum of
// the filled positions' gradients).
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& value) {
  STRIDE_CHECK(value.dim() == 0, ShapeError,
               "[masked_fill] value must be a number or a 0-d tensor; got shape ",
               shape_str(value.sizes()), ".");
  STRIDE_CHECK(mask.dtype() == kBool, DTypeError, "[masked_fill] mask must be bool; got ",
               to_string(mask.dtype()), ".");
  return where(mask, value.to(x.dtype()), x);
}

Tensor& Tensor::masked_fill_(const Tensor& mask, const Scalar& value) {
  STRIDE_CHECK(broadcast_shapes(sizes(), mask.sizes(), "masked_fill_") == sizes(), ShapeError,
               "[masked_fill_] mask ", shape_str(mask.sizes()), " cannot be broadcast to ",
               shape_str(sizes()), "; in place, the mask must fit self.");
  return apply_inplace(
      Op::masked_fill, *this, {&mask}, [&] { return stride::masked_fill(clone(), mask, value); },
      [&] {
        STRIDE_CHECK(mask.dtype() == kBool, DTypeError, "[masked_fill] mask must be bool; got ",
                     to_string(mask.dtype()), ".");
        Tensor self = *this;
        where_kernel(self, mask, scalar_tensor(value, options()), *this);
      });
}

Tensor Tensor::masked_fill(const Tensor& mask, const Scalar& value) const {
  return stride::masked_fill(*this, mask, value);
}

// ---- tril / triu: keep elements on one side of a diagonal of the last two dims ----
namespace {

// True where j - i is beyond `diagonal` (the part to zero), broadcast over batch dims.
Tensor diagonal_mask(const Tensor& x, int64_t diagonal, bool upper_part, const char* op) {
  STRIDE_CHECK(x.dim() >= 2, ShapeError, "[", op, "] needs at least 2 dims; got shape ",
               shape_str(x.sizes()), ".");
  const int64_t rows = x.size(-2), cols = x.size(-1);
  Tensor i = arange(rows).view({rows, 1}).to(x.device());
  Tensor j = arange(cols).view({1, cols}).to(x.device());
  Tensor d = sub(j, i);
  const Tensor bound = scalar_tensor(diagonal, TensorOptions(kInt64).device(x.device()));
  return upper_part ? gt(d, bound) : lt(d, bound);
}

}  // namespace

Tensor tril(const Tensor& x, int64_t diagonal) {
  return masked_fill(x, diagonal_mask(x, diagonal, true, "tril"), 0);
}
Tensor triu(const Tensor& x, int64_t diagonal) {
  return masked_fill(x, diagonal_mask(x, diagonal, false, "triu"), 0);
}
Tensor& Tensor::tril_(int64_t diagonal) {
  return masked_fill_(diagonal_mask(*this, diagonal, true, "tril"), 0);
}
Tensor& Tensor::triu_(int64_t diagonal) {
  return masked_fill_(diagonal_mask(*this, diagonal, false, "triu"), 0);
}
Tensor Tensor::tril(int64_t diagonal) const {
  return stride::tril(*this, diagonal);
}
Tensor Tensor::triu(int64_t diagonal) const {
  return stride::triu(*this, diagonal);
}

// Tensor bounds: max(min(x, hi), lo) in the promoted dtype; NaN in x or a
// bound gives NaN.
Tensor clamp(const Tensor& x, const std::optional<Tensor>& lo, const std::optional<Tensor>& hi) {
  STRIDE_CHECK(lo || hi, ValueError, "[clamp] needs at least one of min and max.");
  Tensor r = x;
  if (lo) r = maximum(r, *lo);
  if (hi) r = minimum(r, *hi);
  return r;
}

// div with PyTorch's rounding_mode: "trunc" rounds the quotient toward zero,
// "floor" down (math::div_floor), each computed once in the operands'
// promoted dtype (16-bit floats in float, rounded once), so integers keep
// their dtype and exact quotients. But PyTorch truncates a 16-bit quotient
// after rounding it to the 16-bit dtype (-13.97 rounds to -14 first). Its
// gradient is zero for both.
static Tensor& rounded_div_kernel(Tensor& out, const Tensor& a, const Tensor& b, bool trunc) {
  const ScalarType rt = result_type(a, b);
  if (trunc && detail::is_16bit(rt))
    return detail::assign_result(out, div(a, b).trunc(), rt, "div");
  return run_elementwise("div", out, {a, b}, rt, rt,
                         trunc ? kernels::div_trunc : kernels::div_floor);
}

Tensor div(const Tensor& a, const Tensor& b, std::string_view rounding_mode) {
  const bool trunc = rounding_mode == "trunc";
  STRIDE_CHECK(trunc || rounding_mode == "floor", ValueError,
               "[div] rounding_mode must be 'trunc', 'floor' or None; got '", rounding_mode, "'.");
  return apply(
      Op::div, {&a, &b}, [&] { return out_of_place(rounded_div_kernel, a, b, trunc); },
      [&](const Tensor&) {
        return [](const Grads& gs) { return Grads{zeros_like(gs[0]), zeros_like(gs[0])}; };
      });
}

// ---- optimizer-style in-place updates ----
// With autograd recording they are computed from ops (differentiable); the
// kernels below are the fast path used by optimizers under NoGradGuard.
Tensor lerp(const Tensor& start, const Tensor& end, const Scalar& weight) {
  if (GradMode::is_enabled() && (autograd::requires_grad(start) || autograd::requires_grad(end))) {
    return start + (end - start) * weight;
  }
  // A new tensor of the broadcast shape (start may be the smaller one).
  const DimVector shape = broadcast_shapes(start.sizes(), end.sizes(), "lerp");
  Tensor out =
      IntArrayRef(shape) == start.sizes() ? start.clone() : start.expand(shape).contiguous();
  return out.lerp_(end, weight);
}

// A tensor weight (broadcast with start and end), with PyTorch's two-sided
// form, exact at both ends.
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight) {
  const Tensor diff = end - start;
  return where(weight.lt(0.5), start + weight * diff, end - diff * (1.0 - weight));
}

Tensor& Tensor::lerp_(const Tensor& end, const Scalar& weight) {
  return apply_inplace(
      Op::lerp, *this, {&end}, [&] { return stride::lerp(clone(), end, weight); },
      [&] {
        Tensor self = *this;
        run_elementwise("lerp_", self, {*this, end}, dtype(), dtype(), kernels::lerp, weight);
      });
}

Tensor& Tensor::addcmul_(const Tensor& t1, const Tensor& t2, const Scalar& value) {
  return apply_inplace(
      Op::addcmul, *this, {&t1, &t2}, [&] { return clone() + t1 * t2 * value; },
      [&] {
        Tensor self = *this;
        run_elementwise("addcmul_", self, {*this, t1, t2}, dtype(), dtype(), kernels::addcmul,
                        value);
      });
}

Tensor& Tensor::addcdiv_(const Tensor& t1, const Tensor& t2, const Scalar& value) {
  return apply_inplace(
      Op::addcdiv, *this, {&t1, &t2}, [&] { return clone() + t1 / t2 * value; },
      [&] {
        Tensor self = *this;
        run_elementwise("addcdiv_", self, {*this, t1, t2}, dtype(), dtype(), kernels::addcdiv,
                        value);
      });
}

Tensor& Tensor::clamp_(std::optional<Scalar> lo, std::optional<Scalar> hi) {
  return apply_inplace(
      Op::clamp, *this, {}, [&] { return stride::clamp(clone(), lo, hi); },
      [&] {
        Tensor self = *this;
        clamp_kernel(self, *this, lo, hi);
      });
}

}  // namespace stride
