// The kernels ops call through their device's backend: one dispatch stub a
// kernel (Note [Dispatch stubs] in core/dispatch_stub.h). This header is the
// whole contract between the ops above and the backends below it: a stub's
// signature says what the op hands over, and each backend (src/backends/cpu,
// later cuda) registers a function of that signature.
//
// A kernel reads its inputs and writes its outputs, which the op has
// allocated on the kernel's device with the shapes, dtypes and layouts given
// beside each stub; it allocates no outputs, records no autograd and calls no
// op, so it does the same on every device.
#pragma once

#include "core/dispatch_stub.h"
#include "stride/tensor.h"

namespace stride::kernels {

// ---- rms_norm (Note [RMSNorm backward] in src/backends/cpu/rms_norm.cpp) ----
// x (R, D) contiguous, weight (D) contiguous or undefined -> y (R, D),
// rstd (R): y = x * rstd * w, rstd = 1 / sqrt(mean(x^2) + eps) per row.
using RmsNormForwardFn =
    void (*)(const Tensor& x, const Tensor& weight, double eps, Tensor& y, Tensor& rstd);
extern detail::DispatchStub<RmsNormForwardFn> rms_norm_forward;
// g, x (R, D) contiguous, weight (D) or undefined, rstd (R) from the forward
// -> grad_x (R, D) and grad_w (D), each written when defined.
using RmsNormBackwardFn = void (*)(const Tensor& g,
                                   const Tensor& x,
                                   const Tensor& weight,
                                   const Tensor& rstd,
                                   Tensor& grad_x,
                                   Tensor& grad_w);
extern detail::DispatchStub<RmsNormBackwardFn> rms_norm_backward;

}  // namespace stride::kernels

// ---- fused optimizer steps (Note [Multi-tensor steps] in src/optim/fused.cpp) ----

namespace stride {
class TensorIter;
}  // namespace stride

namespace stride::kernels {

// The scalar hyperparameters of one Adam/AdamW update, derived once in double
// (as PyTorch's Python code does) and shared by the fused and op-by-op paths.
struct AdamStepScalars {
  double beta1, beta2, eps, weight_decay;
  double one_minus_beta1, one_minus_beta2;
  double decay;                  // AdamW: 1 - lr * weight_decay, else 1
  double bias_correction2_sqrt;  // sqrt(1 - beta2^step)
  double neg_step_size;          // -lr / (1 - beta1^step)
  bool l2;                       // Adam with weight_decay != 0
  bool decoupled, amsgrad, maximize;
};
// iter over outputs param, exp_avg, exp_avg_sq (and max_exp_avg_sq with
// amsgrad) and input grad, one dtype (float32 or float64), any layout ->
// elements [begin, end) of iter updated in place, rounded exactly as the
// op-by-op path in src/optim/adam.cpp rounds them.
using AdamStepFn = void (*)(const TensorIter& iter,
                            const AdamStepScalars& s,
                            int64_t begin,
                            int64_t end);
extern detail::DispatchStub<AdamStepFn> adam_step;

struct SGDStepScalars {
  double lr, momentum, dampening, weight_decay;
  bool nesterov, maximize;
};
// The momentum buffer in one SGD update: none (momentum 0), first (only
// written: the gradient after weight decay, as PyTorch clones it), or
// updated.
enum class SGDMomentum { None, First, Update };
// iter over outputs param (and momentum_buffer unless SGDMomentum::None) and
// input grad -> as adam_step, for src/optim/sgd.cpp's op-by-op path.
using SGDStepFn = void (*)(const TensorIter& iter,
                           const SGDStepScalars& s,
                           SGDMomentum momentum,
                           int64_t begin,
                           int64_t end);
extern detail::DispatchStub<SGDStepFn> sgd_step;

}  // namespace stride::kernels
