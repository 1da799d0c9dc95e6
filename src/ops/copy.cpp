// copy_, contiguous, clone and dtype conversion: the one strided copy kernel
// (src/backends/cpu/copy.cpp), through TensorIter like every other write.
// Every destination written without a stride-aware kernel (in-place, out=,
// slice assignment) is computed into a contiguous temporary and then copied
// here, so strided writes are tested in one place.
#include "backends/kernels.h"
#include "core/layout.h"
#include "core/tensor_iter.h"
#include "ops/apply.h"
#include "stride/backend.h"
#include "stride/ops.h"

namespace stride {

using detail::Op;

Tensor& Tensor::copy_(const Tensor& src) {
  STRIDE_CHECK(src.defined(), ValueError, "[copy_] the source tensor is undefined.");
  if (src.is_same(*this)) return *this;
  return detail::apply_inplace(
      Op::copy, *this, {&src}, [&] { return src.to(dtype()).expand(sizes()).clone(); },
      [&] {
        Tensor self = *this;
        TensorIter iter = TensorIterConfig("copy_")
                              .add_output(self)
                              .add_input(src)
                              .static_shape(sizes())
                              .check_all_same_dtype(false)
                              .build();
        kernels::copy(device(), iter);
      });
}

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  return clone();
}

namespace {

// A copy of `x` with dtype `t`, recorded as one op (clone or to).
Tensor copy_as(const Tensor& x, ScalarType t, Op op) {
  auto forward = [&] {
    Tensor out = empty(x.sizes(), x.options().dtype(t));
    out.copy_(x);
    return out;
  };
  // Integer results carry no gradient.
  if (!is_floating_point(t) && !is_complex(t)) return detail::apply_without_grad(op, {&x}, forward);
  return detail::apply(op, {&x}, forward, [&](const Tensor&) {
    return [src = x.dtype()](const autograd::Grads& gs) { return autograd::Grads{gs[0].to(src)}; };
  });
}

}  // namespace

Tensor Tensor::clone() const {
  return copy_as(*this, dtype(), Op::clone);
}

Tensor Tensor::to(ScalarType t) const {
  if (t == dtype()) return *this;
  return copy_as(*this, t, Op::to);
}

namespace {

// x's bytes on `device`: one copy of its dense memory block, in x's own
// layout when it is dense (else made contiguous first), through the backend
// of the device that is not the CPU.
Tensor copy_to_device(const Tensor& x, Device device) {
  STRIDE_CHECK(device_backend(x.device()).has_data(), DeviceError, "[to] cannot copy a ",
               x.device().str(), " tensor to ", device.str(),
               ": it has no data. Hint: make the tensor on ", device.str(),
               " instead (a module built on meta: Module::to_empty(", device.str(),
               ") and its initialiser).");
  const Tensor src = detail::is_non_overlapping_and_dense(x) ? x : x.contiguous();
  Tensor out = empty_strided(src.sizes(), src.strides(), src.options().device(device));
  if (device_backend(device).has_data()) {
    DeviceBackend& backend = device_backend(device.is_cpu() ? x.device() : device);
    backend.copy_bytes(out.data_ptr(), device, src.data_ptr(), x.device(), src.nbytes());
  }
  return out;
}

}  // namespace

Tensor Tensor::to(Device d) const {
  if (d == device()) return *this;
  auto forward = [&] { return copy_to_device(*this, d); };
  if (!is_floating_point() && !is_complex()) {
    return detail::apply_without_grad(Op::to, {this}, forward);
  }
  return detail::apply(Op::to, {this}, forward, [&](const Tensor&) {
    return [from = device()](const autograd::Grads& gs) { return autograd::Grads{gs[0].to(from)}; };
  });
}

}  // namespace stride
