// Fused optimizer steps: one TensorIter pass per parameter that reads the
// gradient and updates the parameter and its state buffers together, instead
// of the six to eight passes of the op-by-op form, the passes of a step's
// parameters run in one parallel region. The kernels are the backends'
// (kernels::adam_step and sgd_step in backends/kernels.h) and round exactly as
// the op-by-op reference path does (Note [Fused steps round like the ops] in
// backends/cpu/optim_step.cpp), so the two give bit-identical results; the
// tests compare them on every layout.
#pragma once

#include <vector>

#include "backends/kernels.h"
#include "stride/tensor.h"

namespace stride::optim::detail {

// True when the fused kernels handle `param` with `grad`: both on one device
// whose backend has them, float32 or float64, one dtype.
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
                const kernels::AdamStepScalars& s);
  // Queues the update of param (and momentum_buffer when momentum != 0) in
  // place. With `first_step`, momentum_buffer is only written (set to the
  // gradient after weight decay), as PyTorch's first momentum step clones it.
  void add_sgd(Tensor& param,
               Tensor& momentum_buffer,
               bool first_step,
               const Tensor& grad,
               const kernels::SGDStepScalars& s);
  // Runs the queued updates and empties the queue.
  void run();

 private:
  struct Update;
  // Whether no queued update writes memory that another one reads or writes.
  bool independent() const;
  std::vector<Update> updates_;
};

}  // namespace stride::optim::detail
