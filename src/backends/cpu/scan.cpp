// The CPU kernels of cumsum, cumprod and logcumsumexp, and of cummax and
// cummin (backends/kernels.h). As PyTorch's CPU kernel, floating values
// accumulate in double and each running value is rounded to the output's
// dtype as it is written; integers accumulate in int64. Each (outer, inner)
// line is one serial chain, so results do not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "backends/cpu/capability.h"
#include "backends/kernels.h"
#include "core/dispatch.h"
#include "stride/parallel.h"

namespace STRIDE_CPU_NAMESPACE {

namespace {

template <class T>
using Accumulator = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

using kernels::ScanKind;

// log(exp(a) + exp(b)) without overflow; -inf is its identity, NaN wins.
inline double log_add_exp(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  const double hi = std::max(a, b), lo = std::min(a, b);
  if (std::isinf(hi)) return hi;  // +inf, or both -inf
  return hi + std::log1p(std::exp(lo - hi));
}

template <ScanKind K, class A>
inline A scan_step(A a, A v) {
  if constexpr (K == ScanKind::Sum) {
    return a + v;
  } else if constexpr (K == ScanKind::Prod) {
    return a * v;
  } else if constexpr (std::is_floating_point_v<A>) {
    return A(log_add_exp(double(a), double(v)));
  } else {
    return a;  // logcumsumexp is floating only (checked by the op)
  }
}

template <ScanKind K, class A>
constexpr A scan_identity() {
  if constexpr (K == ScanKind::Prod) return A(1);
  if constexpr (K == ScanKind::LogSumExp && std::is_floating_point_v<A>) {
    return -std::numeric_limits<A>::infinity();
  }
  return A(0);
}

// One (n, inner) block. The kind is a template argument so that the step
// compiles to one instruction in the loop: with inner == 1 (a scan along
// the last dimension) the chain lives in a register, and with inner > 1 the
// columns advance together, row by row, in contiguous (vectorisable) reads.
template <ScanKind K, class T>
void scan_block(const T* x, T* out, int64_t n, int64_t inner, std::vector<Accumulator<T>>& acc) {
  using A = Accumulator<T>;
  if (inner == 1) {
    A a = scan_identity<K, A>();
    for (int64_t i = 0; i < n; ++i) {
      a = scan_step<K>(a, A(x[i]));
      out[i] = T(a);
    }
    return;
  }
  acc.assign(size_t(inner), scan_identity<K, A>());
  A* running = acc.data();
  for (int64_t i = 0; i < n; ++i) {
    const T* row = x + i * inner;
    T* dst = out + i * inner;
    for (int64_t j = 0; j < inner; ++j) {
      running[j] = scan_step<K>(running[j], A(row[j]));
      dst[j] = T(running[j]);
    }
  }
}

// Runs block(o) for each outer block of an (outer, n, inner) scan, threaded
// over the blocks.
template <class Block>
void for_each_block(int64_t outer, int64_t n, int64_t inner, Block block) {
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, n * inner));
  parallel_for(0, outer, grain, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) block(o);
  });
}

const char* scan_name(ScanKind kind) {
  if (kind == ScanKind::Prod) return "cumprod";
  return kind == ScanKind::Sum ? "cumsum" : "logcumsumexp";
}

template <ScanKind K>
void scan_kernel_of(const Tensor& x, Tensor& out) {
  const int64_t n = x.size(1), inner = x.size(2);
  detail::dispatch_numeric(x.dtype(), scan_name(K), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = x.data_ptr<T>();
    T* dst = out.data_ptr<T>();
    for_each_block(x.size(0), n, inner, [&](int64_t o) {
      std::vector<Accumulator<T>> acc;
      scan_block<K>(src + o * n * inner, dst + o * n * inner, n, inner, acc);
    });
  });
}

void scan_kernel(const Tensor& x, ScanKind kind, Tensor& out) {
  switch (kind) {
    case ScanKind::Sum:
      return scan_kernel_of<ScanKind::Sum>(x, out);
    case ScanKind::Prod:
      return scan_kernel_of<ScanKind::Prod>(x, out);
    case ScanKind::LogSumExp:
      return scan_kernel_of<ScanKind::LogSumExp>(x, out);
  }
}

// cummax / cummin: the running extreme and the last index that reached it
// (>= for max, <= for min, as PyTorch's); a NaN wins and stays, each later
// NaN taking the index.
template <bool IsMax>
void scan_extreme_kernel_of(const Tensor& x, Tensor& values, Tensor& indices) {
  const int64_t n = x.size(1), inner = x.size(2);
  detail::dispatch_numeric_and_bool(x.dtype(), IsMax ? "cummax" : "cummin", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = x.data_ptr<T>();
    T* vals = values.data_ptr<T>();
    int64_t* idx = indices.data_ptr<int64_t>();
    for_each_block(x.size(0), n, inner, [&](int64_t o) {
      const int64_t base = o * n * inner;
      for (int64_t j = 0; j < inner; ++j) {
        T best = src[base + j];
        int64_t at = 0;
        for (int64_t i = 0; i < n; ++i) {
          const int64_t k = base + i * inner + j;
          const T v = src[k];
          const bool reaches = IsMax ? v >= best : v <= best;
          if (v != v || (best == best && reaches)) {
            best = v;
            at = i;
          }
          vals[k] = best;
          idx[k] = at;
        }
      }
    });
  });
}

void scan_extreme_kernel(const Tensor& x, bool is_max, Tensor& values, Tensor& indices) {
  if (is_max) {
    scan_extreme_kernel_of<true>(x, values, indices);
  } else {
    scan_extreme_kernel_of<false>(x, values, indices);
  }
}

}  // namespace

STRIDE_REGISTER_CPU_KERNEL(kernels::scan, scan_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::scan_extreme, scan_extreme_kernel);

}  // namespace STRIDE_CPU_NAMESPACE
