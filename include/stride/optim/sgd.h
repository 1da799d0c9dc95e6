// Stochastic gradient descent with momentum (torch.optim.SGD). Per parameter
// p with gradient g, in PyTorch's order:
//   g = -g if maximize;  g += weight_decay * p
//   buf = g (first step) | buf = momentum * buf + (1 - dampening) * g
//   g = g + momentum * buf (nesterov) | g = buf (momentum != 0)
//   p -= lr * g
// State: "momentum_buffer" (only when momentum != 0).
#pragma once

#include <vector>

#include "stride/optim/optimizer.h"

namespace stride::optim {

// State_dict keys: lr, momentum, dampening, weight_decay, nesterov, maximize,
// fused.
struct SGDOptions : OptimizerCloneableOptions<SGDOptions> {
  explicit SGDOptions(double lr) : OptimizerCloneableOptions(lr) {}
  STRIDE_OPTIM_ARG(double, momentum) = 0;
  STRIDE_OPTIM_ARG(double, dampening) = 0;
  STRIDE_OPTIM_ARG(double, weight_decay) = 0;
  STRIDE_OPTIM_ARG(bool, nesterov) = false;
  STRIDE_OPTIM_ARG(bool, maximize) = false;
  // One TensorIter pass per parameter for float32/float64 parameters
  // (bit-identical to the op-by-op reference path, which runs otherwise).
  STRIDE_OPTIM_ARG(bool, fused) = true;

 private:
  friend class OptimizerCloneableOptions<SGDOptions>;
  static constexpr const char* kName = "SGDOptions";
  template <class Self, class F>
  static void visit(Self& self, F&& f) {
    f("momentum", self.momentum_);
    f("dampening", self.dampening_);
    f("weight_decay", self.weight_decay_);
    f("nesterov", self.nesterov_);
    f("maximize", self.maximize_);
    f("fused", self.fused_);
  }
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, const SGDOptions& options);
  SGD(std::vector<ParamGroup> groups, const SGDOptions& options);

 protected:
  void check_options(const OptimizerOptions& options, size_t group_index) const override;
  void update(Tensor& param,
              const Tensor& grad,
              const ParamGroup& group,
              ParamState& state) override;
  StateSchema state_schema() const override;
};

}  // namespace stride::optim
