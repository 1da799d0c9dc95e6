// The device of an op's operands: the check every op makes before it
// allocates its outputs and calls its kernel stub (Note [Dispatch stubs] in
// core/dispatch_stub.h). TensorIter makes it for the ops built on it; the
// fused ops (nn's, the optimizer steps) call common_device.
#pragma once

#include <initializer_list>

#include "core/check.h"
#include "stride/tensor.h"

namespace stride::detail {

// The device of an op's operands (undefined ones are skipped); a DeviceError
// naming the op and both devices when they differ.
inline Device common_device(const char* op, const Tensor* const* begin, const Tensor* const* end) {
  const Tensor* first = nullptr;
  for (; begin != end; ++begin) {
    const Tensor* t = *begin;
    if (t == nullptr || !t->defined()) continue;
    if (first == nullptr) {
      first = t;
      continue;
    }
    STRIDE_CHECK(t->device() == first->device(), DeviceError, "[", op,
                 "] expected all tensors on one device; got ", first->device().str(), " and ",
                 t->device().str(), ". Hint: move them with .to(", first->device().str(),
                 ") first.");
  }
  return first != nullptr ? first->device() : Device(kCPU);
}
inline Device common_device(const char* op, std::initializer_list<const Tensor*> operands) {
  return common_device(op, operands.begin(), operands.end());
}

}  // namespace stride::detail
