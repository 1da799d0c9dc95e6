// softmax and log_softmax along one dim, numerically stable (max-shifted).
// The kernel (src/backends/cpu/softmax.cpp) works on contiguous rows, so the
// softmax dim is moved last and the input made contiguous explicitly when it
// is not already.
#include "backends/kernels.h"
#include "ops/apply.h"
#include "ops/elementwise_common.h"

namespace stride {

using detail::Op;

namespace {

// The forward: the dim moved last, rows made contiguous, one kernel call.
Tensor softmax_forward(const Tensor& x, int64_t dim, bool log, const char* op) {
  if (detail::is_16bit(x.dtype())) {
    return softmax_forward(x.to(kFloat32), dim, log, op).to(x.dtype());
  }
  if (x.dim() == 0) return softmax_forward(x.view({1}), 0, log, op).view({});
  dim = wrap_dim(dim, x.dim(), op);
  const bool last = dim == x.dim() - 1;
  Tensor xc = (last ? x : x.transpose(dim, -1)).contiguous();
  Tensor out = empty(xc.sizes(), xc.options());
  kernels::softmax_rows(x.device(), xc, out, log);
  return last ? out : out.transpose(dim, -1).contiguous();
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim) {
  return detail::apply(
      Op::softmax, {&x}, [&] { return softmax_forward(x, dim, false, "softmax"); },
      [dim](const Tensor& y) {
        return [sy = autograd::SavedTensor::output(y), dim](const autograd::Grads& gs) {
          const Tensor yv = sy.get();
          return autograd::Grads{yv * (gs[0] - (gs[0] * yv).sum({dim}, true))};
        };
      });
}

Tensor log_softmax(const Tensor& x, int64_t dim) {
  return detail::apply(
      Op::log_softmax, {&x}, [&] { return softmax_forward(x, dim, true, "log_softmax"); },
      [dim](const Tensor& y) {
        return [sy = autograd::SavedTensor::output(y), dim](const autograd::Grads& gs) {
          return autograd::Grads{gs[0] - exp(sy.get()) * gs[0].sum({dim}, true)};
        };
      });
}

Tensor Tensor::softmax(int64_t dim) const {
  return stride::softmax(*this, dim);
}
Tensor Tensor::log_softmax(int64_t dim) const {
  return stride::log_softmax(*this, dim);
}

}  // namespace stride
