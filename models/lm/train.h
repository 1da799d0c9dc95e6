// Training and evaluation loops shared by `stride train`, `stride ladder`,
// the tests and the benchmarks.
//
// One step is the article's "epoch": one random batch of B windows of T =
// context tokens from the train split, forward, backward, (clip), optimizer
// step, scheduler step.
#pragma once

#include <cstdint>
#include <memory>

#include "lm/config.h"
#include "lm/language_model.h"
#include "stride/checkpoint.h"
#include "stride/data/text.h"
#include "stride/distributed/ddp.h"
#include "stride/distributed/zero.h"
#include "stride/generator.h"
#include "stride/optim/lr_scheduler.h"
#include "stride/optim/optimizer.h"

namespace stride::lm {

// The optimizer a TrainConfig asks for. With weight decay, only matrices
// (dim >= 2: linear and embedding weights) decay; norm gains, biases and the
// article's SwiGLU beta do not, as in Llama's training recipe.
std::unique_ptr<optim::Optimizer> make_optimizer(nn::Module& model, const TrainConfig& config);
// The schedule, or null for "constant".
std::unique_ptr<optim::LRScheduler> make_scheduler(optim::Optimizer& optimizer,
                                                   const TrainConfig& config);

// The article's evaluate_loss for one split: the mean loss over `batches`
// random batches (B, context), drawn with `gen`, in eval mode without grad.
// The model's mode is restored.
double estimate_loss(LanguageModel& model,
                     const data::TokenDataset& data,
                     data::Split split,
                     int64_t batches,
                     int64_t batch_size,
                     Generator& gen);

struct SplitLoss {
  double loss = 0;        // mean over every counted position
  int64_t positions = 0;  // targets counted
  // The loss at the last position of the full windows alone: each predicts
  // from a whole context, as generation does once it has context tokens.
  double last_position_loss = 0;
  int64_t last_positions = 0;
};

// The honest loss: every position of the split predicted once, from
// non-overlapping windows of `context` tokens (data::SequentialWindows), in
// eval mode without grad. The final window, when shorter, runs at its own
// length: padding it would feed a model that reads the future a token that
// is not in the text. With prefix_only, the logits of position t come
// from a forward pass over the window's tokens 0..t alone, so a model that
// reads the future (the article's RMSNorm) is scored as it generates: the
// future does not exist at sampling time. max_windows > 0 evaluates only the
// first windows (for quick runs). context > 0 runs windows of that many
// tokens (at most the model's context) instead of the model's context.
SplitLoss evaluate_split(LanguageModel& model,
                         const data::TokenDataset& data,
                         data::Split split,
                         int64_t batch_size,
                         bool prefix_only = false,
                         int64_t max_windows = 0,
                         int64_t context = 0);

struct StepResult {
  int64_t step = 0;  // steps done, counting this one
  double loss = 0;
  double lr = 0;
  double grad_norm = 0;  // before clipping
};

// Note [Data-parallel steps]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~
// When distributed::init() has joined a world of several processes (or
// config.deterministic_shards is set), the Trainer wraps the model in
// DistributedDataParallel. Every rank draws the same global batch from the
// same batch generator and trains on its rows (distributed::shard_rows);
// the reduced gradients are the global batch's, so clipping, the optimizer
// and the schedule see the same numbers on every rank, and the weights stay
// equal without being broadcast again. The step's loss is the mean of every
// shard's. Checkpoints hold nothing that depends on the world size, so a run
// resumes at any other.
class Trainer {
 public:
  // Builds the optimizer and schedule for `model`; batches are drawn from
  // the train split of `data` with a generator seeded by config.seed.
  Trainer(std::shared_ptr<LanguageModel> model,
          const TrainConfig& config,
          const data::TokenDataset& data);

  StepResult step();
  // The article's evaluation (estimate_loss on train and val) with its own
  // generator, so evaluating never shifts the training batches.
  std::pair<double, double> estimate_train_val();

  int64_t steps_done() const { return steps_; }
  LanguageModel& model() { return *model_; }
  optim::Optimizer& optimizer() { return *optimizer_; }
  optim::LRScheduler* scheduler() { return scheduler_.get(); }
  const TrainConfig& config() const { return config_; }
  // The data-parallel wrapper, or null in a single-process run.
  const distributed::DistributedDataParallel* ddp() const { return ddp_.get(); }
  // The sharded optimizer state (config.zero_stage 1), or null.
  const distributed::ShardedOptimizer* zero() const { return zero_.get(); }

  // Everything needed to resume exactly: model, optimizer, schedule, step,
  // the default generator (dropout) and the batch and eval generators. With
  // a sharded optimizer state both are collective (every rank calls them);
  // the checkpoint holds the full state either way.
  CheckpointState capture(const std::string& config_json) const;
  void restore(const CheckpointState& state);

 private:
  std::shared_ptr<LanguageModel> model_;
  TrainConfig config_;
  const data::TokenDataset& data_;
  // The loss of the step's batch after its backward; the gradients are the
  // whole batch's (reduced across ranks when data-parallel).
  double backward_local(const Tensor& x, const Tensor& y);
  double backward_data_parallel(const Tensor& x, const Tensor& y);

  std::unique_ptr<optim::Optimizer> optimizer_;
  std::unique_ptr<optim::LRScheduler> scheduler_;
  std::unique_ptr<distributed::DistributedDataParallel> ddp_;
  std::unique_ptr<distributed::ShardedOptimizer> zero_;
  std::vector<Tensor> params_;
  Generator batch_gen_, eval_gen_;
  int64_t steps_ = 0;
};

}  // namespace stride::lm
