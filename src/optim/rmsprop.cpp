#include "stride/optim/rmsprop.h"

#include "optim/option_checks.h"
#include "optim/single_tensor.h"
#include "stride/ops.h"

namespace stride::optim {

RMSprop::RMSprop(std::vector<Tensor> params, const RMSpropOptions& options)
    : RMSprop(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

RMSprop::RMSprop(std::vector<ParamGroup> groups, const RMSpropOptions& options)
    : Optimizer("RMSprop", options) {
  init(std::move(groups));
}

void RMSprop::check_options(const OptimizerOptions& options, size_t g) const {
  const auto& o = static_cast<const RMSpropOptions&>(options);
  detail::check_non_negative(name(), g, "lr", o.lr());
  detail::check_non_negative(name(), g, "eps", o.eps());
  detail::check_non_negative(name(), g, "momentum", o.momentum());
  detail::check_non_negative(name(), g, "weight_decay", o.weight_decay());
  detail::check_non_negative(name(), g, "alpha", o.alpha());
}

Optimizer::StateSchema RMSprop::state_schema() const {
  return {{"square_avg"}, {"step"}, {"momentum_buffer", "grad_avg"}};
}

// torch/optim/rmsprop.py _single_tensor_rmsprop, op by op.
void RMSprop::update(Tensor& param,
                     const Tensor& grad,
                     const ParamGroup& group,
                     ParamState& state) {
  const auto& o = static_cast<const RMSpropOptions&>(group.options());
  if (state.tensors.empty()) {
    state.scalars["step"] = 0;
    state.tensors["square_avg"] = zeros_like_param(param);
  }
  // A group may turn momentum or centering on after the first step.
  if (o.momentum() > 0 && !state.tensors.count("momentum_buffer")) {
    state.tensors["momentum_buffer"] = zeros_like_param(param);
  }
  if (o.centered() && !state.tensors.count("grad_avg")) {
    state.tensors["grad_avg"] = zeros_like_param(param);
  }
  state.scalars["step"] += 1;

  const Tensor g = detail::decayed_grad(param, grad, o.lr(), o.weight_decay(), o.maximize());
  Tensor& square_avg = state.tensors.at("square_avg");
  square_avg.mul_(o.alpha()).addcmul_(g, g, 1 - o.alpha());
  Tensor avg;
  if (o.centered()) {
    Tensor& grad_avg = state.tensors.at("grad_avg");
    grad_avg.lerp_(g, 1 - o.alpha());
    avg = square_avg.clone().addcmul_(grad_avg, grad_avg, -1).sqrt_();
  } else {
    avg = square_avg.sqrt();
  }
  avg.add_(o.eps());
  if (o.momentum() > 0) {
    Tensor& buf = state.tensors.at("momentum_buffer");
    buf.mul_(o.momentum()).addcdiv_(g, avg);
    param.add_(buf, -o.lr());
  } else {
    param.addcdiv_(g, avg, -o.lr());
  }
}

}  // namespace stride::optim
