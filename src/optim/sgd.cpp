#include "stride/optim/sgd.h"

#include "core/check.h"
#include "optim/fused.h"
#include "stride/ops.h"

namespace stride::optim {

SGD::SGD(std::vector<Tensor> params, const SGDOptions& options)
    : SGD(std::vector<ParamGroup>{ParamGroup(std::move(params))}, options) {}

SGD::SGD(std::vector<ParamGroup> groups, const SGDOptions& options) : Optimizer("SGD", options) {
  init(std::move(groups));
}

void SGD::check_options(const OptimizerOptions& options, size_t g) const {
  const auto& o = static_cast<const SGDOptions&>(options);
  const double lr = o.lr(), momentum = o.momentum(), wd = o.weight_decay();
  STRIDE_CHECK(lr >= 0, ValueError, "[SGD] param group ", g, ": lr must be >= 0; got ", lr, ".");
  STRIDE_CHECK(momentum >= 0, ValueError, "[SGD] param group ", g, ": momentum must be >= 0; got ",
               momentum, ".");
  STRIDE_CHECK(wd >= 0, ValueError, "[SGD] param group ", g, ": weight_decay must be >= 0; got ",
               wd, ".");
  STRIDE_CHECK(!o.nesterov() || (momentum > 0 && o.dampening() == 0), ValueError,
               "[SGD] param group ", g,
               ": nesterov momentum needs momentum > 0 and dampening = 0; got momentum ", momentum,
               " and dampening ", o.dampening(), ".");
}

Optimizer::StateSchema SGD::state_schema() const {
  return {{}, {}, {"momentum_buffer"}};
}

void SGD::update(Tensor& param, const Tensor& grad, const ParamGroup& group, ParamState& state) {
  const auto& o = static_cast<const SGDOptions&>(group.options());
  const kernels::SGDStepScalars s{o.lr(),           o.momentum(), o.dampening(),
                                  o.weight_decay(), o.nesterov(), o.maximize()};
  const bool has_momentum = s.momentum != 0;
  auto found = state.tensors.find("momentum_buffer");
  const bool first = has_momentum && found == state.tensors.end();
  Tensor buf;
  if (has_momentum) {
    buf = first ? zeros_like_param(param) : found->second;
    if (first) state.tensors["momentum_buffer"] = buf;
  }

  if (o.fused() && detail::fused_supported(param, grad)) {
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
