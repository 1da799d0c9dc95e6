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
//   1. checks: the operands must share one device, else a DeviceError naming
//      the op and both devices (undefined optional operands are skipped);
//      the op's input (its first operand) must meet the list's dtype rule,
//      else a DTypeError naming the op (core/op_list.h);
//   2. autocast: an op whose list rule is Lower, called under autocast with
//      float32 or bfloat16 factors, multiplies them in bfloat16 (Note
//      [Autocast casts] below); the forward and the backward factory get the
//      operands they compute on (AutocastOperands) when they take them;
//   3. profiler: the op is one span named after it, with its inputs' shapes;
//   4. forward, with grad mode off, so ops it calls record nothing;
//   5. autograd: when grad mode is on and an input requires grad, a node
//      named after the op gets the backward, and the outputs point at it.
//      The backward factory runs only then, so saving costs nothing in
//      inference;
//   6. versions: a write into an existing tensor (out=, in-place) bumps its
//      storage's version counter where it is written (TensorIter's outputs,
//      copy_, fills), so saved tensors see it whichever op wrote.
//
// apply() is the out-of-place form. The others take the same steps:
// apply_out() the out= form (operands that require grad are refused, as in
// PyTorch; `out` must be on the operands' device), apply_inplace() the
// in-place method (Note [In-place ops and autograd] decides between writing
// into self and recording the op on a clone) and apply_without_grad() an op
// whose result has no gradient. A composite op (written with other ops, no
// node of its own) takes step 1's dtype rule through check_dtype_rule().
//
// Note [Autocast casts]
// ~~~~~~~~~~~~~~~~~~~~~
// The Lower ops multiply their first two operands (the factors: a and b, or
// x and the weight). Under autocast, when both are float32 or bfloat16, each
// float32 factor is cast to bfloat16 before the op runs, a parameter's cast
// once per autocast scope (ops/autocast_internal.h), and the op computes on
// the casts with a float32 result (Note [Autocast results are float32]). Its
// node points at the operands themselves, so their gradients are float32;
// it saves the casts, half the size, which carry a `to` node back to the
// operand when it requires grad, so that a backward recorded with
// create_graph differentiates through them. Its backward runs under the
// forward's autocast state, wherever backward() is called.
//
// Note [Autocast on the float32 GEMM]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Where the device multiplies a product's bfloat16 operands on its float32
// GEMM (a CPU without bf16 GEMM kernels, apart from decoding rows:
// kernels::autocast_multiplies_bf16), bfloat16 casts would only be widened
// again, a copy of each operand on every call, and linear_groups would fall
// back to one linear per group. So there, when every factor is float32, the
// casts are float32 tensors holding the bfloat16 roundings (the same values),
// and the op multiplies them as a float32 op: on the float32 GEMM, and on
// linear_groups' own kernels. Its backward rounds the gradient the same way
// once and multiplies with autocast off, as the factors are rounded already.
// The numbers are autocast's, up to summation order.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "autograd/node.h"
#include "core/op_list.h"
#include "ops/common_device.h"
#include "stride/profiler.h"

namespace stride::detail {

// Every op of the list (core/op_list.h): the apply path takes one of these,
// so an op that is not listed cannot be written.
enum class Op : uint16_t {
#define STRIDE_OP_VISIT(name, family, grad, dtypes, autocast) name,
  STRIDE_ALL_OPS
#undef STRIDE_OP_VISIT
};

// The list's dtype and autocast rules (core/op_list.h).
enum class DtypeRule : uint8_t { Any, Floating };
enum class AutocastRule : uint8_t { Keep, Lower };

struct OpInfo {
  Op op;
  const char* name;          // the profiler span, the autograd node, errors
  const char* inplace_name;  // the in-place method's: name + "_"
  bool has_grad;
  bool internal;  // run only by backward formulas
  DtypeRule dtypes;
  AutocastRule autocast;
};

inline constexpr OpInfo kOps[] = {
#define STRIDE_OP_VISIT(name, family, grad, dtypes, autocast) \
  {Op::name, #name, #name "_", STRIDE_OP_GRAD_##grad, DtypeRule::dtypes, AutocastRule::autocast},
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

// Step 1's dtype rule on the op's input; `name` is the op's name or its
// in-place method's. Composite ops call it themselves.
[[noreturn]] void throw_dtype_rule(const char* name, const Tensor& input);
inline void check_dtype_rule(Op op, const char* name, const Tensor* input) {
  if (op_info(op).dtypes == DtypeRule::Floating && input && input->defined() &&
      !input->is_floating_point()) {
    throw_dtype_rule(name, *input);
  }
}
inline void check_dtype_rule(Op op, const Tensor& input) {
  check_dtype_rule(op, op_name(op), &input);
}

// Step 1 (device, and the dtype rule on `input`) and step 3 (the profiler
// span, for as long as the scope lives) for one op. `name` is the op's name,
// or its in-place method's; `operands` are what the device check and the
// profiler see (for out= and in-place forms, the written tensor first).
class OpScope {
 public:
  OpScope(Op op,
          const char* name,
          const Tensor* const* operands,
          size_t n,
          const Tensor* input,
          bool open_span = true) {
    common_device(name, operands, operands + n);
    check_dtype_rule(op, name, input);
    if (open_span) open(name, operands, n);
  }
  OpScope(Op op, std::initializer_list<const Tensor*> inputs)
      : OpScope(op, op_name(op), inputs.begin(), inputs.size(), first(inputs)) {}
  ~OpScope() {
    if (recording_) profiler::detail::end();
  }
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

  // Step 3, when the constructor left it for after step 2.
  void open(const char* name, const Tensor* const* operands, size_t n) {
    if (profiler::is_enabled()) begin(name, operands, n);
  }

 private:
  static const Tensor* first(std::initializer_list<const Tensor*> inputs) {
    return inputs.size() ? *inputs.begin() : nullptr;
  }
  void begin(const char* op, const Tensor* const* inputs, size_t n);

  bool recording_ = false;
};

// Step 2 (Note [Autocast casts]): whether `op` runs in bfloat16 now, for
// these factors (its first two operands).
bool autocast_lowers(Op op, const Tensor* a, const Tensor* b);

// How a Lower op computes on its operands now: as they are, on bfloat16
// casts of its float32 factors, or on float32 ones holding their roundings
// (Note [Autocast on the float32 GEMM]).
enum class Lowering : uint8_t { none, bfloat16, rounded_float32 };
Lowering autocast_lowering(Op op, const Tensor* const* operands, size_t n);

// The operands an op computes on: for a Lower op under autocast, its float32
// factors' casts; otherwise the operands themselves. The factors are the
// first two operands, every operand of linear_concat and linear_groups.
class AutocastOperands {
 public:
  AutocastOperands(Op op, const Tensor* const* operands, size_t n)
      : operands_(operands),
        lowering_(op_info(op).autocast == AutocastRule::Lower ? autocast_lowering(op, operands, n)
                                                              : Lowering::none) {
    if (lowering_ != Lowering::none) cast_factors(op, n);
  }
  AutocastOperands(const AutocastOperands&) = delete;
  AutocastOperands& operator=(const AutocastOperands&) = delete;

  // The op multiplies bfloat16 roundings.
  bool lowered() const { return lowering_ != Lowering::none; }
  // The casts are float32 roundings: the op multiplies them as float32
  // tensors, with autocast off.
  bool rounded_in_float32() const { return lowering_ == Lowering::rounded_float32; }
  // Operand i as the op computes on it.
  const Tensor& operator[](size_t i) const {
    return i < casts_.size() && casts_[i].defined() ? casts_[i] : *operands_[i];
  }

 private:
  void cast_factors(Op op, size_t n);

  const Tensor* const* operands_;
  Lowering lowering_;
  std::vector<Tensor> casts_;  // defined for a float32 factor of a lowered op
};

// Calls an op's part with the operands it computes on when it takes them.
template <class Part, class... Args>
decltype(auto) call_part(Part& part, const AutocastOperands& operands, Args&&... args) {
  if constexpr (std::is_invocable_v<Part&, Args..., const AutocastOperands&>) {
    return part(std::forward<Args>(args)..., operands);
  } else {
    return part(std::forward<Args>(args)...);
  }
}

// Steps 1 to 5. `forward()` computes the result: a tensor, max/min's
// (values, indices) (the indices get no gradient), or a vector of tensors;
// `backward(result)` returns the node's backward (FunctionNode::Backward).
// A Lower op's forward and backward factory take the AutocastOperands as
// their last argument.
template <class Inputs, class Forward, class Backward>
auto apply_with(Op op, const Inputs& inputs, Forward&& forward, Backward&& backward) {
  const Tensor* const* operands = std::data(inputs);
  const size_t n = std::size(inputs);
  OpScope scope(op, op_name(op), operands, n, n ? operands[0] : nullptr, /*open_span=*/false);
  const AutocastOperands computed(op, operands, n);
  scope.open(op_name(op), operands, n);
  auto result = [&] {
    NoGradGuard no_grad;
    return call_part(forward, computed);
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
  if (node) node->set_backward(call_part(backward, computed, std::as_const(result)));
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

// Copies `result` into `self` without recording, then gives self result's
// grad_fn (Note [In-place ops and autograd]).
void rebase_history(Tensor& self, const Tensor& result);

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
  check_dtype_rule(op, name, &self);
  if (autograd::check_inplace(self, name, others)) {
    rebase_history(self, recorded());
    return self;
  }
  const OperandList operands = with_operand(self, others);
  OpScope scope(op, name, operands.data(), operands.size(), &self);
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
  OpScope scope(op, op_name(op), operands.data(), operands.size(),
                inputs.size() ? *inputs.begin() : nullptr);
  return forward();
}

}  // namespace stride::detail
