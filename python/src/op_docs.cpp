// The op docstrings (op_docs.h), in PyTorch's wording. A method and its
// stride.* function share the text: "input" is self for the method.
#include "op_docs.h"

#include <utility>

namespace stride::python {

namespace {

constexpr std::pair<std::string_view, const char*> kOpDocs[] = {
    // Elementwise, from the op list (STRIDE_*_OPS in src/core/op_list.h).
    {"exp", "The exponential e^x of each element of input."},
    {"log", "The natural logarithm of each element of input."},
    {"sqrt", "The square root of each element of input."},
    {"rsqrt", "The reciprocal of the square root, 1 / sqrt(x), of each element of input."},
    {"sin", "The sine of each element of input (in radians)."},
    {"cos", "The cosine of each element of input (in radians)."},
    {"tanh", "The hyperbolic tangent of each element of input."},
    {"sigmoid", "The logistic sigmoid 1 / (1 + e^-x) of each element of input."},
    {"silu", "SiLU (swish), x * sigmoid(x), of each element of input."},
    {"gelu", "GELU, x * Phi(x) with Phi the standard normal CDF (the exact erf form)."},
    {"reciprocal", "The reciprocal 1 / x of each element of input."},
    {"neg", "The negative -x of each element of input."},
    {"abs", "The absolute value |x| of each element of input."},
    {"square", "The square x * x of each element of input."},
    {"relu", "ReLU, max(x, 0), of each element of input."},
    {"expm1", "e^x - 1 of each element of input, exact near 0."},
    {"log1p", "The natural logarithm of 1 + x of each element of input, exact near 0."},
    {"log2", "The base-2 logarithm of each element of input."},
    {"log10", "The base-10 logarithm of each element of input."},
    {"exp2", "2^x of each element of input."},
    {"tan", "The tangent of each element of input (in radians)."},
    {"asin", "The arcsine of each element of input, in radians."},
    {"acos", "The arccosine of each element of input, in radians."},
    {"atan", "The arctangent of each element of input, in radians."},
    {"sinh", "The hyperbolic sine of each element of input."},
    {"cosh", "The hyperbolic cosine of each element of input."},
    {"asinh", "The inverse hyperbolic sine of each element of input."},
    {"acosh", "The inverse hyperbolic cosine of each element of input (defined for x >= 1)."},
    {"atanh", "The inverse hyperbolic tangent of each element of input (defined on [-1, 1])."},
    {"erf", "The error function of each element of input."},
    {"erfc", "The complementary error function 1 - erf(x) of each element of input."},
    {"sign", "The sign (-1, 0 or 1) of each element of input; 0 for zeros and NaN."},
    {"floor", "The largest integer not above each element of input."},
    {"ceil", "The smallest integer not below each element of input."},
    {"round", "Each element of input rounded to the nearest integer, halves to even."},
    {"trunc", "Each element of input rounded toward zero."},
    {"frac", "The fractional part x - trunc(x) of each element of input."},
    {"mul",
     "input * other elementwise; the two broadcast together and the dtype is promoted as in "
     "PyTorch."},
    {"maximum", "The elementwise maximum of input and other (broadcast); NaN propagates."},
    {"minimum", "The elementwise minimum of input and other (broadcast); NaN propagates."},
    {"atan2",
     "The angle atan(input / other) in (-pi, pi], from the signs of both (other a tensor or a "
     "number)."},
    {"hypot", "sqrt(input^2 + other^2) elementwise, without overflow."},
    {"logaddexp", "log(e^input + e^other) elementwise, without overflow."},
    {"logaddexp2", "log2(2^input + 2^other) elementwise, without overflow."},
    {"copysign", "The magnitude of input with the sign of other, elementwise."},
    {"xlogy", "input * log(other) elementwise, 0 where input is 0 (unless other is NaN)."},
    // The special functions (STRIDE_SPECIAL_* in src/core/op_list.h; CPU only).
    {"lgamma", "The natural logarithm of the absolute value of the gamma function of input."},
    {"digamma", "The digamma function psi(x), the derivative of lgamma, of each element of input."},
    {"polygamma", "The n-th derivative of the digamma function of each element of input (n >= 0)."},
    {"erfinv", "The inverse error function of each element of input (defined on [-1, 1])."},
    {"i0", "The modified Bessel function of the first kind of order 0 of each element of input."},
    {"sinc", "The normalized sinc function sin(pi x) / (pi x), 1 at 0, of each element of input."},
    {"mvlgamma", "The log of the multivariate gamma function of dimension p; elements > (p-1)/2."},
    {"logit", "log(x / (1 - x)) of each element, x clamped to [eps, 1 - eps] when eps is given."},
    {"igamma", "The regularized lower incomplete gamma function P(input, other)."},
    {"igammac", "The regularized upper incomplete gamma function Q(input, other)."},
    {"nextafter", "The next floating-point value after input toward other, elementwise."},
    {"deg2rad", "Each element of input converted from degrees to radians."},
    {"rad2deg", "Each element of input converted from radians to degrees."},
    {"signbit", "Whether the sign bit of each element of input is set (true for -0.0)."},
    {"isposinf", "Whether each element of input is positive infinity."},
    {"isneginf", "Whether each element of input is negative infinity."},
    {"nan_to_num", "input with NaN, +inf and -inf replaced by nan, posinf and neginf."},
    {"heaviside", "The Heaviside step function: 1 for x > 0, values where x is 0, else 0."},
    {"ldexp", "input * 2^other elementwise."},
    {"float_power", "input raised to exponent elementwise, computed in float64."},
    {"special_i0e", "The exponentially scaled modified Bessel function exp(-|x|) I_0(x)."},
    {"special_i1", "The modified Bessel function of the first kind of order 1 of input."},
    {"special_i1e", "The exponentially scaled modified Bessel function exp(-|x|) I_1(x)."},
    {"special_ndtr", "The standard normal cumulative distribution function of input."},
    {"special_ndtri", "The inverse of the standard normal CDF (the quantile) of input in [0, 1]."},
    {"special_log_ndtr", "The log of the standard normal CDF of input, exact in the left tail."},
    {"special_erfcx", "The scaled complementary error function exp(x^2) erfc(x) of input."},
    {"special_entr", "The entropy term -x log(x) of each element; 0 at 0, -inf below 0."},
    {"special_bessel_j0", "The Bessel function of the first kind of order 0 of input."},
    {"special_bessel_j1", "The Bessel function of the first kind of order 1 of input."},
    {"special_bessel_y0", "The Bessel function of the second kind of order 0 of input."},
    {"special_bessel_y1", "The Bessel function of the second kind of order 1 of input."},
    {"special_modified_bessel_i0", "The modified Bessel function of the first kind, order 0."},
    {"special_modified_bessel_i1", "The modified Bessel function of the first kind, order 1."},
    {"special_modified_bessel_k0", "The modified Bessel function of the second kind, order 0."},
    {"special_modified_bessel_k1", "The modified Bessel function of the second kind, order 1."},
    {"special_scaled_modified_bessel_k0", "exp(x) K_0(x), the scaled modified Bessel function."},
    {"special_scaled_modified_bessel_k1", "exp(x) K_1(x), the scaled modified Bessel function."},
    {"special_airy_ai", "The Airy function Ai of each element of input."},
    {"special_spherical_bessel_j0", "The spherical Bessel function j_0(x) = sin(x) / x."},
    {"special_xlog1py",
     "input * log1p(other) elementwise, 0 where input is 0 (unless other is NaN)."},
    {"special_zeta", "The Hurwitz zeta function zeta(input, other) = sum_k (k + other)^-input."},
    {"special_chebyshev_polynomial_t", "The Chebyshev polynomial of the first kind T_n(input)."},
    {"special_chebyshev_polynomial_u", "The Chebyshev polynomial of the second kind U_n(input)."},
    {"special_chebyshev_polynomial_v", "The Chebyshev polynomial of the third kind V_n(input)."},
    {"special_chebyshev_polynomial_w", "The Chebyshev polynomial of the fourth kind W_n(input)."},
    {"special_shifted_chebyshev_polynomial_t",
     "The shifted Chebyshev polynomial T_n(2 input - 1)."},
    {"special_shifted_chebyshev_polynomial_u",
     "The shifted Chebyshev polynomial U_n(2 input - 1)."},
    {"special_shifted_chebyshev_polynomial_v",
     "The shifted Chebyshev polynomial V_n(2 input - 1)."},
    {"special_shifted_chebyshev_polynomial_w",
     "The shifted Chebyshev polynomial W_n(2 input - 1)."},
    {"special_hermite_polynomial_h", "The physicists' Hermite polynomial H_n(input)."},
    {"special_hermite_polynomial_he", "The probabilists' Hermite polynomial He_n(input)."},
    {"special_laguerre_polynomial_l", "The Laguerre polynomial L_n(input)."},
    {"special_legendre_polynomial_p", "The Legendre polynomial P_n(input)."},
    {"eq", "input == other elementwise (other a tensor or a number), as a bool tensor."},
    {"ne", "input != other elementwise (other a tensor or a number), as a bool tensor."},
    {"lt", "input < other elementwise (other a tensor or a number), as a bool tensor."},
    {"le", "input <= other elementwise (other a tensor or a number), as a bool tensor."},
    {"gt", "input > other elementwise (other a tensor or a number), as a bool tensor."},
    {"ge", "input >= other elementwise (other a tensor or a number), as a bool tensor."},

    {"floor_divide", "input / other rounded down (div with rounding_mode='floor')."},
    {"unbind", "The views input.select(dim, i) for every i, as a tuple."},
    // Sorting, sampling and scans.
    {"sort",
     "(values, indices) of input sorted along dim (ascending unless descending=True); NaN sorts "
     "above every number and equal elements keep their order."},
    {"argsort", "The indices that sort input along dim, as sort(...).indices."},
    {"topk",
     "(values, indices) of the k largest elements along dim (smallest with largest=False), in "
     "order."},
    {"multinomial",
     "num_samples category indices drawn from each row of input, a 1-d or 2-d tensor of "
     "non-negative weights (with or without replacement)."},
    {"cumsum", "The running sums of input along dim (int64 for integer input unless dtype=)."},
    {"cumprod", "The running products of input along dim (int64 for integer input unless dtype=)."},
    {"all", "Whether every element (along dim) is non-zero, as bool; true for no elements."},
    {"any", "Whether any element (along dim) is non-zero, as bool; false for no elements."},
    {"isnan", "Whether each element of input is NaN, as bool."},
    {"isinf", "Whether each element of input is +inf or -inf, as bool."},
    {"isfinite", "Whether each element of input is finite (not inf, not NaN), as bool."},
    {"flip", "A copy of input with the order of its elements reversed along dims."},
    {"roll",
     "input with its elements moved shifts places along dims, wrapping around (the flattened "
     "tensor without dims)."},
    {"outer", "The outer product of two 1-d tensors: out[i, j] = input[i] * vec2[j]."},
    {"addmm", "beta * input + alpha * (mat1 @ mat2); beta=0 ignores input's values."},
    {"baddbmm", "beta * input + alpha * bmm(batch1, batch2); beta=0 ignores input's values."},

    // Arithmetic.
    {"add", "input + alpha * other elementwise (other a tensor, broadcast, or a number)."},
    {"sub", "input - alpha * other elementwise (other a tensor, broadcast, or a number)."},
    {"div", "input / other elementwise (true division: integers give a float result)."},
    {"pow", "input raised to the power exponent (a tensor, broadcast, or a number)."},
    {"lerp", "Linear interpolation input + weight * (end - input), elementwise."},
    {"clamp", "Each element of input clamped into [min, max] (either bound may be None)."},
    {"masked_fill", "A copy of input with value where mask (bool, broadcast to input) is True."},
    {"tril",
     "The lower triangle of the last two dims: elements above diagonal `diagonal` are zeroed."},
    {"triu",
     "The upper triangle of the last two dims: elements below diagonal `diagonal` are zeroed."},
    {"where",
     "Elements of input (self for the method) where condition is True, else of other; the "
     "three broadcast together."},
    {"addcmul_", "In place: self += value * tensor1 * tensor2 (broadcast); returns self."},
    {"addcdiv_", "In place: self += value * tensor1 / tensor2 (broadcast); returns self."},
    {"fill_", "Fills self with value, in place; returns self."},
    {"zero_", "Fills self with zeros, in place; returns self."},
    {"uniform_",
     "Fills self in place with samples uniform in [from, to), from generator= or the default "
     "generator; returns self."},
    {"normal_",
     "Fills self in place with normal samples N(mean, std^2), from generator= or the default "
     "generator; returns self."},
    {"bernoulli_",
     "Fills self in place with 1 (probability p) or 0, from generator= or the default "
     "generator; returns self."},
    {"copy_",
     "Copies src (broadcast to self, its dtype converted) into self, in place; returns self."},

    // Reductions.
    {"sum",
     "The sum of input's elements over dim (None: all; an int or a sequence of ints); "
     "keepdim keeps the reduced dims as size 1, dtype= accumulates in that dtype."},
    {"mean", "The mean of input's elements over dim (None: all); keepdim keeps reduced dims."},
    {"std",
     "The standard deviation over dim (None: all), with Bessel's correction by default "
     "(correction= or unbiased=)."},
    {"var",
     "The variance over dim (None: all), with Bessel's correction by default (correction= or "
     "unbiased=)."},
    {"max",
     "The largest element (dim None), or the tuple (values, indices) of the maxima along dim."},
    {"min",
     "The smallest element (dim None), or the tuple (values, indices) of the minima along dim."},
    {"amax", "The maxima over dim (None: all; an int or a sequence of ints), values only."},
    {"amin", "The minima over dim (None: all; an int or a sequence of ints), values only."},
    {"argmax", "The index of the largest element: over the flattened input, or along dim."},
    {"argmin", "The index of the smallest element: over the flattened input, or along dim."},
    {"logsumexp", "log(sum(exp(input))) over dim, computed without overflow."},
    {"norm",
     "The p-norm over dim (None: all elements), e.g. p=2 the Euclidean norm, "
     "p=float('inf') the largest |x|."},
    {"softmax", "exp(x) / sum(exp(x)) along dim: each slice along dim sums to 1."},
    {"log_softmax", "log(softmax(input, dim)), computed stably."},

    // Views (sharing input's memory) and copies.
    {"view",
     "A view of the same memory with another shape (one dim may be -1); RuntimeError if the "
     "strides do not allow it (reshape copies instead)."},
    {"reshape",
     "input with another shape (one dim may be -1): a view when the strides allow it, else a "
     "copy."},
    {"view_as", "self.view(other.shape)."},
    {"reshape_as", "self.reshape(other.shape)."},
    {"permute", "A view with the dims reordered: dim i of the result is dim dims[i] of input."},
    {"expand",
     "A view with size-1 dims repeated (stride 0) to the given size; -1 keeps a dim. No "
     "copy: write to the result with care."},
    {"expand_as", "self.expand(other.shape)."},
    {"transpose", "A view with dims dim0 and dim1 swapped."},
    {"t", "The transpose of a 2-d tensor (a 0-d or 1-d one is returned as is), as a view."},
    {"unsqueeze", "A view with a new dim of size 1 inserted at position dim."},
    {"squeeze", "A view without the dims of size 1 (only dim, if given)."},
    {"flatten", "input with dims start_dim..end_dim merged into one (a view when possible)."},
    {"narrow", "A view of input[start:start + length] along dim."},
    {"select", "A view of input at index along dim, without that dim."},
    {"chunk", "input split into `chunks` views along dim (the last may be smaller)."},
    {"split", "input split into views of split_size along dim (the last may be smaller)."},
    {"diagonal", "A view of the diagonal `offset` of the dims dim1 and dim2 (moved last)."},
    {"as_strided",
     "A view of input's memory with the given size, stride and storage_offset (IndexError if "
     "it reaches outside the storage)."},
    {"contiguous", "self in contiguous memory: the same memory when it already is, else a copy."},
    {"clone", "A copy of input with its own memory; the copy is differentiable."},
    {"detach",
     "A new tensor sharing self's memory, cut from the autograd graph (requires_grad False)."},
    {"detach_", "Cuts self from the autograd graph in place (requires_grad False); returns self."},
    {"to",
     "self converted to a dtype and/or device (to(dtype), to('cpu'), to(other) or dtype=, "
     "device=); the same memory, not a copy, when nothing changes."},
    {"float", "self.to(stride.float32)."},
    {"double", "self.to(stride.float64)."},
    {"half", "self.to(stride.float16)."},
    {"bfloat16", "self.to(stride.bfloat16)."},
    {"long", "self.to(stride.int64)."},
    {"int", "self.to(stride.int32)."},
    {"bool", "self.to(stride.bool)."},
    {"cpu", "self on the CPU (the same memory when it is already there)."},
    {"cuda",
     "self on CUDA device `device` (the same memory when it is already there); a RuntimeError "
     "says why when there is no such device (stride.cuda.unavailable_reason())."},
    {"type_as", "self.to(other.dtype)."},

    // Linear algebra, joining and indexing ops.
    {"matmul",
     "The matrix product of input and other as torch.matmul: 1-d operands are vectors, "
     "batch dims broadcast."},
    {"mm", "The matrix product of input (n, m) and mat2 (m, p): (n, p)."},
    {"bmm", "The batched matrix product of input (b, n, m) and mat2 (b, m, p): (b, n, p)."},
    {"cat", "The tensors joined along an existing dim (same shape elsewhere)."},
    {"stack", "The tensors (all of one shape) joined along a new dim."},
    {"index_select", "The slices of input at index (1-d, integer) along dim, as a copy."},
    {"gather", "out[i][j] = input[index[i][j]][j] for dim 0 (index's shape; likewise for dim)."},
    {"scatter_add",
     "A copy of input with src added at index along dim (duplicates add up), as "
     "torch.scatter_add."},
    {"allclose", "True if |input - other| <= atol + rtol * |other| everywhere (bool)."},
    {"equal", "True if input and other have the same shape and elements (bool)."},

    // The random factories (generator.cpp).
    {"rand",
     "Samples uniform in [0, 1) of shape size (rand(2, 3) or rand((2, 3))), from generator= or "
     "the default generator."},
    {"randn",
     "Standard normal samples of shape size (randn(2, 3) or randn((2, 3))), from generator= or "
     "the default generator."},
    {"randint",
     "Integers uniform in [low, high) of shape size: randint(10, (2, 3)) or "
     "randint(0, 10, (2, 3)); int64 unless dtype= is given."},
    {"rand_like", "rand with input's shape, dtype and device."},
    {"randn_like", "randn with input's shape, dtype and device."},
};

}  // namespace

std::string op_doc(std::string_view name) {
  for (const auto& [key, doc] : kOpDocs) {
    if (key == name) return doc;
  }
  if (name.size() > 1 && name.back() == '_') {
    const std::string_view base = name.substr(0, name.size() - 1);
    for (const auto& [key, doc] : kOpDocs) {
      if (key == base) return "In-place version of " + std::string(base) + "(); returns self.";
    }
  }
  return "";
}

}  // namespace stride::python
