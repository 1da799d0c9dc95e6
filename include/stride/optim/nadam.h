// NAdam (torch.optim.NAdam), Adam with Nesterov momentum, in PyTorch's
// single-tensor form. Per parameter p with gradient g at step t:
//   g = -g if maximize
//   decoupled_weight_decay: p *= 1 - lr * weight_decay;  else g += weight_decay * p
//   mu_t = beta1 * (1 - 0.96^(t * momentum_decay) / 2), mu_{t+1} likewise
//   mu_product *= mu_t                                "mu_product", from 1
//   m = lerp(m, g, 1 - beta1)                         "exp_avg"
//   v = beta2 * v + (1 - beta2) * g * g               "exp_avg_sq"
//   denom = sqrt(v / (1 - beta2^t)) + eps
//   p -= lr * (1 - mu_t) / (1 - mu_product) * g / denom
//   p -= lr * mu_{t+1} / (1 - mu_product * mu_{t+1}) * m / denom
// State: "step" and "mu_product" (scalars; mu_product is kept in float32, as
// PyTorch's float32 state tensor), "exp_avg" and "exp_avg_sq".
#pragma once

#include <vector>

#include "stride/optim/adam.h"

namespace stride::optim {

// State_dict keys: lr, beta1, beta2, eps, weight_decay, momentum_decay,
// decoupled_weight_decay, maximize.
struct NAdamOptions : OptimizerCloneableOptions<NAdamOptions> {
  explicit NAdamOptions(double lr = 2e-3) : OptimizerCloneableOptions(lr) {}
  STRIDE_OPTIM_ARG(Betas, betas) = {0.9, 0.999};
  STRIDE_OPTIM_ARG(double, eps) = 1e-8;
  STRIDE_OPTIM_ARG(double, weight_decay) = 0;
  STRIDE_OPTIM_ARG(double, momentum_decay) = 4e-3;
  STRIDE_OPTIM_ARG(bool, decoupled_weight_decay) = false;
  STRIDE_OPTIM_ARG(bool, maximize) = false;

 private:
  friend class OptimizerCloneableOptions<NAdamOptions>;
  static constexpr const char* kName = "NAdamOptions";
  template <class Self, class F>
  static void visit(Self& self, F&& f) {
    f("beta1", self.betas_.first);
    f("beta2", self.betas_.second);
    f("eps", self.eps_);
    f("weight_decay", self.weight_decay_);
    f("momentum_decay", self.momentum_decay_);
    f("decoupled_weight_decay", self.decoupled_weight_decay_);
    f("maximize", self.maximize_);
  }
};

class NAdam : public Optimizer {
 public:
  NAdam(std::vector<Tensor> params, const NAdamOptions& options = NAdamOptions());
  NAdam(std::vector<ParamGroup> groups, const NAdamOptions& options = NAdamOptions());

 protected:
  void check_options(const OptimizerOptions& options, size_t group_index) const override;
  void update(Tensor& param,
              const Tensor& grad,
              const ParamGroup& group,
              ParamState& state) override;
  StateSchema state_schema() const override;
};

}  // namespace stride::optim
