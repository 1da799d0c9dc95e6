// The apply path's out-of-line steps (Note [The apply path] in ops/apply.h).
#include "ops/apply.h"

#include <vector>

#include "core/check.h"
#include "ops/autocast_internal.h"
#include "stride/autocast.h"

namespace stride::detail {

void throw_dtype_rule(const char* name, const Tensor& input) {
  STRIDE_CHECK(false, DTypeError, "[", name, "] needs a floating-point tensor; got ",
               to_string(input.dtype()), ". Hint: convert with .to(kFloat32).");
}

void OpScope::begin(const char* op, const Tensor* const* inputs, size_t n) {
  // The profiler formats shapes from tensors; an absent optional operand is
  // an undefined one.
  std::vector<Tensor> operands;
  if (profiler::detail::record_shapes()) {
    operands.reserve(n);
    for (size_t i = 0; i < n; ++i) operands.push_back(inputs[i] ? *inputs[i] : Tensor());
  }
  profiler::detail::begin(op, operands.data(), operands.size());
  recording_ = true;
}

bool autocast_lowers(Op op, const Tensor* a, const Tensor* b) {
  auto factor = [](const Tensor* t) {
    return t && t->defined() && (t->dtype() == kFloat32 || t->dtype() == kBFloat16);
  };
  return op_info(op).autocast == AutocastRule::Lower && Autocast::is_enabled() && factor(a) &&
         factor(b);
}

namespace {

// A float32 factor's bfloat16 cast: recorded as `to` when the factor
// requires grad, on an alias of the cast, so that a parameter's cached cast
// never becomes part of a graph.
Tensor cast_factor(const Tensor& factor) {
  const Tensor cast = autocast_bf16_weight(factor);
  if (!(GradMode::is_enabled() && factor.requires_grad())) return cast;
  return apply(
      Op::to, {&factor}, [&] { return cast.detach(); },
      [](const Tensor&) {
        return [](const autograd::Grads& gs) { return autograd::Grads{gs[0].to(kFloat32)}; };
      });
}

}  // namespace

void AutocastOperands::cast_factors() {
  lowered_ = true;
  for (size_t i = 0; i < 2; ++i) {
    if (operands_[i]->dtype() == kFloat32) casts_[i] = cast_factor(*operands_[i]);
  }
}

void rebase_history(Tensor& self, const Tensor& result) {
  {
    NoGradGuard no_grad;
    self.copy_(result);
  }
  autograd::AutogradMeta& m = autograd::materialize_autograd_meta(*self.impl());
  if (autograd::AutogradMeta* rm = autograd::get_autograd_meta(*result.impl()); rm && rm->grad_fn) {
    m.grad_fn = rm->grad_fn;
    m.output_nr = rm->output_nr;
    m.requires_grad = true;
  } else {  // e.g. fill_: the new value does not depend on anything that requires grad
    m.grad_fn = nullptr;
    m.requires_grad = false;
  }
}

}  // namespace stride::detail
