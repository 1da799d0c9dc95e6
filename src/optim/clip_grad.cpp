#include "stride/optim/clip_grad.h"

#include <cmath>

#include "core/check.h"
#include "stride/autograd.h"
#include "stride/ops.h"

namespace stride::nn::utils {

// Note [clip_grad_norm_ like PyTorch]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// torch/nn/utils/clip_grad.py computes, in the gradients' dtype:
//   total = norm(stack([norm(g, p) for g]), p)     (inf: max of max|g|)
//   coef  = max_norm / (total + 1e-6)              a Tensor.__rtruediv__, i.e.
//         = reciprocal(total + 1e-6) * max_norm    reciprocal, then multiply
//   g *= clamp(coef, max=1)                        even when coef is 1
// The same ops run here, so the scaled gradients match PyTorch's rounding.
Tensor clip_grad_norm_(const std::vector<Tensor>& parameters,
                       double max_norm,
                       double norm_type,
                       bool error_if_nonfinite) {
  NoGradGuard no_grad;
  std::vector<Tensor> grads;
  for (const Tensor& p : parameters) {
    if (p.defined() && p.grad().defined()) grads.push_back(p.grad());
  }
  if (grads.empty()) return scalar_tensor(0.0);
  std::vector<Tensor> norms;
  norms.reserve(grads.size());
  for (const Tensor& g : grads) {
    STRIDE_CHECK(g.is_floating_point(), DTypeError, "[clip_grad_norm_] a gradient has dtype ",
                 to_string(g.dtype()), "; gradients must be floating point.");
    STRIDE_CHECK(g.dtype() == grads[0].dtype(), DTypeError,
                 "[clip_grad_norm_] gradients have different dtypes (", to_string(g.dtype()),
                 " and ", to_string(grads[0].dtype()), ").");
    norms.push_back(std::isinf(norm_type) && norm_type > 0 ? g.abs().max() : norm(g, norm_type));
  }
  Tensor total;
  if (std::isinf(norm_type) && norm_type > 0) {
    total = norms.size() == 1 ? norms[0] : stack(norms).max();
  } else {
    total = norm(stack(norms), norm_type);
  }
  if (error_if_nonfinite) {
    const double t = total.item<double>();
    STRIDE_CHECK(std::isfinite(t), ValueError, "[clip_grad_norm_] the total norm of order ",
                 norm_type, " of the gradients is ", t,
                 ", so they cannot be clipped. Hint: find the NaN/Inf (DetectAnomalyGuard), or "
                 "pass error_if_nonfinite=false to scale by it anyway.");
  }
  const Tensor coef = (total + 1e-6).reciprocal().mul(max_norm).clamp(std::nullopt, 1.0);
  for (Tensor g : grads) g.mul_(coef);
  return total;
}

Tensor clip_grad_norm_(const Tensor& parameter,
                       double max_norm,
                       double norm_type,
                       bool error_if_nonfinite) {
  return clip_grad_norm_(std::vector<Tensor>{parameter}, max_norm, norm_type, error_if_nonfinite);
}

void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value) {
  NoGradGuard no_grad;
  for (const Tensor& p : parameters) {
    if (!p.defined() || !p.grad().defined()) continue;
    Tensor g = p.grad();
    g.clamp_(-clip_value, clip_value);
  }
}

void clip_grad_value_(const Tensor& parameter, double clip_value) {
  clip_grad_value_(std::vector<Tensor>{parameter}, clip_value);
}

}  // namespace stride::nn::utils
