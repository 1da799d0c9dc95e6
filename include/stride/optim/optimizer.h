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
#include <optional>
#include <string>
#include <type_traits>
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

// The hyperparameters of one param group, as torch::optim::OptimizerOptions:
// each optimizer has its own typed options (AdamOptions, SGDOptions) deriving
// from this, and every group owns a copy.
class OptimizerOptions {
 public:
  virtual ~OptimizerOptions() = default;
  virtual std::unique_ptr<OptimizerOptions> clone() const = 0;
  // The options' type, for errors: "AdamOptions".
  virtual const char* name() const = 0;
  virtual double lr() const = 0;
  virtual void set_lr(double lr) = 0;

  // A scheduler's base lr: set from lr by the first scheduler built on the
  // optimizer (PyTorch's "initial_lr").
  const std::optional<double>& initial_lr() const { return initial_lr_; }
  void set_initial_lr(std::optional<double> lr) { initial_lr_ = lr; }

  // Every hyperparameter by its state_dict key, "lr" and (once set)
  // "initial_lr" included; flags as 0 or 1.
  virtual std::map<std::string, double> values() const = 0;
  // Sets the hyperparameter named `key` (a flag to value != 0); false, and
  // nothing changes, when these options have no such key.
  virtual bool set_value(const std::string& key, double value) = 0;

 protected:
  OptimizerOptions() = default;
  OptimizerOptions(const OptimizerOptions&) = default;
  OptimizerOptions& operator=(const OptimizerOptions&) = default;

 private:
  std::optional<double> initial_lr_;
};

// The part every optimizer's options type Derived shares (CRTP, as libtorch's
// OptimizerCloneableOptions): clone, name, a chainable lr and the state_dict's
// access by key. Derived lists its other fields once, in a private
//   template <class Self, class F> static void visit(Self& self, F&& f)
// that calls f(key, field) for each (a double or a bool), names itself in
// `static constexpr const char* kName`, and befriends this class.
template <class Derived>
class OptimizerCloneableOptions : public OptimizerOptions {
 public:
  std::unique_ptr<OptimizerOptions> clone() const override {
    return std::make_unique<Derived>(self());
  }
  const char* name() const override { return Derived::kName; }
  double lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  Derived& lr(double lr) {
    lr_ = lr;
    return self();
  }

  std::map<std::string, double> values() const override {
    std::map<std::string, double> out{{"lr", lr_}};
    if (initial_lr()) out["initial_lr"] = *initial_lr();
    Derived::visit(self(), [&](const char* key, const auto& field) { out[key] = double(field); });
    return out;
  }
  bool set_value(const std::string& key, double value) override {
    if (key == "lr") {
      lr_ = value;
      return true;
    }
    if (key == "initial_lr") {
      set_initial_lr(value);
      return true;
    }
    bool found = false;
    Derived::visit(self(), [&](const char* k, auto& field) {
      if (key != k) return;
      // Checkpoints store flags as numbers.
      if constexpr (std::is_same_v<std::remove_cvref_t<decltype(field)>, bool>) {
        field = value != 0;
      } else {
        field = value;
      }
      found = true;
    });
    return found;
  }

 protected:
  explicit OptimizerCloneableOptions(double lr) : lr_(lr) {}

 private:
  Derived& self() { return static_cast<Derived&>(*this); }
  const Derived& self() const { return static_cast<const Derived&>(*this); }

  double lr_;
};

// Parameters that share hyperparameters. A group takes the optimizer's
// defaults when it is added, unless it has options of its own (of that
// optimizer's kind, e.g. AdamOptions for Adam) or an lr of its own.
class ParamGroup {
 public:
  explicit ParamGroup(std::vector<Tensor> params) : params_(std::move(params)) {}
  ParamGroup(std::vector<Tensor> params, const OptimizerOptions& options)
      : params_(std::move(params)), options_(options.clone()) {}
  // The optimizer's defaults with this lr.
  ParamGroup(std::vector<Tensor> params, double lr) : params_(std::move(params)), lr_(lr) {}
  ParamGroup(const ParamGroup& other);
  ParamGroup& operator=(const ParamGroup& other);
  ParamGroup(ParamGroup&&) = default;
  ParamGroup& operator=(ParamGroup&&) = default;
  ~ParamGroup() = default;

  std::vector<Tensor>& params() { return params_; }
  const std::vector<Tensor>& params() const { return params_; }
  bool has_options() const { return options_ != nullptr; }
  // Throws ValueError for a group given no options that is not yet added to
  // an optimizer. Downcast to the optimizer's options for its fields:
  // static_cast<AdamOptions&>(group.options()).betas().
  OptimizerOptions& options();
  const OptimizerOptions& options() const;
  double lr() const { return options().lr(); }
  void set_lr(double lr) { options().set_lr(lr); }

 private:
  friend class Optimizer;
  std::vector<Tensor> params_;
  std::unique_ptr<OptimizerOptions> options_;
  std::optional<double> lr_;  // applied to the defaults when added
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
  // Adds a group; its parameters get the next indices. A group without
  // options gets a copy of the defaults (with its lr, if it has one); options
  // of another optimizer and invalid values throw ValueError.
  void add_param_group(ParamGroup group);

  std::vector<ParamGroup>& param_groups() { return groups_; }
  const std::vector<ParamGroup>& param_groups() const { return groups_; }
  // All parameters, in index order.
  std::vector<Tensor> parameters() const;
  const OptimizerOptions& defaults() const { return *defaults_; }
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
  Optimizer(std::string name, const OptimizerOptions& defaults);
  // Adds the constructor's groups (from the derived constructor, so that
  // check_options is the derived class's). Throws ValueError when they hold
  // no parameter at all.
  void init(std::vector<ParamGroup> groups);

  // Throws ValueError when a hyperparameter of group `group_index` is invalid.
  virtual void check_options(const OptimizerOptions& options, size_t group_index) const = 0;
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
  std::unique_ptr<OptimizerOptions> defaults_;
  std::unique_ptr<detail::FusedStep> fused_;
  std::vector<ParamGroup> groups_;
  std::unordered_map<const TensorImpl*, Location> index_of_;
  // Parameters by storage, to find leaves that view the same memory.
  std::unordered_map<const StorageImpl*, std::vector<const TensorImpl*>> by_storage_;
  std::unordered_map<const TensorImpl*, ParamState> state_;
};

}  // namespace stride::optim
