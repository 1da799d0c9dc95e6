// The simple functional forms (linear, embedding, dropout, activations),
// the composed losses and layer_norm, and the helpers the fused losses share
// (functional_internal.h). Fused ops live in their own files: cross_entropy.cpp,
// rms_norm.cpp, rope.cpp; attention in attention.cpp.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/kernels.h"
#include "core/check.h"
#include "nn/functional_internal.h"
#include "ops/apply.h"
#include "ops/autocast_internal.h"
#include "stride/autocast.h"
#include "stride/autograd.h"
#include "stride/logging.h"
#include "stride/ops.h"

namespace stride::nn::functional {

namespace detail {

const char* reduction_name(Reduction r) {
  switch (r) {
    case Reduction::None:
      return "none";
    case Reduction::Mean:
      return "mean";
    case Reduction::Sum:
      return "sum";
  }
  return "?";
}

Tensor reduce_loss(const Tensor& loss, Reduction reduction) {
  switch (reduction) {
    case Reduction::None:
      return loss;
    case Reduction::Sum:
      return loss.sum();
    case Reduction::Mean:
      return loss.mean();
  }
  return {};
}

Targets read_targets(const Tensor& target, int64_t classes, int64_t ignore_index, const char* op) {
  STRIDE_CHECK(target.dtype() == kInt64 || target.dtype() == kInt32, DTypeError, "[", op,
               "] expected class-index targets of dtype int64 or int32; got ",
               to_string(target.dtype()),
               ". Hint: stride's losses take class indices; for soft (probability) targets "
               "write -(target * log_softmax(x, 1)).sum(1).mean().");
  Targets t;
  // No values on meta: every row counts, and nothing proportional to the
  // rows is held (a memory estimate may describe 2^40 of them).
  if (target.device().is_meta()) {
    t.count = target.numel();
    return t;
  }
  Tensor flat;
  {
    NoGradGuard no_grad;
    flat = target.to(kInt64).contiguous();
  }
  const int64_t* p = flat.data_ptr<int64_t>();
  t.values.assign(p, p + flat.numel());
  for (size_t i = 0; i < t.values.size(); ++i) {
    const int64_t v = t.values[i];
    if (v == ignore_index) continue;
    STRIDE_CHECK(v >= 0 && v < classes, IndexError, "[", op, "] target ", v, " (at flat position ",
                 i, ") is out of range for ", classes, " classes: targets must be in [0, ", classes,
                 ") or equal ignore_index (", ignore_index,
                 "). Hint: check that the model's output size (C = ", classes,
                 ") matches the number of classes (e.g. the vocabulary size).");
    ++t.count;
  }
  return t;
}

std::pair<Tensor, Tensor> target_masks(const Targets& t,
                                       int64_t rows,
                                       int64_t ignore_index,
                                       Device device) {
  NoGradGuard no_grad;
  if (device.is_meta()) {
    return {empty({rows}, TensorOptions(kBool).device(device)),
            empty({rows, 1}, TensorOptions(kInt64).device(device))};
  }
  std::vector<bool> keep(t.values.size());
  std::vector<int64_t> safe(t.values.size());
  for (size_t i = 0; i < t.values.size(); ++i) {
    keep[i] = t.values[i] != ignore_index;
    safe[i] = keep[i] ? t.values[i] : 0;
  }
  return {tensor<bool>(keep, {rows}).to(device), tensor<int64_t>(safe, {rows, 1}).to(device)};
}

Tensor class_rows(const Tensor& input, const Tensor& target, const char* op) {
  STRIDE_CHECK(input.dim() >= 1, ShapeError, "[", op,
               "] expected input (N, C) or (N, C, d1, ...); got a 0-d tensor.");
  DimVector expected;
  for (int64_t d = 0; d < input.dim(); ++d) {
    if (d != 1 && input.dim() > 1) expected.push_back(input.size(d));
  }
  STRIDE_CHECK(
      target.sizes() == IntArrayRef(expected), ShapeError, "[", op, "] expected target of shape ",
      shape_str(expected), " for input ", shape_str(input.sizes()),
      " (the input's shape without its class dim 1); got ", shape_str(target.sizes()),
      ". Hint: the class dim is dim 1; for (B, T, V) logits pass "
      "logits.reshape({B * T, V}) with targets reshape({B * T}), or permute to (B, V, T).");
  ::stride::detail::common_device(op, {&input, &target});
  const int64_t classes = input.dim() == 1 ? input.size(0) : input.size(1);
  if (input.dim() == 1) return input.reshape({1, classes}).contiguous();
  if (input.dim() == 2) return input.contiguous();
  DimVector perm{0};
  for (int64_t d = 2; d < input.dim(); ++d) perm.push_back(d);
  perm.push_back(1);
  return input.permute(perm).reshape({-1, classes}).contiguous();
}

Tensor reduce_rows(const Tensor& rows,
                   IntArrayRef target_shape,
                   Reduction reduction,
                   int64_t count) {
  switch (reduction) {
    case Reduction::None:
      return rows.view(target_shape);
    case Reduction::Sum:
      return rows.sum();
    case Reduction::Mean:
      return rows.sum() / double(count);  // 0 / 0 = NaN when every target is ignored
  }
  return {};
}

}  // namespace detail

namespace {

bool is_16bit(ScalarType t) {
  return t == kFloat16 || t == kBFloat16;
}

void check_floating(const Tensor& x, const char* op, const char* what) {
  STRIDE_CHECK(x.is_floating_point(), DTypeError, "[", op, "] expected a floating-point ", what,
               "; got ", to_string(x.dtype()), ". Hint: convert with .to(kFloat32).");
}

}  // namespace

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  STRIDE_CHECK(weight.dim() == 2, ShapeError, "[linear] expected weight (out, in); got ",
               shape_str(weight.sizes()), ".");
  STRIDE_CHECK(x.dim() >= 1 && x.size(-1) == weight.size(1), ShapeError,
               "[linear] expected x (..., ", weight.size(1),
               ") to match weight (out, in) = ", shape_str(weight.sizes()), "; got x ",
               shape_str(x.sizes()), ". Hint: the last dim of x is the input feature dim.");
  STRIDE_CHECK(!bias.defined() || (bias.dim() == 1 && bias.size(0) == weight.size(0)), ShapeError,
               "[linear] expected bias (", weight.size(0), ") for weight ",
               shape_str(weight.sizes()), "; got ", shape_str(bias.sizes()), ".");
  // One node for the whole layer, so that the weight's gradient comes out of
  // a single GEMM as (out, in), the weight's own layout: recorded as matmul
  // with weight.t(), it would come out transposed and be copied on every
  // accumulation. The backward is written with ops (differentiable again) and
  // runs in the forward's precision wherever backward() is called.
  //
  // Under autocast the apply path gives the forward bfloat16 casts of x and
  // the weight (Note [Autocast casts]); the node keeps those casts, not the
  // float32 tensors, as PyTorch's autocast does: x is rounded once per step
  // instead of twice, the saved activation is half the size, and the
  // weight's rounding (cached per scope) is not redone.
  using ::stride::detail::AutocastOperands;
  auto forward = [&](const AutocastOperands& f) {
    // Rounded float32 factors multiply as float32 ones (Note [Autocast on the
    // float32 GEMM] in ops/apply.h).
    AutocastGuard precision(Autocast::is_enabled() && !f.rounded_in_float32());
    // A 16-bit product and its bias are summed in float32 and rounded once,
    // as PyTorch's addmm: rounding the product, then the sum, is a unit in
    // the last place off. (Under autocast the product is float32 already.)
    if (bias.defined() && is_16bit(f[0].dtype()) && bias.dtype() == f[0].dtype()) {
      Tensor wide = matmul(f[0].to(kFloat32), f[1].to(kFloat32).t());
      wide.add_(bias.to(kFloat32));
      return wide.to(f[0].dtype());
    }
    // .t() is a view: the GEMM reads the weight transposed, no copy.
    Tensor y = matmul(f[0], f[1].t());
    if (bias.defined()) y.add_(bias);
    return y;
  };
  auto backward = [&](const Tensor&, const AutocastOperands& f) {
    return [sx = autograd::SavedTensor::input(f[0]), sw = autograd::SavedTensor::input(f[1]),
            mixed = f.lowered(), in_float32 = f.rounded_in_float32(),
            need_x = autograd::requires_grad(x), need_w = autograd::requires_grad(weight),
            need_b = bias.defined() && autograd::requires_grad(bias)](const autograd::Grads& gs) {
      // Both GEMMs read the gradient: round it once (a recorded backward
      // keeps it float32, so that it stays in the graph). Rounded float32
      // factors then multiply with autocast off.
      const bool rounded = mixed && !GradMode::is_enabled();
      AutocastGuard precision(mixed && !(rounded && in_float32));
      const Tensor xv = sx.get();
      const int64_t out = gs[0].size(-1), in = xv.size(-1);
      // The rows counted, not inferred with -1: with in or out 0 there is
      // nothing to infer them from.
      int64_t rows = 1;
      for (int64_t d = 0; d + 1 < xv.dim(); ++d) rows *= xv.size(d);
      const Tensor g2 = gs[0].reshape({rows, out});
      const Tensor g2m =
          rounded ? ::stride::detail::autocast_round(g2, in_float32 ? kFloat32 : kBFloat16) : g2;
      Tensor gx, gw, gb;
      if (need_x) gx = matmul(g2m, sw.get()).view(xv.sizes());
      if (need_w) gw = matmul(g2m.t(), xv.reshape({rows, in}));
      if (need_b) gb = g2.sum({0});
      return autograd::Grads{gx, gw, gb};
    };
  };
  return ::stride::detail::apply(::stride::detail::Op::linear, {&x, &weight, &bias}, forward,
                                 backward);
}

namespace {

// Whether linear_concat runs its own GEMMs: float32/float64 (under autocast,
// on float32 roundings: Note [Autocast on the float32 GEMM] in ops/apply.h,
// or on bfloat16 casts when decoding without a recorded backward), weights
// of x's dtype whose rows are contiguous.
bool direct_linear_concat(const Tensor& x,
                          int64_t rows,
                          const std::vector<const Tensor*>& operands,
                          ::stride::detail::Op op) {
  using ::stride::detail::Lowering;
  if (x.dtype() != kFloat32 && x.dtype() != kFloat64) return false;
  const Lowering lowering =
      ::stride::detail::autocast_lowering(op, operands.data(), operands.size());
  if (lowering == Lowering::bfloat16) {
    // Its kernels multiply bfloat16 in the forward of decoding rows only.
    const bool recorded = GradMode::is_enabled() &&
                          std::any_of(operands.begin(), operands.end(),
                                      [](const Tensor* t) { return autograd::requires_grad(*t); });
    if (recorded || rows > kernels::kLinearGroupsBf16Rows) return false;
  }
  for (size_t i = 1; i < operands.size(); ++i) {
    const Tensor& w = *operands[i];
    if (w.dtype() != x.dtype() || (w.stride(1) != 1 && w.size(1) > 1)) return false;
    if (w.stride(0) < std::max<int64_t>(w.size(1), 1)) return false;  // rows overlap
  }
  return true;
}

// linear_groups' weights in one list, in group order, and where each one's
// output goes (kernels::LinearGroupsLayout).
struct GroupedWeights : kernels::LinearGroupsLayout {
  std::vector<Tensor> weights;
};

GroupedWeights flatten_groups(const Tensor& x,
                              const std::vector<std::vector<Tensor>>& groups,
                              const char* op) {
  STRIDE_CHECK(!groups.empty(), ValueError, "[", op, "] expected at least one weight.");
  GroupedWeights f;
  for (size_t g = 0; g < groups.size(); ++g) {
    STRIDE_CHECK(!groups[g].empty(), ValueError, "[", op,
                 "] expected at least one weight in group ", g, ".");
    f.width.push_back(0);
    for (const Tensor& w : groups[g]) {
      STRIDE_CHECK(w.dim() == 2 && x.dim() >= 1 && w.size(1) == x.size(-1), ShapeError, "[", op,
                   "] expected weights (out_i, in) and x (..., in); got weight ",
                   shape_str(w.sizes()), " for x ", shape_str(x.sizes()), ".");
      f.weights.push_back(w);
      f.group_of.push_back(g);
      f.column.push_back(f.width[g]);
      f.width[g] += w.size(0);
    }
    f.first.push_back(f.weights.size());
  }
  return f;
}

// The groups whose output has a gradient, last first: the order in which
// x's gradient adds their sums (Note [Linear over concatenated weights] in
// src/backends/cpu/linear.cpp).
std::vector<size_t> groups_with_gradient(const autograd::Grads& gs) {
  std::vector<size_t> groups;
  for (size_t g = gs.size(); g-- > 0;) {
    if (gs[g].defined()) groups.push_back(g);
  }
  return groups;
}

std::vector<Tensor> grouped_linear(const Tensor& x,
                                   const std::vector<std::vector<Tensor>>& groups,
                                   ::stride::detail::Op id) {
  using ::stride::detail::AutocastOperands;
  const char* op = ::stride::detail::op_name(id);
  const GroupedWeights f = flatten_groups(x, groups, op);
  std::vector<const Tensor*> inputs{&x};
  for (const Tensor& w : f.weights) inputs.push_back(&w);
  const int64_t K = x.size(-1);
  int64_t M = 1;
  for (int64_t d = 0; d + 1 < x.dim(); ++d) M *= x.size(d);
  if (!direct_linear_concat(x, M, inputs, id)) {
    std::vector<Tensor> ys;
    for (const auto& group : groups)
      ys.push_back(linear(x, group.size() == 1 ? group[0] : cat(group, 0)));
    return ys;
  }
  // The weights multiplied: f.weights, or their roundings.
  std::vector<Tensor> weights;
  auto forward = [&](const AutocastOperands& c) {
    const Tensor x2 = c[0].reshape({M, K}).contiguous();
    for (size_t i = 0; i < f.weights.size(); ++i) weights.push_back(c[i + 1]);
    std::vector<Tensor> ys;
    for (int64_t width : f.width) {
      DimVector shape = x.sizes().dims();
      shape.back() = width;
      ys.push_back(empty(shape, x.options()));
    }
    kernels::linear_groups_forward(x.device(), x2, weights, f, ys);
    return ys;
  };
  auto backward = [&](const std::vector<Tensor>&, const AutocastOperands& c) {
    std::vector<autograd::SavedTensor> saved_w;
    std::vector<bool> need_w;
    for (size_t i = 0; i < weights.size(); ++i) {
      saved_w.push_back(autograd::SavedTensor::input(weights[i]));
      need_w.push_back(autograd::requires_grad(f.weights[i]));
    }
    // saved_w holds the weights, checked against in-place changes.
    kernels::LinearGroupsLayout plan = f;
    // Reshaped again here, with grad mode on, so that a recorded backward
    // reaches x (a view of the forward's x2 when x is contiguous).
    return [op, sx = autograd::SavedTensor::input(c[0].reshape({M, K}).contiguous()), saved_w,
            need_w, plan = std::move(plan), need_x = autograd::requires_grad(x),
            x_shape = x.sizes().dims(), M, K, mixed = c.lowered()](const autograd::Grads& gs) {
      const Tensor xv = sx.get();
      std::vector<Tensor> w;
      for (const auto& s : saved_w) w.push_back(s.get());
      autograd::Grads grads(w.size() + 1);
      const std::vector<size_t> with_grad = groups_with_gradient(gs);
      if (GradMode::is_enabled()) {  // create_graph: the same sums, written with ops
        AutocastGuard precision(mixed);
        Tensor gx;
        for (size_t g : with_grad) {
          const Tensor g2 = gs[g].reshape({M, plan.width[g]});
          Tensor sum;
          for (size_t i = plan.first[g]; i < plan.first[g + 1]; ++i) {
            const Tensor gi = g2.narrow(1, plan.column[i], w[i].size(0));
            if (need_x) sum = sum.defined() ? sum + matmul(gi, w[i]) : matmul(gi, w[i]);
            if (need_w[i]) grads[i + 1] = matmul(gi.t(), xv);
          }
          if (need_x) gx = gx.defined() ? gx + sum : sum;
        }
        if (need_x) grads[0] = gx.view(x_shape);
        return grads;
      }
      // Under autocast the factors are float32 roundings already; the
      // gradient is rounded the same way, once.
      std::vector<Tensor> g2(gs.size());
      for (size_t g = 0; g < gs.size(); ++g) {
        if (!gs[g].defined()) continue;
        g2[g] = gs[g].reshape({M, plan.width[g]}).contiguous();
        if (mixed) g2[g] = ::stride::detail::autocast_round(g2[g], kFloat32);
      }
      for (size_t g : with_grad) {
        for (size_t i = plan.first[g]; i < plan.first[g + 1]; ++i) {
          if (need_w[i]) grads[i + 1] = empty({w[i].size(0), K}, xv.options());
        }
      }
      if (need_x) grads[0] = empty({M, K}, xv.options());
      kernels::linear_groups_backward(xv.device(), xv, w, g2, plan, with_grad, grads);
      if (need_x) grads[0] = grads[0].view(x_shape);
      return grads;
    };
  };
  return ::stride::detail::apply(id, inputs, forward, backward);
}

}  // namespace

Tensor linear_concat(const Tensor& x, const std::vector<Tensor>& weights) {
  return grouped_linear(x, {weights}, ::stride::detail::Op::linear_concat)[0];
}

std::vector<Tensor> linear_groups(const Tensor& x, const std::vector<std::vector<Tensor>>& groups) {
  return grouped_linear(x, groups, ::stride::detail::Op::linear_groups);
}

Tensor embedding(const Tensor& ids, const Tensor& weight) {
  return stride::embedding(weight, ids);
}

Tensor dropout(const Tensor& x, double p, bool training, Generator* gen) {
  STRIDE_CHECK(p >= 0 && p <= 1, ValueError, "[dropout] expected 0 <= p <= 1; got p = ", p, ".");
  if (!training || p == 0) return x;
  check_floating(x, "dropout", "input");
  // As PyTorch: p == 1 multiplies by 0 (so inf/NaN inputs give NaN).
  if (p == 1) return x * scalar_tensor(0, x.options());
  Tensor mask = empty(x.sizes(), x.options());
  {
    NoGradGuard no_grad;
    mask.bernoulli_(1 - p, gen);
    mask.div_(1 - p);
  }
  return x * mask;
}

Tensor softmax(const Tensor& x, int64_t dim) {
  return stride::softmax(x, dim);
}
Tensor log_softmax(const Tensor& x, int64_t dim) {
  return stride::log_softmax(x, dim);
}
Tensor silu(const Tensor& x) {
  return stride::silu(x);
}
Tensor gelu(const Tensor& x) {
  return stride::gelu(x);
}
Tensor gelu(const Tensor& x, std::string_view approximate) {
  if (approximate == "none") return stride::gelu(x);
  STRIDE_CHECK(approximate == "tanh", ValueError,
               "[gelu] approximate must be 'none' or 'tanh'; got '", approximate, "'.");
  constexpr double kSqrt2OverPi = 0.79788456080286535588;  // sqrt(2 / pi)
  return x * 0.5 * (1.0 + (kSqrt2OverPi * (x + 0.044715 * x * x * x)).tanh());
}
Tensor relu(const Tensor& x) {
  return stride::relu(x);
}

Tensor nll_loss(const Tensor& log_probs,
                const Tensor& target,
                int64_t ignore_index,
                Reduction reduction) {
  check_floating(log_probs, "nll_loss", "input (log-probabilities)");
  const Tensor x = detail::class_rows(log_probs, target, "nll_loss");
  const detail::Targets t = detail::read_targets(target, x.size(1), ignore_index, "nll_loss");
  const int64_t rows = x.size(0);
  const auto [valid, index] = detail::target_masks(t, rows, ignore_index, x.device());
  const Tensor picked = x.gather(1, index).view({rows});
  const Tensor per_row = where(valid, -picked, scalar_tensor(0, x.options()));
  return detail::reduce_rows(per_row, target.sizes(), reduction, t.count);
}

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  check_floating(input, "mse_loss", "input");
  if (!(input.sizes() == target.sizes())) {
    const DimVector b = broadcast_shapes(input.sizes(), target.sizes(), "mse_loss");
    logging::warn_once(
        "mse_loss_broadcast",
        ::stride::detail::str_cat(
            "[mse_loss] input ", shape_str(input.sizes()), " and target ",
            shape_str(target.sizes()), " have different shapes; they broadcast to ", shape_str(b),
            ", which is rarely intended and gives a wrong loss. Hint: make the shapes equal "
            "(e.g. target.view_as(input) or input.squeeze(-1))."));
  }
  const Tensor d = input - target;
  return detail::reduce_loss(d * d, reduction);
}

Tensor layer_norm(const Tensor& x,
                  IntArrayRef normalized_shape,
                  const Tensor& weight,
                  const Tensor& bias,
                  double eps) {
  check_floating(x, "layer_norm", "input");
  const int64_t k = int64_t(normalized_shape.size());
  bool ok = k >= 1 && k <= x.dim();
  for (int64_t i = 0; ok && i < k; ++i) {
    ok = x.size(x.dim() - k + i) == normalized_shape[size_t(i)];
  }
  STRIDE_CHECK(ok, ShapeError, "[layer_norm] normalized_shape ", shape_str(normalized_shape),
               " must be the trailing dims of the input; got input ", shape_str(x.sizes()),
               ". Hint: normalized_shape is usually {C}, the last dim.");
  for (const Tensor* p : {&weight, &bias}) {
    STRIDE_CHECK(!p->defined() || p->sizes() == normalized_shape, ShapeError, "[layer_norm] ",
                 p == &weight ? "weight" : "bias", " must have shape normalized_shape ",
                 shape_str(normalized_shape), "; got ", shape_str(p->sizes()), ".");
  }
  if (is_16bit(x.dtype())) {
    auto up = [](const Tensor& t) { return t.defined() ? t.to(kFloat32) : t; };
    return layer_norm(up(x), normalized_shape, up(weight), up(bias), eps).to(x.dtype());
  }
  DimVector dims;
  for (int64_t d = x.dim() - k; d < x.dim(); ++d) dims.push_back(d);
  // Two passes (mean, then mean of squared deviations): no cancellation.
  const Tensor centered = x - x.mean(dims, true);
  const Tensor var = (centered * centered).mean(dims, true);
  Tensor y = centered * rsqrt(var + eps);
  if (weight.defined()) y = y * weight;
  if (bias.defined()) y = y + bias;
  return y;
}

namespace {

// batch_norm of an input without elements, as PyTorch's: a copy of it,
// scaled and shifted by the first weight and bias when there are any.
Tensor empty_batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  Tensor y = x.clone();
  if (weight.defined() && weight.numel() > 0) y = y * weight.reshape({-1})[0];
  if (bias.defined() && bias.numel() > 0) y = y + bias.reshape({-1})[0];
  return y;
}

// batch_norm of a float16 or bfloat16 x computed in float32 and rounded
// once, as PyTorch's CPU kernel accumulates; the running statistics are
// updated in float32 and rounded back into their own tensors.
Tensor batch_norm_in_float32(const Tensor& x,
                             const Tensor& running_mean,
                             const Tensor& running_var,
                             const Tensor& weight,
                             const Tensor& bias,
                             bool training,
                             double momentum,
                             double eps) {
  const auto up = [](const Tensor& t) { return t.defined() ? t.to(kFloat32) : t; };
  const Tensor mean32 = up(running_mean), var32 = up(running_var);
  const Tensor y =
      batch_norm(up(x), mean32, var32, up(weight), up(bias), training, momentum, eps).to(x.dtype());
  if (training && running_mean.defined() && running_var.defined()) {
    NoGradGuard no_grad;
    Tensor(running_mean).copy_(mean32);
    Tensor(running_var).copy_(var32);
  }
  return y;
}

}  // namespace

Tensor batch_norm(const Tensor& x,
                  const Tensor& running_mean,
                  const Tensor& running_var,
                  const Tensor& weight,
                  const Tensor& bias,
                  bool training,
                  double momentum,
                  double eps) {
  check_floating(x, "batch_norm", "input");
  // An empty input normalises nothing: PyTorch returns a copy (a new tensor,
  // so the graph goes on) whatever its rank, and leaves the statistics.
  if (x.numel() == 0) return empty_batch_norm(x, weight, bias);
  STRIDE_CHECK(x.dim() >= 2, ShapeError, "[batch_norm] expected input (N, C, *); got ",
               shape_str(x.sizes()),
               ". Hint: channels are dim 1; a (N, L, C) sequence needs .transpose(1, 2) first.");
  const int64_t c = x.size(1);
  for (const Tensor* p : {&running_mean, &running_var, &weight, &bias}) {
    STRIDE_CHECK(!p->defined() || p->sizes() == IntArrayRef{c}, ShapeError,
                 "[batch_norm] running statistics, weight and bias must have shape (", c,
                 "), the input's channels; got ", shape_str(p->sizes()), ".");
    STRIDE_CHECK(!p->defined() || p->dtype() == x.dtype(), DTypeError,
                 "[batch_norm] running statistics, weight and bias must have the input's dtype ",
                 to_string(x.dtype()), "; got ", to_string(p->dtype()), ".");
  }
  if (is_16bit(x.dtype())) {
    return batch_norm_in_float32(x, running_mean, running_var, weight, bias, training, momentum,
                                 eps);
  }
  const bool tracked = running_mean.defined() && running_var.defined();
  STRIDE_CHECK(training || tracked, ValueError,
               "[batch_norm] evaluation (training=false) normalises with running_mean and "
               "running_var, which were not given.");
  // Statistics per channel over the batch and every spatial dim.
  DimVector param_shape{c};
  DimVector reduce_dims{0};
  for (int64_t d = 2; d < x.dim(); ++d) {
    param_shape.push_back(1);
    reduce_dims.push_back(d);
  }
  Tensor y;
  if (training) {
    const int64_t n = c > 0 ? x.numel() / c : 0;
    STRIDE_CHECK(n > 1, ValueError,
                 "[batch_norm] expected more than 1 value per channel when training; got input ",
                 shape_str(x.sizes()),
                 ". Hint: use a batch of at least 2 (or length > 1), or evaluate.");
    const Tensor mean = x.mean(reduce_dims, /*keepdim=*/true);
    const Tensor var = x.var(reduce_dims, /*correction=*/0, /*keepdim=*/true);
    if (tracked) {
      NoGradGuard no_grad;
      const double unbias = double(n) / double(n - 1);
      Tensor(running_mean).mul_(1.0 - momentum).add_(mean.detach().reshape({c}), momentum);
      Tensor(running_var).mul_(1.0 - momentum).add_(var.detach().reshape({c}), momentum * unbias);
    }
    y = (x - mean) * (var + eps).rsqrt();
  } else {
    y = (x - running_mean.view(param_shape)) * (running_var.view(param_shape) + eps).rsqrt();
  }
  if (weight.defined()) y = y * weight.view(param_shape);
  if (bias.defined()) y = y + bias.view(param_shape);
  return y;
}

}  // namespace stride::nn::functional
