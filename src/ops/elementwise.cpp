// Elementwise ops. The ops of the lists in core/op_list.h are expanded here
// from their lines (dtype rule, backward formula written with ops, so it is
// differentiable again) into the out-of-place function (which records the
// graph), the out= function and the in-place method; the others are written
// out. All run through run_elementwise, so through TensorIter and the op's
// kernel stub (the CPU's in src/backends/cpu/elementwise.cpp).
#include <limits>
#include <numbers>

#include "core/op_list.h"
#include "ops/apply.h"
#include "ops/complex.h"
#include "ops/elementwise_common.h"
#include "ops/special_grads.h"

namespace stride {

namespace detail {

ScalarType result_type(const Tensor& a, const Tensor& b) {
  const bool a0 = a.dim() == 0, b0 = b.dim() == 0;
  if (a0 == b0) return promote_types(a.dtype(), b.dtype());
  const Tensor& dimmed = a0 ? b : a;
  const Tensor& zero = a0 ? a : b;
  // float64 beside a complex64 0-d tensor widens to complex128, as PyTorch.
  if (type_category(zero.dtype()) > type_category(dimmed.dtype())) {
    return promote_types(zero.dtype(), dimmed.dtype());
  }
  return dimmed.dtype();
}

Tensor wrap_scalar(const Scalar& s, const Tensor& like) {
  const int sc = s.is_complex() ? 3 : s.is_floating_point() ? 2 : s.is_integral() ? 1 : 0;
  ScalarType t = like.dtype();
  if (sc == 3) {
    t = to_complex_dtype(t);
  } else if (sc > type_category(t)) {
    t = sc == 2 ? kFloat32 : kInt64;
  }
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

using detail::bessel_i1_derivative;
using detail::bessel_i1e_derivative;
using detail::float_result;
using detail::incomplete_gamma_density;
using detail::kInvSqrt2Pi;
using detail::out_of_place;
using detail::refuse_gradient;
using detail::result_type;
using detail::run_elementwise;
using detail::sinc_derivative;
using detail::wrap_scalar;

using detail::apply;
using detail::apply_inplace;
using detail::apply_out;
using detail::apply_without_grad;
using detail::Op;
using detail::OpScope;

using autograd::Grads;
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
  return apply(
      Op::gelu_backward, {&g, &x}, [&] { return out_of_place(gelu_backward_kernel, g, x); },
      [&](const Tensor&) {
        return [sg = SavedTensor::input(g), sx = SavedTensor::input(x)](const Grads& gs) {
          const Tensor gg = gs[0], gv = sg.get(), xv = sx.get();
          // d/dx [Phi + x phi] = phi (2 - x^2), phi = exp(-x^2/2) / sqrt(2 pi)
          const Tensor pdf = exp(xv * xv * -0.5) * (std::numbers::inv_sqrtpi / std::numbers::sqrt2);
          return Grads{gelu_backward(gg, xv), gg * gv * pdf * (2.0 - xv * xv)};
        };
      });
}

}  // namespace

namespace {

// PyTorch's sign and square take bool, which the same-dtype kernels refuse:
// sign keeps it (the identity), square promotes it to int64, as pow(x, 2).
bool takes_bool_as_pytorch(Op op, const Tensor& input) {
  return input.dtype() == kBool && (op == Op::sign || op == Op::square);
}
Tensor bool_unary(Op op, const Tensor& input) {
  return op == Op::sign ? input.clone() : input.to(kInt64).square();
}

}  // namespace

// ---- unary ops (src/core/op_list.h) ----
#define STRIDE_SAVE_x(in_, out_) SavedTensor::input(in_)
#define STRIDE_SAVE_y(in_, out_) SavedTensor::output(out_)

// One unary op: its kernel call (result dtype `rt_expr` of `input`), out=
// and the recorded out-of-place function...
#define STRIDE_DEFINE_UNARY_FUNCTIONS(name, which, backward, rt_expr)               \
  static Tensor& name##_kernel(Tensor& out, const Tensor& input) {                  \
    const ScalarType rt = rt_expr;                                                  \
    return run_elementwise(#name, out, {input}, rt, rt, kernels::name);             \
  }                                                                                 \
  Tensor& name##_out(Tensor& out, const Tensor& input) {                            \
    return apply_out(Op::name, out, {&input},                                       \
                     [&]() -> Tensor& { return name##_kernel(out, input); });       \
  }                                                                                 \
  Tensor name(const Tensor& input) {                                                \
    if (input.is_complex()) return detail::complex_unary(Op::name, input);          \
    if (takes_bool_as_pytorch(Op::name, input)) return bool_unary(Op::name, input); \
    return apply(                                                                   \
        Op::name, {&input}, [&] { return out_of_place(name##_kernel, input); },     \
        [&]([[maybe_unused]] const Tensor& out) {                                   \
          return [s = STRIDE_SAVE_##which(input, out)](const Grads& gs) {           \
            const Tensor& g = gs[0];                                                \
            const Tensor saved = s.get();                                           \
            [[maybe_unused]] const Tensor& x = saved;                               \
            [[maybe_unused]] const Tensor& y = saved;                               \
            return Grads{backward};                                                 \
          };                                                                        \
        });                                                                         \
  }
// ...and the Tensor method and in-place method.
#define STRIDE_DEFINE_UNARY_METHODS(name)                           \
  Tensor Tensor::name() const {                                     \
    return stride::name(*this);                                     \
  }                                                                 \
  Tensor& Tensor::name##_() {                                       \
    return apply_inplace(                                           \
        Op::name, *this, {}, [&] { return stride::name(clone()); }, \
        [&] {                                                       \
          Tensor self = *this;                                      \
          name##_kernel(self, *this);                               \
        });                                                         \
  }
#define STRIDE_DEFINE_UNARY(name, which, backward, rt_expr)     \
  STRIDE_DEFINE_UNARY_FUNCTIONS(name, which, backward, rt_expr) \
  STRIDE_DEFINE_UNARY_METHODS(name)
#define STRIDE_DEFINE_FLOAT_UNARY(name, which, backward, domain) \
  STRIDE_DEFINE_UNARY(name, which, backward, float_result(input.dtype()))
#define STRIDE_DEFINE_SAME_UNARY(name, which, backward, domain) \
  STRIDE_DEFINE_UNARY(name, which, backward, input.dtype())
STRIDE_FLOAT_UNARY_OPS(STRIDE_DEFINE_FLOAT_UNARY)

STRIDE_SAME_UNARY_OPS(STRIDE_DEFINE_SAME_UNARY)
#undef STRIDE_DEFINE_SAME_UNARY
#undef STRIDE_DEFINE_FLOAT_UNARY
#undef STRIDE_DEFINE_UNARY

// The special functions (core/op_list.h): functions of their names; the
// torch.* ones among them (not torch.special's) are Tensor methods too.
#define STRIDE_DEFINE_SPECIAL_UNARY(name, which, backward, domain) \
  STRIDE_DEFINE_UNARY_FUNCTIONS(name, which, backward, float_result(input.dtype()))
STRIDE_SPECIAL_UNARY_OPS(STRIDE_DEFINE_SPECIAL_UNARY)
#undef STRIDE_DEFINE_SPECIAL_UNARY
STRIDE_DEFINE_UNARY_METHODS(lgamma)
STRIDE_DEFINE_UNARY_METHODS(digamma)
STRIDE_DEFINE_UNARY_METHODS(erfinv)
STRIDE_DEFINE_UNARY_METHODS(i0)
STRIDE_DEFINE_UNARY_METHODS(sinc)
#undef STRIDE_DEFINE_UNARY_METHODS
#undef STRIDE_DEFINE_UNARY_FUNCTIONS

// Those without a gradient: kernel, out= and the function, which records
// nothing (its result does not require grad, as PyTorch's).
#define STRIDE_DEFINE_SPECIAL_UNARY_NOGRAD(name, domain)                                   \
  static Tensor& name##_kernel(Tensor& out, const Tensor& input) {                         \
    const ScalarType rt = float_result(input.dtype());                                     \
    return run_elementwise(#name, out, {input}, rt, rt, kernels::name);                    \
  }                                                                                        \
  Tensor& name##_out(Tensor& out, const Tensor& input) {                                   \
    return apply_out(Op::name, out, {&input},                                              \
                     [&]() -> Tensor& { return name##_kernel(out, input); });              \
  }                                                                                        \
  Tensor name(const Tensor& input) {                                                       \
    return detail::apply_without_grad(Op::name, {&input},                                  \
                                      [&] { return out_of_place(name##_kernel, input); }); \
  }
STRIDE_SPECIAL_UNARY_NOGRAD_OPS(STRIDE_DEFINE_SPECIAL_UNARY_NOGRAD)
#undef STRIDE_DEFINE_SPECIAL_UNARY_NOGRAD

// ---- binary arithmetic (promoting) ----
namespace {

// PyTorch's mul and div of a 16-bit tensor `a` by a wider 0-d `b` (a
// wrapped number such as `x * 0.1`) read b in float instead of rounding it
// to a's dtype first (its add and sub round it), and round the result once:
// computing the op in float32 and rounding gives those bits. (maximum and
// minimum give the same bits either way.)
bool reads_scalar_in_float(const Tensor& a, const Tensor& b, ScalarType rt) {
  return detail::is_16bit(rt) && a.dim() > 0 && b.dim() == 0 && b.dtype() != rt;
}
// A number multiplying or dividing `like`: wrap_scalar's tensor, but a
// floating number stays float64 beside a 16-bit tensor with dims, so that
// mul and div read it in float as PyTorch does (the result keeps like's
// dtype). Beside a 0-d tensor it is rounded to like's dtype first: two 0-d
// operands promote to the wider dtype, which a wrapped number must not.
Tensor wrap_factor(const Scalar& s, const Tensor& like) {
  if (s.is_floating_point() && detail::is_16bit(like.dtype()) && like.dim() > 0) {
    return scalar_tensor(s, TensorOptions(kFloat64).device(like.device()));
  }
  return wrap_scalar(s, like);
}
template <class Kernel>
Tensor& computed_in_float(
    const char* op, Tensor& out, Kernel kernel, const Tensor& a, const Tensor& b, ScalarType rt) {
  Tensor wide;
  kernel(wide, a.to(kFloat32), b.to(kFloat32));
  return detail::assign_result(out, wide, rt, op);
}

}  // namespace

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

#define STRIDE_DEFINE_BINARY(name, dispatch)                                    \
  static Tensor& name##_kernel(Tensor& out, const Tensor& a, const Tensor& b) { \
    const ScalarType rt = result_type(a, b);                                    \
    if (reads_scalar_in_float(a, b, rt))                                        \
      return computed_in_float(#name, out, name##_kernel, a, b, rt);            \
    return run_elementwise(#name, out, {a, b}, rt, rt, kernels::name);          \
  }
STRIDE_BINARY_OPS(STRIDE_DEFINE_BINARY)
#undef STRIDE_DEFINE_BINARY

// The binary ops computing in floating point: kernel, out=, the recorded
// function (its gradients from the list)...
#define STRIDE_DEFINE_FLOAT_BINARY_FUNCTIONS(name, grad_a, grad_b, domain)                 \
  static Tensor& name##_kernel(Tensor& out, const Tensor& a, const Tensor& b) {            \
    const ScalarType rt = float_result(result_type(a, b));                                 \
    return run_elementwise(#name, out, {a, b}, rt, rt, kernels::name);                     \
  }                                                                                        \
  Tensor& name##_out(Tensor& out, const Tensor& a, const Tensor& b) {                      \
    return apply_out(Op::name, out, {&a, &b},                                              \
                     [&]() -> Tensor& { return name##_kernel(out, a, b); });               \
  }                                                                                        \
  Tensor name(const Tensor& a_in, const Tensor& b_in) {                                    \
    return apply(                                                                          \
        Op::name, {&a_in, &b_in}, [&] { return out_of_place(name##_kernel, a_in, b_in); }, \
        [&](const Tensor& out) {                                                           \
          return [sa = SavedTensor::input(a_in), sb = SavedTensor::input(b_in),            \
                  sy = SavedTensor::output(out)](const Grads& gs) {                        \
            const Tensor &g = gs[0], a = sa.get(), b = sb.get();                           \
            [[maybe_unused]] const Tensor y = sy.get();                                    \
            return Grads{grad_a, grad_b};                                                  \
          };                                                                               \
        });                                                                                \
  }
// ...and the Tensor method.
#define STRIDE_DEFINE_BINARY_METHOD(name)          \
  Tensor Tensor::name(const Tensor& other) const { \
    return stride::name(*this, other);             \
  }
#define STRIDE_DEFINE_FLOAT_BINARY(name, grad_a, grad_b, domain)     \
  STRIDE_DEFINE_FLOAT_BINARY_FUNCTIONS(name, grad_a, grad_b, domain) \
  STRIDE_DEFINE_BINARY_METHOD(name)
STRIDE_FLOAT_BINARY_OPS(STRIDE_DEFINE_FLOAT_BINARY)
#undef STRIDE_DEFINE_FLOAT_BINARY

// The binary special functions; igamma, igammac and nextafter are Tensor
// methods too.
STRIDE_SPECIAL_BINARY_OPS(STRIDE_DEFINE_FLOAT_BINARY_FUNCTIONS)
#undef STRIDE_DEFINE_FLOAT_BINARY_FUNCTIONS
#define STRIDE_DEFINE_SPECIAL_BINARY_NOGRAD(name, domain)                                 \
  static Tensor& name##_kernel(Tensor& out, const Tensor& a, const Tensor& b) {           \
    const ScalarType rt = float_result(result_type(a, b));                                \
    return run_elementwise(#name, out, {a, b}, rt, rt, kernels::name);                    \
  }                                                                                       \
  Tensor& name##_out(Tensor& out, const Tensor& a, const Tensor& b) {                     \
    return apply_out(Op::name, out, {&a, &b},                                             \
                     [&]() -> Tensor& { return name##_kernel(out, a, b); });              \
  }                                                                                       \
  Tensor name(const Tensor& a, const Tensor& b) {                                         \
    return detail::apply_without_grad(Op::name, {&a, &b},                                 \
                                      [&] { return out_of_place(name##_kernel, a, b); }); \
  }
STRIDE_SPECIAL_BINARY_NOGRAD_OPS(STRIDE_DEFINE_SPECIAL_BINARY_NOGRAD)
#undef STRIDE_DEFINE_SPECIAL_BINARY_NOGRAD
STRIDE_DEFINE_BINARY_METHOD(igamma)
STRIDE_DEFINE_BINARY_METHOD(igammac)
STRIDE_DEFINE_BINARY_METHOD(nextafter)
#undef STRIDE_DEFINE_BINARY_METHOD

static Tensor& div_kernel(Tensor& out, const Tensor& a, const Tensor& b) {
  const ScalarType rt = float_result(result_type(a, b));  // true division
  if (reads_scalar_in_float(a, b, rt)) return computed_in_float("div", out, div_kernel, a, b, rt);
  return run_elementwise("div", out, {a, b}, rt, rt, kernels::div);
}

static Tensor& pow_kernel(Tensor& out, const Tensor& a, const Tensor& e) {
  const ScalarType rt = result_type(a, e);
  return run_elementwise("pow", out, {a, e}, rt, rt, kernels::pow);
}

static Tensor& fmod_kernel(Tensor& out, const Tensor& a, const Tensor& b) {
  const ScalarType rt = result_type(a, b);
  return run_elementwise("fmod", out, {a, b}, rt, rt, kernels::fmod);
}

static Tensor& remainder_kernel(Tensor& out, const Tensor& a, const Tensor& b) {
  const ScalarType rt = result_type(a, b);
  return run_elementwise("remainder", out, {a, b}, rt, rt, kernels::remainder);
}

namespace {

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
  if (a.is_complex() || b.is_complex()) return detail::complex_add(a, b, alpha);
  return apply(
      Op::add, {&a, &b}, [&] { return out_of_place(add_kernel, a, b, alpha); },
      [&](const Tensor&) {
        return [alpha](const Grads& gs) {
          return Grads{gs[0], alpha.to_double() == 1.0 ? gs[0] : gs[0] * alpha};
        };
      });
}

Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  if (a.is_complex() || b.is_complex()) return detail::complex_add(a, b, -alpha.to_double());
  return apply(
      Op::sub, {&a, &b}, [&] { return out_of_place(sub_kernel, a, b, alpha); },
      [&](const Tensor&) {
        return [alpha](const Grads& gs) { return Grads{gs[0], gs[0] * -alpha.to_double()}; };
      });
}

Tensor mul(const Tensor& a, const Tensor& b) {
  if (a.is_complex() || b.is_complex()) return detail::complex_mul(a, b);
  return apply(
      Op::mul, {&a, &b}, [&] { return out_of_place(mul_kernel, a, b); },
      [&](const Tensor&) {
        const bool need_a = autograd::requires_grad(a), need_b = autograd::requires_grad(b);
        return [sa = need_b ? SavedTensor::input(a) : SavedTensor(),
                sb = need_a ? SavedTensor::input(b) : SavedTensor()](const Grads& gs) {
          return Grads{sb.defined() ? gs[0] * sb.get() : Tensor(),
                       sa.defined() ? gs[0] * sa.get() : Tensor()};
        };
      });
}

Tensor div(const Tensor& a, const Tensor& b) {
  if (a.is_complex() || b.is_complex()) return detail::complex_div(a, b);
  return apply(
      Op::div, {&a, &b}, [&] { return out_of_place(div_kernel, a, b); },
      [&](const Tensor&) {
        return [sa = autograd::requires_grad(b) ? SavedTensor::input(a) : SavedTensor(),
                sb = SavedTensor::input(b)](const Grads& gs) {
          const Tensor bv = sb.get();
          return Grads{gs[0] / bv, sa.defined() ? -gs[0] * sa.get() / (bv * bv) : Tensor()};
        };
      });
}

Tensor pow(const Tensor& a, const Tensor& e) {
  return apply(
      Op::pow, {&a, &e}, [&] { return out_of_place(pow_kernel, a, e); },
      [&](const Tensor& out) {
        return [sa = SavedTensor::input(a), se = SavedTensor::input(e),
                sy = autograd::requires_grad(e) ? SavedTensor::output(out)
                                                : SavedTensor()](const Grads& gs) {
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
        };
      });
}

namespace {

// The gradients of fmod and remainder, PyTorch's: 1 for a, and for b minus
// the quotient a / b rounded as the remainder rounds it ("trunc" for fmod,
// "floor" for remainder), which has no gradient itself.
auto remainder_backward(const Tensor& a, const Tensor& b, std::string_view rounding) {
  return [sa = autograd::requires_grad(b) ? SavedTensor::input(a) : SavedTensor(),
          sb = autograd::requires_grad(b) ? SavedTensor::input(b) : SavedTensor(),
          rounding](const Grads& gs) {
    return Grads{gs[0], sb.defined() ? -gs[0] * div(sa.get(), sb.get(), rounding) : Tensor()};
  };
}

}  // namespace

Tensor fmod(const Tensor& a, const Tensor& b) {
  return apply(
      Op::fmod, {&a, &b}, [&] { return out_of_place(fmod_kernel, a, b); },
      [&](const Tensor&) { return remainder_backward(a, b, "trunc"); });
}
Tensor fmod(const Tensor& a, const Scalar& b) {
  return fmod(a, wrap_scalar(b, a));
}

Tensor remainder(const Tensor& a, const Tensor& b) {
  return apply(
      Op::remainder, {&a, &b}, [&] { return out_of_place(remainder_kernel, a, b); },
      [&](const Tensor&) { return remainder_backward(a, b, "floor"); });
}
Tensor remainder(const Tensor& a, const Scalar& b) {
  return remainder(a, wrap_scalar(b, a));
}
Tensor remainder(const Scalar& a, const Tensor& b) {
  return remainder(wrap_scalar(a, b), b);
}

// The mantissa's gradient, PyTorch's: g / 2^exponent (the exponent, int32,
// has none).
std::pair<Tensor, Tensor> frexp(const Tensor& x) {
  return apply(
      Op::frexp, {&x},
      [&] {
        Tensor mantissa = empty(x.sizes(), x.options());
        Tensor exponent = empty(x.sizes(), x.options().dtype(kInt32));
        TensorIter iter = TensorIterConfig("frexp")
                              .add_output(mantissa)
                              .add_output(exponent)
                              .add_input(x)
                              .check_all_same_dtype(false)
                              .build();
        kernels::frexp(x.device(), iter);
        return std::pair{mantissa, exponent};
      },
      [&](const std::pair<Tensor, Tensor>& r) {
        return [exponent = r.second](const Grads& gs) {
          return Grads{gs[0] / exp2(exponent.to(gs[0].dtype()))};
        };
      });
}

namespace {

// PyTorch refuses an integer tensor to a negative integer number (a tensor
// of exponents computes the truncated values instead, math::int_pow).
void check_integer_exponent(const Tensor& base, const Scalar& e) {
  STRIDE_CHECK(is_floating_point(base.dtype()) || base.is_complex() || !e.is_integral() ||
                   e.to_double() >= 0,
               ValueError,
               "[pow] integers cannot be raised to a negative integer power; got "
               "exponent ",
               e.to_double(), ". Hint: convert the base with .to(kFloat64).");
}

}  // namespace

Tensor pow(const Tensor& a, const Scalar& e) {
  check_integer_exponent(a, e);
  return pow(a, wrap_scalar(e, a));
}

Tensor maximum(const Tensor& a, const Tensor& b) {
  return apply(
      Op::maximum, {&a, &b}, [&] { return out_of_place(maximum_kernel, a, b); },
      [&](const Tensor&) {
        return [sa = SavedTensor::input(a), sb = SavedTensor::input(b)](const Grads& gs) {
          return extreme_backward(gs[0], sa.get(), sb.get(), true);
        };
      });
}

Tensor minimum(const Tensor& a, const Tensor& b) {
  return apply(
      Op::minimum, {&a, &b}, [&] { return out_of_place(minimum_kernel, a, b); },
      [&](const Tensor&) {
        return [sa = SavedTensor::input(a), sb = SavedTensor::input(b)](const Grads& gs) {
          return extreme_backward(gs[0], sa.get(), sb.get(), false);
        };
      });
}

#define STRIDE_DEFINE_BINARY_OUT(name)                                       \
  Tensor& name##_out(Tensor& out, const Tensor& a, const Tensor& b) {        \
    return apply_out(Op::name, out, {&a, &b},                                \
                     [&]() -> Tensor& { return name##_kernel(out, a, b); }); \
  }
STRIDE_DEFINE_BINARY_OUT(mul)
STRIDE_DEFINE_BINARY_OUT(div)
STRIDE_DEFINE_BINARY_OUT(pow)
STRIDE_DEFINE_BINARY_OUT(fmod)
STRIDE_DEFINE_BINARY_OUT(remainder)
STRIDE_DEFINE_BINARY_OUT(maximum)
STRIDE_DEFINE_BINARY_OUT(minimum)
#undef STRIDE_DEFINE_BINARY_OUT

Tensor& add_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  return apply_out(Op::add, out, {&a, &b},
                   [&]() -> Tensor& { return add_kernel(out, a, b, alpha); });
}

Tensor& sub_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  return apply_out(Op::sub, out, {&a, &b},
                   [&]() -> Tensor& { return sub_kernel(out, a, b, alpha); });
}

// ---- comparisons -> bool ----
#define STRIDE_DEFINE_COMPARISON(name)                                                   \
  static Tensor& name##_kernel(Tensor& out, const Tensor& a, const Tensor& b) {          \
    return run_elementwise(#name, out, {a, b}, result_type(a, b), kBool, kernels::name); \
  }                                                                                      \
  Tensor& name##_out(Tensor& out, const Tensor& a, const Tensor& b) {                    \
    /* a bool result has no gradient: out= takes operands that require grad */           \
    OpScope scope(Op::name, {&a, &b});                                                   \
    return name##_kernel(out, a, b);                                                     \
  }                                                                                      \
  Tensor name(const Tensor& a, const Tensor& b) {                                        \
    return apply_without_grad(Op::name, {&a, &b},                                        \
                              [&] { return out_of_place(name##_kernel, a, b); });        \
  }                                                                                      \
  Tensor Tensor::name(const Tensor& other) const {                                       \
    return stride::name(*this, other);                                                   \
  }                                                                                      \
  Tensor Tensor::name(const Scalar& other) const {                                       \
    return stride::name(*this, wrap_scalar(other, *this));                               \
  }
STRIDE_COMPARISON_OPS(STRIDE_DEFINE_COMPARISON)
#undef STRIDE_DEFINE_COMPARISON

// ---- integer ops: the inputs' promoted dtype, no gradient ----
#define STRIDE_DEFINE_INTEGER_BINARY(name, dispatch)                               \
  static Tensor& name##_kernel(Tensor& out, const Tensor& a, const Tensor& b) {    \
    const ScalarType rt = result_type(a, b);                                       \
    return run_elementwise(#name, out, {a, b}, rt, rt, kernels::name);             \
  }                                                                                \
  Tensor& name##_out(Tensor& out, const Tensor& a, const Tensor& b) {              \
    /* an integer result has no gradient: out= takes operands that require grad */ \
    OpScope scope(Op::name, {&a, &b});                                             \
    return name##_kernel(out, a, b);                                               \
  }                                                                                \
  Tensor name(const Tensor& a, const Tensor& b) {                                  \
    return apply_without_grad(Op::name, {&a, &b},                                  \
                              [&] { return out_of_place(name##_kernel, a, b); });  \
  }                                                                                \
  Tensor Tensor::name(const Tensor& other) const {                                 \
    return stride::name(*this, other);                                             \
  }                                                                                \
  Tensor Tensor::name(const Scalar& other) const {                                 \
    return stride::name(*this, wrap_scalar(other, *this));                         \
  }                                                                                \
  Tensor& Tensor::name##_(const Tensor& other) {                                   \
    return apply_inplace(                                                          \
        Op::name, *this, {&other}, [&] { return stride::name(clone(), other); },   \
        [&] {                                                                      \
          Tensor self = *this;                                                     \
          name##_kernel(self, *this, other);                                       \
        });                                                                        \
  }                                                                                \
  Tensor& Tensor::name##_(const Scalar& other) {                                   \
    return name##_(wrap_scalar(other, *this));                                     \
  }
STRIDE_INTEGER_BINARY_OPS(STRIDE_DEFINE_INTEGER_BINARY)
#undef STRIDE_DEFINE_INTEGER_BINARY

namespace {

// ~x as x ^ (every bit set): true for bool, -1 for the signed integers, 255
// for uint8 (each the dtype's own value, so that no promotion happens).
Tensor all_bits_set_like(const Tensor& x) {
  STRIDE_CHECK(is_integral(x.dtype(), /*include_bool=*/true), DTypeError,
               "[bitwise_not] takes bool or integer tensors, got ", to_string(x.dtype()),
               ". Hint: convert with .to(kInt64), or use logical_not on a mask.");
  if (x.dtype() == kBool) return full_like(x, true);
  if (x.dtype() == kUInt8) return full_like(x, 255);
  return full_like(x, -1);
}

}  // namespace

Tensor bitwise_not(const Tensor& x) {
  detail::check_dtype_rule(Op::bitwise_not, x);
  return bitwise_xor(x, all_bits_set_like(x));
}
Tensor Tensor::bitwise_not() const {
  return stride::bitwise_not(*this);
}
Tensor& Tensor::bitwise_not_() {
  return bitwise_xor_(all_bits_set_like(*this));
}

// ---- isnan, isinf, isfinite: bool results, from comparisons ----
Tensor isnan(const Tensor& x) {
  detail::check_dtype_rule(Op::isnan, x);
  return x.ne(x);
}
Tensor isinf(const Tensor& x) {
  detail::check_dtype_rule(Op::isinf, x);
  if (!x.is_floating_point()) return zeros(x.sizes(), x.options().dtype(kBool));
  return x.abs().eq(Scalar(std::numeric_limits<double>::infinity()));
}
// x - x is 0 for every finite x and NaN for inf and NaN.
Tensor isfinite(const Tensor& x) {
  detail::check_dtype_rule(Op::isfinite, x);
  if (!x.is_floating_point()) return ones(x.sizes(), x.options().dtype(kBool));
  NoGradGuard no_grad;
  return (x - x).eq(Scalar(0));
}
Tensor Tensor::isnan() const {
  return stride::isnan(*this);
}
Tensor Tensor::isinf() const {
  return stride::isinf(*this);
}
Tensor Tensor::isfinite() const {
  return stride::isfinite(*this);
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
  return stride::mul(*this, wrap_factor(other, *this));
}
Tensor Tensor::div(const Tensor& other) const {
  return stride::div(*this, other);
}
Tensor Tensor::div(const Scalar& other) const {
  return stride::div(*this, wrap_factor(other, *this));
}
Tensor Tensor::pow(const Tensor& exponent) const {
  return stride::pow(*this, exponent);
}
Tensor Tensor::pow(const Scalar& exponent) const {
  return stride::pow(*this, exponent);
}
Tensor Tensor::fmod(const Tensor& other) const {
  return stride::fmod(*this, other);
}
Tensor Tensor::fmod(const Scalar& other) const {
  return stride::fmod(*this, other);
}
Tensor Tensor::remainder(const Tensor& other) const {
  return stride::remainder(*this, other);
}
Tensor Tensor::remainder(const Scalar& other) const {
  return stride::remainder(*this, other);
}
std::pair<Tensor, Tensor> Tensor::frexp() const {
  return stride::frexp(*this);
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
  Tensor& Tensor::name##_(const Tensor& other) {                      \
    return apply_inplace(                                             \
        Op::name, *this, {&other}, [&] { return out_of_place; },      \
        [&] {                                                         \
          Tensor self = *this;                                        \
          call_kernel;                                                \
        });                                                           \
  }
STRIDE_DEFINE_INPLACE_BINARY(mul, mul_kernel(self, *this, other), stride::mul(clone(), other))
STRIDE_DEFINE_INPLACE_BINARY(div, div_kernel(self, *this, other), stride::div(clone(), other))
STRIDE_DEFINE_INPLACE_BINARY(fmod, fmod_kernel(self, *this, other), stride::fmod(clone(), other))
STRIDE_DEFINE_INPLACE_BINARY(remainder,
                             remainder_kernel(self, *this, other),
                             stride::remainder(clone(), other))
#undef STRIDE_DEFINE_INPLACE_BINARY

Tensor& Tensor::add_(const Tensor& other, const Scalar& alpha) {
  if (is_complex()) return detail::complex_add_(*this, other, alpha);
  return apply_inplace(
      Op::add, *this, {&other}, [&] { return stride::add(clone(), other, alpha); },
      [&] {
        Tensor self = *this;
        add_kernel(self, *this, other, alpha);
      });
}
Tensor& Tensor::sub_(const Tensor& other, const Scalar& alpha) {
  if (is_complex()) return detail::complex_add_(*this, other, -alpha.to_double());
  return apply_inplace(
      Op::sub, *this, {&other}, [&] { return stride::sub(clone(), other, alpha); },
      [&] {
        Tensor self = *this;
        sub_kernel(self, *this, other, alpha);
      });
}
Tensor& Tensor::add_(const Scalar& other) {
  return add_(wrap_scalar(other, *this));
}
Tensor& Tensor::sub_(const Scalar& other) {
  return sub_(wrap_scalar(other, *this));
}
Tensor& Tensor::mul_(const Scalar& other) {
  return mul_(wrap_factor(other, *this));
}
Tensor& Tensor::div_(const Scalar& other) {
  return div_(wrap_factor(other, *this));
}
Tensor& Tensor::fmod_(const Scalar& other) {
  return fmod_(wrap_scalar(other, *this));
}
Tensor& Tensor::remainder_(const Scalar& other) {
  return remainder_(wrap_scalar(other, *this));
}
Tensor& Tensor::pow_(const Scalar& exponent) {
  check_integer_exponent(*this, exponent);
  const Tensor e = wrap_scalar(exponent, *this);
  return apply_inplace(
      Op::pow, *this, {}, [&] { return stride::pow(clone(), e); },
      [&] {
        Tensor self = *this;
        pow_kernel(self, *this, e);
      });
}

Tensor operator+(const Scalar& a, const Tensor& b) {
  return add(wrap_scalar(a, b), b);
}
Tensor operator-(const Scalar& a, const Tensor& b) {
  return sub(wrap_scalar(a, b), b);
}
Tensor operator*(const Scalar& a, const Tensor& b) {
  return mul(b, wrap_factor(a, b));  // as PyTorch's __rmul__
}
Tensor operator/(const Scalar& a, const Tensor& b) {
  return div(wrap_scalar(a, b), b);
}

}  // namespace stride
