// Shared machinery of the elementwise ops: dtype rules and the one runner
// that builds the TensorIter and calls the op's kernel stub.
#pragma once

#include <initializer_list>

#include "backends/kernels.h"
#include "stride/ops.h"

namespace stride::detail {

inline bool is_16bit(ScalarType t) {
  return t == kFloat16 || t == kBFloat16;
}
// bool < integer < floating
inline int type_category(ScalarType t) {
  if (is_complex(t)) return 3;
  return t == kBool ? 0 : is_floating_point(t) ? 2 : 1;
}

// PyTorch's result_type for two tensors: a 0-d tensor only decides the dtype
// when its category is higher than the other operand's.
ScalarType result_type(const Tensor& a, const Tensor& b);
// A Scalar as a 0-d tensor whose dtype follows PyTorch's wrapped-number rule:
// it keeps `like`'s dtype unless it is of a higher category (then float32 or
// int64).
Tensor wrap_scalar(const Scalar& s, const Tensor& like);
// Smallest floating dtype that holds `t`'s values (float32 for integers).
inline ScalarType float_result(ScalarType t) {
  return is_floating_point(t) || is_complex(t) ? t : kFloat32;
}

// Writes `result` into `out`: allocates it when undefined, resizes it when it
// has no elements, else checks shape and dtype. For out= forms computed out
// of place (out_variants.cpp).
Tensor& assign_result(Tensor& out, const Tensor& result, ScalarType dtype, const char* op);

// The forward of an elementwise op: inputs are converted to `compute` (as
// PyTorch: a float32 0-d operand of a bfloat16 comparison is rounded to
// bfloat16; arithmetic reads it in float, src/ops/elementwise.cpp),
// the result has dtype `result`, and `stub` (backends/kernels.h) fills it on
// the operands' device with `args` after the TensorIter and the compute
// dtype. 16-bit floats compute in float32 inside the kernel's loop. The op's
// apply path (ops/apply.h) wraps it.
template <class Stub, class... Args>
Tensor& run_elementwise(const char* op,
                        Tensor& out,
                        std::initializer_list<Tensor> inputs,
                        ScalarType compute,
                        ScalarType result,
                        const Stub& stub,
                        const Args&... args) {
  TensorIterConfig cfg(op);
  cfg.add_output(out).output_dtype(result).check_all_same_dtype(false);
  std::vector<Tensor> converted;
  converted.reserve(inputs.size());
  for (const Tensor& t : inputs) converted.push_back(t.dtype() == compute ? t : t.to(compute));
  for (const Tensor& t : converted) cfg.add_input(t);
  TensorIter iter = cfg.build();
  stub(iter.output().device(), iter, compute, args...);
  return out;
}

// A kernel's result, allocated by it: the forward of an out-of-place op.
template <class Kernel, class... Args>
Tensor out_of_place(Kernel&& kernel, const Args&... args) {
  Tensor out;
  kernel(out, args...);
  return out;
}

}  // namespace stride::detail
