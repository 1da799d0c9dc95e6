// A model described without building it in memory: its parameters and the
// memory a training step needs, measured by running the step on the meta
// device (tensors with shapes, dtypes and strides but no memory).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "llama/config.h"
#include "stride/shape.h"

namespace stride::llama {

struct ParameterInfo {
  std::string name;
  DimVector shape;
  int64_t numel = 0;
};

struct ModelInspection {
  std::vector<ParameterInfo> parameters;  // named_parameters() order
  int64_t parameter_count = 0;            // each shared tensor once
  // Bytes of one training step at the config's batch and context (float32):
  size_t parameter_bytes = 0;
  size_t gradient_bytes = 0;
  size_t optimizer_bytes = 0;   // Adam's exp_avg and exp_avg_sq
  size_t activation_bytes = 0;  // saved by the forward for the backward
  // The most held at once: parameters and optimizer state, plus the peak of
  // the forward and backward (activations, gradients, temporaries).
  size_t step_peak_bytes = 0;
};

// Builds the model of `config` on meta and runs forward, loss and backward
// at (train.batch_size, model.context) there: no parameter or activation
// memory is allocated, and a 7B-parameter model takes well under a second.
// The byte counts are those of the tensors the CPU would allocate, without
// its allocator's rounding.
ModelInspection inspect_model(const RunConfig& config);

}  // namespace stride::llama
