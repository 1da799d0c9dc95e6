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
// instead, so that it can be differentiated again. The kernels are in
// src/backends/cpu/cross_entropy.cpp.
#include <memory>
#include <string>
#include <vector>

#include "backends/kernels.h"
#include "nn/functional_internal.h"
#include "ops/apply.h"
#include "stride/logging.h"
#include "stride/ops.h"

namespace stride::nn::functional {

namespace {

using autograd::Grads;
using autograd::SavedTensor;

// The loss's reduction as the kernels take it.
kernels::LossReduction kernel_reduction(Reduction r) {
  return r == Reduction::None   ? kernels::LossReduction::None
         : r == Reduction::Mean ? kernels::LossReduction::Mean
                                : kernels::LossReduction::Sum;
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
  ::stride::detail::check_dtype_rule(::stride::detail::Op::cross_entropy, op, &logits);
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
  const Tensor x = detail::class_rows(logits, target, "cross_entropy");
  auto t = std::make_shared<detail::Targets>(
      detail::read_targets(target, x.size(1), ignore_index, "cross_entropy"));
  Tensor lse = empty({x.size(0)}, x.options());
  bool looks_like_probabilities = false;
  auto forward = [&] {
    Tensor out =
        reduction == Reduction::None ? empty({x.size(0)}, x.options()) : empty({}, x.options());
    kernels::cross_entropy_forward(x.device(), x, t->values, ignore_index, label_smoothing,
                                   kernel_reduction(reduction), t->count, lse, out,
                                   looks_like_probabilities);
    return reduction == Reduction::None ? out.view(target.sizes()) : out;
  };
  auto backward = [&](const Tensor&) {
    return [sx = SavedTensor::input(x), lse, t, ignore_index, reduction,
            label_smoothing](const Grads& gs) {
      const Tensor xv = sx.get();
      if (GradMode::is_enabled()) {
        return Grads{backward_with_ops(xv, gs[0], t->values, ignore_index, reduction, t->count,
                                       label_smoothing)};
      }
      Tensor gx = empty(xv.sizes(), xv.options());
      // The upstream gradient read as float64 values, one per row or one.
      const Tensor g = gs[0].to(kFloat64).contiguous();
      kernels::cross_entropy_backward(xv.device(), g, xv, lse, t->values, ignore_index,
                                      label_smoothing, kernel_reduction(reduction), t->count, gx);
      return Grads{gx};
    };
  };
  Tensor out =
      ::stride::detail::apply(::stride::detail::Op::cross_entropy, {&x}, forward, backward);
  if (looks_like_probabilities) {
    logging::warn_once("cross_entropy_probabilities", probability_warning());
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
  const auto [valid, index] = detail::target_masks(t, rows, ignore_index, x.device());
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
