// The CPU kernel of softmax and log_softmax (backends/kernels.h): float32 rows
// run 16 lanes at a time with the vector exp (vec_math.h) and a lane-wise
// sum, float within blocks and double across them; float64 keeps the scalar
// loop.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "backends/cpu/capability.h"
#include "backends/cpu/vec_math.h"
#include "backends/kernels.h"
#include "core/dispatch.h"
#include "stride/parallel.h"

namespace STRIDE_CPU_NAMESPACE {

namespace {

// Blocks of 16 lanes summed in float before a row's sum widens them to
// double: converting every block would cost as much as its exp. A lane adds
// at most 16 terms in float, each in (0, 1]; the order depends only on the
// row length.
constexpr int64_t kFloatBlocks = 16;

// One float32 row x -> y (len elements). The max takes NaN like the scalar
// loop; padding lanes add 0 to the sum, and vectors wholly past the row are
// skipped (they would add only zeros). A 16-lane block runs in vectors of
// the register width (Note [Register width] in vec_math.h), its float lane
// sums in kVecs of them and the float64 lane sums in NativeVecd, all held in
// registers: as 16-float and 8-double vectors, or as arrays copied out lane
// by lane, they would go through the stack on CPUs without AVX-512. Every
// lane adds what the 16-lane form adds, in the same order.
void softmax_row_f32(const float* x, float* y, int64_t len, bool log) {
  constexpr int64_t W = vec::kNativeLanes;
  constexpr int kVecs = int(vec::kLanes / W), kWides = 2 * kVecs;
  float m = vec::range_of(x, len).max;
  if (std::isinf(m) && m < 0) m = 0;  // an all -inf row: exp gives 0s
  vec::NativeVec acc[kVecs];
  vec::NativeVecd wide[kWides];
  for (vec::NativeVec& a : acc) a = vec::NativeVec{};
  for (vec::NativeVecd& a : wide) a = vec::NativeVecd{};
  // The float lanes widened into the float64 lanes, and cleared.
  auto flush = [&] {
    vec::add_widened(wide, acc);
    for (vec::NativeVec& a : acc) a = vec::NativeVec{};
  };
  int64_t blocks = 0;
  for (int64_t i = 0; i < len; i += vec::kLanes) {
    for (int v = 0; v < kVecs; ++v) {
      const int64_t at = i + v * W;
      if (at >= len) break;
      const int64_t n = std::min(len - at, W);
      // Padding lanes hold m, so that e^x's common case covers them, and add
      // +0.
      vec::NativeVec e = vec::detail::exp_lanes(vec::load_native_n(x + at, n, m) - m);
      if (n < W) e = vec::first_n(e, n);
      acc[v] += e;
      if (!log) vec::store_native_n(y + at, e, n);
    }
    if (++blocks % kFloatBlocks == 0) flush();
  }
  flush();
  const double sum = vec::sum_in_order(wide);
  if (log) {
    const float lse = float(std::log(sum));
    for (int64_t i = 0; i < len; ++i) y[i] = x[i] - m - lse;
  } else {
    const float inv = float(1.0 / sum);
    for (int64_t at = 0; at < len; at += W) {
      const int64_t n = std::min(len - at, W);
      vec::store_native_n(y + at, vec::load_native_n(y + at, n) * inv, n);
    }
  }
}

template <class T>
void softmax_row(const T* x, T* y, int64_t len, bool log) {
  T m = -std::numeric_limits<T>::infinity();
  for (int64_t i = 0; i < len; ++i) m = (x[i] > m || x[i] != x[i]) ? x[i] : m;
  if (std::isinf(m) && m < 0) m = 0;  // an all -inf row: exp gives 0s
  double sum = 0;
  if (log) {
    for (int64_t i = 0; i < len; ++i) sum += std::exp(double(x[i] - m));
    const T lse = T(std::log(sum));
    for (int64_t i = 0; i < len; ++i) y[i] = x[i] - m - lse;
  } else {
    for (int64_t i = 0; i < len; ++i) {
      y[i] = std::exp(x[i] - m);
      sum += double(y[i]);
    }
    const T inv = T(1.0 / sum);
    for (int64_t i = 0; i < len; ++i) y[i] *= inv;
  }
}

template <class T>
void softmax_rows(const T* in, T* out, int64_t rows, int64_t len, bool log) {
  parallel_for(0, rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(len, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t r = b; r < e; ++r) {
                   if constexpr (std::is_same_v<T, float>) {
                     softmax_row_f32(in + r * len, out + r * len, len, log);
                   } else {
                     softmax_row(in + r * len, out + r * len, len, log);
                   }
                 }
               });
}

void softmax_kernel(const Tensor& x, Tensor& out, bool log) {
  const int64_t len = x.size(-1);
  const int64_t rows = len == 0 ? 0 : x.numel() / len;
  detail::dispatch_floating(x.dtype(), log ? "log_softmax" : "softmax", [&](auto tag) {
    using T = typename decltype(tag)::type;
    softmax_rows<T>(x.data_ptr<T>(), out.data_ptr<T>(), rows, len, log);
  });
}

}  // namespace

STRIDE_REGISTER_CPU_KERNEL(kernels::softmax_rows, softmax_kernel);

}  // namespace STRIDE_CPU_NAMESPACE
