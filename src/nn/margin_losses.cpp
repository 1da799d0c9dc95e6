// The margin, ranking, triplet and Gaussian losses of torch.nn.functional,
// and cross_entropy / nll_loss with class weights or probability targets.
// Each is composed of ops (listed as Composite in src/core/op_list.h, or
// the same op as the fused form it extends) with PyTorch's formulas, as
// PyTorch's own are CompositeImplicitAutograd, so the values, gradients and
// double backward are PyTorch's.
#include <cmath>
#include <numbers>

#include "core/check.h"
#include "nn/functional_internal.h"
#include "ops/apply.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"

namespace stride::nn::functional {

namespace {

using detail::reduce_loss;
using ::stride::detail::check_dtype_rule;
using ::stride::detail::Op;

// The class dim of (N, C, ...) inputs, or 0 for an unbatched (C).
int64_t class_dim(const Tensor& input) {
  return input.dim() >= 2 ? 1 : 0;
}

// weight (C) viewed to broadcast against input (N, C, ...) or (C).
Tensor along_class_dim(const Tensor& weight, const Tensor& input) {
  DimVector shape(size_t(input.dim()), 1);
  shape[size_t(class_dim(input))] = -1;
  return weight.view(shape);
}

void check_class_weight(const Tensor& input, const Tensor& weight, const char* op) {
  const int64_t classes = input.dim() ? input.size(class_dim(input)) : 0;
  STRIDE_CHECK(weight.dim() == 1 && weight.size(0) == classes, ValueError, "[", op,
               "] weight must hold one value per class, shape (", classes, "); got ",
               shape_str(weight.sizes()), ".");
}

// Each target's class weight (1 where weight is undefined), 0 at
// ignore_index; the picks use class 0 there so that every index is valid.
struct KeptTargets {
  Tensor safe;    // target with ignored entries as class 0
  Tensor kept;    // 1 where the target is not ignore_index, else 0 (the loss's dtype)
  Tensor weight;  // per-target weight, 0 where ignored
};

KeptTargets kept_targets(const Tensor& target,
                         const Tensor& weight,
                         int64_t ignore_index,
                         ScalarType dtype) {
  const Tensor mask = target.ne(ignore_index);
  const Tensor safe = where(mask, target, zeros_like(target));
  const Tensor kept = mask.to(dtype);
  if (!weight.defined()) return {safe, kept, kept};
  return {safe, kept, weight.gather(0, safe.reshape({-1})).view(safe.sizes()) * kept};
}

// -input[target] * weight[target]; the mean divides by the kept targets'
// total weight, as PyTorch's.
Tensor weighted_nll(const Tensor& input, const KeptTargets& k, Reduction reduction) {
  const int64_t cdim = class_dim(input);
  const Tensor picked = input.gather(cdim, k.safe.unsqueeze(cdim)).squeeze(cdim);
  const Tensor loss = -picked * k.weight;
  if (reduction == Reduction::Mean) return loss.sum() / k.weight.sum();
  return reduce_loss(loss, reduction);
}

// The uniform-target part of label smoothing, -sum_c w_c log p_c, its mean
// taken as the NLL's (over the kept targets' weight).
Tensor smoothing_term(const Tensor& logp,
                      const Tensor& weight,
                      const KeptTargets& k,
                      Reduction reduction) {
  const int64_t cdim = class_dim(logp);
  const Tensor per_class = weight.defined() ? logp * along_class_dim(weight, logp) : logp;
  const Tensor smooth = -per_class.sum({cdim}) * k.kept;
  if (reduction != Reduction::Mean) return reduce_loss(smooth, reduction);
  return smooth.sum() / k.weight.sum();
}

// -sum_c w_c target_c log softmax(input)_c for targets that are class
// probabilities; the mean divides by the number of samples.
Tensor probability_cross_entropy(const Tensor& input,
                                 const Tensor& target,
                                 const Tensor& weight,
                                 Reduction reduction,
                                 double label_smoothing) {
  const int64_t cdim = class_dim(input);
  const int64_t classes = input.size(cdim);
  const Tensor t = label_smoothing > 0
                       ? target * (1 - label_smoothing) + label_smoothing / double(classes)
                       : target;
  Tensor terms = stride::log_softmax(input, cdim) * t;
  if (weight.defined()) terms = terms * along_class_dim(weight, input);
  const Tensor loss = -terms.sum({cdim});
  if (reduction != Reduction::Mean) return reduce_loss(loss, reduction);
  const int64_t samples = classes ? input.numel() / classes : 0;
  return loss.sum() / double(samples);
}

// max(0, margin + d(a, p) - d(a, n)), swap taking d(p, n) when smaller.
Tensor triplet_from_distances(const Tensor& to_positive,
                              Tensor to_negative,
                              const Tensor& positive_to_negative,
                              double margin) {
  if (positive_to_negative.defined()) to_negative = minimum(to_negative, positive_to_negative);
  return (to_positive - to_negative + margin).clamp(0.0);
}

// var broadcast as PyTorch allows: the input's shape, or the input's with
// the last dim 1 or dropped (one variance per sample).
Tensor gaussian_variance(const Tensor& input, const Tensor& var) {
  const IntArrayRef in = input.sizes(), v = var.sizes();
  if (v == in) return var;
  const bool batched = input.dim() >= 1;
  const IntArrayRef batch(in.data(), batched ? in.size() - 1 : 0);
  if (batched && v == batch) return var.unsqueeze(-1);
  const bool last_one = batched && var.dim() == input.dim() && v.back() == 1 &&
                        IntArrayRef(v.data(), v.size() - 1) == batch;
  STRIDE_CHECK(last_one, ValueError, "[gaussian_nll_loss] var of shape ", shape_str(v),
               " does not fit input of shape ", shape_str(in),
               "; it must be the input's shape, or that with the last dim 1 or dropped.");
  return var;
}

}  // namespace

Tensor nll_loss(const Tensor& log_probs,
                const Tensor& target,
                const Tensor& weight,
                int64_t ignore_index,
                Reduction reduction) {
  if (!weight.defined()) return nll_loss(log_probs, target, ignore_index, reduction);
  STRIDE_CHECK(log_probs.is_floating_point(), DTypeError,
               "[nll_loss] expected floating-point log-probabilities; got ",
               to_string(log_probs.dtype()), ".");
  check_class_weight(log_probs, weight, "nll_loss");
  return weighted_nll(log_probs, kept_targets(target, weight, ignore_index, log_probs.dtype()),
                      reduction);
}

Tensor cross_entropy(const Tensor& logits,
                     const Tensor& target,
                     const Tensor& weight,
                     int64_t ignore_index,
                     Reduction reduction,
                     double label_smoothing) {
  const bool probabilities = is_floating_point(target.dtype());
  if (!probabilities && !weight.defined()) {
    return cross_entropy(logits, target, ignore_index, reduction, label_smoothing);
  }
  check_dtype_rule(Op::cross_entropy, logits);
  STRIDE_CHECK(label_smoothing >= 0 && label_smoothing <= 1, ValueError,
               "[cross_entropy] expected 0 <= label_smoothing <= 1; got ", label_smoothing, ".");
  if (weight.defined()) check_class_weight(logits, weight, "cross_entropy");
  if (probabilities) {
    STRIDE_CHECK(target.sizes() == logits.sizes(), DTypeError,
                 "[cross_entropy] target must be class indices (an integer tensor) or class "
                 "probabilities of the input's shape ",
                 shape_str(logits.sizes()), "; got a ", to_string(target.dtype()),
                 " tensor of shape ", shape_str(target.sizes()), ".");
    return probability_cross_entropy(logits, target, weight, reduction, label_smoothing);
  }
  const Tensor logp = stride::log_softmax(logits, class_dim(logits));
  const KeptTargets k = kept_targets(target, weight, ignore_index, logp.dtype());
  const Tensor nll = weighted_nll(logp, k, reduction);
  if (label_smoothing == 0) return nll;
  const Tensor smooth = smoothing_term(logp, weight, k, reduction);
  const double classes = double(logits.size(class_dim(logits)));
  return nll * (1 - label_smoothing) + smooth * (label_smoothing / classes);
}

Tensor cosine_embedding_loss(const Tensor& input1,
                             const Tensor& input2,
                             const Tensor& target,
                             double margin,
                             Reduction reduction) {
  check_dtype_rule(Op::cosine_embedding_loss, input1);
  STRIDE_CHECK((input1.dim() == 1 || input1.dim() == 2) && input1.sizes() == input2.sizes(),
               ShapeError,
               "[cosine_embedding_loss] input1 and input2 must be (N, D) or (D) of one shape; got ",
               shape_str(input1.sizes()), " and ", shape_str(input2.sizes()), ".");
  const int64_t dim = input1.dim() - 1;
  constexpr double kEps = 1e-12;  // PyTorch's EPSILON: keeps a zero vector's cosine finite
  const Tensor dot = (input1 * input2).sum({dim});
  const Tensor norms =
      ((input1 * input1).sum({dim}) + kEps) * ((input2 * input2).sum({dim}) + kEps);
  const Tensor cos = dot / norms.sqrt();
  const Tensor zero = zeros_like(cos);
  const Tensor positive = where(target.eq(1), 1.0 - cos, zero);
  const Tensor negative = where(target.eq(-1), (cos - margin).clamp(0.0), zero);
  return reduce_loss(positive + negative, reduction);
}

Tensor margin_ranking_loss(const Tensor& input1,
                           const Tensor& input2,
                           const Tensor& target,
                           double margin,
                           Reduction reduction) {
  check_dtype_rule(Op::margin_ranking_loss, input1);
  return reduce_loss((-target * (input1 - input2) + margin).clamp(0.0), reduction);
}

Tensor multi_margin_loss(const Tensor& input,
                         const Tensor& target,
                         int64_t p,
                         double margin,
                         const Tensor& weight,
                         Reduction reduction) {
  check_dtype_rule(Op::multi_margin_loss, input);
  STRIDE_CHECK(p == 1 || p == 2, ValueError, "[multi_margin_loss] p must be 1 or 2; got ", p, ".");
  STRIDE_CHECK(input.dim() <= 2, ShapeError,
               "[multi_margin_loss] input must be (N, C) or (C); got ", shape_str(input.sizes()),
               ".");
  const Tensor x = input.dim() ? input.reshape({-1, input.size(-1)}) : input.reshape({1, 1});
  const Tensor y = target.reshape({-1, 1});
  const int64_t classes = x.size(1);
  Tensor margins = (x - x.gather(1, y) + margin).clamp(0.0);
  if (p == 2) margins = margins * margins;
  if (weight.defined()) margins = margins * weight.gather(0, y.reshape({-1})).unsqueeze(1);
  const Tensor not_target = arange(classes).to(y.device()).unsqueeze(0).ne(y);
  Tensor loss = (margins * not_target.to(x.dtype())).sum({1}) / double(classes);
  if (input.dim() < 2) loss = loss.reshape(target.sizes());
  return reduce_loss(loss, reduction);
}

Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  check_dtype_rule(Op::multilabel_margin_loss, input);
  STRIDE_CHECK(input.dim() <= 2 && target.sizes() == input.sizes(), ShapeError,
               "[multilabel_margin_loss] input must be (N, C) or (C) and target of its shape; "
               "got ",
               shape_str(input.sizes()), " and ", shape_str(target.sizes()), ".");
  const Tensor x = input.dim() ? input.reshape({-1, input.size(-1)}) : input.reshape({1, 1});
  const Tensor t = target.reshape(x.sizes());
  const int64_t classes = x.size(1);
  // A row's targets are the indices before its first -1.
  const Tensor listed = t.eq(-1).to(kInt64).cumsum(1).eq(0);
  const Tensor safe = where(listed, t, zeros_like(t));
  const Tensor hits = one_hot(safe, classes) * listed.to(kInt64).unsqueeze(2);
  const Tensor is_target = hits.sum({1}).gt(0);
  const Tensor gaps = (1.0 - (x.gather(1, safe).unsqueeze(2) - x.unsqueeze(1))).clamp(0.0);
  const Tensor pairs = logical_and(listed.unsqueeze(2), logical_not(is_target).unsqueeze(1));
  Tensor loss = (gaps * pairs.to(x.dtype())).sum({1, 2}) / double(classes);
  if (input.dim() < 2) loss = loss.reshape({});
  return reduce_loss(loss, reduction);
}

Tensor multilabel_soft_margin_loss(const Tensor& input,
                                   const Tensor& target,
                                   const Tensor& weight,
                                   Reduction reduction) {
  check_dtype_rule(Op::multilabel_soft_margin_loss, input);
  Tensor loss = -(target * logsigmoid(input) + (1.0 - target) * logsigmoid(-input));
  if (weight.defined()) loss = loss * weight;
  const int64_t cdim = input.dim() - 1;
  return reduce_loss(loss.sum({cdim}) / double(input.size(cdim)), reduction);
}

Tensor triplet_margin_loss(const Tensor& anchor,
                           const Tensor& positive,
                           const Tensor& negative,
                           double margin,
                           double p,
                           double eps,
                           bool swap,
                           Reduction reduction) {
  check_dtype_rule(Op::triplet_margin_loss, anchor);
  STRIDE_CHECK(anchor.dim() == positive.dim() && anchor.dim() == negative.dim(), ShapeError,
               "[triplet_margin_loss] anchor, positive and negative must have the same number of "
               "dims; got ",
               anchor.dim(), ", ", positive.dim(), " and ", negative.dim(), ".");
  const Tensor swapped = swap ? pairwise_distance(positive, negative, p, eps) : Tensor();
  return reduce_loss(
      triplet_from_distances(pairwise_distance(anchor, positive, p, eps),
                             pairwise_distance(anchor, negative, p, eps), swapped, margin),
      reduction);
}

Tensor triplet_margin_with_distance_loss(const Tensor& anchor,
                                         const Tensor& positive,
                                         const Tensor& negative,
                                         const DistanceFunction& distance_function,
                                         double margin,
                                         bool swap,
                                         Reduction reduction) {
  check_dtype_rule(Op::triplet_margin_with_distance_loss, anchor);
  STRIDE_CHECK(margin > 0, ValueError,
               "[triplet_margin_with_distance_loss] margin must be greater than 0; got ", margin,
               ".");
  STRIDE_CHECK(anchor.dim() == positive.dim() && anchor.dim() == negative.dim(), ShapeError,
               "[triplet_margin_with_distance_loss] anchor, positive and negative must have the "
               "same number of dims; got ",
               anchor.dim(), ", ", positive.dim(), " and ", negative.dim(), ".");
  const DistanceFunction distance =
      distance_function ? distance_function
                        : [](const Tensor& a, const Tensor& b) { return pairwise_distance(a, b); };
  const Tensor swapped = swap ? distance(positive, negative) : Tensor();
  return reduce_loss(triplet_from_distances(distance(anchor, positive), distance(anchor, negative),
                                            swapped, margin),
                     reduction);
}

Tensor gaussian_nll_loss(const Tensor& input,
                         const Tensor& target,
                         const Tensor& var,
                         bool full,
                         double eps,
                         Reduction reduction) {
  check_dtype_rule(Op::gaussian_nll_loss, input);
  Tensor v = gaussian_variance(input, var);
  if (!v.device().is_meta()) {
    STRIDE_CHECK(!v.lt(0).any().item<bool>(), ValueError,
                 "[gaussian_nll_loss] var has negative entries; it must be >= 0.");
  }
  // PyTorch clamps a clone under no_grad: the value is clamped, the
  // gradient flows as if it were not.
  v = v + (v.clamp(eps) - v).detach();
  Tensor loss = (v.log() + (input - target).square() / v) * 0.5;
  if (full) loss = loss + 0.5 * std::log(2 * std::numbers::pi);
  return reduce_loss(loss, reduction);
}

}  // namespace stride::nn::functional
