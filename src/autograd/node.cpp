#include "autograd/node.h"

#include <cctype>

#include "core/check.h"
#include "core/tensor_impl_utils.h"

namespace stride::autograd {

namespace {

std::atomic<uint64_t> next_sequence_nr{0};

std::string backward_name(const char* op) {
  std::string name;
  bool upper = true;
  for (const char* p = op; *p; ++p) {
    if (*p == '_') {
      upper = true;
      continue;
    }
    name += upper ? char(std::toupper(static_cast<unsigned char>(*p))) : *p;
    upper = false;
  }
  return name + "Backward";
}

}  // namespace

AutogradMeta& materialize_autograd_meta(TensorImpl& impl) {
  if (!impl.autograd_meta()) impl.set_autograd_meta(std::make_unique<AutogradMeta>());
  return *get_autograd_meta(impl);
}

Node::Node(std::string name) : name_(std::move(name)), sequence_nr_(next_sequence_nr++) {}

// Destroying the head of a 100k-node chain would recurse 100k deep through
// shared_ptr destructors and overflow the stack. Instead the outermost
// destructor on a thread collects the next nodes and releases them one at a
// time; nested destructors only add to its list.
Node::~Node() {
  static thread_local std::vector<std::shared_ptr<Node>>* pending = nullptr;
  std::vector<std::shared_ptr<Node>> local;
  const bool outermost = pending == nullptr;
  if (outermost) pending = &local;
  for (Edge& e : next_edges) {
    if (e.fn) pending->push_back(std::move(e.fn));
  }
  if (outermost) {
    while (!local.empty()) {
      std::shared_ptr<Node> n = std::move(local.back());
      local.pop_back();
      n.reset();  // may append n's own next nodes to `local`
    }
    pending = nullptr;
  }
}

Grads FunctionNode::apply(Grads&& grads) {
  STRIDE_CHECK(!released_, Error, "[backward] Trying to backward through the graph a second time (",
               name(),
               "), or to access saved tensors after they have been freed. Saved intermediate "
               "values of the graph are freed when you call backward() or autograd::grad(). "
               "Specify retain_graph=true if you need to backward through the graph a second "
               "time or to access saved tensors after calling backward.");
  STRIDE_ASSERT(backward_, name(), " has no backward function");
  return backward_(grads);
}

void FunctionNode::release_variables() {
  backward_ = nullptr;
  released_ = true;
}

AccumulateGrad::AccumulateGrad(Tensor variable)
    : Node("AccumulateGrad"), variable_(std::move(variable)) {
  num_outputs = 1;
}

namespace {
AccumulateGrad::AccumulateFn accumulate_fn = nullptr;
}  // namespace

void AccumulateGrad::set_accumulate(AccumulateFn fn) {
  accumulate_fn = fn;
}

Grads AccumulateGrad::apply(Grads&& grads) {
  Tensor g = std::move(grads[0]);
  if (!g.defined()) return {};
  STRIDE_ASSERT(accumulate_fn != nullptr,
                "AccumulateGrad: the engine registered no accumulation (src/engine/engine.cpp)");
  accumulate_fn(variable_, std::move(g));
  return {};
}

SavedTensor SavedTensor::input(const Tensor& t) {
  SavedTensor s;
  s.data_ = t;
  s.version_ = t.version();
  return s;
}

SavedTensor SavedTensor::output(const Tensor& t) {
  SavedTensor s;
  s.data_ = t.detach();
  s.version_ = t.version();
  s.is_output_ = true;
  if (auto* m = get_autograd_meta(*t.impl())) {
    s.node_ = m->grad_fn;
    s.output_nr_ = m->output_nr;
  }
  return s;
}

Tensor SavedTensor::get() const {
  STRIDE_CHECK(data_.version() == version_, Error,
               "[backward] one of the tensors needed for gradient computation has been modified "
               "by an inplace operation: a ",
               to_string(data_.dtype()), " tensor of shape ", shape_str(data_.sizes()),
               " is at version ", data_.version(), "; expected version ", version_,
               " instead. Hint: clone() the tensor before modifying it in place, or use the "
               "out-of-place op.");
  if (!is_output_ || !GradMode::is_enabled()) return data_;
  // Building a graph of the backward: reconnect the output to its node.
  auto node = node_.lock();
  if (!node) return data_;
  Tensor t = detail::make_view(data_, data_.sizes(), data_.strides(), data_.storage_offset());
  AutogradMeta& m = materialize_autograd_meta(*t.impl());
  m.grad_fn = std::move(node);
  m.output_nr = output_nr_;
  return t;
}

Edge gradient_edge(const Tensor& t) {
  AutogradMeta* m = get_autograd_meta(*t.impl());
  if (!m) return {};
  if (m->grad_fn) return Edge{m->grad_fn, m->output_nr};
  if (!m->requires_grad) return {};
  auto acc = m->grad_accumulator.lock();
  if (!acc) {
    acc = std::make_shared<AccumulateGrad>(t);
    m->grad_accumulator = acc;
  }
  return Edge{acc, 0};
}

namespace {

// `node_name` is the grad_fn's name; `op` names the forward op in anomaly
// mode's context. A null output is counted (its output_nr is skipped) but
// gets no grad_fn: a custom function's non-differentiable output.
template <class Inputs, class Outputs>
std::shared_ptr<FunctionNode> make_node_for(std::string node_name,
                                            const std::string& op,
                                            const Inputs& inputs,
                                            const Outputs& outputs) {
  if (!GradMode::is_enabled()) return nullptr;
  bool any = false;
  // An undefined optional input (a missing bias) is passed like nullptr.
  auto present = [](const Tensor* t) { return t && t->defined(); };
  for (const Tensor* t : inputs) any = any || (present(t) && requires_grad(*t));
  if (!any) return nullptr;
  auto node = std::make_shared<FunctionNode>(std::move(node_name));
  node->num_outputs = uint32_t(outputs.size());
  for (const Tensor* t : inputs) {
    if (present(t) && requires_grad(*t)) {
      node->next_edges.push_back(gradient_edge(*t));
      node->input_meta.push_back({t->sizes().dims(), t->dtype(), t->device()});
    } else {
      node->next_edges.push_back({});
      node->input_meta.push_back({present(t) ? t->sizes().dims() : DimVector{},
                                  present(t) ? t->dtype() : kFloat32,
                                  present(t) ? t->device() : Device(kCPU)});
    }
  }
  if (AnomalyMode::is_enabled()) {
    std::string ctx = "forward op " + op + " with inputs ";
    bool first = true;
    for (const Tensor* t : inputs) {
      if (!present(t)) continue;
      ctx += (first ? "" : ", ") + shape_str(t->sizes());
      first = false;
    }
    node->forward_context = ctx;
  }
  uint32_t nr = 0;
  for (const Tensor* t : outputs) {
    if (!t) {
      ++nr;
      continue;
    }
    AutogradMeta& m = materialize_autograd_meta(*t->impl());
    m.grad_fn = node;
    m.output_nr = nr++;
    m.requires_grad = true;
  }
  return node;
}

}  // namespace

std::shared_ptr<FunctionNode> make_node(const char* op,
                                        std::initializer_list<const Tensor*> inputs,
                                        std::initializer_list<const Tensor*> outputs) {
  return make_node_for(backward_name(op), op, inputs, outputs);
}

std::shared_ptr<FunctionNode> make_node(const char* op,
                                        const std::vector<const Tensor*>& inputs,
                                        std::initializer_list<const Tensor*> outputs) {
  return make_node_for(backward_name(op), op, inputs, outputs);
}

std::shared_ptr<FunctionNode> make_node(const char* op,
                                        const std::vector<const Tensor*>& inputs,
                                        const std::vector<const Tensor*>& outputs) {
  return make_node_for(backward_name(op), op, inputs, outputs);
}

std::shared_ptr<FunctionNode> make_named_node(std::string node_name,
                                              const std::vector<const Tensor*>& inputs,
                                              const std::vector<const Tensor*>& outputs) {
  std::string op = node_name;
  return make_node_for(std::move(node_name), op, inputs, outputs);
}

void check_no_grad_out(const char* op, std::initializer_list<const Tensor*> inputs) {
  if (!GradMode::is_enabled()) return;
  for (const Tensor* t : inputs) {
    STRIDE_CHECK(!requires_grad(*t), Error, "[", op,
                 "] out= forms do not support automatic differentiation, but an argument "
                 "requires grad. Hint: use the out-of-place form, or run under NoGradGuard.");
  }
}

bool check_inplace(const Tensor& self,
                   const char* op,
                   std::initializer_list<const Tensor*> others) {
  if (!GradMode::is_enabled()) return false;
  bool any = requires_grad(self);
  for (const Tensor* t : others) any = any || (t && t->defined() && requires_grad(*t));
  if (!any) return false;
  STRIDE_CHECK(!(self.is_leaf() && self.requires_grad()), Error, "[", op,
               "] a leaf tensor that requires grad is being used in an in-place operation. Hint: "
               "do it under NoGradGuard (as optimizers do), or work on a clone().");
  STRIDE_CHECK(!self.is_view(), Error, "[", op,
               "] in-place operations on a view are not differentiable in stride: the view's "
               "base would need its history rewritten. Hint: use the out-of-place op, or clone() "
               "the view first.");
  return true;
}

}  // namespace stride::autograd
