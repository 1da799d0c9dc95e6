// Optimizers: parameter groups, per-parameter state, step / zero_grad and a
// state_dict that can be saved and loaded. Names follow libtorch
// (torch::optim); the update formulas follow PyTorch's single-tensor
// (non-foreach) implementations, so the same gradients give the same
// parameters as PyTorch to float32 rounding.
//
// Parameters are indexed by position, as in PyTorch's state_dict: group 0's
// parameters first, in order, then group 1's, and so on. A parameter must be
// a floating-point leaf tensor that requires grad, and may appear only once
// across all groups (the same TensorImpl, or another leaf that views exactly
// the same memory); violations throw when the group is added, naming the
// parameter's index.
//
// Updates are in place (add_, mul_, addcmul_, addcdiv_ or a fused kernel), all
// through TensorIter, so a parameter of any layout — transposed, sliced with a
// step, at an offset — is updated exactly like its contiguous copy (the bug of
// Adam silently skipping non-contiguous parameters cannot happen here;
// tests/optim/noncontiguous_test.cpp proves it).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "stride/tensor.h"

// Declares a hyperparameter of an options struct, libtorch style:
// `AdamOptions(1e-3).betas({0.9, 0.95}).weight_decay(0.1)`; `opts.lr()` reads.
#define STRIDE_OPTIM_ARG(T, name)                   \
 public:                                            \
  auto name(const T& new_##name)->decltype(*this) { \
    this->name##_ = new_##name;                     \
    return *this;                                   \
  }                                                 \
  const T& name() const noexcept {                  \
    return this->name##_;                           \
  }                                                 \
                                                    \
 private:                                           \
  T name##_

namespace stride::optim {

// The hyperparameters of one group by name, like a PyTorch param_group dict
// without "params": "lr", "weight_decay", "momentum", "beta1", "beta2", ...
// Flags are stored as 0 or 1. A scheduler adds "initial_lr".
using GroupOptions = std::map<std::string, double>;

// Parameters that share hyperparameters. Options given here override the
// optimizer's defaults; missing ones are filled in when the group is added.
class ParamGroup {
 public:
  explicit ParamGroup(std::vector<Tensor> params, GroupOptions options = {})
      : params_(std::move(params)), options_(std::move(options)) {}

  std::vector<Tensor>& params() { return params_; }
  const std::vector<Tensor>& params() const { return params_; }
  GroupOptions& options() { return options_; }
  const GroupOptions& options() const { return options_; }

  bool has(const std::string& key) const { return options_.count(key) != 0; }
  // Throws ValueError naming the key when the group has no such option.
  double get(const std::string& key) const;
  void set(const std::string& key, double value) { options_[key] = value; }
  double lr() const { return get("lr"); }
  void set_lr(double lr) { options_["lr"] = lr; }

 private:
  std::vector<Tensor> params_;
  GroupOptions options_;
};

// What an optimizer remembers about one parameter: buffers of the
// parameter's shape and dtype ("exp_avg", "momentum_buffer") and numbers
// ("step").
struct ParamState {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, double> scalars;
};

// A flat, serialisable snapshot of an optimizer, ready for safetensors
// (`tensors`) plus JSON metadata (`optimizer`, `scalars`). Keys, with i the
// parameter's index and g the group's:
//   tensors  "state.<i>.<name>"            e.g. state.3.exp_avg
//   scalars  "state.<i>.<name>"            e.g. state.3.step
//            "param_groups.<g>.<option>"   e.g. param_groups.0.lr
//            "param_groups.<g>.num_params" the group's parameter count
// Tensors alias the optimizer's live buffers (as PyTorch's state_dict does);
// clone them to keep a snapshot while training continues.
struct OptimizerState {
  std::string optimizer;  // "SGD", "Adam", "AdamW"
  std::vector<std::pair<std::string, Tensor>> tensors;
  std::map<std::string, double> scalars;
};

namespace detail {
class FusedStep;
}  // namespace detail

class Optimizer {
 public:
  virtual ~Optimizer();
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;
  Optimizer(Optimizer&&) = delete;  // schedulers hold a pointer to it
  Optimizer& operator=(Optimizer&&) = delete;

  // Updates every parameter whose gradient is defined (others are skipped),
  // with grad mode off. When `closure` is given it is called first, with grad
  // mode on, to recompute the loss (and gradients); its result is returned.
  // A gradient must have its parameter's shape and dtype.
  Tensor step(const std::function<Tensor()>& closure = {});
  // Clears every parameter's gradient: undefined (set_to_none), or zeroed in
  // place.
  void zero_grad(bool set_to_none = true);
  // Adds a group; its parameters get the next indices. Missing options come
  // from the optimizer's defaults; unknown option names and invalid values
  // throw ValueError.
  void add_param_group(ParamGroup group);

  std::vector<ParamGroup>& param_groups() { return groups_; }
  const std::vector<ParamGroup>& param_groups() const { return groups_; }
  // All parameters, in index order.
  std::vector<Tensor> parameters() const;
  const GroupOptions& defaults() const { return defaults_; }
  const std::string& name() const { return name_; }

  // The state of `param`, or nullptr before its first update (or when
  // `param` does not belong to this optimizer).
  ParamState* state(const Tensor& param);
  const ParamState* state(const Tensor& param) const;

  OptimizerState state_dict() const;
  // Restores group options and per-parameter state saved by state_dict() of
  // an optimizer of the same kind over parameters of the same shapes, in the
  // same groups and order. Validates everything before changing anything:
  // a different optimizer kind, group or parameter count, or an unknown key
  // throws ValueError; a state tensor of the wrong shape throws ShapeError.
  // Tensors are copied (converted to the parameter's dtype).
  void load_state_dict(const OptimizerState& state);

 protected:
  Optimizer(std::string name, GroupOptions defaults);
  // Adds the constructor's groups (from the derived constructor, so that
  // check_options is the derived class's). Throws ValueError when they hold
  // no parameter at all.
  void init(std::vector<ParamGroup> groups);

  // Throws ValueError when a hyperparameter of group `group_index` is invalid.
  virtual void check_options(const GroupOptions& options, size_t group_index) const = 0;
  // Updates `param` in place from `grad` (same shape and dtype), reading and
  // writing `state` (empty before the first update). Runs under NoGradGuard.
  virtual void update(Tensor& param,
                      const Tensor& grad,
                      const ParamGroup& group,
                      ParamState& state) = 0;

  // The state entries a parameter may have, for load_state_dict: required
  // ones must all be present (or the parameter has no state at all).
  struct StateSchema {
    std::vector<std::string> tensors;           // required
    std::vector<std::string> scalars;           // required
    std::vector<std::string> optional_tensors;  // may be absent
  };
  virtual StateSchema state_schema() const = 0;

  // A zero-filled buffer of `param`'s shape and dtype, with its strides when
  // it is dense (PyTorch's preserve_format), else contiguous.
  static Tensor zeros_like_param(const Tensor& param);

  // The step's queue of fused updates: update() may add to it instead of
  // updating at once; step() runs it after the last update() (also when an
  // update() throws, so that the parameters before it are updated, as they
  // would have been one by one).
  detail::FusedStep& fused_step() { return *fused_; }

 private:
  struct Location {
    int64_t index;  // position across all groups
    size_t group;
    size_t position;  // within the group
  };
  void check_param(const Tensor& p, const Location& loc) const;
  std::string describe(const Location& loc) const;

  std::string name_;
  GroupOptions defaults_;
  std::unique_ptr<detail::FusedStep> fused_;
  std::vector<ParamGroup> groups_;
  std::unordered_map<const TensorImpl*, Location> index_of_;
  // Parameters by storage, to find leaves that view the same memory.
  std::unordered_map<const StorageImpl*, std::vector<const TensorImpl*>> by_storage_;
  std::unordered_map<const TensorImpl*, ParamState> state_;
};

}  // namespace stride::optim
