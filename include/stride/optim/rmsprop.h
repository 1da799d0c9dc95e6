// RMSprop (torch.optim.RMSprop), in PyTorch's single-tensor form. Per
// parameter p with gradient g:
//   g = -g if maximize;  g += weight_decay * p
//   v = alpha * v + (1 - alpha) * g * g                        "square_avg"
//   centered: a = lerp(a, g, 1 - alpha); avg = sqrt(v - a * a)  "grad_avg"
//   otherwise avg = sqrt(v);  avg += eps
//   momentum > 0: buf = momentum * buf + g / avg; p -= lr * buf  "momentum_buffer"
//   otherwise p -= lr * g / avg
// State: "step" (scalar), "square_avg", and "grad_avg" (centered) and
// "momentum_buffer" (momentum > 0), of the parameter's shape and dtype.
#pragma once

#include <vector>

#include "stride/optim/optimizer.h"

namespace stride::optim {

// State_dict keys: lr, alpha, eps, weight_decay, momentum, centered, maximize.
struct RMSpropOptions : OptimizerCloneableOptions<RMSpropOptions> {
  explicit RMSpropOptions(double lr = 1e-2) : OptimizerCloneableOptions(lr) {}
  STRIDE_OPTIM_ARG(double, alpha) = 0.99;
  STRIDE_OPTIM_ARG(double, eps) = 1e-8;
  STRIDE_OPTIM_ARG(double, weight_decay) = 0;
  STRIDE_OPTIM_ARG(double, momentum) = 0;
  STRIDE_OPTIM_ARG(bool, centered) = false;
  STRIDE_OPTIM_ARG(bool, maximize) = false;

 private:
  friend class OptimizerCloneableOptions<RMSpropOptions>;
  static constexpr const char* kName = "RMSpropOptions";
  template <class Self, class F>
  static void visit(Self& self, F&& f) {
    f("alpha", self.alpha_);
    f("eps", self.eps_);
    f("weight_decay", self.weight_decay_);
    f("momentum", self.momentum_);
    f("centered", self.centered_);
    f("maximize", self.maximize_);
  }
};

class RMSprop : public Optimizer {
 public:
  RMSprop(std::vector<Tensor> params, const RMSpropOptions& options = RMSpropOptions());
  RMSprop(std::vector<ParamGroup> groups, const RMSpropOptions& options = RMSpropOptions());

 protected:
  void check_options(const OptimizerOptions& options, size_t group_index) const override;
  void update(Tensor& param,
              const Tensor& grad,
              const ParamGroup& group,
              ParamState& state) override;
  StateSchema state_schema() const override;
};

}  // namespace stride::optim
