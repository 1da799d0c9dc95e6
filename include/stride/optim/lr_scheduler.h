// Learning-rate schedulers (torch.optim.lr_scheduler). A scheduler sets the
// "lr" of each of its optimizer's param groups from the group's base lr and
// an epoch counter:
//
//   Adam opt(params, AdamOptions(3e-4));
//   CosineAnnealingLR sched(opt, /*T_max=*/1000);   // sets lr for epoch 0
//   for (...) { ...; opt.step(); sched.step(); }     // step after the optimizer
//
// Note [Closed-form schedules]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// PyTorch's step() updates lr recursively from the group's current lr (its
// "chainable" get_lr); every stride scheduler instead computes lr from the
// base lr and last_epoch (PyTorch's _get_closed_form_lr). The sequences agree
// to rounding (tests/golden/optim.safetensors holds PyTorch's), but a closed
// form never accumulates rounding and resumes exactly from last_epoch. The
// difference shows only when two schedulers drive one optimizer at once:
// PyTorch multiplies their effects, here the last to step wins — compose with
// SequentialLR or LambdaLR instead.
//
// The base lr of a group is its options' initial_lr, set from lr by the
// first scheduler constructed on the optimizer (as PyTorch). A scheduler
// keeps a pointer to its optimizer, which must outlive it. The constructor
// performs the initial step: last_epoch becomes 0 and every group's lr is set.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "stride/optim/optimizer.h"

namespace stride::optim {

class LRScheduler {
 public:
  virtual ~LRScheduler() = default;
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;

  // Advances last_epoch by one and sets each group's lr.
  virtual void step();
  // The lr this scheduler set last, one per param group.
  const std::vector<double>& get_last_lr() const { return last_lr_; }
  int64_t last_epoch() const { return last_epoch_; }
  const std::vector<double>& base_lrs() const { return base_lrs_; }
  Optimizer& optimizer() const { return *optimizer_; }

  // "last_epoch", "base_lrs.<g>", "last_lr.<g>" and the schedule's
  // hyperparameters (e.g. "step_size", "gamma"); SequentialLR nests its
  // schedulers' states as "schedulers.<k>.<key>". Serialisable as JSON.
  virtual std::map<std::string, double> state_dict() const;
  // Restores a state_dict() of the same kind of scheduler. Throws ValueError
  // for an unknown key or a different number of param groups; the
  // optimizer's lr is left alone (it is restored with the optimizer's state).
  virtual void load_state_dict(const std::map<std::string, double>& state);

 protected:
  // Records the base lrs (setting each group's initial_lr if missing).
  // Derived constructors call initial_step() once their fields are set.
  explicit LRScheduler(Optimizer& optimizer);
  void initial_step();
  // Sets last_epoch to `epoch` and the groups' lr to lr_at(epoch) (and, in
  // schedules with more state, whatever else that epoch sets). SequentialLR
  // restarts a scheduler with step_to(0).
  virtual void step_to(int64_t epoch);
  // Sets last_epoch and the groups' lr to `lrs`, one per group.
  void apply(int64_t epoch, std::vector<double> lrs);
  // The closed-form lr of every group at `epoch` (>= 0).
  virtual std::vector<double> lr_at(int64_t epoch) const = 0;
  // The schedule's hyperparameters, for state_dict (read-only on load).
  virtual std::map<std::string, double> hyperparameters() const { return {}; }

  friend class SequentialLR;

 private:
  Optimizer* optimizer_;
  int64_t last_epoch_ = -1;
  std::vector<double> base_lrs_;
  std::vector<double> last_lr_;
};

// lr = base_lr * gamma^(epoch / step_size) (integer division).
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);

 protected:
  std::vector<double> lr_at(int64_t epoch) const override;
  std::map<std::string, double> hyperparameters() const override;

 private:
  int64_t step_size_;
  double gamma_;
};

// A linear ramp of the factor from start_factor to end_factor over
// total_iters epochs, then constant: the usual warm-up.
// lr = base_lr * (start + (end - start) * min(epoch, total_iters) / total_iters).
class LinearLR : public LRScheduler {
 public:
  LinearLR(Optimizer& optimizer,
           double start_factor = 1.0 / 3,
           double end_factor = 1.0,
           int64_t total_iters = 5);

 protected:
  std::vector<double> lr_at(int64_t epoch) const override;
  std::map<std::string, double> hyperparameters() const override;

 private:
  double start_factor_, end_factor_;
  int64_t total_iters_;
};

// lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2.
// Past T_max the cosine continues (back up to base_lr at 2 T_max), exactly
// as PyTorch's schedule.
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0);

 protected:
  std::vector<double> lr_at(int64_t epoch) const override;
  std::map<std::string, double> hyperparameters() const override;

 private:
  int64_t t_max_;
  double eta_min_;
};

// lr = base_lr * lr_lambda(epoch); one function for all groups, or one per
// group. The functions are not part of state_dict.
class LambdaLR : public LRScheduler {
 public:
  using Fn = std::function<double(int64_t)>;
  LambdaLR(Optimizer& optimizer, Fn lr_lambda);
  LambdaLR(Optimizer& optimizer, std::vector<Fn> lr_lambdas);

 protected:
  std::vector<double> lr_at(int64_t epoch) const override;

 private:
  std::vector<Fn> fns_;
};

// Runs schedulers[0] until epoch milestones[0], then schedulers[1] (restarted
// at its epoch 0) until milestones[1], and so on — PyTorch's SequentialLR.
// All schedulers must drive `optimizer`; milestones must increase and number
// one fewer than the schedulers. Typical: LinearLR warm-up, then cosine.
class SequentialLR : public LRScheduler {
 public:
  SequentialLR(Optimizer& optimizer,
               std::vector<std::shared_ptr<LRScheduler>> schedulers,
               std::vector<int64_t> milestones);
  void step() override;
  std::map<std::string, double> state_dict() const override;
  void load_state_dict(const std::map<std::string, double>& state) override;

 protected:
  std::vector<double> lr_at(int64_t epoch) const override;

 private:
  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
  std::vector<int64_t> milestones_;
};

// lr = base_lr * gamma^(number of milestones <= epoch); a milestone listed
// twice counts twice, as in PyTorch's Counter of milestones.
class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma = 0.1);

 protected:
  std::vector<double> lr_at(int64_t epoch) const override;
  std::map<std::string, double> hyperparameters() const override;

 private:
  std::vector<int64_t> milestones_;  // sorted
  double gamma_;
};

// lr = base_lr * gamma^epoch.
class ExponentialLR : public LRScheduler {
 public:
  ExponentialLR(Optimizer& optimizer, double gamma);

 protected:
  std::vector<double> lr_at(int64_t epoch) const override;
  std::map<std::string, double> hyperparameters() const override;

 private:
  double gamma_;
};

// lr = base_lr * factor until epoch total_iters, then base_lr.
class ConstantLR : public LRScheduler {
 public:
  ConstantLR(Optimizer& optimizer, double factor = 1.0 / 3, int64_t total_iters = 5);

 protected:
  std::vector<double> lr_at(int64_t epoch) const override;
  std::map<std::string, double> hyperparameters() const override;

 private:
  double factor_;
  int64_t total_iters_;
};

// SGDR (torch.optim.lr_scheduler.CosineAnnealingWarmRestarts): a cosine from
// base_lr down to eta_min over a cycle of T_i epochs, then a restart at
// base_lr; the first cycle lasts T_0 epochs and each next one T_mult times
// the last. With T_cur the epochs since the last restart,
//   lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2.
// step() advances T_cur by one; step(epoch) sets it from a (possibly
// fractional) epoch, e.g. epoch + batch / batches_per_epoch, exactly as
// PyTorch does in either case.
class CosineAnnealingWarmRestarts : public LRScheduler {
 public:
  CosineAnnealingWarmRestarts(Optimizer& optimizer,
                              int64_t T_0,
                              int64_t T_mult = 1,
                              double eta_min = 0);
  void step() override;
  void step(double epoch);
  double T_cur() const { return t_cur_; }
  double T_i() const { return t_i_; }
  // Adds "T_cur" and "T_i", which load_state_dict restores.
  std::map<std::string, double> state_dict() const override;
  void load_state_dict(const std::map<std::string, double>& state) override;

 protected:
  void step_to(int64_t epoch) override;
  std::vector<double> lr_at(int64_t epoch) const override;
  std::map<std::string, double> hyperparameters() const override;

 private:
  // (T_cur, T_i) at `epoch`, in PyTorch's closed form.
  std::pair<double, double> cycle_at(double epoch) const;
  std::vector<double> lrs(double t_cur, double t_i) const;

  int64_t t_0_, t_mult_;
  double eta_min_;
  double t_cur_ = -1, t_i_;
};

enum class AnnealStrategy { kCos, kLinear };

// OneCycleLR's hyperparameters besides max_lr and total_steps, with
// PyTorch's defaults.
struct OneCycleLROptions {
  STRIDE_OPTIM_ARG(double, pct_start) = 0.3;
  STRIDE_OPTIM_ARG(AnnealStrategy, anneal_strategy) = AnnealStrategy::kCos;
  STRIDE_OPTIM_ARG(bool, cycle_momentum) = true;
  STRIDE_OPTIM_ARG(double, base_momentum) = 0.85;
  STRIDE_OPTIM_ARG(double, max_momentum) = 0.95;
  STRIDE_OPTIM_ARG(double, div_factor) = 25;
  STRIDE_OPTIM_ARG(double, final_div_factor) = 1e4;
  STRIDE_OPTIM_ARG(bool, three_phase) = false;
};

// The 1cycle policy (torch.optim.lr_scheduler.OneCycleLR): lr rises from
// initial_lr = max_lr / div_factor to max_lr over the first pct_start of
// total_steps, then anneals to initial_lr / final_div_factor (with
// three_phase: back down to initial_lr by 2 pct_start, then to the minimum),
// by a cosine or a straight line. With cycle_momentum the momentum (SGD's
// momentum, Adam's beta1) moves the opposite way between max_momentum and
// base_momentum. max_lrs holds one value for every group, or one per group.
// Sets every group's initial_lr (overriding an earlier scheduler's); stepping
// past total_steps throws ValueError.
class OneCycleLR : public LRScheduler {
 public:
  OneCycleLR(Optimizer& optimizer,
             std::vector<double> max_lrs,
             int64_t total_steps,
             const OneCycleLROptions& options = OneCycleLROptions());

 protected:
  void step_to(int64_t epoch) override;
  std::vector<double> lr_at(int64_t epoch) const override;
  std::map<std::string, double> hyperparameters() const override;

 private:
  enum class LrPoint { kInitial, kMax, kMin };
  enum class MomentumPoint { kBase, kMax };
  struct Phase {
    double end_step;
    LrPoint lr_start, lr_end;
    MomentumPoint momentum_start, momentum_end;
  };
  // Each group's initial_lr set to its max_lr / div_factor; returns optimizer.
  static Optimizer& set_initial_lrs(Optimizer& optimizer,
                                    const std::vector<double>& max_lrs,
                                    double div_factor);
  // The phase holding `epoch` and the fraction of it done; throws past
  // total_steps.
  std::pair<const Phase*, double> locate(int64_t epoch) const;
  double anneal(double start, double end, double pct) const;
  double lr_point(LrPoint point, size_t group) const;

  std::vector<double> max_lrs_;
  int64_t total_steps_;
  OneCycleLROptions options_;
  std::vector<Phase> phases_;
  // The momentum's key in the groups' options: "beta1" or "momentum"; empty
  // without cycle_momentum.
  std::string momentum_key_;
};

enum class PlateauMode { kMin, kMax };
enum class ThresholdMode { kRel, kAbs };

// ReduceLROnPlateau's hyperparameters, with PyTorch's defaults. min_lrs
// holds one floor for every group, or one per group.
struct ReduceLROnPlateauOptions {
  STRIDE_OPTIM_ARG(PlateauMode, mode) = PlateauMode::kMin;
  STRIDE_OPTIM_ARG(double, factor) = 0.1;
  STRIDE_OPTIM_ARG(int64_t, patience) = 10;
  STRIDE_OPTIM_ARG(double, threshold) = 1e-4;
  STRIDE_OPTIM_ARG(ThresholdMode, threshold_mode) = ThresholdMode::kRel;
  STRIDE_OPTIM_ARG(int64_t, cooldown) = 0;
  STRIDE_OPTIM_ARG(std::vector<double>, min_lrs) = {0.0};
  STRIDE_OPTIM_ARG(double, eps) = 1e-8;
};

// torch.optim.lr_scheduler.ReduceLROnPlateau: multiplies every group's lr by
// factor (not below its min_lr) once the metric passed to step() has not
// improved for more than `patience` epochs, then waits `cooldown` epochs
// before counting again. "Improved" is a drop below best * (1 - threshold)
// (mode kMin, threshold kRel), best - threshold (kAbs), or a rise above
// best * (1 + threshold) / best + threshold (kMax). A change of lr smaller
// than eps is skipped. Unlike the closed-form schedules it reads and writes
// the groups' current lr.
class ReduceLROnPlateau {
 public:
  explicit ReduceLROnPlateau(Optimizer& optimizer,
                             const ReduceLROnPlateauOptions& options = ReduceLROnPlateauOptions());
  ReduceLROnPlateau(const ReduceLROnPlateau&) = delete;
  ReduceLROnPlateau& operator=(const ReduceLROnPlateau&) = delete;

  // Records one epoch's metric (e.g. the validation loss) and reduces the lr
  // when it has plateaued.
  void step(double metric);
  const std::vector<double>& get_last_lr() const { return last_lr_; }
  int64_t last_epoch() const { return last_epoch_; }
  double best() const { return best_; }
  int64_t num_bad_epochs() const { return num_bad_epochs_; }
  bool in_cooldown() const { return cooldown_counter_ > 0; }

  // "last_epoch", "best", "num_bad_epochs", "cooldown_counter" and
  // "last_lr.<g>".
  std::map<std::string, double> state_dict() const;
  // Restores a state_dict(); throws ValueError for a missing or unknown key.
  void load_state_dict(const std::map<std::string, double>& state);

 private:
  bool is_better(double metric) const;
  void reduce_lr();
  std::vector<double> group_lrs() const;

  Optimizer* optimizer_;
  ReduceLROnPlateauOptions options_;
  std::vector<double> min_lrs_;  // one per group
  double best_;
  int64_t num_bad_epochs_ = 0;
  int64_t cooldown_counter_ = 0;
  int64_t last_epoch_ = 0;
  std::vector<double> last_lr_;
};

// Linear warm-up then cosine decay to a floor, as in the Llama papers: with
// w = warmup_steps, T = total_steps and r = min_lr_ratio,
//   epoch < w:       lr = base_lr * (epoch + 1) / w   (reaches base_lr at w - 1)
//   w <= epoch <= T: lr = base_lr * (r + (1 - r) * (1 + cos(pi * (epoch - w) / (T - w))) / 2)
//   epoch > T:       lr = base_lr * r
// Requires 0 <= w < T and 0 <= r <= 1.
class WarmupCosineLR : public LRScheduler {
 public:
  WarmupCosineLR(Optimizer& optimizer,
                 int64_t warmup_steps,
                 int64_t total_steps,
                 double min_lr_ratio = 0.1);
  // The lr multiplier at `epoch`.
  double factor(int64_t epoch) const;

 protected:
  std::vector<double> lr_at(int64_t epoch) const override;
  std::map<std::string, double> hyperparameters() const override;

 private:
  int64_t warmup_, total_;
  double min_ratio_;
};

inline WarmupCosineLR warmup_cosine(Optimizer& optimizer,
                                    int64_t warmup_steps,
                                    int64_t total_steps,
                                    double min_lr_ratio = 0.1) {
  return WarmupCosineLR(optimizer, warmup_steps, total_steps, min_lr_ratio);
}

}  // namespace stride::optim
