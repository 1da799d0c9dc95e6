#include "stride/optim/adamax.h"

#include <cmath>

#include "optim/option_checks.h"
#include "optim/single_tensor.h"
#include "stride/ops.h"

namespace stride::optim {

Adamax::Adamax(std::vector<Tensor> params, const AdamaxOptions& options)
    : Adamax(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

Adamax::Adamax(std::vector<ParamGroup> groups, const AdamaxOptions& options)
    : Optimizer("Adamax", options) {
  init(std::move(groups));
}

void Adamax::check_options(const OptimizerOptions& options, size_t g) const {
  const auto& o = static_cast<const AdamaxOptions&>(options);
  detail::check_non_negative(name(), g, "lr", o.lr());
  detail::check_non_negative(name(), g, "eps", o.eps());
  detail::check_betas(name(), g, o.betas());
  detail::check_non_negative(name(), g, "weight_decay", o.weight_decay());
}

Optimizer::StateSchema Adamax::state_schema() const {
  return {{"exp_avg", "exp_inf"}, {"step"}, {}};
}

// torch/optim/adamax.py _single_tensor_adamax, op by op.
void Adamax::update(Tensor& param, const Tensor& grad, const ParamGroup& group, ParamState& state) {
  const auto& o = static_cast<const AdamaxOptions&>(group.options());
  const auto [beta1, beta2] = o.betas();
  if (state.tensors.empty()) {
    state.scalars["step"] = 0;
    state.tensors["exp_avg"] = zeros_like_param(param);
    state.tensors["exp_inf"] = zeros_like_param(param);
  }
  const double step = (state.scalars["step"] += 1);
  const Tensor g = detail::decayed_grad(param, grad, o.lr(), o.weight_decay(), o.maximize());
  Tensor& exp_avg = state.tensors.at("exp_avg");
  Tensor& exp_inf = state.tensors.at("exp_inf");
  exp_avg.lerp_(g, 1 - beta1);
  maximum_out(exp_inf, exp_inf.mul_(beta2), abs(g).add_(o.eps()));
  const double clr = o.lr() / (1 - std::pow(beta1, step));
  param.addcdiv_(exp_avg, exp_inf, -clr);
}

}  // namespace stride::optim
