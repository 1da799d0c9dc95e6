// The CPU kernel of fill_ (backends/kernels.h): every dtype, any layout,
// through the output's TensorIter.
#include "backends/cpu/capability.h"
#include "backends/cpu/loops.h"
#include "backends/kernels.h"
#include "core/dispatch.h"

namespace STRIDE_CPU_NAMESPACE {

namespace {

void fill_kernel(const TensorIter& iter, const Scalar& value) {
  ::stride::detail::dispatch_all_and_complex(iter.dtype(0), "fill_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16> ? T(float(value.to_double()))
                                                                       : value.to<T>();
    cpu_kernel(iter, [v]() -> T { return v; });
  });
}

}  // namespace

STRIDE_REGISTER_CPU_KERNEL(kernels::fill, fill_kernel);

}  // namespace STRIDE_CPU_NAMESPACE
