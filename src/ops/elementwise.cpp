// Elementwise ops. Each op is one line of a table below (its name and scalar
// expression); the macros expand it into the out-of-place function, the
// out= function and the in-place method, all through run_elementwise and so
// through TensorIter.
#include <cmath>

#include "ops/elementwise_common.h"

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
  return scalar_tensor(s, t);
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
    Tensor fresh = empty(result.sizes(), dtype);
    out.impl()->set_geometry(fresh.storage(), fresh.sizes(), fresh.strides(), 0);
  }
  out.copy_(result);
  return out;
}

}  // namespace detail

using detail::dispatch_numeric_and_bool;
using detail::float_result;
using detail::result_type;
using detail::run_elementwise;
using detail::wrap_scalar;

namespace {

template <class T>
inline T sigmoid_fn(T x) {
  return T(1) / (T(1) + std::exp(-x));
}

template <class T>
inline T int_pow(T base, T exp) {
  T result = 1;
  while (exp > 0) {
    if (exp & 1) result *= base;
    base *= base;
    exp >>= 1;
  }
  return result;
}

}  // namespace

// ---- unary ops computing in floating point (integers -> float32) ----
#define STRIDE_FLOAT_UNARY_OPS(X)                                                   \
  X(exp, std::exp(x))                                                               \
  X(log, std::log(x))                                                               \
  X(sqrt, std::sqrt(x))                                                             \
  X(rsqrt, T(1) / std::sqrt(x))                                                     \
  X(sin, std::sin(x))                                                               \
  X(cos, std::cos(x))                                                               \
  X(tanh, std::tanh(x))                                                             \
  X(sigmoid, sigmoid_fn(x))                                                         \
  X(silu, x* sigmoid_fn(x))                                                         \
  X(gelu, T(0.5) * x * (T(1) + std::erf(x * T(0.70710678118654752440))))           \
  X(reciprocal, T(1) / x)

#define STRIDE_DEFINE_FLOAT_UNARY(name, expr)                                            \
  Tensor& name##_out(Tensor& out, const Tensor& input) {                                     \
    const ScalarType rt = float_result(input.dtype());                                   \
    return run_elementwise(#name, out, {input}, rt, rt, detail::DispatchFloating{},                   \
                           [](const TensorIter& iter, auto tag) {                        \
                             using T = typename decltype(tag)::type;                     \
                             cpu::cpu_kernel(iter, [](T x) -> T { return expr; });       \
                           });                                                           \
  }                                                                                      \
  Tensor name(const Tensor& x) {                                                         \
    Tensor out;                                                                          \
    return name##_out(out, x);                                                           \
  }                                                                                      \
  Tensor Tensor::name() const { return stride::name(*this); }                            \
  Tensor& Tensor::name##_() {                                                            \
    Tensor self = *this;                                                                 \
    name##_out(self, *this);                                                             \
    return *this;                                                                        \
  }
STRIDE_FLOAT_UNARY_OPS(STRIDE_DEFINE_FLOAT_UNARY)
#undef STRIDE_DEFINE_FLOAT_UNARY

// ---- unary ops keeping the dtype ----
#define STRIDE_SAME_UNARY_OPS(X)                                          \
  X(neg, T(-x))                                                           \
  X(abs, T(x < T(0) ? T(-x) : x))                                         \
  X(square, T(x* x))                                                      \
  X(relu, T(x > T(0) ? x : (x != x ? x : T(0))))

#define STRIDE_DEFINE_SAME_UNARY(name, expr)                                             \
  Tensor& name##_out(Tensor& out, const Tensor& input) {                                     \
    return run_elementwise(#name, out, {input}, input.dtype(), input.dtype(), detail::DispatchNumeric{},      \
                           [](const TensorIter& iter, auto tag) {                        \
                             using T = typename decltype(tag)::type;                     \
                             cpu::cpu_kernel(iter, [](T x) -> T { return expr; });       \
                           });                                                           \
  }                                                                                      \
  Tensor name(const Tensor& x) {                                                         \
    Tensor out;                                                                          \
    return name##_out(out, x);                                                           \
  }                                                                                      \
  Tensor Tensor::name() const { return stride::name(*this); }                            \
  Tensor& Tensor::name##_() {                                                            \
    Tensor self = *this;                                                                 \
    name##_out(self, *this);                                                             \
    return *this;                                                                        \
  }
STRIDE_SAME_UNARY_OPS(STRIDE_DEFINE_SAME_UNARY)
#undef STRIDE_DEFINE_SAME_UNARY

// ---- binary arithmetic (promoting) ----
Tensor& add_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  const ScalarType rt = result_type(a, b);
  return run_elementwise("add", out, {a, b}, rt, rt, detail::DispatchNumericAndBool{},
                         [&](const TensorIter& iter, auto tag) {
                           using T = typename decltype(tag)::type;
                           if constexpr (std::is_same_v<T, bool>) {
                             cpu::cpu_kernel(iter, [](bool x, bool y) -> bool { return x || y; });
                           } else {
                             const T al = alpha.to<T>();
                             if (al == T(1)) {
                               cpu::cpu_kernel(iter, [](T x, T y) -> T { return T(x + y); });
                             } else {
                               cpu::cpu_kernel(iter, [al](T x, T y) -> T { return T(x + al * y); });
                             }
                           }
                         });
}

Tensor& sub_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  STRIDE_CHECK(a.dtype() != kBool || b.dtype() != kBool, DTypeError,
               "[sub] subtracting two bool tensors is not supported. Hint: use logical ops or "
               "convert with .to(kInt64).");
  const ScalarType rt = result_type(a, b);
  return run_elementwise("sub", out, {a, b}, rt, rt, detail::DispatchNumeric{},
                         [&](const TensorIter& iter, auto tag) {
                           using T = typename decltype(tag)::type;
                           const T al = alpha.to<T>();
                           if (al == T(1)) {
                             cpu::cpu_kernel(iter, [](T x, T y) -> T { return T(x - y); });
                           } else {
                             cpu::cpu_kernel(iter, [al](T x, T y) -> T { return T(x - al * y); });
                           }
                         });
}

#define STRIDE_BINARY_OPS(X)                                                        \
  X(mul, detail::DispatchNumericAndBool{}, T(x* y))                                        \
  X(maximum, detail::DispatchNumericAndBool{}, T((x != x) ? x : (y != y) ? y : (x > y ? x : y))) \
  X(minimum, detail::DispatchNumericAndBool{}, T((x != x) ? x : (y != y) ? y : (x < y ? x : y)))

#define STRIDE_DEFINE_BINARY(name, dispatch, expr)                                       \
  Tensor& name##_out(Tensor& out, const Tensor& a, const Tensor& b) {                    \
    const ScalarType rt = result_type(a, b);                                             \
    return run_elementwise(#name, out, {a, b}, rt, rt, dispatch,                         \
                           [](const TensorIter& iter, auto tag) {                        \
                             using T = typename decltype(tag)::type;                     \
                             cpu::cpu_kernel(iter, [](T x, T y) -> T { return expr; });  \
                           });                                                           \
  }                                                                                      \
  Tensor name(const Tensor& a, const Tensor& b) {                                        \
    Tensor out;                                                                          \
    return name##_out(out, a, b);                                                        \
  }
STRIDE_BINARY_OPS(STRIDE_DEFINE_BINARY)
#undef STRIDE_DEFINE_BINARY

Tensor& div_out(Tensor& out, const Tensor& a, const Tensor& b) {
  const ScalarType rt = float_result(result_type(a, b));  // true division
  return run_elementwise("div", out, {a, b}, rt, rt, detail::DispatchFloating{},
                         [](const TensorIter& iter, auto tag) {
                           using T = typename decltype(tag)::type;
                           cpu::cpu_kernel(iter, [](T x, T y) -> T { return x / y; });
                         });
}

Tensor& pow_out(Tensor& out, const Tensor& a, const Tensor& e) {
  const ScalarType rt = result_type(a, e);
  return run_elementwise("pow", out, {a, e}, rt, rt, detail::DispatchNumeric{},
                         [](const TensorIter& iter, auto tag) {
                           using T = typename decltype(tag)::type;
                           if constexpr (std::is_floating_point_v<T>) {
                             cpu::cpu_kernel(iter, [](T x, T y) -> T { return std::pow(x, y); });
                           } else {
                             cpu::cpu_kernel(iter, [](T x, T y) -> T {
                               if constexpr (std::is_signed_v<T>) {
                                 STRIDE_CHECK(y >= 0, ValueError,
                                              "[pow] integers cannot be raised to a negative "
                                              "power; got exponent ",
                                              int64_t(y), ".");
                               }
                               return int_pow(x, y);
                             });
                           }
                         });
}

Tensor div(const Tensor& a, const Tensor& b) {
  Tensor out;
  return div_out(out, a, b);
}
Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  Tensor out;
  return add_out(out, a, b, alpha);
}
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  Tensor out;
  return sub_out(out, a, b, alpha);
}
Tensor pow(const Tensor& a, const Tensor& e) {
  Tensor out;
  return pow_out(out, a, e);
}
Tensor pow(const Tensor& a, const Scalar& e) { return pow(a, wrap_scalar(e, a)); }

// ---- comparisons -> bool ----
#define STRIDE_COMPARISON_OPS(X) \
  X(eq, x == y)                  \
  X(ne, x != y)                  \
  X(lt, x < y)                   \
  X(le, x <= y)                  \
  X(gt, x > y)                   \
  X(ge, x >= y)

#define STRIDE_DEFINE_COMPARISON(name, expr)                                             \
  Tensor& name##_out(Tensor& out, const Tensor& a, const Tensor& b) {                    \
    return run_elementwise(#name, out, {a, b}, result_type(a, b), kBool,                 \
                           detail::DispatchNumericAndBool{}, [](const TensorIter& iter, auto tag) { \
                             using T = typename decltype(tag)::type;                     \
                             cpu::cpu_kernel(iter, [](T x, T y) -> bool { return expr; }); \
                           });                                                           \
  }                                                                                      \
  Tensor name(const Tensor& a, const Tensor& b) {                                        \
    Tensor out;                                                                          \
    return name##_out(out, a, b);                                                        \
  }                                                                                      \
  Tensor Tensor::name(const Tensor& other) const { return stride::name(*this, other); }  \
  Tensor Tensor::name(const Scalar& other) const {                                       \
    return stride::name(*this, wrap_scalar(other, *this));                               \
  }
STRIDE_COMPARISON_OPS(STRIDE_DEFINE_COMPARISON)
#undef STRIDE_DEFINE_COMPARISON

// ---- clamp, where, masked_fill ----
Tensor& clamp_out(Tensor& out,
                  const Tensor& x,
                  std::optional<Scalar> lo,
                  std::optional<Scalar> hi) {
  STRIDE_CHECK(lo || hi, ValueError, "[clamp] at least one of min and max must be given.");
  ScalarType rt = x.dtype();
  if (lo) rt = result_type(x, wrap_scalar(*lo, x));
  if (hi) rt = promote_types(rt, result_type(x, wrap_scalar(*hi, x)));
  return run_elementwise("clamp", out, {x}, rt, rt, detail::DispatchNumeric{},
                         [&](const TensorIter& iter, auto tag) {
                           using T = typename decltype(tag)::type;
                           const bool has_lo = lo.has_value(), has_hi = hi.has_value();
                           const T l = has_lo ? lo->to<T>() : T(0);
                           const T h = has_hi ? hi->to<T>() : T(0);
                           cpu::cpu_kernel(iter, [=](T v) -> T {
                             if (v != v) return v;  // NaN propagates
                             if (has_lo && v < l) v = l;
                             if (has_hi && v > h) v = h;
                             return v;
                           });
                         });
}

Tensor clamp(const Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  Tensor out;
  return clamp_out(out, x, lo, hi);
}

Tensor& where_out(Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  STRIDE_CHECK(cond.dtype() == kBool, DTypeError, "[where] condition must be bool; got ",
               to_string(cond.dtype()), ". Hint: build it with a comparison such as x.gt(0).");
  const ScalarType rt = result_type(a, b);
  if (detail::is_16bit(rt)) {
    Tensor tmp = where(cond, a.to(kFloat32), b.to(kFloat32));
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
  dispatch_numeric_and_bool(rt, "where", [&](auto tag) {
    using T = typename decltype(tag)::type;
    cpu::cpu_kernel(iter, [](bool c, T x, T y) -> T { return c ? x : y; });
  });
  return out;
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  Tensor out;
  return where_out(out, cond, a, b);
}

Tensor& Tensor::masked_fill_(const Tensor& mask, const Scalar& value) {
  STRIDE_CHECK(mask.dtype() == kBool, DTypeError, "[masked_fill] mask must be bool; got ",
               to_string(mask.dtype()), ".");
  Tensor self = *this;
  where_out(self, mask, scalar_tensor(value, dtype()), *this);
  return *this;
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, const Scalar& value) {
  Tensor out = x.clone();
  out.masked_fill_(mask, value);
  return out;
}

Tensor Tensor::masked_fill(const Tensor& mask, const Scalar& value) const {
  return stride::masked_fill(*this, mask, value);
}

// ---- tril / triu: keep elements on one side of a diagonal of the last two dims ----
namespace {

// mask[i, j] = (j - i > diagonal) for tril (the part to zero), broadcast over batch dims.
Tensor diagonal_mask(const Tensor& x, int64_t diagonal, bool upper_part, const char* op) {
  STRIDE_CHECK(x.dim() >= 2, ShapeError, "[", op, "] needs at least 2 dims; got shape ",
               shape_str(x.sizes()), ".");
  const int64_t rows = x.size(-2), cols = x.size(-1);
  Tensor i = arange(rows).view({rows, 1});
  Tensor j = arange(cols).view({1, cols});
  Tensor d = sub(j, i);
  return upper_part ? gt(d, scalar_tensor(diagonal, kInt64)) : lt(d, scalar_tensor(diagonal, kInt64));
}

}  // namespace

Tensor& Tensor::tril_(int64_t diagonal) {
  return masked_fill_(diagonal_mask(*this, diagonal, true, "tril"), 0);
}
Tensor& Tensor::triu_(int64_t diagonal) {
  return masked_fill_(diagonal_mask(*this, diagonal, false, "triu"), 0);
}
Tensor tril(const Tensor& x, int64_t diagonal) { return x.clone().tril_(diagonal); }
Tensor triu(const Tensor& x, int64_t diagonal) { return x.clone().triu_(diagonal); }
Tensor Tensor::tril(int64_t diagonal) const { return stride::tril(*this, diagonal); }
Tensor Tensor::triu(int64_t diagonal) const { return stride::triu(*this, diagonal); }

// ---- optimizer-style in-place updates ----
Tensor& Tensor::lerp_(const Tensor& end, const Scalar& weight) {
  Tensor self = *this;
  const ScalarType rt = dtype();
  run_elementwise("lerp_", self, {*this, end}, rt, rt, detail::DispatchFloating{},
                  [&](const TensorIter& iter, auto tag) {
                    using T = typename decltype(tag)::type;
                    const T w = weight.to<T>();
                    // PyTorch's two-sided form: exact at both ends.
                    cpu::cpu_kernel(iter, [w](T s, T e) -> T {
                      return w < T(0.5) ? s + w * (e - s) : e - (e - s) * (T(1) - w);
                    });
                  });
  return *this;
}

Tensor lerp(const Tensor& start, const Tensor& end, const Scalar& weight) {
  return start.clone().lerp_(end, weight);
}

Tensor& Tensor::addcmul_(const Tensor& t1, const Tensor& t2, const Scalar& value) {
  Tensor self = *this;
  const ScalarType rt = dtype();
  run_elementwise("addcmul_", self, {*this, t1, t2}, rt, rt, detail::DispatchNumeric{},
                  [&](const TensorIter& iter, auto tag) {
                    using T = typename decltype(tag)::type;
                    const T v = value.to<T>();
                    cpu::cpu_kernel(iter, [v](T s, T a, T b) -> T { return T(s + v * a * b); });
                  });
  return *this;
}

Tensor& Tensor::addcdiv_(const Tensor& t1, const Tensor& t2, const Scalar& value) {
  Tensor self = *this;
  const ScalarType rt = dtype();
  run_elementwise("addcdiv_", self, {*this, t1, t2}, rt, rt, detail::DispatchFloating{},
                  [&](const TensorIter& iter, auto tag) {
                    using T = typename decltype(tag)::type;
                    const T v = value.to<T>();
                    cpu::cpu_kernel(iter, [v](T s, T a, T b) -> T { return s + v * a / b; });
                  });
  return *this;
}

// ---- Tensor methods and Scalar overloads ----
Tensor Tensor::add(const Tensor& other, const Scalar& alpha) const {
  return stride::add(*this, other, alpha);
}
Tensor Tensor::add(const Scalar& other) const { return stride::add(*this, wrap_scalar(other, *this)); }
Tensor Tensor::sub(const Tensor& other, const Scalar& alpha) const {
  return stride::sub(*this, other, alpha);
}
Tensor Tensor::sub(const Scalar& other) const { return stride::sub(*this, wrap_scalar(other, *this)); }
Tensor Tensor::mul(const Tensor& other) const { return stride::mul(*this, other); }
Tensor Tensor::mul(const Scalar& other) const { return stride::mul(*this, wrap_scalar(other, *this)); }
Tensor Tensor::div(const Tensor& other) const { return stride::div(*this, other); }
Tensor Tensor::div(const Scalar& other) const { return stride::div(*this, wrap_scalar(other, *this)); }
Tensor Tensor::pow(const Tensor& exponent) const { return stride::pow(*this, exponent); }
Tensor Tensor::pow(const Scalar& exponent) const { return stride::pow(*this, exponent); }
Tensor Tensor::maximum(const Tensor& other) const { return stride::maximum(*this, other); }
Tensor Tensor::minimum(const Tensor& other) const { return stride::minimum(*this, other); }
Tensor Tensor::clamp(std::optional<Scalar> lo, std::optional<Scalar> hi) const {
  return stride::clamp(*this, lo, hi);
}

Tensor& Tensor::add_(const Tensor& other, const Scalar& alpha) {
  Tensor self = *this;
  add_out(self, *this, other, alpha);
  return *this;
}
Tensor& Tensor::add_(const Scalar& other) { return add_(wrap_scalar(other, *this)); }
Tensor& Tensor::sub_(const Tensor& other, const Scalar& alpha) {
  Tensor self = *this;
  sub_out(self, *this, other, alpha);
  return *this;
}
Tensor& Tensor::sub_(const Scalar& other) { return sub_(wrap_scalar(other, *this)); }
Tensor& Tensor::mul_(const Tensor& other) {
  Tensor self = *this;
  mul_out(self, *this, other);
  return *this;
}
Tensor& Tensor::mul_(const Scalar& other) { return mul_(wrap_scalar(other, *this)); }
Tensor& Tensor::div_(const Tensor& other) {
  Tensor self = *this;
  div_out(self, *this, other);
  return *this;
}
Tensor& Tensor::div_(const Scalar& other) { return div_(wrap_scalar(other, *this)); }
Tensor& Tensor::pow_(const Scalar& exponent) {
  Tensor self = *this;
  pow_out(self, *this, wrap_scalar(exponent, *this));
  return *this;
}
Tensor& Tensor::clamp_(std::optional<Scalar> lo, std::optional<Scalar> hi) {
  Tensor self = *this;
  clamp_out(self, *this, lo, hi);
  return *this;
}

Tensor operator+(const Scalar& a, const Tensor& b) { return add(wrap_scalar(a, b), b); }
Tensor operator-(const Scalar& a, const Tensor& b) { return sub(wrap_scalar(a, b), b); }
Tensor operator*(const Scalar& a, const Tensor& b) { return mul(wrap_scalar(a, b), b); }
Tensor operator/(const Scalar& a, const Tensor& b) { return div(wrap_scalar(a, b), b); }

}  // namespace stride
