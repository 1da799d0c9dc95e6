#include "stride/optim/adagrad.h"

#include "optim/option_checks.h"
#include "optim/single_tensor.h"
#include "stride/ops.h"

namespace stride::optim {

Adagrad::Adagrad(std::vector<Tensor> params, const AdagradOptions& options)
    : Adagrad(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

Adagrad::Adagrad(std::vector<ParamGroup> groups, const AdagradOptions& options)
    : Optimizer("Adagrad", options) {
  init(std::move(groups));
}

void Adagrad::check_options(const OptimizerOptions& options, size_t g) const {
  const auto& o = static_cast<const AdagradOptions&>(options);
  detail::check_non_negative(name(), g, "lr", o.lr());
  detail::check_non_negative(name(), g, "lr_decay", o.lr_decay());
  detail::check_non_negative(name(), g, "weight_decay", o.weight_decay());
  detail::check_non_negative(name(), g, "initial_accumulator_value", o.initial_accumulator_value());
  detail::check_non_negative(name(), g, "eps", o.eps());
}

Optimizer::StateSchema Adagrad::state_schema() const {
  return {{"sum"}, {"step"}, {}};
}

// torch/optim/adagrad.py _single_tensor_adagrad (dense gradients), op by op.
void Adagrad::update(Tensor& param,
                     const Tensor& grad,
                     const ParamGroup& group,
                     ParamState& state) {
  const auto& o = static_cast<const AdagradOptions&>(group.options());
  if (state.tensors.empty()) {
    state.scalars["step"] = 0;
    state.tensors["sum"] = zeros_like_param(param).fill_(o.initial_accumulator_value());
  }
  const double step = (state.scalars["step"] += 1);
  const Tensor g = detail::decayed_grad(param, grad, o.lr(), o.weight_decay(), o.maximize());
  const double clr = o.lr() / (1 + (step - 1) * o.lr_decay());
  Tensor& sum = state.tensors.at("sum");
  sum.addcmul_(g, g, 1);
  param.addcdiv_(g, sum.sqrt().add_(o.eps()), -clr);
}

}  // namespace stride::optim
