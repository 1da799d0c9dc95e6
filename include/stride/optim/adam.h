// Adam and AdamW (torch.optim.Adam / AdamW), in PyTorch's single-tensor form.
// Per parameter p with gradient g at step t (starting at 1):
//   g = -g if maximize
//   Adam:  g += weight_decay * p            (L2 penalty, added to the gradient)
//   AdamW: p *= 1 - lr * weight_decay       (decoupled weight decay)
//   m = beta1 * m + (1 - beta1) * g                         "exp_avg"
//   v = beta2 * v + (1 - beta2) * g * g                     "exp_avg_sq"
//   amsgrad: v_max = max(v_max, v), used instead of v       "max_exp_avg_sq"
//   denom = sqrt(v) / sqrt(1 - beta2^t) + eps
//   p -= lr / (1 - beta1^t) * m / denom
// State: "step" (scalar), "exp_avg", "exp_avg_sq", and "max_exp_avg_sq" with
// amsgrad; buffers have the parameter's shape and dtype.
#pragma once

#include <utility>
#include <vector>

#include "stride/optim/optimizer.h"

namespace stride::optim {

using Betas = std::pair<double, double>;

// AdamOptions and AdamWOptions, which differ only in the default weight decay
// (L2 for Adam, decoupled for AdamW). State_dict keys: lr, beta1, beta2, eps,
// weight_decay, amsgrad, maximize, fused.
#define STRIDE_ADAM_OPTIONS(Options, default_weight_decay)                     \
  struct Options : OptimizerCloneableOptions<Options> {                        \
    explicit Options(double lr = 1e-3) : OptimizerCloneableOptions(lr) {}      \
    STRIDE_OPTIM_ARG(Betas, betas) = {0.9, 0.999};                             \
    STRIDE_OPTIM_ARG(double, eps) = 1e-8;                                      \
    STRIDE_OPTIM_ARG(double, weight_decay) = default_weight_decay;             \
    STRIDE_OPTIM_ARG(bool, amsgrad) = false;                                   \
    STRIDE_OPTIM_ARG(bool, maximize) = false;                                  \
    /* One TensorIter pass per parameter computing m, v and p for float32 */   \
    /* and float64 parameters, a step's passes in one parallel region; bit- */ \
    /* identical to the op-by-op reference path, which runs otherwise. */      \
    STRIDE_OPTIM_ARG(bool, fused) = true;                                      \
                                                                               \
   private:                                                                    \
    friend class OptimizerCloneableOptions<Options>;                           \
    static constexpr const char* kName = #Options;                             \
    template <class Self, class F>                                             \
    static void visit(Self& self, F&& f) {                                     \
      f("beta1", self.betas_.first);                                           \
      f("beta2", self.betas_.second);                                          \
      f("eps", self.eps_);                                                     \
      f("weight_decay", self.weight_decay_);                                   \
      f("amsgrad", self.amsgrad_);                                             \
      f("maximize", self.maximize_);                                           \
      f("fused", self.fused_);                                                 \
    }                                                                          \
  }

STRIDE_ADAM_OPTIONS(AdamOptions, 0.0);
STRIDE_ADAM_OPTIONS(AdamWOptions, 1e-2);

#undef STRIDE_ADAM_OPTIONS

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, const AdamOptions& options = AdamOptions());
  Adam(std::vector<ParamGroup> groups, const AdamOptions& options = AdamOptions());

 protected:
  // For AdamW: decoupled weight decay, named "AdamW".
  Adam(const char* name, bool decoupled, const OptimizerOptions& defaults);
  void check_options(const OptimizerOptions& options, size_t group_index) const override;
  void update(Tensor& param,
              const Tensor& grad,
              const ParamGroup& group,
              ParamState& state) override;
  StateSchema state_schema() const override;

 private:
  bool decoupled_;  // AdamW
};

class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, const AdamWOptions& options = AdamWOptions());
  AdamW(std::vector<ParamGroup> groups, const AdamWOptions& options = AdamWOptions());
};

}  // namespace stride::optim
