// stride::nn::Module — the base of every layer and model (torch.nn.Module).
//
// A Module keeps three ordered registries: parameters (trainable tensors),
// buffers (state such as BatchNorm's running mean) and child modules. Every
// walk over them — parameters(), named_parameters(), state_dict(), to(),
// train(), zero_grad() — follows PyTorch's order, so the same structure gets
// the same dotted names as in PyTorch (`blocks.0.attn.wq.weight`):
//
//   * named_modules() is a pre-order walk: the module itself (name ""), then
//     each child in registration order, recursively;
//   * named_parameters() / named_buffers() list, for each module of that walk,
//     its own entries in registration order. A module's own parameters
//     therefore come before its children's, whatever the registration order;
//   * a tensor (or module) reachable under two names is listed once, under
//     the first (weight tying); state_dict() lists it under every name, as
//     PyTorch does.
//
// Writing a module:
//
//   struct Block : nn::Module {
//     Block() {
//       fc = register_module("fc", std::make_shared<nn::Linear>(64, 64));
//       scale = register_parameter("scale", ones({64}));
//     }
//     Tensor forward(const Tensor& x) override { return fc->call(x) * scale; }
//     std::shared_ptr<nn::Linear> fc;
//     Tensor scale;
//   };
//
// The members (`fc`, `scale`) are handles to the registered objects: the
// registry and the member share one TensorImpl / Module, so changes made
// through either (to(), load_state_dict(), an optimizer step) are seen by
// both. Replace a parameter's values with copy_() under NoGradGuard, never by
// assigning a new Tensor to the member, which would leave the registry
// holding the old one.
//
// Calling: `(*m)(x)` or `m->call(x)` runs the forward pre-hooks, forward(),
// the forward hooks and arranges the full backward hooks; calling
// `m->forward(x)` directly skips every hook, as in PyTorch. The hooked calling
// convention is one Tensor in and one Tensor out. A module with several
// inputs declares its own forward overload, for example
// `Tensor forward(const Tensor& x, const Tensor& mask)`, and callers call that
// overload directly: hooks registered on such a module do not run for it
// (they apply only to the single-tensor call path).
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "stride/autograd.h"
#include "stride/device.h"
#include "stride/dtype.h"
#include "stride/error.h"
#include "stride/tensor.h"

namespace stride::nn {

namespace detail {
[[noreturn]] void throw_missing_key(const std::string& key,
                                    const std::vector<std::string>& keys,
                                    const char* what);
[[noreturn]] void throw_repeated_key(const std::string& key, const char* what);
}  // namespace detail

// An insertion-ordered string -> V map with O(1) lookup (libtorch's
// torch::OrderedDict). `items()` is a vector of (key, value) pairs, so an
// OrderedDict<Tensor> converts to and from io::NamedTensors for free:
//   io::save_safetensors(path, model.state_dict().items());
//   model.load_state_dict(io::load_safetensors(path).tensors);
template <class V>
class OrderedDict {
 public:
  using Item = std::pair<std::string, V>;

  OrderedDict() = default;
  // Throws ValueError for a repeated key.
  OrderedDict(std::vector<Item> items) {  // NOLINT: NamedTensors converts
    items_.reserve(items.size());
    for (auto& item : items) insert(std::move(item.first), std::move(item.second));
  }
  OrderedDict(std::initializer_list<Item> items) {
    for (const auto& item : items) insert(item.first, item.second);
  }

  // Appends `key`; throws ValueError when it is already present.
  V& insert(std::string key, V value) {
    if (index_.count(key)) detail::throw_repeated_key(key, "OrderedDict");
    index_.emplace(key, items_.size());
    items_.emplace_back(std::move(key), std::move(value));
    return items_.back().second;
  }
  // Replaces the value of `key` in place, or appends it.
  V& insert_or_assign(std::string key, V value) {
    if (V* v = find(key)) return *v = std::move(value);
    return insert(std::move(key), std::move(value));
  }
  // Removes `key` (keeping the order of the others); false when absent.
  bool erase(const std::string& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return false;
    items_.erase(items_.begin() + std::ptrdiff_t(it->second));
    index_.clear();
    for (size_t i = 0; i < items_.size(); ++i) index_.emplace(items_[i].first, i);
    return true;
  }
  void clear() {
    items_.clear();
    index_.clear();
  }

  bool contains(const std::string& key) const { return index_.count(key) != 0; }
  // The value of `key`, or null.
  V* find(const std::string& key) {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].second;
  }
  const V* find(const std::string& key) const {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].second;
  }
  // The value of `key`; throws IndexError listing the keys when absent.
  V& at(const std::string& key) {
    if (V* v = find(key)) return *v;
    detail::throw_missing_key(key, keys(), "OrderedDict");
  }
  const V& at(const std::string& key) const {
    if (const V* v = find(key)) return *v;
    detail::throw_missing_key(key, keys(), "OrderedDict");
  }
  V& operator[](const std::string& key) { return at(key); }
  const V& operator[](const std::string& key) const { return at(key); }

  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  const std::vector<Item>& items() const { return items_; }
  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    out.reserve(items_.size());
    for (const auto& item : items_) out.push_back(item.first);
    return out;
  }
  std::vector<V> values() const {
    std::vector<V> out;
    out.reserve(items_.size());
    for (const auto& item : items_) out.push_back(item.second);
    return out;
  }
  auto begin() { return items_.begin(); }
  auto end() { return items_.end(); }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }

 private:
  std::vector<Item> items_;
  std::unordered_map<std::string, size_t> index_;
};

// name -> tensor, in PyTorch's state_dict order.
using StateDict = OrderedDict<Tensor>;

// The keys a non-strict load_state_dict() skipped (PyTorch's
// _IncompatibleKeys).
struct LoadStateDictResult {
  std::vector<std::string> missing_keys;     // in the module, not in the dict
  std::vector<std::string> unexpected_keys;  // in the dict, not in the module
};

// Thrown by load_state_dict(); its message lists every missing, unexpected
// and mis-shaped key at once.
class StateDictError : public ValueError {
 public:
  using ValueError::ValueError;
};

class Module;

// Hook signatures. A hook that returns a defined Tensor (or, for backward
// hooks, a non-empty vector) replaces the value it was given; hooks may also
// return void. Hooks of one kind run in registration order, each seeing the
// previous one's replacement.
//
// Forward pre-hook: runs before forward(); may replace the input.
using ForwardPreHook = std::function<Tensor(Module& module, const Tensor& input)>;
// Forward hook: runs after forward(); may replace the output.
using ForwardHook =
    std::function<Tensor(Module& module, const Tensor& input, const Tensor& output)>;
// Full backward hook (torch's register_full_backward_hook): runs once the
// gradient with respect to the module's input is known. grad_input[0] is that
// gradient (undefined when the input does not require grad), grad_output[0]
// the gradient with respect to the module's output. Returning a one-element
// vector replaces grad_input[0] for the rest of the backward pass.
using BackwardHook = std::function<std::vector<Tensor>(
    Module& module, const std::vector<Tensor>& grad_input, const std::vector<Tensor>& grad_output)>;

class Module : public std::enable_shared_from_this<Module> {
 public:
  // `name` is the type name used in messages and printing; by default the
  // class name ("Linear", "Block").
  explicit Module(std::string name = {});
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  std::string name() const;

  // ---- calling ----
  // The computation of a single-input module. The default throws
  // NotImplementedError (container modules and multi-input modules have none).
  virtual Tensor forward(const Tensor& input);
  // Runs the forward pre-hooks, forward(), the forward hooks, and — when grad
  // mode is on and full backward hooks are registered — routes the input and
  // output through identity views whose tensor hooks collect grad_output and
  // grad_input for them. (A consequence, as in PyTorch: forward() may not
  // modify such an input in place while recording.)
  Tensor operator()(const Tensor& input);
  Tensor call(const Tensor& input) { return (*this)(input); }

  // ---- registration ----
  // Registers `tensor` as parameter `name` and sets its requires_grad. The
  // registry keeps this very tensor (same TensorImpl) when it is a leaf; a
  // non-leaf is detached first (sharing its memory), as nn.Parameter does. An
  // undefined tensor registers a placeholder that walks skip (PyTorch's
  // `register_parameter(name, None)`). Names must be non-empty, contain no '.'
  // and be unique among this module's parameters, buffers and children
  // (ValueError otherwise). Returns the registered handle.
  Tensor register_parameter(std::string name, Tensor tensor, bool requires_grad = true);
  // Registers a buffer: state that is not trained. Persistent buffers are part
  // of state_dict(); all buffers follow to(), as parameters do.
  Tensor register_buffer(std::string name, Tensor tensor, bool persistent = true);
  // Registers `module` as child `name` and returns it, typed.
  template <class M>
  std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> module) {
    static_assert(std::is_base_of_v<Module, M>, "register_module needs a nn::Module");
    register_module_impl(std::move(name), module);
    return module;
  }

  // Points the existing parameter `name` at `tensor` (same rules as
  // register_parameter; requires_grad is kept) and returns it; the position
  // in the walks is unchanged. Reassign the layer's member with the result:
  // weight tying is
  //   lm_head->weight = lm_head->replace_parameter("weight", tok->weight);
  // after which the tied tensor is listed once by parameters() and under
  // both names by state_dict(). IndexError when there is no such parameter.
  Tensor replace_parameter(const std::string& name, Tensor tensor);
  // Replaces the existing child `name` (IndexError when absent); returns it.
  template <class M>
  std::shared_ptr<M> replace_module(const std::string& name, std::shared_ptr<M> module) {
    static_assert(std::is_base_of_v<Module, M>, "replace_module needs a nn::Module");
    replace_module_impl(name, module);
    return module;
  }

  // ---- walks (PyTorch order, see the top of this file) ----
  std::vector<Tensor> parameters(bool recurse = true) const;
  OrderedDict<Tensor> named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  OrderedDict<Tensor> named_buffers(bool recurse = true) const;
  // Direct children.
  std::vector<std::shared_ptr<Module>> children() const;
  OrderedDict<std::shared_ptr<Module>> named_children() const;
  // Every module of the tree, this one first (name "" or `prefix`). For a
  // module not owned by a shared_ptr, the entry for itself is a non-owning
  // pointer, valid while the module lives.
  std::vector<std::shared_ptr<Module>> modules(bool include_self = true);
  OrderedDict<std::shared_ptr<Module>> named_modules(const std::string& prefix = {},
                                                     bool include_self = true);
  // Calls fn on every child module (recursively, children first) and then on
  // this one: model.apply(init_weights).
  void apply(const std::function<void(Module&)>& fn);

  // Number of parameter elements (each shared tensor counted once); only
  // those that require grad when `trainable_only`.
  int64_t num_parameters(bool trainable_only = false) const;

  // ---- modes ----
  // Sets training mode on this module and all its descendants.
  Module& train(bool on = true);
  Module& eval() { return train(false); }
  bool is_training() const { return training_; }

  // ---- conversion ----
  // Converts every floating-point parameter and buffer (and parameter
  // gradient) to `dtype`, recursively; integer tensors such as
  // num_batches_tracked keep theirs (torch's Module.to). `dtype` must be a
  // floating-point type (ValueError otherwise).
  //
  // Note [Module::to keeps tensor identity]
  // ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
  // The converted data is installed into the existing TensorImpls (PyTorch's
  // `param.data = ...`), so every handle to a parameter — the module's member,
  // the registry, an optimizer constructed earlier — sees the new dtype, and
  // requires_grad and tensor hooks survive. What does not carry over is state
  // derived from the old data: an optimizer's per-parameter state (exp_avg
  // ...) keeps the old dtype, so, as PyTorch advises, convert the model before
  // constructing its optimizer. A parameter that was a non-contiguous but
  // dense view (e.g. stored transposed) keeps its strides in new memory.
  Module& to(ScalarType dtype);
  // Moves parameters, buffers and gradients to `device`, with the same
  // identity rule. A device without a backend in this build throws
  // DeviceError; a meta module cannot be moved (it has no values): use
  // to_empty.
  Module& to(Device device);
  // Gives every parameter and buffer new, uninitialised memory on `device`
  // (PyTorch's to_empty), with the same identity rule and each tensor's
  // layout: how a model built on meta is materialised, followed by
  // reset_all_parameters().
  Module& to_empty(Device device);

  // Re-initialises this module's own parameters and buffers as its
  // constructor does; modules without any do nothing.
  virtual void reset_parameters(Generator* gen = nullptr) { (void)gen; }
  // reset_parameters() on every module of the tree in pre-order, the order in
  // which a model's constructor creates its modules: after to_empty(device)
  // and the same manual_seed, the model holds the values it would have had
  // if built on `device`. Modules created in another order than they are
  // registered (e.g. as arguments of one call, which C++ evaluates in an
  // unspecified order) get their initial distributions but other draws.
  void reset_all_parameters(Generator* gen = nullptr);

  // Note [Packed parameters]
  // ~~~~~~~~~~~~~~~~~~~~~~~~
  // Moves the data of every parameter of the tree (each shared tensor once)
  // into one allocation (empty_packed), in parameters() order, each
  // contiguous. Values, identity (as for to(dtype)), requires_grad, hooks and
  // gradients are kept, and each parameter keeps a storage, and so a version
  // counter, of its own: only the memory is shared. Large enough, the block
  // is backed by huge pages (Note [Huge pages] in src/core/allocator.cpp),
  // which parameters allocated one by one (each under 2 MiB in most models)
  // never are: decoding runs faster for it, as each token streams every
  // weight (measured: see bench/HISTORY.md). The memory the parameters
  // leave goes back to the OS (empty_cpu_cache). A model whose parameters
  // mix dtypes or devices is left as it is.
  void pack_parameters();

  // Clears the gradients of all parameters: set_to_none resets them to
  // undefined (the default, as PyTorch); otherwise existing gradients are
  // detached and filled with zeros in place.
  void zero_grad(bool set_to_none = true);

  // ---- state ----
  // Parameters and persistent buffers under their dotted names, detached
  // (sharing memory with the module: copy before mutating). Per module, its
  // parameters come first, then its buffers, then its children's entries.
  StateDict state_dict() const;
  // Copies `state` into the module's parameters and persistent buffers in
  // place (under NoGradGuard, converting dtypes as copy_ does). Validation
  // comes first: nothing is copied unless the whole load succeeds. Any key
  // whose shape differs from the module's is an error; with `strict`, so are
  // missing and unexpected keys. Every problem is reported in one
  // StateDictError. Returns the keys a non-strict load skipped.
  LoadStateDictResult load_state_dict(const StateDict& state, bool strict = true);

  // ---- hooks ----
  // Each returns a handle whose remove() unregisters the hook; a handle may
  // outlive the module. The hook callables may return void.
  // has_hooks(): whether any forward pre-, forward or full backward hook is
  // registered on this module (not its children), so that a caller may take
  // a path that skips call() only where no hook can tell.
  bool has_hooks() const;
  template <class F>
  HookHandle register_forward_pre_hook(F&& fn) {
    if constexpr (std::is_void_v<std::invoke_result_t<F&, Module&, const Tensor&>>) {
      return add_forward_pre_hook([f = std::forward<F>(fn)](Module& m, const Tensor& x) mutable {
        f(m, x);
        return Tensor();
      });
    } else {
      return add_forward_pre_hook(ForwardPreHook(std::forward<F>(fn)));
    }
  }
  template <class F>
  HookHandle register_forward_hook(F&& fn) {
    if constexpr (std::is_void_v<std::invoke_result_t<F&, Module&, const Tensor&, const Tensor&>>) {
      return add_forward_hook(
          [f = std::forward<F>(fn)](Module& m, const Tensor& x, const Tensor& y) mutable {
            f(m, x, y);
            return Tensor();
          });
    } else {
      return add_forward_hook(ForwardHook(std::forward<F>(fn)));
    }
  }
  template <class F>
  HookHandle register_full_backward_hook(F&& fn) {
    using Grads = std::vector<Tensor>;
    if constexpr (std::is_void_v<std::invoke_result_t<F&, Module&, const Grads&, const Grads&>>) {
      return add_backward_hook(
          [f = std::forward<F>(fn)](Module& m, const Grads& gi, const Grads& go) mutable {
            f(m, gi, go);
            return Grads();
          });
    } else {
      return add_backward_hook(BackwardHook(std::forward<F>(fn)));
    }
  }

  // ---- printing ----
  // The part inside the parentheses of this module's line when printed:
  // "in_features=4, out_features=8, bias=True". Empty by default.
  virtual std::string extra_repr() const { return {}; }

 protected:
  // Own registries (not recursive), for containers and custom walks.
  const OrderedDict<Tensor>& own_parameters() const { return parameters_; }
  const OrderedDict<Tensor>& own_buffers() const { return buffers_; }
  const OrderedDict<std::shared_ptr<Module>>& own_children() const { return children_; }
  // Replaces parameter `name` with a persistent buffer of the same name
  // holding `tensor` (a weight stored for inference only, which trains no
  // more); IndexError when there is no such parameter. Returns the buffer.
  Tensor parameter_to_buffer(const std::string& name, Tensor tensor);

 private:
  struct Hooks;

  void register_module_impl(std::string name, std::shared_ptr<Module> module);
  void replace_module_impl(const std::string& name, std::shared_ptr<Module> module);
  void check_new_name(const std::string& name, const char* what) const;
  HookHandle add_forward_pre_hook(ForwardPreHook fn);
  HookHandle add_forward_hook(ForwardHook fn);
  HookHandle add_backward_hook(BackwardHook fn);
  // Pre-order walk over distinct modules (PyTorch's named_modules memo).
  void walk(const std::string& prefix,
            std::unordered_set<const Module*>& seen,
            const std::function<void(const std::string&, const Module&)>& fn) const;
  OrderedDict<Tensor> named_tensors(OrderedDict<Tensor> Module::*registry, bool recurse) const;
  void convert_tensors(const std::function<Tensor(const Tensor&)>& convert);
  void collect_state(const std::string& prefix, StateDict& out) const;

  std::string name_;
  bool training_ = true;
  OrderedDict<Tensor> parameters_;  // may hold undefined placeholders
  OrderedDict<Tensor> buffers_;
  std::vector<std::string> non_persistent_;
  OrderedDict<std::shared_ptr<Module>> children_;
  std::shared_ptr<Hooks> hooks_;
};

// Prints the module tree as PyTorch does:
//   Net(
//     (fc): Linear(in_features=4, out_features=8, bias=True)
//     (act): ReLU()
//   )
std::ostream& operator<<(std::ostream& os, const Module& module);

}  // namespace stride::nn
