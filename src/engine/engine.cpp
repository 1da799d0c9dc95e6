// The backward engine: dependency counting over the reachable graph, then a
// ready queue in reverse creation order (like PyTorch's CPU queue). No
// recursion anywhere, so a chain of 100k ops backpropagates on any stack.
// It computes with ops, above which it sits (Note [Two autograd layers] in
// autograd/node.h).
#include <cmath>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "autograd/node.h"
#include "core/check.h"
#include "ops/reduce.h"
#include "stride/factory.h"
#include "stride/profiler.h"

namespace stride {

namespace autograd {

namespace {

// AccumulateGrad's sum (autograd/node.h), here above the ops it runs.
void accumulate_into_leaf(Tensor& variable, Tensor g) {
  AutogradMeta& meta = materialize_autograd_meta(*variable.impl());
  for (const auto& hook : meta.hooks) {
    Tensor replaced = hook.fn(g);
    if (replaced.defined()) g = replaced;
  }
  if (GradMode::is_enabled()) {  // create_graph: .grad itself is part of a graph
    meta.grad = meta.grad.defined() ? meta.grad.add(g) : g;
  } else if (!meta.grad.defined()) {
    // As PyTorch: a fresh gradient that nothing else holds (no other handle,
    // no view of its storage) becomes .grad as it is; any other is cloned,
    // so that accumulating into .grad later cannot change someone's tensor.
    const bool stealable = g.use_count() == 1 && g.storage().use_count() == 1 &&
                           g.is_contiguous() && variable.is_contiguous() &&
                           g.dtype() == variable.dtype() && !requires_grad(g);
    meta.grad = stealable ? g : g.detach().clone();
  } else {
    meta.grad.add_(g);
  }
  for (const auto& hook : meta.post_accumulate_hooks) hook.fn(variable);
}

[[maybe_unused]] const bool accumulate_registered =
    (AccumulateGrad::set_accumulate(&accumulate_into_leaf), true);

struct Capture {
  Edge edge;
  Tensor grad;
};

// Validates the gradient for input `i` of `node` and reduces a broadcast one.
Tensor validate(const Node& node, size_t i, Tensor g) {
  const InputMeta& meta = node.input_meta[i];
  if (!(g.sizes() == IntArrayRef(meta.shape))) {
    bool broadcastable = g.dim() >= int64_t(meta.shape.size());
    for (size_t d = 0; broadcastable && d < meta.shape.size(); ++d) {
      const int64_t want = meta.shape[meta.shape.size() - 1 - d];
      broadcastable = want == 1 || want == g.size(g.dim() - 1 - int64_t(d));
    }
    STRIDE_CHECK(broadcastable, ShapeError, "[backward] Function ", node.name(),
                 " returned an invalid gradient at index ", i, ": got shape ", shape_str(g.sizes()),
                 " but expected shape compatible with ", shape_str(meta.shape), ".");
    g = detail::sum_to(g, meta.shape);
  }
  if (g.dtype() != meta.dtype) g = g.to(meta.dtype);
  STRIDE_CHECK(g.device() == meta.device, DeviceError, "[backward] Function ", node.name(),
               " returned a gradient on ", g.device().str(), " for an input on ", meta.device.str(),
               ".");
  return g;
}

void check_finite(const Node& node, size_t i, const Tensor& g) {
  if (!g.is_floating_point() || g.device().is_meta()) return;  // meta has no values
  NoGradGuard no_grad;
  const Tensor finite = g.abs().lt(INFINITY);  // false for NaN and inf
  if (finite.sum().item<int64_t>() == g.numel()) return;
  throw Error(detail::str_cat(
      "[anomaly] Function '", node.name(), "' returned nan or inf values in its ", i, "th output",
      node.forward_context.empty() ? std::string() : " (" + node.forward_context + ")",
      ". Hint: the forward op above is where the non-finite gradient first appears."));
}

// a + b for a gradient buffer a. As PyTorch's InputBuffer, b is added into a
// in place when no graph is being recorded and nothing else holds a: no
// other handle, no view of its storage (the same rule as AccumulateGrad's
// stealing), and a dense layout of the sum's shape and dtype. That spares a
// fresh buffer per sum, and so the memory traffic of writing one.
Tensor accumulate(Tensor a, const Tensor& b) {
  if (!a.defined()) return b;
  const bool in_place = !GradMode::is_enabled() && a.use_count() == 1 &&
                        a.storage().use_count() == 1 && a.is_contiguous() &&
                        a.sizes() == b.sizes() && a.dtype() == b.dtype() && !requires_grad(a);
  if (in_place) return a.add_(b);
  return a.add(b);
}

// The reachable graph: each node's owner and how many edges lead into it.
struct GraphCounts {
  std::unordered_map<Node*, int> deps;
  std::unordered_map<Node*, std::shared_ptr<Node>> owner;
};

GraphCounts count_dependencies(const std::vector<Edge>& roots) {
  GraphCounts g;
  std::vector<Node*> stack;
  for (const Edge& e : roots) {
    if (e.valid() && g.owner.emplace(e.fn.get(), e.fn).second) stack.push_back(e.fn.get());
  }
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge& e : n->next_edges) {
      if (!e.valid()) continue;
      ++g.deps[e.fn.get()];
      if (g.owner.emplace(e.fn.get(), e.fn).second) stack.push_back(e.fn.get());
    }
  }
  return g;
}

// With captures (autograd::grad), only nodes that lead to a captured edge
// run: a node is needed if it is a target or any child is needed, found by
// an iterative post-order walk.
std::unordered_set<Node*> nodes_leading_to(const std::vector<Edge>& roots,
                                           const std::vector<Capture>& captures) {
  std::unordered_set<Node*> targets, needed, visited;
  for (const Capture& c : captures) targets.insert(c.edge.fn.get());
  std::vector<std::pair<Node*, size_t>> stack;
  for (const Edge& e : roots) {
    if (!e.valid() || !visited.insert(e.fn.get()).second) continue;
    stack.push_back({e.fn.get(), 0});
    while (!stack.empty()) {
      auto& [n, i] = stack.back();
      if (i < n->next_edges.size()) {
        Node* child = n->next_edges[i++].fn.get();
        if (child && visited.insert(child).second) stack.push_back({child, 0});
        continue;
      }
      bool need = targets.count(n) > 0;
      for (const Edge& next : n->next_edges) {
        need = need || (next.valid() && needed.count(next.fn.get()));
      }
      if (need) needed.insert(n);
      stack.pop_back();
    }
  }
  return needed;
}

// Tensor hooks, retained grads and captures see a node's input gradients
// before it runs.
void run_pre_hooks(Node& node, Grads& grads, bool create_graph, std::vector<Capture>* captures) {
  for (const auto& hook : node.pre_hooks) {
    Tensor& g = grads[hook.output_nr];
    if (!g.defined()) continue;
    Tensor replaced = hook.fn(g);
    if (replaced.defined()) g = replaced;
  }
  for (const auto& [nr, weak] : node.retained) {
    auto impl = weak.lock();
    if (!impl || !grads[nr].defined()) continue;
    AutogradMeta& m = materialize_autograd_meta(*impl);
    Tensor g = create_graph ? grads[nr] : grads[nr].detach();
    m.grad = m.grad.defined() ? m.grad.add(g) : (create_graph ? g : g.clone());
  }
  if (!captures) return;
  for (Capture& c : *captures) {
    if (c.edge.fn.get() == &node && grads[c.edge.input_nr].defined()) {
      c.grad = accumulate(std::move(c.grad), grads[c.edge.input_nr]);
    }
  }
}

// The node's backward on its input gradients (nothing when none is defined);
// frees its saved tensors unless the graph is kept.
Grads apply_node(Node& node, Grads grads, bool keep_graph) {
  Grads outputs;
  bool any = false;
  for (const Tensor& g : grads) any = any || g.defined();
  if (any) {
    profiler::RecordFunction record(node.name().c_str());
    outputs = node.apply(std::move(grads));
  }
  if (!keep_graph) node.release_variables();
  if (!outputs.empty()) {
    STRIDE_ASSERT(outputs.size() == node.next_edges.size(), node.name(), " returned ",
                  outputs.size(), " gradients for ", node.next_edges.size(), " inputs");
  }
  return outputs;
}

void run(const std::vector<Edge>& roots,
         const std::vector<Tensor>& root_grads,
         bool keep_graph,
         bool create_graph,
         std::vector<Capture>* captures) {
  GraphCounts graph = count_dependencies(roots);
  const std::unordered_set<Node*> needed =
      captures ? nodes_leading_to(roots, *captures) : std::unordered_set<Node*>();

  // Input buffers, seeded with the root gradients.
  std::unordered_map<Node*, Grads> buffers;
  auto buffer_of = [&](Node* n) -> Grads& {
    Grads& b = buffers[n];
    if (b.empty()) b.resize(n->num_outputs);
    return b;
  };
  for (size_t i = 0; i < roots.size(); ++i) {
    if (!roots[i].valid()) continue;
    Tensor& slot = buffer_of(roots[i].fn.get())[roots[i].input_nr];
    slot = accumulate(std::move(slot), root_grads[i]);
  }

  auto later_first = [](Node* a, Node* b) { return a->sequence_nr() < b->sequence_nr(); };
  std::priority_queue<Node*, std::vector<Node*>, decltype(later_first)> ready(later_first);
  for (auto& [n, _] : graph.owner) {
    if (graph.deps[n] == 0) ready.push(n);
  }

  GradMode::set_enabled(create_graph);
  while (!ready.empty()) {
    Node* node = ready.top();
    ready.pop();
    Grads grads = std::move(buffer_of(node));
    buffers.erase(node);
    run_pre_hooks(*node, grads, create_graph, captures);
    // autograd::grad leaves leaves' .grad alone and skips what leads nowhere.
    const bool skip = captures && (!needed.count(node) || dynamic_cast<AccumulateGrad*>(node));
    Grads outputs = skip ? Grads() : apply_node(*node, std::move(grads), keep_graph);
    for (size_t i = 0; i < node->next_edges.size(); ++i) {
      const Edge& e = node->next_edges[i];
      if (!e.valid()) continue;
      if (i < outputs.size() && outputs[i].defined()) {
        Tensor g = validate(*node, i, std::move(outputs[i]));
        if (AnomalyMode::is_enabled()) check_finite(*node, i, g);
        Tensor& slot = buffer_of(e.fn.get())[e.input_nr];
        slot = accumulate(std::move(slot), g);
      }
      if (--graph.deps[e.fn.get()] == 0) ready.push(e.fn.get());
    }
  }
}

// The callbacks queued during the backward pass running on this thread, or
// null outside one. A nested backward (a hook calling backward) gets its own.
thread_local std::vector<std::function<void()>>* queued_callbacks = nullptr;

// Walks the graph with a fresh callback queue, then runs what was queued.
void run_with_callbacks(const std::vector<Edge>& roots,
                        const std::vector<Tensor>& root_grads,
                        bool keep_graph,
                        bool create_graph,
                        std::vector<Capture>* captures) {
  std::vector<std::function<void()>> callbacks;
  std::vector<std::function<void()>>* const outer = queued_callbacks;
  queued_callbacks = &callbacks;
  try {
    run(roots, root_grads, keep_graph, create_graph, captures);
  } catch (...) {
    queued_callbacks = outer;
    throw;
  }
  queued_callbacks = outer;
  for (const auto& callback : callbacks) callback();
}

// Restores grad mode even when backward throws.
struct GradModeRestore {
  bool prev = GradMode::is_enabled();
  ~GradModeRestore() { GradMode::set_enabled(prev); }
};

void make_roots(const std::vector<Tensor>& tensors,
                const std::vector<Tensor>& grad_tensors,
                const char* op,
                std::vector<Edge>& roots,
                std::vector<Tensor>& grads) {
  STRIDE_CHECK(grad_tensors.empty() || grad_tensors.size() == tensors.size(), ValueError, "[", op,
               "] got ", grad_tensors.size(), " gradients for ", tensors.size(), " tensors.");
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    STRIDE_CHECK(requires_grad(t), Error, "[", op, "] element ", i,
                 " of tensors does not require grad and does not have a grad_fn. Hint: create "
                 "the leaves with requires_grad_() and do not compute under NoGradGuard.");
    Tensor g = grad_tensors.empty() ? Tensor() : grad_tensors[i];
    if (!g.defined()) {
      STRIDE_CHECK(t.numel() == 1, ShapeError, "[", op,
                   "] grad can be implicitly created only for scalar outputs; got shape ",
                   shape_str(t.sizes()), ". Hint: pass a gradient of the same shape.");
      STRIDE_CHECK(!t.is_complex(), DTypeError, "[", op,
                   "] grad can be implicitly created only for real scalar outputs; got ",
                   to_string(t.dtype()),
                   ". Hint: backward from a real loss, such as abs(z) or "
                   "view_as_real(z).sum().");
      g = empty_like(t).fill_(1);
    } else {
      STRIDE_CHECK(g.sizes() == t.sizes(), ShapeError, "[", op, "] gradient of shape ",
                   shape_str(g.sizes()), " does not match the tensor's shape ",
                   shape_str(t.sizes()), ".");
    }
    roots.push_back(gradient_edge(t));
    grads.push_back(g);
  }
}

}  // namespace

void queue_callback(std::function<void()> callback) {
  STRIDE_CHECK(queued_callbacks != nullptr, Error,
               "[queue_callback] can only be called during a backward pass (from a hook or a "
               "backward function).");
  queued_callbacks->push_back(std::move(callback));
}

void backward(const std::vector<Tensor>& tensors,
              const std::vector<Tensor>& grad_tensors,
              std::optional<bool> retain_graph,
              bool create_graph) {
  GradModeRestore restore;
  std::vector<Edge> roots;
  std::vector<Tensor> grads;
  make_roots(tensors, grad_tensors, "backward", roots, grads);
  run_with_callbacks(roots, grads, retain_graph.value_or(create_graph), create_graph, nullptr);
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs,
                         const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs,
                         std::optional<bool> retain_graph,
                         bool create_graph,
                         bool allow_unused) {
  GradModeRestore restore;
  std::vector<Edge> roots;
  std::vector<Tensor> grads;
  make_roots(outputs, grad_outputs, "autograd::grad", roots, grads);
  std::vector<Capture> captures;
  for (size_t i = 0; i < inputs.size(); ++i) {
    STRIDE_CHECK(requires_grad(inputs[i]), Error, "[autograd::grad] input ", i,
                 " does not require grad.");
    captures.push_back({gradient_edge(inputs[i]), Tensor()});
  }
  run_with_callbacks(roots, grads, retain_graph.value_or(create_graph), create_graph, &captures);
  std::vector<Tensor> result;
  for (size_t i = 0; i < captures.size(); ++i) {
    STRIDE_CHECK(captures[i].grad.defined() || allow_unused, Error, "[autograd::grad] input ", i,
                 " was not used to compute the outputs. Hint: pass allow_unused=true if this is "
                 "expected.");
    result.push_back(captures[i].grad);
  }
  return result;
}

}  // namespace autograd

void Tensor::backward(const Tensor& gradient,
                      std::optional<bool> retain_graph,
                      bool create_graph) const {
  autograd::backward({*this}, {gradient}, retain_graph, create_graph);
}

}  // namespace stride
