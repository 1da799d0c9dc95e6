// The elementwise losses of torch.nn.functional beyond mse_loss, each
// composed of ops (listed as Composite in src/core/op_list.h) with PyTorch's
// formulas, so that the values, the gradients and double backward are
// PyTorch's.
#include <numbers>
#include <string>

#include "core/check.h"
#include "nn/functional_internal.h"
#include "ops/apply.h"
#include "stride/autograd.h"
#include "stride/logging.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"

namespace stride::nn::functional {

namespace {

using detail::reduce_loss;
using ::stride::detail::check_dtype_rule;
using ::stride::detail::Op;
using ::stride::detail::str_cat;

// A target that only broadcasts against the input is almost always a bug
// ((N, 1) against (N)): PyTorch warns, and so does stride, once per op.
void warn_if_broadcast(const Tensor& input, const Tensor& target, const char* op) {
  if (input.sizes() == target.sizes()) return;
  const DimVector b = broadcast_shapes(input.sizes(), target.sizes(), op);
  logging::warn_once(
      str_cat(op, "_broadcast"),
      str_cat("[", op, "] input ", shape_str(input.sizes()), " and target ",
              shape_str(target.sizes()), " have different shapes; they broadcast to ", shape_str(b),
              ", which is rarely intended and gives a wrong loss. Hint: make the "
              "shapes equal (e.g. target.view_as(input))."));
}

// PyTorch's weights of l1_loss and huber_loss have the input's shape.
void check_weight_shape(const Tensor& input, const Tensor& weight, const char* op) {
  STRIDE_CHECK(!weight.defined() || weight.sizes() == input.sizes(), ShapeError, "[", op,
               "] weight must have the input's shape ", shape_str(input.sizes()), "; got ",
               shape_str(weight.sizes()), ".");
}

// PyTorch's binary cross-entropy takes a target of the input's shape, where
// its other losses broadcast.
void check_same_shape(const Tensor& input, const Tensor& target, const char* op) {
  STRIDE_CHECK(input.sizes() == target.sizes(), ValueError, "[", op, "] target ",
               shape_str(target.sizes()), " must have the input's shape ", shape_str(input.sizes()),
               ". Hint: target.view_as(input) if they only differ by "
               "size-1 dims.");
}

}  // namespace

Tensor l1_loss(const Tensor& input,
               const Tensor& target,
               Reduction reduction,
               const Tensor& weight) {
  check_dtype_rule(Op::l1_loss, input);
  warn_if_broadcast(input, target, "l1_loss");
  check_weight_shape(input, weight, "l1_loss");
  const Tensor loss = (input - target).abs();
  if (!weight.defined()) return reduce_loss(loss, reduction);
  const Tensor weighted = loss * weight;
  // PyTorch's weighted mean divides by the weights' sum, not the count.
  return reduction == Reduction::Mean ? weighted.sum() / weight.sum()
                                      : reduce_loss(weighted, reduction);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction, double beta) {
  check_dtype_rule(Op::smooth_l1_loss, input);
  STRIDE_CHECK(beta >= 0, ValueError, "[smooth_l1_loss] beta must be >= 0; got ", beta,
               ". Hint: beta = 0 is l1_loss.");
  warn_if_broadcast(input, target, "smooth_l1_loss");
  const Tensor z = (input - target).abs();
  if (beta == 0) return reduce_loss(z, reduction);
  return reduce_loss(where(z.lt(beta), z * 0.5 * z / beta, z - 0.5 * beta), reduction);
}

Tensor huber_loss(const Tensor& input,
                  const Tensor& target,
                  Reduction reduction,
                  double delta,
                  const Tensor& weight) {
  check_dtype_rule(Op::huber_loss, input);
  STRIDE_CHECK(delta > 0, ValueError, "[huber_loss] delta must be > 0; got ", delta, ".");
  warn_if_broadcast(input, target, "huber_loss");
  check_weight_shape(input, weight, "huber_loss");
  const Tensor z = (input - target).abs();
  const Tensor loss = where(z.lt(delta), z * 0.5 * z, (z - 0.5 * delta) * delta);
  return reduce_loss(weight.defined() ? loss * weight : loss, reduction);
}

Tensor binary_cross_entropy(const Tensor& input,
                            const Tensor& target,
                            const Tensor& weight,
                            Reduction reduction) {
  check_dtype_rule(Op::binary_cross_entropy, input);
  check_same_shape(input, target, "binary_cross_entropy");
  if (!input.device().is_meta()) {  // no values on meta
    NoGradGuard no_grad;
    STRIDE_CHECK((input.ge(0.0) * input.le(1.0)).all().item<bool>(), ValueError,
                 "[binary_cross_entropy] every element of input must be a "
                 "probability in [0, 1]. Hint: "
                 "for logits (unbounded scores) use "
                 "binary_cross_entropy_with_logits, or apply sigmoid.");
  }
  // PyTorch's loss, (t - 1) max(log(1 - x), -100) - t max(log(x), -100),
  // whose gradient it defines as (x - t) / max(x (1 - x), 1e-12): the exact
  // derivative where x (1 - x) >= 1e-12, and finite at x = 0 and x = 1.
  // Inside, the loss is composed as written (on x moved off the edges, so
  // that the branch not taken has no infinite log whose zero gradient would
  // be NaN); at the edges it is the loss's value plus (x - x') times that
  // gradient, x' a detached copy of x: zero in value, PyTorch's gradient.
  constexpr double kEpsilon = 1e-12f;  // PyTorch's EPSILON, a float: 1e-12 rounded to float32
  const Tensor inside = (input * (1.0 - input)).ge(kEpsilon);
  const auto loss_at = [&](const Tensor& x) {
    return (target - 1.0) * log1p(-x).clamp(-100.0, std::nullopt) -
           target * log(x).clamp(-100.0, std::nullopt);
  };
  const Tensor x_inside = where(inside, input, full_like(input, 0.5));
  const Tensor x_detached = input.detach();
  const Tensor edge_gradient =
      (x_detached - target) / (x_detached * (1.0 - x_detached)).clamp(kEpsilon, std::nullopt);
  const Tensor at_edge = loss_at(x_detached) + (input - x_detached) * edge_gradient;
  Tensor loss = where(inside, loss_at(x_inside), at_edge);
  if (weight.defined()) loss = loss * weight;
  return reduce_loss(loss, reduction);
}

Tensor binary_cross_entropy_with_logits(const Tensor& input,
                                        const Tensor& target,
                                        const Tensor& weight,
                                        const Tensor& pos_weight,
                                        Reduction reduction) {
  check_dtype_rule(Op::binary_cross_entropy_with_logits, input);
  check_same_shape(input, target, "binary_cross_entropy_with_logits");
  // PyTorch's form: (1 - t) x - w_log logsigmoid(x), where logsigmoid never
  // overflows; w_log = 1 + (pos_weight - 1) t weighs the positive term.
  const Tensor log_sigmoid = logsigmoid(input);
  Tensor loss = (1.0 - target) * input;
  loss = pos_weight.defined() ? loss - ((pos_weight - 1.0) * target + 1.0) * log_sigmoid
                              : loss - log_sigmoid;
  if (weight.defined()) loss = loss * weight;
  return reduce_loss(loss, reduction);
}

Tensor kl_div(const Tensor& input,
              const Tensor& target,
              std::string_view reduction,
              bool log_target) {
  check_dtype_rule(Op::kl_div, input);
  STRIDE_CHECK(
      reduction == "none" || reduction == "sum" || reduction == "mean" || reduction == "batchmean",
      ValueError, "[kl_div] reduction must be 'none', 'sum', 'mean' or 'batchmean'; got '",
      reduction, "'.");
  Tensor loss;
  if (log_target) {
    loss = exp(target) * (target - input);
  } else {
    // xlogy(t, t) - t x: t log t is 0 where t is 0 (log of 1 there, so that
    // neither the value nor the gradient sees log 0).
    const Tensor t_log_t = target * log(where(target.eq(0.0), ones_like(target), target));
    loss = t_log_t - target * input;
  }
  if (reduction == "none") return loss;
  if (reduction == "sum") return loss.sum();
  if (reduction == "mean") {
    logging::warn_once("kl_div_mean",
                       "[kl_div] reduction='mean' divides the total loss by "
                       "both the batch size and the support "
                       "size; 'batchmean' divides only by the batch size, as "
                       "the KL divergence's definition.");
    return loss.mean();
  }
  return input.dim() == 0 ? loss.sum() : loss.sum() / double(input.size(0));
}

Tensor soft_margin_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  check_dtype_rule(Op::soft_margin_loss, input);
  // PyTorch's log1p(exp(-input target)), as -logsigmoid(input target), which
  // never overflows: its float32 double backward through exp would.
  return reduce_loss(-logsigmoid(input * target), reduction);
}

Tensor hinge_embedding_loss(const Tensor& input,
                            const Tensor& target,
                            double margin,
                            Reduction reduction) {
  check_dtype_rule(Op::hinge_embedding_loss, input);
  const Tensor zeros = zeros_like(input);
  const Tensor margin_part = where(target.ne(1), (margin - input).clamp(0.0, std::nullopt), zeros);
  const Tensor self_part = where(target.ne(-1), input, zeros);
  return reduce_loss(margin_part + self_part, reduction);
}

Tensor poisson_nll_loss(const Tensor& input,
                        const Tensor& target,
                        bool log_input,
                        bool full,
                        double eps,
                        Reduction reduction) {
  check_dtype_rule(Op::poisson_nll_loss, input);
  Tensor loss = log_input ? exp(input) - target * input : input - target * log(input + eps);
  if (full) {
    // Stirling's log(t!) ~ t log t - t + log(2 pi t) / 2, for t > 1 only.
    const Tensor stirling =
        target * log(target) - target + log(target * (2 * std::numbers::pi)) * 0.5;
    loss = loss + stirling.masked_fill(target.le(1), 0);
  }
  return reduce_loss(loss, reduction);
}

}  // namespace stride::nn::functional
