#include "stride/optim/lr_scheduler.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/check.h"

namespace stride::optim {

// ---- LRScheduler ----

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(&optimizer) {
  for (ParamGroup& group : optimizer.param_groups()) {
    OptimizerOptions& o = group.options();
    if (!o.initial_lr()) o.set_initial_lr(o.lr());
    base_lrs_.push_back(*o.initial_lr());
  }
}

void LRScheduler::initial_step() {
  step();
}

void LRScheduler::step() {
  step_to(last_epoch_ + 1);
}

void LRScheduler::step_to(int64_t epoch) {
  std::vector<ParamGroup>& groups = optimizer_->param_groups();
  STRIDE_CHECK(groups.size() == base_lrs_.size(), ValueError, "[LRScheduler] the optimizer has ",
               groups.size(), " param groups but the scheduler was made for ", base_lrs_.size(),
               ". Hint: create the scheduler after adding every param group.");
  last_epoch_ = epoch;
  last_lr_ = lr_at(epoch);
  for (size_t g = 0; g < groups.size(); ++g) groups[g].set_lr(last_lr_[g]);
}

std::map<std::string, double> LRScheduler::state_dict() const {
  std::map<std::string, double> out = hyperparameters();
  out["last_epoch"] = double(last_epoch_);
  for (size_t g = 0; g < base_lrs_.size(); ++g) {
    out["base_lrs." + std::to_string(g)] = base_lrs_[g];
    if (g < last_lr_.size()) out["last_lr." + std::to_string(g)] = last_lr_[g];
  }
  return out;
}

void LRScheduler::load_state_dict(const std::map<std::string, double>& state) {
  const size_t n = base_lrs_.size();
  const std::map<std::string, double> hyper = hyperparameters();
  std::vector<double> base(n), last(n);
  size_t nbase = 0, nlast = 0;
  bool has_epoch = false;
  for (const auto& entry : state) {
    const std::string& key = entry.first;
    const double value = entry.second;
    auto group_of = [&](const std::string& prefix, size_t& g) {
      if (key.rfind(prefix, 0) != 0) return false;
      const std::string digits = key.substr(prefix.size());
      STRIDE_CHECK(!digits.empty() && digits.size() < 10 &&
                       std::all_of(digits.begin(), digits.end(), ::isdigit),
                   ValueError, "[LRScheduler::load_state_dict] malformed key '", key, "'.");
      g = size_t(std::stoul(digits));
      STRIDE_CHECK(g < n, ValueError, "[LRScheduler::load_state_dict] the state has ", key,
                   " but the optimizer has ", n,
                   " param group(s). Hint: load it into a scheduler over the same optimizer "
                   "layout.");
      return true;
    };
    size_t g = 0;
    if (key == "last_epoch") {
      has_epoch = true;
    } else if (group_of("base_lrs.", g)) {
      base[g] = value;
      ++nbase;
    } else if (group_of("last_lr.", g)) {
      last[g] = value;
      ++nlast;
    } else {
      // Hyperparameters are informational: the constructor's values stay.
      STRIDE_CHECK(hyper.count(key), ValueError, "[LRScheduler::load_state_dict] unknown key '",
                   key, "'. Hint: load a state saved by the same kind of scheduler.");
    }
  }
  STRIDE_CHECK(has_epoch && nbase == n && (nlast == n || nlast == 0), ValueError,
               "[LRScheduler::load_state_dict] the state needs last_epoch and base_lrs.0 .. ",
               n - 1, " (one per param group); got ", nbase, " base lr(s)",
               has_epoch ? "" : " and no last_epoch", ".");
  last_epoch_ = int64_t(state.at("last_epoch"));
  base_lrs_ = std::move(base);
  if (nlast == n) last_lr_ = std::move(last);
}

// ---- StepLR ----

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  STRIDE_CHECK(step_size > 0, ValueError, "[StepLR] step_size must be > 0; got ", step_size, ".");
  initial_step();
}

std::vector<double> StepLR::lr_at(int64_t epoch) const {
  std::vector<double> out;
  for (double base : base_lrs()) out.push_back(base * std::pow(gamma_, double(epoch / step_size_)));
  return out;
}

std::map<std::string, double> StepLR::hyperparameters() const {
  return {{"step_size", double(step_size_)}, {"gamma", gamma_}};
}

// ---- LinearLR ----

LinearLR::LinearLR(Optimizer& optimizer,
                   double start_factor,
                   double end_factor,
                   int64_t total_iters)
    : LRScheduler(optimizer),
      start_factor_(start_factor),
      end_factor_(end_factor),
      total_iters_(total_iters) {
  STRIDE_CHECK(start_factor >= 0 && start_factor <= 1, ValueError,
               "[LinearLR] start_factor must be in [0, 1]; got ", start_factor, ".");
  STRIDE_CHECK(end_factor >= 0 && end_factor <= 1, ValueError,
               "[LinearLR] end_factor must be in [0, 1]; got ", end_factor, ".");
  STRIDE_CHECK(total_iters > 0, ValueError, "[LinearLR] total_iters must be > 0; got ", total_iters,
               ".");
  initial_step();
}

std::vector<double> LinearLR::lr_at(int64_t epoch) const {
  std::vector<double> out;
  for (double base : base_lrs()) {
    out.push_back(base * (start_factor_ + (end_factor_ - start_factor_) *
                                              double(std::min(total_iters_, epoch)) /
                                              double(total_iters_)));
  }
  return out;
}

std::map<std::string, double> LinearLR::hyperparameters() const {
  return {{"start_factor", start_factor_},
          {"end_factor", end_factor_},
          {"total_iters", double(total_iters_)}};
}

// ---- CosineAnnealingLR ----

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min)
    : LRScheduler(optimizer), t_max_(T_max), eta_min_(eta_min) {
  STRIDE_CHECK(T_max > 0, ValueError, "[CosineAnnealingLR] T_max must be > 0; got ", T_max, ".");
  initial_step();
}

std::vector<double> CosineAnnealingLR::lr_at(int64_t epoch) const {
  std::vector<double> out;
  for (double base : base_lrs()) {
    out.push_back(eta_min_ + (base - eta_min_) *
                                 (1 + std::cos(std::numbers::pi * double(epoch) / double(t_max_))) /
                                 2);
  }
  return out;
}

std::map<std::string, double> CosineAnnealingLR::hyperparameters() const {
  return {{"T_max", double(t_max_)}, {"eta_min", eta_min_}};
}

// ---- LambdaLR ----

LambdaLR::LambdaLR(Optimizer& optimizer, Fn lr_lambda)
    : LambdaLR(optimizer, std::vector<Fn>(optimizer.param_groups().size(), lr_lambda)) {}

LambdaLR::LambdaLR(Optimizer& optimizer, std::vector<Fn> lr_lambdas)
    : LRScheduler(optimizer), fns_(std::move(lr_lambdas)) {
  STRIDE_CHECK(fns_.size() == base_lrs().size(), ValueError, "[LambdaLR] expected ",
               base_lrs().size(), " lr_lambdas (one per param group); got ", fns_.size(), ".");
  for (size_t g = 0; g < fns_.size(); ++g) {
    STRIDE_CHECK(bool(fns_[g]), ValueError, "[LambdaLR] lr_lambda ", g, " is empty.");
  }
  initial_step();
}

std::vector<double> LambdaLR::lr_at(int64_t epoch) const {
  std::vector<double> out;
  for (size_t g = 0; g < fns_.size(); ++g) out.push_back(base_lrs()[g] * fns_[g](epoch));
  return out;
}

// ---- SequentialLR ----

SequentialLR::SequentialLR(Optimizer& optimizer,
                           std::vector<std::shared_ptr<LRScheduler>> schedulers,
                           std::vector<int64_t> milestones)
    : LRScheduler(optimizer),
      schedulers_(std::move(schedulers)),
      milestones_(std::move(milestones)) {
  STRIDE_CHECK(!schedulers_.empty(), ValueError, "[SequentialLR] needs at least one scheduler.");
  for (size_t k = 0; k < schedulers_.size(); ++k) {
    STRIDE_CHECK(schedulers_[k] != nullptr, ValueError, "[SequentialLR] scheduler ", k,
                 " is null.");
    STRIDE_CHECK(&schedulers_[k]->optimizer() == &optimizer, ValueError,
                 "[SequentialLR] scheduler ", k,
                 " drives a different optimizer. Hint: build every scheduler on the optimizer "
                 "passed to SequentialLR.");
  }
  STRIDE_CHECK(milestones_.size() + 1 == schedulers_.size(), ValueError,
               "[SequentialLR] expects one milestone fewer than schedulers; got ",
               schedulers_.size(), " schedulers and ", milestones_.size(), " milestones.");
  for (size_t k = 0; k < milestones_.size(); ++k) {
    STRIDE_CHECK(milestones_[k] > (k == 0 ? 0 : milestones_[k - 1]), ValueError,
                 "[SequentialLR] milestones must be positive and increasing; milestone ", k, " is ",
                 milestones_[k], ".");
  }
  // As PyTorch: undo the initial steps the schedulers took when they were
  // built, then let the first one take it again.
  for (ParamGroup& group : optimizer.param_groups()) group.set_lr(*group.options().initial_lr());
  for (const auto& s : schedulers_) s->last_epoch_ -= 1;
  schedulers_[0]->initial_step();
  last_epoch_ = 0;
  last_lr_ = schedulers_[0]->get_last_lr();
}

void SequentialLR::step() {
  ++last_epoch_;
  const size_t k = size_t(std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) -
                          milestones_.begin());
  LRScheduler& s = *schedulers_[k];
  if (k > 0 && milestones_[k - 1] == last_epoch_) {
    s.step_to(0);
  } else {
    s.step();
  }
  last_lr_ = s.get_last_lr();
}

std::vector<double> SequentialLR::lr_at(int64_t epoch) const {
  const size_t k =
      size_t(std::upper_bound(milestones_.begin(), milestones_.end(), epoch) - milestones_.begin());
  return schedulers_[k]->lr_at(k == 0 ? epoch : epoch - milestones_[k - 1]);
}

std::map<std::string, double> SequentialLR::state_dict() const {
  std::map<std::string, double> out = LRScheduler::state_dict();
  for (size_t k = 0; k < milestones_.size(); ++k) {
    out["milestones." + std::to_string(k)] = double(milestones_[k]);
  }
  for (size_t k = 0; k < schedulers_.size(); ++k) {
    for (const auto& [key, value] : schedulers_[k]->state_dict()) {
      out["schedulers." + std::to_string(k) + "." + key] = value;
    }
  }
  return out;
}

void SequentialLR::load_state_dict(const std::map<std::string, double>& state) {
  std::map<std::string, double> own;
  std::vector<std::map<std::string, double>> nested(schedulers_.size());
  for (const auto& [key, value] : state) {
    if (key.rfind("milestones.", 0) == 0) continue;  // the constructor's stay
    if (key.rfind("schedulers.", 0) != 0) {
      own[key] = value;
      continue;
    }
    const size_t dot = key.find('.', 11);
    const std::string digits = key.substr(11, dot == std::string::npos ? 0 : dot - 11);
    STRIDE_CHECK(!digits.empty() && digits.size() < 10 &&
                     std::all_of(digits.begin(), digits.end(), ::isdigit),
                 ValueError, "[SequentialLR::load_state_dict] malformed key '", key, "'.");
    const size_t k = size_t(std::stoul(digits));
    STRIDE_CHECK(k < schedulers_.size(), ValueError,
                 "[SequentialLR::load_state_dict] the state has ", key,
                 " but this SequentialLR has ", schedulers_.size(), " schedulers.");
    nested[k][key.substr(dot + 1)] = value;
  }
  for (size_t k = 0; k < schedulers_.size(); ++k) {
    STRIDE_CHECK(!nested[k].empty(), ValueError,
                 "[SequentialLR::load_state_dict] the state has no "
                 "entries for scheduler ",
                 k, ".");
  }
  LRScheduler::load_state_dict(own);
  for (size_t k = 0; k < schedulers_.size(); ++k) schedulers_[k]->load_state_dict(nested[k]);
}

// ---- WarmupCosineLR ----

WarmupCosineLR::WarmupCosineLR(Optimizer& optimizer,
                               int64_t warmup_steps,
                               int64_t total_steps,
                               double min_lr_ratio)
    : LRScheduler(optimizer), warmup_(warmup_steps), total_(total_steps), min_ratio_(min_lr_ratio) {
  STRIDE_CHECK(warmup_steps >= 0 && warmup_steps < total_steps, ValueError,
               "[warmup_cosine] needs 0 <= warmup_steps < total_steps; got warmup_steps ",
               warmup_steps, " and total_steps ", total_steps, ".");
  STRIDE_CHECK(min_lr_ratio >= 0 && min_lr_ratio <= 1, ValueError,
               "[warmup_cosine] min_lr_ratio must be in [0, 1]; got ", min_lr_ratio, ".");
  initial_step();
}

double WarmupCosineLR::factor(int64_t epoch) const {
  if (epoch < warmup_) return double(epoch + 1) / double(warmup_);
  if (epoch > total_) return min_ratio_;
  const double progress = double(epoch - warmup_) / double(total_ - warmup_);
  return min_ratio_ + (1 - min_ratio_) * (1 + std::cos(std::numbers::pi * progress)) / 2;
}

std::vector<double> WarmupCosineLR::lr_at(int64_t epoch) const {
  std::vector<double> out;
  for (double base : base_lrs()) out.push_back(base * factor(epoch));
  return out;
}

std::map<std::string, double> WarmupCosineLR::hyperparameters() const {
  return {{"warmup_steps", double(warmup_)},
          {"total_steps", double(total_)},
          {"min_lr_ratio", min_ratio_}};
}

}  // namespace stride::optim
