// The CPU kernels of swiglu (backends/kernels.h): one pass forward and one
// pass backward. float32 runs 16 lanes at a time with the vector exp
// (backends/cpu/vec_math.h); float64 keeps the scalar loops and std::exp.
//
// beta's gradient sums over every element: fixed blocks of kGrain elements
// are summed in float64 and then added in block order, so its bits do not
// depend on the thread count.
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "backends/cpu/capability.h"
#include "backends/cpu/vec_math.h"
#include "backends/kernels.h"
#include "core/dispatch.h"
#include "stride/parallel.h"

namespace STRIDE_CPU_NAMESPACE {

namespace {

// Elements per task, and per block of beta's gradient sum.
constexpr int64_t kGrain = 4096;

// Note [Register-width swiglu]
// The float kernels run their whole blocks of vec::kLanes in vectors of the
// CPU's width (8 lanes without AVX-512) and only a last, partial block in
// vec_math's 16-lane vectors: on CPUs without AVX-512 the 16-lane code
// moves its loads, stores and sigmoid's halves through the stack (measured:
// bench/HISTORY.md). Every lane does the same operations either way (Note
// [Register width]), so the bits do not change.
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

void swiglu_forward_kernel(const Tensor& gate, const Tensor& up, const Tensor& beta, Tensor& y) {
  detail::dispatch_floating(gate.dtype(), "swiglu", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T b = beta.defined() ? beta.item<T>() : T(1);
    forward_kernel<T>(gate.data_ptr<T>(), up.data_ptr<T>(), b, y.data_ptr<T>(), y.numel());
  });
}

void swiglu_backward_kernel(const Tensor& dy,
                            const Tensor& gate,
                            const Tensor& up,
                            const Tensor& beta,
                            Tensor& dgate,
                            Tensor& dup,
                            Tensor& dbeta) {
  const bool need_beta = dbeta.defined();
  std::vector<double> dbeta_blocks(need_beta ? size_t((dy.numel() + kGrain - 1) / kGrain) : 0);
  detail::dispatch_floating(gate.dtype(), "swiglu_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T bv = beta.defined() ? beta.item<T>() : T(1);
    backward_kernel<T>(dy.data_ptr<T>(), gate.data_ptr<T>(), up.data_ptr<T>(), bv,
                       dgate.defined() ? dgate.data_ptr<T>() : nullptr,
                       dup.defined() ? dup.data_ptr<T>() : nullptr,
                       need_beta ? dbeta_blocks.data() : nullptr, dy.numel());
    if (need_beta) {
      double sum = 0;
      for (double part : dbeta_blocks) sum += part;
      *dbeta.data_ptr<T>() = T(sum);
    }
  });
}

}  // namespace

STRIDE_REGISTER_CPU_KERNEL(kernels::swiglu_forward, swiglu_forward_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::swiglu_backward, swiglu_backward_kernel);

}  // namespace STRIDE_CPU_NAMESPACE
