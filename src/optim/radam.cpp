#include "stride/optim/radam.h"

#include <cmath>

#include "optim/option_checks.h"
#include "optim/single_tensor.h"
#include "stride/ops.h"

namespace stride::optim {

RAdam::RAdam(std::vector<Tensor> params, const RAdamOptions& options)
    : RAdam(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

RAdam::RAdam(std::vector<ParamGroup> groups, const RAdamOptions& options)
    : Optimizer("RAdam", options) {
  init(std::move(groups));
}

void RAdam::check_options(const OptimizerOptions& options, size_t g) const {
  const auto& o = static_cast<const RAdamOptions&>(options);
  detail::check_non_negative(name(), g, "lr", o.lr());
  detail::check_non_negative(name(), g, "eps", o.eps());
  detail::check_betas(name(), g, o.betas());
  detail::check_non_negative(name(), g, "weight_decay", o.weight_decay());
}

Optimizer::StateSchema RAdam::state_schema() const {
  return {{"exp_avg", "exp_avg_sq"}, {"step"}, {}};
}

// torch/optim/radam.py _single_tensor_radam, op by op and in its order.
void RAdam::update(Tensor& param, const Tensor& grad, const ParamGroup& group, ParamState& state) {
  const auto& o = static_cast<const RAdamOptions&>(group.options());
  const auto [beta1, beta2] = o.betas();
  const double lr = o.lr(), wd = o.weight_decay();
  if (state.tensors.empty()) {
    state.scalars["step"] = 0;
    state.tensors["exp_avg"] = zeros_like_param(param);
    state.tensors["exp_avg_sq"] = zeros_like_param(param);
  }
  const double step = (state.scalars["step"] += 1);
  const Tensor g =
      detail::decayed_grad(param, grad, lr, wd, o.maximize(), o.decoupled_weight_decay());
  Tensor& exp_avg = state.tensors.at("exp_avg");
  Tensor& exp_avg_sq = state.tensors.at("exp_avg_sq");
  detail::update_adam_moments(exp_avg, exp_avg_sq, g, beta1, beta2);

  const double bias_correction1 = 1 - std::pow(beta1, step);
  const double bias_correction2 = 1 - std::pow(beta2, step);
  Tensor update = exp_avg.div(bias_correction1).mul(lr);
  // The variance is tractable only once rho_t > 5; before, the step is
  // SGD with momentum.
  const double rho_inf = 2 / (1 - beta2) - 1;
  const double rho_t = rho_inf - 2 * step * std::pow(beta2, step) / bias_correction2;
  if (rho_t > 5.0) {
    const double rect =
        std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t));
    // PyTorch's scalar / tensor is reciprocal(tensor) * scalar.
    Tensor adaptive = reciprocal(exp_avg_sq.sqrt().add_(o.eps())).mul(std::sqrt(bias_correction2));
    update = update.mul(adaptive).mul(rect);
  }
  param.add_(update, -1.0);
}

}  // namespace stride::optim
