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

struct SGDOptions {
  explicit SGDOptions(double lr) : lr_(lr) {}
  STRIDE_OPTIM_ARG(double, lr);
  STRIDE_OPTIM_ARG(double, momentum) = 0;
  STRIDE_OPTIM_ARG(double, dampening) = 0;
  STRIDE_OPTIM_ARG(double, weight_decay) = 0;
  STRIDE_OPTIM_ARG(bool, nesterov) = false;
  STRIDE_OPTIM_ARG(bool, maximize) = false;
  // One TensorIter pass per parameter for float32/float64 parameters
  // (bit-identical to the op-by-op reference path, which runs otherwise).
  STRIDE_OPTIM_ARG(bool, fused) = true;

 public:
  // As group options: lr, momentum, dampening, weight_decay, nesterov,
  // maximize, fused.
  GroupOptions to_group_options() const;
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, const SGDOptions& options);
  SGD(std::vector<ParamGroup> groups, const SGDOptions& options);

 protected:
  void check_options(const GroupOptions& options, size_t group_index) const override;
  void update(Tensor& param,
              const Tensor& grad,
              const ParamGroup& group,
              ParamState& state) override;
  StateSchema state_schema() const override;
};

}  // namespace stride::optim
