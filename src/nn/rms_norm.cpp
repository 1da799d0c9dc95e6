// rms_norm: y = x * rstd * w with rstd = 1 / sqrt(mean(x^2) + eps) per row of
// the last dim; one pass per row forward, its own backward. rms_norm_reference
// is the same from basic ops (the test oracle).
//
// Note [RMSNorm backward] (src/backends/cpu/rms_norm.cpp) gives the
// gradients; when the backward is recorded (create_graph) it is written with
// public ops and recomputes rstd from x, so that second derivatives are right.
#include "backends/kernels.h"
#include "ops/apply.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"

namespace stride::nn::functional {

namespace {

using autograd::Grads;
using autograd::SavedTensor;

void check_args(const Tensor& x, const Tensor& weight, double eps, const char* op) {
  ::stride::detail::check_dtype_rule(::stride::detail::Op::rms_norm, op, &x);
  STRIDE_CHECK(x.dim() >= 1, ShapeError, "[", op, "] expected x (..., D); got a 0-d tensor.");
  STRIDE_CHECK(!weight.defined() || (weight.dim() == 1 && weight.size(0) == x.size(-1)), ShapeError,
               "[", op, "] expected weight (D) = (", x.size(-1), ") for x ", shape_str(x.sizes()),
               "; got weight ", shape_str(weight.sizes()),
               ". Hint: RMSNorm normalises the last dim; its weight has that dim's size.");
  STRIDE_CHECK(!weight.defined() || weight.dtype() == x.dtype(), DTypeError, "[", op,
               "] weight has dtype ", to_string(weight.dtype()), " but x has ",
               to_string(x.dtype()), ". Hint: convert one of them so that they match.");
  STRIDE_CHECK(eps >= 0, ValueError, "[", op, "] expected eps >= 0; got ", eps, ".");
}

Grads backward_with_ops(
    const Tensor& g, const Tensor& x, const Tensor& w, double eps, bool need_x, bool need_w) {
  const Tensor rstd = rsqrt((x * x).mean({-1}, true) + eps);
  Tensor gx, gw;
  if (need_x) {
    const Tensor u = w.defined() ? g * w : g;
    gx = rstd * (u - x * (rstd * rstd) * (u * x).mean({-1}, true));
  }
  if (need_w) gw = (g * x * rstd).reshape({-1, x.size(-1)}).sum({0});
  return {gx, gw};
}

}  // namespace

Tensor rms_norm(const Tensor& x, const Tensor& weight, double eps) {
  check_args(x, weight, eps, "rms_norm");
  if (x.dtype() == kFloat16 || x.dtype() == kBFloat16) {
    return rms_norm(x.to(kFloat32), weight.defined() ? weight.to(kFloat32) : weight, eps)
        .to(x.dtype());
  }
  const int64_t len = x.size(-1);
  const int64_t rows = len == 0 ? 0 : x.numel() / len;
  Tensor rstd = empty({rows}, x.options());
  auto forward = [&] {
    Tensor y = empty(x.sizes(), x.options());
    const Tensor wc = weight.defined() ? weight.contiguous() : Tensor();
    kernels::rms_norm_forward(x.device(), x.contiguous(), wc, eps, y, rstd);
    return y;
  };
  auto backward = [&](const Tensor&) {
    return [sx = SavedTensor::input(x),
            sw = weight.defined() ? SavedTensor::input(weight) : SavedTensor(), rstd, eps,
            need_x = autograd::requires_grad(x), need_w = autograd::requires_grad(weight),
            len](const Grads& gs) {
      const Tensor xv = sx.get();
      const Tensor wv = sw.defined() ? sw.get() : Tensor();
      if (GradMode::is_enabled()) return backward_with_ops(gs[0], xv, wv, eps, need_x, need_w);
      const Tensor g = gs[0].contiguous(), xc = xv.contiguous();
      const Tensor wc = wv.defined() ? wv.contiguous() : Tensor();
      Tensor gx = need_x ? empty(xv.sizes(), xv.options()) : Tensor();
      Tensor gw = need_w ? empty({len}, xv.options()) : Tensor();
      kernels::rms_norm_backward(xv.device(), g, xc, wc, rstd, gx, gw);
      return Grads{gx, gw};
    };
  };
  return ::stride::detail::apply(::stride::detail::Op::rms_norm, {&x, &weight}, forward, backward);
}

Tensor rms_norm_reference(const Tensor& x, const Tensor& weight, double eps) {
  check_args(x, weight, eps, "rms_norm_reference");
  const Tensor y = x * rsqrt((x * x).mean({-1}, true) + eps);
  return weight.defined() ? y * weight : y;
}

}  // namespace stride::nn::functional
