// The autograd graph: Node (a backward function), Edge (which input of which
// node a gradient flows to), AutogradMeta (a tensor's place in the graph) and
// SavedTensor (a tensor kept for backward, checked against in-place changes).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "stride/autograd.h"
#include "stride/tensor.h"

namespace stride::autograd {

struct AutogradMeta final : AutogradMetaInterface {
  bool requires_grad = false;
  Tensor grad;
  std::shared_ptr<Node> grad_fn;  // null for leaves
  uint32_t output_nr = 0;
  std::weak_ptr<Node> grad_accumulator;  // leaves: their AccumulateGrad node
  bool retains_grad = false;
  struct LeafHook {
    int id;
    Hook fn;
  };
  std::vector<LeafHook> hooks;  // leaves only; non-leaf hooks live on grad_fn
  struct PostAccumulateHook {
    int id;
    std::function<void(Tensor&)> fn;
  };
  std::vector<PostAccumulateHook> post_accumulate_hooks;  // leaves only
};

// t's AutogradMeta, or null (c10's get_autograd_meta). Only autograd sets a
// tensor's AutogradMetaInterface, always to an AutogradMeta.
inline AutogradMeta* get_autograd_meta(const TensorImpl& impl) {
  return static_cast<AutogradMeta*>(impl.autograd_meta());
}
// As get_autograd_meta, creating an empty AutogradMeta on first use.
AutogradMeta& materialize_autograd_meta(TensorImpl& impl);

// The backward of an op, as a closure over what it saved.
class FunctionNode final : public Node {
 public:
  using Backward = std::function<Grads(const Grads&)>;
  using Node::Node;
  void set_backward(Backward fn) { backward_ = std::move(fn); }
  Grads apply(Grads&& grads) override;
  void release_variables() override;

 private:
  Backward backward_;
  bool released_ = false;
};

// Note [Two autograd layers]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Ops record into the graph (Node, edges, saved tensors, grad mode), and the
// engine that runs the graph computes with ops (summing gradients, reducing
// broadcast ones, the 1 that backward() starts from). So autograd is two
// layers, as PyTorch's is split between c10's autograd-meta interface and
// torch/csrc/autograd: src/autograd/ (this graph) below the ops, and
// src/engine/ (the engine, custom functions, gradcheck) above them; the
// build checks at link time that neither calls the other upward
// (cmake/layers.cmake). The one place the graph needs arithmetic is a
// leaf's AccumulateGrad, whose sum the engine registers at load, as a
// backend registers its kernels on the stubs the ops call.
//
// Accumulates into a leaf's .grad. The graph layer creates and links it; the
// sum, which runs ops (recorded under create_graph), is the engine's, set
// at load (Note [Two autograd layers]).
class AccumulateGrad final : public Node {
 public:
  // Adds `grad` into `variable`'s .grad, running its hooks.
  using AccumulateFn = void (*)(Tensor& variable, Tensor grad);
  static void set_accumulate(AccumulateFn fn);

  explicit AccumulateGrad(Tensor variable);
  Grads apply(Grads&& grads) override;
  const Tensor& variable() const { return variable_; }

 private:
  Tensor variable_;
};

// A tensor saved for backward. Saving an input keeps the tensor itself;
// saving an output keeps an alias outside the graph plus a weak link to its
// node (a strong one would make a cycle) and reconnects on get() when a
// graph of the backward is being built.
class SavedTensor {
 public:
  SavedTensor() = default;
  static SavedTensor input(const Tensor& t);
  static SavedTensor output(const Tensor& t);
  // The saved tensor; throws if it was modified in place since it was saved.
  Tensor get() const;
  bool defined() const { return data_.defined(); }

 private:
  Tensor data_;
  std::weak_ptr<Node> node_;
  uint32_t output_nr_ = 0;
  uint64_t version_ = 0;
  bool is_output_ = false;
};

// ---- helpers used by op definitions ----

inline bool requires_grad(const Tensor& t) {
  auto* m = t.defined() ? get_autograd_meta(*t.impl()) : nullptr;
  return m && (m->requires_grad || m->grad_fn);
}

// The edge a gradient for `t` flows into: its grad_fn, or its leaf accumulator.
Edge gradient_edge(const Tensor& t);

// When grad mode is on and some input requires grad, creates a FunctionNode
// for op `op` ("mul" -> "MulBackward"), wires its edges to the inputs and
// makes it the grad_fn of each output; else returns null. The caller then
// sets the backward closure (after saving what it needs).
std::shared_ptr<FunctionNode> make_node(const char* op,
                                        std::initializer_list<const Tensor*> inputs,
                                        std::initializer_list<const Tensor*> outputs);
// The same for a number of inputs, or of outputs, known only at run time.
std::shared_ptr<FunctionNode> make_node(const char* op,
                                        const std::vector<const Tensor*>& inputs,
                                        std::initializer_list<const Tensor*> outputs);
std::shared_ptr<FunctionNode> make_node(const char* op,
                                        const std::vector<const Tensor*>& inputs,
                                        const std::vector<const Tensor*>& outputs);

// As make_node, with the node's name given whole (a custom function's
// "ExpBackward"); a null output is counted in the node's outputs but not
// wired (it gets no gradient).
std::shared_ptr<FunctionNode> make_named_node(std::string node_name,
                                              const std::vector<const Tensor*>& inputs,
                                              const std::vector<const Tensor*>& outputs);

// Refuses out= forms when autograd would have to track them (PyTorch does too).
void check_no_grad_out(const char* op, std::initializer_list<const Tensor*> inputs);

// Note [In-place ops and autograd]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// An in-place op that must be recorded (grad mode on, and self or an
// argument requires grad) is computed out of place on a clone of self, so
// that no saved tensor is the memory being overwritten; the result is copied
// into self and self takes the result's place in the graph (its grad_fn).
// Writing into a leaf that requires grad is refused, as in PyTorch, and so is
// a recorded write into a view: stride does not rewrite the base's history
// (PyTorch's CopySlices), so the write is an error rather than a silently
// wrong gradient.
//
// True when the in-place write into `self` must be recorded; throws for the
// refused cases above.
bool check_inplace(const Tensor& self, const char* op, std::initializer_list<const Tensor*> others);

}  // namespace stride::autograd
