// Adam and AdamW (torch.optim.Adam / AdamW), in PyTorch's single-tensor form.
// Per parameter p with gradient g at step t (starting at 1):
//   g = -g if maximize
//   Adam:  g += weight_decay * p            (L2 penalty, added to the gradient)
//   AdamW: p *= 1 - lr * weight_decay       (decoupled weight decay)
//   m = beta1 * m + (1 - beta1) * g                         "exp_avg"
//   v = beta2 * v + (1 - beta2) * g * g                     "exp_avg_sq"
//   amsgrad: v_max = max(v_max, v), used instead of v       "max_exp_avg_sq"
//   denom = sqrt(v) / sqrt(1 - beta2^t) + eps
//   p -= lr / (1 - beta1^t) * m / denom
// State: "step" (scalar), "exp_avg", "exp_avg_sq", and "max_exp_avg_sq" with
// amsgrad; buffers have the parameter's shape and dtype.
#pragma once

#include <utility>
#include <vector>

#include "stride/optim/optimizer.h"

namespace stride::optim {

// The fields of AdamOptions and AdamWOptions, which differ only in the
// default weight decay (L2 for Adam, decoupled for AdamW).
#define STRIDE_ADAM_OPTIONS_FIELDS(default_weight_decay)                          \
  STRIDE_OPTIM_ARG(double, lr);                                                   \
  STRIDE_OPTIM_ARG(Betas, betas) = {0.9, 0.999};                                  \
  STRIDE_OPTIM_ARG(double, eps) = 1e-8;                                           \
  STRIDE_OPTIM_ARG(double, weight_decay) = default_weight_decay;                  \
  STRIDE_OPTIM_ARG(bool, amsgrad) = false;                                        \
  STRIDE_OPTIM_ARG(bool, maximize) = false;                                       \
  /* One TensorIter pass per parameter computing m, v and p for float32 and */    \
  /* float64 parameters, a step's passes in one parallel region; bit- */          \
  /* identical to the op-by-op reference path, which runs otherwise. */           \
  STRIDE_OPTIM_ARG(bool, fused) = true;                                           \
                                                                                  \
 public:                                                                          \
  /* As group options: lr, beta1, beta2, eps, weight_decay, amsgrad, maximize, */ \
  /* fused. */                                                                    \
  GroupOptions to_group_options() const

using Betas = std::pair<double, double>;

struct AdamOptions {
  explicit AdamOptions(double lr = 1e-3) : lr_(lr) {}
  STRIDE_ADAM_OPTIONS_FIELDS(0.0);
};

struct AdamWOptions {
  explicit AdamWOptions(double lr = 1e-3) : lr_(lr) {}
  STRIDE_ADAM_OPTIONS_FIELDS(1e-2);
};

#undef STRIDE_ADAM_OPTIONS_FIELDS

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, const AdamOptions& options = AdamOptions());
  Adam(std::vector<ParamGroup> groups, const AdamOptions& options = AdamOptions());

 protected:
  // For AdamW: decoupled weight decay, named "AdamW".
  Adam(const char* name, bool decoupled, GroupOptions defaults);
  void check_options(const GroupOptions& options, size_t group_index) const override;
  void update(Tensor& param,
              const Tensor& grad,
              const ParamGroup& group,
              ParamState& state) override;
  StateSchema state_schema() const override;

 private:
  bool decoupled_;  // AdamW
};

class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, const AdamWOptions& options = AdamWOptions());
  AdamW(std::vector<ParamGroup> groups, const AdamWOptions& options = AdamWOptions());
};

}  // namespace stride::optim
