// Adamax (torch.optim.Adamax), Adam with the infinity norm, in PyTorch's
// single-tensor form. Per parameter p with gradient g at step t:
//   g = -g if maximize;  g += weight_decay * p
//   m = lerp(m, g, 1 - beta1)                          "exp_avg"
//   u = max(beta2 * u, |g| + eps)                      "exp_inf"
//   p -= lr / (1 - beta1^t) * m / u
// State: "step" (scalar), "exp_avg" and "exp_inf", of the parameter's shape
// and dtype.
#pragma once

#include <vector>

#include "stride/optim/adam.h"

namespace stride::optim {

// State_dict keys: lr, beta1, beta2, eps, weight_decay, maximize.
struct AdamaxOptions : OptimizerCloneableOptions<AdamaxOptions> {
  explicit AdamaxOptions(double lr = 2e-3) : OptimizerCloneableOptions(lr) {}
  STRIDE_OPTIM_ARG(Betas, betas) = {0.9, 0.999};
  STRIDE_OPTIM_ARG(double, eps) = 1e-8;
  STRIDE_OPTIM_ARG(double, weight_decay) = 0;
  STRIDE_OPTIM_ARG(bool, maximize) = false;

 private:
  friend class OptimizerCloneableOptions<AdamaxOptions>;
  static constexpr const char* kName = "AdamaxOptions";
  template <class Self, class F>
  static void visit(Self& self, F&& f) {
    f("beta1", self.betas_.first);
    f("beta2", self.betas_.second);
    f("eps", self.eps_);
    f("weight_decay", self.weight_decay_);
    f("maximize", self.maximize_);
  }
};

class Adamax : public Optimizer {
 public:
  Adamax(std::vector<Tensor> params, const AdamaxOptions& options = AdamaxOptions());
  Adamax(std::vector<ParamGroup> groups, const AdamaxOptions& options = AdamaxOptions());

 protected:
  void check_options(const OptimizerOptions& options, size_t group_index) const override;
  void update(Tensor& param,
              const Tensor& grad,
              const ParamGroup& group,
              ParamState& state) override;
  StateSchema state_schema() const override;
};

}  // namespace stride::optim
