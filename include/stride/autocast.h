// Mixed precision: stride's torch.autocast("cpu", dtype=torch.bfloat16).
//
//   Tensor loss;
//   {
//     stride::AutocastGuard autocast;   // bfloat16 matmuls in this scope
//     loss = model.loss(x, y);
//   }
//   loss.backward();                    // their backward GEMMs in bfloat16 too
//   optimizer.step();                   // float32 parameters and state
//
// Inside the scope the matmul-class ops (matmul, mm, bmm and
// nn::functional::linear, linear_concat and linear_groups, hence nn::Linear:
// the ops src/core/op_list.h marks Lower) round their float32 factors to
// bfloat16 and multiply them on a bfloat16 GEMM that accumulates in float32
// (oneDNN's AVX512-BF16 / AMX kernels: about twice the float32 rate). All
// other ops, the parameters, their gradients and the optimizer state stay
// float32. An op recorded under autocast runs its backward GEMMs the same way,
// wherever backward() is called. A parameter (a leaf that requires grad)
// given to one of these ops is converted once per outermost scope and the
// bfloat16 copy reused, as PyTorch's cast cache does; the copy is dropped
// when the scope ends or the parameter changes (its version counter moves).
//
// Note [Autocast results are float32]
// PyTorch's autocast returns bfloat16 from these ops and lets the next op
// widen them again. Every stride kernel computes in float32, so stride keeps
// the float32 GEMM result: the same operand rounding as PyTorch, one rounding
// fewer on the result, and no conversion passes between ops.
//
// Small products (below ~80^3 multiply-adds, where oneDNN's per-call cost
// dominates) and CPUs without bfloat16 GEMM kernels apply the same operand
// rounding and multiply on the float32 GEMM (bf16 x bf16 products are exact
// in float32), so results agree up to summation order. On such CPUs the
// roundings are kept in float32 tensors, which the float32 kernels read as
// they are (Note [Autocast on the float32 GEMM] in src/ops/apply.h).
#pragma once

namespace stride {

struct Autocast {
  static bool is_enabled();  // on this thread
};

// Turns autocast on (or, with enabled = false, off) for the current thread
// until the guard is destroyed; guards nest.
class AutocastGuard {
 public:
  explicit AutocastGuard(bool enabled = true);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  bool prev_;
};

}  // namespace stride
