#include "stride/nn/module.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <new>
#include <numeric>
#include <ostream>
#include <sstream>
#include <typeinfo>
#include <unordered_set>

#include "autograd/node.h"
#include "core/check.h"
#include "core/layout.h"
#include "stride/allocator.h"
#include "stride/ops.h"

namespace stride::nn {

namespace detail {

void throw_missing_key(const std::string& key,
                       const std::vector<std::string>& keys,
                       const char* what) {
  std::ostringstream os;
  os << "[" << what << "] no key '" << key << "'; ";
  if (keys.empty()) {
    os << "it is empty.";
  } else {
    os << "the " << keys.size() << " keys are: ";
    const size_t shown = std::min<size_t>(keys.size(), 20);
    for (size_t i = 0; i < shown; ++i) os << (i ? ", " : "") << keys[i];
    if (shown < keys.size()) os << ", ... (" << keys.size() - shown << " more)";
    os << ".";
  }
  throw IndexError(os.str());
}

void throw_repeated_key(const std::string& key, const char* what) {
  throw ValueError(::stride::detail::str_cat("[", what, "] the key '", key,
                                             "' is already present; keys must be unique."));
}

}  // namespace detail

namespace {

std::string join_name(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

std::string demangled_class_name(const std::type_info& type) {
  int status = 0;
  char* raw = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
  std::string full = status == 0 && raw ? raw : type.name();
  std::free(raw);
  // "stride::nn::Linear" -> "Linear"; template arguments keep their namespaces.
  const size_t angle = full.find('<');
  const size_t colon = full.rfind("::", angle);
  return colon == std::string::npos ? full : full.substr(colon + 2);
}

// Note [Replacing a tensor's data in place]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Module::to must change the dtype of parameters that other code already
// holds (members, optimizers), so it keeps their TensorImpl and swaps what it
// points at (PyTorch's Variable::set_data, TensorImpl::set_data here), so
// that every handle to it sees the converted tensor.
void set_data(const Tensor& dst, const Tensor& src) {
  TensorImpl* impl = dst.impl();
  // The leaf's accumulator (if a graph still holds it) expects the old dtype.
  if (auto* meta = autograd::get_autograd_meta(*impl); meta && src.dtype() != dst.dtype()) {
    meta->grad_accumulator.reset();
  }
  impl->set_data(*src.impl());
}

}  // namespace

// ---- hooks ----

struct Module::Hooks {
  int next_id = 0;
  std::vector<std::pair<int, ForwardPreHook>> pre;
  std::vector<std::pair<int, ForwardHook>> forward;
  std::vector<std::pair<int, BackwardHook>> backward;
};

namespace {

template <class Fn>
HookHandle add_hook(const std::shared_ptr<void>& owner,
                    std::vector<std::pair<int, Fn>>& list,
                    int id,
                    Fn fn) {
  list.emplace_back(id, std::move(fn));
  std::weak_ptr<void> weak = owner;
  auto* list_ptr = &list;
  return HookHandle([weak, list_ptr, id] {
    if (auto alive = weak.lock()) {  // the list lives as long as its owner
      std::erase_if(*list_ptr, [id](const auto& h) { return h.first == id; });
    }
  });
}

}  // namespace

bool Module::has_hooks() const {
  return !hooks_->pre.empty() || !hooks_->forward.empty() || !hooks_->backward.empty();
}

HookHandle Module::add_forward_pre_hook(ForwardPreHook fn) {
  STRIDE_CHECK(fn, ValueError, "[Module::register_forward_pre_hook] the hook is empty.");
  return add_hook(hooks_, hooks_->pre, hooks_->next_id++, std::move(fn));
}

HookHandle Module::add_forward_hook(ForwardHook fn) {
  STRIDE_CHECK(fn, ValueError, "[Module::register_forward_hook] the hook is empty.");
  return add_hook(hooks_, hooks_->forward, hooks_->next_id++, std::move(fn));
}

HookHandle Module::add_backward_hook(BackwardHook fn) {
  STRIDE_CHECK(fn, ValueError, "[Module::register_full_backward_hook] the hook is empty.");
  return add_hook(hooks_, hooks_->backward, hooks_->next_id++, std::move(fn));
}

// ---- construction, calling ----

Module::Module(std::string name) : name_(std::move(name)), hooks_(std::make_shared<Hooks>()) {}

std::string Module::name() const {
  return name_.empty() ? demangled_class_name(typeid(*this)) : name_;
}

Tensor Module::forward(const Tensor&) {
  STRIDE_CHECK(false, NotImplementedError, "[", name(),
               "] has no single-tensor forward(). Hint: containers such as ModuleList and "
               "ModuleDict are not callable; a module with several inputs is called through its "
               "own forward(...) overload.");
  return {};
}

// Note [Full backward hooks]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~
// As PyTorch's BackwardHook: the input is replaced by an identity view before
// forward() and the output by another after the forward hooks, so that
// gradients reaching these views belong to this call alone. A tensor hook on
// the output view records grad_output; a tensor hook on the input view then
// receives grad_input, runs the module's backward hooks (which may replace
// it) and returns the result. When the input does not require grad, the hooks
// run from the output view with an undefined grad_input. Hooks are looked up
// when the gradient arrives, so one removed after forward() no longer runs.
Tensor Module::operator()(const Tensor& input) {
  if (!has_hooks()) return forward(input);
  Tensor x = input;
  for (const auto& hook : std::vector(hooks_->pre)) {
    Tensor replaced = hook.second(*this, x);
    if (replaced.defined()) x = replaced;
  }

  struct BackwardState {
    std::vector<Tensor> grad_output;
    bool input_hooked = false;
  };
  std::shared_ptr<BackwardState> state;
  std::weak_ptr<Hooks> weak_hooks = hooks_;
  auto run_backward_hooks = [weak_hooks, self = this](const std::vector<Tensor>& grad_input,
                                                      const std::vector<Tensor>& grad_output) {
    std::vector<Tensor> gi = grad_input;
    auto hooks = weak_hooks.lock();  // null once the module is gone
    if (!hooks) return gi;
    for (const auto& hook : std::vector(hooks->backward)) {
      std::vector<Tensor> replaced = hook.second(*self, gi, grad_output);
      if (replaced.empty()) continue;
      STRIDE_CHECK(replaced.size() == gi.size(), ValueError, "[", self->name(),
                   "] a full backward hook returned ", replaced.size(),
                   " gradients; expected one per module input (", gi.size(), ").");
      gi = std::move(replaced);
    }
    return gi;
  };

  if (!hooks_->backward.empty() && GradMode::is_enabled()) {
    state = std::make_shared<BackwardState>();
    if (x.defined() && x.requires_grad()) {
      x = x.view(x.sizes());
      state->input_hooked = true;
      x.register_hook([state, run_backward_hooks](const Tensor& grad) {
        std::vector<Tensor> gi = run_backward_hooks({grad}, state->grad_output);
        return gi[0].is_same(grad) ? Tensor() : gi[0];
      });
    }
  }

  Tensor y = forward(x);
  for (const auto& hook : std::vector(hooks_->forward)) {
    Tensor replaced = hook.second(*this, x, y);
    if (replaced.defined()) y = replaced;
  }

  if (state && y.defined() && y.requires_grad()) {
    y = y.view(y.sizes());
    y.register_hook([state, run_backward_hooks](const Tensor& grad) {
      state->grad_output = {grad};
      if (!state->input_hooked) run_backward_hooks({Tensor()}, state->grad_output);
      return Tensor();
    });
  }
  return y;
}

// ---- registration ----

void Module::check_new_name(const std::string& name, const char* what) const {
  STRIDE_CHECK(!name.empty(), ValueError, "[", this->name(), "] register_", what,
               ": the name must not be empty.");
  STRIDE_CHECK(name.find('.') == std::string::npos, ValueError, "[", this->name(), "] register_",
               what, ": the name '", name,
               "' contains '.', which separates names in dotted paths. Hint: register a "
               "submodule for the prefix instead.");
  const char* existing = parameters_.contains(name) ? "parameter"
                         : buffers_.contains(name)  ? "buffer"
                         : children_.contains(name) ? "submodule"
                                                    : nullptr;
  STRIDE_CHECK(existing == nullptr, ValueError, "[", this->name(), "] register_", what, ": a ",
               existing, " named '", name,
               "' is already registered. Hint: names are unique across a module's parameters, "
               "buffers and submodules.");
}

Tensor Module::register_parameter(std::string name, Tensor tensor, bool requires_grad) {
  check_new_name(name, "parameter");
  if (tensor.defined()) {
    if (!tensor.is_leaf()) tensor = tensor.detach();
    STRIDE_CHECK(!requires_grad || tensor.is_floating_point(), DTypeError, "[", this->name(),
                 "] register_parameter: parameter '", name,
                 "' must be floating-point to require grad; got ", to_string(tensor.dtype()),
                 ". Hint: register it with requires_grad=false, or as a buffer.");
    tensor.requires_grad_(requires_grad);
  }
  parameters_.insert(std::move(name), tensor);
  return tensor;
}

Tensor Module::register_buffer(std::string name, Tensor tensor, bool persistent) {
  check_new_name(name, "buffer");
  if (!persistent) non_persistent_.push_back(name);
  buffers_.insert(std::move(name), tensor);
  return tensor;
}

void Module::register_module_impl(std::string name, std::shared_ptr<Module> module) {
  check_new_name(name, "module");
  STRIDE_CHECK(module != nullptr, ValueError, "[", this->name(), "] register_module: module '",
               name, "' is null.");
  STRIDE_CHECK(module.get() != this, ValueError, "[", this->name(), "] register_module: '", name,
               "' is the module itself; a module cannot be its own child.");
  children_.insert(std::move(name), std::move(module));
}

Tensor Module::replace_parameter(const std::string& name, Tensor tensor) {
  Tensor* slot = parameters_.find(name);
  if (!slot) detail::throw_missing_key(name, parameters_.keys(), "Module::replace_parameter");
  const bool requires_grad = slot->defined() ? slot->requires_grad() : true;
  if (tensor.defined()) {
    if (!tensor.is_leaf()) tensor = tensor.detach();
    STRIDE_CHECK(!requires_grad || tensor.is_floating_point(), DTypeError, "[", this->name(),
                 "] replace_parameter: parameter '", name,
                 "' requires grad, so it must be floating-point; got ", to_string(tensor.dtype()),
                 ".");
    tensor.requires_grad_(requires_grad);
  }
  *slot = tensor;
  return tensor;
}

Tensor Module::parameter_to_buffer(const std::string& name, Tensor tensor) {
  if (!parameters_.contains(name))
    detail::throw_missing_key(name, parameters_.keys(), "Module::parameter_to_buffer");
  parameters_.erase(name);
  return register_buffer(name, tensor.is_leaf() ? tensor : tensor.detach());
}

void Module::replace_module_impl(const std::string& name, std::shared_ptr<Module> module) {
  auto* slot = children_.find(name);
  if (!slot) detail::throw_missing_key(name, children_.keys(), "Module::replace_module");
  STRIDE_CHECK(module != nullptr && module.get() != this, ValueError, "[", this->name(),
               "] replace_module: '", name, "' must be another, non-null module.");
  *slot = std::move(module);
}

// ---- walks ----

void Module::walk(const std::string& prefix,
                  std::unordered_set<const Module*>& seen,
                  const std::function<void(const std::string&, const Module&)>& fn) const {
  if (!seen.insert(this).second) return;
  fn(prefix, *this);
  for (const auto& [name, child] : children_) child->walk(join_name(prefix, name), seen, fn);
}

OrderedDict<Tensor> Module::named_tensors(OrderedDict<Tensor> Module::*registry,
                                          bool recurse) const {
  OrderedDict<Tensor> out;
  std::unordered_set<const TensorImpl*> seen_tensors;
  auto visit = [&](const std::string& prefix, const Module& m) {
    for (const auto& [name, t] : m.*registry) {
      if (t.defined() && seen_tensors.insert(t.impl()).second) {
        out.insert(join_name(prefix, name), t);
      }
    }
  };
  if (recurse) {
    std::unordered_set<const Module*> seen_modules;
    walk("", seen_modules, visit);
  } else {
    visit("", *this);
  }
  return out;
}

OrderedDict<Tensor> Module::named_parameters(bool recurse) const {
  return named_tensors(&Module::parameters_, recurse);
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  return named_parameters(recurse).values();
}

OrderedDict<Tensor> Module::named_buffers(bool recurse) const {
  return named_tensors(&Module::buffers_, recurse);
}

std::vector<Tensor> Module::buffers(bool recurse) const {
  return named_buffers(recurse).values();
}

std::vector<std::shared_ptr<Module>> Module::children() const {
  std::vector<std::shared_ptr<Module>> out;
  std::unordered_set<const Module*> seen;
  for (const auto& [name, child] : children_) {
    if (seen.insert(child.get()).second) out.push_back(child);
  }
  return out;
}

OrderedDict<std::shared_ptr<Module>> Module::named_children() const {
  OrderedDict<std::shared_ptr<Module>> out;
  std::unordered_set<const Module*> seen;
  for (const auto& [name, child] : children_) {
    if (seen.insert(child.get()).second) out.insert(name, child);
  }
  return out;
}

OrderedDict<std::shared_ptr<Module>> Module::named_modules(const std::string& prefix,
                                                           bool include_self) {
  OrderedDict<std::shared_ptr<Module>> out;
  std::unordered_set<const Module*> seen{this};
  if (include_self) {
    std::shared_ptr<Module> self = weak_from_this().lock();
    // Not owned by a shared_ptr: a non-owning alias (aliasing constructor).
    if (!self) self = std::shared_ptr<Module>(std::shared_ptr<Module>(), this);
    out.insert(prefix, std::move(self));
  }
  std::function<void(const Module&, const std::string&)> rec = [&](const Module& m,
                                                                   const std::string& p) {
    for (const auto& [name, child] : m.children_) {
      if (!seen.insert(child.get()).second) continue;
      const std::string child_name = join_name(p, name);
      out.insert(child_name, child);
      rec(*child, child_name);
    }
  };
  rec(*this, prefix);
  return out;
}

std::vector<std::shared_ptr<Module>> Module::modules(bool include_self) {
  return named_modules({}, include_self).values();
}

void Module::apply(const std::function<void(Module&)>& fn) {
  for (const auto& child : children()) child->apply(fn);
  fn(*this);
}

int64_t Module::num_parameters(bool trainable_only) const {
  int64_t n = 0;
  for (const Tensor& p : parameters()) {
    if (!trainable_only || p.requires_grad()) n += p.numel();
  }
  return n;
}

// ---- modes, conversion, gradients ----

Module& Module::train(bool on) {
  training_ = on;
  for (const auto& [name, child] : children_) child->train(on);
  return *this;
}

void Module::convert_tensors(const std::function<Tensor(const Tensor&)>& convert) {
  NoGradGuard no_grad;
  std::unordered_set<const TensorImpl*> seen;
  for (const auto& module : modules()) {
    for (auto* registry : {&module->parameters_, &module->buffers_}) {
      for (const auto& [name, t] : *registry) {
        if (!t.defined() || !seen.insert(t.impl()).second) continue;
        Tensor grad = t.grad();
        Tensor converted = convert(t);
        if (!converted.is_same(t)) set_data(t, converted);
        if (grad.defined()) {
          Tensor converted_grad = convert(grad);
          if (!converted_grad.is_same(grad)) Tensor(t).mutable_grad() = converted_grad;
        }
      }
    }
  }
}

Module& Module::to(ScalarType dtype) {
  STRIDE_CHECK(is_floating_point(dtype), ValueError, "[", name(),
               "] to(dtype) expects a floating-point dtype; got ", to_string(dtype),
               ". Hint: Module::to converts only floating-point parameters and buffers, as "
               "PyTorch does; convert integer tensors individually.");
  convert_tensors([dtype](const Tensor& t) {
    if (!t.is_floating_point() || t.dtype() == dtype) return t;
    // In t's memory layout when that is dense (PyTorch's preserve_format).
    return ::stride::detail::empty_preserving_strides(t, TensorOptions(dtype).device(t.device()))
        .copy_(t);
  });
  return *this;
}

Module& Module::to(Device device) {
  convert_tensors([device](const Tensor& t) { return t.to(device); });
  return *this;
}

Module& Module::to_empty(Device device) {
  convert_tensors([device](const Tensor& t) {
    return ::stride::detail::empty_preserving_strides(t, t.options().device(device));
  });
  return *this;
}

void Module::reset_all_parameters(Generator* gen) {
  NoGradGuard no_grad;
  for (const std::shared_ptr<Module>& m : modules()) m->reset_parameters(gen);
}

void Module::pack_parameters() {
  NoGradGuard no_grad;
  const std::vector<Tensor> params = parameters();
  if (params.empty()) return;
  std::vector<DimVector> shapes;
  for (const Tensor& p : params) {
    // One dtype and device per block: a mixed model packs nothing.
    if (p.dtype() != params[0].dtype() || p.device() != params[0].device()) return;
    shapes.emplace_back(p.sizes());
  }
  const std::vector<Tensor> packed =
      empty_packed(shapes, TensorOptions(params[0].dtype()).device(params[0].device()));
  // Each parameter's old memory goes back to the OS as soon as it is copied,
  // so the process never holds two copies of the weights (the block fills
  // page by page as it is written); cached, nothing of those sizes might
  // ever reuse it (decoding).
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor(packed[i]).copy_(params[i]);
    set_data(params[i], packed[i]);
    empty_cpu_cache();
  }
}

void Module::zero_grad(bool set_to_none) {
  NoGradGuard no_grad;
  for (Tensor p : parameters()) {
    Tensor& g = p.mutable_grad();
    if (!g.defined()) continue;
    if (set_to_none) {
      g = Tensor();
    } else {
      if (!g.is_leaf()) g.detach_();
      g.zero_();
    }
  }
}

// ---- state ----

void Module::collect_state(const std::string& prefix, StateDict& out) const {
  for (const auto& [name, t] : parameters_) {
    if (t.defined()) out.insert(prefix + name, t.detach());
  }
  for (const auto& [name, t] : buffers_) {
    const bool persistent =
        std::find(non_persistent_.begin(), non_persistent_.end(), name) == non_persistent_.end();
    if (t.defined() && persistent) out.insert(prefix + name, t.detach());
  }
  for (const auto& [name, child] : children_) child->collect_state(prefix + name + ".", out);
}

StateDict Module::state_dict() const {
  StateDict out;
  collect_state("", out);
  return out;
}

LoadStateDictResult Module::load_state_dict(const StateDict& state, bool strict) {
  const StateDict own = state_dict();
  LoadStateDictResult result;
  std::vector<std::string> mismatched;
  for (const auto& [key, dst] : own) {
    const Tensor* src = state.find(key);
    if (!src) {
      result.missing_keys.push_back(key);
    } else if (!src->defined()) {
      mismatched.push_back(key + " expects " + shape_str(dst.sizes()) +
                           "; got an undefined tensor");
    } else if (src->sizes() != dst.sizes()) {
      mismatched.push_back(key + " expects " + shape_str(dst.sizes()) + "; got " +
                           shape_str(src->sizes()));
    }
  }
  for (const auto& [key, src] : state) {
    if (!own.contains(key)) result.unexpected_keys.push_back(key);
  }

  const bool key_errors =
      strict && (!result.missing_keys.empty() || !result.unexpected_keys.empty());
  if (key_errors || !mismatched.empty()) {
    std::ostringstream os;
    os << "[" << name() << "] load_state_dict: the state dict does not fit the module:";
    auto list = [&os](const char* what, const std::vector<std::string>& keys) {
      if (keys.empty()) return;
      os << "\n  " << what << " (" << keys.size() << "): ";
      for (size_t i = 0; i < keys.size(); ++i) os << (i ? ", " : "") << keys[i];
    };
    if (strict) {
      list("missing keys", result.missing_keys);
      list("unexpected keys", result.unexpected_keys);
    }
    list("shape mismatches", mismatched);
    os << "\nHint: ";
    if (key_errors) {
      os << "load_state_dict(state, /*strict=*/false) loads the matching keys and returns the "
            "missing and unexpected ones; ";
    }
    os << "shapes must match even when not strict (build the module with the configuration "
          "the state dict was saved from). Nothing was loaded.";
    throw StateDictError(os.str());
  }

  NoGradGuard no_grad;
  for (const auto& [key, dst] : own) {
    if (const Tensor* src = state.find(key)) Tensor(dst).copy_(*src);
  }
  return result;
}

// ---- printing ----

namespace {

void print_module(std::ostream& os, const Module& m, int indent) {
  os << m.name() << "(";
  const std::string extra = m.extra_repr();
  const auto children = m.named_children();
  if (children.empty()) {
    os << extra << ")";
    return;
  }
  const std::string pad(size_t(indent + 2), ' ');
  os << "\n";
  if (!extra.empty()) os << pad << extra << "\n";
  for (const auto& [name, child] : children) {
    os << pad << "(" << name << "): ";
    print_module(os, *child, indent + 2);
    os << "\n";
  }
  os << std::string(size_t(indent), ' ') << ")";
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const Module& module) {
  print_module(os, module, 0);
  return os;
}

}  // namespace stride::nn
