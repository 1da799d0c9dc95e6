// Gradient clipping (torch.nn.utils.clip_grad_norm_ / clip_grad_value_).
// Parameters whose .grad is undefined are skipped; gradients are modified in
// place (any layout).
#pragma once

#include <limits>
#include <vector>

#include "stride/tensor.h"

namespace stride::nn::utils {

inline constexpr double kInfNorm = std::numeric_limits<double>::infinity();

// Scales all gradients by min(1, max_norm / (total_norm + 1e-6)), where
// total_norm is the norm_type-norm of all gradients together (the norm of the
// per-gradient norms; the largest |g| for norm_type = kInfNorm), and returns
// total_norm as a 0-d tensor of the gradients' dtype (0 when no parameter has
// a gradient). With error_if_nonfinite, a NaN or infinite total norm throws
// ValueError and leaves the gradients alone.
Tensor clip_grad_norm_(const std::vector<Tensor>& parameters,
                       double max_norm,
                       double norm_type = 2.0,
                       bool error_if_nonfinite = false);
Tensor clip_grad_norm_(const Tensor& parameter,
                       double max_norm,
                       double norm_type = 2.0,
                       bool error_if_nonfinite = false);

// Clamps every gradient element into [-clip_value, clip_value].
void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value);
void clip_grad_value_(const Tensor& parameter, double clip_value);

}  // namespace stride::nn::utils

namespace stride::optim {
using nn::utils::clip_grad_norm_;
using nn::utils::clip_grad_value_;
}  // namespace stride::optim
