// swiglu(gate, up) = silu(gate) * up, Llama's feed-forward nonlinearity, in
// one pass forward and one pass backward (instead of silu, mul and, in the
// backward, sigmoid, four muls and two adds over the (tokens, hidden) slab).
//
// With s = sigmoid(g):  y = g s u,
//   dy/dg = u s (1 + g (1 - s)),   dy/du = g s.
// When the backward is recorded (create_graph) it is written with public ops,
// so second derivatives are right. swiglu_reference is the same from basic
// ops: the test oracle. float32 runs 16 lanes at a time with the vector exp
// (backends/cpu/vec_math.h); float64 keeps the scalar loops and std::exp.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "autograd/node.h"
#include "backends/cpu/vec_math.h"
#include "core/dispatch.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"
#include "stride/parallel.h"
#include "stride/profiler.h"

namespace stride::nn::functional {

namespace {

using autograd::Grads;
using autograd::SavedTensor;
namespace vec = ::stride::cpu::vec;

constexpr int64_t kGrain = 4096;

void check_args(const Tensor& gate, const Tensor& up, const char* op) {
  STRIDE_CHECK(gate.is_floating_point() && up.dtype() == gate.dtype(), DTypeError, "[", op,
               "] expected gate and up of one floating-point dtype; got ", to_string(gate.dtype()),
               " and ", to_string(up.dtype()), ".");
  STRIDE_CHECK(gate.sizes() == up.sizes(), ShapeError, "[", op,
               "] expected gate and up of one shape; got ", shape_str(gate.sizes()), " and ",
               shape_str(up.sizes()), ". Hint: both are projections of the same x: w1(x), w3(x).");
}

template <class T>
void forward_kernel(const T* g, const T* u, T* y, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    parallel_for(0, n, kGrain, [&](int64_t begin, int64_t end) {
      vec::for_each_block(begin, end, [&](int64_t i, int64_t m) {
        const vec::Vec16f gv = vec::load_n(g + i, m);
        vec::store_n(y + i, gv * vec::sigmoid(gv) * vec::load_n(u + i, m), m);
      });
    });
  } else {
    parallel_for(0, n, kGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const T s = T(1) / (T(1) + std::exp(-g[i]));
        y[i] = g[i] * s * u[i];
      }
    });
  }
}

template <class T>
void backward_kernel(const T* dy, const T* g, const T* u, T* dg, T* du, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    parallel_for(0, n, kGrain, [&](int64_t begin, int64_t end) {
      vec::for_each_block(begin, end, [&](int64_t i, int64_t m) {
        const vec::Vec16f dyv = vec::load_n(dy + i, m), gv = vec::load_n(g + i, m);
        const vec::Vec16f s = vec::sigmoid(gv);
        if (dg) vec::store_n(dg + i, dyv * vec::load_n(u + i, m) * s * (1.0f + gv * (1.0f - s)), m);
        if (du) vec::store_n(du + i, dyv * gv * s, m);
      });
    });
  } else {
    parallel_for(0, n, kGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const T s = T(1) / (T(1) + std::exp(-g[i]));
        if (dg) dg[i] = dy[i] * u[i] * s * (T(1) + g[i] * (T(1) - s));
        if (du) du[i] = dy[i] * g[i] * s;
      }
    });
  }
}

Grads backward_with_ops(
    const Tensor& dy, const Tensor& g, const Tensor& u, bool need_g, bool need_u) {
  const Tensor s = g.sigmoid();
  Tensor dg, du;
  if (need_g) dg = dy * u * s * (1.0 + g * (1.0 - s));
  if (need_u) du = dy * g * s;
  return {dg, du};
}

}  // namespace

Tensor swiglu(const Tensor& gate, const Tensor& up) {
  check_args(gate, up, "swiglu");
  if (gate.dtype() == kFloat16 || gate.dtype() == kBFloat16) {
    return swiglu(gate.to(kFloat32), up.to(kFloat32)).to(gate.dtype());
  }
  profiler::RecordFunction record("swiglu", {gate, up});
  Tensor y = empty(gate.sizes(), gate.dtype());
  {
    NoGradGuard no_grad;
    const Tensor gc = gate.contiguous(), uc = up.contiguous();
    ::stride::detail::dispatch_floating(gate.dtype(), "swiglu", [&](auto tag) {
      using T = typename decltype(tag)::type;
      forward_kernel<T>(gc.data_ptr<T>(), uc.data_ptr<T>(), y.data_ptr<T>(), y.numel());
    });
  }
  const bool need_g = autograd::requires_grad(gate);
  const bool need_u = autograd::requires_grad(up);
  if (auto node = autograd::make_node("swiglu", {&gate, &up}, {&y})) {
    node->set_backward([sg = SavedTensor::input(gate), su = SavedTensor::input(up), need_g,
                        need_u](const Grads& gs) {
      const Tensor g = sg.get(), u = su.get();
      if (GradMode::is_enabled()) return backward_with_ops(gs[0], g, u, need_g, need_u);
      const Tensor dy = gs[0].contiguous(), gc = g.contiguous(), uc = u.contiguous();
      Tensor dg = need_g ? empty(g.sizes(), g.dtype()) : Tensor();
      Tensor du = need_u ? empty(u.sizes(), u.dtype()) : Tensor();
      ::stride::detail::dispatch_floating(g.dtype(), "swiglu_backward", [&](auto tag) {
        using T = typename decltype(tag)::type;
        backward_kernel<T>(dy.data_ptr<T>(), gc.data_ptr<T>(), uc.data_ptr<T>(),
                           need_g ? dg.data_ptr<T>() : nullptr, need_u ? du.data_ptr<T>() : nullptr,
                           dy.numel());
      });
      return Grads{dg, du};
    });
  }
  return y;
}

Tensor swiglu_reference(const Tensor& gate, const Tensor& up) {
  check_args(gate, up, "swiglu_reference");
  return gate.silu() * up;
}

}  // namespace stride::nn::functional
