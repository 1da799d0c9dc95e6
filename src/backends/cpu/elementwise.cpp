// The CPU kernels of the elementwise ops (backends/kernels.h): the lists of
// src/core/op_list.h expanded into cpu_kernel loops, and the ops with
// scalars or three operands written out. float32 transcendentals run their
// vec_math.h form through vec_kernel (libm calls do not vectorise); float64
// keeps libm.
#include <cmath>
#include <numbers>
#include <type_traits>

#include "backends/cpu/loops.h"
#include "backends/kernels.h"
#include "core/dispatch.h"

namespace stride::cpu {

namespace {

using stride::detail::DispatchFloating;
using stride::detail::DispatchNumeric;
using stride::detail::DispatchNumericAndBool;

// The vector column of an op with no vec_math.h form: it runs the scalar
// kernel for float32 too.
struct ScalarOnly {};

template <class T>
inline T sigmoid_fn(T x) {
  return T(1) / (T(1) + std::exp(-x));
}

// |x| with abs(-0.0) = +0.0, as fabs and PyTorch.
template <class T>
inline T abs_fn(T x) {
  if constexpr (std::is_floating_point_v<T>)
    return std::fabs(x);
  else if constexpr (std::is_signed_v<T>)
    return T(x < T(0) ? -x : x);
  else
    return x;
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

// ---- the listed ops ----

// A unary kernel: float32 through `vexpr` unless it is ScalarOnly.
#define STRIDE_CPU_UNARY_KERNEL(name, expr, vexpr, Dispatch)                           \
  void name##_kernel(const TensorIter& iter, ScalarType compute) {                     \
    Dispatch{}(compute, #name, [&](auto tag) {                                         \
      using T = typename decltype(tag)::type;                                          \
      [[maybe_unused]] auto vf = []([[maybe_unused]] vec::Vec16f v) { return vexpr; }; \
      if constexpr (std::is_same_v<T, float> &&                                        \
                    std::is_same_v<decltype(vf(vec::Vec16f{})), vec::Vec16f>) {        \
        vec_kernel(iter, vf);                                                          \
      } else {                                                                         \
        cpu_kernel(iter, [](T x) -> T { return expr; });                               \
      }                                                                                \
    });                                                                                \
  }
#define STRIDE_CPU_FLOAT_UNARY(name, expr, vexpr, ...) \
  STRIDE_CPU_UNARY_KERNEL(name, expr, vexpr, DispatchFloating)
#define STRIDE_CPU_SAME_UNARY(name, expr, ...) \
  STRIDE_CPU_UNARY_KERNEL(name, expr, ScalarOnly{}, DispatchNumeric)
STRIDE_FLOAT_UNARY_OPS(STRIDE_CPU_FLOAT_UNARY)
STRIDE_SAME_UNARY_OPS(STRIDE_CPU_SAME_UNARY)
#undef STRIDE_CPU_SAME_UNARY
#undef STRIDE_CPU_FLOAT_UNARY
#undef STRIDE_CPU_UNARY_KERNEL

// A binary kernel of result type R (T, or bool for comparisons).
#define STRIDE_CPU_BINARY_KERNEL(name, Dispatch, R, expr)          \
  void name##_kernel(const TensorIter& iter, ScalarType compute) { \
    Dispatch{}(compute, #name, [&](auto tag) {                     \
      using T = typename decltype(tag)::type;                      \
      cpu_kernel(iter, [](T x, T y) -> R { return expr; });        \
    });                                                            \
  }
#define STRIDE_CPU_BINARY(name, Dispatch, expr) STRIDE_CPU_BINARY_KERNEL(name, Dispatch, T, expr)
#define STRIDE_CPU_COMPARISON(name, expr) \
  STRIDE_CPU_BINARY_KERNEL(name, DispatchNumericAndBool, bool, expr)
STRIDE_BINARY_OPS(STRIDE_CPU_BINARY)
STRIDE_COMPARISON_OPS(STRIDE_CPU_COMPARISON)
#undef STRIDE_CPU_COMPARISON
#undef STRIDE_CPU_BINARY
#undef STRIDE_CPU_BINARY_KERNEL

// ---- the ops written out ----

void div_kernel(const TensorIter& iter, ScalarType compute) {
  stride::detail::dispatch_floating(compute, "div", [&](auto tag) {
    using T = typename decltype(tag)::type;
    cpu_kernel(iter, [](T x, T y) -> T { return x / y; });
  });
}

void pow_kernel(const TensorIter& iter, ScalarType compute) {
  stride::detail::dispatch_numeric(compute, "pow", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      cpu_kernel(iter, [](T x, T y) -> T { return std::pow(x, y); });
    } else {
      cpu_kernel(iter, [](T x, T y) -> T {
        if constexpr (std::is_signed_v<T>) {
          STRIDE_CHECK(y >= 0, ValueError,
                       "[pow] integers cannot be raised to a negative power; got exponent ",
                       int64_t(y), ".");
        }
        return int_pow(x, y);
      });
    }
  });
}

void where_kernel(const TensorIter& iter, ScalarType compute) {
  stride::detail::dispatch_numeric_and_bool(compute, "where", [&](auto tag) {
    using T = typename decltype(tag)::type;
    cpu_kernel(iter, [](bool c, T x, T y) -> T { return c ? x : y; });
  });
}

// d gelu / dx = Phi(x) + x phi(x), of (g, x).
void gelu_backward_kernel(const TensorIter& iter, ScalarType compute) {
  stride::detail::dispatch_floating(compute, "gelu_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr T kInvSqrt2Pi = T(std::numbers::inv_sqrtpi / std::numbers::sqrt2);
    if constexpr (std::is_same_v<T, float>) {
      vec_kernel(iter, [](vec::Vec16f gv, vec::Vec16f xv) {
        const vec::Vec16f pdf = vec::exp(-0.5f * xv * xv) * kInvSqrt2Pi;
        return gv * (vec::normal_cdf(xv) + xv * pdf);
      });
    } else {
      cpu_kernel(iter, [](T gv, T xv) -> T {
        const T cdf = T(0.5) * (T(1) + std::erf(xv * T(std::numbers::sqrt2 / 2)));
        const T pdf = std::exp(T(-0.5) * xv * xv) * kInvSqrt2Pi;
        return gv * (cdf + xv * pdf);
      });
    }
  });
}

void add_kernel(const TensorIter& iter, ScalarType compute, const Scalar& alpha) {
  stride::detail::dispatch_numeric_and_bool(compute, "add", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      cpu_kernel(iter, [](bool x, bool y) -> bool { return x || y; });
    } else {
      const T al = alpha.to<T>();
      if (al == T(1)) {
        cpu_kernel(iter, [](T x, T y) -> T { return T(x + y); });
      } else {
        cpu_kernel(iter, [al](T x, T y) -> T { return T(x + al * y); });
      }
    }
  });
}

void sub_kernel(const TensorIter& iter, ScalarType compute, const Scalar& alpha) {
  stride::detail::dispatch_numeric(compute, "sub", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T al = alpha.to<T>();
    if (al == T(1)) {
      cpu_kernel(iter, [](T x, T y) -> T { return T(x - y); });
    } else {
      cpu_kernel(iter, [al](T x, T y) -> T { return T(x - al * y); });
    }
  });
}

void lerp_kernel(const TensorIter& iter, ScalarType compute, const Scalar& weight) {
  stride::detail::dispatch_floating(compute, "lerp_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T w = weight.to<T>();
    // PyTorch's two-sided form: exact at both ends.
    cpu_kernel(iter, [w](T s, T e) -> T {
      return w < T(0.5) ? s + w * (e - s) : e - (e - s) * (T(1) - w);
    });
  });
}

void addcmul_kernel(const TensorIter& iter, ScalarType compute, const Scalar& value) {
  stride::detail::dispatch_numeric(compute, "addcmul_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = value.to<T>();
    cpu_kernel(iter, [v](T s, T a, T b) -> T { return T(s + v * a * b); });
  });
}

void addcdiv_kernel(const TensorIter& iter, ScalarType compute, const Scalar& value) {
  stride::detail::dispatch_floating(compute, "addcdiv_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = value.to<T>();
    cpu_kernel(iter, [v](T s, T a, T b) -> T { return s + v * a / b; });
  });
}

void clamp_kernel(const TensorIter& iter,
                  ScalarType compute,
                  const std::optional<Scalar>& lo,
                  const std::optional<Scalar>& hi) {
  stride::detail::dispatch_numeric(compute, "clamp", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const bool has_lo = lo.has_value(), has_hi = hi.has_value();
    const T l = has_lo ? lo->to<T>() : T(0);
    const T h = has_hi ? hi->to<T>() : T(0);
    cpu_kernel(iter, [=](T v) -> T {
      if (v != v) return v;  // NaN propagates
      if (has_lo && v < l) v = l;
      if (has_hi && v > h) v = h;
      return v;
    });
  });
}

}  // namespace

#define STRIDE_REGISTER_LISTED(name, ...) STRIDE_REGISTER_KERNEL(kernels::name, CPU, name##_kernel);
STRIDE_LISTED_ELEMENTWISE_OPS(STRIDE_REGISTER_LISTED)
#undef STRIDE_REGISTER_LISTED
STRIDE_REGISTER_KERNEL(kernels::div, CPU, div_kernel);
STRIDE_REGISTER_KERNEL(kernels::pow, CPU, pow_kernel);
STRIDE_REGISTER_KERNEL(kernels::where, CPU, where_kernel);
STRIDE_REGISTER_KERNEL(kernels::gelu_backward, CPU, gelu_backward_kernel);
STRIDE_REGISTER_KERNEL(kernels::add, CPU, add_kernel);
STRIDE_REGISTER_KERNEL(kernels::sub, CPU, sub_kernel);
STRIDE_REGISTER_KERNEL(kernels::lerp, CPU, lerp_kernel);
STRIDE_REGISTER_KERNEL(kernels::addcmul, CPU, addcmul_kernel);
STRIDE_REGISTER_KERNEL(kernels::addcdiv, CPU, addcdiv_kernel);
STRIDE_REGISTER_KERNEL(kernels::clamp, CPU, clamp_kernel);

}  // namespace stride::cpu
