// The device step of the elementwise ops, whose CPU loops are still written
// in src/ops/elementwise.cpp: every other op reaches its kernel through a
// dispatch stub (Note [Dispatch stubs] in core/dispatch_stub.h), and these
// move to stubs too (docs/design.md, "What is not there yet").
//
// Note [Device dispatch]
// ~~~~~~~~~~~~~~~~~~~~~~
// An op runs in the same steps on every device: its rule checks the operands
// (one device, dtypes, shapes), computes the outputs' shapes, dtypes and
// strides and allocates them on that device; autograd records the node; then
// the device's kernel fills the outputs. run_kernel is that last step for a
// kernel given inline: the CPU's runs on the CPU, nothing on meta (meta
// tensors have no memory, and the rule, which has already run, is the whole
// op), and any other device is a DeviceError naming the op.
#pragma once

#include <initializer_list>

#include "core/check.h"
#include "stride/tensor.h"

namespace stride::detail {

template <class CpuKernel>
void run_kernel(const char* op, Device device, CpuKernel&& cpu_kernel) {
  switch (device.type()) {
    case DeviceType::CPU:
      cpu_kernel();
      return;
    case DeviceType::Meta:
      return;
    case DeviceType::CUDA:
      break;
  }
  throw DeviceError(str_cat("[", op, "] has no kernel for ", device.str(),
                            " in this build of stride. Hint: use the cpu device."));
}

// The device of an op's operands (undefined ones are skipped); a DeviceError
// naming the op and both devices when they differ.
inline Device common_device(const char* op, std::initializer_list<const Tensor*> operands) {
  const Tensor* first = nullptr;
  for (const Tensor* t : operands) {
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

}  // namespace stride::detail
