// The unary elementwise ops, each once. A line gives the op's name, its
// kernel (a scalar expression of x of C++ type T, and for float32 a vector
// expression of v of vec_math.h's Vec16f, or ScalarOnly{} to use the scalar
// one), the tensor its backward saves (x: the input, y: the output), its
// backward (an expression of the upstream gradient g written with ops, so it
// is differentiable again), and the domain the tests draw inputs from (Any,
// Positive, Unit). src/ops/elementwise.cpp expands the lists into the
// out-of-place, out= and in-place forms; the layout matrix (also on meta),
// gradcheck and the PyTorch goldens expand them into their test tables, so an
// op in a list is in every one of them. docs/design.md walks through adding
// one.
//
// The kernel expressions are compiled only where a list is expanded with a
// macro that uses them (elementwise.cpp); the tests' macros read the names and
// domains alone.
#pragma once

// Ops computing in floating point (integer inputs compute in float32).
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

// Ops keeping the input's dtype (no vector kernel: the compiler vectorises
// these scalar ones).
#define STRIDE_SAME_UNARY_OPS(X)           \
  X(neg, T(-x), x, -g, Any)                \
  X(abs, abs_fn(x), x, g* sign_of(x), Any) \
  X(square, T(x* x), x, g* x * 2.0, Any)   \
  X(relu, T(x < T(0) ? T(0) : x), y, g* mask_of(y.gt(0), y.dtype()), Any)
