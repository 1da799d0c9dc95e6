#include "lm/train.h"

#include <algorithm>
#include <limits>

#include "lm/registry.h"
#include "stride/autocast.h"
#include "stride/autograd.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"
#include "stride/optim/adam.h"
#include "stride/optim/clip_grad.h"

namespace stride::lm {

namespace F = nn::functional;

namespace {

// Adam or AdamW with weight decay on the decay group only: the defaults, which
// the no-decay group takes, have none.
template <class Opt>
std::unique_ptr<optim::Optimizer> make_adam(std::vector<Tensor> decay,
                                            std::vector<Tensor> no_decay,
                                            const TrainConfig& c) {
  const optim::AdamOptions defaults =
      optim::AdamOptions(c.lr).betas({c.beta1, c.beta2}).eps(c.eps).weight_decay(0.0);
  std::vector<optim::ParamGroup> groups;
  if (c.weight_decay > 0) {
    groups.emplace_back(std::move(decay),
                        optim::AdamOptions(defaults).weight_decay(c.weight_decay));
    if (!no_decay.empty()) groups.emplace_back(std::move(no_decay));
  } else {
    decay.insert(decay.end(), no_decay.begin(), no_decay.end());
    groups.emplace_back(std::move(decay));
  }
  return std::make_unique<Opt>(std::move(groups), defaults);
}

}  // namespace

std::unique_ptr<optim::Optimizer> make_optimizer(nn::Module& model, const TrainConfig& c) {
  std::vector<Tensor> decay, no_decay;
  for (const Tensor& p : model.parameters()) {
    if (!p.requires_grad()) continue;
    (p.dim() >= 2 ? decay : no_decay).push_back(p);
  }
  if (c.optimizer == "adamw") {
    return make_adam<optim::AdamW>(std::move(decay), std::move(no_decay), c);
  }
  return make_adam<optim::Adam>(std::move(decay), std::move(no_decay), c);
}

std::unique_ptr<optim::LRScheduler> make_scheduler(optim::Optimizer& optimizer,
                                                   const TrainConfig& c) {
  if (c.schedule != "cosine") return nullptr;
  return std::make_unique<optim::WarmupCosineLR>(
      optimizer, c.warmup_steps, std::max<int64_t>(c.schedule_steps(), c.warmup_steps + 1),
      c.min_lr_ratio);
}

double estimate_loss(LanguageModel& model,
                     const data::TokenDataset& data,
                     data::Split split,
                     int64_t batches,
                     int64_t batch_size,
                     Generator& gen) {
  EvalScope eval(model);
  NoGradGuard no_grad;
  double total = 0;
  for (int64_t i = 0; i < batches; ++i) {
    auto [x, y] = data.random_batch(split, batch_size, model.config().context, &gen);
    total += model.loss(x, y).item<double>();
  }
  return total / double(batches);
}

namespace {

// The logits of windows x (b, L): one forward pass, or with prefix_only one
// per position t over tokens 0..t alone.
Tensor window_logits(LanguageModel& model, const Tensor& x, bool prefix_only) {
  if (!prefix_only) return model.forward(x);
  std::vector<Tensor> per_position;
  for (int64_t t = 0; t < x.size(1); ++t) {
    per_position.push_back(model.forward(x.narrow(1, 0, t + 1).contiguous()).select(1, t));
  }
  return stack(per_position, 1);
}

double summed_loss(const Tensor& logits, const Tensor& targets) {
  return F::cross_entropy(logits.reshape({-1, logits.size(-1)}), targets.reshape({-1}),
                          data::kIgnoreIndex, F::Reduction::Sum)
      .item<double>();
}

}  // namespace

SplitLoss evaluate_split(LanguageModel& model,
                         const data::TokenDataset& data,
                         data::Split split,
                         int64_t batch_size,
                         bool prefix_only,
                         int64_t max_windows,
                         int64_t context) {
  EvalScope eval(model);
  NoGradGuard no_grad;
  const int64_t T =
      context > 0 ? std::min(context, model.config().context) : model.config().context;
  const data::SequentialWindows windows = data.sequential_windows(split, T, data::Tail::Shorter);
  const int64_t n = max_windows > 0 ? std::min(max_windows, windows.size()) : windows.size();
  SplitLoss r;
  double total = 0, last_total = 0;
  std::vector<Tensor> xs, ys;
  // Runs the windows gathered so far: all of one length.
  const auto flush = [&] {
    if (xs.empty()) return;
    const Tensor x = stack(xs), y = stack(ys);  // (b, L)
    const Tensor logits = window_logits(model, x, prefix_only);
    total += summed_loss(logits, y);
    r.positions += y.numel();
    if (x.size(1) == T) {
      last_total += summed_loss(logits.select(1, T - 1), y.select(1, T - 1));
      r.last_positions += y.size(0);
    }
    xs.clear();
    ys.clear();
  };
  for (int64_t w = 0; w < n; ++w) {
    auto [x, y] = windows.get(w);
    if (!xs.empty() && (x.size(0) != xs.front().size(0) || int64_t(xs.size()) == batch_size)) {
      flush();
    }
    xs.push_back(x);
    ys.push_back(y);
  }
  flush();
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  r.loss = r.positions > 0 ? total / double(r.positions) : kNaN;
  r.last_position_loss = r.last_positions > 0 ? last_total / double(r.last_positions) : kNaN;
  return r;
}

Trainer::Trainer(std::shared_ptr<LanguageModel> model,
                 const TrainConfig& config,
                 const data::TokenDataset& data)
    : model_(std::move(model)),
      config_(config),
      data_(data),
      optimizer_(make_optimizer(*model_, config)),
      scheduler_(make_scheduler(*optimizer_, config)),
      params_(optimizer_->parameters()),
      batch_gen_(Generator(config.seed).fork(1)),
      eval_gen_(Generator(config.seed).fork(2)) {
  require_causal(model_->config(), "train");
  const int shards = int(config.deterministic_shards);
  if (shards > 0) distributed::init();  // a world of one without a launcher
  if (distributed::is_initialized() && (distributed::world_size() > 1 || shards > 0)) {
    const int world = distributed::world_size();
    if (shards == 0 && config.batch_size % world != 0) {
      throw ConfigError("train.batch_size (" + std::to_string(config.batch_size) +
                        ", the global batch) must divide evenly among the " +
                        std::to_string(world) + " processes");
    }
    if (shards > 0 && shards % world != 0) {
      throw ConfigError("train.deterministic_shards (" + std::to_string(shards) +
                        ") must be a multiple of the number of processes (" +
                        std::to_string(world) + ")");
    }
    ddp_ = std::make_unique<distributed::DistributedDataParallel>(
        model_,
        distributed::DDPOptions{.deterministic_shards = shards, .check_initial_parameters = true});
  }
  if (config.zero_stage == 1) {
    distributed::init();
    zero_ = std::make_unique<distributed::ShardedOptimizer>(*optimizer_);
  }
}

double Trainer::backward_local(const Tensor& x, const Tensor& y) {
  Tensor loss;
  {
    AutocastGuard autocast(config_.precision == "bf16");
    loss = model_->loss(x, y);
  }
  loss.backward();
  return loss.item<double>();
}

// Note [Data-parallel steps].
double Trainer::backward_data_parallel(const Tensor& x, const Tensor& y) {
  distributed::ProcessGroup& group = ddp_->group();
  const int shards = int(config_.deterministic_shards);
  const int local = ddp_->local_shards();
  Tensor losses = empty({local}, TensorOptions(kFloat64));
  for (int k = 0; k < local; ++k) {
    const auto [b, e] = distributed::shard_rows(x.size(0), group.rank(), group.size(), shards, k);
    losses[k].fill_(backward_local(x.slice(0, b, e), y.slice(0, b, e)));
  }
  Tensor all = empty({local * group.size()}, TensorOptions(kFloat64));
  group.all_gather(all, losses).wait();
  return all.mean().item<double>();
}

StepResult Trainer::step() {
  model_->train();
  auto [x, y] = data_.random_batch(data::Split::Train, config_.batch_size, model_->config().context,
                                   &batch_gen_);
  optimizer_->zero_grad();
  const double loss = ddp_ ? backward_data_parallel(x, y) : backward_local(x, y);
  // The norm is always measured (it is logged); clipping to infinity leaves
  // the gradients alone.
  const double max_norm =
      config_.grad_clip > 0 ? config_.grad_clip : std::numeric_limits<double>::infinity();
  StepResult r;
  r.grad_norm = nn::utils::clip_grad_norm_(params_, max_norm).item<double>();
  r.lr = optimizer_->param_groups().front().lr();
  if (zero_) {
    zero_->step();
  } else {
    optimizer_->step();
  }
  if (scheduler_) scheduler_->step();
  r.loss = loss;
  r.step = ++steps_;
  return r;
}

std::pair<double, double> Trainer::estimate_train_val() {
  const int64_t B = config_.batch_size, n = config_.eval_batches;
  AutocastGuard autocast(config_.precision == "bf16");
  const double train = estimate_loss(*model_, data_, data::Split::Train, n, B, eval_gen_);
  const double val = estimate_loss(*model_, data_, data::Split::Val, n, B, eval_gen_);
  return {train, val};
}

CheckpointState Trainer::capture(const std::string& config_json) const {
  CheckpointState state = capture_checkpoint(*model_, zero_ ? nullptr : optimizer_.get(),
                                             scheduler_.get(), steps_, config_json);
  if (zero_) state.optimizer = zero_->state_dict();
  state.generators["batches"] = batch_gen_.get_state();
  state.generators["eval"] = eval_gen_.get_state();
  return state;
}

void Trainer::restore(const CheckpointState& state) {
  if (zero_) {
    if (!state.optimizer)
      throw ValueError("[Trainer::restore] the checkpoint holds no optimizer state");
    zero_->load_state_dict(*state.optimizer);
  }
  restore_checkpoint(state, *model_, zero_ ? nullptr : optimizer_.get(), scheduler_.get());
  if (ddp_) ddp_->check_parameters_identical();  // every rank read the same checkpoint
  if (auto it = state.generators.find("batches"); it != state.generators.end()) {
    batch_gen_.set_state(it->second);
  }
  if (auto it = state.generators.find("eval"); it != state.generators.end()) {
    eval_gen_.set_state(it->second);
  }
  steps_ = state.step;
}

}  // namespace stride::lm
