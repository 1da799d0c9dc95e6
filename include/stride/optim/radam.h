// RAdam (torch.optim.RAdam), Adam with a rectified adaptive term, in
// PyTorch's single-tensor form. Per parameter p with gradient g at step t:
//   g = -g if maximize
//   decoupled_weight_decay: p *= 1 - lr * weight_decay;  else g += weight_decay * p
//   m = lerp(m, g, 1 - beta1)                         "exp_avg"
//   v = beta2 * v + (1 - beta2) * g * g               "exp_avg_sq"
//   rho_inf = 2 / (1 - beta2) - 1
//   rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t)
//   rho_t > 5:  r = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
//               p -= m / (1 - beta1^t) * lr * sqrt(1 - beta2^t) / (sqrt(v) + eps) * r
//   otherwise:  p -= m / (1 - beta1^t) * lr
// State: "step" (scalar), "exp_avg" and "exp_avg_sq".
#pragma once

#include <vector>

#include "stride/optim/adam.h"

namespace stride::optim {

// State_dict keys: lr, beta1, beta2, eps, weight_decay,
// decoupled_weight_decay, maximize.
struct RAdamOptions : OptimizerCloneableOptions<RAdamOptions> {
  explicit RAdamOptions(double lr = 1e-3) : OptimizerCloneableOptions(lr) {}
  STRIDE_OPTIM_ARG(Betas, betas) = {0.9, 0.999};
  STRIDE_OPTIM_ARG(double, eps) = 1e-8;
  STRIDE_OPTIM_ARG(double, weight_decay) = 0;
  STRIDE_OPTIM_ARG(bool, decoupled_weight_decay) = false;
  STRIDE_OPTIM_ARG(bool, maximize) = false;

 private:
  friend class OptimizerCloneableOptions<RAdamOptions>;
  static constexpr const char* kName = "RAdamOptions";
  template <class Self, class F>
  static void visit(Self& self, F&& f) {
    f("beta1", self.betas_.first);
    f("beta2", self.betas_.second);
    f("eps", self.eps_);
    f("weight_decay", self.weight_decay_);
    f("decoupled_weight_decay", self.decoupled_weight_decay_);
    f("maximize", self.maximize_);
  }
};

class RAdam : public Optimizer {
 public:
  RAdam(std::vector<Tensor> params, const RAdamOptions& options = RAdamOptions());
  RAdam(std::vector<ParamGroup> groups, const RAdamOptions& options = RAdamOptions());

 protected:
  void check_options(const OptimizerOptions& options, size_t group_index) const override;
  void update(Tensor& param,
              const Tensor& grad,
              const ParamGroup& group,
              ParamState& state) override;
  StateSchema state_schema() const override;
};

}  // namespace stride::optim
