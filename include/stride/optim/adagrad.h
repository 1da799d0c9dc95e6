// Adagrad (torch.optim.Adagrad), in PyTorch's single-tensor form. Per
// parameter p with gradient g at step t (starting at 1):
//   g = -g if maximize;  g += weight_decay * p
//   clr = lr / (1 + (t - 1) * lr_decay)
//   s += g * g                                  "sum", starts at
//                                                initial_accumulator_value
//   p -= clr * g / (sqrt(s) + eps)
// State: "step" (scalar) and "sum", of the parameter's shape and dtype.
// PyTorch fills "sum" when the optimizer is built; here it is filled at the
// parameter's first update, from its group's initial_accumulator_value, which
// gives the same updates.
#pragma once

#include <vector>

#include "stride/optim/optimizer.h"

namespace stride::optim {

// State_dict keys: lr, lr_decay, weight_decay, initial_accumulator_value,
// eps, maximize.
struct AdagradOptions : OptimizerCloneableOptions<AdagradOptions> {
  explicit AdagradOptions(double lr = 1e-2) : OptimizerCloneableOptions(lr) {}
  STRIDE_OPTIM_ARG(double, lr_decay) = 0;
  STRIDE_OPTIM_ARG(double, weight_decay) = 0;
  STRIDE_OPTIM_ARG(double, initial_accumulator_value) = 0;
  STRIDE_OPTIM_ARG(double, eps) = 1e-10;
  STRIDE_OPTIM_ARG(bool, maximize) = false;

 private:
  friend class OptimizerCloneableOptions<AdagradOptions>;
  static constexpr const char* kName = "AdagradOptions";
  template <class Self, class F>
  static void visit(Self& self, F&& f) {
    f("lr_decay", self.lr_decay_);
    f("weight_decay", self.weight_decay_);
    f("initial_accumulator_value", self.initial_accumulator_value_);
    f("eps", self.eps_);
    f("maximize", self.maximize_);
  }
};

class Adagrad : public Optimizer {
 public:
  Adagrad(std::vector<Tensor> params, const AdagradOptions& options = AdagradOptions());
  Adagrad(std::vector<ParamGroup> groups, const AdagradOptions& options = AdagradOptions());

 protected:
  void check_options(const OptimizerOptions& options, size_t group_index) const override;
  void update(Tensor& param,
              const Tensor& grad,
              const ParamGroup& group,
              ParamState& state) override;
  StateSchema state_schema() const override;
};

}  // namespace stride::optim
