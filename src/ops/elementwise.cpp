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

// A kernel's result, allocated by it: the forward of an out-of-place op.
template <class Kernel, class... Args>
Tensor out_of_place(Kernel&& kernel, const Args&... args) {
  Tensor out;
  kernel(out, args...);
  return out;
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
Tensor& Tensor::clamp_(std::optional<Scalar> lo, std::optional<Scalar> hi) {
  return apply_inplace(
      Op::clamp, *this, {}, [&] { return stride::clamp(clone(), lo, hi); },
      [&] {
        Tensor self = *this;
        clamp_kernel(self, *this, lo, hi);
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
