// The CPU kernels of cross_entropy (backends/kernels.h): one pass per row
// forward and backward (Note [Fused cross-entropy] in src/nn/cross_entropy.cpp
// gives the formulas).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "backends/cpu/capability.h"
#include "backends/cpu/vec_math.h"
#include "backends/kernels.h"
#include "core/dispatch.h"
#include "stride/parallel.h"

namespace STRIDE_CPU_NAMESPACE {

namespace {

using kernels::LossReduction;

// Rows look like probability distributions when every value is in [0, 1] and
// each row sums to 1 within this tolerance (softmax output in float32 sums
// to 1 within ~1e-6; logits essentially never pass both tests).
constexpr double kProbabilitySumTolerance = 1e-3;

// What the forward needs of a row of logits.
template <class T>
struct RowStats {
  T max, min, shift;  // shift: the max, or 0 for an all -inf row (lse -inf)
  double sum_exp;     // sum of exp(x - shift)
  double sum;         // sum of x
};

// A NaN makes the max NaN (and so the loss); the min skips it. float32 runs
// 16 lanes at a time with the vector exp (backends/cpu/vec_math.h) and
// double-lane sums added in a fixed order; float64 keeps the scalar loop.
template <class T>
RowStats<T> row_stats(const T* row, int64_t classes) {
  constexpr T kInf = std::numeric_limits<T>::infinity();
  RowStats<T> st{-kInf, kInf, 0, 0, 0};
  if constexpr (std::is_same_v<T, float>) {
    const vec::Range range = vec::range_of(row, classes);
    st.max = range.max;
    st.min = range.min;
    st.shift = (std::isinf(st.max) && st.max < 0) ? 0.0f : st.max;
    // Logit c adds to float64 lane c % 16 (of kWides vectors of the register
    // width, Note [Register width] in vec_math.h); padding lanes add +0.
    constexpr int64_t W = vec::kNativeLanes;
    constexpr int kVecs = int(vec::kLanes / W), kWides = 2 * kVecs;
    vec::NativeVecd exps[kWides], xs[kWides];
    for (int w = 0; w < kWides; ++w) exps[w] = xs[w] = vec::NativeVecd{};
    for (int64_t c = 0; c < classes; c += vec::kLanes) {
      for (int v = 0; v < kVecs; ++v) {
        const int64_t at = c + v * W, n = std::min(classes - at, W);
        if (n <= 0) continue;
        // Padding lanes hold the shift, so that e^x's common case covers them.
        vec::NativeVec e =
            vec::detail::exp_lanes(vec::load_native_n(row + at, n, st.shift) - st.shift);
        if (n < W) e = vec::first_n(e, n);
        const vec::NativeVec x = vec::load_native_n(row + at, n);
        exps[2 * v] += vec::widen_part<0>(e);
        exps[2 * v + 1] += vec::widen_part<1>(e);
        xs[2 * v] += vec::widen_part<0>(x);
        xs[2 * v + 1] += vec::widen_part<1>(x);
      }
    }
    st.sum_exp = vec::sum_in_order(exps);
    st.sum = vec::sum_in_order(xs);
  } else {
    for (int64_t c = 0; c < classes; ++c) {
      const T v = row[c];
      st.max = (v > st.max || v != v) ? v : st.max;
      st.min = v < st.min ? v : st.min;
    }
    st.shift = (std::isinf(st.max) && st.max < 0) ? T(0) : st.max;
    for (int64_t c = 0; c < classes; ++c) {
      st.sum_exp += double(std::exp(row[c] - st.shift));
      st.sum += double(row[c]);
    }
  }
  return st;
}

// Fills lse and out and tells whether the rows look like probabilities.
template <class T>
bool forward_rows(const Tensor& x,
                  const std::vector<int64_t>& targets,
                  int64_t ignore_index,
                  double smoothing,
                  LossReduction reduction,
                  int64_t count,
                  Tensor& lse,
                  Tensor& out) {
  const int64_t rows = x.size(0), classes = x.size(1);
  const T* xp = x.data_ptr<T>();
  T* lp = lse.data_ptr<T>();
  std::vector<double> loss(size_t(rows), 0.0);
  std::atomic<bool> probabilities{classes >= 2};
  parallel_for(0, rows, std::max<int64_t>(1, 2048 / std::max<int64_t>(classes, 1)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t r = begin; r < end; ++r) {
                   const T* row = xp + r * classes;
                   const RowStats st = row_stats(row, classes);
                   const double l = double(st.shift) + std::log(st.sum_exp);
                   lp[r] = T(l);
                   if (probabilities.load(std::memory_order_relaxed) &&
                       !(st.min >= T(0) && st.max <= T(1) &&
                         std::fabs(st.sum - 1.0) <= kProbabilitySumTolerance)) {
                     probabilities.store(false, std::memory_order_relaxed);
                   }
                   const int64_t t = targets[size_t(r)];
                   if (t == ignore_index) continue;
                   const double nll = l - double(row[t]);
                   loss[size_t(r)] =
                       smoothing == 0
                           ? nll
                           : (1 - smoothing) * nll + smoothing * (l - st.sum / double(classes));
                 }
               });
  T* op = out.data_ptr<T>();
  if (reduction == LossReduction::None) {
    for (int64_t r = 0; r < rows; ++r) op[r] = T(loss[size_t(r)]);
  } else {
    double total = 0;  // in row order: the same bits for every thread count
    for (double v : loss) total += v;
    if (reduction == LossReduction::Mean) total /= double(count);  // 0 / 0 = NaN, as PyTorch
    *op = T(total);
  }
  return rows > 0 && probabilities.load();
}

// Per-row factor of the gradient: the row's upstream gradient, / count for
// Mean, 0 for ignored rows. `gv` is the gradient of the loss ((R) or one
// value).
std::vector<double> row_scales(const double* gv,
                               const std::vector<int64_t>& targets,
                               int64_t ignore_index,
                               LossReduction reduction,
                               int64_t count) {
  const size_t rows = targets.size();
  std::vector<double> scale(rows, 0.0);
  for (size_t r = 0; r < rows; ++r) {
    if (targets[r] == ignore_index) continue;
    const double up = reduction == LossReduction::None ? gv[r] : gv[0];
    scale[r] = reduction == LossReduction::Mean ? up / double(count) : up;
  }
  return scale;
}

template <class T>
void backward_rows(const Tensor& x,
                   const Tensor& lse,
                   const std::vector<int64_t>& targets,
                   const std::vector<double>& scale,
                   double smoothing,
                   Tensor& gx) {
  const int64_t rows = x.size(0), classes = x.size(1);
  const T* xp = x.data_ptr<T>();
  const T* lp = lse.data_ptr<T>();
  T* gp = gx.data_ptr<T>();
  const T off = T(smoothing / double(classes));
  const T on = T(1 - smoothing);
  parallel_for(0, rows, std::max<int64_t>(1, 2048 / std::max<int64_t>(classes, 1)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t r = begin; r < end; ++r) {
                   T* grow = gp + r * classes;
                   const double s = scale[size_t(r)];
                   if (s == 0) {
                     std::fill(grow, grow + classes, T(0));
                     continue;
                   }
                   const T* row = xp + r * classes;
                   const T l = lp[r], ts = T(s);
                   if constexpr (std::is_same_v<T, float>) {
                     vec::for_each_block(0, classes, [&](int64_t c, int64_t w) {
                       vec::store_n(grow + c, (vec::exp(vec::load_n(row + c, w) - l) - off) * ts,
                                    w);
                     });
                   } else {
                     for (int64_t c = 0; c < classes; ++c) {
                       grow[c] = (std::exp(row[c] - l) - off) * ts;
                     }
                   }
                   grow[targets[size_t(r)]] -= on * ts;
                 }
               });
}

void cross_entropy_forward_kernel(const Tensor& x,
                                  const std::vector<int64_t>& targets,
                                  int64_t ignore_index,
                                  double smoothing,
                                  LossReduction reduction,
                                  int64_t count,
                                  Tensor& lse,
                                  Tensor& out,
                                  bool& looks_like_probabilities) {
  detail::dispatch_floating(x.dtype(), "cross_entropy", [&](auto tag) {
    using T = typename decltype(tag)::type;
    looks_like_probabilities =
        forward_rows<T>(x, targets, ignore_index, smoothing, reduction, count, lse, out);
  });
}

void cross_entropy_backward_kernel(const Tensor& g,
                                   const Tensor& x,
                                   const Tensor& lse,
                                   const std::vector<int64_t>& targets,
                                   int64_t ignore_index,
                                   double smoothing,
                                   LossReduction reduction,
                                   int64_t count,
                                   Tensor& gx) {
  const std::vector<double> scale =
      row_scales(g.data_ptr<double>(), targets, ignore_index, reduction, count);
  detail::dispatch_floating(x.dtype(), "cross_entropy_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    backward_rows<T>(x, lse, targets, scale, smoothing, gx);
  });
}

}  // namespace

STRIDE_REGISTER_CPU_KERNEL(kernels::cross_entropy_forward, cross_entropy_forward_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::cross_entropy_backward, cross_entropy_backward_kernel);

}  // namespace STRIDE_CPU_NAMESPACE
