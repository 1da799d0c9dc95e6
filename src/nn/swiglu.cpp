// swiglu(gate, up) = silu(gate) * up, Llama's feed-forward nonlinearity, in
// one pass forward and one pass backward (instead of silu, mul and, in the
// backward, sigmoid, four muls and two adds over the (tokens, hidden) slab).
// swiglu(gate, up, beta) is the Swish-beta form, with a one-element beta that
// may be learnable; the first is beta = 1, and both run the same kernels.
//
// With s = sigmoid(beta g):  y = g s u,
//   dy/dg = u s (1 + beta g (1 - s)),   dy/du = g s,   dy/dbeta = u g^2 s (1 - s).
// beta's gradient sums over every element: fixed blocks of kGrain elements
// are summed in float64 and then added in block order, so its bits do not
// depend on the thread count. When the backward is recorded (create_graph)
// it is written with public ops, so second derivatives are right.
// swiglu_reference is the same from basic ops: the test oracle. float32 runs
// 16 lanes at a time with the vector exp (backends/cpu/vec_math.h); float64
// keeps the scalar loops and std::exp.
#include <algorithm>
#include <cmath>
#include <optional>
#include <type_traits>
#include <vector>

#include "autograd/node.h"
#include "backends/cpu/vec_math.h"
#include "core/dispatch.h"
#include "ops/device_kernel.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"
#include "stride/parallel.h"
#include "stride/profiler.h"

namespace stride::nn::functional {

namespace {

using autograd::Grads;
using autograd::SavedTensor;
namespace vec = ::stride::cpu::vec;

// Elements per task, and per block of beta's gradient sum.
constexpr int64_t kGrain = 4096;

void check_args(const Tensor& gate, const Tensor& up, const Tensor& beta, const char* op) {
  STRIDE_CHECK(gate.is_floating_point() && up.dtype() == gate.dtype(), DTypeError, "[", op,
               "] expected gate and up of one floating-point dtype; got ", to_string(gate.dtype()),
               " and ", to_string(up.dtype()), ".");
  STRIDE_CHECK(gate.sizes() == up.sizes(), ShapeError, "[", op,
               "] expected gate and up of one shape; got ", shape_str(gate.sizes()), " and ",
               shape_str(up.sizes()), ". Hint: both are projections of the same x: w1(x), w3(x).");
  ::stride::detail::common_device(op, {&gate, &up, &beta});
  if (!beta.defined()) return;
  STRIDE_CHECK(beta.dtype() == gate.dtype(), DTypeError, "[", op,
               "] expected beta of gate's dtype ", to_string(gate.dtype()), "; got ",
               to_string(beta.dtype()), ".");
  STRIDE_CHECK(beta.numel() == 1, ShapeError, "[", op, "] expected a one-element beta; got shape ",
               shape_str(beta.sizes()), ".");
}

// Note [Register-width swiglu]
// The float kernels run their whole blocks of vec::kLanes in vectors of the
// CPU's width (8 lanes without AVX-512) and only a last, partial block in
// vec_math's 16-lane vectors. On a Zen 3 CPU (AVX2) the 16-lane code moved
// its loads, stores and sigmoid's halves through the stack: the correct
// Llama's swiglu (512 x 352, one thread, best of 300 calls with autograd)
// took 404 us forward and 450 us backward, now 170 and 194. Every lane does
// the same operations either way (Note [Register width]), so the bits do not
// change.
using NativeVec = vec::NativeVec;

inline NativeVec sigmoid_of(float beta, NativeVec g) {
  return 1.0f / (1.0f + vec::detail::exp_lanes(-(beta * g)));
}

// The end of [begin, end)'s whole blocks of vec::kLanes.
inline int64_t whole_blocks_end(int64_t begin, int64_t end) {
  return begin + (end - begin) / vec::kLanes * vec::kLanes;
}

template <class T>
void forward_kernel(const T* g, const T* u, T beta, T* y, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    parallel_for(0, n, kGrain, [&](int64_t begin, int64_t end) {
      const int64_t whole = whole_blocks_end(begin, end);
      for (int64_t i = begin; i < whole; i += vec::kNativeLanes) {
        const NativeVec gv = vec::load_native(g + i);
        vec::store_native(y + i, gv * sigmoid_of(beta, gv) * vec::load_native(u + i));
      }
      vec::for_each_block(whole, end, [&](int64_t i, int64_t m) {
        const vec::Vec16f gv = vec::load_n(g + i, m);
        vec::store_n(y + i, gv * vec::sigmoid(beta * gv) * vec::load_n(u + i, m), m);
      });
    });
  } else {
    parallel_for(0, n, kGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const T s = T(1) / (T(1) + std::exp(-(beta * g[i])));
        y[i] = g[i] * s * u[i];
      }
    });
  }
}

// dg, du and beta's gradient (a null pointer: not wanted). dbeta_blocks gets
// one float64 partial sum per block of kGrain elements.
template <class T>
void backward_kernel(
    const T* dy, const T* g, const T* u, T beta, T* dg, T* du, double* dbeta_blocks, int64_t n) {
  const int64_t blocks = (n + kGrain - 1) / kGrain;
  parallel_for(0, blocks, 1, [&](int64_t first, int64_t last) {
    for (int64_t b = first; b < last; ++b) {
      const int64_t begin = b * kGrain, end = std::min(n, begin + kGrain);
      if constexpr (std::is_same_v<T, float>) {
        // beta's gradient sums in float64 lanes: the 16-lane path does it all.
        const int64_t whole = dbeta_blocks == nullptr ? whole_blocks_end(begin, end) : begin;
        for (int64_t i = begin; i < whole; i += vec::kNativeLanes) {
          const NativeVec dyv = vec::load_native(dy + i), gv = vec::load_native(g + i);
          const NativeVec uv = vec::load_native(u + i);
          const NativeVec s = sigmoid_of(beta, gv);
          if (dg) vec::store_native(dg + i, dyv * uv * s * (1.0f + beta * gv * (1.0f - s)));
          if (du) vec::store_native(du + i, dyv * gv * s);
        }
        vec::Vec8d lo{}, hi{};
        vec::for_each_block(whole, end, [&](int64_t i, int64_t m) {
          // Padding lanes load dy = 0, so they add nothing to beta's sum.
          const vec::Vec16f dyv = vec::load_n(dy + i, m), gv = vec::load_n(g + i, m);
          const vec::Vec16f uv = vec::load_n(u + i, m);
          const vec::Vec16f s = vec::sigmoid(beta * gv);
          if (dg) vec::store_n(dg + i, dyv * uv * s * (1.0f + beta * gv * (1.0f - s)), m);
          if (du) vec::store_n(du + i, dyv * gv * s, m);
          if (dbeta_blocks) {
            const vec::Vec16f t = dyv * uv * gv * gv * s * (1.0f - s);
            lo += vec::low_f64(t);
            hi += vec::high_f64(t);
          }
        });
        if (dbeta_blocks) dbeta_blocks[b] = vec::sum(lo, hi);
      } else {
        double sum = 0;
        for (int64_t i = begin; i < end; ++i) {
          const T s = T(1) / (T(1) + std::exp(-(beta * g[i])));
          if (dg) dg[i] = dy[i] * u[i] * s * (T(1) + beta * g[i] * (T(1) - s));
          if (du) du[i] = dy[i] * g[i] * s;
          if (dbeta_blocks) sum += double(dy[i] * u[i] * g[i] * g[i] * s * (T(1) - s));
        }
        if (dbeta_blocks) dbeta_blocks[b] = sum;
      }
    }
  });
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
  profiler::RecordFunction record("swiglu", {gate, up});
  Tensor y = empty(gate.sizes(), gate.options());
  {
    NoGradGuard no_grad;
    const Tensor gc = gate.contiguous(), uc = up.contiguous();
    ::stride::detail::run_kernel("swiglu", gate.device(), [&] {
      ::stride::detail::dispatch_floating(gate.dtype(), "swiglu", [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T b = beta.defined() ? beta.item<T>() : T(1);
        forward_kernel<T>(gc.data_ptr<T>(), uc.data_ptr<T>(), b, y.data_ptr<T>(), y.numel());
      });
    });
  }
  const bool need_g = autograd::requires_grad(gate);
  const bool need_u = autograd::requires_grad(up);
  const bool need_beta = autograd::requires_grad(beta);
  if (auto node = autograd::make_node("swiglu", {&gate, &up, &beta}, {&y})) {
    // beta = 1 when undefined, which SavedTensor does not hold.
    std::optional<SavedTensor> sb;
    if (beta.defined()) sb = SavedTensor::input(beta);
    node->set_backward([sg = SavedTensor::input(gate), su = SavedTensor::input(up), sb, need_g,
                        need_u, need_beta](const Grads& gs) {
      const Tensor g = sg.get(), u = su.get(), b = sb ? sb->get() : Tensor();
      if (GradMode::is_enabled()) {
        return backward_with_ops(gs[0], g, u, b, need_g, need_u, need_beta);
      }
      const Tensor dy = gs[0].contiguous(), gc = g.contiguous(), uc = u.contiguous();
      Tensor dg = need_g ? empty(g.sizes(), g.options()) : Tensor();
      Tensor du = need_u ? empty(u.sizes(), u.options()) : Tensor();
      Tensor dbeta = need_beta ? empty(b.sizes(), g.options()) : Tensor();
      ::stride::detail::run_kernel("swiglu_backward", g.device(), [&] {
        std::vector<double> dbeta_blocks(need_beta ? size_t((dy.numel() + kGrain - 1) / kGrain)
                                                   : 0);
        ::stride::detail::dispatch_floating(g.dtype(), "swiglu_backward", [&](auto tag) {
          using T = typename decltype(tag)::type;
          const T bv = b.defined() ? b.item<T>() : T(1);
          backward_kernel<T>(dy.data_ptr<T>(), gc.data_ptr<T>(), uc.data_ptr<T>(), bv,
                             need_g ? dg.data_ptr<T>() : nullptr,
                             need_u ? du.data_ptr<T>() : nullptr,
                             need_beta ? dbeta_blocks.data() : nullptr, dy.numel());
          if (need_beta) {
            double sum = 0;
            for (double part : dbeta_blocks) sum += part;
            dbeta.fill_(T(sum));
          }
        });
      });
      return Grads{dg, du, dbeta};
    });
  }
  return y;
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
