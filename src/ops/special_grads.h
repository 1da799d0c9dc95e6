// The parts of the special functions' backward formulas (core/op_list.h's
// STRIDE_SPECIAL_* lists) that are more than one expression, written with
// ops so that they are differentiable again (src/ops/special.cpp).
#pragma once

#include <numbers>

#include "stride/tensor.h"

namespace stride::detail {

// 1 / sqrt(2 pi): the standard normal density's factor.
inline constexpr double kInvSqrt2Pi = std::numbers::inv_sqrtpi / std::numbers::sqrt2;

// d sinc / dx = (pi x cos(pi x) - sin(pi x)) / (pi x^2), 0 at x = 0.
Tensor sinc_derivative(const Tensor& x);
// d I_1 / dx = I_0(x) - I_1(x) / x, 1/2 at x = 0.
Tensor bessel_i1_derivative(const Tensor& x, const Tensor& i0_x, const Tensor& i1_x);
// d (e^-|x| I_1(x)) / dx = i0e(x) - i1e(x) (sign(x) + 1 / x), 1/2 at x = 0.
Tensor bessel_i1e_derivative(const Tensor& x);
// d P(a, x) / dx = x^(a-1) e^-x / Gamma(a).
Tensor incomplete_gamma_density(const Tensor& a, const Tensor& x);
// PyTorch has no gradient of `op` for its operand `argument`: a
// NotImplementedError when `operand` requires one, else a zero gradient.
Tensor refuse_gradient(const char* op,
                       const char* argument,
                       const Tensor& operand,
                       const Tensor& g);

}  // namespace stride::detail
