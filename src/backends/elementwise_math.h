// Each elementwise op's scalar math, once, for every device: plain C++
// functors that the CPU's loops (backends/cpu/elementwise.cpp) and the CUDA
// loops (backends/cuda/elementwise.cu, where nvcc compiles them __host__
// __device__) both expand, so a new backend adds loops and no op's math.
//
// T is the type an op computes in: bool, the integers, float and double.
// 16-bit floats compute in float: each backend's loop widens an element as
// it reads it and rounds the result as it writes it (PyTorch's
// TensorIterator does the same), so no float32 copy of an operand is made.
//
// This header includes only <cmath> and <type_traits>: nvcc compiles it
// without stride's other headers.
#pragma once

#include <cmath>
#include <type_traits>

#if defined(__CUDACC__)
#define STRIDE_HOST_DEVICE __host__ __device__
#else
#define STRIDE_HOST_DEVICE
#endif

namespace stride::math {

// One functor type per op, named after it: math::exp{}(x).
#define STRIDE_UNARY_MATH(name, ...)             \
  struct name {                                  \
    template <class T>                           \
    STRIDE_HOST_DEVICE T operator()(T x) const { \
      return __VA_ARGS__;                        \
    }                                            \
  };
#define STRIDE_BINARY_MATH(name, R, ...)              \
  struct name {                                       \
    template <class T>                                \
    STRIDE_HOST_DEVICE R operator()(T x, T y) const { \
      return __VA_ARGS__;                             \
    }                                                 \
  };

// 1 / sqrt(2) and 1 / sqrt(2 pi) as doubles (std::numbers's inv_sqrtpi /
// sqrt2 for the second; nvcc compiles C++17, without <numbers>).
inline constexpr double kInvSqrt2 = 0.70710678118654752440;
inline constexpr double kInvSqrt2Pi = 0.56418958354775628695 / 1.41421356237309504880;

template <class T>
STRIDE_HOST_DEVICE inline T sigmoid_of(T x) {
  return T(1) / (T(1) + std::exp(-x));
}

// |x| with abs(-0.0) = +0.0, as fabs and PyTorch.
template <class T>
STRIDE_HOST_DEVICE inline T abs_of(T x) {
  if constexpr (std::is_floating_point_v<T>)
    return std::fabs(x);
  else if constexpr (std::is_signed_v<T>)
    return T(x < T(0) ? -x : x);
  else
    return x;
}

// base^exp by squaring; a negative exp gives PyTorch's integer values, the
// reciprocal truncated toward zero: 1 for base 1, +-1 for base -1, else 0.
// (A negative number exponent is refused by the caller, as PyTorch's.)
template <class T>
STRIDE_HOST_DEVICE inline T int_pow(T base, T exp) {
  if constexpr (std::is_signed_v<T>) {
    if (exp < T(0)) {
      if (base == T(1)) return T(1);
      if (base == T(-1)) return T(exp % T(2) == T(0) ? 1 : -1);
      return T(0);
    }
  }
  T result = 1;
  while (exp > 0) {
    if (exp & 1) result *= base;
    base *= base;
    exp >>= 1;
  }
  return result;
}

// ---- the listed ops (src/core/op_list.h) ----
// Unary ops computing in floating point (float, double).
STRIDE_UNARY_MATH(exp, std::exp(x))
STRIDE_UNARY_MATH(log, std::log(x))
STRIDE_UNARY_MATH(sqrt, std::sqrt(x))
STRIDE_UNARY_MATH(rsqrt, T(1) / std::sqrt(x))
STRIDE_UNARY_MATH(sin, std::sin(x))
STRIDE_UNARY_MATH(cos, std::cos(x))
STRIDE_UNARY_MATH(tanh, std::tanh(x))
STRIDE_UNARY_MATH(sigmoid, sigmoid_of(x))
STRIDE_UNARY_MATH(silu, x* sigmoid_of(x))
STRIDE_UNARY_MATH(gelu, T(0.5) * x * (T(1) + std::erf(x * T(kInvSqrt2))))
STRIDE_UNARY_MATH(reciprocal, T(1) / x)
STRIDE_UNARY_MATH(expm1, std::expm1(x))
STRIDE_UNARY_MATH(log1p, std::log1p(x))
STRIDE_UNARY_MATH(log2, std::log2(x))
STRIDE_UNARY_MATH(log10, std::log10(x))
STRIDE_UNARY_MATH(exp2, std::exp2(x))
STRIDE_UNARY_MATH(tan, std::tan(x))
STRIDE_UNARY_MATH(asin, std::asin(x))
STRIDE_UNARY_MATH(acos, std::acos(x))
STRIDE_UNARY_MATH(atan, std::atan(x))
STRIDE_UNARY_MATH(sinh, std::sinh(x))
STRIDE_UNARY_MATH(cosh, std::cosh(x))
STRIDE_UNARY_MATH(asinh, std::asinh(x))
STRIDE_UNARY_MATH(acosh, std::acosh(x))
STRIDE_UNARY_MATH(atanh, std::atanh(x))
STRIDE_UNARY_MATH(erf, std::erf(x))
STRIDE_UNARY_MATH(erfc, std::erfc(x))

// Unary ops keeping the input's dtype (the numeric ones).
STRIDE_UNARY_MATH(neg, T(-x))
STRIDE_UNARY_MATH(abs, abs_of(x))
STRIDE_UNARY_MATH(square, T(x* x))
struct relu {
  template <class T>
  STRIDE_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_unsigned_v<T>)
      return x;
    else
      return T(x < T(0) ? T(0) : x);
  }
};

// -1, 0 or 1 as PyTorch: 0 for both zeros and for NaN.
struct sign {
  template <class T>
  STRIDE_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_unsigned_v<T>)
      return T(x > T(0));
    else
      return T((T(0) < x) - (x < T(0)));
  }
};

// Rounding is the identity on integers; round is half to even (nearbyint
// in the default rounding mode), as PyTorch's.
#define STRIDE_ROUNDING_MATH(name, round_float)  \
  struct name {                                  \
    template <class T>                           \
    STRIDE_HOST_DEVICE T operator()(T x) const { \
      if constexpr (std::is_floating_point_v<T>) \
        return round_float(x);                   \
      else                                       \
        return x;                                \
    }                                            \
  };
STRIDE_ROUNDING_MATH(floor, std::floor)
STRIDE_ROUNDING_MATH(ceil, std::ceil)
STRIDE_ROUNDING_MATH(round, std::nearbyint)
STRIDE_ROUNDING_MATH(trunc, std::trunc)
// The fractional part, with x's sign; inf gives NaN, as PyTorch's.
struct frac {
  template <class T>
  STRIDE_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>)
      return x - std::trunc(x);
    else
      return T(0);
  }
};

// Binary ops of the inputs' promoted dtype; maximum and minimum propagate a
// NaN from either side.
STRIDE_BINARY_MATH(mul, T, T(x* y))
STRIDE_BINARY_MATH(maximum, T, T((x != x) ? x : (y != y) ? y : (x > y ? x : y)))
STRIDE_BINARY_MATH(minimum, T, T((x != x) ? x : (y != y) ? y : (x < y ? x : y)))

// Binary ops computing in floating point (float, double).
STRIDE_BINARY_MATH(atan2, T, std::atan2(x, y))
STRIDE_BINARY_MATH(hypot, T, std::hypot(x, y))
STRIDE_BINARY_MATH(copysign, T, std::copysign(x, y))
// log(e^x + e^y) without overflow: max + log1p(e^-|x - y|); equal infinite
// inputs (where x - y is NaN) give themselves, as PyTorch's.
struct logaddexp {
  template <class T>
  STRIDE_HOST_DEVICE T operator()(T x, T y) const {
    if (x == y && std::isinf(x)) return x;
    const T m = x > y ? x : y;
    return m + std::log1p(std::exp(-std::fabs(x - y)));
  }
};
struct logaddexp2 {
  template <class T>
  STRIDE_HOST_DEVICE T operator()(T x, T y) const {
    if (x == y && std::isinf(x)) return x;
    const T m = x > y ? x : y;
    return m + std::log1p(std::exp2(-std::fabs(x - y))) / T(0.69314718055994530942);
  }
};
// x log y, 0 where x is 0 unless y is NaN.
struct xlogy {
  template <class T>
  STRIDE_HOST_DEVICE T operator()(T x, T y) const {
    if (y != y) return y;
    if (x == T(0)) return T(0);
    return x * std::log(y);
  }
};

// Comparisons, in the inputs' promoted dtype.
STRIDE_BINARY_MATH(eq, bool, x == y)
STRIDE_BINARY_MATH(ne, bool, x != y)
STRIDE_BINARY_MATH(lt, bool, x < y)
STRIDE_BINARY_MATH(le, bool, x <= y)
STRIDE_BINARY_MATH(gt, bool, x > y)
STRIDE_BINARY_MATH(ge, bool, x >= y)

// Integer ops (bool and the integers), in the inputs' promoted dtype.
STRIDE_BINARY_MATH(bitwise_and, T, T(x& y))
STRIDE_BINARY_MATH(bitwise_or, T, T(x | y))
STRIDE_BINARY_MATH(bitwise_xor, T, T(x ^ y))

// A shift count PyTorch gives no shifted value for: negative, or at least
// the width of T (where C++'s shift is undefined).
template <class T>
STRIDE_HOST_DEVICE inline bool shift_out_of_range(T count) {
  if constexpr (std::is_signed_v<T>) {
    if (count < T(0)) return true;
  }
  return count >= T(sizeof(T) * 8);
}
// x << y shifts x's bits as unsigned (no overflow of a signed x), and an
// out-of-range count gives 0, as PyTorch's.
struct bitwise_left_shift {
  template <class T>
  STRIDE_HOST_DEVICE T operator()(T x, T y) const {
    if (shift_out_of_range(y)) return T(0);
    return T(std::make_unsigned_t<T>(x) << y);
  }
};
// x >> y is arithmetic for a signed x; an out-of-range count fills with the
// sign (0, or -1 for a negative x), as PyTorch's.
struct bitwise_right_shift {
  template <class T>
  STRIDE_HOST_DEVICE T operator()(T x, T y) const {
    if (!shift_out_of_range(y)) return T(x >> y);
    if constexpr (std::is_signed_v<T>) {
      if (x < T(0)) return T(-1);
    }
    return T(0);
  }
};

// |x| in the unsigned type of x's integer promotion, so that the most
// negative value has a magnitude (2^63 for int64) instead of overflowing.
template <class T>
STRIDE_HOST_DEVICE inline std::make_unsigned_t<decltype(+T())> magnitude(T x) {
  using W = decltype(+T());
  using U = std::make_unsigned_t<W>;
  if constexpr (std::is_signed_v<T>) {
    if (x < T(0)) return U(0) - U(W(x));
  }
  return U(W(x));
}
// gcd(|x|, |y|) by Euclid's algorithm, as PyTorch's calc_gcd (gcd(0, 0) = 0).
template <class T>
STRIDE_HOST_DEVICE inline std::make_unsigned_t<decltype(+T())> gcd_of(T x, T y) {
  auto a = magnitude(x), b = magnitude(y);
  while (a != 0) {
    const auto c = a;
    a = b % a;
    b = c;
  }
  return b;
}
// gcd and lcm are non-negative, but wrap to T as PyTorch's do where the
// magnitude does not fit (gcd of two most negative values).
struct gcd {
  template <class T>
  STRIDE_HOST_DEVICE T operator()(T x, T y) const {
    return T(gcd_of(x, y));
  }
};
struct lcm {
  template <class T>
  STRIDE_HOST_DEVICE T operator()(T x, T y) const {
    const auto g = gcd_of(x, y);
    if (g == 0) return T(0);
    return T(magnitude(x) / g * magnitude(y));
  }
};

// ---- the ops written out (src/ops/elementwise.cpp) ----
STRIDE_BINARY_MATH(div, T, x / y)

// x^y: std::pow for floating T, repeated squaring for integers.
struct pow {
  template <class T>
  STRIDE_HOST_DEVICE T operator()(T x, T y) const {
    if constexpr (std::is_floating_point_v<T>)
      return std::pow(x, y);
    else
      return int_pow(x, y);
  }
};

// The divisions' functors take integers with y != 0 only (the CPU kernels
// raise PyTorch's ZeroDivisionError first); y == -1 is guarded, as the most
// negative x / -1 and x % -1 overflow.

// x / y rounded toward zero.
struct div_trunc {
  template <class T>
  STRIDE_HOST_DEVICE T operator()(T x, T y) const {
    if constexpr (std::is_floating_point_v<T>) {
      return std::trunc(x / y);
    } else {
      if constexpr (std::is_signed_v<T>) {
        if (y == T(-1)) return T(std::make_unsigned_t<T>(0) - std::make_unsigned_t<T>(x));
      }
      return T(x / y);
    }
  }
};

// x / y rounded down. Floats take PyTorch's div_floor, built on fmod: the
// integer nearest the exact quotient's floor, where floor(x / y) is off by
// one when x / y rounds up to an integer; a zero quotient keeps x / y's
// sign, and y == 0 gives x / y.
struct div_floor {
  template <class T>
  STRIDE_HOST_DEVICE T operator()(T x, T y) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (y == T(0)) return x / y;
      const T mod = std::fmod(x, y);
      T div = (x - mod) / y;
      if (mod != T(0) && (y < T(0)) != (mod < T(0))) div -= T(1);
      if (div == T(0)) return std::copysign(T(0), x / y);
      T floordiv = std::floor(div);
      if (div - floordiv > T(0.5)) floordiv += T(1);
      return floordiv;
    } else {
      if constexpr (std::is_signed_v<T>) {
        if (y == T(-1) || (x < T(0)) == (y < T(0))) return div_trunc{}(x, y);
        const T q = T(x / y);
        return T(x % y) != T(0) ? T(q - T(1)) : q;
      }
      return T(x / y);
    }
  }
};

// The remainder with x's sign (C's fmod).
struct fmod {
  template <class T>
  STRIDE_HOST_DEVICE T operator()(T x, T y) const {
    if constexpr (std::is_floating_point_v<T>) {
      return std::fmod(x, y);
    } else {
      if constexpr (std::is_signed_v<T>) {
        if (y == T(-1)) return T(0);
      }
      return T(x % y);
    }
  }
};

// The remainder with y's sign (Python's %), PyTorch's rule on fmod: y is
// added to a nonzero remainder of the other sign (so a zero one keeps
// fmod's sign, and NaN stays NaN).
struct remainder {
  template <class T>
  STRIDE_HOST_DEVICE T operator()(T x, T y) const {
    const T r = fmod{}(x, y);
    if constexpr (std::is_unsigned_v<T>) {
      return r;
    } else {
      return r != T(0) && (y < T(0)) != (r < T(0)) ? T(r + y) : r;
    }
  }
};

// d gelu / dx = Phi(x) + x phi(x), times the upstream gradient g.
struct gelu_backward {
  template <class T>
  STRIDE_HOST_DEVICE T operator()(T g, T x) const {
    const T cdf = T(0.5) * (T(1) + std::erf(x * T(kInvSqrt2)));
    const T pdf = std::exp(T(-0.5) * x * x) * T(kInvSqrt2Pi);
    return g * (cdf + x * pdf);
  }
};

struct where {
  template <class T>
  STRIDE_HOST_DEVICE T operator()(bool c, T x, T y) const {
    return c ? x : y;
  }
};

// x + alpha y (bool: x or y); alpha = 1, the usual case, is its own
// functor that skips the multiply.
struct add {
  template <class T>
  STRIDE_HOST_DEVICE T operator()(T x, T y) const {
    if constexpr (std::is_same_v<T, bool>)
      return x || y;
    else
      return T(x + y);
  }
};
template <class T>
struct add_scaled {
  T alpha;
  STRIDE_HOST_DEVICE T operator()(T x, T y) const {
    if constexpr (std::is_same_v<T, bool>)
      return x || (alpha && y);
    else
      return T(x + alpha * y);
  }
};
struct sub {
  template <class T>
  STRIDE_HOST_DEVICE T operator()(T x, T y) const {
    return T(x - y);
  }
};
template <class T>
struct sub_scaled {
  T alpha;
  STRIDE_HOST_DEVICE T operator()(T x, T y) const { return T(x - alpha * y); }
};

// PyTorch's two-sided form of start + weight (end - start): exact at both
// ends.
template <class T>
struct lerp {
  T weight;
  STRIDE_HOST_DEVICE T operator()(T s, T e) const {
    return weight < T(0.5) ? s + weight * (e - s) : e - (e - s) * (T(1) - weight);
  }
};

template <class T>
struct addcmul {
  T value;
  STRIDE_HOST_DEVICE T operator()(T s, T a, T b) const { return T(s + value * a * b); }
};

template <class T>
struct addcdiv {
  T value;
  STRIDE_HOST_DEVICE T operator()(T s, T a, T b) const { return s + value * a / b; }
};

// Either bound may be absent; NaN propagates.
template <class T>
struct clamp {
  bool has_lo, has_hi;
  T lo, hi;
  STRIDE_HOST_DEVICE T operator()(T v) const {
    if (v != v) return v;
    if (has_lo && lo != lo) return lo;  // a NaN bound gives NaN, as PyTorch 2
    if (has_hi && hi != hi) return hi;
    if (has_lo && v < lo) v = lo;
    if (has_hi && v > hi) v = hi;
    return v;
  }
};

#undef STRIDE_BINARY_MATH
#undef STRIDE_UNARY_MATH

}  // namespace stride::math
