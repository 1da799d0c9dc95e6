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

// ---- Every op ----
// A line gives the op's name (its profiler span and autograd node, and its
// in-place method's name with a trailing underscore), its family (for the
// reader: the file that defines it), and Grad when it has a gradient
// (NoGrad: integer or bool results, fills; Internal: run only by other ops'
// backward formulas, and tested through them). Its
// definition (argument checks, the shape and dtype rule that allocates the
// outputs, the kernel stub it calls, its backward) is one apply() call in the
// family's file (docs/design.md, "The op list"). Composite ops are written
// with other ops, as PyTorch's CompositeImplicitAutograd ones: they have no
// kernel and no node of their own, and appear in the list so that the test
// tables cover them.
//
// Expand it with a macro STRIDE_OP_VISIT(name, family, grad) defined around
// the use: `STRIDE_ALL_OPS` then visits every op.
#define STRIDE_OP_FROM_FLOAT_UNARY(name, ...) STRIDE_OP_VISIT(name, Elementwise, Grad)
#define STRIDE_OP_FROM_SAME_UNARY(name, ...) STRIDE_OP_VISIT(name, Elementwise, Grad)
#define STRIDE_OP_FROM_BINARY(name, ...) STRIDE_OP_VISIT(name, Elementwise, Grad)
#define STRIDE_OP_FROM_COMPARISON(name, ...) STRIDE_OP_VISIT(name, Elementwise, NoGrad)
#define STRIDE_ALL_OPS                               \
  STRIDE_FLOAT_UNARY_OPS(STRIDE_OP_FROM_FLOAT_UNARY) \
  STRIDE_SAME_UNARY_OPS(STRIDE_OP_FROM_SAME_UNARY)   \
  STRIDE_BINARY_OPS(STRIDE_OP_FROM_BINARY)           \
  STRIDE_COMPARISON_OPS(STRIDE_OP_FROM_COMPARISON)   \
  STRIDE_OTHER_OPS(STRIDE_OP_VISIT)

// The ops not in the elementwise lists above.
#define STRIDE_OTHER_OPS(X)                                                 \
  /* elementwise (src/ops/elementwise.cpp) */                               \
  X(add, Elementwise, Grad)                                                 \
  X(sub, Elementwise, Grad)                                                 \
  X(div, Elementwise, Grad)                                                 \
  X(pow, Elementwise, Grad)                                                 \
  X(clamp, Elementwise, Grad)                                               \
  X(where, Elementwise, Grad)                                               \
  X(masked_fill, Elementwise, Grad)                                         \
  X(tril, Composite, Grad)                                                  \
  X(triu, Composite, Grad)                                                  \
  X(lerp, Elementwise, Grad)                                                \
  X(addcmul, Elementwise, Grad)                                             \
  X(addcdiv, Elementwise, Grad)                                             \
  X(gelu_backward, Elementwise, Internal)                                   \
  /* fills (src/ops/factories.cpp), in place only */                        \
  X(fill, Fill, NoGrad)                                                     \
  X(uniform, Fill, NoGrad)                                                  \
  X(normal, Fill, NoGrad)                                                   \
  X(random, Fill, NoGrad)                                                   \
  X(bernoulli, Fill, NoGrad)                                                \
  /* reductions (src/ops/reduce.cpp) */                                     \
  X(sum, Reduction, Grad)                                                   \
  X(mean, Composite, Grad)                                                  \
  X(var, Composite, Grad)                                                   \
  X(amax, Reduction, Grad)                                                  \
  X(amin, Reduction, Grad)                                                  \
  X(max, Reduction, Grad)                                                   \
  X(min, Reduction, Grad)                                                   \
  X(argmax, Reduction, NoGrad)                                              \
  X(argmin, Reduction, NoGrad)                                              \
  X(logsumexp, Composite, Grad)                                             \
  X(norm, Composite, Grad)                                                  \
  /* products (src/ops/linalg.cpp) */                                       \
  X(matmul, Linalg, Grad)                                                   \
  X(mm, Linalg, Grad)                                                       \
  X(bmm, Linalg, Grad)                                                      \
  /* softmax (src/ops/softmax.cpp) */                                       \
  X(softmax, Softmax, Grad)                                                 \
  X(log_softmax, Softmax, Grad)                                             \
  /* indexing (src/ops/indexing.cpp, advanced_indexing.cpp) */              \
  X(index_select, Indexing, Grad)                                           \
  X(gather, Indexing, Grad)                                                 \
  X(scatter_add, Indexing, Grad)                                            \
  X(embedding, Indexing, Grad)                                              \
  X(index, Indexing, Grad)                                                  \
  X(index_put, Indexing, Grad)                                              \
  X(cat, Indexing, Grad)                                                    \
  X(stack, Composite, Grad)                                                 \
  /* views (src/ops/views.cpp): no kernel, a new geometry on the storage */ \
  X(view, View, Grad)                                                       \
  X(reshape, View, Grad)                                                    \
  X(transpose, View, Grad)                                                  \
  X(permute, View, Grad)                                                    \
  X(select, View, Grad)                                                     \
  X(slice, View, Grad)                                                      \
  X(unsqueeze, View, Grad)                                                  \
  X(squeeze, View, Grad)                                                    \
  X(expand, View, Grad)                                                     \
  X(as_strided, View, Grad)                                                 \
  X(diagonal, View, Grad)                                                   \
  X(view_backward, View, Internal)                                          \
  /* copies (src/ops/copy.cpp); copy is in place only */                    \
  X(copy, Copy, Grad)                                                       \
  X(clone, Copy, Grad)                                                      \
  X(to, Copy, Grad)                                                         \
  /* fused nn ops (src/nn/) */                                              \
  X(linear, Fused, Grad)                                                    \
  X(linear_concat, Fused, Grad)                                             \
  X(linear_groups, Fused, Grad)                                             \
  X(rms_norm, Fused, Grad)                                                  \
  X(swiglu, Fused, Grad)                                                    \
  X(rotary_embedding, Fused, Grad)                                          \
  X(cross_entropy, Fused, Grad)                                             \
  X(scaled_dot_product_attention, Fused, Grad)                              \
  X(rotary_attention, Fused, Grad)
