// The steps that torch.optim's _single_tensor_* loops share, in their
// order, for the optimizers that follow them op by op (RMSprop, Adagrad,
// Adamax, NAdam, RAdam); Adam and SGD have fused kernels of their own.
#pragma once

#include "stride/ops.h"
#include "stride/tensor.h"

namespace stride::optim::detail {

// The gradient an update steps along: negated under maximize, then weight
// decay either added to it (L2, coupled) or, decoupled, applied to the
// parameter in place (p *= 1 - lr * weight_decay) before the step.
inline Tensor decayed_grad(Tensor& param,
                           const Tensor& grad,
                           double lr,
                           double weight_decay,
                           bool maximize,
                           bool decoupled = false) {
  Tensor g = maximize ? neg(grad) : grad;
  if (weight_decay == 0) return g;
  if (decoupled) {
    param.mul_(1 - lr * weight_decay);
    return g;
  }
  return g.add(param, weight_decay);
}

// Adam's two moments: m = lerp(m, g, 1 - beta1), v = beta2 v + (1 - beta2) g².
inline void update_adam_moments(
    Tensor& exp_avg, Tensor& exp_avg_sq, const Tensor& g, double beta1, double beta2) {
  exp_avg.lerp_(g, 1 - beta1);
  exp_avg_sq.mul_(beta2).addcmul_(g, g, 1 - beta2);
}

}  // namespace stride::optim::detail
