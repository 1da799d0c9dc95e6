#include "stride/optim/nadam.h"

#include <cmath>

#include "optim/option_checks.h"
#include "optim/single_tensor.h"
#include "stride/ops.h"

namespace stride::optim {

NAdam::NAdam(std::vector<Tensor> params, const NAdamOptions& options)
    : NAdam(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

NAdam::NAdam(std::vector<ParamGroup> groups, const NAdamOptions& options)
    : Optimizer("NAdam", options) {
  init(std::move(groups));
}

void NAdam::check_options(const OptimizerOptions& options, size_t g) const {
  const auto& o = static_cast<const NAdamOptions&>(options);
  detail::check_non_negative(name(), g, "lr", o.lr());
  detail::check_non_negative(name(), g, "eps", o.eps());
  detail::check_betas(name(), g, o.betas());
  detail::check_non_negative(name(), g, "weight_decay", o.weight_decay());
  detail::check_non_negative(name(), g, "momentum_decay", o.momentum_decay());
}

Optimizer::StateSchema NAdam::state_schema() const {
  return {{"exp_avg", "exp_avg_sq"}, {"step", "mu_product"}, {}};
}

namespace {

// The momentum coefficient of step t (Dozat's schedule, as PyTorch's).
double nadam_mu(double beta1, double momentum_decay, double t) {
  return beta1 * (1.0 - 0.5 * std::pow(0.96, t * momentum_decay));
}

// PyTorch keeps mu_product in a float32 tensor and multiplies it in float32;
// this rounds the same way, so that the step sizes match its bit for bit.
double float32_product(double a, double b) {
  return double(float(a) * float(b));
}

}  // namespace

// torch/optim/nadam.py _single_tensor_nadam, op by op.
void NAdam::update(Tensor& param, const Tensor& grad, const ParamGroup& group, ParamState& state) {
  const auto& o = static_cast<const NAdamOptions&>(group.options());
  const auto [beta1, beta2] = o.betas();
  const double lr = o.lr(), wd = o.weight_decay();
  if (state.tensors.empty()) {
    state.scalars["step"] = 0;
    state.scalars["mu_product"] = 1;
    state.tensors["exp_avg"] = zeros_like_param(param);
    state.tensors["exp_avg_sq"] = zeros_like_param(param);
  }
  const double step = (state.scalars["step"] += 1);
  const Tensor g =
      detail::decayed_grad(param, grad, lr, wd, o.maximize(), o.decoupled_weight_decay());
  const double mu = nadam_mu(beta1, o.momentum_decay(), step);
  const double mu_next = nadam_mu(beta1, o.momentum_decay(), step + 1);
  double& mu_product = state.scalars.at("mu_product");
  mu_product = float32_product(mu_product, mu);
  const double mu_product_next = mu_product * mu_next;

  Tensor& exp_avg = state.tensors.at("exp_avg");
  Tensor& exp_avg_sq = state.tensors.at("exp_avg_sq");
  detail::update_adam_moments(exp_avg, exp_avg_sq, g, beta1, beta2);
  Tensor denom = exp_avg_sq.div(1 - std::pow(beta2, step)).sqrt().add_(o.eps());
  param.addcdiv_(g, denom, -lr * (1.0 - mu) / (1.0 - mu_product));
  param.addcdiv_(exp_avg, denom, (-lr * mu_next) / (1.0 - mu_product_next));
}

}  // namespace stride::optim
