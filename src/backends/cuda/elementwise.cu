// The CUDA elementwise loops (launch.h): one thread per element, each
// finding its operands' elements from its linear index through the
// iteration's sizes and byte strides, so any layout - transposed, sliced,
// broadcast (stride 0), in place - is walked the way the CPU's TensorIter
// walks it. fill_, copy_ (every dtype pair) and the ops of the elementwise
// lists of core/op_list.h (their functors of backends/elementwise_math.h)
// run on it.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "backends/cuda/launch.h"
#include "backends/elementwise_math.h"

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

// ---- the listed ops ----

// The dtype sets of core/dispatch.h's dispatchers, under the names the op
// list gives them.
struct DispatchFloating {
  static constexpr bool floats = true, integers = false, boolean = false;
};
struct DispatchNumeric {
  static constexpr bool floats = true, integers = true, boolean = false;
};
struct DispatchNumericAndBool {
  static constexpr bool floats = true, integers = true, boolean = true;
};
struct DispatchIntegral {
  static constexpr bool floats = false, integers = true, boolean = false;
};
struct DispatchIntegralAndBool {
  static constexpr bool floats = false, integers = true, boolean = true;
};

// S: how an operand is stored; T: the type the op computes in.
template <class S, class T>
struct Types {
  using stored = S;
  using compute = T;
};

// Calls fn(Types<S, T>{}) for `dtype` when Set takes it; 16-bit floats
// compute in float.
template <class Set, class Fn>
const char* with_compute_type(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::Bool:
      if constexpr (Set::boolean) return fn(Types<bool, bool>{});
      break;
    case DType::UInt8:
      if constexpr (Set::integers) return fn(Types<uint8_t, uint8_t>{});
      break;
    case DType::Int32:
      if constexpr (Set::integers) return fn(Types<int32_t, int32_t>{});
      break;
    case DType::Int64:
      if constexpr (Set::integers) return fn(Types<int64_t, int64_t>{});
      break;
    case DType::Float16:
      if constexpr (Set::floats) return fn(Types<__half, float>{});
      break;
    case DType::BFloat16:
      if constexpr (Set::floats) return fn(Types<__nv_bfloat16, float>{});
      break;
    case DType::Float32:
      if constexpr (Set::floats) return fn(Types<float, float>{});
      break;
    case DType::Float64:
      if constexpr (Set::floats) return fn(Types<double, double>{});
      break;
  }
  return "the op has no CUDA kernel for this dtype";
}

template <class S, class T, class Op>
struct UnaryLoop {
  __device__ void operator()(char* const* data, const int64_t* offset) const {
    const T x = T(*reinterpret_cast<const S*>(data[1] + offset[1]));
    *reinterpret_cast<S*>(data[0] + offset[0]) = S(Op{}(x));
  }
};

// Comparisons write bool; the others their operands' type.
template <class S, class T, class Op>
struct BinaryLoop {
  __device__ void operator()(char* const* data, const int64_t* offset) const {
    const T x = T(*reinterpret_cast<const S*>(data[1] + offset[1]));
    const T y = T(*reinterpret_cast<const S*>(data[2] + offset[2]));
    using R = decltype(Op{}(x, y));
    using Out = std::conditional_t<std::is_same_v<R, bool>, bool, S>;
    *reinterpret_cast<Out*>(data[0] + offset[0]) = Out(Op{}(x, y));
  }
};

template <class Op, class Set>
const char* launch_unary(const IterParams& p, DType compute, int device) {
  return with_compute_type<Set>(compute, [&](auto types) {
    using Ts = decltype(types);
    return launch<2>(p, device, UnaryLoop<typename Ts::stored, typename Ts::compute, Op>{});
  });
}

template <class Op, class Set>
const char* launch_binary(const IterParams& p, DType compute, int device) {
  return with_compute_type<Set>(compute, [&](auto types) {
    using Ts = decltype(types);
    return launch<3>(p, device, BinaryLoop<typename Ts::stored, typename Ts::compute, Op>{});
  });
}

}  // namespace

const char* launch_listed(ListedOp op, const IterParams& p, DType compute, int device) {
  switch (op) {
#define STRIDE_CUDA_FLOAT_UNARY(name, ...) \
  case ListedOp::name:                     \
    return launch_unary<math::name, DispatchFloating>(p, compute, device);
#define STRIDE_CUDA_SAME_UNARY(name, ...) \
  case ListedOp::name:                    \
    return launch_unary<math::name, DispatchNumeric>(p, compute, device);
#define STRIDE_CUDA_BINARY(name, Set) \
  case ListedOp::name:                \
    return launch_binary<math::name, Set>(p, compute, device);
#define STRIDE_CUDA_FLOAT_BINARY(name, ...) STRIDE_CUDA_BINARY(name, DispatchFloating)
#define STRIDE_CUDA_COMPARISON(name) STRIDE_CUDA_BINARY(name, DispatchNumericAndBool)
    STRIDE_FLOAT_UNARY_OPS(STRIDE_CUDA_FLOAT_UNARY)
    STRIDE_SAME_UNARY_OPS(STRIDE_CUDA_SAME_UNARY)
    STRIDE_BINARY_OPS(STRIDE_CUDA_BINARY)
    STRIDE_FLOAT_BINARY_OPS(STRIDE_CUDA_FLOAT_BINARY)
    STRIDE_INTEGER_BINARY_OPS(STRIDE_CUDA_BINARY)
    STRIDE_COMPARISON_OPS(STRIDE_CUDA_COMPARISON)
#undef STRIDE_CUDA_COMPARISON
#undef STRIDE_CUDA_FLOAT_BINARY
#undef STRIDE_CUDA_BINARY
#undef STRIDE_CUDA_SAME_UNARY
#undef STRIDE_CUDA_FLOAT_UNARY
  }
  return "unknown elementwise op";
}

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
