// The apply path's out-of-line steps (Note [The apply path] in ops/apply.h).
#include "ops/apply.h"

#include <algorithm>
#include <vector>

#include "backends/kernels.h"
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

size_t factor_count(Op op, size_t n) {
  return op == Op::linear_concat || op == Op::linear_groups ? n : std::min<size_t>(n, 2);
}

// The rows of the first factor's GEMM: x's rows for the linear ops, a's
// matrix rows for matmul, mm and bmm (which reach the apply path as
// batched_matmul_op's 3-d operands).
int64_t first_factor_rows(Op op, const Tensor& a) {
  const bool linear = op == Op::linear || op == Op::linear_concat || op == Op::linear_groups;
  if (a.dim() <= 1) return 1;
  if (!linear) return a.size(-2);
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < a.dim(); ++d) rows *= a.size(d);
  return rows;
}

// A float32 factor's cast: recorded as `to` when the factor requires grad,
// on an alias of the cast, so that a parameter's cached cast never becomes
// part of a graph.
Tensor cast_factor(const Tensor& factor, ScalarType dtype) {
  const Tensor cast = autocast_weight(factor, dtype);
  if (!(GradMode::is_enabled() && factor.requires_grad())) return cast;
  return apply(
      Op::to, {&factor}, [&] { return cast.detach(); },
      [](const Tensor&) {
        return [](const autograd::Grads& gs) { return autograd::Grads{gs[0].to(kFloat32)}; };
      });
}

}  // namespace

Lowering autocast_lowering(Op op, const Tensor* const* operands, size_t n) {
  if (n < 2 || !autocast_lowers(op, operands[0], operands[1])) return Lowering::none;
  for (size_t i = 0; i < factor_count(op, n); ++i) {
    if (!operands[i]->defined() || operands[i]->dtype() != kFloat32) return Lowering::bfloat16;
  }
  const Tensor& a = *operands[0];
  return kernels::autocast_multiplies_bf16(a.device(), first_factor_rows(op, a))
             ? Lowering::bfloat16
             : Lowering::rounded_float32;
}

void AutocastOperands::cast_factors(Op op, size_t n) {
  const ScalarType dtype = rounded_in_float32() ? kFloat32 : kBFloat16;
  casts_.resize(factor_count(op, n));
  for (size_t i = 0; i < casts_.size(); ++i) {
    if (operands_[i]->dtype() == kFloat32) casts_[i] = cast_factor(*operands_[i], dtype);
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
