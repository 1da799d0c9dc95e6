// The CUDA elementwise loops (launch.h): one thread per element, each
// finding its operands' elements from its linear index through the
// iteration's sizes and byte strides, so any layout - transposed, sliced,
// broadcast (stride 0), in place - is walked the way the CPU's TensorIter
// walks it. fill_ and copy_ (every dtype pair) run on it.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "backends/cuda/launch.h"

namespace stride::cuda_detail {

namespace {

constexpr int kThreads = 256;

// Byte offsets of element i in each of the first N operands.
template <int N>
__device__ void offsets_of(const IterParams& p, int64_t i, int64_t (&offset)[N]) {
  for (int k = 0; k < N; ++k) offset[k] = 0;
  for (int d = 0; d < p.ndim; ++d) {
    const int64_t size = p.sizes[d];
    const int64_t coordinate = i % size;
    i /= size;
    for (int k = 0; k < N; ++k) offset[k] += coordinate * p.strides[k][d];
  }
}

template <class T>
struct Fill {
  T value;
  __device__ void operator()(char* const* data, const int64_t* offset) const {
    *reinterpret_cast<T*>(data[0] + offset[0]) = value;
  }
};

// CUDA's 16-bit float types for stride's.
template <class T>
__device__ float widen(T v) {
  return float(v);
}

template <class To, class From>
__device__ To convert(From v) {
  constexpr bool from16 = std::is_same_v<From, __half> || std::is_same_v<From, __nv_bfloat16>;
  constexpr bool to16 = std::is_same_v<To, __half> || std::is_same_v<To, __nv_bfloat16>;
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (from16) {
    return convert<To>(widen(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (to16) {
    return To(float(v));
  } else {
    return static_cast<To>(v);
  }
}

template <class To, class From>
struct Copy {
  __device__ void operator()(char* const* data, const int64_t* offset) const {
    *reinterpret_cast<To*>(data[0] + offset[0]) =
        convert<To>(*reinterpret_cast<const From*>(data[1] + offset[1]));
  }
};

template <int N, class F>
__global__ void elementwise_kernel(IterParams p, F f) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < p.numel; i += step) {
    int64_t offset[N];
    offsets_of<N>(p, i, offset);
    f(p.data, offset);
  }
}

template <int N, class F>
const char* launch(const IterParams& p, int device, F f) {
  if (p.numel == 0) return nullptr;
  if (cudaError_t e = cudaSetDevice(device); e != cudaSuccess) return cudaGetErrorString(e);
  const int64_t blocks = std::min<int64_t>((p.numel + kThreads - 1) / kThreads, int64_t(1) << 20);
  elementwise_kernel<N><<<unsigned(blocks), kThreads>>>(p, f);
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

// Calls fn(T{}) with the device type of `dtype`.
template <class Fn>
const char* with_type(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::Bool:
      return fn(bool{});
    case DType::UInt8:
      return fn(uint8_t{});
    case DType::Int32:
      return fn(int32_t{});
    case DType::Int64:
      return fn(int64_t{});
    case DType::Float16:
      return fn(__half{});
    case DType::BFloat16:
      return fn(__nv_bfloat16{});
    case DType::Float32:
      return fn(float{});
    case DType::Float64:
      return fn(double{});
  }
  return "unknown dtype";
}

}  // namespace

const char* launch_fill(const IterParams& p, DType dtype, const void* value, int device) {
  return with_type(dtype, [&](auto tag) {
    using T = decltype(tag);
    Fill<T> f;
    std::memcpy(&f.value, value, sizeof(T));
    return launch<1>(p, device, f);
  });
}

const char* launch_copy(const IterParams& p, DType dst, DType src, int device) {
  return with_type(dst, [&](auto to) {
    return with_type(
        src, [&](auto from) { return launch<2>(p, device, Copy<decltype(to), decltype(from)>{}); });
  });
}

}  // namespace stride::cuda_detail
