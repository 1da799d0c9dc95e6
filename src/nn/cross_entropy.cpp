// cross_entropy: log-softmax + NLL (+ label smoothing) fused into one pass
// per row, with its own backward; and cross_entropy_reference, the same loss
// composed from basic ops, which tests hold the fused op to.
//
// Note [Fused cross-entropy]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~
// For a row x of C logits, target t and smoothing e (PyTorch's formula):
//   lse  = max(x) + log(sum(exp(x - max(x))))
//   loss = (1 - e) * (lse - x[t]) + e * (lse - mean(x))
// since -log p_c = lse - x_c and the smoothing term is the mean of -log p
// over classes. The gradient with respect to x is
//   (softmax(x) - q) * scale,  q = (1 - e) * onehot(t) + e / C,
// where scale is the upstream gradient of the row (divided by the number of
// non-ignored rows for Mean) and 0 for ignored rows. The forward saves only
// lse per row; the backward recomputes softmax from it in one pass. When the
// backward is itself recorded (create_graph), it is written with public ops
// instead, so that it can be differentiated again.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <type_traits>

#include "autograd/node.h"
#include "backends/cpu/vec_math.h"
#include "core/dispatch.h"
#include "nn/functional_internal.h"
#include "ops/device_kernel.h"
#include "stride/logging.h"
#include "stride/ops.h"
#include "stride/parallel.h"
#include "stride/profiler.h"

namespace stride::nn::functional {

namespace {

using autograd::Grads;
using autograd::SavedTensor;

// Rows look like probability distributions when every value is in [0, 1] and
// each row sums to 1 within this tolerance (softmax output in float32 sums
// to 1 within ~1e-6; logits essentially never pass both tests).
constexpr double kProbabilitySumTolerance = 1e-3;

struct ForwardResult {
  Tensor out;  // per row (None) or 0-d
  Tensor lse;  // (R), x's dtype
  bool looks_like_probabilities = false;
};

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
    namespace vec = cpu::vec;
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

// Fills res.lse and res.out (allocated by the caller) and tells whether the
// rows look like probabilities.
template <class T>
void forward_rows(const Tensor& x,
                  const std::vector<int64_t>& targets,
                  int64_t ignore_index,
                  double smoothing,
                  Reduction reduction,
                  int64_t count,
                  ForwardResult& res) {
  const int64_t rows = x.size(0), classes = x.size(1);
  const T* xp = x.data_ptr<T>();
  T* lp = res.lse.data_ptr<T>();
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
  res.looks_like_probabilities = rows > 0 && probabilities.load();
  T* op = res.out.data_ptr<T>();
  if (reduction == Reduction::None) {
    for (int64_t r = 0; r < rows; ++r) op[r] = T(loss[size_t(r)]);
  } else {
    double total = 0;  // in row order: the same bits for every thread count
    for (double v : loss) total += v;
    if (reduction == Reduction::Mean) total /= double(count);  // 0 / 0 = NaN, as PyTorch
    *op = T(total);
  }
}

// Per-row factor of the gradient: the row's upstream gradient, / count for
// Mean, 0 for ignored rows. `g` is the gradient of the loss (0-d or (R)).
std::vector<double> row_scales(const Tensor& g,
                               const std::vector<int64_t>& targets,
                               int64_t ignore_index,
                               Reduction reduction,
                               int64_t count) {
  const size_t rows = targets.size();
  std::vector<double> scale(rows, 0.0);
  std::vector<double> gv;
  {
    NoGradGuard no_grad;
    gv = g.to_vector<double>();
  }
  for (size_t r = 0; r < rows; ++r) {
    if (targets[r] == ignore_index) continue;
    const double up = reduction == Reduction::None ? gv[r] : gv[0];
    scale[r] = reduction == Reduction::Mean ? up / double(count) : up;
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
                     cpu::vec::for_each_block(0, classes, [&](int64_t c, int64_t w) {
                       cpu::vec::store_n(
                           grow + c, (cpu::vec::exp(cpu::vec::load_n(row + c, w) - l) - off) * ts,
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

// The same gradient with public ops (differentiable again): create_graph.
Tensor backward_with_ops(const Tensor& x,
                         const Tensor& g,
                         const std::vector<int64_t>& targets,
                         int64_t ignore_index,
                         Reduction reduction,
                         int64_t count,
                         double smoothing) {
  const int64_t rows = x.size(0), classes = x.size(1);
  Tensor q, keep;
  {
    NoGradGuard no_grad;
    std::vector<double> qv(size_t(rows * classes), 0.0), kv(size_t(rows), 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t t = targets[size_t(r)];
      if (t == ignore_index) continue;
      kv[size_t(r)] = reduction == Reduction::Mean ? 1.0 / double(count) : 1.0;
      for (int64_t c = 0; c < classes; ++c)
        qv[size_t(r * classes + c)] = smoothing / double(classes);
      qv[size_t(r * classes + t)] += 1 - smoothing;
    }
    q = tensor<double>(qv, {rows, classes}).to(x.dtype()).to(x.device());
    keep = tensor<double>(kv, {rows}).to(x.dtype()).to(x.device());
  }
  const Tensor up = reduction == Reduction::None ? g.reshape({rows}) : g.reshape({1});
  return (stride::softmax(x, 1) - q) * (up * keep).unsqueeze(1);
}

std::string probability_warning() {
  return "[cross_entropy] cross_entropy expects logits (unnormalised scores) but its input rows "
         "look like probability distributions (every value in [0, 1], each row summing to 1). "
         "It applies log_softmax itself, so a softmax before it squashes the gradients and the "
         "model learns next to nothing. Hint: pass the scores before softmax (drop the "
         "softmax), or use nll_loss(log(probabilities), target) if you really have "
         "probabilities.";
}

void check_args(const Tensor& logits, double label_smoothing, const char* op) {
  STRIDE_CHECK(logits.is_floating_point(), DTypeError, "[", op,
               "] expected floating-point logits; got ", to_string(logits.dtype()),
               ". Hint: convert with .to(kFloat32).");
  STRIDE_CHECK(label_smoothing >= 0 && label_smoothing <= 1, ValueError, "[", op,
               "] expected 0 <= label_smoothing <= 1; got ", label_smoothing, ".");
}

}  // namespace

Tensor cross_entropy(const Tensor& logits,
                     const Tensor& target,
                     int64_t ignore_index,
                     Reduction reduction,
                     double label_smoothing) {
  check_args(logits, label_smoothing, "cross_entropy");
  if (logits.dtype() == kFloat16 || logits.dtype() == kBFloat16) {
    return cross_entropy(logits.to(kFloat32), target, ignore_index, reduction, label_smoothing)
        .to(logits.dtype());
  }
  profiler::RecordFunction record("cross_entropy", {logits, target});
  const Tensor x = detail::class_rows(logits, target, "cross_entropy");
  auto t = std::make_shared<detail::Targets>(
      detail::read_targets(target, x.size(1), ignore_index, "cross_entropy"));
  ForwardResult res;
  {
    NoGradGuard no_grad;
    const int64_t rows = x.size(0);
    res.lse = empty({rows}, x.options());
    res.out = reduction == Reduction::None ? empty({rows}, x.options()) : empty({}, x.options());
    ::stride::detail::run_kernel("cross_entropy", x.device(), [&] {
      ::stride::detail::dispatch_floating(x.dtype(), "cross_entropy", [&](auto tag) {
        using T = typename decltype(tag)::type;
        forward_rows<T>(x, t->values, ignore_index, label_smoothing, reduction, t->count, res);
      });
    });
    if (reduction == Reduction::None) res.out = res.out.view(target.sizes());
  }
  if (res.looks_like_probabilities) {
    logging::warn_once("cross_entropy_probabilities", probability_warning());
  }
  Tensor out = res.out;
  if (auto node = autograd::make_node("cross_entropy", {&x}, {&out})) {
    node->set_backward([sx = SavedTensor::input(x), lse = res.lse, t, ignore_index, reduction,
                        label_smoothing](const Grads& gs) {
      const Tensor xv = sx.get();
      if (GradMode::is_enabled()) {
        return Grads{backward_with_ops(xv, gs[0], t->values, ignore_index, reduction, t->count,
                                       label_smoothing)};
      }
      Tensor gx = empty(xv.sizes(), xv.options());
      ::stride::detail::run_kernel("cross_entropy_backward", xv.device(), [&] {
        const std::vector<double> scale =
            row_scales(gs[0], t->values, ignore_index, reduction, t->count);
        ::stride::detail::dispatch_floating(xv.dtype(), "cross_entropy_backward", [&](auto tag) {
          using T = typename decltype(tag)::type;
          backward_rows<T>(xv, lse, t->values, scale, label_smoothing, gx);
        });
      });
      return Grads{gx};
    });
  }
  return out;
}

Tensor cross_entropy_reference(const Tensor& logits,
                               const Tensor& target,
                               int64_t ignore_index,
                               Reduction reduction,
                               double label_smoothing) {
  check_args(logits, label_smoothing, "cross_entropy_reference");
  const Tensor x = detail::class_rows(logits, target, "cross_entropy_reference");
  const int64_t rows = x.size(0);
  const detail::Targets t =
      detail::read_targets(target, x.size(1), ignore_index, "cross_entropy_reference");
  Tensor valid, index;
  {
    NoGradGuard no_grad;
    std::vector<bool> keep(t.values.size());
    std::vector<int64_t> safe(t.values.size());
    for (size_t i = 0; i < t.values.size(); ++i) {
      keep[i] = t.values[i] != ignore_index;
      safe[i] = keep[i] ? t.values[i] : 0;
    }
    valid = tensor<bool>(keep, {rows}).to(x.device());
    index = tensor<int64_t>(safe, {rows, 1}).to(x.device());
  }
  const Tensor logp = stride::log_softmax(x, 1);
  const Tensor nll = -logp.gather(1, index).view({rows});
  Tensor per_row = nll;
  if (label_smoothing != 0) {
    per_row = nll * (1 - label_smoothing) - logp.mean({1}) * label_smoothing;
  }
  per_row = where(valid, per_row, scalar_tensor(0, x.options()));
  return detail::reduce_rows(per_row, target.sizes(), reduction, t.count);
}

}  // namespace stride::nn::functional
