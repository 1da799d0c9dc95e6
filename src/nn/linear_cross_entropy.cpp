// linear_cross_entropy: cross_entropy(linear(x, W, b), target) a chunk of
// rows at a time, so that the (N, C) logits never exist whole.
//
// Note [Chunked linear cross-entropy]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// For row n with logits z = x_n W^T + b, log-probabilities lp =
// log_softmax(z), class weights w (ones without) and smoothing e, the loss is
//   L_n = -sum_c a_c lp_c
// with the coefficients
//   class index t (not ignored): a = ((1 - e) onehot(t) + e / C) * w
//   ignored row:                 a = 0
//   class probabilities y:       a = ((1 - e) y + e / C) * w,
// PyTorch's cross_entropy with weight and label_smoothing. Its gradients are
//   dL_n/dz = p * sum(a) - a  (p = softmax(z)),
//   dL_n/dy = -(1 - e) * w * lp,
// and x, W and b get theirs from dz through the linear map. The forward runs
// over batch_chunk_size rows at a time and keeps only each row's loss; the
// node saves the inputs, not the logits, and the backward recomputes each
// chunk's lp, so at most (batch_chunk_size, C) logits exist at a
// time: for an LLM's vocabulary head they are the largest activation of a
// step (N tokens x a vocabulary of 50k to 250k). The price is the logits'
// GEMM done twice. lp comes from log_softmax, not from z - logsumexp(z):
// logits in the hundreds (a trained head's) would lose the digits of p to the
// rounding of lse. The backward is written with ops, so it is differentiable
// again.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/check.h"
#include "nn/functional_internal.h"
#include "ops/apply.h"
#include "stride/ops.h"

namespace stride::nn::functional {

namespace {

using autograd::Grads;
using autograd::SavedTensor;
using ::stride::detail::Op;

constexpr const char* kOp = "linear_cross_entropy";

// The operands as the chunks read them: x (N, in), W (C, in), b (C) or
// undefined, target (N) int64 or (N, C) probabilities, w (C) or undefined.
struct Operands {
  Tensor x, weight, bias, target, class_weight;
};

// What the loss is, beside its operands.
struct LossSpec {
  bool probabilities = false;
  int64_t ignore_index = -100;
  double smoothing = 0.0;
  Reduction reduction = Reduction::Mean;
  int64_t chunk = 0;  // rows per chunk
};

void check_linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  STRIDE_CHECK(x.dim() == 1 || x.dim() == 2, ShapeError, "[", kOp,
               "] expected input (in_features) or (N, in_features); got ", shape_str(x.sizes()),
               ". Hint: flatten (B, T, in_features) to (B * T, in_features).");
  STRIDE_CHECK(weight.dim() == 2, ShapeError, "[", kOp,
               "] the chunked loss takes linear_weight (C, in_features); got ",
               shape_str(weight.sizes()),
               ". Hint: for a K-dimensional loss pass options=None (the reference path).");
  STRIDE_CHECK(weight.size(1) == x.size(-1), ShapeError, "[", kOp, "] input ", shape_str(x.sizes()),
               " and linear_weight ", shape_str(weight.sizes()),
               " must have one in_features (their last dim).");
  STRIDE_CHECK(weight.dtype() == x.dtype() && (!bias.defined() || bias.dtype() == x.dtype()),
               DTypeError, "[", kOp, "] input (", to_string(x.dtype()), "), linear_weight (",
               to_string(weight.dtype()),
               ") and linear_bias must have one dtype. Hint: convert them with .to().");
  STRIDE_CHECK(!bias.defined() || (bias.dim() == 1 && bias.size(0) == weight.size(0)), ShapeError,
               "[", kOp, "] expected linear_bias (", weight.size(0), "); got ",
               shape_str(bias.sizes()), ".");
}

void check_loss(const Operands& o, const LossSpec& s) {
  const int64_t classes = o.weight.size(0);
  if (s.probabilities) {
    STRIDE_CHECK(o.target.dtype() == o.x.dtype() && o.target.dim() == 2 &&
                     o.target.size(0) == o.x.size(0) && o.target.size(1) == classes,
                 ShapeError, "[", kOp, "] class-probability targets must be (N, C) = (",
                 o.x.size(0), ", ", classes, ") of the input's dtype; got ",
                 shape_str(o.target.sizes()), " ", to_string(o.target.dtype()), ".");
  } else {
    STRIDE_CHECK(o.target.dtype() == kInt64, DTypeError, "[", kOp,
                 "] class-index targets must be int64; got ", to_string(o.target.dtype()),
                 ". Hint: pass class probabilities of shape (N, C) as floating point.");
    STRIDE_CHECK(o.target.dim() == 1 && o.target.size(0) == o.x.size(0), ShapeError, "[", kOp,
                 "] expected target (", o.x.size(0), ") for input ", shape_str(o.x.sizes()),
                 "; got ", shape_str(o.target.sizes()), ".");
    detail::read_targets(o.target, classes, s.ignore_index, kOp);
  }
  const Tensor& w = o.class_weight;
  STRIDE_CHECK(!w.defined() || (w.dim() == 1 && w.size(0) == classes && w.dtype() == o.x.dtype()),
               ShapeError, "[", kOp, "] expected weight (", classes, ") of the input's dtype; got ",
               w.defined() ? shape_str(w.sizes()) : "", ".");
  STRIDE_CHECK(!w.defined() || !w.requires_grad(), ValueError, "[", kOp,
               "] weight (the class weights) must not require grad. Hint: pass weight.detach(), "
               "or options=None for the reference path.");
  STRIDE_CHECK(s.smoothing >= 0 && s.smoothing <= 1, ValueError, "[", kOp,
               "] expected 0 <= label_smoothing <= 1; got ", s.smoothing, ".");
  STRIDE_CHECK(s.chunk >= 0, ValueError, "[", kOp,
               "] batch_chunk_size must be positive (or 0 for one chunk); got ", s.chunk, ".");
}

// The log-probabilities of rows [start, start + rows) and their
// coefficients a (Note [Chunked linear cross-entropy]).
struct Chunk {
  Tensor lp, a;
};

Tensor coefficients(const Operands& o, const LossSpec& s, const Tensor& target, const Tensor& z) {
  const int64_t classes = z.size(1);
  const double e = s.smoothing;
  Tensor mix;
  Tensor kept;
  if (s.probabilities) {
    mix = target * (1 - e) + e / double(classes);
  } else {
    const Tensor valid = target.ne(s.ignore_index);
    const Tensor at = where(valid, target, zeros_like(target));
    const Tensor onehot = arange(classes, kInt64).to(z.device()).unsqueeze(0).eq(at.unsqueeze(1));
    mix = onehot.to(z.dtype()) * (1 - e) + e / double(classes);
    kept = valid.unsqueeze(1).to(z.dtype());
  }
  const Tensor a = o.class_weight.defined() ? mix * o.class_weight : mix;
  return kept.defined() ? a * kept : a;
}

Chunk chunk_at(const Operands& o, const LossSpec& s, int64_t start, int64_t rows) {
  Tensor z = matmul(o.x.narrow(0, start, rows), o.weight.t());
  if (o.bias.defined()) z = z + o.bias;
  return {::stride::log_softmax(z, 1), coefficients(o, s, o.target.narrow(0, start, rows), z)};
}

// Calls visit(start, rows) for each chunk of rows.
template <class Visit>
void for_each_chunk(int64_t n, int64_t chunk, Visit visit) {
  const int64_t step = chunk > 0 ? chunk : std::max<int64_t>(n, 1);
  for (int64_t start = 0; start < n; start += step) visit(start, std::min(step, n - start));
}

// What Mean divides by: the summed weights of the counted targets (their
// number without weights), or the rows for probabilities, as PyTorch's.
Tensor mean_divisor(const Operands& o, const LossSpec& s) {
  const int64_t n = o.x.size(0);
  if (s.probabilities) return scalar_tensor(double(n), o.x.options());
  const Tensor valid = o.target.ne(s.ignore_index);
  if (!o.class_weight.defined()) return valid.to(o.x.dtype()).sum();
  const Tensor at = where(valid, o.target, zeros_like(o.target));
  return (o.class_weight.index_select(0, at) * valid.to(o.x.dtype())).sum();
}

// The upstream gradient of each row as a column: (N, 1), or (1, 1) for the
// scalar reductions.
Tensor row_scale(const Tensor& g, const LossSpec& s, const Tensor& divisor, int64_t n) {
  if (s.reduction == Reduction::None) return g.reshape({n, 1});
  if (s.reduction == Reduction::Sum) return g.reshape({1, 1});
  return (g / divisor).reshape({1, 1});
}

// The gradients of x, W, b and the target (Note [Chunked linear
// cross-entropy]), one chunk of logits at a time.
Grads chunked_backward(const Operands& o,
                       const LossSpec& s,
                       const Tensor& scale,
                       bool need_target) {
  const int64_t n = o.x.size(0);
  std::vector<Tensor> gx, gy;
  Tensor gw = zeros(o.weight.sizes(), o.weight.options());
  Tensor gb = o.bias.defined() ? zeros(o.bias.sizes(), o.bias.options()) : Tensor();
  for_each_chunk(n, s.chunk, [&](int64_t start, int64_t rows) {
    const Chunk c = chunk_at(o, s, start, rows);
    const Tensor r = scale.size(0) == 1 ? scale : scale.narrow(0, start, rows);
    const Tensor p = exp(c.lp);
    const Tensor dz = (p * c.a.sum({1}, true) - c.a) * r;
    gx.push_back(matmul(dz, o.weight));
    gw = gw + matmul(dz.t(), o.x.narrow(0, start, rows));
    if (gb.defined()) gb = gb + dz.sum({0});
    if (need_target) {
      const Tensor neg_logp = c.lp * -(1 - s.smoothing);
      const Tensor w = o.class_weight.defined() ? neg_logp * o.class_weight : neg_logp;
      gy.push_back(w * r);
    }
  });
  const Tensor gxs = gx.empty() ? zeros(o.x.sizes(), o.x.options()) : cat(gx, 0);
  Tensor gys;
  if (need_target) gys = gy.empty() ? zeros(o.target.sizes(), o.target.options()) : cat(gy, 0);
  return Grads{gxs, gw, gb, gys};
}

// The per-row losses, one chunk at a time, reduced.
Tensor chunked_forward(const Operands& o, const LossSpec& s, const Tensor& divisor) {
  const int64_t n = o.x.size(0);
  Tensor per_row = empty({n}, o.x.options());
  for_each_chunk(n, s.chunk, [&](int64_t start, int64_t rows) {
    const Chunk c = chunk_at(o, s, start, rows);
    per_row.narrow(0, start, rows).copy_(-(c.a * c.lp).sum({1}));
  });
  if (s.reduction == Reduction::None) return per_row;
  if (s.reduction == Reduction::Sum) return per_row.sum();
  return per_row.sum() / divisor;
}

Tensor linear_cross_entropy_2d(const Operands& o, const LossSpec& s) {
  const Tensor divisor = [&] {
    NoGradGuard no_grad;
    return mean_divisor(o, s);
  }();
  auto forward = [&] { return chunked_forward(o, s, divisor); };
  auto backward = [&](const Tensor&) {
    return [sx = SavedTensor::input(o.x), sw = SavedTensor::input(o.weight),
            sb = o.bias.defined() ? SavedTensor::input(o.bias) : SavedTensor(),
            st = SavedTensor::input(o.target), w = o.class_weight, s, divisor, n = o.x.size(0),
            need_target = s.probabilities && autograd::requires_grad(o.target)](const Grads& gs) {
      const Operands saved{sx.get(), sw.get(), sb.defined() ? sb.get() : Tensor(), st.get(), w};
      return chunked_backward(saved, s, row_scale(gs[0], s, divisor, n), need_target);
    };
  };
  return ::stride::detail::apply(Op::linear_cross_entropy, {&o.x, &o.weight, &o.bias, &o.target},
                                 forward, backward);
}

}  // namespace

Tensor linear_cross_entropy(const Tensor& input,
                            const Tensor& linear_weight,
                            const Tensor& target,
                            const LinearCrossEntropyOptions& options) {
  ::stride::detail::check_dtype_rule(Op::linear_cross_entropy, kOp, &input);
  check_linear(input, linear_weight, options.linear_bias);
  const bool batched = input.dim() == 2;
  const bool probabilities = is_floating_point(target.dtype());
  const LossSpec spec{probabilities, options.ignore_index, options.label_smoothing,
                      options.reduction, options.batch_chunk_size};
  const Operands o{batched ? input : input.unsqueeze(0), linear_weight, options.linear_bias,
                   batched ? target : target.unsqueeze(0), options.weight};
  check_loss(o, spec);
  // 16-bit floats compute in float32 and round the loss once.
  if (input.dtype() == kBFloat16 || input.dtype() == kFloat16) {
    const auto up = [](const Tensor& t) {
      return t.defined() && is_floating_point(t.dtype()) ? t.to(kFloat32) : t;
    };
    const Operands wide{up(o.x), up(o.weight), up(o.bias), up(o.target), up(o.class_weight)};
    const Tensor loss = linear_cross_entropy_2d(wide, spec).to(input.dtype());
    return batched || spec.reduction != Reduction::None ? loss : loss.squeeze(0);
  }
  const Tensor loss = linear_cross_entropy_2d(o, spec);
  return batched || spec.reduction != Reduction::None ? loss : loss.squeeze(0);
}

}  // namespace stride::nn::functional
