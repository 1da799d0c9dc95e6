// The apply path's profiler step (Note [The apply path] in ops/apply.h).
#include "ops/apply.h"

#include <vector>

namespace stride::detail {

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

}  // namespace stride::detail
