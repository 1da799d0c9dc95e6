// swiglu(gate, up) = silu(gate) * up, Llama's feed-forward nonlinearity, in
// one pass forward and one pass backward (instead of silu, mul and, in the
// backward, sigmoid, four muls and two adds over the (tokens, hidden) slab).
// swiglu(gate, up, beta) is the Swish-beta form, with a one-element beta that
// may be learnable; the first is beta = 1, and both run the same kernels.
//
// With s = sigmoid(beta g):  y = g s u,
//   dy/dg = u s (1 + beta g (1 - s)),   dy/du = g s,   dy/dbeta = u g^2 s (1 - s).
// When the backward is recorded (create_graph) it is written with public ops,
// so second derivatives are right. swiglu_reference is the same from basic
// ops: the test oracle. The kernels are in src/backends/cpu/swiglu.cpp.
#include <optional>

#include "backends/kernels.h"
#include "ops/apply.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"

namespace stride::nn::functional {

namespace {

using autograd::Grads;
using autograd::SavedTensor;

void check_args(const Tensor& gate, const Tensor& up, const Tensor& beta, const char* op) {
  STRIDE_CHECK(gate.is_floating_point() && up.dtype() == gate.dtype(), DTypeError, "[", op,
               "] expected gate and up of one floating-point dtype; got ", to_string(gate.dtype()),
               " and ", to_string(up.dtype()), ".");
  STRIDE_CHECK(gate.sizes() == up.sizes(), ShapeError, "[", op,
               "] expected gate and up of one shape; got ", shape_str(gate.sizes()), " and ",
               shape_str(up.sizes()), ". Hint: both are projections of the same x: w1(x), w3(x).");
  if (!beta.defined()) return;
  STRIDE_CHECK(beta.dtype() == gate.dtype(), DTypeError, "[", op,
               "] expected beta of gate's dtype ", to_string(gate.dtype()), "; got ",
               to_string(beta.dtype()), ".");
  STRIDE_CHECK(beta.numel() == 1, ShapeError, "[", op, "] expected a one-element beta; got shape ",
               shape_str(beta.sizes()), ".");
}

// The backward from public ops (create_graph); beta undefined is beta = 1.
Grads backward_with_ops(const Tensor& dy,
                        const Tensor& g,
                        const Tensor& u,
                        const Tensor& beta,
                        bool need_g,
                        bool need_u,
                        bool need_beta) {
  const Tensor bg = beta.defined() ? beta * g : g;
  const Tensor s = bg.sigmoid();
  Tensor dg, du, dbeta;
  if (need_g) dg = dy * u * s * (1.0 + bg * (1.0 - s));
  if (need_u) du = dy * g * s;
  if (need_beta) dbeta = (dy * u * g * g * s * (1.0 - s)).sum().reshape(beta.sizes());
  return {dg, du, dbeta};
}

// swiglu with beta, or beta = 1 when beta is undefined.
Tensor swiglu_impl(const Tensor& gate, const Tensor& up, const Tensor& beta) {
  if (gate.dtype() == kFloat16 || gate.dtype() == kBFloat16) {
    const Tensor beta32 = beta.defined() ? beta.to(kFloat32) : Tensor();
    return swiglu_impl(gate.to(kFloat32), up.to(kFloat32), beta32).to(gate.dtype());
  }
  auto forward = [&] {
    Tensor y = empty(gate.sizes(), gate.options());
    kernels::swiglu_forward(gate.device(), gate.contiguous(), up.contiguous(), beta, y);
    return y;
  };
  auto backward = [&](const Tensor&) {
    // beta = 1 when undefined, which SavedTensor does not hold.
    std::optional<SavedTensor> sb;
    if (beta.defined()) sb = SavedTensor::input(beta);
    return [sg = SavedTensor::input(gate), su = SavedTensor::input(up), sb,
            need_g = autograd::requires_grad(gate), need_u = autograd::requires_grad(up),
            need_beta = autograd::requires_grad(beta)](const Grads& gs) {
      const Tensor g = sg.get(), u = su.get(), b = sb ? sb->get() : Tensor();
      if (GradMode::is_enabled()) {
        return backward_with_ops(gs[0], g, u, b, need_g, need_u, need_beta);
      }
      const Tensor dy = gs[0].contiguous(), gc = g.contiguous(), uc = u.contiguous();
      Tensor dg = need_g ? empty(g.sizes(), g.options()) : Tensor();
      Tensor du = need_u ? empty(u.sizes(), u.options()) : Tensor();
      Tensor dbeta = need_beta ? empty(b.sizes(), g.options()) : Tensor();
      kernels::swiglu_backward(g.device(), dy, gc, uc, b, dg, du, dbeta);
      return Grads{dg, du, dbeta};
    };
  };
  return ::stride::detail::apply(::stride::detail::Op::swiglu, {&gate, &up, &beta}, forward,
                                 backward);
}

}  // namespace

Tensor swiglu(const Tensor& gate, const Tensor& up) {
  check_args(gate, up, Tensor(), "swiglu");
  return swiglu_impl(gate, up, Tensor());
}

Tensor swiglu(const Tensor& gate, const Tensor& up, const Tensor& beta) {
  STRIDE_CHECK(beta.defined(), ValueError,
               "[swiglu] expected a defined beta; swiglu(gate, up) is beta = 1.");
  check_args(gate, up, beta, "swiglu");
  return swiglu_impl(gate, up, beta);
}

Tensor swiglu_reference(const Tensor& gate, const Tensor& up) {
  check_args(gate, up, Tensor(), "swiglu_reference");
  return gate.silu() * up;
}

Tensor swiglu_reference(const Tensor& gate, const Tensor& up, const Tensor& beta) {
  check_args(gate, up, beta, "swiglu_reference");
  return gate * (beta * gate).sigmoid() * up;
}

}  // namespace stride::nn::functional
