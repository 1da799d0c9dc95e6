// Fused optimizer steps: one TensorIter pass per parameter that reads the
// gradient and updates the parameter and its state buffers together, instead
// of the six to eight passes of the op-by-op form, the passes of a step's
// parameters run in one parallel region. Each kernel rounds exactly
// as the op-by-op reference path does (Note [Fused steps round like the ops]
// in fused.cpp), so the two give bit-identical results; the tests compare
// them on every layout.
#pragma once

#include <vector>

#include "stride/tensor.h"

namespace stride::optim::detail {

// The scalar hyperparameters of one Adam/AdamW update, derived once in double
// (as PyTorch's Python code does) and shared by the fused and op-by-op paths.
struct AdamScalars {
  double beta1, beta2, eps, weight_decay;
  double one_minus_beta1, one_minus_beta2;
  double decay;                  // AdamW: 1 - lr * weight_decay, else 1
  double bias_correction2_sqrt;  // sqrt(1 - beta2^step)
  double neg_step_size;          // -lr / (1 - beta1^step)
  bool l2;                       // Adam with weight_decay != 0
  bool decoupled, amsgrad, maximize;
};

struct SGDScalars {
  double lr, momentum, dampening, weight_decay;
  bool nesterov, maximize;
};

// True when the fused kernels handle `param` with `grad`: both on the CPU,
// float32 or float64, one dtype.
bool fused_supported(const Tensor& param, const Tensor& grad);

// A step's fused updates, queued parameter by parameter and run together
// (Note [Multi-tensor steps] in fused.cpp). The queued tensors must stay
// alive until run().
class FusedStep {
 public:
  FusedStep();
  ~FusedStep();
  FusedStep(const FusedStep&) = delete;
  FusedStep& operator=(const FusedStep&) = delete;

  // Queues the update of param, exp_avg, exp_avg_sq (and max_exp_avg_sq when
  // amsgrad) in place. Every tensor has param's shape; any layout.
  void add_adam(Tensor& param,
                Tensor& exp_avg,
                Tensor& exp_avg_sq,
                Tensor& max_exp_avg_sq,
                const Tensor& grad,
                const AdamScalars& s);
  // Queues the update of param (and momentum_buffer when momentum != 0) in
  // place. With `first_step`, momentum_buffer is only written (set to the
  // gradient after weight decay), as PyTorch's first momentum step clones it.
  void add_sgd(Tensor& param,
               Tensor& momentum_buffer,
               bool first_step,
               const Tensor& grad,
               const SGDScalars& s);
  // Runs the queued updates and empties the queue.
  void run();

 private:
  struct Update;
  // Whether no queued update writes memory that another one reads or writes.
  bool independent() const;
  std::vector<Update> updates_;
};

}  // namespace stride::optim::detail
