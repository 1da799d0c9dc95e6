#include "stride/optim/lr_scheduler.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <tuple>
#include <utility>

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
  apply(epoch, lr_at(epoch));
}

void LRScheduler::apply(int64_t epoch, std::vector<double> lrs) {
  std::vector<ParamGroup>& groups = optimizer_->param_groups();
  STRIDE_CHECK(groups.size() == base_lrs_.size(), ValueError, "[LRScheduler] the optimizer has ",
               groups.size(), " param groups but the scheduler was made for ", base_lrs_.size(),
               ". Hint: create the scheduler after adding every param group.");
  last_epoch_ = epoch;
  last_lr_ = std::move(lrs);
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

// ---- MultiStepLR ----

MultiStepLR::MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma)
    : LRScheduler(optimizer), milestones_(std::move(milestones)), gamma_(gamma) {
  std::sort(milestones_.begin(), milestones_.end());
  initial_step();
}

std::vector<double> MultiStepLR::lr_at(int64_t epoch) const {
  const auto passed =
      std::upper_bound(milestones_.begin(), milestones_.end(), epoch) - milestones_.begin();
  std::vector<double> out;
  for (double base : base_lrs()) out.push_back(base * std::pow(gamma_, double(passed)));
  return out;
}

std::map<std::string, double> MultiStepLR::hyperparameters() const {
  std::map<std::string, double> out{{"gamma", gamma_}};
  for (size_t k = 0; k < milestones_.size(); ++k) {
    out["milestones." + std::to_string(k)] = double(milestones_[k]);
  }
  return out;
}

// ---- ExponentialLR ----

ExponentialLR::ExponentialLR(Optimizer& optimizer, double gamma)
    : LRScheduler(optimizer), gamma_(gamma) {
  initial_step();
}

std::vector<double> ExponentialLR::lr_at(int64_t epoch) const {
  std::vector<double> out;
  for (double base : base_lrs()) out.push_back(base * std::pow(gamma_, double(epoch)));
  return out;
}

std::map<std::string, double> ExponentialLR::hyperparameters() const {
  return {{"gamma", gamma_}};
}

// ---- ConstantLR ----

ConstantLR::ConstantLR(Optimizer& optimizer, double factor, int64_t total_iters)
    : LRScheduler(optimizer), factor_(factor), total_iters_(total_iters) {
  STRIDE_CHECK(factor >= 0 && factor <= 1, ValueError,
               "[ConstantLR] factor must be in [0, 1]; got ", factor, ".");
  STRIDE_CHECK(total_iters >= 0, ValueError, "[ConstantLR] total_iters must be >= 0; got ",
               total_iters, ".");
  initial_step();
}

std::vector<double> ConstantLR::lr_at(int64_t epoch) const {
  const double f = epoch >= total_iters_ ? 1.0 : factor_;
  std::vector<double> out;
  for (double base : base_lrs()) out.push_back(base * f);
  return out;
}

std::map<std::string, double> ConstantLR::hyperparameters() const {
  return {{"factor", factor_}, {"total_iters", double(total_iters_)}};
}

// ---- CosineAnnealingWarmRestarts ----

CosineAnnealingWarmRestarts::CosineAnnealingWarmRestarts(Optimizer& optimizer,
                                                         int64_t T_0,
                                                         int64_t T_mult,
                                                         double eta_min)
    : LRScheduler(optimizer), t_0_(T_0), t_mult_(T_mult), eta_min_(eta_min), t_i_(double(T_0)) {
  STRIDE_CHECK(T_0 > 0, ValueError, "[CosineAnnealingWarmRestarts] T_0 must be > 0; got ", T_0,
               ".");
  STRIDE_CHECK(T_mult >= 1, ValueError, "[CosineAnnealingWarmRestarts] T_mult must be >= 1; got ",
               T_mult, ".");
  step(0.0);
}

std::pair<double, double> CosineAnnealingWarmRestarts::cycle_at(double epoch) const {
  const double t0 = double(t_0_), mult = double(t_mult_);
  if (epoch < t0) return {epoch, t0};
  // With T_mult 1 PyTorch keeps T_i as it is (T_0 unless step() grew it,
  // which it cannot with T_mult 1).
  if (t_mult_ == 1) return {std::fmod(epoch, t0), t_i_};
  // The cycle n that holds epoch: T_0 (T_mult^n - 1) / (T_mult - 1) <= epoch,
  // by PyTorch's logarithm (math.log(x, base) is log(x) / log(base)).
  const double n = std::floor(std::log(epoch / t0 * (mult - 1) + 1) / std::log(mult));
  const double power = std::pow(mult, n);
  return {epoch - t0 * (power - 1) / (mult - 1), t0 * power};
}

std::vector<double> CosineAnnealingWarmRestarts::lrs(double t_cur, double t_i) const {
  std::vector<double> out;
  for (double base : base_lrs()) {
    out.push_back(eta_min_ +
                  (base - eta_min_) * (1 + std::cos(std::numbers::pi * t_cur / t_i)) / 2);
  }
  return out;
}

void CosineAnnealingWarmRestarts::step() {
  t_cur_ += 1;
  if (t_cur_ >= t_i_) {
    t_cur_ = std::fmod(t_cur_, t_i_);
    t_i_ *= double(t_mult_);
  }
  apply(last_epoch() + 1, lrs(t_cur_, t_i_));
}

void CosineAnnealingWarmRestarts::step(double epoch) {
  STRIDE_CHECK(epoch >= 0, ValueError,
               "[CosineAnnealingWarmRestarts] step(epoch) needs epoch >= 0; got ", epoch, ".");
  std::tie(t_cur_, t_i_) = cycle_at(epoch);
  apply(int64_t(std::floor(epoch)), lrs(t_cur_, t_i_));
}

void CosineAnnealingWarmRestarts::step_to(int64_t epoch) {
  step(double(epoch));
}

std::vector<double> CosineAnnealingWarmRestarts::lr_at(int64_t epoch) const {
  const auto [t_cur, t_i] = cycle_at(double(epoch));
  return lrs(t_cur, t_i);
}

std::map<std::string, double> CosineAnnealingWarmRestarts::hyperparameters() const {
  return {{"T_0", double(t_0_)}, {"T_mult", double(t_mult_)}, {"eta_min", eta_min_}};
}

std::map<std::string, double> CosineAnnealingWarmRestarts::state_dict() const {
  std::map<std::string, double> out = LRScheduler::state_dict();
  out["T_cur"] = t_cur_;
  out["T_i"] = t_i_;
  return out;
}

void CosineAnnealingWarmRestarts::load_state_dict(const std::map<std::string, double>& state) {
  std::map<std::string, double> rest = state;
  const auto t_cur = rest.find("T_cur"), t_i = rest.find("T_i");
  STRIDE_CHECK(t_cur != rest.end() && t_i != rest.end(), ValueError,
               "[CosineAnnealingWarmRestarts::load_state_dict] the state has no T_cur or T_i. "
               "Hint: load a state saved by a CosineAnnealingWarmRestarts.");
  const double cur = t_cur->second, i = t_i->second;
  rest.erase("T_cur");
  rest.erase("T_i");
  LRScheduler::load_state_dict(rest);
  t_cur_ = cur;
  t_i_ = i;
}

// ---- OneCycleLR ----

namespace {

// One value for every group, or one per group (PyTorch's _format_param).
std::vector<double> per_group(const std::vector<double>& values,
                              size_t groups,
                              const char* scheduler,
                              const char* name) {
  STRIDE_CHECK(values.size() == 1 || values.size() == groups, ValueError, "[", scheduler,
               "] expected one ", name, " or one per param group (", groups, "); got ",
               values.size(), ".");
  return values.size() == 1 ? std::vector<double>(groups, values[0]) : values;
}

}  // namespace

Optimizer& OneCycleLR::set_initial_lrs(Optimizer& optimizer,
                                       const std::vector<double>& max_lrs,
                                       double div_factor) {
  std::vector<ParamGroup>& groups = optimizer.param_groups();
  const std::vector<double> per = per_group(max_lrs, groups.size(), "OneCycleLR", "max_lr");
  for (size_t g = 0; g < groups.size(); ++g) {
    groups[g].options().set_initial_lr(per[g] / div_factor);
  }
  return optimizer;
}

OneCycleLR::OneCycleLR(Optimizer& optimizer,
                       std::vector<double> max_lrs,
                       int64_t total_steps,
                       const OneCycleLROptions& options)
    : LRScheduler(set_initial_lrs(optimizer, max_lrs, options.div_factor())),
      max_lrs_(per_group(max_lrs, optimizer.param_groups().size(), "OneCycleLR", "max_lr")),
      total_steps_(total_steps),
      options_(options) {
  STRIDE_CHECK(total_steps > 0, ValueError, "[OneCycleLR] total_steps must be > 0; got ",
               total_steps, ".");
  const double pct = options.pct_start();
  STRIDE_CHECK(pct >= 0 && pct <= 1, ValueError, "[OneCycleLR] pct_start must be in [0, 1]; got ",
               pct, ".");
  const double total = double(total_steps);
  const double last = double(total_steps - 1);
  using M = MomentumPoint;
  if (options.three_phase()) {
    phases_ = {{pct * total - 1, LrPoint::kInitial, LrPoint::kMax, M::kMax, M::kBase},
               {2 * pct * total - 2, LrPoint::kMax, LrPoint::kInitial, M::kBase, M::kMax},
               {last, LrPoint::kInitial, LrPoint::kMin, M::kMax, M::kMax}};
  } else {
    phases_ = {{pct * total - 1, LrPoint::kInitial, LrPoint::kMax, M::kMax, M::kBase},
               {last, LrPoint::kMax, LrPoint::kMin, M::kBase, M::kMax}};
  }
  if (options.cycle_momentum()) {
    const std::map<std::string, double> keys = optimizer.defaults().values();
    momentum_key_ = keys.count("beta1") ? "beta1" : keys.count("momentum") ? "momentum" : "";
    STRIDE_CHECK(!momentum_key_.empty(), ValueError, "[OneCycleLR] cycle_momentum needs an ",
                 "optimizer with momentum or betas; ", optimizer.name(),
                 " has neither. Hint: pass cycle_momentum=false.");
  }
  initial_step();
}

std::pair<const OneCycleLR::Phase*, double> OneCycleLR::locate(int64_t epoch) const {
  STRIDE_CHECK(epoch <= total_steps_, ValueError, "[OneCycleLR] tried to step ", epoch,
               " times, but total_steps is ", total_steps_,
               ". Hint: build the scheduler with the number of optimizer steps you take.");
  double start_step = 0;
  for (size_t i = 0; i + 1 < phases_.size(); ++i) {
    const Phase& phase = phases_[i];
    if (double(epoch) <= phase.end_step) {
      return {&phase, (double(epoch) - start_step) / (phase.end_step - start_step)};
    }
    start_step = phase.end_step;
  }
  // The last phase also takes epoch total_steps, past its end (as PyTorch).
  const Phase& last = phases_.back();
  return {&last, (double(epoch) - start_step) / (last.end_step - start_step)};
}

double OneCycleLR::anneal(double start, double end, double pct) const {
  if (options_.anneal_strategy() == AnnealStrategy::kLinear) return (end - start) * pct + start;
  const double cos_out = std::cos(std::numbers::pi * pct) + 1;
  return end + (start - end) / 2.0 * cos_out;
}

double OneCycleLR::lr_point(LrPoint point, size_t group) const {
  const double initial = base_lrs()[group];
  switch (point) {
    case LrPoint::kInitial:
      return initial;
    case LrPoint::kMax:
      return max_lrs_[group];
    case LrPoint::kMin:
      return initial / options_.final_div_factor();
  }
  return initial;
}

std::vector<double> OneCycleLR::lr_at(int64_t epoch) const {
  const auto [phase, pct] = locate(epoch);
  std::vector<double> out;
  for (size_t g = 0; g < base_lrs().size(); ++g) {
    out.push_back(anneal(lr_point(phase->lr_start, g), lr_point(phase->lr_end, g), pct));
  }
  return out;
}

void OneCycleLR::step_to(int64_t epoch) {
  LRScheduler::step_to(epoch);
  if (momentum_key_.empty()) return;
  const auto [phase, pct] = locate(epoch);
  auto value = [&](MomentumPoint point) {
    return point == MomentumPoint::kBase ? options_.base_momentum() : options_.max_momentum();
  };
  const double momentum = anneal(value(phase->momentum_start), value(phase->momentum_end), pct);
  for (ParamGroup& group : optimizer().param_groups()) {
    group.options().set_value(momentum_key_, momentum);
  }
}

std::map<std::string, double> OneCycleLR::hyperparameters() const {
  const OneCycleLROptions& o = options_;
  std::map<std::string, double> out{
      {"total_steps", double(total_steps_)},
      {"pct_start", o.pct_start()},
      {"anneal_linear", o.anneal_strategy() == AnnealStrategy::kLinear ? 1.0 : 0.0},
      {"cycle_momentum", o.cycle_momentum() ? 1.0 : 0.0},
      {"base_momentum", o.base_momentum()},
      {"max_momentum", o.max_momentum()},
      {"div_factor", o.div_factor()},
      {"final_div_factor", o.final_div_factor()},
      {"three_phase", o.three_phase() ? 1.0 : 0.0}};
  for (size_t g = 0; g < max_lrs_.size(); ++g) out["max_lrs." + std::to_string(g)] = max_lrs_[g];
  return out;
}

// ---- ReduceLROnPlateau ----

ReduceLROnPlateau::ReduceLROnPlateau(Optimizer& optimizer, const ReduceLROnPlateauOptions& options)
    : optimizer_(&optimizer),
      options_(options),
      min_lrs_(per_group(
          options.min_lrs(), optimizer.param_groups().size(), "ReduceLROnPlateau", "min_lr")),
      best_(options.mode() == PlateauMode::kMin ? INFINITY : -INFINITY),
      last_lr_(group_lrs()) {
  STRIDE_CHECK(options.factor() < 1.0, ValueError, "[ReduceLROnPlateau] factor must be < 1; got ",
               options.factor(), ".");
}

std::vector<double> ReduceLROnPlateau::group_lrs() const {
  std::vector<double> out;
  for (const ParamGroup& group : optimizer_->param_groups()) out.push_back(group.lr());
  return out;
}

bool ReduceLROnPlateau::is_better(double metric) const {
  const double t = options_.threshold();
  const bool rel = options_.threshold_mode() == ThresholdMode::kRel;
  if (options_.mode() == PlateauMode::kMin) return metric < (rel ? best_ * (1 - t) : best_ - t);
  return metric > (rel ? best_ * (t + 1) : best_ + t);
}

void ReduceLROnPlateau::reduce_lr() {
  std::vector<ParamGroup>& groups = optimizer_->param_groups();
  STRIDE_CHECK(groups.size() == min_lrs_.size(), ValueError,
               "[ReduceLROnPlateau] the optimizer has ", groups.size(),
               " param groups but the scheduler has ", min_lrs_.size(),
               " min_lrs. Hint: create the scheduler after adding every param group.");
  for (size_t g = 0; g < groups.size(); ++g) {
    const double old_lr = groups[g].lr();
    const double new_lr = std::max(old_lr * options_.factor(), min_lrs_[g]);
    if (old_lr - new_lr > options_.eps()) groups[g].set_lr(new_lr);
  }
}

// torch.optim.lr_scheduler.ReduceLROnPlateau.step, in its order.
void ReduceLROnPlateau::step(double metric) {
  ++last_epoch_;
  if (is_better(metric)) {
    best_ = metric;
    num_bad_epochs_ = 0;
  } else {
    ++num_bad_epochs_;
  }
  if (in_cooldown()) {
    --cooldown_counter_;
    num_bad_epochs_ = 0;  // bad epochs in cooldown do not count
  }
  if (num_bad_epochs_ > options_.patience()) {
    reduce_lr();
    cooldown_counter_ = options_.cooldown();
    num_bad_epochs_ = 0;
  }
  last_lr_ = group_lrs();
}

std::map<std::string, double> ReduceLROnPlateau::state_dict() const {
  std::map<std::string, double> out{{"last_epoch", double(last_epoch_)},
                                    {"best", best_},
                                    {"num_bad_epochs", double(num_bad_epochs_)},
                                    {"cooldown_counter", double(cooldown_counter_)}};
  for (size_t g = 0; g < last_lr_.size(); ++g) out["last_lr." + std::to_string(g)] = last_lr_[g];
  return out;
}

void ReduceLROnPlateau::load_state_dict(const std::map<std::string, double>& state) {
  const std::map<std::string, double> expected = state_dict();
  for (const auto& entry : state) {
    STRIDE_CHECK(expected.count(entry.first), ValueError,
                 "[ReduceLROnPlateau::load_state_dict] unknown key '", entry.first,
                 "'. Hint: load a state saved by a ReduceLROnPlateau over the same optimizer.");
  }
  for (const auto& entry : expected) {
    STRIDE_CHECK(state.count(entry.first), ValueError,
                 "[ReduceLROnPlateau::load_state_dict] the state has no '", entry.first, "'.");
  }
  last_epoch_ = int64_t(state.at("last_epoch"));
  best_ = state.at("best");
  num_bad_epochs_ = int64_t(state.at("num_bad_epochs"));
  cooldown_counter_ = int64_t(state.at("cooldown_counter"));
  for (size_t g = 0; g < last_lr_.size(); ++g)
    last_lr_[g] = state.at("last_lr." + std::to_string(g));
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
