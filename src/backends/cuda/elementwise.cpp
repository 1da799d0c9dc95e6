// The CUDA kernels of fill_, copy_ and the ops of the elementwise lists of
// core/op_list.h (backends/kernels.h): TensorIter's iteration handed to the
// loops of elementwise.cu (launch.h).
#include <cstring>

#include "backends/cuda/launch.h"
#include "backends/kernels.h"
#include "core/check.h"
#include "core/dispatch.h"
#include "core/tensor_iter.h"

namespace stride::cuda_detail {

namespace {

// Every TensorIter fits a GPU loop's parameters.
static_assert(kMaxOperands >= kMaxIterOperands);

IterParams params_of(const TensorIter& iter, const char* op) {
  STRIDE_CHECK(iter.ndim() <= kMaxDims, DeviceError, "[", op, "] iterates over ", iter.ndim(),
               " dims after coalescing; the CUDA loops take at most ", kMaxDims, ".");
  // Refused rather than dropped: a loop missing an operand would compute on
  // wrong data.
  STRIDE_CHECK(iter.ntensors() <= kMaxOperands, DeviceError, "[", op, "] iterates over ",
               iter.ntensors(), " operands; the CUDA loops take at most ", kMaxOperands, ".");
  IterParams p;
  p.ndim = iter.ndim();
  p.numel = iter.numel();
  for (int d = 0; d < p.ndim; ++d) p.sizes[d] = iter.shape()[size_t(d)];
  for (int k = 0; k < iter.ntensors(); ++k) {
    p.data[k] = static_cast<char*>(iter.operand(k).data_ptr());
    for (int d = 0; d < p.ndim; ++d) p.strides[k][d] = iter.strides(k)[d];
  }
  return p;
}

// launch.h lists the dtypes in ScalarType's order.
static_assert(int(DType::Bool) == int(kBool) && int(DType::UInt8) == int(kUInt8) &&
              int(DType::Int32) == int(kInt32) && int(DType::Int64) == int(kInt64) &&
              int(DType::Float16) == int(kFloat16) && int(DType::BFloat16) == int(kBFloat16) &&
              int(DType::Float32) == int(kFloat32) && int(DType::Float64) == int(kFloat64));

DType dtype_of(ScalarType t) {
  return DType(int(t));
}

int device_of(const TensorIter& iter) {
  return iter.output().device().index();
}

void check_launch(const char* error, const char* op) {
  STRIDE_CHECK(error == nullptr, DeviceError, "[", op, "] CUDA error: ", error, ".");
}

void fill_kernel(const TensorIter& iter, const Scalar& value) {
  ::stride::detail::dispatch_all(iter.dtype(0), "fill_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16> ? T(float(value.to_double()))
                                                                       : value.to<T>();
    check_launch(
        launch_fill(params_of(iter, "fill_"), dtype_of(iter.dtype(0)), &v, device_of(iter)),
        "fill_");
  });
}

void copy_kernel(const TensorIter& iter) {
  check_launch(launch_copy(params_of(iter, "copy_"), dtype_of(iter.dtype(0)),
                           dtype_of(iter.dtype(1)), device_of(iter)),
               "copy_");
}

// A listed op's kernel: the dtype checked here, where a refusal can be a
// DTypeError naming the op (the same sets as the CPU's), then launched.
template <class Dispatch>
void listed_kernel(const TensorIter& iter, ScalarType compute, ListedOp op, const char* name) {
  ::stride::detail::dispatch_computing<Dispatch>(compute, name, [](auto, auto) {});
  check_launch(launch_listed(op, params_of(iter, name), dtype_of(compute), device_of(iter)), name);
}

using ::stride::detail::DispatchFloating;
using ::stride::detail::DispatchIntegral;
using ::stride::detail::DispatchIntegralAndBool;
using ::stride::detail::DispatchNumeric;
using ::stride::detail::DispatchNumericAndBool;
#define STRIDE_CUDA_LISTED(name, Dispatch)                         \
  void name##_kernel(const TensorIter& iter, ScalarType compute) { \
    listed_kernel<Dispatch>(iter, compute, ListedOp::name, #name); \
  }
#define STRIDE_CUDA_FLOAT_UNARY(name, ...) STRIDE_CUDA_LISTED(name, DispatchFloating)
#define STRIDE_CUDA_SAME_UNARY(name, ...) STRIDE_CUDA_LISTED(name, DispatchNumeric)
#define STRIDE_CUDA_FLOAT_BINARY(name, ...) STRIDE_CUDA_LISTED(name, DispatchFloating)
#define STRIDE_CUDA_COMPARISON(name) STRIDE_CUDA_LISTED(name, DispatchNumericAndBool)
STRIDE_FLOAT_UNARY_OPS(STRIDE_CUDA_FLOAT_UNARY)
STRIDE_SAME_UNARY_OPS(STRIDE_CUDA_SAME_UNARY)
STRIDE_BINARY_OPS(STRIDE_CUDA_LISTED)
STRIDE_FLOAT_BINARY_OPS(STRIDE_CUDA_FLOAT_BINARY)
STRIDE_INTEGER_BINARY_OPS(STRIDE_CUDA_LISTED)
STRIDE_COMPARISON_OPS(STRIDE_CUDA_COMPARISON)
#undef STRIDE_CUDA_COMPARISON
#undef STRIDE_CUDA_FLOAT_BINARY
#undef STRIDE_CUDA_SAME_UNARY
#undef STRIDE_CUDA_FLOAT_UNARY
#undef STRIDE_CUDA_LISTED

}  // namespace

#define STRIDE_REGISTER_LISTED(name, ...) \
  STRIDE_REGISTER_KERNEL(kernels::name, CUDA, name##_kernel);
STRIDE_LISTED_ELEMENTWISE_OPS(STRIDE_REGISTER_LISTED)
#undef STRIDE_REGISTER_LISTED
STRIDE_REGISTER_KERNEL(kernels::fill, CUDA, fill_kernel);
STRIDE_REGISTER_KERNEL(kernels::copy, CUDA, copy_kernel);

}  // namespace stride::cuda_detail
