// The CUDA runtime's errors as stride's, and the device a call runs on.
#pragma once

#include <cuda_runtime.h>

#include "core/check.h"

namespace stride::cuda_detail {

// A CUDA call's failure as a DeviceError naming the op and CUDA's text.
#define STRIDE_CUDA_CHECK(call, op)                                                \
  do {                                                                             \
    const cudaError_t stride_cuda_error = (call);                                  \
    STRIDE_CHECK(stride_cuda_error == cudaSuccess, ::stride::DeviceError, "[", op, \
                 "] CUDA error: ", cudaGetErrorString(stride_cuda_error), ".");    \
  } while (0)

// Makes `device` current for the guard's scope, as c10::cuda::CUDAGuard.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    cudaGetDevice(&previous_);
    if (device != previous_) STRIDE_CUDA_CHECK(cudaSetDevice(device), "cuda");
  }
  ~DeviceGuard() { cudaSetDevice(previous_); }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace stride::cuda_detail
