// The CPU kernels of rms_norm (backends/kernels.h): one pass per row
// forward, the backward of Note [RMSNorm backward].
//
// Note [RMSNorm backward]
// ~~~~~~~~~~~~~~~~~~~~~~~
// With u = g * w (u = g without weight) and D the row length,
//   d rstd / d x_j = -rstd^3 * x_j / D, so
//   grad_x = rstd * (u - x * rstd^2 * mean(u * x))
//   grad_w = sum over rows of g * x * rstd.
// The forward saves rstd per row; the backward reads it. When the backward is
// recorded (create_graph) it is written with public ops and recomputes rstd
// from x, so that second derivatives are right.
//
// The per-row sums accumulate in double; for float32 they run over 16 double
// lanes added in a fixed order, so a row's bits do not depend on the thread
// count.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "backends/cpu/capability.h"
#include "backends/cpu/vec_math.h"
#include "backends/kernels.h"
#include "core/dispatch.h"
#include "stride/parallel.h"

namespace STRIDE_CPU_NAMESPACE {

namespace {

int64_t row_grain(int64_t len) {
  return std::max<int64_t>(1, 4096 / std::max<int64_t>(len, 1));
}

// The row sums below keep one float64 sum per lane of vec_math's 16-lane
// blocks, in kParts vectors of the register width (vec::NativeVecd): as two
// 8-double vectors, GCC spills them to the stack on every block on AVX2,
// which dominated rms_norm's forward.
using WideVec = vec::NativeVecd;
constexpr int64_t kWide = vec::kNativeDoubles;
constexpr int kParts = int(vec::kLanes / kWide);
using vec::widen_native;

// part[q] += the products of lanes [q kWide, (q + 1) kWide) of a 16-lane block.
template <bool kThree>
inline void add_block(WideVec (&part)[kParts], const float* a, const float* b, const float* c) {
  for (int q = 0; q < kParts; ++q) {
    WideVec prod = widen_native(a + q * kWide) * widen_native(b + q * kWide);
    if constexpr (kThree) prod *= widen_native(c + q * kWide);
    part[q] += prod;
  }
}

template <bool kThree>
double row_dot_lanes(const float* a, const float* b, const float* c, int64_t len) {
  WideVec part[kParts];
  for (WideVec& p : part) p = WideVec{};
  int64_t i = 0;
  for (; i + vec::kLanes <= len; i += vec::kLanes) {
    add_block<kThree>(part, a + i, b + i, kThree ? c + i : nullptr);
  }
  if (i < len) {  // a last, partial block, zero-padded: its padding adds 0
    float pa[vec::kLanes], pb[vec::kLanes], pc[vec::kLanes];
    std::fill_n(pa, vec::kLanes, 0.0f);
    std::fill_n(pb, vec::kLanes, 0.0f);
    std::fill_n(pc, vec::kLanes, 0.0f);
    std::copy(a + i, a + len, pa);
    std::copy(b + i, b + len, pb);
    if constexpr (kThree) std::copy(c + i, c + len, pc);
    add_block<kThree>(part, pa, pb, pc);
  }
  double total = 0;
  for (int q = 0; q < kParts / 2; ++q) {
    const WideVec pair = part[q] + part[q + kParts / 2];  // lanes l and l + 8
    for (int l = 0; l < kWide; ++l) total += pair[l];
  }
  return total;
}

// sum of a[i] * b[i] (* c[i] where c is given) over a row, in double: lane l
// of each 16-lane block adds into its own sum, and the sums are added as
// vec::sum does (lanes l and l + 8, in lane order), so a row's bits do not
// depend on the thread count.
template <class T>
double row_dot(const T* a, const T* b, const T* c, int64_t len) {
  if constexpr (std::is_same_v<T, float>) {
    return c != nullptr ? row_dot_lanes<true>(a, b, c, len) : row_dot_lanes<false>(a, b, c, len);
  } else {
    double acc = 0;
    for (int64_t i = 0; i < len; ++i) {
      acc += c ? double(a[i]) * double(b[i]) * double(c[i]) : double(a[i]) * double(b[i]);
    }
    return acc;
  }
}

// x (R, D) contiguous, w (D) contiguous or null -> y (R, D), rstd (R).
template <class T>
void forward_rows(const T* x, const T* w, T* y, T* rstd, int64_t rows, int64_t len, double eps) {
  parallel_for(0, rows, row_grain(len), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* xr = x + r * len;
      T* yr = y + r * len;
      const double ss = row_dot<T>(xr, xr, nullptr, len);
      const T rs = T(1.0 / std::sqrt(ss / double(len) + eps));
      rstd[r] = rs;
      if (w) {
        for (int64_t i = 0; i < len; ++i) yr[i] = xr[i] * rs * w[i];
      } else {
        for (int64_t i = 0; i < len; ++i) yr[i] = xr[i] * rs;
      }
    }
  });
}

// grad_x (Note [RMSNorm backward]); g, x (R, D) contiguous.
template <class T>
void backward_input(
    const T* g, const T* x, const T* w, const T* rstd, T* gx, int64_t rows, int64_t len) {
  parallel_for(0, rows, row_grain(len), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* gr = g + r * len;
      const T* xr = x + r * len;
      T* out = gx + r * len;
      const double dot = w ? row_dot(gr, w, xr, len) : row_dot<T>(gr, xr, nullptr, len);
      const double rs = double(rstd[r]);
      const double c = rs * rs * rs * dot / double(len);
      if (w) {
        for (int64_t i = 0; i < len; ++i) {
          out[i] = T(double(gr[i]) * double(w[i]) * rs - double(xr[i]) * c);
        }
      } else {
        for (int64_t i = 0; i < len; ++i) out[i] = T(double(gr[i]) * rs - double(xr[i]) * c);
      }
    }
  });
}

// grad_w: each column summed over rows in row order (the same bits for every
// thread count); threads take blocks of columns.
template <class T>
void backward_weight(const T* g, const T* x, const T* rstd, T* gw, int64_t rows, int64_t len) {
  constexpr int64_t kBlock = 64;
  const int64_t blocks = (len + kBlock - 1) / kBlock;
  parallel_for(0, blocks, 1, [&](int64_t begin, int64_t end) {
    double acc[kBlock];
    for (int64_t b = begin; b < end; ++b) {
      const int64_t j0 = b * kBlock, j1 = std::min(len, j0 + kBlock);
      std::fill(acc, acc + kBlock, 0.0);
      for (int64_t r = 0; r < rows; ++r) {
        const double rs = double(rstd[r]);
        const T* gr = g + r * len;
        const T* xr = x + r * len;
        for (int64_t j = j0; j < j1; ++j) acc[j - j0] += double(gr[j]) * double(xr[j]) * rs;
      }
      for (int64_t j = j0; j < j1; ++j) gw[j] = T(acc[j - j0]);
    }
  });
}

void rms_norm_forward_kernel(
    const Tensor& x, const Tensor& w, double eps, Tensor& y, Tensor& rstd) {
  const int64_t len = x.size(-1);
  const int64_t rows = len == 0 ? 0 : x.numel() / len;
  detail::dispatch_floating(x.dtype(), "rms_norm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    forward_rows<T>(x.data_ptr<T>(), w.defined() ? w.data_ptr<T>() : nullptr, y.data_ptr<T>(),
                    rstd.data_ptr<T>(), rows, len, eps);
  });
}

void rms_norm_backward_kernel(
    const Tensor& g, const Tensor& x, const Tensor& w, const Tensor& rstd, Tensor& gx, Tensor& gw) {
  const int64_t len = x.size(-1);
  const int64_t rows = len == 0 ? 0 : x.numel() / len;
  detail::dispatch_floating(x.dtype(), "rms_norm_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (gx.defined()) {
      backward_input<T>(g.data_ptr<T>(), x.data_ptr<T>(), w.defined() ? w.data_ptr<T>() : nullptr,
                        rstd.data_ptr<T>(), gx.data_ptr<T>(), rows, len);
    }
    if (gw.defined()) {
      backward_weight<T>(g.data_ptr<T>(), x.data_ptr<T>(), rstd.data_ptr<T>(), gw.data_ptr<T>(),
                         rows, len);
    }
  });
}

}  // namespace

STRIDE_REGISTER_CPU_KERNEL(kernels::rms_norm_forward, rms_norm_forward_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::rms_norm_backward, rms_norm_backward_kernel);

}  // namespace STRIDE_CPU_NAMESPACE
