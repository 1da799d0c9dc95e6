// The CPU kernels of the elementwise ops (backends/kernels.h): each op's
// functor of backends/elementwise_math.h run by the loops of loops.h, the
// ops of the lists of src/core/op_list.h expanded, the others written out.
// Beside the functors, the CPU's own column: float32 forms over vec_math.h's
// vectors for the transcendental ops, whose libm calls do not vectorise.
// float64 keeps libm; 16-bit floats compute in float32 in the loop
// (Note [16-bit elementwise] in loops.h).
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "backends/cpu/capability.h"
#include "backends/cpu/loops.h"
#include "backends/elementwise_math.h"
#include "backends/kernels.h"
#include "core/dispatch.h"

namespace STRIDE_CPU_NAMESPACE {

namespace {

using stride::detail::dispatch_computing;
using stride::detail::DispatchFloating;
using stride::detail::DispatchIntegral;
using stride::detail::DispatchIntegralAndBool;
using stride::detail::DispatchNumeric;
using stride::detail::DispatchNumericAndBool;
using vec::Vec16f;

// ---- the float32 vector forms (Note [Vector kernels]) ----
inline Vec16f vec_form(math::exp, Vec16f v) {
  return vec::exp(v);
}
inline Vec16f vec_form(math::log, Vec16f v) {
  return vec::log(v);
}
inline Vec16f vec_form(math::tanh, Vec16f v) {
  return vec::tanh(v);
}
inline Vec16f vec_form(math::sigmoid, Vec16f v) {
  return vec::sigmoid(v);
}
inline Vec16f vec_form(math::silu, Vec16f v) {
  return v * vec::sigmoid(v);
}
inline Vec16f vec_form(math::gelu, Vec16f v) {
  return vec::gelu(v);
}
// d gelu / dx = Phi(x) + x phi(x), of (g, x).
inline Vec16f vec_form(math::gelu_backward, Vec16f g, Vec16f x) {
  constexpr float kInvSqrt2Pi = float(math::kInvSqrt2Pi);
  const Vec16f pdf = vec::exp(-0.5f * x * x) * kInvSqrt2Pi;
  return g * (vec::normal_cdf(x) + x * pdf);
}

template <class Op, class... V>
concept HasVecForm = requires(V... v) {
  vec_form(Op{}, v...);
};

// Op over the iteration in T, its operands stored as S: through its vector
// form for float when it has one.
template <class S, class T, class Op>
void run_unary(const TensorIter& iter, Op op) {
  if constexpr (std::is_same_v<T, float> && HasVecForm<Op, Vec16f>) {
    vec_kernel<S>(iter, [](Vec16f v) { return vec_form(Op{}, v); });
  } else {
    cpu_kernel(iter, widened<S>([op](T x) -> T { return op(x); }));
  }
}
template <class S, class T, class Op>
void run_binary(const TensorIter& iter, Op op) {
  if constexpr (std::is_same_v<T, float> && HasVecForm<Op, Vec16f, Vec16f>) {
    vec_kernel<S>(iter, [](Vec16f x, Vec16f y) { return vec_form(Op{}, x, y); });
  } else {
    cpu_kernel(iter, widened<S>([op](T x, T y) { return op(x, y); }));
  }
}

// A kernel of one of the lists: Op's functor over the dtypes of Dispatch.
template <class Op, class Dispatch>
void unary_kernel(const TensorIter& iter, ScalarType compute, const char* name) {
  dispatch_computing<Dispatch>(compute, name, [&](auto t, auto s) {
    run_unary<typename decltype(s)::type, typename decltype(t)::type>(iter, Op{});
  });
}
template <class Op, class Dispatch>
void binary_kernel(const TensorIter& iter, ScalarType compute, const char* name) {
  dispatch_computing<Dispatch>(compute, name, [&](auto t, auto s) {
    run_binary<typename decltype(s)::type, typename decltype(t)::type>(iter, Op{});
  });
}

// ---- the listed ops ----
#define STRIDE_CPU_FLOAT_UNARY(name, ...)                             \
  void name##_kernel(const TensorIter& iter, ScalarType compute) {    \
    unary_kernel<math::name, DispatchFloating>(iter, compute, #name); \
  }
#define STRIDE_CPU_SAME_UNARY(name, ...)                             \
  void name##_kernel(const TensorIter& iter, ScalarType compute) {   \
    unary_kernel<math::name, DispatchNumeric>(iter, compute, #name); \
  }
#define STRIDE_CPU_BINARY(name, Dispatch)                          \
  void name##_kernel(const TensorIter& iter, ScalarType compute) { \
    binary_kernel<math::name, Dispatch>(iter, compute, #name);     \
  }
#define STRIDE_CPU_FLOAT_BINARY(name, ...) STRIDE_CPU_BINARY(name, DispatchFloating)
#define STRIDE_CPU_COMPARISON(name) STRIDE_CPU_BINARY(name, DispatchNumericAndBool)
STRIDE_FLOAT_UNARY_OPS(STRIDE_CPU_FLOAT_UNARY)
STRIDE_SAME_UNARY_OPS(STRIDE_CPU_SAME_UNARY)
STRIDE_BINARY_OPS(STRIDE_CPU_BINARY)
STRIDE_FLOAT_BINARY_OPS(STRIDE_CPU_FLOAT_BINARY)
STRIDE_INTEGER_BINARY_OPS(STRIDE_CPU_BINARY)
STRIDE_COMPARISON_OPS(STRIDE_CPU_COMPARISON)
#undef STRIDE_CPU_COMPARISON
#undef STRIDE_CPU_FLOAT_BINARY
#undef STRIDE_CPU_BINARY
#undef STRIDE_CPU_SAME_UNARY
#undef STRIDE_CPU_FLOAT_UNARY

// ---- the ops written out ----

void div_kernel(const TensorIter& iter, ScalarType compute) {
  binary_kernel<math::div, DispatchFloating>(iter, compute, "div");
}

// A division's kernel (fmod, remainder, div_floor, div_trunc): an integer
// divisor of zero raises PyTorch's ZeroDivisionError here, as the
// device-neutral functor cannot.
template <class Op>
void division_kernel(const TensorIter& iter, ScalarType compute, const char* name) {
  dispatch_computing<DispatchNumeric>(compute, name, [&](auto t, auto s) {
    using T = typename decltype(t)::type;
    if constexpr (std::is_floating_point_v<T>) {
      run_binary<typename decltype(s)::type, T>(iter, Op{});
    } else {
      cpu_kernel(iter, [name](T x, T y) -> T {
        STRIDE_CHECK(y != T(0), Error, "[", name,
                     "] ZeroDivisionError: an integer divisor is 0. Hint: divide in floating "
                     "point (NaN or inf there), or mask the zeros first.");
        return Op{}(x, y);
      });
    }
  });
}

void fmod_kernel(const TensorIter& iter, ScalarType compute) {
  division_kernel<math::fmod>(iter, compute, "fmod");
}
void remainder_kernel(const TensorIter& iter, ScalarType compute) {
  division_kernel<math::remainder>(iter, compute, "remainder");
}
void div_floor_kernel(const TensorIter& iter, ScalarType compute) {
  division_kernel<math::div_floor>(iter, compute, "div");
}
void div_trunc_kernel(const TensorIter& iter, ScalarType compute) {
  division_kernel<math::div_trunc>(iter, compute, "div");
}

// frexp of x (operand 2) into mantissa (operand 0, x's dtype) and exponent
// (operand 1, int32); 16-bit floats through float, whose frexp gives the
// same mantissa bits.
void frexp_kernel(const TensorIter& iter) {
  dispatch_computing<DispatchFloating>(iter.dtype(2), "frexp", [&](auto t, auto s) {
    using T = typename decltype(t)::type;
    using S = typename decltype(s)::type;
    iter.for_each([](char** data, const int64_t* strides, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        int exponent = 0;
        const T x = T(*reinterpret_cast<const S*>(data[2] + i * strides[2]));
        *reinterpret_cast<S*>(data[0] + i * strides[0]) = S(std::frexp(x, &exponent));
        *reinterpret_cast<int32_t*>(data[1] + i * strides[1]) = int32_t(exponent);
      }
    });
  });
}

void gelu_backward_kernel(const TensorIter& iter, ScalarType compute) {
  binary_kernel<math::gelu_backward, DispatchFloating>(iter, compute, "gelu_backward");
}

void pow_kernel(const TensorIter& iter, ScalarType compute) {
  binary_kernel<math::pow, DispatchNumeric>(iter, compute, "pow");
}

void where_kernel(const TensorIter& iter, ScalarType compute) {
  dispatch_computing<DispatchNumericAndBool>(compute, "where", [&](auto t, auto s) {
    using T = typename decltype(t)::type;
    using S = typename decltype(s)::type;
    cpu_kernel(iter, widened<S>([](bool c, T x, T y) -> T { return math::where{}(c, x, y); }));
  });
}

void add_kernel(const TensorIter& iter, ScalarType compute, const Scalar& alpha) {
  dispatch_computing<DispatchNumericAndBool>(compute, "add", [&](auto t, auto s) {
    using T = typename decltype(t)::type;
    using S = typename decltype(s)::type;
    // bool: x or (alpha and y), as PyTorch's.
    if (alpha.to<T>() != T(1)) return run_binary<S, T>(iter, math::add_scaled<T>{alpha.to<T>()});
    run_binary<S, T>(iter, math::add{});
  });
}

void sub_kernel(const TensorIter& iter, ScalarType compute, const Scalar& alpha) {
  dispatch_computing<DispatchNumeric>(compute, "sub", [&](auto t, auto s) {
    using T = typename decltype(t)::type;
    using S = typename decltype(s)::type;
    if (alpha.to<T>() == T(1)) {
      run_binary<S, T>(iter, math::sub{});
    } else {
      run_binary<S, T>(iter, math::sub_scaled<T>{alpha.to<T>()});
    }
  });
}

void lerp_kernel(const TensorIter& iter, ScalarType compute, const Scalar& weight) {
  dispatch_computing<DispatchFloating>(compute, "lerp_", [&](auto t, auto s) {
    using T = typename decltype(t)::type;
    run_binary<typename decltype(s)::type, T>(iter, math::lerp<T>{weight.to<T>()});
  });
}

// A ternary op of T with operands stored as S.
template <class S, class T, class Op>
void run_ternary(const TensorIter& iter, Op op) {
  cpu_kernel(iter, widened<S>([op](T x, T a, T b) -> T { return op(x, a, b); }));
}

void addcmul_kernel(const TensorIter& iter, ScalarType compute, const Scalar& value) {
  dispatch_computing<DispatchNumeric>(compute, "addcmul_", [&](auto t, auto s) {
    using T = typename decltype(t)::type;
    run_ternary<typename decltype(s)::type, T>(iter, math::addcmul<T>{value.to<T>()});
  });
}

void addcdiv_kernel(const TensorIter& iter, ScalarType compute, const Scalar& value) {
  dispatch_computing<DispatchFloating>(compute, "addcdiv_", [&](auto t, auto s) {
    using T = typename decltype(t)::type;
    run_ternary<typename decltype(s)::type, T>(iter, math::addcdiv<T>{value.to<T>()});
  });
}

void clamp_kernel(const TensorIter& iter,
                  ScalarType compute,
                  const std::optional<Scalar>& lo,
                  const std::optional<Scalar>& hi) {
  dispatch_computing<DispatchNumeric>(compute, "clamp", [&](auto t, auto s) {
    using T = typename decltype(t)::type;
    const math::clamp<T> op{lo.has_value(), hi.has_value(), lo ? lo->to<T>() : T(0),
                            hi ? hi->to<T>() : T(0)};
    run_unary<typename decltype(s)::type, T>(iter, op);
  });
}

}  // namespace

#define STRIDE_REGISTER_LISTED(name, ...) STRIDE_REGISTER_CPU_KERNEL(kernels::name, name##_kernel);
STRIDE_LISTED_ELEMENTWISE_OPS(STRIDE_REGISTER_LISTED)
#undef STRIDE_REGISTER_LISTED
STRIDE_REGISTER_CPU_KERNEL(kernels::div, div_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::pow, pow_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::fmod, fmod_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::remainder, remainder_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::div_floor, div_floor_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::div_trunc, div_trunc_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::frexp, frexp_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::where, where_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::gelu_backward, gelu_backward_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::add, add_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::sub, sub_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::lerp, lerp_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::addcmul, addcmul_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::addcdiv, addcdiv_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::clamp, clamp_kernel);

}  // namespace STRIDE_CPU_NAMESPACE
