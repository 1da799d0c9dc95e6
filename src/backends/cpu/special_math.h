// The scalar math of the special functions (the STRIDE_SPECIAL_* lists of
// src/core/op_list.h): functors of the same form as elementwise_math.h's, on
// the CPU only, since Boost.Math and <cmath>'s special functions do not
// compile for the device.
//
// Each computes in double and rounds to T once (float gets a correctly
// rounded double result, more exact than float math), and gives PyTorch's
// values at the edges (poles, infinities, NaN, negative arguments): Boost's
// policy below turns its errors into the IEEE result (NaN for a domain
// error, +-inf for a pole or an overflow), and each functor checks the edges
// where PyTorch's Cephes-style functions define a different value.
#pragma once

#include <boost/math/special_functions/airy.hpp>
#include <boost/math/special_functions/bessel.hpp>
#include <boost/math/special_functions/digamma.hpp>
#include <boost/math/special_functions/erf.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>

namespace stride::math {

namespace special_detail {

namespace bp = boost::math::policies;
// IEEE results instead of exceptions, and double math for double arguments
// (Boost promotes to long double by default, which is slower and not what
// PyTorch computes in).
using Policy = bp::policy<bp::domain_error<bp::ignore_error>,
                          bp::pole_error<bp::ignore_error>,
                          bp::overflow_error<bp::ignore_error>,
                          bp::underflow_error<bp::ignore_error>,
                          bp::evaluation_error<bp::ignore_error>,
                          bp::promote_double<false>>;

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

// Above this argument e^x overflows or the Bessel functions' scaled forms
// lose their exponent: the scaled functions switch to their asymptotic
// series, whose first neglected term is then below double's epsilon.
inline constexpr double kAsymptoticFrom = 500.0;

// The asymptotic series of e^-x I_nu(x) (sign -1) and of e^x K_nu(x)
// (sign +1) for large x: sum_k (+-1)^k a_k(nu) / x^k, a_k = prod_{j<=k}
// (4 nu^2 - (2j - 1)^2) / (k! 8^k), times 1 / sqrt(2 pi x) or sqrt(pi / (2x)).
inline double bessel_asymptotic_sum(int nu, double x, double sign) {
  const double mu = 4.0 * nu * nu;
  double term = 1.0, sum = 1.0;
  for (int k = 1; k <= 8; ++k) {
    term *= sign * (mu - (2.0 * k - 1) * (2.0 * k - 1)) / (k * 8.0 * x);
    sum += term;
  }
  return sum;
}

// e^-|x| I_nu(|x|) for nu = 0, 1 (the caller gives I_1 its odd sign).
inline double scaled_bessel_i(int nu, double ax) {
  if (ax < kAsymptoticFrom) return boost::math::cyl_bessel_i(nu, ax, Policy()) * std::exp(-ax);
  if (std::isinf(ax)) return 0.0;
  return bessel_asymptotic_sum(nu, ax, -1.0) / std::sqrt(2.0 * std::numbers::pi * ax);
}

// e^x K_nu(x) for x > 0.
inline double scaled_bessel_k(int nu, double x) {
  if (x < kAsymptoticFrom) return boost::math::cyl_bessel_k(nu, x, Policy()) * std::exp(x);
  if (std::isinf(x)) return 0.0;
  return bessel_asymptotic_sum(nu, x, 1.0) * std::sqrt(std::numbers::pi / (2.0 * x));
}

// The Hurwitz zeta function sum_{k>=0} (k + q)^-s by Euler-Maclaurin
// summation: the first terms directly, then the integral of the tail and
// its Bernoulli corrections B_2j / (2j)! * s (s+1) ... (s+2j-2) w^(-s-2j+1).
// PyTorch's edges, in its order (a NaN passes the checks it fails and
// propagates through the sums): s = 1 is a pole, s < 1 NaN; q a
// non-positive integer a pole, and a negative q NaN unless s is an integer.
inline double hurwitz_zeta(double s, double q) {
  if (s == 1.0) return kInf;
  if (s < 1.0) return kNaN;
  if (q <= 0.0) {
    if (q == std::floor(q)) return kInf;
    if (s != std::floor(s)) return kNaN;
  }
  // B_2j / (2j)! for j = 1..12.
  static constexpr double kBernoulliOverFactorial[] = {
      1.0 / 12.0,
      -1.0 / 720.0,
      1.0 / 30240.0,
      -1.0 / 1209600.0,
      1.0 / 47900160.0,
      -691.0 / 1307674368000.0,
      1.0 / 74724249600.0,
      -3617.0 / 10670622842880000.0,
      43867.0 / 5109094217170944000.0,
      -174611.0 / 802857662698291200000.0,
      77683.0 / 14101100039391805440000.0,
      -236364091.0 / 1693824136731743669452800000.0,
  };
  constexpr double kEpsilon = std::numeric_limits<double>::epsilon();
  double sum = std::pow(q, -s);
  double w = q, term = 0.0;
  for (int i = 0; i < 9 || w <= 9.0; ++i) {
    w += 1.0;
    term = std::pow(w, -s);
    sum += term;
    if (std::fabs(term / sum) < kEpsilon) return sum;
  }
  // The tail from w: integral w^(1-s) / (s-1), minus half the term at w
  // (counted in the sum above), plus the corrections.
  sum += term * w / (s - 1.0) - 0.5 * term;
  double rising = 1.0;  // s (s+1) ... (s+2j-2)
  double power = term;  // w^(-s-2j+1)
  for (int j = 0; j < 12; ++j) {
    rising *= s + 2.0 * j;
    power /= w;
    const double correction = rising * power * kBernoulliOverFactorial[j];
    sum += correction;
    if (std::fabs(correction / sum) < kEpsilon) break;
    rising *= s + 2.0 * j + 1.0;
    power /= w;
  }
  return sum;
}

// psi(x), PyTorch's edges: +-0 gives -+inf, a negative integer NaN.
inline double digamma(double x) {
  if (x == 0.0) return std::copysign(kInf, -x);
  if (x < 0.0 && x == std::floor(x)) return kNaN;
  return boost::math::digamma(x, Policy());
}

// psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 1.
// At +inf PyTorch's trigamma takes its limit 0, while its zeta (as
// stride's) gives NaN for the higher orders.
inline double polygamma(int64_t n, double x) {
  if (n == 0) return digamma(x);
  if (n == 1 && x == kInf) return 0.0;
  const double sign = n % 2 == 1 ? 1.0 : -1.0;
  return sign * std::exp(std::lgamma(double(n) + 1.0)) * hurwitz_zeta(double(n) + 1.0, x);
}

// exp(x^2) erfc(x): for large x erfc underflows, and the asymptotic series
// 1 / (x sqrt(pi)) sum_k (-1)^k (2k-1)!! / (2x^2)^k takes over.
inline double erfcx(double x) {
  if (std::isnan(x)) return x;
  if (x < 0.0) {
    if (x < -26.7) return kInf;  // 2 exp(x^2) overflows
    return 2.0 * std::exp(x * x) - erfcx(-x);
  }
  if (x < 25.0) return std::exp(x * x) * std::erfc(x);
  if (std::isinf(x)) return 0.0;
  const double inv_2x2 = 1.0 / (2.0 * x * x);
  double term = 1.0, sum = 1.0;
  for (int k = 1; k <= 8; ++k) {
    term *= -(2.0 * k - 1.0) * inv_2x2;
    sum += term;
  }
  return sum / (x * std::sqrt(std::numbers::pi));
}

// log Phi(x): through erfcx in the left tail, where Phi underflows.
inline double log_ndtr(double x) {
  if (x < -1.0) {
    const double t = -x * std::numbers::sqrt2 / 2.0;
    return std::log(erfcx(t) / 2.0) - t * t;
  }
  return std::log1p(-std::erfc(x * std::numbers::sqrt2 / 2.0) / 2.0);
}

// Phi^-1(p): 0 and 1 give -+inf, outside [0, 1] NaN.
inline double ndtri(double p) {
  if (std::isnan(p) || p < 0.0 || p > 1.0) return kNaN;
  if (p == 0.0) return -kInf;
  if (p == 1.0) return kInf;
  return -std::numbers::sqrt2 * boost::math::erfc_inv(2.0 * p, Policy());
}

inline double erfinv(double x) {
  if (std::isnan(x) || std::fabs(x) > 1.0) return kNaN;
  if (std::fabs(x) == 1.0) return std::copysign(kInf, x);
  return boost::math::erf_inv(x, Policy());
}

// J_0, J_1 of any x (J_0 even, J_1 odd); Y_0, Y_1 of x >= 0 (0 a pole,
// negative x NaN). Infinities give NaN, as PyTorch's (Cephes' asymptotic
// forms take the sine of the argument).
inline double bessel_j(int nu, double x) {
  if (std::isnan(x) || std::isinf(x)) return kNaN;
  const double value = boost::math::cyl_bessel_j(nu, std::fabs(x), Policy());
  return nu == 1 && x < 0.0 ? -value : value;
}
inline double bessel_y(int nu, double x) {
  if (std::isnan(x) || x < 0.0) return kNaN;
  if (x == 0.0) return -kInf;
  if (std::isinf(x)) return kNaN;
  return boost::math::cyl_neumann(nu, x, Policy());
}

// I_0, I_1 (I_1 odd; infinities give NaN, as PyTorch's) and K_0, K_1 (0 a
// pole, negative x NaN, +inf 0).
inline double bessel_i(int nu, double x) {
  if (std::isnan(x) || std::isinf(x)) return kNaN;
  const double value = boost::math::cyl_bessel_i(nu, std::fabs(x), Policy());
  return nu == 1 && x < 0.0 ? -value : value;
}
inline double bessel_k(int nu, double x, bool scaled) {
  if (std::isnan(x) || x < 0.0) return kNaN;
  if (x == 0.0) return kInf;
  if (scaled) return scaled_bessel_k(nu, x);
  if (std::isinf(x)) return 0.0;
  return boost::math::cyl_bessel_k(nu, x, Policy());
}

// P(a, x) (upper: Q(a, x)) with PyTorch's edges, in its order (a NaN
// passes the checks it fails: a = inf with x = NaN gives P = 0).
inline double incomplete_gamma(double a, double x, bool upper) {
  if (a < 0.0 || x < 0.0) return kNaN;
  const double at_zero = upper ? 1.0 : 0.0;  // the value as x -> 0
  if (a == 0.0) return x > 0.0 ? 1.0 - at_zero : kNaN;
  if (x == 0.0) return at_zero;
  if (std::isinf(a)) return std::isinf(x) ? kNaN : at_zero;
  if (std::isinf(x)) return 1.0 - at_zero;
  if (std::isnan(a) || std::isnan(x)) return kNaN;
  return upper ? boost::math::gamma_q(a, x, Policy()) : boost::math::gamma_p(a, x, Policy());
}

// The orthogonal polynomials, by their three-term recurrences; each takes
// n as an integer (PyTorch truncates it) and gives 0 for negative n.
// Chebyshev T_n, U_n, V_n, W_n, with PyTorch's closed forms at x = +-1 and,
// for larger n inside (-1, 1), its trigonometric forms.
inline double chebyshev_t(double x, int64_t n) {
  if (n < 0) return 0.0;
  if (std::fabs(x) == 1.0) return x > 0.0 || n % 2 == 0 ? 1.0 : -1.0;
  if (n > 6 && std::fabs(x) < 1.0) return std::cos(double(n) * std::acos(x));
  if (n == 0) return 1.0;
  double p = 1.0, q = x;
  for (int64_t k = 2; k <= n; ++k) {
    const double r = (x + x) * q - p;
    p = q;
    q = r;
  }
  return q;
}
inline double chebyshev_u(double x, int64_t n) {
  if (n < 0) return 0.0;
  if (std::fabs(x) == 1.0) return x > 0.0 || n % 2 == 0 ? double(n + 1) : -double(n + 1);
  if (n > 8 && std::fabs(x) < 1.0) {
    const double theta = std::acos(x);
    if (std::sin(theta) != 0.0) return std::sin(double(n + 1) * theta) / std::sin(theta);
    return double(n + 1) * std::cos(double(n + 1) * theta) / x;
  }
  if (n == 0) return 1.0;
  double p = 1.0, q = x + x;
  for (int64_t k = 2; k <= n; ++k) {
    const double r = (x + x) * q - p;
    p = q;
    q = r;
  }
  return q;
}
// V_n and W_n share the recurrence of T and U from V_1 = 2x - 1 and
// W_1 = 2x + 1.
inline double chebyshev_vw_recurrence(double x, int64_t n, double first) {
  if (n == 0) return 1.0;
  double p = 1.0, q = first;
  for (int64_t k = 2; k <= n; ++k) {
    const double r = (x + x) * q - p;
    p = q;
    q = r;
  }
  return q;
}
inline double chebyshev_v(double x, int64_t n) {
  if (n < 0) return 0.0;
  const double odd = n % 2 == 0 ? double(n + n + 1) : -double(n + n + 1);
  if (std::fabs(x) == 1.0) return x > 0.0 ? 1.0 : odd;
  if (n > 8 && std::fabs(x) < 1.0) {
    const double theta = std::acos(x);
    if (std::sin(theta / 2.0) != 1.0) {
      return std::cos((double(n) + 0.5) * theta) / std::cos(theta / 2.0);
    }
    return odd;
  }
  return chebyshev_vw_recurrence(x, n, x + x - 1.0);
}
inline double chebyshev_w(double x, int64_t n) {
  if (n < 0) return 0.0;
  const double sign = n % 2 == 0 ? 1.0 : -1.0;
  if (std::fabs(x) == 1.0) return x > 0.0 ? double(n + n + 1) : sign;
  if (n > 8 && std::fabs(x) < 1.0) {
    const double theta = std::acos(x);
    if (std::cos(theta / 2.0) != 1.0) {
      return std::sin((double(n) + 0.5) * theta) / std::sin(theta / 2.0);
    }
    return x > 0.0 ? double(n + n + 1) : sign;
  }
  return chebyshev_vw_recurrence(x, n, x + x + 1.0);
}
// Hermite: the physicists' H_{k+1} = 2x H_k - 2k H_{k-1} and the
// probabilists' He_{k+1} = x He_k - k He_{k-1}.
inline double hermite_h(double x, int64_t n) {
  if (n < 0) return 0.0;
  if (n == 0) return 1.0;
  double p = 1.0, q = x + x;
  for (int64_t k = 1; k < n; ++k) {
    const double r = (x + x) * q - double(k + k) * p;
    p = q;
    q = r;
  }
  return q;
}
inline double hermite_he(double x, int64_t n) {
  if (n < 0) return 0.0;
  if (n == 0) return 1.0;
  double p = 1.0, q = x;
  for (int64_t k = 1; k < n; ++k) {
    const double r = x * q - double(k) * p;
    p = q;
    q = r;
  }
  return q;
}
// Laguerre: (k+1) L_{k+1} = (2k + 1 - x) L_k - k L_{k-1}; L_n(0) = 1.
inline double laguerre_l(double x, int64_t n) {
  if (n < 0) return 0.0;
  if (x == 0.0 || n == 0) return 1.0;
  double p = 1.0, q = 1.0 - x;
  for (int64_t k = 1; k < n; ++k) {
    const double r = ((double(k + k) + (1.0 - x)) * q - double(k) * p) / double(k + 1);
    p = q;
    q = r;
  }
  return q;
}
// Legendre: (k+1) P_{k+1} = (2k + 1) x P_k - k P_{k-1}.
inline double legendre_p(double x, int64_t n) {
  if (n < 0) return 0.0;
  if (std::fabs(x) == 1.0) return x > 0.0 || n % 2 == 0 ? 1.0 : -1.0;
  if (n == 0) return 1.0;
  double p = 1.0, q = x;
  for (int64_t k = 1; k < n; ++k) {
    const double r = (double(k + k + 1) * x * q - double(k) * p) / double(k + 1);
    p = q;
    q = r;
  }
  return q;
}

// A polynomial's value at x of degree n given as a floating number: NaN
// for a NaN degree, which has no integer.
template <class T>
T polynomial_of(double (*polynomial)(double, int64_t), T x, T n) {
  if (n != n) return n;
  return T(polynomial(double(x), static_cast<int64_t>(n)));
}

}  // namespace special_detail

// One functor per listed op, named after it, computing in double.
#define STRIDE_SPECIAL_UNARY_MATH(name, ...)   \
  struct name {                                \
    template <class T>                         \
    T operator()(T input) const {              \
      using namespace special_detail;          \
      [[maybe_unused]] const double x = input; \
      return T(__VA_ARGS__);                   \
    }                                          \
  };
#define STRIDE_SPECIAL_BINARY_MATH(name, ...) \
  struct name {                               \
    template <class T>                        \
    T operator()(T a_in, T b_in) const {      \
      using namespace special_detail;         \
      const double a = a_in, b = b_in;        \
      return T(__VA_ARGS__);                  \
    }                                         \
  };
#define STRIDE_POLYNOMIAL_MATH(name, polynomial)                              \
  struct name {                                                               \
    template <class T>                                                        \
    T operator()(T x, T n) const {                                            \
      return special_detail::polynomial_of(special_detail::polynomial, x, n); \
    }                                                                         \
  };

STRIDE_SPECIAL_UNARY_MATH(lgamma, std::lgamma(x))
STRIDE_SPECIAL_UNARY_MATH(digamma, special_detail::digamma(x))
STRIDE_SPECIAL_UNARY_MATH(erfinv, special_detail::erfinv(x))
STRIDE_SPECIAL_UNARY_MATH(i0, bessel_i(0, x))
// sin(pi x) / (pi x), 1 at 0.
STRIDE_SPECIAL_UNARY_MATH(sinc,
                          x == 0.0 ? 1.0 : std::sin(std::numbers::pi * x) / (std::numbers::pi * x))
STRIDE_SPECIAL_UNARY_MATH(special_i0e, std::isnan(x) ? x : scaled_bessel_i(0, std::fabs(x)))
STRIDE_SPECIAL_UNARY_MATH(special_i1, bessel_i(1, x))
STRIDE_SPECIAL_UNARY_MATH(special_i1e,
                          std::isnan(x) ? x : std::copysign(scaled_bessel_i(1, std::fabs(x)), x))
STRIDE_SPECIAL_UNARY_MATH(special_ndtr, 0.5 * std::erfc(-x * std::numbers::sqrt2 / 2.0))
STRIDE_SPECIAL_UNARY_MATH(special_ndtri, ndtri(x))
STRIDE_SPECIAL_UNARY_MATH(special_log_ndtr, log_ndtr(x))
STRIDE_SPECIAL_UNARY_MATH(special_erfcx, erfcx(x))
// -x log x: 0 at 0, -inf for negative x.
STRIDE_SPECIAL_UNARY_MATH(special_entr,
                          std::isnan(x) ? x
                          : x > 0.0     ? -x * std::log(x)
                          : x == 0.0    ? 0.0
                                        : -kInf)
STRIDE_SPECIAL_UNARY_MATH(special_bessel_j0, bessel_j(0, x))
STRIDE_SPECIAL_UNARY_MATH(special_bessel_j1, bessel_j(1, x))
STRIDE_SPECIAL_UNARY_MATH(special_bessel_y0, bessel_y(0, x))
STRIDE_SPECIAL_UNARY_MATH(special_bessel_y1, bessel_y(1, x))
STRIDE_SPECIAL_UNARY_MATH(special_modified_bessel_i0, bessel_i(0, x))
STRIDE_SPECIAL_UNARY_MATH(special_modified_bessel_i1, bessel_i(1, x))
STRIDE_SPECIAL_UNARY_MATH(special_modified_bessel_k0, bessel_k(0, x, false))
STRIDE_SPECIAL_UNARY_MATH(special_modified_bessel_k1, bessel_k(1, x, false))
STRIDE_SPECIAL_UNARY_MATH(special_scaled_modified_bessel_k0, bessel_k(0, x, true))
STRIDE_SPECIAL_UNARY_MATH(special_scaled_modified_bessel_k1, bessel_k(1, x, true))
// Ai(x); NaN at the infinities, as PyTorch's.
STRIDE_SPECIAL_UNARY_MATH(special_airy_ai, std::isinf(x) ? kNaN : boost::math::airy_ai(x, Policy()))
// sin(x) / x, 1 at 0.
STRIDE_SPECIAL_UNARY_MATH(special_spherical_bessel_j0,
                          x == 0.0        ? 1.0
                          : std::isinf(x) ? 0.0
                                          : std::sin(x) / x)

// x log1p(y), 0 where x is 0 unless y is NaN.
STRIDE_SPECIAL_BINARY_MATH(special_xlog1py, std::isnan(b) ? b : a == 0.0 ? 0.0 : a * std::log1p(b))
STRIDE_SPECIAL_BINARY_MATH(special_zeta, hurwitz_zeta(a, b))
STRIDE_SPECIAL_BINARY_MATH(igamma, incomplete_gamma(a, b, false))
STRIDE_SPECIAL_BINARY_MATH(igammac, incomplete_gamma(a, b, true))
STRIDE_POLYNOMIAL_MATH(special_chebyshev_polynomial_t, chebyshev_t)
STRIDE_POLYNOMIAL_MATH(special_chebyshev_polynomial_u, chebyshev_u)
STRIDE_POLYNOMIAL_MATH(special_chebyshev_polynomial_v, chebyshev_v)
STRIDE_POLYNOMIAL_MATH(special_chebyshev_polynomial_w, chebyshev_w)
STRIDE_POLYNOMIAL_MATH(special_hermite_polynomial_h, hermite_h)
STRIDE_POLYNOMIAL_MATH(special_hermite_polynomial_he, hermite_he)
STRIDE_POLYNOMIAL_MATH(special_laguerre_polynomial_l, laguerre_l)
STRIDE_POLYNOMIAL_MATH(special_legendre_polynomial_p, legendre_p)

// The shifted Chebyshev polynomials: T*_n(x) = T_n(2x - 1), and so on.
#define STRIDE_SHIFTED_POLYNOMIAL_MATH(name, polynomial)                      \
  struct name {                                                               \
    template <class T>                                                        \
    T operator()(T x, T n) const {                                            \
      const double shifted = double(x) + double(x) - 1.0;                     \
      return n != n ? n : T(special_detail::polynomial(shifted, int64_t(n))); \
    }                                                                         \
  };
STRIDE_SHIFTED_POLYNOMIAL_MATH(special_shifted_chebyshev_polynomial_t, chebyshev_t)
STRIDE_SHIFTED_POLYNOMIAL_MATH(special_shifted_chebyshev_polynomial_u, chebyshev_u)
STRIDE_SHIFTED_POLYNOMIAL_MATH(special_shifted_chebyshev_polynomial_v, chebyshev_v)
STRIDE_SHIFTED_POLYNOMIAL_MATH(special_shifted_chebyshev_polynomial_w, chebyshev_w)

// The next representable value after x toward y, in T itself.
struct nextafter {
  template <class T>
  T operator()(T x, T y) const {
    return std::nextafter(x, y);
  }
};

// psi^(n)(x), n >= 0 (the op checks n).
struct polygamma {
  int64_t n;
  template <class T>
  T operator()(T x) const {
    return T(special_detail::polygamma(n, double(x)));
  }
};

#undef STRIDE_SHIFTED_POLYNOMIAL_MATH
#undef STRIDE_POLYNOMIAL_MATH
#undef STRIDE_SPECIAL_BINARY_MATH
#undef STRIDE_SPECIAL_UNARY_MATH

}  // namespace stride::math
