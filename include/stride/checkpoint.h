// Checkpoints: everything a training run needs to resume exactly — model
// parameters and buffers, optimizer state, scheduler state, random generator
// states, the step, and the run's JSON config — in one safetensors file that
// PyTorch's and Hugging Face's safetensors readers open.
//
// Layout: tensors "model.<name>" (the module's state_dict) and
// "optimizer.<key>" (its OptimizerState tensors); "__metadata__" holds
// "stride.format" = "checkpoint-v1", "stride.step", "stride.config" (the JSON
// config), "stride.optimizer", "stride.scheduler", "stride.rng" (JSON) and
// "stride.crc32" (each tensor's CRC-32, checked on load: damaged bytes are
// an IOError naming the tensor). Saves are atomic (see io.h): a crash
// mid-save leaves the previous file.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "stride/generator.h"
#include "stride/nn/module.h"
#include "stride/optim/lr_scheduler.h"
#include "stride/optim/optimizer.h"

namespace stride {

struct CheckpointState {
  nn::StateDict model;
  std::optional<optim::OptimizerState> optimizer;
  std::map<std::string, double> scheduler;  // empty: no scheduler
  // "default" is the process-wide generator; callers may add their own
  // (e.g. "data" for a loader's shuffling stream).
  std::map<std::string, GeneratorState> generators;
  int64_t step = 0;
  std::string config = "{}";  // JSON text
};

void save_checkpoint(const std::string& path, const CheckpointState& state);
// Throws IOError for a file that is not a stride checkpoint.
CheckpointState load_checkpoint(const std::string& path);

// Snapshots a run (the default generator included).
CheckpointState capture_checkpoint(const nn::Module& model,
                                   const optim::Optimizer* optimizer,
                                   const optim::LRScheduler* scheduler,
                                   int64_t step,
                                   std::string config = "{}");
// Restores a snapshot into live objects (strict: every key must match; a
// mismatch throws naming the keys), and the default generator.
void restore_checkpoint(const CheckpointState& state,
                        nn::Module& model,
                        optim::Optimizer* optimizer,
                        optim::LRScheduler* scheduler);

}  // namespace stride
