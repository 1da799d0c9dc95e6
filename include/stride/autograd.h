// Autograd: a define-by-run graph with PyTorch's semantics.
//
// An op whose input requires grad (and grad mode is on) records a Node whose
// edges point at its inputs' nodes; `backward()` walks the graph in
// dependency order (iteratively: deep graphs do not overflow the stack),
// sums gradients arriving at each node, checks each against the shape,
// dtype and device of the input it belongs to (reducing broadcast gradients),
// and accumulates into the `.grad` of leaves (+=, until zeroed). Saved
// tensors are freed after backward unless `retain_graph`; modifying a saved
// tensor in place makes its backward throw (version counters).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "stride/error.h"
#include "stride/tensor.h"

namespace stride {

// Whether ops record the graph. Thread-local; on by default.
struct GradMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

// Disables recording in a scope (torch.no_grad()).
class NoGradGuard {
 public:
  NoGradGuard() : prev_(GradMode::is_enabled()) { GradMode::set_enabled(false); }
  ~NoGradGuard() { GradMode::set_enabled(prev_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};

// Re-enables recording inside a no-grad scope (torch.enable_grad()).
class EnableGradGuard {
 public:
  EnableGradGuard() : prev_(GradMode::is_enabled()) { GradMode::set_enabled(true); }
  ~EnableGradGuard() { GradMode::set_enabled(prev_); }
  EnableGradGuard(const EnableGradGuard&) = delete;
  EnableGradGuard& operator=(const EnableGradGuard&) = delete;

 private:
  bool prev_;
};

// Inference: nothing is recorded (an alias of NoGradGuard in stride, which
// has no separate inference tensors).
using InferenceModeGuard = NoGradGuard;

// Anomaly mode: nodes remember the forward op and its input shapes, and the
// first NaN/Inf produced in backward throws an error naming them.
struct AnomalyMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

class DetectAnomalyGuard {
 public:
  DetectAnomalyGuard() : prev_(AnomalyMode::is_enabled()) { AnomalyMode::set_enabled(true); }
  ~DetectAnomalyGuard() { AnomalyMode::set_enabled(prev_); }
  DetectAnomalyGuard(const DetectAnomalyGuard&) = delete;
  DetectAnomalyGuard& operator=(const DetectAnomalyGuard&) = delete;

 private:
  bool prev_;
};

namespace autograd {

class Node;
using Grads = std::vector<Tensor>;
using Hook = std::function<Tensor(const Tensor&)>;

struct Edge {
  std::shared_ptr<Node> fn;
  uint32_t input_nr = 0;
  bool valid() const { return fn != nullptr; }
};

// What a gradient flowing to one forward input must look like.
struct InputMeta {
  DimVector shape;
  ScalarType dtype;
  Device device;
};

// A backward function in the graph (a tensor's grad_fn). Its next edges
// point at the nodes of the forward op's inputs.
class Node {
 public:
  explicit Node(std::string name);
  virtual ~Node();  // releases long chains iteratively, see node.cpp
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  const std::string& name() const { return name_; }
  uint64_t sequence_nr() const { return sequence_nr_; }

  // `grads` has one entry per forward output (undefined = no gradient); the
  // result has one entry per next edge (undefined = none flows there).
  virtual Grads apply(Grads&& grads) = 0;
  // Frees saved tensors once the graph will not be walked again.
  virtual void release_variables() {}

  std::vector<Edge> next_edges;
  std::vector<InputMeta> input_meta;  // parallel to next_edges
  uint32_t num_outputs = 1;

  // Hooks registered on this node's forward outputs (non-leaf tensors).
  struct PreHook {
    uint32_t output_nr;
    int id;
    Hook fn;
  };
  std::vector<PreHook> pre_hooks;
  // Non-leaf outputs that asked to keep their gradient (retain_grad).
  std::vector<std::pair<uint32_t, std::weak_ptr<TensorImpl>>> retained;
  // Anomaly mode: the forward op and its input shapes.
  std::string forward_context;

 private:
  std::string name_;
  uint64_t sequence_nr_;
};

// Gradients of `outputs` with respect to `inputs` (torch.autograd.grad).
// `grad_outputs` may be empty for scalar outputs. `.grad` of leaves is not
// touched. An input that does not reach the outputs throws unless
// `allow_unused` (then its gradient is undefined). `retain_graph` defaults to
// `create_graph`.
std::vector<Tensor> grad(const std::vector<Tensor>& outputs,
                         const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {},
                         std::optional<bool> retain_graph = std::nullopt,
                         bool create_graph = false,
                         bool allow_unused = false);

// Backpropagates from several roots at once, accumulating into leaves' .grad.
void backward(const std::vector<Tensor>& tensors,
              const std::vector<Tensor>& grad_tensors = {},
              std::optional<bool> retain_graph = std::nullopt,
              bool create_graph = false);

// Runs `callback` once the current backward() or grad() call has finished
// walking the graph, before it returns (PyTorch's engine queue_callback):
// what DistributedDataParallel uses to wait for its last gradient
// all-reduces. Callbacks run in the order queued; calling this outside a
// backward pass is an error.
void queue_callback(std::function<void()> callback);

// Finite-difference gradient check in float64: for each input that requires
// grad, compares the analytic gradient of sum(fn(inputs) * r) (r a fixed
// random weighting) with central differences of step `eps`. Returns true when
// every entry satisfies |analytic - numeric| <= atol + rtol * |numeric|;
// otherwise throws GradcheckError naming the input, the entry and both
// values. Inputs must be float64.
bool gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
               const std::vector<Tensor>& inputs,
               double eps = 1e-6,
               double atol = 1e-5,
               double rtol = 1e-3);

class GradcheckError : public Error {
 public:
  using Error::Error;
};

// Note [Custom functions]
// ~~~~~~~~~~~~~~~~~~~~~~~
// A differentiable function whose backward the caller writes, as libtorch's
// torch::autograd::Function<T> with its AutogradContext, and what
// stride.autograd.Function in Python is built on. The forward runs without
// recording; record_function then makes one node, named as given
// ("ExpBackward"), the grad_fn of the outputs:
//
//   auto ctx = std::make_shared<autograd::AutogradContext>(std::vector<Tensor>{x});
//   Tensor y;
//   {
//     NoGradGuard no_grad;
//     y = exp(x);
//   }
//   ctx->save_for_backward({y});
//   y = autograd::record_function("ExpBackward", ctx, {x}, {y},
//                                 [](autograd::AutogradContext& c, const Grads& g) {
//                                   return Grads{g[0] * c.saved_tensors()[0]};
//                                 })[0];
//
// or, the same in one call, apply_function("ExpBackward", {x}, forward,
// backward). Backward gets one gradient per output and returns one per
// input (undefined where there is none); it runs with grad mode on under
// create_graph, so a backward written with ops can be differentiated again.
// Saved tensors are checked against in-place changes (as ops' saved tensors
// are) and freed with the graph. An output that is an input, or that already
// requires grad, is recorded as an alias of it, so that the input keeps its
// own place in the graph.
class AutogradContext;
using CustomBackward = std::function<Grads(AutogradContext& ctx, const Grads& grad_outputs)>;

// What a custom function's forward and backward share (torch's ctx).
class AutogradContext {
 public:
  // `inputs` are the forward's arguments, undefined for those that are not
  // tensors (a Python float); needs_input_grad is decided here.
  explicit AutogradContext(const std::vector<Tensor>& inputs);
  ~AutogradContext();
  AutogradContext(const AutogradContext&) = delete;
  AutogradContext& operator=(const AutogradContext&) = delete;

  // Per input: grad mode is on and the input requires grad.
  const std::vector<bool>& needs_input_grad() const;
  // Keeps tensors for backward: inputs, outputs or intermediates (undefined
  // allowed). A second call replaces the first.
  void save_for_backward(std::vector<Tensor> tensors);
  // The saved tensors. Throws if one was modified in place after the
  // function was recorded, or once backward has freed the graph.
  std::vector<Tensor> saved_tensors() const;
  // Outputs that get no grad_fn and do not require grad (indices, masks).
  void mark_non_differentiable(const std::vector<Tensor>& outputs);
  // True by default: an output that receives no gradient reaches backward
  // as zeros of its shape; false passes it undefined.
  void set_materialize_grads(bool value);
  bool materialize_grads() const;

  struct State;  // src/engine/custom_function.cpp

 private:
  friend std::vector<Tensor> record_function(const std::string& name,
                                             const std::shared_ptr<AutogradContext>& ctx,
                                             const std::vector<Tensor>& inputs,
                                             std::vector<Tensor> outputs,
                                             CustomBackward backward);
  std::unique_ptr<State> state_;
};

// Records `outputs`, computed from `inputs` without recording, as the
// outputs of a function whose backward is `backward`, under a node named
// `name`. Returns the outputs as recorded (an output that is an input comes
// back as an alias). Nothing is recorded when grad mode is off or no input
// requires grad. Each context records once.
std::vector<Tensor> record_function(const std::string& name,
                                    const std::shared_ptr<AutogradContext>& ctx,
                                    const std::vector<Tensor>& inputs,
                                    std::vector<Tensor> outputs,
                                    CustomBackward backward);

// Makes the context, runs `forward` under NoGradGuard and records it.
std::vector<Tensor> apply_function(
    const std::string& name,
    const std::vector<Tensor>& inputs,
    const std::function<std::vector<Tensor>(AutogradContext& ctx,
                                            const std::vector<Tensor>& inputs)>& forward,
    CustomBackward backward);

}  // namespace autograd

// A hook registered on a tensor; `remove()` unregisters it (idempotent).
class HookHandle {
 public:
  HookHandle() = default;
  HookHandle(std::function<void()> remover) : remover_(std::move(remover)) {}  // NOLINT
  void remove() {
    if (remover_) {
      auto r = std::move(remover_);
      remover_ = nullptr;
      r();
    }
  }

 private:
  std::function<void()> remover_;
};

}  // namespace stride
