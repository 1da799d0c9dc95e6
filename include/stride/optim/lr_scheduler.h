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
  // Sets last_epoch to `epoch` and the groups' lr to lr_at(epoch).
  void step_to(int64_t epoch);
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
