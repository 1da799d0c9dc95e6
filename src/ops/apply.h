// The one path every op takes around its kernel.
//
// Note [The apply path]
// ~~~~~~~~~~~~~~~~~~~~~
// An op is written as its parts: checks of its arguments, a forward (the
// shape and dtype rule, which allocates the outputs on the operands' device,
// and the call into the kernel stub of backends/kernels.h) and a backward
// (written with ops, so it is differentiable again). What is the same for
// every op is done here, once, in this order:
//
//   1. device: the operands must share one device; else a DeviceError naming
//      the op and both devices (undefined optional operands are skipped);
//   2. profiler: the op is one span named after it, with its inputs' shapes;
//   3. forward, with grad mode off, so ops it calls record nothing;
//   4. autograd: when grad mode is on and an input requires grad, a node
//      named after the op gets the backward, and the outputs point at it.
//      The backward factory runs only then, so saving costs nothing in
//      inference;
//   5. versions: a write into an existing tensor (out=, in-place) bumps its
//      storage's version counter where it is written (TensorIter's outputs,
//      copy_, fills), so saved tensors see it whichever op wrote.
//
// apply() is the out-of-place form. The others take the same steps:
// apply_out() the out= form (operands that require grad are refused, as in
// PyTorch; `out` must be on the operands' device), apply_inplace() the
// in-place method (Note [In-place ops and autograd] decides between writing
// into self and recording the op on a clone) and apply_without_grad() an op
// whose result has no gradient. Autocast is a property of the matmul-class
// ops' forward (Note [Autocast results are float32]); every other op computes
// in its operands' dtype.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "autograd/node.h"
#include "ops/common_device.h"
#include "ops/op_list.h"
#include "stride/profiler.h"

namespace stride::detail {

// Every op of the list (ops/op_list.h): the apply path takes one of these,
// so an op that is not listed cannot be written.
enum class Op : uint8_t {
#define STRIDE_OP_VISIT(name, family, grad) name,
  STRIDE_ALL_OPS
#undef STRIDE_OP_VISIT
};

struct OpInfo {
  Op op;
  const char* name;          // the profiler span, the autograd node, errors
  const char* inplace_name;  // the in-place method's: name + "_"
  bool has_grad;
  bool internal;  // run only by backward formulas
};

inline constexpr OpInfo kOps[] = {
#define STRIDE_OP_VISIT(name, family, grad) {Op::name, #name, #name "_", STRIDE_OP_GRAD_##grad},
#define STRIDE_OP_GRAD_Grad true, false
#define STRIDE_OP_GRAD_NoGrad false, false
#define STRIDE_OP_GRAD_Internal true, true
    STRIDE_ALL_OPS
#undef STRIDE_OP_GRAD_Internal
#undef STRIDE_OP_GRAD_NoGrad
#undef STRIDE_OP_GRAD_Grad
#undef STRIDE_OP_VISIT
};

constexpr const OpInfo& op_info(Op op) {
  return kOps[static_cast<size_t>(op)];
}
constexpr const char* op_name(Op op) {
  return op_info(op).name;
}

// Steps 1 and 2 for one op: the operands' device, and the op's profiler span
// for as long as the scope lives.
class OpScope {
 public:
  // `name` is the op's name, or its in-place method's.
  OpScope(const char* name, const Tensor* const* inputs, size_t n)
      : device_(common_device(name, inputs, inputs + n)) {
    if (profiler::is_enabled()) begin(name, inputs, n);
  }
  OpScope(Op op, std::initializer_list<const Tensor*> inputs)
      : OpScope(op_name(op), inputs.begin(), inputs.size()) {}
  OpScope(Op op, const std::vector<const Tensor*>& inputs)
      : OpScope(op_name(op), inputs.data(), inputs.size()) {}
  ~OpScope() {
    if (recording_) profiler::detail::end();
  }
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

  Device device() const { return device_; }

 private:
  void begin(const char* op, const Tensor* const* inputs, size_t n);

  Device device_;
  bool recording_ = false;
};

// Steps 1 to 4. `forward()` computes the result: a tensor, max/min's
// (values, indices) (the indices get no gradient), or a vector of tensors;
// `backward(result)` returns the node's backward (FunctionNode::Backward).
template <class Inputs, class Forward, class Backward>
auto apply_with(Op op, const Inputs& inputs, Forward&& forward, Backward&& backward) {
  OpScope scope(op, inputs);
  auto result = [&] {
    NoGradGuard no_grad;
    return forward();
  }();
  using Result = decltype(result);
  std::shared_ptr<autograd::FunctionNode> node;
  if constexpr (std::is_same_v<Result, Tensor>) {
    node = autograd::make_node(op_name(op), inputs, {&result});
  } else if constexpr (std::is_same_v<Result, std::pair<Tensor, Tensor>>) {
    node = autograd::make_node(op_name(op), inputs, {&result.first});
  } else {
    std::vector<const Tensor*> outputs;
    for (const Tensor& t : result) outputs.push_back(&t);
    node = autograd::make_node(op_name(op), std::vector<const Tensor*>(inputs), outputs);
  }
  if (node) node->set_backward(backward(std::as_const(result)));
  return result;
}

template <class Forward, class Backward>
auto apply(Op op,
           std::initializer_list<const Tensor*> inputs,
           Forward&& forward,
           Backward&& backward) {
  return apply_with(op, inputs, std::forward<Forward>(forward), std::forward<Backward>(backward));
}
template <class Forward, class Backward>
auto apply(Op op,
           const std::vector<const Tensor*>& inputs,
           Forward&& forward,
           Backward&& backward) {
  return apply_with(op, inputs, std::forward<Forward>(forward), std::forward<Backward>(backward));
}

// An op without a gradient (argmax, comparisons' indices): steps 1 to 3.
template <class Forward>
Tensor apply_without_grad(Op op, std::initializer_list<const Tensor*> inputs, Forward&& forward) {
  OpScope scope(op, inputs);
  NoGradGuard no_grad;
  return forward();
}

// A tensor the op writes (self, out) and its other operands: what the device
// check and the profiler see.
using OperandList = SmallVector<const Tensor*, 6>;
inline OperandList with_operand(const Tensor& written,
                                std::initializer_list<const Tensor*> others) {
  OperandList operands{&written};
  for (const Tensor* t : others) operands.push_back(t);
  return operands;
}

// The in-place method self.op_(others...): when autograd must record the
// write (Note [In-place ops and autograd]), self takes over the result of
// `recorded()`, the out-of-place op on a clone of self; otherwise `write()`
// writes into self, in the op's scope.
template <class Recorded, class Write>
Tensor& apply_inplace(Op op,
                      Tensor& self,
                      std::initializer_list<const Tensor*> others,
                      Recorded&& recorded,
                      Write&& write) {
  const char* name = op_info(op).inplace_name;
  if (autograd::check_inplace(self, name, others)) {
    autograd::rebase_history(self, recorded());
    return self;
  }
  const OperandList operands = with_operand(self, others);
  OpScope scope(name, operands.data(), operands.size());
  write();
  return self;
}

// The out= form: operands that require grad are refused (out= is never
// recorded), `out` must be on the operands' device when it is given, and
// `forward()` writes the result into it.
template <class Forward>
decltype(auto) apply_out(Op op,
                         const Tensor& out,
                         std::initializer_list<const Tensor*> inputs,
                         Forward&& forward) {
  autograd::check_no_grad_out(op_name(op), inputs);
  const OperandList operands = with_operand(out, inputs);
  OpScope scope(op_name(op), operands.data(), operands.size());
  return forward();
}

}  // namespace stride::detail
