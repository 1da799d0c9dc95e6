// Custom functions: a forward computed without recording and a backward
// written by the caller, recorded as one node (Note [Custom functions] in
// include/stride/autograd.h).
#include "autograd/node.h"
#include "core/check.h"
#include "core/tensor_impl_utils.h"
#include "stride/factory.h"

namespace stride::autograd {

struct AutogradContext::State {
  std::vector<bool> needs_input_grad;
  std::vector<Tensor> to_save;             // until recorded
  std::vector<SavedTensor> saved;          // once recorded
  std::vector<Tensor> non_differentiable;  // until recorded
  bool materialize_grads = true;
  bool recorded = false;
};

AutogradContext::AutogradContext(const std::vector<Tensor>& inputs)
    : state_(std::make_unique<State>()) {
  const bool grad_mode = GradMode::is_enabled();
  for (const Tensor& t : inputs) {
    state_->needs_input_grad.push_back(grad_mode && t.defined() && requires_grad(t));
  }
}

AutogradContext::~AutogradContext() = default;

const std::vector<bool>& AutogradContext::needs_input_grad() const {
  return state_->needs_input_grad;
}

void AutogradContext::save_for_backward(std::vector<Tensor> tensors) {
  STRIDE_CHECK(!state_->recorded, Error,
               "[save_for_backward] can only be called in forward, before the function is "
               "recorded.");
  state_->to_save = std::move(tensors);
}

std::vector<Tensor> AutogradContext::saved_tensors() const {
  // Before recording (inside forward) the tensors are still held as given.
  if (!state_->recorded) return state_->to_save;
  std::vector<Tensor> out;
  out.reserve(state_->saved.size());
  for (const SavedTensor& s : state_->saved) out.push_back(s.defined() ? s.get() : Tensor());
  return out;
}

void AutogradContext::mark_non_differentiable(const std::vector<Tensor>& outputs) {
  STRIDE_CHECK(!state_->recorded, Error,
               "[mark_non_differentiable] can only be called in forward, on its outputs.");
  for (const Tensor& t : outputs) state_->non_differentiable.push_back(t);
}

void AutogradContext::set_materialize_grads(bool value) {
  state_->materialize_grads = value;
}

bool AutogradContext::materialize_grads() const {
  return state_->materialize_grads;
}

namespace {

bool contains(const std::vector<Tensor>& ts, const Tensor& t) {
  for (const Tensor& u : ts) {
    if (u.defined() && u.is_same(t)) return true;
  }
  return false;
}

// A new tensor sharing `t`'s memory and version counter, outside the graph:
// what an output that is an input (or already requires grad) is recorded as,
// so that the node does not replace that tensor's own grad_fn.
Tensor alias_of(const Tensor& t) {
  Tensor a = detail::make_view(t, t.sizes(), t.strides(), t.storage_offset());
  a.impl()->set_is_view(true);
  return a;
}

// The tensors of save_for_backward as SavedTensors: an output is saved as
// one (no strong reference back to its node, which holds the context), the
// rest as inputs.
std::vector<SavedTensor> to_saved(const std::vector<Tensor>& to_save,
                                  const std::vector<Tensor>& given_outputs,
                                  const std::vector<Tensor>& recorded_outputs) {
  std::vector<SavedTensor> saved;
  for (const Tensor& t : to_save) {
    if (!t.defined()) {
      saved.emplace_back();
      continue;
    }
    size_t k = 0;
    while (k < given_outputs.size() && !given_outputs[k].is_same(t)) ++k;
    saved.push_back(k < given_outputs.size() ? SavedTensor::output(recorded_outputs[k])
                                             : SavedTensor::input(t));
  }
  return saved;
}

// Checks what a custom backward returned against the forward's inputs.
void check_backward_result(const std::string& name,
                           const Grads& grads,
                           const std::vector<bool>& input_is_tensor) {
  STRIDE_CHECK(grads.size() == input_is_tensor.size(), Error, "[", name, "] function ", name,
               " returned an incorrect number of gradients (expected ", input_is_tensor.size(),
               ", got ", grads.size(),
               "). Hint: return one per forward input, None (undefined) "
               "for those that are not tensors or need no gradient.");
  for (size_t i = 0; i < grads.size(); ++i) {
    STRIDE_CHECK(input_is_tensor[i] || !grads[i].defined(), Error, "[", name, "] function ", name,
                 " returned a gradient different than None at position ", i + 1,
                 ", but the corresponding forward input was not a tensor.");
  }
}

}  // namespace

std::vector<Tensor> record_function(const std::string& name,
                                    const std::shared_ptr<AutogradContext>& ctx,
                                    const std::vector<Tensor>& inputs,
                                    std::vector<Tensor> outputs,
                                    CustomBackward backward) {
  STRIDE_CHECK(ctx != nullptr, ValueError, "[", name, "] record_function needs a context.");
  AutogradContext::State& state = *ctx->state_;
  STRIDE_CHECK(!state.recorded, Error, "[", name,
               "] a context records one function; make a new one per call.");
  STRIDE_CHECK(inputs.size() == state.needs_input_grad.size(), ValueError, "[", name, "] got ",
               inputs.size(), " inputs but the context was made for ",
               state.needs_input_grad.size(), ".");
  const std::vector<Tensor> given = outputs;
  std::vector<const Tensor*> input_ptrs, output_ptrs;
  for (const Tensor& t : inputs) input_ptrs.push_back(t.defined() ? &t : nullptr);
  for (size_t k = 0; k < outputs.size(); ++k) {
    STRIDE_CHECK(outputs[k].defined(), ValueError, "[", name, "] output ", k, " is not a tensor.");
    if (contains(inputs, outputs[k]) || requires_grad(outputs[k])) {
      outputs[k] = alias_of(outputs[k]);
    }
    output_ptrs.push_back(contains(state.non_differentiable, given[k]) ? nullptr : &outputs[k]);
  }
  std::shared_ptr<FunctionNode> node = make_named_node(name, input_ptrs, output_ptrs);
  state.saved = to_saved(state.to_save, given, outputs);
  state.to_save.clear();
  state.non_differentiable.clear();
  state.recorded = true;
  if (!node) return outputs;

  std::vector<InputMeta> output_meta;
  for (const Tensor& t : outputs) output_meta.push_back({t.sizes().dims(), t.dtype(), t.device()});
  std::vector<bool> input_is_tensor;
  for (const Tensor& t : inputs) input_is_tensor.push_back(t.defined());
  node->set_backward([name, ctx, backward = std::move(backward), output_meta,
                      input_is_tensor](const Grads& grads) {
    Grads gs = grads;
    if (ctx->materialize_grads()) {
      for (size_t k = 0; k < gs.size(); ++k) {
        if (gs[k].defined()) continue;
        const InputMeta& m = output_meta[k];
        gs[k] = empty(m.shape, TensorOptions().dtype(m.dtype).device(m.device)).zero_();
      }
    }
    Grads result = backward(*ctx, gs);
    check_backward_result(name, result, input_is_tensor);
    return result;
  });
  return outputs;
}

std::vector<Tensor> apply_function(
    const std::string& name,
    const std::vector<Tensor>& inputs,
    const std::function<std::vector<Tensor>(AutogradContext& ctx,
                                            const std::vector<Tensor>& inputs)>& forward,
    CustomBackward backward) {
  auto ctx = std::make_shared<AutogradContext>(inputs);
  std::vector<Tensor> outputs;
  {
    NoGradGuard no_grad;
    outputs = forward(*ctx, inputs);
  }
  return record_function(name, ctx, inputs, std::move(outputs), std::move(backward));
}

}  // namespace stride::autograd
