// The interface between the CUDA backend's host code (C++, which reads
// TensorIter) and its kernels (CUDA C++, compiled by nvcc): plain structs
// and functions, so that nvcc compiles none of stride's other headers.
#pragma once

#include <cstdint>

#include "core/op_list.h"

namespace stride::cuda_detail {

// Iteration dims a GPU loop takes; TensorIter coalesces dims first, so
// more is rare (a DeviceError says so).
inline constexpr int kMaxDims = 12;
// Operands a GPU loop takes: as many as a TensorIter holds
// (kMaxIterOperands, which elementwise.cpp checks), so every op of the list
// (a ternary op's output and three inputs included) fits.
inline constexpr int kMaxOperands = 6;

// An elementwise iteration (TensorIter's): operand k's element at linear
// index i, whose coordinates are i's digits in `sizes` (innermost first),
// sits at data[k] + sum over d of coordinate[d] * strides[k][d] bytes.
struct IterParams {
  int ndim = 0;
  int64_t numel = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxOperands][kMaxDims] = {};
  char* data[kMaxOperands] = {};
};

// stride's dtypes, in their ScalarType order.
enum class DType : int { Bool, UInt8, Int32, Int64, Float16, BFloat16, Float32, Float64 };

// The ops of the elementwise lists of core/op_list.h (macros only, which
// nvcc compiles), one enumerator each, named after it.
enum class ListedOp : int {
#define STRIDE_LISTED_OP(name, ...) name,
  STRIDE_FLOAT_UNARY_OPS(STRIDE_LISTED_OP) STRIDE_SAME_UNARY_OPS(STRIDE_LISTED_OP)
      STRIDE_BINARY_OPS(STRIDE_LISTED_OP) STRIDE_FLOAT_BINARY_OPS(STRIDE_LISTED_OP)
          STRIDE_INTEGER_BINARY_OPS(STRIDE_LISTED_OP) STRIDE_COMPARISON_OPS(STRIDE_LISTED_OP)
#undef STRIDE_LISTED_OP
};

// Each launches on `device`'s current stream and returns null, or the CUDA
// error's text.
// Every element of operand 0 set to `value` (the bytes of one element of
// `dtype`).
const char* launch_fill(const IterParams& p, DType dtype, const void* value, int device);
// Operand 0 (of dtype `dst`) = operand 1 (of dtype `src`) converted, as the
// CPU's copy converts (to bool: != 0; 16-bit floats through float32).
const char* launch_copy(const IterParams& p, DType dst, DType src, int device);
// Operand 0 = op(operands 1, ...), each operand of dtype `compute` (the
// output bool for comparisons), computed by the op's functor of
// backends/elementwise_math.h; 16-bit floats compute in float, converted
// per element. The caller has checked that the op takes `compute`.
const char* launch_listed(ListedOp op, const IterParams& p, DType compute, int device);

}  // namespace stride::cuda_detail
