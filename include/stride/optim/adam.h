// Adam and AdamW (torch.optim.Adam / AdamW), in PyTorch's single-tensor form.
// Per parameter p with gradient g at step t (starting at 1):
//   g = -g if maximize
//   Adam:  g += weight_decay * p            (L2 penalty, added to the gradient)
//   AdamW: p *= 1 - lr * weight_decay       (decoupled weight decay; Adam with
//                                            decoupled_weight_decay too)
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

using Betas = std::pair<double, double>;

// The options of Adam and AdamW: one type, as torch.optim.Adam's arguments.
// decoupled_weight_decay picks AdamW's decay (p *= 1 - lr * weight_decay,
// apart from the gradient) over Adam's L2 term; AdamW applies it whatever a
// group says, as torch.optim.AdamW does. State_dict keys: lr, beta1, beta2,
// eps, weight_decay, amsgrad, maximize, fused, decoupled_weight_decay.
struct AdamOptions : OptimizerCloneableOptions<AdamOptions> {
  explicit AdamOptions(double lr = 1e-3) : OptimizerCloneableOptions(lr) {}
  STRIDE_OPTIM_ARG(Betas, betas) = {0.9, 0.999};
  STRIDE_OPTIM_ARG(double, eps) = 1e-8;
  STRIDE_OPTIM_ARG(double, weight_decay) = 0.0;
  STRIDE_OPTIM_ARG(bool, amsgrad) = false;
  STRIDE_OPTIM_ARG(bool, maximize) = false;
  // One TensorIter pass per parameter computing m, v and p for float32 and
  // float64 parameters, a step's passes in one parallel region; bit-identical
  // to the op-by-op reference path, which runs otherwise.
  STRIDE_OPTIM_ARG(bool, fused) = true;
  STRIDE_OPTIM_ARG(bool, decoupled_weight_decay) = false;

 private:
  friend class OptimizerCloneableOptions<AdamOptions>;
  static constexpr const char* kName = "AdamOptions";
  template <class Self, class F>
  static void visit(Self& self, F&& f) {
    f("beta1", self.betas_.first);
    f("beta2", self.betas_.second);
    f("eps", self.eps_);
    f("weight_decay", self.weight_decay_);
    f("amsgrad", self.amsgrad_);
    f("maximize", self.maximize_);
    f("fused", self.fused_);
    f("decoupled_weight_decay", self.decoupled_weight_decay_);
  }
};

// AdamW's defaults, as torch.optim.AdamW's: decoupled weight decay of 1e-2.
inline AdamOptions adamw_options(double lr = 1e-3) {
  return AdamOptions(lr).weight_decay(1e-2).decoupled_weight_decay(true);
}

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, const AdamOptions& options = AdamOptions());
  Adam(std::vector<ParamGroup> groups, const AdamOptions& options = AdamOptions());

 protected:
  // For AdamW: named "AdamW", every group's decay decoupled.
  Adam(const char* name, bool always_decoupled, const AdamOptions& defaults);
  void check_options(const OptimizerOptions& options, size_t group_index) const override;
  void update(Tensor& param,
              const Tensor& grad,
              const ParamGroup& group,
              ParamState& state) override;
  StateSchema state_schema() const override;

 private:
  bool always_decoupled_;  // AdamW
};

class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, const AdamOptions& options = adamw_options());
  AdamW(std::vector<ParamGroup> groups, const AdamOptions& options = adamw_options());
};

}  // namespace stride::optim
