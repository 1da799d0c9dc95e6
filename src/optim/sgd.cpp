#include "stride/optim/sgd.h"

#include "core/check.h"
#include "optim/fused.h"
#include "stride/ops.h"

namespace stride::optim {

GroupOptions SGDOptions::to_group_options() const {
  return {{"lr", lr()},
          {"momentum", momentum()},
          {"dampening", dampening()},
          {"weight_decay", weight_decay()},
          {"nesterov", nesterov() ? 1.0 : 0.0},
          {"maximize", maximize() ? 1.0 : 0.0},
          {"fused", fused() ? 1.0 : 0.0}};
}

SGD::SGD(std::vector<Tensor> params, const SGDOptions& options)
    : SGD(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

SGD::SGD(std::vector<ParamGroup> groups, const SGDOptions& options)
    : Optimizer("SGD", options.to_group_options()) {
  init(std::move(groups));
}

void SGD::check_options(const GroupOptions& o, size_t g) const {
  const double lr = o.at("lr"), momentum = o.at("momentum"), wd = o.at("weight_decay");
  STRIDE_CHECK(lr >= 0, ValueError, "[SGD] param group ", g, ": lr must be >= 0; got ", lr, ".");
  STRIDE_CHECK(momentum >= 0, ValueError, "[SGD] param group ", g, ": momentum must be >= 0; got ",
               momentum, ".");
  STRIDE_CHECK(wd >= 0, ValueError, "[SGD] param group ", g, ": weight_decay must be >= 0; got ",
               wd, ".");
  STRIDE_CHECK(o.at("nesterov") == 0 || (momentum > 0 && o.at("dampening") == 0), ValueError,
               "[SGD] param group ", g,
               ": nesterov momentum needs momentum > 0 and dampening = 0; got momentum ", momentum,
               " and dampening ", o.at("dampening"), ".");
}

Optimizer::StateSchema SGD::state_schema() const {
  return {{}, {}, {"momentum_buffer"}};
}

void SGD::update(Tensor& param, const Tensor& grad, const ParamGroup& group, ParamState& state) {
  const detail::SGDScalars s{
      group.get("lr"),           group.get("momentum"),      group.get("dampening"),
      group.get("weight_decay"), group.get("nesterov") != 0, group.get("maximize") != 0};
  const bool has_momentum = s.momentum != 0;
  auto found = state.tensors.find("momentum_buffer");
  const bool first = has_momentum && found == state.tensors.end();
  Tensor buf;
  if (has_momentum) {
    buf = first ? zeros_like_param(param) : found->second;
    if (first) state.tensors["momentum_buffer"] = buf;
  }

  if (group.get("fused") != 0 && detail::fused_supported(param, grad)) {
    fused_step().add_sgd(param, buf, first, grad, s);
    return;
  }

  // The reference: torch/optim/sgd.py _single_tensor_sgd, op by op.
  Tensor d_p = s.maximize ? neg(grad) : grad;
  if (s.weight_decay != 0) d_p = d_p.add(param, s.weight_decay);
  if (has_momentum) {
    if (first) {
      buf.copy_(d_p);
    } else {
      buf.mul_(s.momentum).add_(d_p, 1 - s.dampening);
    }
    d_p = s.nesterov ? d_p.add(buf, s.momentum) : buf;
  }
  param.add_(d_p, -s.lr);
}

}  // namespace stride::optim
