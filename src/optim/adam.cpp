#include "stride/optim/adam.h"

#include <cmath>
#include <tuple>

#include "core/check.h"
#include "optim/fused.h"
#include "stride/ops.h"

namespace stride::optim {

namespace {

const AdamOptions& options_of(const OptimizerOptions& o) {
  // Optimizer::init has checked that every group's options are AdamOptions.
  return static_cast<const AdamOptions&>(o);
}

}  // namespace

Adam::Adam(const char* name, bool always_decoupled, const AdamOptions& defaults)
    : Optimizer(name, defaults), always_decoupled_(always_decoupled) {}

Adam::Adam(std::vector<Tensor> params, const AdamOptions& options)
    : Adam(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

Adam::Adam(std::vector<ParamGroup> groups, const AdamOptions& options)
    : Adam("Adam", false, options) {
  init(std::move(groups));
}

AdamW::AdamW(std::vector<Tensor> params, const AdamOptions& options)
    : AdamW(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

AdamW::AdamW(std::vector<ParamGroup> groups, const AdamOptions& options)
    : Adam("AdamW", true, AdamOptions(options).decoupled_weight_decay(true)) {
  init(std::move(groups));
}

void Adam::check_options(const OptimizerOptions& options, size_t g) const {
  const std::string& n = name();
  const AdamOptions& o = options_of(options);
  const double lr = o.lr(), eps = o.eps(), wd = o.weight_decay();
  const auto [b1, b2] = o.betas();
  STRIDE_CHECK(lr >= 0, ValueError, "[", n, "] param group ", g, ": lr must be >= 0; got ", lr,
               ".");
  STRIDE_CHECK(eps >= 0, ValueError, "[", n, "] param group ", g, ": eps must be >= 0; got ", eps,
               ".");
  STRIDE_CHECK(b1 >= 0 && b1 < 1, ValueError, "[", n, "] param group ", g,
               ": betas[0] must be in [0, 1); got ", b1, ".");
  STRIDE_CHECK(b2 >= 0 && b2 < 1, ValueError, "[", n, "] param group ", g,
               ": betas[1] must be in [0, 1); got ", b2, ".");
  STRIDE_CHECK(wd >= 0, ValueError, "[", n, "] param group ", g,
               ": weight_decay must be >= 0; got ", wd, ".");
}

Optimizer::StateSchema Adam::state_schema() const {
  return {{"exp_avg", "exp_avg_sq"}, {"step"}, {"max_exp_avg_sq"}};
}

void Adam::update(Tensor& param, const Tensor& grad, const ParamGroup& group, ParamState& state) {
  const AdamOptions& o = options_of(group.options());
  const double lr = o.lr(), wd = o.weight_decay();
  const bool amsgrad = o.amsgrad();
  const bool decoupled = always_decoupled_ || o.decoupled_weight_decay();
  if (state.tensors.empty()) {
    state.scalars["step"] = 0;
    state.tensors["exp_avg"] = zeros_like_param(param);
    state.tensors["exp_avg_sq"] = zeros_like_param(param);
  }
  if (amsgrad && !state.tensors.count("max_exp_avg_sq")) {
    state.tensors["max_exp_avg_sq"] = zeros_like_param(param);
  }
  Tensor& exp_avg = state.tensors.at("exp_avg");
  Tensor& exp_avg_sq = state.tensors.at("exp_avg_sq");
  Tensor max_exp_avg_sq = amsgrad ? state.tensors.at("max_exp_avg_sq") : Tensor();
  const double step = (state.scalars["step"] += 1);

  // The scalars exactly as torch/optim/adam.py (and adamw.py) compute them in
  // Python floats (doubles); the kernels see them rounded to the dtype.
  kernels::AdamStepScalars s{};
  std::tie(s.beta1, s.beta2) = o.betas();
  s.eps = o.eps();
  s.weight_decay = wd;
  s.one_minus_beta1 = 1 - s.beta1;
  s.one_minus_beta2 = 1 - s.beta2;
  s.decay = decoupled ? 1 - lr * wd : 1;
  const double bias_correction1 = 1 - std::pow(s.beta1, step);
  const double bias_correction2 = 1 - std::pow(s.beta2, step);
  s.bias_correction2_sqrt = std::sqrt(bias_correction2);
  s.neg_step_size = -(lr / bias_correction1);
  s.l2 = !decoupled && wd != 0;
  s.decoupled = decoupled;
  s.amsgrad = amsgrad;
  s.maximize = o.maximize();

  if (o.fused() && detail::fused_supported(param, grad)) {
    fused_step().add_adam(param, exp_avg, exp_avg_sq, max_exp_avg_sq, grad, s);
    return;
  }

  // The reference: _single_tensor_adam / _single_tensor_adamw of torch 1.13,
  // op by op.
  Tensor g = s.maximize ? neg(grad) : grad;
  if (s.l2) g = g.add(param, wd);
  if (decoupled) param.mul_(s.decay);
  exp_avg.mul_(s.beta1).add_(g, s.one_minus_beta1);
  exp_avg_sq.mul_(s.beta2).addcmul_(g, g, s.one_minus_beta2);
  Tensor denom;
  if (amsgrad) {
    maximum_out(max_exp_avg_sq, max_exp_avg_sq, exp_avg_sq);
    denom = max_exp_avg_sq.sqrt().div(s.bias_correction2_sqrt).add_(s.eps);
  } else {
    denom = exp_avg_sq.sqrt().div(s.bias_correction2_sqrt).add_(s.eps);
  }
  param.addcdiv_(exp_avg, denom, s.neg_step_size);
}

}  // namespace stride::optim
