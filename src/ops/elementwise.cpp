// Elementwise ops. The ops of the lists in ops/op_list.h are expanded here
// from their lines (dtype rule, backward formula written with ops, so it is
// differentiable again) into the out-of-place function (which records the
// graph), the out= function and the in-place method; the others are written
// out. All run through run_elementwise, so through TensorIter and the op's
// kernel stub (the CPU's in src/backends/cpu/elementwise.cpp).
#include <numbers>

#include "autograd/node.h"
#include "ops/elementwise_common.h"
#include "ops/op_list.h"

namespace stride {

namespace detail {

ScalarType result_type(const Tensor& a, const Tensor& b) {
  const bool a0 = a.dim() == 0, b0 = b.dim() == 0;
  if (a0 == b0) return promote_types(a.dtype(), b.dtype());
  const Tensor& dimmed = a0 ? b : a;
  const Tensor& zero = a0 ? a : b;
  if (type_category(zero.dtype()) > type_category(dimmed.dtype())) return zero.dtype();
  return dimmed.dtype();
}

Tensor wrap_scalar(const Scalar& s, const Tensor& like) {
  const int sc = s.is_floating_point() ? 2 : s.is_integral() ? 1 : 0;
  ScalarType t = like.dtype();
  if (sc > type_category(t)) t = sc == 2 ? kFloat32 : kInt64;
  return scalar_tensor(s, TensorOptions(t).device(like.device()));
}

Tensor& assign_result(Tensor& out, const Tensor& result, ScalarType dtype, const char* op) {
  if (!out.defined()) {
    out = result.to(dtype);
    return out;
  }
  STRIDE_CHECK(out.dtype() == dtype, DTypeError, "[", op, "] out has dtype ",
               to_string(out.dtype()), " but the result is ", to_string(dtype),
               ". Hint: pass an out tensor of dtype ", to_string(dtype), ".");
  if (!(out.sizes() == result.sizes())) {
    STRIDE_CHECK(out.numel() == 0, ShapeError, "[", op, "] out ", shape_str(out.sizes()),
                 " does not match the broadcast shape ", shape_str(result.sizes()),
                 "; outputs with elements are never resized.");
    Tensor fresh = empty(result.sizes(), TensorOptions(dtype).device(result.device()));
    out.impl()->set_geometry(fresh.storage(), fresh.sizes(), fresh.strides(), 0);
  }
  out.copy_(result);
  return out;
}

}  // namespace detail

using detail::float_result;
using detail::result_type;
using detail::run_elementwise;
using detail::wrap_scalar;

using autograd::Grads;
using autograd::make_node;
using autograd::SavedTensor;

namespace {

// The sign of x as x's dtype (0 at 0): a constant in backward formulas.
Tensor sign_of(const Tensor& x) {
  NoGradGuard no_grad;
  return x.gt(0).to(x.dtype()) - x.lt(0).to(x.dtype());
}

Tensor mask_of(const Tensor& cond, ScalarType dtype) {
  NoGradGuard no_grad;
  return cond.to(dtype);
}

// d gelu / dx = Phi(x) + x phi(x), as an elementwise op of (g, x).
Tensor& gelu_backward_kernel(Tensor& out, const Tensor& g, const Tensor& x) {
  const ScalarType rt = result_type(g, x);
  return run_elementwise("gelu_backward", out, {g, x}, rt, rt, kernels::gelu_backward);
}

Tensor gelu_backward(const Tensor& g, const Tensor& x) {
  Tensor out;
  {
    NoGradGuard no_grad;
    gelu_backward_kernel(out, g, x);
  }
  if (auto node = make_node("gelu_backward", {&g, &x}, {&out})) {
    node->set_backward([sg = SavedTensor::input(g), sx = SavedTensor::input(x)](const Grads& gs) {
      const Tensor gg = gs[0], gv = sg.get(), xv = sx.get();
      // d/dx [Phi + x phi] = phi (2 - x^2), phi = exp(-x^2/2) / sqrt(2 pi)
      const Tensor pdf = exp(xv * xv * -0.5) * (std::numbers::inv_sqrtpi / std::numbers::sqrt2);
      return Grads{gelu_backward(gg, xv), gg * gv * pdf * (2.0 - xv * xv)};
    });
  }
  return out;
}

}  // namespace

// ---- unary ops (src/ops/op_list.h) ----
#define STRIDE_SAVE_x(in_, out_) SavedTensor::input(in_)
#define STRIDE_SAVE_y(in_, out_) SavedTensor::output(out_)

// One unary op: its kernel call (result dtype `rt_expr` of `input`), out=,
// the recorded out-of-place function and the in-place method.
#define STRIDE_DEFINE_UNARY(name, which, backward, rt_expr)                       \
  static Tensor& name##_kernel(Tensor& out, const Tensor& input) {                \
    const ScalarType rt = rt_expr;                                                \
    return run_elementwise(#name, out, {input}, rt, rt, kernels::name);           \
  }                                                                               \
  Tensor& name##_out(Tensor& out, const Tensor& input) {                          \
    autograd::check_no_grad_out(#name, {&input});                                 \
    return name##_kernel(out, input);                                             \
  }                                                                               \
  Tensor name(const Tensor& input) {                                              \
    Tensor out;                                                                   \
    {                                                                             \
      NoGradGuard no_grad;                                                        \
      name##_kernel(out, input);                                                  \
    }                                                                             \
    if (auto node = make_node(#name, {&input}, {&out})) {                         \
      node->set_backward([s = STRIDE_SAVE_##which(input, out)](const Grads& gs) { \
        const Tensor& g = gs[0];                                                  \
        const Tensor saved = s.get();                                             \
        [[maybe_unused]] const Tensor& x = saved;                                 \
        [[maybe_unused]] const Tensor& y = saved;                                 \
        return Grads{backward};                                                   \
      });                                                                         \
    }                                                                             \
    return out;                                                                   \
  }                                                                               \
  Tensor Tensor::name() const {                                                   \
    return stride::name(*this);                                                   \
  }                                                                               \
  Tensor& Tensor::name##_() {                                                     \
    if (autograd::check_inplace(*this, #name "_", {})) {                          \
      autograd::rebase_history(*this, stride::name(clone()));                     \
      return *this;                                                               \
    }                                                                             \
    Tensor self = *this;                                                          \
    name##_kernel(self, *this);                                                   \
    return *this;                                                                 \
  }
#define STRIDE_DEFINE_FLOAT_UNARY(name, expr, vexpr, which, backward, domain) \
  STRIDE_DEFINE_UNARY(name, which, backward, float_result(input.dtype()))
#define STRIDE_DEFINE_SAME_UNARY(name, expr, which, backward, domain) \
  STRIDE_DEFINE_UNARY(name, which, backward, input.dtype())
STRIDE_FLOAT_UNARY_OPS(STRIDE_DEFINE_FLOAT_UNARY)

STRIDE_SAME_UNARY_OPS(STRIDE_DEFINE_SAME_UNARY)
#undef STRIDE_DEFINE_SAME_UNARY
#undef STRIDE_DEFINE_FLOAT_UNARY
#undef STRIDE_DEFINE_UNARY

// ---- binary arithmetic (promoting) ----
static Tensor& add_kernel(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  const ScalarType rt = result_type(a, b);
  return run_elementwise("add", out, {a, b}, rt, rt, kernels::add, alpha);
}

static Tensor& sub_kernel(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  STRIDE_CHECK(a.dtype() != kBool || b.dtype() != kBool, DTypeError,
               "[sub] subtracting two bool tensors is not supported. Hint: use logical ops or "
               "convert with .to(kInt64).");
  const ScalarType rt = result_type(a, b);
  return run_elementwise("sub", out, {a, b}, rt, rt, kernels::sub, alpha);
}

#define STRIDE_DEFINE_BINARY(name, dispatch, expr)                              \
  static Tensor& name##_kernel(Tensor& out, const Tensor& a, const Tensor& b) { \
    const ScalarType rt = result_type(a, b);                                    \
    return run_elementwise(#name, out, {a, b}, rt, rt, kernels::name);          \
  }
STRIDE_BINARY_OPS(STRIDE_DEFINE_BINARY)
#undef STRIDE_DEFINE_BINARY

static Tensor& div_kernel(Tensor& out, const Tensor& a, const Tensor& b) {
  const ScalarType rt = float_result(result_type(a, b));  // true division
  return run_elementwise("div", out, {a, b}, rt, rt, kernels::div);
}

static Tensor& pow_kernel(Tensor& out, const Tensor& a, const Tensor& e) {
  const ScalarType rt = result_type(a, e);
  return run_elementwise("pow", out, {a, e}, rt, rt, kernels::pow);
}

namespace {

// Runs a binary kernel without recording; `out` is allocated.
template <class Kernel>
Tensor run_binary(Kernel kernel, const Tensor& a, const Tensor& b) {
  Tensor out;
  NoGradGuard no_grad;
  kernel(out, a, b);
  return out;
}

// Gradient of maximum/minimum: to the larger (smaller) side, split evenly on ties.
Grads extreme_backward(const Tensor& g, const Tensor& a, const Tensor& b, bool is_max) {
  Tensor a_wins, ties;
  {
    NoGradGuard no_grad;
    a_wins = (is_max ? a.gt(b) : a.lt(b)).to(g.dtype());
    ties = a.eq(b).to(g.dtype()) * 0.5;
  }
  Tensor wa = a_wins + ties;
  return {g * wa, g * (1.0 - wa)};
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  Tensor out = run_binary(
      [&](Tensor& o, const Tensor& x, const Tensor& y) { add_kernel(o, x, y, alpha); }, a, b);
  if (auto node = make_node("add", {&a, &b}, {&out})) {
    node->set_backward([alpha](const Grads& gs) {
      return Grads{gs[0], alpha.to_double() == 1.0 ? gs[0] : gs[0] * alpha};
    });
  }
  return out;
}

Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  Tensor out = run_binary(
      [&](Tensor& o, const Tensor& x, const Tensor& y) { sub_kernel(o, x, y, alpha); }, a, b);
  if (auto node = make_node("sub", {&a, &b}, {&out})) {
    node->set_backward([alpha](const Grads& gs) {
      return Grads{gs[0], gs[0] * -alpha.to_double()};
    });
  }
  return out;
}

Tensor mul(const Tensor& a, const Tensor& b) {
  Tensor out = run_binary(mul_kernel, a, b);
  if (auto node = make_node("mul", {&a, &b}, {&out})) {
    const bool need_a = autograd::requires_grad(a), need_b = autograd::requires_grad(b);
    node->set_backward([sa = need_b ? SavedTensor::input(a) : SavedTensor(),
                        sb = need_a ? SavedTensor::input(b) : SavedTensor()](const Grads& gs) {
      return Grads{sb.defined() ? gs[0] * sb.get() : Tensor(),
                   sa.defined() ? gs[0] * sa.get() : Tensor()};
    });
  }
  return out;
}

Tensor div(const Tensor& a, const Tensor& b) {
  Tensor out = run_binary(div_kernel, a, b);
  if (auto node = make_node("div", {&a, &b}, {&out})) {
    const bool need_b = autograd::requires_grad(b);
    node->set_backward([sa = need_b ? SavedTensor::input(a) : SavedTensor(),
                        sb = SavedTensor::input(b)](const Grads& gs) {
      const Tensor bv = sb.get();
      return Grads{gs[0] / bv, sa.defined() ? -gs[0] * sa.get() / (bv * bv) : Tensor()};
    });
  }
  return out;
}

Tensor pow(const Tensor& a, const Tensor& e) {
  Tensor out = run_binary(pow_kernel, a, e);
  if (auto node = make_node("pow", {&a, &e}, {&out})) {
    const bool need_e = autograd::requires_grad(e);
    node->set_backward([sa = SavedTensor::input(a), se = SavedTensor::input(e),
                        sy = need_e ? SavedTensor::output(out) : SavedTensor()](const Grads& gs) {
      const Tensor av = sa.get(), ev = se.get();
      Tensor zero_exp;
      {
        NoGradGuard no_grad;
        zero_exp = ev.eq(0);
      }
      // d a^e / da = e a^(e-1), defined as 0 where e == 0 (as PyTorch does).
      Tensor da = where(zero_exp, zeros_like(av), ev * pow(av, ev - 1.0));
      Tensor de = sy.defined() ? gs[0] * sy.get() * log(av) : Tensor();
      return Grads{gs[0] * da, de};
    });
  }
  return out;
}

Tensor pow(const Tensor& a, const Scalar& e) {
  return pow(a, wrap_scalar(e, a));
}

Tensor maximum(const Tensor& a, const Tensor& b) {
  Tensor out = run_binary(maximum_kernel, a, b);
  if (auto node = make_node("maximum", {&a, &b}, {&out})) {
    node->set_backward([sa = SavedTensor::input(a), sb = SavedTensor::input(b)](const Grads& gs) {
      return extreme_backward(gs[0], sa.get(), sb.get(), true);
    });
  }
  return out;
}

Tensor minimum(const Tensor& a, const Tensor& b) {
  Tensor out = run_binary(minimum_kernel, a, b);
  if (auto node = make_node("minimum", {&a, &b}, {&out})) {
    node->set_backward([sa = SavedTensor::input(a), sb = SavedTensor::input(b)](const Grads& gs) {
      return extreme_backward(gs[0], sa.get(), sb.get(), false);
    });
  }
  return out;
}

#define STRIDE_DEFINE_BINARY_OUT(name)                                \
  Tensor& name##_out(Tensor& out, const Tensor& a, const Tensor& b) { \
    autograd::check_no_grad_out(#name, {&a, &b});                     \
    return name##_kernel(out, a, b);                                  \
  }
STRIDE_DEFINE_BINARY_OUT(mul)
STRIDE_DEFINE_BINARY_OUT(div)
STRIDE_DEFINE_BINARY_OUT(pow)
STRIDE_DEFINE_BINARY_OUT(maximum)
STRIDE_DEFINE_BINARY_OUT(minimum)
#undef STRIDE_DEFINE_BINARY_OUT

Tensor& add_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  autograd::check_no_grad_out("add", {&a, &b});
  return add_kernel(out, a, b, alpha);
}

Tensor& sub_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  autograd::check_no_grad_out("sub", {&a, &b});
  return sub_kernel(out, a, b, alpha);
}

// ---- comparisons -> bool ----
#define STRIDE_DEFINE_COMPARISON(name, expr)                                             \
  Tensor& name##_out(Tensor& out, const Tensor& a, const Tensor& b) {                    \
    return run_elementwise(#name, out, {a, b}, result_type(a, b), kBool, kernels::name); \
  }                                                                                      \
  Tensor name(const Tensor& a, const Tensor& b) {                                        \
    Tensor out;                                                                          \
    return name##_out(out, a, b);                                                        \
  }                                                                                      \
  Tensor Tensor::name(const Tensor& other) const {                                       \
    return stride::name(*this, other);                                                   \
  }                                                                                      \
  Tensor Tensor::name(const Scalar& other) const {                                       \
    return stride::name(*this, wrap_scalar(other, *this));                               \
  }
STRIDE_COMPARISON_OPS(STRIDE_DEFINE_COMPARISON)
#undef STRIDE_DEFINE_COMPARISON

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
  autograd::check_no_grad_out("clamp", {&x});
  return clamp_kernel(out, x, lo, hi);
}

Tensor clamp(const Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  Tensor out;
  {
    NoGradGuard no_grad;
    clamp_kernel(out, x, lo, hi);
  }
  if (auto node = make_node("clamp", {&x}, {&out})) {
    node->set_backward([sx = SavedTensor::input(x), lo, hi](const Grads& gs) {
      const Tensor xv = sx.get();
      Tensor inside;
      {
        NoGradGuard no_grad;
        inside = ones_like(xv).to(kBool);
        if (lo) inside = where(xv.lt(wrap_scalar(*lo, xv)), zeros_like(inside), inside);
        if (hi) inside = where(xv.gt(wrap_scalar(*hi, xv)), zeros_like(inside), inside);
      }
      return Grads{gs[0] * inside.to(gs[0].dtype())};
    });
  }
  return out;
}

static Tensor& where_kernel(Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  STRIDE_CHECK(cond.dtype() == kBool, DTypeError, "[where] condition must be bool; got ",
               to_string(cond.dtype()), ". Hint: build it with a comparison such as x.gt(0).");
  const ScalarType rt = result_type(a, b);
  if (detail::is_16bit(rt)) {
    Tensor tmp;
    where_kernel(tmp, cond, a.to(kFloat32), b.to(kFloat32));
    return detail::assign_result(out, tmp, rt, "where");
  }
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
  autograd::check_no_grad_out("where", {&a, &b});
  return where_kernel(out, cond, a, b);
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  Tensor out;
  {
    NoGradGuard no_grad;
    where_kernel(out, cond, a, b);
  }
  if (auto node = make_node("where", {&a, &b}, {&out})) {
    node->set_backward([c = cond](const Grads& gs) {
      const Tensor zero = zeros_like(gs[0]);
      return Grads{where(c, gs[0], zero), where(c, zero, gs[0])};
    });
  }
  return out;
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, const Scalar& value) {
  STRIDE_CHECK(mask.dtype() == kBool, DTypeError, "[masked_fill] mask must be bool; got ",
               to_string(mask.dtype()), ".");
  STRIDE_CHECK(broadcast_shapes(x.sizes(), mask.sizes(), "masked_fill") == x.sizes(), ShapeError,
               "[masked_fill] mask ", shape_str(mask.sizes()), " cannot be broadcast to ",
               shape_str(x.sizes()), ".");
  return where(mask, scalar_tensor(value, x.options()), x);
}

Tensor& Tensor::masked_fill_(const Tensor& mask, const Scalar& value) {
  if (autograd::check_inplace(*this, "masked_fill_", {})) {
    autograd::rebase_history(*this, stride::masked_fill(clone(), mask, value));
    return *this;
  }
  STRIDE_CHECK(mask.dtype() == kBool, DTypeError, "[masked_fill] mask must be bool; got ",
               to_string(mask.dtype()), ".");
  Tensor self = *this;
  where_kernel(self, mask, scalar_tensor(value, options()), *this);
  return *this;
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

// ---- optimizer-style in-place updates ----
// With autograd recording they are computed from ops (differentiable); the
// kernels below are the fast path used by optimizers under NoGradGuard.
Tensor lerp(const Tensor& start, const Tensor& end, const Scalar& weight) {
  if (GradMode::is_enabled() && (autograd::requires_grad(start) || autograd::requires_grad(end))) {
    return start + (end - start) * weight;
  }
  Tensor out = start.clone();
  return out.lerp_(end, weight);
}

Tensor& Tensor::lerp_(const Tensor& end, const Scalar& weight) {
  if (autograd::check_inplace(*this, "lerp_", {&end})) {
    autograd::rebase_history(*this, stride::lerp(clone(), end, weight));
    return *this;
  }
  Tensor self = *this;
  const ScalarType rt = dtype();
  run_elementwise("lerp_", self, {*this, end}, rt, rt, kernels::lerp, weight);
  return *this;
}

Tensor& Tensor::addcmul_(const Tensor& t1, const Tensor& t2, const Scalar& value) {
  if (autograd::check_inplace(*this, "addcmul_", {&t1, &t2})) {
    autograd::rebase_history(*this, clone() + t1 * t2 * value);
    return *this;
  }
  Tensor self = *this;
  const ScalarType rt = dtype();
  run_elementwise("addcmul_", self, {*this, t1, t2}, rt, rt, kernels::addcmul, value);
  return *this;
}

Tensor& Tensor::addcdiv_(const Tensor& t1, const Tensor& t2, const Scalar& value) {
  if (autograd::check_inplace(*this, "addcdiv_", {&t1, &t2})) {
    autograd::rebase_history(*this, clone() + t1 / t2 * value);
    return *this;
  }
  Tensor self = *this;
  const ScalarType rt = dtype();
  run_elementwise("addcdiv_", self, {*this, t1, t2}, rt, rt, kernels::addcdiv, value);
  return *this;
}

// ---- Tensor methods and Scalar overloads ----
Tensor Tensor::add(const Tensor& other, const Scalar& alpha) const {
  return stride::add(*this, other, alpha);
}
Tensor Tensor::add(const Scalar& other) const {
  return stride::add(*this, wrap_scalar(other, *this));
}
Tensor Tensor::sub(const Tensor& other, const Scalar& alpha) const {
  return stride::sub(*this, other, alpha);
}
Tensor Tensor::sub(const Scalar& other) const {
  return stride::sub(*this, wrap_scalar(other, *this));
}
Tensor Tensor::mul(const Tensor& other) const {
  return stride::mul(*this, other);
}
Tensor Tensor::mul(const Scalar& other) const {
  return stride::mul(*this, wrap_scalar(other, *this));
}
Tensor Tensor::div(const Tensor& other) const {
  return stride::div(*this, other);
}
Tensor Tensor::div(const Scalar& other) const {
  return stride::div(*this, wrap_scalar(other, *this));
}
Tensor Tensor::pow(const Tensor& exponent) const {
  return stride::pow(*this, exponent);
}
Tensor Tensor::pow(const Scalar& exponent) const {
  return stride::pow(*this, exponent);
}
Tensor Tensor::maximum(const Tensor& other) const {
  return stride::maximum(*this, other);
}
Tensor Tensor::minimum(const Tensor& other) const {
  return stride::minimum(*this, other);
}
Tensor Tensor::clamp(std::optional<Scalar> lo, std::optional<Scalar> hi) const {
  return stride::clamp(*this, lo, hi);
}

// In-place binary ops: recorded per Note [In-place ops and autograd].
#define STRIDE_DEFINE_INPLACE_BINARY(name, call_kernel, out_of_place) \
  Tensor& Tensor::name(const Tensor& other) {                         \
    if (autograd::check_inplace(*this, #name, {&other})) {            \
      autograd::rebase_history(*this, out_of_place);                  \
      return *this;                                                   \
    }                                                                 \
    Tensor self = *this;                                              \
    call_kernel;                                                      \
    return *this;                                                     \
  }
STRIDE_DEFINE_INPLACE_BINARY(mul_, mul_kernel(self, *this, other), stride::mul(clone(), other))
STRIDE_DEFINE_INPLACE_BINARY(div_, div_kernel(self, *this, other), stride::div(clone(), other))
#undef STRIDE_DEFINE_INPLACE_BINARY

Tensor& Tensor::add_(const Tensor& other, const Scalar& alpha) {
  if (autograd::check_inplace(*this, "add_", {&other})) {
    autograd::rebase_history(*this, stride::add(clone(), other, alpha));
    return *this;
  }
  Tensor self = *this;
  add_kernel(self, *this, other, alpha);
  return *this;
}
Tensor& Tensor::sub_(const Tensor& other, const Scalar& alpha) {
  if (autograd::check_inplace(*this, "sub_", {&other})) {
    autograd::rebase_history(*this, stride::sub(clone(), other, alpha));
    return *this;
  }
  Tensor self = *this;
  sub_kernel(self, *this, other, alpha);
  return *this;
}
Tensor& Tensor::add_(const Scalar& other) {
  return add_(wrap_scalar(other, *this));
}
Tensor& Tensor::sub_(const Scalar& other) {
  return sub_(wrap_scalar(other, *this));
}
Tensor& Tensor::mul_(const Scalar& other) {
  return mul_(wrap_scalar(other, *this));
}
Tensor& Tensor::div_(const Scalar& other) {
  return div_(wrap_scalar(other, *this));
}
Tensor& Tensor::pow_(const Scalar& exponent) {
  const Tensor e = wrap_scalar(exponent, *this);
  if (autograd::check_inplace(*this, "pow_", {})) {
    autograd::rebase_history(*this, stride::pow(clone(), e));
    return *this;
  }
  Tensor self = *this;
  pow_kernel(self, *this, e);
  return *this;
}
Tensor& Tensor::clamp_(std::optional<Scalar> lo, std::optional<Scalar> hi) {
  if (autograd::check_inplace(*this, "clamp_", {})) {
    autograd::rebase_history(*this, stride::clamp(clone(), lo, hi));
    return *this;
  }
  Tensor self = *this;
  clamp_kernel(self, *this, lo, hi);
  return *this;
}

Tensor operator+(const Scalar& a, const Tensor& b) {
  return add(wrap_scalar(a, b), b);
}
Tensor operator-(const Scalar& a, const Tensor& b) {
  return sub(wrap_scalar(a, b), b);
}
Tensor operator*(const Scalar& a, const Tensor& b) {
  return mul(wrap_scalar(a, b), b);
}
Tensor operator/(const Scalar& a, const Tensor& b) {
  return div(wrap_scalar(a, b), b);
}

}  // namespace stride
