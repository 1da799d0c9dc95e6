// A model described without building it in memory: its parameters and the
// memory a training step needs, measured by running the step on the meta
// device (tensors with shapes, dtypes and strides but no memory).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lm/config.h"
#include "stride/checkpoint.h"
#include "stride/shape.h"

namespace stride::lm {

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
// at (train.batch_size, model.context) there (or `batch` sequences of
// `length` tokens where given): no parameter or activation memory is
// allocated, and a 7B-parameter model takes well under a second. The byte
// counts are those of the tensors the CPU would allocate, without its
// allocator's rounding.
ModelInspection inspect_model(const RunConfig& config, int64_t batch = 0, int64_t length = 0);

// What a command runs on a model, for estimate_memory: the model alone; a
// training step (inspect_model's step_peak_bytes); a no-grad forward, as
// eval's windows and the doctor's checks run; or generation, whose KV cache
// holds `length` positions of one sequence beside a no-grad forward over
// them. `batch` sequences of `length` tokens; 0 takes the config's
// train.batch_size and model.context.
struct Workload {
  enum class Kind { Model, Training, Evaluation, Generation };
  Kind kind = Kind::Model;
  int64_t batch = 0;
  int64_t length = 0;

  // The sequences and their tokens it runs at: batch and length where
  // given, else train.batch_size (generation: one sequence) and
  // model.context.
  int64_t batch_of(const RunConfig& config) const;
  int64_t length_of(const RunConfig& config) const;
};

// What a model of `config` needs, without building it at its size:
// measured on meta at one and two layers and extrapolated to model.n_layers
// (layers are alike). On meta nothing is computed or allocated in
// proportion to the sizes (a context of 2^40 costs what one of 16 does), so
// a config of any size, a hostile one read from a file included, costs two
// small meta builds and runs. Sums saturate at UINT64_MAX. A config whose
// tensors would hold more elements than int64 counts is a ConfigError
// naming its sizes.
struct MemoryEstimate {
  uint64_t model_bytes = 0;    // parameters and buffers, as built
  uint64_t state_tensors = 0;  // entries of its state_dict
  uint64_t state_bytes = 0;    // their bytes, as a checkpoint holds them
  uint64_t peak_bytes = 0;     // the most the workload holds at once, model included
};
MemoryEstimate estimate_memory(const RunConfig& config, const Workload& workload = {});

// A model is built from a checkpoint's config before the checkpoint's
// tensors are restored into it. This checks first that the config describes
// the tensors the checkpoint holds (their count and bytes) and that the
// model fits in the memory available: an IOError naming `path` otherwise,
// where an edited n_layers of 10^6 would exhaust memory building the model.
void check_config_fits_checkpoint(const RunConfig& config,
                                  const CheckpointState& state,
                                  const std::string& path);

}  // namespace stride::lm
