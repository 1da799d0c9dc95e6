#include "stride/optim/optimizer.h"

#include <algorithm>
#include <typeinfo>
#include <utility>

#include "core/check.h"
#include "core/layout.h"
#include "core/overlap.h"
#include "optim/fused.h"
#include "stride/autograd.h"
#include "stride/ops.h"
#include "stride/profiler.h"

namespace stride::optim {

ParamGroup::ParamGroup(const ParamGroup& other)
    : params_(other.params_),
      options_(other.options_ ? other.options_->clone() : nullptr),
      lr_(other.lr_) {}

ParamGroup& ParamGroup::operator=(const ParamGroup& other) {
  if (this != &other) *this = ParamGroup(other);
  return *this;
}

OptimizerOptions& ParamGroup::options() {
  return const_cast<OptimizerOptions&>(std::as_const(*this).options());
}

const OptimizerOptions& ParamGroup::options() const {
  STRIDE_CHECK(options_ != nullptr, ValueError,
               "[ParamGroup] has no options until it is added to an optimizer, which gives it "
               "its defaults. Hint: add it first, or construct it with options.");
  return *options_;
}

Optimizer::Optimizer(std::string name, const OptimizerOptions& defaults)
    : name_(std::move(name)),
      defaults_(defaults.clone()),
      fused_(std::make_unique<detail::FusedStep>()) {}

Optimizer::~Optimizer() = default;

void Optimizer::init(std::vector<ParamGroup> groups) {
  size_t total = 0;
  for (const ParamGroup& g : groups) total += g.params().size();
  STRIDE_CHECK(total > 0, ValueError, "[", name_,
               "] got an empty parameter list. Hint: pass the model's parameters, e.g. "
               "model->parameters().");
  for (ParamGroup& g : groups) add_param_group(std::move(g));
}

std::string Optimizer::describe(const Location& loc) const {
  return stride::detail::str_cat("parameter ", loc.index, " (group ", loc.group, ", position ",
                                 loc.position, ")");
}

void Optimizer::check_param(const Tensor& p, const Location& loc) const {
  STRIDE_CHECK(p.defined(), ValueError, "[", name_, "] ", describe(loc), " is undefined.");
  STRIDE_CHECK(p.is_floating_point(), DTypeError, "[", name_, "] ", describe(loc), " has dtype ",
               to_string(p.dtype()),
               "; parameters must be floating point. Hint: optimize a float tensor, e.g. "
               "x.to(kFloat32).requires_grad_().");
  if (!p.is_leaf()) {
    const auto fn = p.grad_fn();
    STRIDE_CHECK(false, ValueError, "[", name_, "] ", describe(loc),
                 " is not a leaf tensor: it was computed by ", fn ? fn->name() : "an op",
                 ", so its .grad is never filled and updating it would not change the tensor it "
                 "came from. Hint: optimize that leaf, or make this one a leaf with "
                 "detach().requires_grad_().");
  }
  STRIDE_CHECK(p.requires_grad(), ValueError, "[", name_, "] ", describe(loc),
               " does not require grad. Hint: call requires_grad_() on it, or leave frozen "
               "parameters out of the optimizer.");
  // An expanded (or self-overlapping) view: one memory location would
  // receive several updates.
  STRIDE_CHECK(!stride::detail::has_internal_overlap(p), ValueError, "[", name_, "] ",
               describe(loc), " of shape ", shape_str(p.sizes()), " and strides ",
               shape_str(p.strides()),
               " has elements that share memory (an expanded view). Hint: pass a tensor that "
               "owns its elements, e.g. x.contiguous().detach().requires_grad_().");
}

void Optimizer::add_param_group(ParamGroup group) {
  const size_t g = groups_.size();
  if (!group.options_) {
    group.options_ = defaults_->clone();
    if (group.lr_) group.options_->set_lr(*group.lr_);
  }
  const OptimizerOptions &given = *group.options_, &defaults = *defaults_;
  STRIDE_CHECK(typeid(given) == typeid(defaults), ValueError, "[", name_, "] param group ", g,
               " has ", given.name(), " but ", name_, " takes ", defaults.name(),
               ". Hint: give it ", defaults.name(),
               ", only an lr, or no options to use the optimizer's defaults.");
  check_options(group.options(), g);

  // Parameters: valid, and each only once across all groups.
  int64_t next = 0;
  for (const ParamGroup& existing : groups_) next += int64_t(existing.params().size());
  std::unordered_map<const TensorImpl*, Location> added;
  std::unordered_map<const StorageImpl*, std::vector<const TensorImpl*>> added_by_storage;
  auto location_of = [&](const TensorImpl* impl) -> const Location* {
    if (auto it = index_of_.find(impl); it != index_of_.end()) return &it->second;
    if (auto it = added.find(impl); it != added.end()) return &it->second;
    return nullptr;
  };
  for (size_t i = 0; i < group.params().size(); ++i) {
    const Tensor& p = group.params()[i];
    const Location loc{next + int64_t(i), g, i};
    check_param(p, loc);
    const Location* dup = location_of(p.impl());
    // Another leaf viewing exactly the same memory is the same parameter.
    for (const auto* table : {&by_storage_, &added_by_storage}) {
      auto it = table->find(p.storage().get());
      if (dup || it == table->end()) continue;
      for (const TensorImpl* other : it->second) {
        if (other->storage_offset() == p.storage_offset() && other->sizes() == p.sizes() &&
            other->strides() == p.strides()) {
          dup = location_of(other);
        }
      }
    }
    STRIDE_CHECK(!dup, ValueError, "[", name_, "] ", describe(loc), " is the same tensor as ",
                 dup ? describe(*dup) : "",
                 "; a parameter may appear only once across all param groups. Hint: remove the "
                 "duplicate (tied weights are one parameter).");
    added.emplace(p.impl(), loc);
    added_by_storage[p.storage().get()].push_back(p.impl());
  }
  index_of_.insert(added.begin(), added.end());
  for (auto& [storage, impls] : added_by_storage) {
    auto& all = by_storage_[storage];
    all.insert(all.end(), impls.begin(), impls.end());
  }
  groups_.push_back(std::move(group));
}

std::vector<Tensor> Optimizer::parameters() const {
  std::vector<Tensor> out;
  for (const ParamGroup& g : groups_) out.insert(out.end(), g.params().begin(), g.params().end());
  return out;
}

ParamState* Optimizer::state(const Tensor& param) {
  auto it = state_.find(param.impl());
  return it == state_.end() ? nullptr : &it->second;
}

const ParamState* Optimizer::state(const Tensor& param) const {
  auto it = state_.find(param.impl());
  return it == state_.end() ? nullptr : &it->second;
}

Tensor Optimizer::step(const std::function<Tensor()>& closure) {
  // "Optimizer.step#Adam.step", as torch.profiler names it.
  std::string scope;
  if (profiler::is_enabled()) scope = "Optimizer.step#" + name_ + ".step";
  profiler::RecordFunction record(scope.c_str());
  Tensor loss;
  if (closure) {
    EnableGradGuard enable;
    loss = closure();
  }
  NoGradGuard no_grad;
  for (const ParamGroup& group : groups_) {
    for (size_t i = 0; i < group.params().size(); ++i) {
      Tensor param = group.params()[i];
      const Tensor& grad = param.grad();
      if (!grad.defined()) continue;
      if (!(grad.sizes() == param.sizes()) || grad.dtype() != param.dtype()) {
        const Location& loc = index_of_.at(param.impl());
        STRIDE_CHECK(grad.sizes() == param.sizes(), ShapeError, "[", name_, "] the gradient of ",
                     describe(loc), " has shape ", shape_str(grad.sizes()),
                     " but the parameter has shape ", shape_str(param.sizes()), ".");
        STRIDE_CHECK(false, DTypeError, "[", name_, "] the gradient of ", describe(loc),
                     " has dtype ", to_string(grad.dtype()), " but the parameter has dtype ",
                     to_string(param.dtype()), ".");
      }
      try {
        update(param, grad, group, state_[param.impl()]);
      } catch (...) {
        fused_->run();
        throw;
      }
    }
  }
  fused_->run();
  return loss;
}

void Optimizer::zero_grad(bool set_to_none) {
  NoGradGuard no_grad;
  for (ParamGroup& group : groups_) {
    for (Tensor param : group.params()) {
      if (!param.grad().defined()) continue;
      if (set_to_none) {
        param.mutable_grad() = Tensor();
      } else {
        Tensor& g = param.mutable_grad();
        if (g.grad_fn()) g = g.detach();
        g.zero_();
      }
    }
  }
}

Tensor Optimizer::zeros_like_param(const Tensor& param) {
  return stride::detail::empty_preserving_strides(param, param.options()).zero_();
}

// ---- state_dict ----

namespace {

std::string state_key(int64_t index, const std::string& name) {
  return "state." + std::to_string(index) + "." + name;
}
std::string group_key(size_t group, const std::string& name) {
  return "param_groups." + std::to_string(group) + "." + name;
}

// Splits "prefix.<n>.<rest>" into (n, rest); false when `key` has another form.
bool split_key(const std::string& key, const std::string& prefix, int64_t& n, std::string& rest) {
  if (key.compare(0, prefix.size(), prefix) != 0) return false;
  const size_t dot = key.find('.', prefix.size());
  if (dot == std::string::npos || dot == prefix.size() || dot + 1 == key.size()) return false;
  const std::string digits = key.substr(prefix.size(), dot - prefix.size());
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      digits.size() > 12) {
    return false;
  }
  n = std::stoll(digits);
  rest = key.substr(dot + 1);
  return true;
}

}  // namespace

OptimizerState Optimizer::state_dict() const {
  OptimizerState out;
  out.optimizer = name_;
  int64_t index = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    const ParamGroup& group = groups_[g];
    for (const auto& [key, value] : group.options().values())
      out.scalars[group_key(g, key)] = value;
    out.scalars[group_key(g, "num_params")] = double(group.params().size());
    for (const Tensor& p : group.params()) {
      if (const ParamState* s = state(p)) {
        for (const auto& [name, t] : s->tensors)
          out.tensors.emplace_back(state_key(index, name), t);
        for (const auto& [name, v] : s->scalars) out.scalars[state_key(index, name)] = v;
      }
      ++index;
    }
  }
  return out;
}

void Optimizer::load_state_dict(const OptimizerState& saved) {
  const char* op = "load_state_dict";
  STRIDE_CHECK(saved.optimizer == name_, ValueError, "[", name_, "::", op,
               "] the state was saved by ",
               saved.optimizer.empty() ? std::string("an unnamed optimizer") : saved.optimizer,
               ", not ", name_, ". Hint: load it into the same kind of optimizer.");
  const std::vector<Tensor> params = parameters();
  const StateSchema schema = state_schema();
  auto in = [](const std::vector<std::string>& names, const std::string& n) {
    return std::find(names.begin(), names.end(), n) != names.end();
  };

  // Group options (the current ones with the saved values applied) and
  // parameter counts.
  std::vector<std::unique_ptr<OptimizerOptions>> options;
  for (const ParamGroup& group : groups_) options.push_back(group.options().clone());
  std::vector<int64_t> counts(groups_.size(), -1);
  std::vector<ParamState> states(params.size());
  // Groups first, so that a different layout is reported as such.
  for (const auto& [key, value] : saved.scalars) {
    int64_t n = 0;
    std::string rest;
    if (!split_key(key, "param_groups.", n, rest)) continue;
    STRIDE_CHECK(n < int64_t(groups_.size()), ValueError, "[", name_, "::", op,
                 "] the state has param group ", n, " but this optimizer has ", groups_.size(),
                 " group(s). Hint: build the optimizer with the same param groups as the one "
                 "that saved the state.");
    if (rest == "num_params") {
      counts[size_t(n)] = int64_t(value);
    } else {
      STRIDE_CHECK(options[size_t(n)]->set_value(rest, value), ValueError, "[", name_, "::", op,
                   "] unknown option '", key, "' in the state.");
    }
  }
  for (size_t g = 0; g < groups_.size(); ++g) {
    STRIDE_CHECK(counts[g] >= 0, ValueError, "[", name_, "::", op, "] the state has no ",
                 group_key(g, "num_params"), "; it has fewer param groups than this optimizer (",
                 groups_.size(), ").");
    STRIDE_CHECK(counts[g] == int64_t(groups_[g].params().size()), ValueError, "[", name_, "::", op,
                 "] param group ", g, " has ", counts[g], " parameters in the state but ",
                 groups_[g].params().size(),
                 " in this optimizer. Hint: build the optimizer over the same parameters, in "
                 "the same groups and order, as the one that saved the state.");
  }
  // Per-parameter scalars.
  for (const auto& [key, value] : saved.scalars) {
    int64_t n = 0;
    std::string rest;
    if (split_key(key, "param_groups.", n, rest)) continue;
    STRIDE_CHECK(split_key(key, "state.", n, rest), ValueError, "[", name_, "::", op,
                 "] unknown key '", key, "' in the state's scalars.");
    STRIDE_CHECK(n < int64_t(params.size()), ValueError, "[", name_, "::", op, "] the state has ",
                 key, " but this optimizer has only ", params.size(),
                 " parameters. Hint: build the optimizer over the same parameters, in the same "
                 "order, as the one that saved the state.");
    STRIDE_CHECK(in(schema.scalars, rest), ValueError, "[", name_, "::", op, "] unknown state '",
                 key, "'.");
    states[size_t(n)].scalars[rest] = value;
  }

  // Per-parameter tensors: known names, the parameter's shape.
  for (const auto& [key, t] : saved.tensors) {
    int64_t n = 0;
    std::string rest;
    STRIDE_CHECK(split_key(key, "state.", n, rest), ValueError, "[", name_, "::", op,
                 "] unknown tensor '", key, "'; expected state.<index>.<name>.");
    STRIDE_CHECK(n < int64_t(params.size()), ValueError, "[", name_, "::", op, "] the state has ",
                 key, " but this optimizer has only ", params.size(),
                 " parameters. Hint: build the optimizer over the same parameters, in the same "
                 "order, as the one that saved the state.");
    STRIDE_CHECK(in(schema.tensors, rest) || in(schema.optional_tensors, rest), ValueError, "[",
                 name_, "::", op, "] unknown state tensor '", key, "'.");
    STRIDE_CHECK(t.defined(), ValueError, "[", name_, "::", op, "] ", key, " is undefined.");
    const Tensor& p = params[size_t(n)];
    STRIDE_CHECK(t.sizes() == p.sizes(), ShapeError, "[", name_, "::", op, "] ", key, " has shape ",
                 shape_str(t.sizes()), " but parameter ", n, " has shape ", shape_str(p.sizes()),
                 ". Hint: the state belongs to different parameters (or a different order).");
    STRIDE_CHECK(t.is_floating_point(), DTypeError, "[", name_, "::", op, "] ", key, " has dtype ",
                 to_string(t.dtype()), "; optimizer state is floating point.");
    states[size_t(n)].tensors[rest] = t;
  }
  for (size_t i = 0; i < states.size(); ++i) {
    const ParamState& s = states[i];
    if (s.tensors.empty() && s.scalars.empty()) continue;
    for (const std::string& name : schema.tensors) {
      STRIDE_CHECK(s.tensors.count(name), ValueError, "[", name_, "::", op, "] ",
                   state_key(int64_t(i), name), " is missing (parameter ", i, " has other state).");
    }
    for (const std::string& name : schema.scalars) {
      STRIDE_CHECK(s.scalars.count(name), ValueError, "[", name_, "::", op, "] ",
                   state_key(int64_t(i), name), " is missing (parameter ", i, " has other state).");
    }
  }

  // Everything is valid: apply. Options first, validated like new groups.
  for (size_t g = 0; g < groups_.size(); ++g) check_options(*options[g], g);
  for (size_t g = 0; g < groups_.size(); ++g) groups_[g].options_ = std::move(options[g]);
  NoGradGuard no_grad;
  state_.clear();
  for (size_t i = 0; i < states.size(); ++i) {
    ParamState& s = states[i];
    if (s.tensors.empty() && s.scalars.empty()) continue;
    const Tensor& p = params[i];
    for (auto& [name, t] : s.tensors) t = zeros_like_param(p).copy_(t);
    state_[p.impl()] = std::move(s);
  }
}

}  // namespace stride::optim
