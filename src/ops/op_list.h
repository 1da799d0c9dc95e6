// The elementwise ops, each once. This header is macros only and includes
// nothing, so every layer can expand the columns it owns
// (tools/check_layers.sh gives it the lowest layer):
//   - src/backends/kernels.h declares a dispatch stub per op, named after it;
//   - src/backends/cpu/elementwise.cpp expands the kernel columns into the
//     CPU kernels and registers them on those stubs;
//   - src/ops/elementwise.cpp expands the dtype rule and the backward into
//     the out-of-place function (which records the graph), the out= form and
//     the in-place method;
//   - the layout matrix (also on meta), gradcheck and the PyTorch goldens
//     expand the names and domains into their test tables,
// so an op in a list is in every one of them. docs/design.md walks through
// adding one.
//
// A unary line gives the op's name, its CPU kernel (a scalar expression of x
// of C++ type T, and for float32 a vector expression of v of vec_math.h's
// Vec16f, or ScalarOnly{} to use the scalar one), the tensor its backward
// saves (x: the input, y: the output), its backward (an expression of the
// upstream gradient g written with ops, so it is differentiable again), and
// the domain the tests draw inputs from (Any, Positive, Unit). A column is
// compiled only where a macro uses it.
#pragma once

// Unary ops computing in floating point (integer inputs compute in float32).
#define STRIDE_FLOAT_UNARY_OPS(X)                                                                  \
  X(exp, std::exp(x), vec::exp(v), y, g* y, Unit)                                                  \
  X(log, std::log(x), vec::log(v), x, g / x, Positive)                                             \
  X(sqrt, std::sqrt(x), ScalarOnly{}, y, g / (y * 2.0), Positive)                                  \
  X(rsqrt, T(1) / std::sqrt(x), ScalarOnly{}, y, g * y * y * y * -0.5, Positive)                   \
  X(sin, std::sin(x), ScalarOnly{}, x, g* cos(x), Any)                                             \
  X(cos, std::cos(x), ScalarOnly{}, x, -g* sin(x), Any)                                            \
  X(tanh, std::tanh(x), vec::tanh(v), y, g*(1.0 - y * y), Any)                                     \
  X(sigmoid, sigmoid_fn(x), vec::sigmoid(v), y, g* y*(1.0 - y), Any)                               \
  X(silu, x* sigmoid_fn(x), v* vec::sigmoid(v), x, g* sigmoid(x) * (1.0 + x * (1.0 - sigmoid(x))), \
    Any)                                                                                           \
  X(gelu, T(0.5) * x * (T(1) + std::erf(x * T(0.70710678118654752440))), vec::gelu(v), x,          \
    gelu_backward(g, x), Any)                                                                      \
  X(reciprocal, T(1) / x, ScalarOnly{}, y, -g * y * y, Positive)

// Unary ops keeping the input's dtype (no vector kernel: the compiler
// vectorises these scalar ones).
#define STRIDE_SAME_UNARY_OPS(X)           \
  X(neg, T(-x), x, -g, Any)                \
  X(abs, abs_fn(x), x, g* sign_of(x), Any) \
  X(square, T(x* x), x, g* x * 2.0, Any)   \
  X(relu, T(x < T(0) ? T(0) : x), y, g* mask_of(y.gt(0), y.dtype()), Any)

// Binary ops of the inputs' promoted dtype: name, the dtypes the CPU kernel
// takes (a dispatcher of core/dispatch.h), the kernel as an expression of x
// and y of C++ type T. Their backwards are written out in elementwise.cpp.
#define STRIDE_BINARY_OPS(X)                                                           \
  X(mul, DispatchNumericAndBool, T(x* y))                                              \
  X(maximum, DispatchNumericAndBool, T((x != x) ? x : (y != y) ? y : (x > y ? x : y))) \
  X(minimum, DispatchNumericAndBool, T((x != x) ? x : (y != y) ? y : (x < y ? x : y)))

// Comparisons: bool results of the inputs compared in their promoted dtype.
#define STRIDE_COMPARISON_OPS(X) \
  X(eq, x == y)                  \
  X(ne, x != y)                  \
  X(lt, x < y)                   \
  X(le, x <= y)                  \
  X(gt, x > y)                   \
  X(ge, x >= y)
