// The CPU kernels of the special functions (the STRIDE_SPECIAL_* lists of
// src/core/op_list.h and polygamma): each op's functor of special_math.h in
// the CPU's loops. They have no vector forms: Boost's functions are scalar,
// and computing in double already costs more than the loop.
#include "backends/cpu/capability.h"
#include "backends/cpu/loops.h"
#include "backends/cpu/special_math.h"
#include "backends/kernels.h"
#include "core/dispatch.h"

namespace STRIDE_CPU_NAMESPACE {

namespace {

using stride::detail::dispatch_computing;
using stride::detail::DispatchFloating;

template <class Op>
void special_unary_kernel(const TensorIter& iter, ScalarType compute, const char* name, Op op) {
  dispatch_computing<DispatchFloating>(compute, name, [&](auto t, auto s) {
    using T = typename decltype(t)::type;
    cpu_kernel(iter, widened<typename decltype(s)::type>([op](T x) -> T { return op(x); }));
  });
}
template <class Op>
void special_binary_kernel(const TensorIter& iter, ScalarType compute, const char* name) {
  dispatch_computing<DispatchFloating>(compute, name, [&](auto t, auto s) {
    using T = typename decltype(t)::type;
    cpu_kernel(iter, widened<typename decltype(s)::type>([](T x, T y) -> T { return Op{}(x, y); }));
  });
}

#define STRIDE_CPU_SPECIAL_UNARY(name, ...)                        \
  void name##_kernel(const TensorIter& iter, ScalarType compute) { \
    special_unary_kernel(iter, compute, #name, math::name{});      \
  }
#define STRIDE_CPU_SPECIAL_BINARY(name, ...)                       \
  void name##_kernel(const TensorIter& iter, ScalarType compute) { \
    special_binary_kernel<math::name>(iter, compute, #name);       \
  }
STRIDE_SPECIAL_UNARY_OPS(STRIDE_CPU_SPECIAL_UNARY)
STRIDE_SPECIAL_UNARY_NOGRAD_OPS(STRIDE_CPU_SPECIAL_UNARY)
STRIDE_SPECIAL_BINARY_OPS(STRIDE_CPU_SPECIAL_BINARY)
STRIDE_SPECIAL_BINARY_NOGRAD_OPS(STRIDE_CPU_SPECIAL_BINARY)
#undef STRIDE_CPU_SPECIAL_BINARY
#undef STRIDE_CPU_SPECIAL_UNARY

void polygamma_kernel(const TensorIter& iter, ScalarType compute, const Scalar& n) {
  special_unary_kernel(iter, compute, "polygamma", math::polygamma{n.to<int64_t>()});
}

}  // namespace

#define STRIDE_REGISTER_SPECIAL(name, ...) STRIDE_REGISTER_CPU_KERNEL(kernels::name, name##_kernel);
STRIDE_SPECIAL_ELEMENTWISE_OPS(STRIDE_REGISTER_SPECIAL)
#undef STRIDE_REGISTER_SPECIAL
STRIDE_REGISTER_CPU_KERNEL(kernels::polygamma, polygamma_kernel);

}  // namespace STRIDE_CPU_NAMESPACE
