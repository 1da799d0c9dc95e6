// The op library: factories, elementwise ops with broadcasting, reductions,
// linear algebra, indexing. Every op has an out-of-place form; in-place forms
// are Tensor methods ending in `_`; `*_out(out, ...)` writes into `out`, which
// must have the broadcast shape (it is resized only when it has no elements)
// and may have any strides.
//
// Dtypes: binary ops promote as PyTorch does (promote_types; a Scalar does not
// raise a tensor's dtype within its category). Comparisons return bool.
// Transcendental ops on integer tensors compute in float32.
#pragma once

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "stride/factory.h"  // empty, empty_strided, empty_packed, empty_like
#include "stride/fft.h"      // torch.fft and torch.signal.windows
#include "stride/tensor.h"

namespace stride {

// ---- factories (the ones that only allocate are in factory.h) ----
Tensor zeros(IntArrayRef shape, TensorOptions options = {});
Tensor ones(IntArrayRef shape, TensorOptions options = {});
Tensor full(IntArrayRef shape, const Scalar& value, TensorOptions options = {});
// int64 when every argument is an integer, else float32 (as torch.arange),
// unless a dtype is given.
Tensor arange(const Scalar& end, std::optional<ScalarType> dtype = std::nullopt);
Tensor arange(const Scalar& start,
              const Scalar& end,
              const Scalar& step = 1,
              std::optional<ScalarType> dtype = std::nullopt);
Tensor eye(int64_t n, std::optional<int64_t> m = std::nullopt, TensorOptions options = {});
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);
Tensor full_like(const Tensor& t, const Scalar& value);
Tensor rand_like(const Tensor& t, Generator* gen = nullptr);
Tensor randn_like(const Tensor& t, Generator* gen = nullptr);
// A 0-d tensor holding `value`.
Tensor scalar_tensor(const Scalar& value, TensorOptions options = {});
// Copies `values` into a new tensor of `shape` (1-d when shape is omitted).
template <class T>
Tensor tensor(const std::vector<T>& values, IntArrayRef shape = {});
template <class T>
Tensor tensor(std::initializer_list<T> values, IntArrayRef shape = {}) {
  return tensor(std::vector<T>(values), shape);
}
Tensor from_blob(const void* data, IntArrayRef shape, ScalarType dtype);  // copies

Tensor rand(IntArrayRef shape, TensorOptions options = {}, Generator* gen = nullptr);
Tensor randn(IntArrayRef shape, TensorOptions options = {}, Generator* gen = nullptr);
// Integers uniform in [low, high).
Tensor randint(int64_t low,
               int64_t high,
               IntArrayRef shape,
               TensorOptions options = kInt64,
               Generator* gen = nullptr);

// ---- elementwise (out-of-place) ----
Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Tensor& exponent);
Tensor pow(const Tensor& a, const Scalar& exponent);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor atan2(const Tensor& a, const Tensor& b);
Tensor hypot(const Tensor& a, const Tensor& b);
Tensor logaddexp(const Tensor& a, const Tensor& b);
Tensor logaddexp2(const Tensor& a, const Tensor& b);
Tensor copysign(const Tensor& a, const Tensor& b);
Tensor xlogy(const Tensor& a, const Tensor& b);
Tensor neg(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor silu(const Tensor& x);
Tensor gelu(const Tensor& x);  // exact (erf) form, PyTorch's default
Tensor square(const Tensor& x);
Tensor reciprocal(const Tensor& x);
Tensor expm1(const Tensor& x);
Tensor log1p(const Tensor& x);
Tensor log2(const Tensor& x);
Tensor log10(const Tensor& x);
Tensor exp2(const Tensor& x);
Tensor tan(const Tensor& x);
Tensor asin(const Tensor& x);
Tensor acos(const Tensor& x);
Tensor atan(const Tensor& x);
Tensor sinh(const Tensor& x);
Tensor cosh(const Tensor& x);
Tensor asinh(const Tensor& x);
Tensor acosh(const Tensor& x);
Tensor atanh(const Tensor& x);
Tensor erf(const Tensor& x);
Tensor erfc(const Tensor& x);
Tensor sign(const Tensor& x);
Tensor floor(const Tensor& x);
Tensor ceil(const Tensor& x);
Tensor round(const Tensor& x);
Tensor trunc(const Tensor& x);
Tensor frac(const Tensor& x);
Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max);
// Tensor bounds, broadcast with x: max(min(x, max), min).
Tensor clamp(const Tensor& x, const std::optional<Tensor>& min, const std::optional<Tensor>& max);
// a / b with the quotient rounded: rounding_mode "trunc" (toward zero) or
// "floor"; integer operands keep their dtype.
Tensor div(const Tensor& a, const Tensor& b, std::string_view rounding_mode);
// The remainder of a / b in the promoted dtype: with a's sign (C's fmod) or
// with b's sign (remainder, Python's %). An integer division by zero is an
// Error ("ZeroDivisionError", as PyTorch's); a floating one gives NaN. A
// number operand is converted to the tensor's dtype first, as PyTorch's.
Tensor fmod(const Tensor& a, const Tensor& b);
Tensor fmod(const Tensor& a, const Scalar& b);
Tensor remainder(const Tensor& a, const Tensor& b);
Tensor remainder(const Tensor& a, const Scalar& b);
Tensor remainder(const Scalar& a, const Tensor& b);
// (mantissa, exponent) with x = mantissa * 2^exponent and |mantissa| in
// [0.5, 1): the mantissa of x's floating dtype, the exponent int32; 0, inf
// and NaN are their own mantissa, with exponent 0.
std::pair<Tensor, Tensor> frexp(const Tensor& x);
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Scalar& value);
// value a 0-d tensor (converted to x's dtype; it may require grad).
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& value);
Tensor isnan(const Tensor& x);
Tensor isinf(const Tensor& x);
Tensor isfinite(const Tensor& x);
Tensor tril(const Tensor& x, int64_t diagonal = 0);
Tensor triu(const Tensor& x, int64_t diagonal = 0);
// Integer ops on bool and the integers (PyTorch's names; no gradient):
// bitwise logic, shifts (a count outside [0, bits) shifts every bit out:
// 0, or -1 for a negative operand's right shift), gcd and lcm (non-negative).
Tensor bitwise_and(const Tensor& a, const Tensor& b);
Tensor bitwise_or(const Tensor& a, const Tensor& b);
Tensor bitwise_xor(const Tensor& a, const Tensor& b);
Tensor bitwise_not(const Tensor& x);
Tensor bitwise_left_shift(const Tensor& a, const Tensor& b);
Tensor bitwise_right_shift(const Tensor& a, const Tensor& b);
Tensor gcd(const Tensor& a, const Tensor& b);
Tensor lcm(const Tensor& a, const Tensor& b);
Tensor& bitwise_and_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& bitwise_or_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& bitwise_xor_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& bitwise_left_shift_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& bitwise_right_shift_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& gcd_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& lcm_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
// Composites of the ops above (src/ops/elementwise_composites.cpp), as
// PyTorch's: logical_* treat nonzero as true and give bool; fmax/fmin are
// maximum/minimum taking the other operand where one is NaN; round with
// decimals rounds x * 10^decimals (half to even) and scales back; isclose
// tests |a - b| <= atol + rtol * |b|, infinities equal only to themselves.
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);
Tensor logical_not(const Tensor& x);
Tensor fmax(const Tensor& a, const Tensor& b);
Tensor fmin(const Tensor& a, const Tensor& b);
Tensor round(const Tensor& x, int64_t decimals);
Tensor isclose(const Tensor& a,
               const Tensor& b,
               double rtol = 1e-5,
               double atol = 1e-8,
               bool equal_nan = false);
Tensor addcmul(const Tensor& input, const Tensor& t1, const Tensor& t2, const Scalar& value = 1);
Tensor addcdiv(const Tensor& input, const Tensor& t1, const Tensor& t2, const Scalar& value = 1);
// steps points from start to end, evenly spaced (linspace) or their powers
// of base (logspace), in options' dtype (float32 by default).
Tensor linspace(double start, double end, int64_t steps, TensorOptions options = {});
Tensor logspace(
    double start, double end, int64_t steps, double base = 10.0, TensorOptions options = {});
Tensor lerp(const Tensor& start, const Tensor& end, const Scalar& weight);
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight);

// ---- special functions (CPU only; src/core/op_list.h) ----
// torch.special's functions keep their names with a special_ prefix.
Tensor lgamma(const Tensor& x);
Tensor digamma(const Tensor& x);
Tensor erfinv(const Tensor& x);
Tensor i0(const Tensor& x);
Tensor sinc(const Tensor& x);
Tensor special_i0e(const Tensor& x);
Tensor special_i1(const Tensor& x);
Tensor special_i1e(const Tensor& x);
Tensor special_ndtr(const Tensor& x);
Tensor special_ndtri(const Tensor& x);
Tensor special_log_ndtr(const Tensor& x);
Tensor special_erfcx(const Tensor& x);
Tensor special_entr(const Tensor& x);
Tensor special_bessel_j0(const Tensor& x);
Tensor special_bessel_j1(const Tensor& x);
Tensor special_bessel_y0(const Tensor& x);
Tensor special_bessel_y1(const Tensor& x);
Tensor special_modified_bessel_i0(const Tensor& x);
Tensor special_modified_bessel_i1(const Tensor& x);
Tensor special_modified_bessel_k0(const Tensor& x);
Tensor special_modified_bessel_k1(const Tensor& x);
Tensor special_scaled_modified_bessel_k0(const Tensor& x);
Tensor special_scaled_modified_bessel_k1(const Tensor& x);
Tensor special_airy_ai(const Tensor& x);
Tensor special_spherical_bessel_j0(const Tensor& x);
// The polynomials p_n(x) take (x, n); n is truncated to an integer.
Tensor special_xlog1py(const Tensor& a, const Tensor& b);
Tensor special_zeta(const Tensor& a, const Tensor& b);
Tensor igamma(const Tensor& a, const Tensor& b);
Tensor igammac(const Tensor& a, const Tensor& b);
Tensor special_chebyshev_polynomial_t(const Tensor& a, const Tensor& b);
Tensor special_chebyshev_polynomial_u(const Tensor& a, const Tensor& b);
Tensor special_chebyshev_polynomial_v(const Tensor& a, const Tensor& b);
Tensor special_chebyshev_polynomial_w(const Tensor& a, const Tensor& b);
Tensor special_shifted_chebyshev_polynomial_t(const Tensor& a, const Tensor& b);
Tensor special_shifted_chebyshev_polynomial_u(const Tensor& a, const Tensor& b);
Tensor special_shifted_chebyshev_polynomial_v(const Tensor& a, const Tensor& b);
Tensor special_shifted_chebyshev_polynomial_w(const Tensor& a, const Tensor& b);
Tensor special_hermite_polynomial_h(const Tensor& a, const Tensor& b);
Tensor special_hermite_polynomial_he(const Tensor& a, const Tensor& b);
Tensor special_laguerre_polynomial_l(const Tensor& a, const Tensor& b);
Tensor special_legendre_polynomial_p(const Tensor& a, const Tensor& b);
Tensor nextafter(const Tensor& a, const Tensor& b);
// The n-th derivative of digamma, n >= 0.
Tensor polygamma(int64_t n, const Tensor& x);
// The log of the multivariate gamma function of dimension p >= 1; every
// element of x must exceed (p-1)/2.
Tensor mvlgamma(const Tensor& x, int64_t p);
// log(x / (1 - x)), x clamped to [eps, 1 - eps] when eps is given.
Tensor logit(const Tensor& x, std::optional<double> eps = std::nullopt);
Tensor& lgamma_out(Tensor& out, const Tensor& x);
Tensor& digamma_out(Tensor& out, const Tensor& x);
Tensor& erfinv_out(Tensor& out, const Tensor& x);
Tensor& i0_out(Tensor& out, const Tensor& x);
Tensor& sinc_out(Tensor& out, const Tensor& x);
Tensor& special_i0e_out(Tensor& out, const Tensor& x);
Tensor& special_i1_out(Tensor& out, const Tensor& x);
Tensor& special_i1e_out(Tensor& out, const Tensor& x);
Tensor& special_ndtr_out(Tensor& out, const Tensor& x);
Tensor& special_ndtri_out(Tensor& out, const Tensor& x);
Tensor& special_log_ndtr_out(Tensor& out, const Tensor& x);
Tensor& special_erfcx_out(Tensor& out, const Tensor& x);
Tensor& special_entr_out(Tensor& out, const Tensor& x);
Tensor& special_bessel_j0_out(Tensor& out, const Tensor& x);
Tensor& special_bessel_j1_out(Tensor& out, const Tensor& x);
Tensor& special_bessel_y0_out(Tensor& out, const Tensor& x);
Tensor& special_bessel_y1_out(Tensor& out, const Tensor& x);
Tensor& special_modified_bessel_i0_out(Tensor& out, const Tensor& x);
Tensor& special_modified_bessel_i1_out(Tensor& out, const Tensor& x);
Tensor& special_modified_bessel_k0_out(Tensor& out, const Tensor& x);
Tensor& special_modified_bessel_k1_out(Tensor& out, const Tensor& x);
Tensor& special_scaled_modified_bessel_k0_out(Tensor& out, const Tensor& x);
Tensor& special_scaled_modified_bessel_k1_out(Tensor& out, const Tensor& x);
Tensor& special_airy_ai_out(Tensor& out, const Tensor& x);
Tensor& special_spherical_bessel_j0_out(Tensor& out, const Tensor& x);
Tensor& special_xlog1py_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& special_zeta_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& igamma_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& igammac_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& special_chebyshev_polynomial_t_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& special_chebyshev_polynomial_u_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& special_chebyshev_polynomial_v_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& special_chebyshev_polynomial_w_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& special_shifted_chebyshev_polynomial_t_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& special_shifted_chebyshev_polynomial_u_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& special_shifted_chebyshev_polynomial_v_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& special_shifted_chebyshev_polynomial_w_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& special_hermite_polynomial_h_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& special_hermite_polynomial_he_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& special_laguerre_polynomial_l_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& special_legendre_polynomial_p_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& nextafter_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& polygamma_out(Tensor& out, int64_t n, const Tensor& x);
// Degrees to radians and back (integers compute in float32).
Tensor deg2rad(const Tensor& x);
Tensor rad2deg(const Tensor& x);
// Whether each element's sign bit is set (true for -0.0).
Tensor signbit(const Tensor& x);
Tensor isposinf(const Tensor& x);
Tensor isneginf(const Tensor& x);
// NaN, +inf and -inf replaced: by default with 0 and the dtype's largest and
// lowest finite values.
Tensor nan_to_num(const Tensor& x,
                  std::optional<double> nan = 0.0,
                  std::optional<double> posinf = std::nullopt,
                  std::optional<double> neginf = std::nullopt);
// 1 where x > 0, values where x is 0, else 0; x and values of one dtype.
Tensor heaviside(const Tensor& x, const Tensor& values);
// x * 2^other.
Tensor ldexp(const Tensor& x, const Tensor& other);
// x^exponent computed in float64.
Tensor float_power(const Tensor& x, const Tensor& exponent);
Tensor float_power(const Tensor& x, const Scalar& exponent);

// ---- elementwise (out=) ----
Tensor& add_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor& sub_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor& mul_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& div_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& fmod_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& remainder_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& pow_out(Tensor& out, const Tensor& a, const Tensor& exponent);
Tensor& maximum_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& minimum_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& atan2_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& hypot_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& logaddexp_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& logaddexp2_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& copysign_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& xlogy_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& neg_out(Tensor& out, const Tensor& x);
Tensor& abs_out(Tensor& out, const Tensor& x);
Tensor& exp_out(Tensor& out, const Tensor& x);
Tensor& log_out(Tensor& out, const Tensor& x);
Tensor& sqrt_out(Tensor& out, const Tensor& x);
Tensor& rsqrt_out(Tensor& out, const Tensor& x);
Tensor& sin_out(Tensor& out, const Tensor& x);
Tensor& cos_out(Tensor& out, const Tensor& x);
Tensor& tanh_out(Tensor& out, const Tensor& x);
Tensor& sigmoid_out(Tensor& out, const Tensor& x);
Tensor& relu_out(Tensor& out, const Tensor& x);
Tensor& silu_out(Tensor& out, const Tensor& x);
Tensor& gelu_out(Tensor& out, const Tensor& x);
Tensor& square_out(Tensor& out, const Tensor& x);
Tensor& reciprocal_out(Tensor& out, const Tensor& x);
Tensor& expm1_out(Tensor& out, const Tensor& x);
Tensor& log1p_out(Tensor& out, const Tensor& x);
Tensor& log2_out(Tensor& out, const Tensor& x);
Tensor& log10_out(Tensor& out, const Tensor& x);
Tensor& exp2_out(Tensor& out, const Tensor& x);
Tensor& tan_out(Tensor& out, const Tensor& x);
Tensor& asin_out(Tensor& out, const Tensor& x);
Tensor& acos_out(Tensor& out, const Tensor& x);
Tensor& atan_out(Tensor& out, const Tensor& x);
Tensor& sinh_out(Tensor& out, const Tensor& x);
Tensor& cosh_out(Tensor& out, const Tensor& x);
Tensor& asinh_out(Tensor& out, const Tensor& x);
Tensor& acosh_out(Tensor& out, const Tensor& x);
Tensor& atanh_out(Tensor& out, const Tensor& x);
Tensor& erf_out(Tensor& out, const Tensor& x);
Tensor& erfc_out(Tensor& out, const Tensor& x);
Tensor& sign_out(Tensor& out, const Tensor& x);
Tensor& floor_out(Tensor& out, const Tensor& x);
Tensor& ceil_out(Tensor& out, const Tensor& x);
Tensor& round_out(Tensor& out, const Tensor& x);
Tensor& trunc_out(Tensor& out, const Tensor& x);
Tensor& frac_out(Tensor& out, const Tensor& x);
Tensor& clamp_out(Tensor& out,
                  const Tensor& x,
                  std::optional<Scalar> min,
                  std::optional<Scalar> max);
Tensor& where_out(Tensor& out, const Tensor& condition, const Tensor& a, const Tensor& b);
Tensor& eq_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& ne_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& lt_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& le_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& gt_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& ge_out(Tensor& out, const Tensor& a, const Tensor& b);

// ---- reductions (dims empty = all dims) ----
Tensor sum(const Tensor& x,
           IntArrayRef dims = {},
           bool keepdim = false,
           std::optional<ScalarType> dtype = std::nullopt);
Tensor mean(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false);
// correction: the divisor is count - correction (1: Bessel's), clamped at 0.
Tensor var(const Tensor& x, IntArrayRef dims = {}, double correction = 1, bool keepdim = false);
// (std_dev: PyTorch's std, named so beside namespace std.)
Tensor std_dev(const Tensor& x, IntArrayRef dims = {}, double correction = 1, bool keepdim = false);
// (var, mean) and (std, mean) of the same blocks.
std::pair<Tensor, Tensor> var_mean(const Tensor& x,
                                   IntArrayRef dims = {},
                                   double correction = 1,
                                   bool keepdim = false);
std::pair<Tensor, Tensor> std_mean(const Tensor& x,
                                   IntArrayRef dims = {},
                                   double correction = 1,
                                   bool keepdim = false);
// The product of each block (dim: one dim, else every element), in dtype
// when given, else x's (int64 for integers and bool). The gradient is exact
// where the block holds zeros.
Tensor prod(const Tensor& x,
            std::optional<int64_t> dim = std::nullopt,
            bool keepdim = false,
            std::optional<ScalarType> dtype = std::nullopt);
// sum and mean with NaN read as zero (nanmean: over the non-NaN elements).
Tensor nansum(const Tensor& x,
              IntArrayRef dims = {},
              bool keepdim = false,
              std::optional<ScalarType> dtype = std::nullopt);
Tensor nanmean(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false);
// The number of non-zero elements of each block, int64.
Tensor count_nonzero(const Tensor& x, IntArrayRef dims = {});
// (amin, amax) in one call; dim: one dim, else every element.
std::pair<Tensor, Tensor> aminmax(const Tensor& x,
                                  std::optional<int64_t> dim = std::nullopt,
                                  bool keepdim = false);
// The lower median of every element (NaN when one is NaN; nanmedian: of the
// non-NaN elements), and along dim with the index of the median element.
Tensor median(const Tensor& x);
std::pair<Tensor, Tensor> median(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor nanmedian(const Tensor& x);
std::pair<Tensor, Tensor> nanmedian(const Tensor& x, int64_t dim, bool keepdim = false);
// The k-th smallest element (1-based) along dim and its index.
std::pair<Tensor, Tensor> kthvalue(const Tensor& x,
                                   int64_t k,
                                   int64_t dim = -1,
                                   bool keepdim = false);
// The most frequent value along dim (the smallest among ties) and its last index.
std::pair<Tensor, Tensor> mode(const Tensor& x, int64_t dim = -1, bool keepdim = false);
// The q-quantiles (q a float in [0, 1] or a 1-d tensor of them) of each
// block, interpolating between neighbours as `interpolation` says: linear,
// lower, higher, nearest, midpoint. nanquantile leaves NaNs out.
Tensor quantile(const Tensor& x,
                const Tensor& q,
                std::optional<int64_t> dim = std::nullopt,
                bool keepdim = false,
                std::string_view interpolation = "linear");
Tensor nanquantile(const Tensor& x,
                   const Tensor& q,
                   std::optional<int64_t> dim = std::nullopt,
                   bool keepdim = false,
                   std::string_view interpolation = "linear");
Tensor amax(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false);
Tensor amin(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false);
std::pair<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim = false);
std::pair<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor argmax(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor logsumexp(const Tensor& x, IntArrayRef dims, bool keepdim = false);
Tensor norm(const Tensor& x, double p = 2, IntArrayRef dims = {}, bool keepdim = false);
// Whether every (any) element of each block is non-zero, as bool; an empty
// block gives true (false).
Tensor all(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false);
Tensor any(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false);
// Running sums (products) along dim, in dtype when given, else x's (int64
// for integers and bool).
Tensor cumsum(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
Tensor cumprod(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
// Running max (min) along dim and the index where it was last reached.
std::pair<Tensor, Tensor> cummax(const Tensor& x, int64_t dim);
std::pair<Tensor, Tensor> cummin(const Tensor& x, int64_t dim);
// log(cumsum(exp(x))) along dim, without overflow.
Tensor logcumsumexp(const Tensor& x, int64_t dim);

// ---- sorting and sampling ----
// (values, indices) of x sorted along dim; NaN sorts above every number;
// equal elements keep their order when stable, else are where PyTorch's CPU
// sort puts them.
std::pair<Tensor, Tensor> sort(const Tensor& x,
                               int64_t dim = -1,
                               bool descending = false,
                               bool stable = false);
Tensor argsort(const Tensor& x, int64_t dim = -1, bool descending = false, bool stable = false);
// x sorted along dim 0.
Tensor msort(const Tensor& x);
// (values, indices) of the k largest (smallest) elements along dim, in order
// when sorted (else in PyTorch's CPU order); ties as PyTorch's CPU topk.
std::pair<Tensor, Tensor> topk(
    const Tensor& x, int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true);
// num_samples category indices drawn from each row of probs (1-d or 2-d,
// non-negative weights, not necessarily normalised).
Tensor multinomial(const Tensor& probs,
                   int64_t num_samples,
                   bool replacement = false,
                   Generator* gen = nullptr);
Tensor& sum_out(Tensor& out, const Tensor& x, IntArrayRef dims, bool keepdim = false);
Tensor& amax_out(Tensor& out, const Tensor& x, IntArrayRef dims, bool keepdim = false);
// out= forms of the ops below compute into a buffer and copy into `out`
// (any layout; checked for shape and dtype like every out=).
Tensor& amin_out(Tensor& out, const Tensor& x, IntArrayRef dims, bool keepdim = false);
Tensor& mean_out(Tensor& out, const Tensor& x, IntArrayRef dims, bool keepdim = false);
Tensor& var_out(
    Tensor& out, const Tensor& x, IntArrayRef dims, double correction = 1, bool keepdim = false);
Tensor& logsumexp_out(Tensor& out, const Tensor& x, IntArrayRef dims, bool keepdim = false);
Tensor& norm_out(Tensor& out, const Tensor& x, double p, IntArrayRef dims, bool keepdim = false);
// (values, indices) of max/min along `dim` written into the two outs.
void max_out(Tensor& values, Tensor& indices, const Tensor& x, int64_t dim, bool keepdim = false);
void min_out(Tensor& values, Tensor& indices, const Tensor& x, int64_t dim, bool keepdim = false);

// ---- complex numbers ----
// complex64 and complex128 tensors store a real and an imaginary part side
// by side. Views that share the storage, as PyTorch's: view_as_real(z)
// (..., 2) of the parts' dtype, and view_as_complex(x) for a real x whose
// last dim has size 2 and stride 1 (and whose other strides are even).
Tensor view_as_real(const Tensor& z);
Tensor view_as_complex(const Tensor& x);
// The parts as views of z; real() of a real tensor is the tensor itself,
// imag() of one is an error (as PyTorch).
Tensor real(const Tensor& z);
Tensor imag(const Tensor& z);
// real + i imag of two real tensors of the same dtype (float32 or float64),
// broadcast together; abs * (cos(angle) + i sin(angle)) for polar.
Tensor complex(const Tensor& real, const Tensor& imag);
Tensor polar(const Tensor& abs, const Tensor& angle);
// The complex conjugate. stride has no lazy conjugate bit: conj is
// conj_physical (a new tensor for complex inputs, the input itself for real
// ones) and resolve_conj returns its input.
Tensor conj(const Tensor& z);
Tensor conj_physical(const Tensor& z);
Tensor resolve_conj(const Tensor& z);
// The argument atan2(imag, real), in the parts' dtype (0 or pi for reals).
Tensor angle(const Tensor& z);
// Whether each element has a zero imaginary part (true for real tensors).
Tensor isreal(const Tensor& z);

// ---- numeric composites (src/ops/numeric_composites.cpp) ----
// Composites of the ops above with PyTorch's semantics; their gradients are
// those of the ops they are written with.
// The sum of the main diagonal of a matrix (int64 for integers and bool).
Tensor trace(const Tensor& x);
// The n-th forward difference along dim (logical xor for bool), with
// prepend and append joined to x along dim first (0-d ones broadcast to a
// slice); n larger than the dim's size leaves it empty.
Tensor diff(const Tensor& x,
            int64_t n = 1,
            int64_t dim = -1,
            const std::optional<Tensor>& prepend = std::nullopt,
            const std::optional<Tensor>& append = std::nullopt);
// The trapezoidal rule along dim, with sample points x (1-d along dim, or
// broadcasting with y) or a uniform spacing dx; cumulative_trapezoid keeps
// the running integral (one element fewer along dim).
Tensor trapezoid(const Tensor& y, const Tensor& x, int64_t dim = -1);
Tensor trapezoid(const Tensor& y, double dx = 1.0, int64_t dim = -1);
Tensor cumulative_trapezoid(const Tensor& y, const Tensor& x, int64_t dim = -1);
Tensor cumulative_trapezoid(const Tensor& y, double dx = 1.0, int64_t dim = -1);
// The covariance of the rows of x (variables) over its columns
// (observations), weighted by integer fweights and floating aweights;
// corrcoef is the Pearson correlation, clipped to [-1, 1].
Tensor cov(const Tensor& x,
           int64_t correction = 1,
           const std::optional<Tensor>& fweights = std::nullopt,
           const std::optional<Tensor>& aweights = std::nullopt);
Tensor corrcoef(const Tensor& x);
// Each slice of x along dim whose p-norm exceeds maxnorm, scaled to norm
// maxnorm (by maxnorm / (norm + 1e-7), as PyTorch's).
Tensor renorm(const Tensor& x, double p, int64_t dim, double maxnorm);
// The derivative of x along each of dims by central differences (one-sided
// of edge_order 1 or 2 at the ends): with a uniform spacing per dim, or with
// the coordinates of the samples (1-d tensors) per dim.
std::vector<Tensor> gradient(const Tensor& x,
                             const std::vector<double>& spacing,
                             IntArrayRef dims,
                             int64_t edge_order = 1);
std::vector<Tensor> gradient(const Tensor& x,
                             const std::vector<Tensor>& coordinates,
                             IntArrayRef dims,
                             int64_t edge_order = 1);
// A histogram of x (floating point), weighted, or a density: bins equal
// bins over range (x's min and max when not given; an empty range widens by
// 0.5 each way) or the given increasing edges. (hist, bin_edges).
struct HistogramResult {
  Tensor hist, bin_edges;
};
HistogramResult histogram(const Tensor& x,
                          int64_t bins = 100,
                          std::optional<std::pair<double, double>> range = std::nullopt,
                          const std::optional<Tensor>& weight = std::nullopt,
                          bool density = false);
HistogramResult histogram(const Tensor& x,
                          const Tensor& bins,
                          const std::optional<Tensor>& weight = std::nullopt,
                          bool density = false);
// The histogram of the points x (..., D) in D dims: bins per dim (counts,
// or each dim's edges), range the D (min, max) pairs.
struct HistogramddResult {
  Tensor hist;
  std::vector<Tensor> bin_edges;
};
HistogramddResult histogramdd(const Tensor& x,
                              IntArrayRef bins,
                              const std::vector<std::pair<double, double>>& range = {},
                              const std::optional<Tensor>& weight = std::nullopt,
                              bool density = false);
HistogramddResult histogramdd(const Tensor& x,
                              const std::vector<Tensor>& bins,
                              const std::optional<Tensor>& weight = std::nullopt,
                              bool density = false);
// sign for real tensors; z / |z| (0 at 0) for complex ones.
Tensor sgn(const Tensor& x);
// stride has no lazy negative bit: resolve_neg returns its input.
Tensor resolve_neg(const Tensor& x);
// The (2, N) row and column indices of the lower (upper) triangle of a
// row x col matrix, offset diagonals above (below) the main one, row-major.
Tensor tril_indices(int64_t row, int64_t col, int64_t offset = 0, TensorOptions options = kInt64);
Tensor triu_indices(int64_t row, int64_t col, int64_t offset = 0, TensorOptions options = kInt64);
// The coordinates in a tensor of `shape` of each flat index (integers): one
// int64 tensor per dim of shape, each of indices' shape.
std::vector<Tensor> unravel_index(const Tensor& indices, IntArrayRef shape);

// ---- linear algebra ----
// matmul follows torch.matmul: 1-d operands are promoted and the added dim
// removed; batch dims broadcast. (.., n, k) @ (.., k, m) -> (.., n, m).
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor mm(const Tensor& a, const Tensor& b);   // (n, k) @ (k, m)
Tensor bmm(const Tensor& a, const Tensor& b);  // (B, n, k) @ (B, k, m)
// a (n) and b (m) -> (n, m), a[i] * b[j].
Tensor outer(const Tensor& a, const Tensor& b);
// beta * input + alpha * (m1 @ m2), input broadcast to (n, m); beta = 0
// ignores input's values (NaN included).
Tensor addmm(const Tensor& input,
             const Tensor& m1,
             const Tensor& m2,
             const Scalar& beta = 1,
             const Scalar& alpha = 1);
// The batched form: beta * input + alpha * bmm(b1, b2).
Tensor baddbmm(const Tensor& input,
               const Tensor& b1,
               const Tensor& b2,
               const Scalar& beta = 1,
               const Scalar& alpha = 1);
Tensor& matmul_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& mm_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& bmm_out(Tensor& out, const Tensor& a, const Tensor& b);

// ---- joining and indexing ----
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
// x with the order of its elements reversed along each of dims (a copy).
Tensor flip(const Tensor& x, IntArrayRef dims);
// x with its elements moved shifts[i] places along dims[i], wrapping around;
// without dims, along the flattened tensor (one shift).
Tensor roll(const Tensor& x, IntArrayRef shifts, IntArrayRef dims = {});
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
// x with x[... index[i] along dim ...] = src[i] (value: every such element);
// among duplicate indices one write wins.
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Scalar& value);
// x with src's elements reduced into the elements index names: reduce is
// sum, prod, mean, amax or amin; include_self=false leaves x's own values
// out of the reduction of the elements index names.
Tensor scatter_reduce(const Tensor& x,
                      int64_t dim,
                      const Tensor& index,
                      const Tensor& src,
                      std::string_view reduce,
                      bool include_self = true);
// The index_* ops: `index` (1-d) names positions along dim of x, and slice i
// of source along dim goes to position index[i]: added (times alpha),
// copied, filled with value, or reduced as scatter_reduce (prod, mean,
// amax, amin).
Tensor index_add(const Tensor& x,
                 int64_t dim,
                 const Tensor& index,
                 const Tensor& source,
                 const Scalar& alpha = 1);
Tensor index_copy(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source);
Tensor index_fill(const Tensor& x, int64_t dim, const Tensor& index, const Scalar& value);
Tensor index_reduce(const Tensor& x,
                    int64_t dim,
                    const Tensor& index,
                    const Tensor& source,
                    std::string_view reduce,
                    bool include_self = true);
// x's elements at the flat indices index (any shape; negative from the
// end), as if x were 1-d; put writes source there (adds when accumulate).
Tensor take(const Tensor& x, const Tensor& index);
Tensor put(const Tensor& x, const Tensor& index, const Tensor& source, bool accumulate = false);
// gather along dim with indices broadcast against x; without dim, x flattened.
Tensor take_along_dim(const Tensor& x,
                      const Tensor& indices,
                      std::optional<int64_t> dim = std::nullopt);
// The elements of x where mask (broadcast) is true, 1-d; masked_scatter
// writes source's leading elements there instead.
Tensor masked_select(const Tensor& x, const Tensor& mask);
Tensor masked_scatter(const Tensor& x, const Tensor& mask, const Tensor& source);
// The indices of the non-zero elements: (count, x.dim()) int64, row-major
// order (argwhere is the same).
Tensor nonzero(const Tensor& x);
// nonzero(x) with exactly `size` rows, as torch.nonzero_static: the first
// size indices, or all of them followed by rows of fill_value. Its shape
// (size, x.dim()) does not depend on x's values, so it runs on meta.
Tensor nonzero_static(const Tensor& x, int64_t size, int64_t fill_value = -1);
Tensor argwhere(const Tensor& x);
// x with src written into the view x.select(dim, index) (the slice, the
// diagonal): out-of-place, differentiable in both.
Tensor select_scatter(const Tensor& x, const Tensor& src, int64_t dim, int64_t index);
Tensor slice_scatter(const Tensor& x,
                     const Tensor& src,
                     int64_t dim = 0,
                     std::optional<int64_t> start = std::nullopt,
                     std::optional<int64_t> end = std::nullopt,
                     int64_t step = 1);
Tensor diagonal_scatter(
    const Tensor& x, const Tensor& src, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);
// x's contiguous copy with src written where as_strided(size, stride,
// storage_offset) of that copy looks (storage_offset counts from the copy's
// first element).
Tensor as_strided_scatter(const Tensor& x,
                          const Tensor& src,
                          IntArrayRef size,
                          IntArrayRef stride,
                          std::optional<int64_t> storage_offset = std::nullopt);

// ---- searching and counting ----
// For each value, the position in the last dim of sorted_sequence (ascending
// along it, or ordered by sorter) where it would be inserted: the first such
// (right: the last). int64, or int32 with out_int32.
Tensor searchsorted(const Tensor& sorted_sequence,
                    const Tensor& values,
                    bool out_int32 = false,
                    bool right = false,
                    const std::optional<Tensor>& sorter = std::nullopt);
// searchsorted against 1-d boundaries.
Tensor bucketize(const Tensor& x,
                 const Tensor& boundaries,
                 bool out_int32 = false,
                 bool right = false);
// The number of times each value 0..max occurs in x (1-d, non-negative
// integers), weighted when weights are given; at least minlength bins.
Tensor bincount(const Tensor& x,
                const std::optional<Tensor>& weights = std::nullopt,
                int64_t minlength = 0);
// A histogram of `bins` equal bins over [min, max] (both 0: x's min and max).
Tensor histc(const Tensor& x, int64_t bins = 100, double min = 0, double max = 0);
// The distinct elements (or slices along dim) of x, sorted, with the
// inverse (where each element went) and the counts when asked for (else
// empty tensors). unique_consecutive merges only runs of equal neighbours.
struct UniqueResult {
  Tensor values, inverse, counts;
};
UniqueResult unique(const Tensor& x,
                    bool sorted = true,
                    bool return_inverse = false,
                    bool return_counts = false,
                    std::optional<int64_t> dim = std::nullopt);
UniqueResult unique_consecutive(const Tensor& x,
                                bool return_inverse = false,
                                bool return_counts = false,
                                std::optional<int64_t> dim = std::nullopt);
// Whether each element of elements is in test_elements (invert: is not).
Tensor isin(const Tensor& elements,
            const Tensor& test_elements,
            bool assume_unique = false,
            bool invert = false);
// Advanced indexing, as PyTorch's aten::index and index_put. `indices` has
// one entry per leading dim of `self` (fewer leave the trailing dims whole);
// an undefined entry takes its dim whole (a `:`), an int64/int32 tensor
// picks positions along its dim (negative ones count from the end), and a
// bool mask picks the positions of its true entries along as many dims as
// it has. The index tensors broadcast together to a shape B. The result has
// B in place of the indexed dims when those are adjacent, and in front of
// the remaining dims when a whole dim separates them: self (5, 6, 7) with
// indices {i, {}, j} of shape (2,) gives (2, 6). An index outside
// [-size, size) is an IndexError naming the index, the dim and its size.
// `index` gathers a new tensor (x[i, :, j]); its gradient is scattered back,
// summing duplicates.
Tensor index(const Tensor& self, const std::vector<Tensor>& indices);
// self with the indexed elements replaced by `values` (x[i, j] = v), or
// increased by them when `accumulate` (duplicate indices then add up; without
// it the last write of a duplicate wins). `values` has self's dtype and
// broadcasts to the indexed shape. Gradients: for values, the gradient
// gathered at the indices; for self, the gradient with the indexed elements
// zeroed (unchanged when accumulating).
Tensor index_put(const Tensor& self,
                 const std::vector<Tensor>& indices,
                 const Tensor& values,
                 bool accumulate = false);
// Rows of `weight` (V, D) picked by integer `ids` of any shape: (..., D).
// Throws IndexError naming the id and V when an id is out of range.
Tensor embedding(const Tensor& weight, const Tensor& ids);

// ---- Shape ops (src/ops/shape_ops.cpp) ----
// Composites of views, cat and the products, with PyTorch's semantics: no
// kernel and no node of their own, so autograd flows through the ops they
// are written with. A result that PyTorch returns as a view is a view here.
Tensor atleast_1d(const Tensor& x);
Tensor atleast_2d(const Tensor& x);
Tensor atleast_3d(const Tensor& x);
Tensor broadcast_to(const Tensor& x, IntArrayRef shape);
std::vector<Tensor> broadcast_tensors(const std::vector<Tensor>& tensors);
// vstack: the tensors made at least 2-d, joined along dim 0; hstack: along
// dim 1 (dim 0 for 1-d ones); dstack: made at least 3-d, along dim 2;
// column_stack: 0-d and 1-d tensors become columns, joined along dim 1.
Tensor hstack(const std::vector<Tensor>& tensors);
Tensor vstack(const std::vector<Tensor>& tensors);
Tensor dstack(const std::vector<Tensor>& tensors);
Tensor column_stack(const std::vector<Tensor>& tensors);
// tensor_split into `sections` views along dim whose sizes differ by at most
// one (the first size % sections ones larger), or at the given indices.
std::vector<Tensor> tensor_split(const Tensor& x, int64_t sections, int64_t dim = 0);
std::vector<Tensor> tensor_split_at(const Tensor& x, IntArrayRef indices, int64_t dim = 0);
std::vector<Tensor> split_with_sizes(const Tensor& x, IntArrayRef sizes, int64_t dim = 0);
// hsplit/vsplit/dsplit: tensor_split along dim 1 (0 for 1-d), 0 and 2; a
// number of sections must divide the dim's size.
std::vector<Tensor> hsplit(const Tensor& x, int64_t sections);
std::vector<Tensor> vsplit(const Tensor& x, int64_t sections);
std::vector<Tensor> dsplit(const Tensor& x, int64_t sections);
std::vector<Tensor> hsplit_at(const Tensor& x, IntArrayRef indices);
std::vector<Tensor> vsplit_at(const Tensor& x, IntArrayRef indices);
std::vector<Tensor> dsplit_at(const Tensor& x, IntArrayRef indices);
// The dims `source` moved to the places `destination`, the others keeping
// their order (a view).
Tensor movedim(const Tensor& x, IntArrayRef source, IntArrayRef destination);
Tensor ravel(const Tensor& x);
Tensor fliplr(const Tensor& x);
Tensor flipud(const Tensor& x);
// x turned k quarter turns from dims[0] towards dims[1].
Tensor rot90(const Tensor& x, int64_t k = 1, IntArrayRef dims = {0, 1});
// diag: a 1-d x on the offset diagonal of a square matrix, or the offset
// diagonal of a 2-d x (a copy). diag_embed: the last dim of x on the offset
// diagonal of the new dims dim1 and dim2. diagflat: x flattened, on a
// diagonal. block_diag: the tensors (0-d to 2-d) on the diagonal blocks.
Tensor diag(const Tensor& x, int64_t diagonal = 0);
Tensor diag_embed(const Tensor& x, int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1);
Tensor diagflat(const Tensor& x, int64_t offset = 0);
Tensor block_diag(const std::vector<Tensor>& tensors);
// meshgrid: indexing "ij" (the i-th output varies along dim i) or "xy" (the
// first two dims swapped, as NumPy's); the outputs are expanded views.
std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors, std::string_view indexing = "ij");
Tensor cartesian_prod(const std::vector<Tensor>& tensors);
Tensor combinations(const Tensor& x, int64_t r = 2, bool with_replacement = false);
// repeat: x tiled repeats[i] times along dim i (leading repeats add dims);
// tile: the same with repeats padded with leading ones to x's rank.
Tensor repeat(const Tensor& x, IntArrayRef repeats);
Tensor tile(const Tensor& x, IntArrayRef repeats);
// Each element repeated `repeats` times along dim (the flattened x without
// a dim), or repeats[i] times for element i.
Tensor repeat_interleave(const Tensor& x,
                         int64_t repeats,
                         std::optional<int64_t> dim = std::nullopt);
Tensor repeat_interleave(const Tensor& x,
                         const Tensor& repeats,
                         std::optional<int64_t> dim = std::nullopt);
Tensor unflatten(const Tensor& x, int64_t dim, IntArrayRef sizes);
// x summed down to `shape`, to which x broadcasts.
Tensor sum_to_size(const Tensor& x, IntArrayRef shape);

// ---- Products (src/ops/linalg.cpp), composites of matmul ----
Tensor dot(const Tensor& a, const Tensor& b);
Tensor inner(const Tensor& a, const Tensor& b);
Tensor mv(const Tensor& m, const Tensor& v);
Tensor addmv(const Tensor& input,
             const Tensor& m,
             const Tensor& v,
             const Scalar& beta = 1,
             const Scalar& alpha = 1);
Tensor addr(const Tensor& input,
            const Tensor& v1,
            const Tensor& v2,
            const Scalar& beta = 1,
            const Scalar& alpha = 1);
Tensor kron(const Tensor& a, const Tensor& b);
// a's dims dims_a contracted with b's dims dims_b (pairwise).
Tensor tensordot(const Tensor& a, const Tensor& b, IntArrayRef dims_a, IntArrayRef dims_b);
Tensor tensordot(const Tensor& a, const Tensor& b, int64_t dims = 2);
// beta * input + alpha * the sum over the batch of b1[i] @ b2[i].
Tensor addbmm(const Tensor& input,
              const Tensor& b1,
              const Tensor& b2,
              const Scalar& beta = 1,
              const Scalar& alpha = 1);
Tensor chain_matmul(const std::vector<Tensor>& matrices);
// The p-norm distances between the rows of x1 (..., P, M) and of x2
// (..., R, M): (..., P, R). dist: the p-norm of a - b (broadcast).
Tensor cdist(const Tensor& x1, const Tensor& x2, double p = 2.0);
Tensor dist(const Tensor& a, const Tensor& b, double p = 2.0);
// Einstein summation in PyTorch's grammar (src/ops/einsum.cpp): letters
// label dims, "..." the broadcast dims, a letter twice in one operand takes
// the diagonal, "->" names the output (without it: the letters seen once,
// in alphabetical order, after the "..." dims); every other letter is
// summed over. Contracts the operands pairwise, left to right, with bmm.
Tensor einsum(std::string_view equation, const std::vector<Tensor>& operands);

Tensor& cat_out(Tensor& out, const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor& stack_out(Tensor& out, const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor& index_select_out(Tensor& out, const Tensor& x, int64_t dim, const Tensor& index);
Tensor& gather_out(Tensor& out, const Tensor& x, int64_t dim, const Tensor& index);

// ---- softmax family (numerically stable) ----
Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);

Tensor& softmax_out(Tensor& out, const Tensor& x, int64_t dim);
Tensor& log_softmax_out(Tensor& out, const Tensor& x, int64_t dim);

// True when both have the same shape and every element is within
// atol + rtol * |b| (NaNs equal only with equal_nan).
bool allclose(const Tensor& a,
              const Tensor& b,
              double rtol = 1e-5,
              double atol = 1e-8,
              bool equal_nan = false);
// True when shapes and all elements are exactly equal.
bool equal(const Tensor& a, const Tensor& b);

// ---- operators ----
inline Tensor operator+(const Tensor& a, const Tensor& b) {
  return add(a, b);
}
inline Tensor operator-(const Tensor& a, const Tensor& b) {
  return sub(a, b);
}
inline Tensor operator*(const Tensor& a, const Tensor& b) {
  return mul(a, b);
}
inline Tensor operator/(const Tensor& a, const Tensor& b) {
  return div(a, b);
}
inline Tensor operator-(const Tensor& a) {
  return neg(a);
}
inline Tensor operator+(const Tensor& a, const Scalar& b) {
  return a.add(b);
}
inline Tensor operator-(const Tensor& a, const Scalar& b) {
  return a.sub(b);
}
inline Tensor operator*(const Tensor& a, const Scalar& b) {
  return a.mul(b);
}
inline Tensor operator/(const Tensor& a, const Scalar& b) {
  return a.div(b);
}
Tensor operator+(const Scalar& a, const Tensor& b);
Tensor operator-(const Scalar& a, const Tensor& b);
Tensor operator*(const Scalar& a, const Tensor& b);
Tensor operator/(const Scalar& a, const Tensor& b);
inline Tensor& operator+=(Tensor& a, const Tensor& b) {
  return a.add_(b);
}
inline Tensor& operator-=(Tensor& a, const Tensor& b) {
  return a.sub_(b);
}
inline Tensor& operator*=(Tensor& a, const Tensor& b) {
  return a.mul_(b);
}
inline Tensor& operator/=(Tensor& a, const Tensor& b) {
  return a.div_(b);
}
inline Tensor& operator+=(Tensor& a, const Scalar& b) {
  return a.add_(b);
}
inline Tensor& operator-=(Tensor& a, const Scalar& b) {
  return a.sub_(b);
}
inline Tensor& operator*=(Tensor& a, const Scalar& b) {
  return a.mul_(b);
}
inline Tensor& operator/=(Tensor& a, const Scalar& b) {
  return a.div_(b);
}

}  // namespace stride
