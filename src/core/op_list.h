// Every op, once. This header is macros only and includes nothing, so every
// layer can expand the columns it owns (tools/check_layers.sh gives it the
// lowest layer).
//
// STRIDE_ALL_OPS lists every op by name, family and whether it has a
// gradient; ops/apply.h makes it the enum `Op` that the apply path takes, so
// an op that is not listed cannot be written, and the test tables (layout
// matrix, meta, gradcheck, PyTorch goldens) check that they hold a case for
// every listed op. The elementwise ops are listed with more columns, below,
// from which their kernels, definitions and test rows are expanded:
//   - src/backends/kernels.h declares a dispatch stub per op, named after it;
//   - src/backends/cpu/elementwise.cpp expands the names into the CPU
//     kernels (each op's functor of src/backends/elementwise_math.h in the
//     CPU's loops) and registers them on those stubs; the CUDA backend's
//     kernels expand the same functors in its loops;
//   - src/ops/elementwise.cpp expands the dtype rule and the backward into
//     the out-of-place function (which records the graph), the out= form and
//     the in-place method;
//   - the layout matrix (also on meta), gradcheck and the PyTorch goldens
//     expand the names and domains into their test tables,
// so an op in a list is in every one of them. docs/design.md walks through
// adding one.
//
// A unary line gives the op's name, the tensor its backward saves (x: the
// input, y: the output), its backward (an expression of the upstream
// gradient g written with ops, so it is differentiable again), and the
// domain the tests draw inputs from (Any, Positive, Unit: (-1, 1), AboveOne). Each op's scalar
// math is the functor of its name in src/backends/elementwise_math.h, which
// every device's loops expand; the CPU adds a float32 vector form where it
// has one (src/backends/cpu/elementwise.cpp). A column is compiled only where
// a macro uses it.
#pragma once

// Unary ops computing in floating point (integer inputs compute in float32).
#define STRIDE_FLOAT_UNARY_OPS(X)                                   \
  X(exp, y, g* y, Unit)                                             \
  X(log, x, g / x, Positive)                                        \
  X(sqrt, y, g / (y * 2.0), Positive)                               \
  X(rsqrt, y, g* y* y* y * -0.5, Positive)                          \
  X(sin, x, g* cos(x), Any)                                         \
  X(cos, x, -g* sin(x), Any)                                        \
  X(tanh, y, g*(1.0 - y * y), Any)                                  \
  X(sigmoid, y, g* y*(1.0 - y), Any)                                \
  X(silu, x, g* sigmoid(x) * (1.0 + x * (1.0 - sigmoid(x))), Any)   \
  X(gelu, x, gelu_backward(g, x), Any)                              \
  X(reciprocal, y, -g* y* y, Positive)                              \
  X(expm1, y, g*(y + 1.0), Any)                                     \
  X(log1p, x, g / (x + 1.0), Positive)                              \
  X(log2, x, g / (x * std::numbers::ln2), Positive)                 \
  X(log10, x, g / (x * std::numbers::ln10), Positive)               \
  X(exp2, y, g* y* std::numbers::ln2, Any)                          \
  X(tan, y, g*(1.0 + y * y), Unit)                                  \
  X(asin, x, g* rsqrt(1.0 - x * x), Unit)                           \
  X(acos, x, -g* rsqrt(1.0 - x * x), Unit)                          \
  X(atan, x, g / (1.0 + x * x), Any)                                \
  X(sinh, x, g* cosh(x), Any)                                       \
  X(cosh, x, g* sinh(x), Any)                                       \
  X(asinh, x, g* rsqrt(x* x + 1.0), Any)                            \
  X(acosh, x, g* rsqrt(x* x - 1.0), AboveOne)                       \
  X(atanh, x, g / (1.0 - x * x), Unit)                              \
  X(erf, x, g* exp(-(x * x)) * std::numbers::inv_sqrtpi * 2.0, Any) \
  X(erfc, x, g* exp(-(x * x)) * std::numbers::inv_sqrtpi * -2.0, Any)

// Unary ops keeping the input's dtype.
#define STRIDE_SAME_UNARY_OPS(X)                  \
  X(neg, x, -g, Any)                              \
  X(abs, x, g* sign_of(x), Any)                   \
  X(square, x, g* x * 2.0, Any)                   \
  X(relu, y, g* mask_of(y.gt(0), y.dtype()), Any) \
  X(sign, x, zeros_like(g), Any)                  \
  X(floor, x, zeros_like(g), Any)                 \
  X(ceil, x, zeros_like(g), Any)                  \
  X(round, x, zeros_like(g), Any)                 \
  X(trunc, x, zeros_like(g), Any)                 \
  X(frac, x, g, Any)

// Binary ops of the inputs' promoted dtype: name and the dtypes their
// kernels take (a dispatcher of core/dispatch.h; 16-bit floats compute in
// float). Their backwards are written out in src/ops/elementwise.cpp.
#define STRIDE_BINARY_OPS(X)         \
  X(mul, DispatchNumericAndBool)     \
  X(maximum, DispatchNumericAndBool) \
  X(minimum, DispatchNumericAndBool)

// Binary ops computing in floating point (integer inputs compute in
// float32): name, the gradients of a and of b (expressions of the upstream
// gradient g, the inputs a and b and the output y, written with ops), and
// the domain the tests draw both inputs from.
#define STRIDE_FLOAT_BINARY_OPS(X)                                                                \
  X(atan2, g* b / (a * a + b * b), -g * a / (a * a + b * b), Any)                                 \
  X(hypot, g* a / y, g * b / y, Any)                                                              \
  X(logaddexp, g* sigmoid(a - b), g* sigmoid(b - a), Any)                                         \
  X(logaddexp2, g* sigmoid((a - b) * std::numbers::ln2), g* sigmoid((b - a) * std::numbers::ln2), \
    Any)                                                                                          \
  X(copysign, where(a.eq(0), zeros_like(g), g* y / a), zeros_like(g), Any)                        \
  X(xlogy, where(a.eq(0), zeros_like(g), g* log(b)), g* a / b, Positive)

// Special functions, on the CPU only: their math is Boost.Math's and
// stride's own series (src/backends/cpu/special_math.h), which nvcc cannot
// compile for the device, so the CUDA backend's expansions leave these lists
// out and a CUDA tensor gets the dispatch stub's "no CUDA kernel" error. The
// ops keep PyTorch's names, special_ prefixed where torch.special holds them.
// Columns as STRIDE_FLOAT_UNARY_OPS's (Probability: (0, 1)).
#define STRIDE_SPECIAL_UNARY_OPS(X)                                                         \
  X(lgamma, x, g* digamma(x), Any)                                                          \
  X(digamma, x, g* polygamma(1, x), Any)                                                    \
  X(erfinv, y, g* exp(y* y) * (0.5 / std::numbers::inv_sqrtpi), Unit)                       \
  X(i0, x, g* special_i1(x), Any)                                                           \
  X(sinc, x, g* sinc_derivative(x), Any)                                                    \
  X(special_i0e, x, g*(special_i1e(x) - sign(x) * special_i0e(x)), Any)                     \
  X(special_i1, x, g* bessel_i1_derivative(x, i0(x), special_i1(x)), Any)                   \
  X(special_i1e, x, g* bessel_i1e_derivative(x), Any)                                       \
  X(special_ndtr, x, g* exp(x* x * -0.5) * kInvSqrt2Pi, Any)                                \
  X(special_ndtri, y, g* exp(y* y * 0.5) / kInvSqrt2Pi, Probability)                        \
  X(special_log_ndtr, x, g* exp(x* x * -0.5 - special_log_ndtr(x)) * kInvSqrt2Pi, Any)      \
  X(special_erfcx, x, g*(x * special_erfcx(x) * 2.0 - 2.0 * std::numbers::inv_sqrtpi), Any) \
  X(special_entr, x, g*(-(log(x) + 1.0)), Positive)                                         \
  X(special_bessel_j0, x, -g* special_bessel_j1(x), Any)                                    \
  X(special_bessel_j1, x, g*(special_bessel_j0(x) - special_bessel_j1(x) / x), Positive)    \
  X(special_bessel_y0, x, -g* special_bessel_y1(x), Positive)                               \
  X(special_bessel_y1, x, g*(special_bessel_y0(x) - special_bessel_y1(x) / x), Positive)    \
  X(special_modified_bessel_i0, x, g* special_modified_bessel_i1(x), Any)                   \
  X(special_modified_bessel_i1, x,                                                          \
    g*(special_modified_bessel_i0(x) - special_modified_bessel_i1(x) / x), Positive)        \
  X(special_modified_bessel_k0, x, -g* special_modified_bessel_k1(x), Positive)             \
  X(special_modified_bessel_k1, x,                                                          \
    -g*(special_modified_bessel_k0(x) + special_modified_bessel_k1(x) / x), Positive)

// Special functions without a gradient, as PyTorch's (their results do not
// require grad): name and domain.
#define STRIDE_SPECIAL_UNARY_NOGRAD_OPS(X)       \
  X(special_scaled_modified_bessel_k0, Positive) \
  X(special_scaled_modified_bessel_k1, Positive) \
  X(special_airy_ai, Any)                        \
  X(special_spherical_bessel_j0, Any)

// Binary special functions computing in floating point: columns as
// STRIDE_FLOAT_BINARY_OPS's; refuse_gradient throws PyTorch's "not
// implemented" where it has no gradient for an operand that requires one.
#define STRIDE_SPECIAL_BINARY_OPS(X)                                                               \
  X(special_xlog1py, where(a.eq(0), zeros_like(g), g* log1p(b)), g* a / (b + 1.0), Positive)       \
  X(special_zeta, refuse_gradient("special_zeta", "self", a, g),                                   \
    g * -a * special_zeta(a + 1.0, b), AboveOne)                                                   \
  X(igamma, refuse_gradient("igamma", "input", a, g), g* incomplete_gamma_density(a, b), Positive) \
  X(igammac, refuse_gradient("igammac", "input", a, g), -g* incomplete_gamma_density(a, b),        \
    Positive)                                                                                      \
  X(nextafter, g, zeros_like(g), Any)

// Binary special functions without a gradient: the orthogonal polynomials
// p_n(x) of (x, n) (n truncated to an integer; negative n gives 0). Name
// and the domain of both operands.
#define STRIDE_SPECIAL_BINARY_NOGRAD_OPS(X)      \
  X(special_chebyshev_polynomial_t, Any)         \
  X(special_chebyshev_polynomial_u, Any)         \
  X(special_chebyshev_polynomial_v, Any)         \
  X(special_chebyshev_polynomial_w, Any)         \
  X(special_shifted_chebyshev_polynomial_t, Any) \
  X(special_shifted_chebyshev_polynomial_u, Any) \
  X(special_shifted_chebyshev_polynomial_v, Any) \
  X(special_shifted_chebyshev_polynomial_w, Any) \
  X(special_hermite_polynomial_h, Any)           \
  X(special_hermite_polynomial_he, Any)          \
  X(special_laguerre_polynomial_l, Any)          \
  X(special_legendre_polynomial_p, Any)

// Integer ops of the inputs' promoted dtype, on bool and the integers only
// (PyTorch's have no kernel for floats, and no gradient): name and the
// dtypes their kernels take. Shift counts outside [0, width) and the
// magnitudes of gcd and lcm are guarded in their functors, as PyTorch's
// kernels define them.
#define STRIDE_INTEGER_BINARY_OPS(X)       \
  X(bitwise_and, DispatchIntegralAndBool)  \
  X(bitwise_or, DispatchIntegralAndBool)   \
  X(bitwise_xor, DispatchIntegralAndBool)  \
  X(bitwise_left_shift, DispatchIntegral)  \
  X(bitwise_right_shift, DispatchIntegral) \
  X(gcd, DispatchIntegral)                 \
  X(lcm, DispatchIntegral)

// Comparisons: bool results of the inputs compared in their promoted dtype.
#define STRIDE_COMPARISON_OPS(X) \
  X(eq)                          \
  X(ne)                          \
  X(lt)                          \
  X(le)                          \
  X(gt)                          \
  X(ge)

// ---- Every op ----
// A line gives the op's name (its profiler span and autograd node, and its
// in-place method's name with a trailing underscore), its family (for the
// reader: the file that defines it), its gradient (Grad; NoGrad: integer or
// bool results, fills; Internal: run only by other ops' backward formulas,
// and tested through them), its dtype rule and its autocast rule, the two
// that the apply path enforces for every op (Note [The apply path]):
//   - dtype rule: Any, or Floating (the op's input, its first operand, must
//     be a floating-point tensor; a DTypeError naming the op otherwise).
//     Rules between operands (a bool mask, int64 indices, a weight of the
//     input's dtype) are the op's own checks, beside its shape rule;
//   - autocast rule: Keep (computes in its operands' dtype), or Lower (under
//     autocast the op multiplies its first two operands in bfloat16: the
//     matmul class, as PyTorch's lower_precision_fp list).
// Its definition (argument checks, the shape and dtype rule that allocates
// the outputs, the kernel stub it calls, its backward) is one apply() call in
// the family's file (docs/design.md, "The op list"). Composite ops are
// written with other ops, as PyTorch's CompositeImplicitAutograd ones: they
// have no kernel and no node of their own, check their dtype rule through
// the apply path's check, and appear in the list so that the test tables
// cover them. Factories (zeros, arange, linspace, eye, tril_indices, the
// windows of signal::windows) take no tensor operand and are not ops: no
// device, layout or dtype rule applies to them, and their tests are their
// own unit tests and goldens.
//
// Expand it with a macro STRIDE_OP_VISIT(name, family, grad, dtypes,
// autocast) defined around the use: `STRIDE_ALL_OPS` then visits every op.
#define STRIDE_OP_FROM_FLOAT_UNARY(name, ...) STRIDE_OP_VISIT(name, Elementwise, Grad, Any, Keep)
#define STRIDE_OP_FROM_SAME_UNARY(name, ...) STRIDE_OP_VISIT(name, Elementwise, Grad, Any, Keep)
#define STRIDE_OP_FROM_BINARY(name, ...) STRIDE_OP_VISIT(name, Elementwise, Grad, Any, Keep)
#define STRIDE_OP_FROM_FLOAT_BINARY(name, ...) STRIDE_OP_VISIT(name, Elementwise, Grad, Any, Keep)
#define STRIDE_OP_FROM_COMPARISON(name, ...) STRIDE_OP_VISIT(name, Elementwise, NoGrad, Any, Keep)
#define STRIDE_OP_FROM_INTEGER_BINARY(name, ...) \
  STRIDE_OP_VISIT(name, Elementwise, NoGrad, Any, Keep)
#define STRIDE_OP_FROM_SPECIAL(name, ...) STRIDE_OP_VISIT(name, Special, Grad, Any, Keep)
#define STRIDE_OP_FROM_SPECIAL_NOGRAD(name, ...) STRIDE_OP_VISIT(name, Special, NoGrad, Any, Keep)
#define STRIDE_ALL_OPS                                            \
  STRIDE_FLOAT_UNARY_OPS(STRIDE_OP_FROM_FLOAT_UNARY)              \
  STRIDE_SAME_UNARY_OPS(STRIDE_OP_FROM_SAME_UNARY)                \
  STRIDE_BINARY_OPS(STRIDE_OP_FROM_BINARY)                        \
  STRIDE_FLOAT_BINARY_OPS(STRIDE_OP_FROM_FLOAT_BINARY)            \
  STRIDE_COMPARISON_OPS(STRIDE_OP_FROM_COMPARISON)                \
  STRIDE_INTEGER_BINARY_OPS(STRIDE_OP_FROM_INTEGER_BINARY)        \
  STRIDE_SPECIAL_UNARY_OPS(STRIDE_OP_FROM_SPECIAL)                \
  STRIDE_SPECIAL_UNARY_NOGRAD_OPS(STRIDE_OP_FROM_SPECIAL_NOGRAD)  \
  STRIDE_SPECIAL_BINARY_OPS(STRIDE_OP_FROM_SPECIAL)               \
  STRIDE_SPECIAL_BINARY_NOGRAD_OPS(STRIDE_OP_FROM_SPECIAL_NOGRAD) \
  STRIDE_OTHER_OPS(STRIDE_OP_VISIT)

// The ops not in the elementwise lists above.
#define STRIDE_OTHER_OPS(X)                                                 \
  /* elementwise (src/ops/elementwise.cpp) */                               \
  X(add, Elementwise, Grad, Any, Keep)                                      \
  X(sub, Elementwise, Grad, Any, Keep)                                      \
  X(div, Elementwise, Grad, Any, Keep)                                      \
  X(pow, Elementwise, Grad, Any, Keep)                                      \
  X(fmod, Elementwise, Grad, Any, Keep)                                     \
  X(remainder, Elementwise, Grad, Any, Keep)                                \
  X(frexp, Elementwise, Grad, Floating, Keep)                               \
  X(clamp, Elementwise, Grad, Any, Keep)                                    \
  X(where, Elementwise, Grad, Any, Keep)                                    \
  X(masked_fill, Elementwise, Grad, Any, Keep)                              \
  X(tril, Composite, Grad, Any, Keep)                                       \
  X(triu, Composite, Grad, Any, Keep)                                       \
  X(lerp, Elementwise, Grad, Any, Keep)                                     \
  X(addcmul, Elementwise, Grad, Any, Keep)                                  \
  X(addcdiv, Elementwise, Grad, Any, Keep)                                  \
  X(gelu_backward, Elementwise, Internal, Any, Keep)                        \
  X(bitwise_not, Composite, NoGrad, Any, Keep)                              \
  /* special functions written out (src/ops/special.cpp) */                 \
  X(polygamma, Special, Grad, Any, Keep)                                    \
  X(mvlgamma, Composite, Grad, Any, Keep)                                   \
  X(logit, Composite, Grad, Any, Keep)                                      \
  X(deg2rad, Composite, Grad, Any, Keep)                                    \
  X(rad2deg, Composite, Grad, Any, Keep)                                    \
  X(signbit, Composite, NoGrad, Any, Keep)                                  \
  X(isposinf, Composite, NoGrad, Any, Keep)                                 \
  X(isneginf, Composite, NoGrad, Any, Keep)                                 \
  X(nan_to_num, Composite, Grad, Any, Keep)                                 \
  X(heaviside, Composite, NoGrad, Any, Keep)                                \
  X(ldexp, Composite, Grad, Any, Keep)                                      \
  X(float_power, Composite, Grad, Any, Keep)                                \
  X(isnan, Composite, NoGrad, Any, Keep)                                    \
  X(isinf, Composite, NoGrad, Any, Keep)                                    \
  X(isfinite, Composite, NoGrad, Any, Keep)                                 \
  /* elementwise compositions (src/ops/elementwise_composites.cpp) */       \
  X(logical_and, Composite, NoGrad, Any, Keep)                              \
  X(logical_or, Composite, NoGrad, Any, Keep)                               \
  X(logical_xor, Composite, NoGrad, Any, Keep)                              \
  X(logical_not, Composite, NoGrad, Any, Keep)                              \
  X(fmax, Composite, Grad, Any, Keep)                                       \
  X(fmin, Composite, Grad, Any, Keep)                                       \
  X(isclose, Composite, NoGrad, Any, Keep)                                  \
  /* numeric compositions (src/ops/numeric_composites.cpp) */               \
  X(trace, Composite, Grad, Any, Keep)                                      \
  X(diff, Composite, Grad, Any, Keep)                                       \
  X(trapezoid, Composite, Grad, Any, Keep)                                  \
  X(cumulative_trapezoid, Composite, Grad, Any, Keep)                       \
  X(cov, Composite, Grad, Any, Keep)                                        \
  X(corrcoef, Composite, Grad, Any, Keep)                                   \
  X(renorm, Composite, Grad, Floating, Keep)                                \
  X(gradient, Composite, Grad, Any, Keep)                                   \
  X(histogram, Composite, NoGrad, Floating, Keep)                           \
  X(histogramdd, Composite, NoGrad, Floating, Keep)                         \
  X(sgn, Composite, Grad, Any, Keep)                                        \
  X(resolve_neg, Composite, Grad, Any, Keep)                                \
  X(unravel_index, Composite, NoGrad, Any, Keep)                            \
  /* fills (src/ops/factories.cpp), in place only */                        \
  X(fill, Fill, NoGrad, Any, Keep)                                          \
  X(uniform, Fill, NoGrad, Floating, Keep)                                  \
  X(normal, Fill, NoGrad, Floating, Keep)                                   \
  X(random, Fill, NoGrad, Any, Keep)                                        \
  X(bernoulli, Fill, NoGrad, Any, Keep)                                     \
  /* reductions (src/ops/reduce.cpp) */                                     \
  X(sum, Reduction, Grad, Any, Keep)                                        \
  X(mean, Composite, Grad, Floating, Keep)                                  \
  X(var, Composite, Grad, Floating, Keep)                                   \
  X(amax, Reduction, Grad, Any, Keep)                                       \
  X(amin, Reduction, Grad, Any, Keep)                                       \
  X(max, Reduction, Grad, Any, Keep)                                        \
  X(min, Reduction, Grad, Any, Keep)                                        \
  X(argmax, Reduction, NoGrad, Any, Keep)                                   \
  X(argmin, Reduction, NoGrad, Any, Keep)                                   \
  X(logsumexp, Composite, Grad, Any, Keep)                                  \
  X(norm, Composite, Grad, Floating, Keep)                                  \
  X(all, Composite, NoGrad, Any, Keep)                                      \
  X(any, Composite, NoGrad, Any, Keep)                                      \
  X(prod, Reduction, Grad, Any, Keep)                                       \
  X(std_dev, Composite, Grad, Floating, Keep)                               \
  X(var_mean, Composite, Grad, Floating, Keep)                              \
  X(std_mean, Composite, Grad, Floating, Keep)                              \
  X(nansum, Composite, Grad, Any, Keep)                                     \
  X(nanmean, Composite, Grad, Floating, Keep)                               \
  X(count_nonzero, Composite, NoGrad, Any, Keep)                            \
  X(aminmax, Composite, Grad, Any, Keep)                                    \
  X(median, Composite, Grad, Any, Keep)                                     \
  X(nanmedian, Composite, Grad, Any, Keep)                                  \
  X(kthvalue, Sorting, Grad, Any, Keep)                                     \
  X(mode, Sorting, Grad, Any, Keep)                                         \
  X(quantile, Composite, Grad, Floating, Keep)                              \
  X(nanquantile, Composite, Grad, Floating, Keep)                           \
  /* masked reductions and normalizations (src/ops/masked.cpp): the */      \
  /* ops of stride::masked, masked_ prefixed */                             \
  X(masked_sum, Composite, Grad, Any, Keep)                                 \
  X(masked_prod, Composite, Grad, Any, Keep)                                \
  X(masked_amax, Composite, Grad, Any, Keep)                                \
  X(masked_amin, Composite, Grad, Any, Keep)                                \
  X(masked_argmax, Composite, NoGrad, Any, Keep)                            \
  X(masked_argmin, Composite, NoGrad, Any, Keep)                            \
  X(masked_mean, Composite, Grad, Any, Keep)                                \
  X(masked_median, Composite, Grad, Any, Keep)                              \
  X(masked_logsumexp, Composite, Grad, Any, Keep)                           \
  X(masked_norm, Composite, Grad, Any, Keep)                                \
  X(masked_var, Composite, Grad, Any, Keep)                                 \
  X(masked_std_dev, Composite, Grad, Any, Keep)                             \
  X(masked_cumsum, Composite, Grad, Any, Keep)                              \
  X(masked_cumprod, Composite, Grad, Any, Keep)                             \
  X(masked_softmax, Composite, Grad, Any, Keep)                             \
  X(masked_log_softmax, Composite, Grad, Any, Keep)                         \
  X(masked_softmin, Composite, Grad, Any, Keep)                             \
  X(masked_normalize, Composite, Grad, Any, Keep)                           \
  X(masked_logaddexp, Composite, Grad, Any, Keep)                           \
  /* scans (src/ops/scan.cpp) */                                            \
  X(cumsum, Scan, Grad, Any, Keep)                                          \
  X(cumprod, Scan, Grad, Any, Keep)                                         \
  X(cummax, Scan, Grad, Any, Keep)                                          \
  X(cummin, Scan, Grad, Any, Keep)                                          \
  X(logcumsumexp, Scan, Grad, Floating, Keep)                               \
  /* sorting and sampling (src/ops/sorting.cpp) */                          \
  X(sort, Sorting, Grad, Any, Keep)                                         \
  X(argsort, Composite, NoGrad, Any, Keep)                                  \
  X(msort, Composite, Grad, Any, Keep)                                      \
  X(topk, Sorting, Grad, Any, Keep)                                         \
  X(multinomial, Sorting, NoGrad, Floating, Keep)                           \
  /* products (src/ops/linalg.cpp) */                                       \
  X(matmul, Linalg, Grad, Any, Lower)                                       \
  X(mm, Linalg, Grad, Any, Lower)                                           \
  X(bmm, Linalg, Grad, Any, Lower)                                          \
  X(outer, Composite, Grad, Any, Keep)                                      \
  X(addmm, Composite, Grad, Any, Keep)                                      \
  X(baddbmm, Composite, Grad, Any, Keep)                                    \
  X(dot, Composite, Grad, Any, Keep)                                        \
  X(inner, Composite, Grad, Any, Keep)                                      \
  X(mv, Composite, Grad, Any, Keep)                                         \
  X(addmv, Composite, Grad, Any, Keep)                                      \
  X(addr, Composite, Grad, Any, Keep)                                       \
  X(addbmm, Composite, Grad, Any, Keep)                                     \
  X(tensordot, Composite, Grad, Any, Keep)                                  \
  X(chain_matmul, Composite, Grad, Any, Keep)                               \
  X(kron, Composite, Grad, Any, Keep)                                       \
  X(cdist, Composite, Grad, Floating, Keep)                                 \
  X(dist, Composite, Grad, Floating, Keep)                                  \
  X(einsum, Composite, Grad, Any, Keep)                                     \
  /* linear algebra through LAPACK (src/ops/linalg_factorizations.cpp) */   \
  X(linalg_lu_factor_ex, Linalg, Grad, Floating, Keep)                      \
  X(linalg_solve_triangular, Linalg, Grad, Floating, Keep)                  \
  X(linalg_cholesky_ex, Linalg, Grad, Floating, Keep)                       \
  X(linalg_qr, Linalg, Grad, Floating, Keep)                                \
  X(linalg_eigh, Linalg, Grad, Floating, Keep)                              \
  X(linalg_svd, Linalg, Grad, Floating, Keep)                               \
  X(lu_unpack, Composite, Grad, Floating, Keep)                             \
  /* ...and the ops written with them (src/ops/linalg_solvers.cpp) */       \
  X(linalg_lu_factor, Composite, Grad, Floating, Keep)                      \
  X(linalg_lu, Composite, Grad, Floating, Keep)                             \
  X(linalg_lu_solve, Composite, Grad, Floating, Keep)                       \
  X(linalg_solve, Composite, Grad, Floating, Keep)                          \
  X(linalg_solve_ex, Composite, Grad, Floating, Keep)                       \
  X(linalg_inv, Composite, Grad, Floating, Keep)                            \
  X(linalg_inv_ex, Composite, Grad, Floating, Keep)                         \
  X(linalg_det, Composite, Grad, Floating, Keep)                            \
  X(linalg_slogdet, Composite, Grad, Floating, Keep)                        \
  X(logdet, Composite, Grad, Floating, Keep)                                \
  X(linalg_cholesky, Composite, Grad, Floating, Keep)                       \
  X(cholesky_solve, Composite, Grad, Floating, Keep)                        \
  X(cholesky_inverse, Composite, Grad, Floating, Keep)                      \
  X(triangular_solve, Composite, Grad, Floating, Keep)                      \
  X(linalg_eigvalsh, Composite, Grad, Floating, Keep)                       \
  X(linalg_svdvals, Composite, Grad, Floating, Keep)                        \
  X(linalg_householder_product, Composite, Grad, Floating, Keep)            \
  /* ...and norms, ranks and products (src/ops/linalg_norms.cpp) */         \
  X(linalg_vector_norm, Composite, Grad, Floating, Keep)                    \
  X(linalg_matrix_norm, Composite, Grad, Floating, Keep)                    \
  X(linalg_norm, Composite, Grad, Floating, Keep)                           \
  X(linalg_cond, Composite, Grad, Floating, Keep)                           \
  X(linalg_matrix_rank, Composite, NoGrad, Floating, Keep)                  \
  X(linalg_pinv, Composite, Grad, Floating, Keep)                           \
  X(linalg_matrix_power, Composite, Grad, Any, Keep)                        \
  X(linalg_matrix_exp, Composite, Grad, Floating, Keep)                     \
  X(linalg_cross, Composite, Grad, Any, Keep)                               \
  X(linalg_vecdot, Composite, Grad, Any, Keep)                              \
  X(linalg_multi_dot, Composite, Grad, Any, Keep)                           \
  X(linalg_diagonal, Composite, Grad, Any, Keep)                            \
  X(linalg_vander, Composite, Grad, Any, Keep)                              \
  X(linalg_tensorinv, Composite, Grad, Floating, Keep)                      \
  X(linalg_tensorsolve, Composite, Grad, Floating, Keep)                    \
  X(linalg_lstsq, Composite, Grad, Floating, Keep)                          \
  /* softmax (src/ops/softmax.cpp) */                                       \
  X(softmax, Softmax, Grad, Floating, Keep)                                 \
  X(log_softmax, Softmax, Grad, Floating, Keep)                             \
  /* indexing (src/ops/indexing.cpp, advanced_indexing.cpp) */              \
  X(index_select, Indexing, Grad, Any, Keep)                                \
  X(gather, Indexing, Grad, Any, Keep)                                      \
  X(scatter_add, Indexing, Grad, Any, Keep)                                 \
  X(scatter, Indexing, Grad, Any, Keep)                                     \
  X(scatter_reduce, Indexing, Grad, Any, Keep)                              \
  X(index_add, Composite, Grad, Any, Keep)                                  \
  X(index_copy, Composite, Grad, Any, Keep)                                 \
  X(index_fill, Composite, Grad, Any, Keep)                                 \
  X(index_reduce, Composite, Grad, Any, Keep)                               \
  X(take, Composite, Grad, Any, Keep)                                       \
  X(put, Composite, Grad, Any, Keep)                                        \
  X(take_along_dim, Composite, Grad, Any, Keep)                             \
  X(masked_select, Composite, Grad, Any, Keep)                              \
  X(masked_scatter, Composite, Grad, Any, Keep)                             \
  X(nonzero, Indexing, NoGrad, Any, Keep)                                   \
  X(argwhere, Composite, NoGrad, Any, Keep)                                 \
  X(select_scatter, Indexing, Grad, Any, Keep)                              \
  X(slice_scatter, Indexing, Grad, Any, Keep)                               \
  X(diagonal_scatter, Indexing, Grad, Any, Keep)                            \
  X(as_strided_scatter, Indexing, Grad, Any, Keep)                          \
  /* searching and counting (src/ops/search.cpp) */                         \
  X(searchsorted, Search, NoGrad, Any, Keep)                                \
  X(bucketize, Composite, NoGrad, Any, Keep)                                \
  X(bincount, Search, NoGrad, Any, Keep)                                    \
  X(histc, Search, NoGrad, Any, Keep)                                       \
  X(unique, Search, NoGrad, Any, Keep)                                      \
  X(unique_consecutive, Search, NoGrad, Any, Keep)                          \
  X(isin, Composite, NoGrad, Any, Keep)                                     \
  X(embedding, Indexing, Grad, Any, Keep)                                   \
  X(index, Indexing, Grad, Any, Keep)                                       \
  X(index_put, Indexing, Grad, Any, Keep)                                   \
  X(cat, Indexing, Grad, Any, Keep)                                         \
  X(stack, Composite, Grad, Any, Keep)                                      \
  X(flip, Composite, Grad, Any, Keep)                                       \
  X(roll, Composite, Grad, Any, Keep)                                       \
  /* shape compositions (src/ops/shape_ops.cpp): stacks, splits, diag */    \
  /* forms, repeats and grids, written with views, cat and indexing */      \
  X(atleast_1d, Composite, Grad, Any, Keep)                                 \
  X(atleast_2d, Composite, Grad, Any, Keep)                                 \
  X(atleast_3d, Composite, Grad, Any, Keep)                                 \
  X(broadcast_to, Composite, Grad, Any, Keep)                               \
  X(broadcast_tensors, Composite, Grad, Any, Keep)                          \
  X(hstack, Composite, Grad, Any, Keep)                                     \
  X(vstack, Composite, Grad, Any, Keep)                                     \
  X(dstack, Composite, Grad, Any, Keep)                                     \
  X(column_stack, Composite, Grad, Any, Keep)                               \
  X(tensor_split, Composite, Grad, Any, Keep)                               \
  X(split_with_sizes, Composite, Grad, Any, Keep)                           \
  X(hsplit, Composite, Grad, Any, Keep)                                     \
  X(vsplit, Composite, Grad, Any, Keep)                                     \
  X(dsplit, Composite, Grad, Any, Keep)                                     \
  X(movedim, Composite, Grad, Any, Keep)                                    \
  X(ravel, Composite, Grad, Any, Keep)                                      \
  X(fliplr, Composite, Grad, Any, Keep)                                     \
  X(flipud, Composite, Grad, Any, Keep)                                     \
  X(rot90, Composite, Grad, Any, Keep)                                      \
  X(diag, Composite, Grad, Any, Keep)                                       \
  X(diag_embed, Composite, Grad, Any, Keep)                                 \
  X(diagflat, Composite, Grad, Any, Keep)                                   \
  X(block_diag, Composite, Grad, Any, Keep)                                 \
  X(meshgrid, Composite, Grad, Any, Keep)                                   \
  X(cartesian_prod, Composite, Grad, Any, Keep)                             \
  X(combinations, Composite, Grad, Any, Keep)                               \
  X(repeat, Composite, Grad, Any, Keep)                                     \
  X(tile, Composite, Grad, Any, Keep)                                       \
  X(repeat_interleave, Composite, Grad, Any, Keep)                          \
  X(unflatten, Composite, Grad, Any, Keep)                                  \
  X(sum_to_size, Composite, Grad, Any, Keep)                                \
  /* views (src/ops/views.cpp): no kernel, a new geometry on the storage */ \
  X(view, View, Grad, Any, Keep)                                            \
  X(reshape, View, Grad, Any, Keep)                                         \
  X(transpose, View, Grad, Any, Keep)                                       \
  X(permute, View, Grad, Any, Keep)                                         \
  X(select, View, Grad, Any, Keep)                                          \
  X(slice, View, Grad, Any, Keep)                                           \
  X(unsqueeze, View, Grad, Any, Keep)                                       \
  X(squeeze, View, Grad, Any, Keep)                                         \
  X(expand, View, Grad, Any, Keep)                                          \
  X(as_strided, View, Grad, Any, Keep)                                      \
  X(diagonal, View, Grad, Any, Keep)                                        \
  /* Tensor.unfold, the windows along one dim (unfold is im2col's name) */  \
  X(unfold_view, View, Grad, Any, Keep)                                     \
  X(view_backward, View, Internal, Any, Keep)                               \
  /* complex numbers (src/ops/complex.cpp): views of the parts, and */      \
  /* composites of real ops on them */                                      \
  X(view_as_real, View, Grad, Any, Keep)                                    \
  X(view_as_complex, View, Grad, Any, Keep)                                 \
  X(real, Composite, Grad, Any, Keep)                                       \
  X(imag, Composite, Grad, Any, Keep)                                       \
  X(complex, Composite, Grad, Floating, Keep)                               \
  X(polar, Composite, Grad, Floating, Keep)                                 \
  X(conj, Composite, Grad, Any, Keep)                                       \
  X(conj_physical, Composite, Grad, Any, Keep)                              \
  X(resolve_conj, Composite, Grad, Any, Keep)                               \
  X(angle, Composite, Grad, Any, Keep)                                      \
  X(isreal, Composite, NoGrad, Any, Keep)                                   \
  /* Fourier transforms (src/ops/fft.cpp): one kernel, the unscaled */      \
  /* complex transform along one dim, under every torch.fft function */     \
  X(fft_c2c, Fft, Grad, Any, Keep)                                          \
  X(fft_fft, Composite, Grad, Any, Keep)                                    \
  X(fft_ifft, Composite, Grad, Any, Keep)                                   \
  X(fft_rfft, Composite, Grad, Any, Keep)                                   \
  X(fft_irfft, Composite, Grad, Any, Keep)                                  \
  X(fft_hfft, Composite, Grad, Any, Keep)                                   \
  X(fft_ihfft, Composite, Grad, Any, Keep)                                  \
  X(fft_fft2, Composite, Grad, Any, Keep)                                   \
  X(fft_ifft2, Composite, Grad, Any, Keep)                                  \
  X(fft_rfft2, Composite, Grad, Any, Keep)                                  \
  X(fft_irfft2, Composite, Grad, Any, Keep)                                 \
  X(fft_hfft2, Composite, Grad, Any, Keep)                                  \
  X(fft_ihfft2, Composite, Grad, Any, Keep)                                 \
  X(fft_fftn, Composite, Grad, Any, Keep)                                   \
  X(fft_ifftn, Composite, Grad, Any, Keep)                                  \
  X(fft_rfftn, Composite, Grad, Any, Keep)                                  \
  X(fft_irfftn, Composite, Grad, Any, Keep)                                 \
  X(fft_hfftn, Composite, Grad, Any, Keep)                                  \
  X(fft_ihfftn, Composite, Grad, Any, Keep)                                 \
  X(fft_fftfreq, Composite, NoGrad, Any, Keep)                              \
  X(fft_rfftfreq, Composite, NoGrad, Any, Keep)                             \
  X(fft_fftshift, Composite, Grad, Any, Keep)                               \
  X(fft_ifftshift, Composite, Grad, Any, Keep)                              \
  /* copies (src/ops/copy.cpp); copy is in place only */                    \
  X(copy, Copy, Grad, Any, Keep)                                            \
  X(clone, Copy, Grad, Any, Keep)                                           \
  X(to, Copy, Grad, Any, Keep)                                              \
  /* fused nn ops (src/nn/) */                                              \
  X(linear, Fused, Grad, Any, Lower)                                        \
  X(linear_concat, Fused, Grad, Any, Lower)                                 \
  X(linear_groups, Fused, Grad, Any, Lower)                                 \
  X(linear_packed, Fused, Grad, Floating, Keep)                             \
  X(pack_weight, Fused, NoGrad, Floating, Keep)                             \
  X(unpack_weight, Fused, NoGrad, Any, Keep)                                \
  X(rms_norm, Fused, Grad, Floating, Keep)                                  \
  X(swiglu, Fused, Grad, Floating, Keep)                                    \
  X(rotary_embedding, Fused, Grad, Floating, Keep)                          \
  X(cross_entropy, Fused, Grad, Floating, Keep)                             \
  X(linear_cross_entropy, Fused, Grad, Floating, Keep)                      \
  X(scaled_dot_product_attention, Fused, Grad, Floating, Keep)              \
  X(rotary_attention, Fused, Grad, Floating, Keep)                          \
  /* images (src/nn/conv.cpp, pooling, interpolate, group_norm) */          \
  X(unfold, Fused, Grad, Any, Keep)                                         \
  X(fold, Fused, Grad, Any, Keep)                                           \
  X(conv1d, Composite, Grad, Any, Keep)                                     \
  X(conv2d, Composite, Grad, Any, Keep)                                     \
  X(conv3d, Composite, Grad, Any, Keep)                                     \
  X(conv_transpose1d, Composite, Grad, Any, Keep)                           \
  X(conv_transpose2d, Composite, Grad, Any, Keep)                           \
  X(conv_transpose3d, Composite, Grad, Any, Keep)                           \
  X(max_pool1d, Composite, Grad, Any, Keep)                                 \
  X(max_pool2d, Composite, Grad, Any, Keep)                                 \
  X(max_pool3d, Composite, Grad, Any, Keep)                                 \
  X(avg_pool1d, Composite, Grad, Any, Keep)                                 \
  X(avg_pool2d, Composite, Grad, Any, Keep)                                 \
  X(avg_pool3d, Composite, Grad, Any, Keep)                                 \
  X(adaptive_avg_pool1d, Composite, Grad, Floating, Keep)                   \
  X(adaptive_avg_pool2d, Composite, Grad, Floating, Keep)                   \
  X(adaptive_avg_pool3d, Composite, Grad, Floating, Keep)                   \
  X(adaptive_max_pool1d, Composite, Grad, Floating, Keep)                   \
  X(adaptive_max_pool2d, Composite, Grad, Floating, Keep)                   \
  X(adaptive_max_pool3d, Composite, Grad, Floating, Keep)                   \
  X(interpolate, Composite, Grad, Floating, Keep)                           \
  X(pixel_shuffle, Composite, Grad, Any, Keep)                              \
  X(pixel_unshuffle, Composite, Grad, Any, Keep)                            \
  X(group_norm, Composite, Grad, Floating, Keep)                            \
  /* composed nn ops (src/nn/activations.cpp, losses, vectors, pad) */      \
  X(leaky_relu, Composite, Grad, Floating, Keep)                            \
  X(elu, Composite, Grad, Floating, Keep)                                   \
  X(selu, Composite, Grad, Floating, Keep)                                  \
  X(celu, Composite, Grad, Floating, Keep)                                  \
  X(softplus, Composite, Grad, Floating, Keep)                              \
  X(hardtanh, Composite, Grad, Any, Keep)                                   \
  X(relu6, Composite, Grad, Any, Keep)                                      \
  X(hardswish, Composite, Grad, Floating, Keep)                             \
  X(hardsigmoid, Composite, Grad, Floating, Keep)                           \
  X(mish, Composite, Grad, Floating, Keep)                                  \
  X(logsigmoid, Composite, Grad, Floating, Keep)                            \
  X(softsign, Composite, Grad, Any, Keep)                                   \
  X(tanhshrink, Composite, Grad, Any, Keep)                                 \
  X(softshrink, Composite, Grad, Floating, Keep)                            \
  X(hardshrink, Composite, Grad, Floating, Keep)                            \
  X(threshold, Composite, Grad, Any, Keep)                                  \
  X(glu, Composite, Grad, Floating, Keep)                                   \
  X(prelu, Composite, Grad, Floating, Keep)                                 \
  X(softmin, Composite, Grad, Floating, Keep)                               \
  X(l1_loss, Composite, Grad, Floating, Keep)                               \
  X(smooth_l1_loss, Composite, Grad, Floating, Keep)                        \
  X(huber_loss, Composite, Grad, Floating, Keep)                            \
  X(binary_cross_entropy, Composite, Grad, Floating, Keep)                  \
  X(binary_cross_entropy_with_logits, Composite, Grad, Floating, Keep)      \
  X(kl_div, Composite, Grad, Floating, Keep)                                \
  X(soft_margin_loss, Composite, Grad, Floating, Keep)                      \
  X(hinge_embedding_loss, Composite, Grad, Floating, Keep)                  \
  X(poisson_nll_loss, Composite, Grad, Any, Keep)                           \
  X(cosine_embedding_loss, Composite, Grad, Any, Keep)                      \
  X(margin_ranking_loss, Composite, Grad, Any, Keep)                        \
  X(multi_margin_loss, Composite, Grad, Floating, Keep)                     \
  X(multilabel_margin_loss, Composite, Grad, Floating, Keep)                \
  X(multilabel_soft_margin_loss, Composite, Grad, Floating, Keep)           \
  X(triplet_margin_loss, Composite, Grad, Any, Keep)                        \
  X(gaussian_nll_loss, Composite, Grad, Floating, Keep)                     \
  X(bilinear, Composite, Grad, Any, Keep)                                   \
  X(channel_shuffle, Composite, Grad, Any, Keep)                            \
  X(pdist, Composite, Grad, Any, Keep)                                      \
  X(local_response_norm, Composite, Grad, Any, Keep)                        \
  X(one_hot, Composite, NoGrad, Any, Keep)                                  \
  X(normalize, Composite, Grad, Floating, Keep)                             \
  X(cosine_similarity, Composite, Grad, Floating, Keep)                     \
  X(pairwise_distance, Composite, Grad, Any, Keep)                          \
  X(pad, Composite, Grad, Any, Keep)                                        \
  X(max_unpool1d, Composite, Grad, Any, Keep)                               \
  X(max_unpool2d, Composite, Grad, Any, Keep)                               \
  X(max_unpool3d, Composite, Grad, Any, Keep)                               \
  X(embedding_bag, Composite, Grad, Any, Keep)                              \
  X(triplet_margin_with_distance_loss, Composite, Grad, Any, Keep)          \
  X(multi_head_attention_forward, Composite, Grad, Floating, Keep)          \
  X(nonzero_static, Composite, NoGrad, Any, Keep)                           \
  /* recurrent layers (src/nn/rnn.cpp): one step, and whole sequences */    \
  X(rnn_tanh_cell, Composite, Grad, Floating, Keep)                         \
  X(rnn_relu_cell, Composite, Grad, Floating, Keep)                         \
  X(lstm_cell, Composite, Grad, Floating, Keep)                             \
  X(gru_cell, Composite, Grad, Floating, Keep)                              \
  X(rnn_tanh, Composite, Grad, Floating, Keep)                              \
  X(rnn_relu, Composite, Grad, Floating, Keep)                              \
  X(lstm, Composite, Grad, Floating, Keep)                                  \
  X(gru, Composite, Grad, Floating, Keep)
