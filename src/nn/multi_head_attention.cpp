// torch.nn.functional.multi_head_attention_forward (nn.MultiheadAttention's
// forward), composed of linear, bmm / baddbmm, softmax, dropout and
// scaled_dot_product_attention as PyTorch's Python function is, step for
// step, so its values, gradients and dropout draws follow PyTorch's: with
// need_weights the weights are formed explicitly, without them the heads go
// through scaled_dot_product_attention. Listed as Composite in
// src/core/op_list.h.
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include "core/check.h"
#include "ops/apply.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"

namespace stride::nn::functional {

namespace {

using ::stride::detail::check_dtype_rule;
using ::stride::detail::Op;

constexpr const char* kOp = "multi_head_attention_forward";

// PyTorch's _mha_shape_check: whether query is batched (3-d) or not (2-d),
// with key, value and the masks of the matching ranks.
bool batched_inputs(const Tensor& query,
                    const Tensor& key,
                    const Tensor& value,
                    const MultiHeadAttentionOptions& o,
                    int64_t num_heads) {
  STRIDE_CHECK(query.dim() == 2 || query.dim() == 3, ShapeError, "[", kOp,
               "] query must be 2-d (L, E) unbatched or 3-d (L, N, E) batched; got shape ",
               shape_str(query.sizes()), ".");
  const bool batched = query.dim() == 3;
  STRIDE_CHECK(key.dim() == query.dim() && value.dim() == query.dim(), ShapeError, "[", kOp,
               "] key and value must have query's ", query.dim(), " dims; got shapes ",
               shape_str(key.sizes()), " and ", shape_str(value.sizes()), ".");
  // Separate projections may map keys and values of different widths to E.
  const int64_t compared = o.use_separate_proj_weight ? query.dim() - 1 : query.dim();
  const auto leading = [&](const Tensor& t) {
    return IntArrayRef(t.sizes().data(), size_t(compared));
  };
  STRIDE_CHECK(leading(key) == leading(value), ShapeError, "[", kOp,
               "] key and value must have the same ",
               o.use_separate_proj_weight ? "leading dims" : "shape", "; got shapes ",
               shape_str(key.sizes()), " and ", shape_str(value.sizes()), ".");
  const Tensor& padding = o.key_padding_mask;
  STRIDE_CHECK(!padding.defined() || padding.dim() == query.dim() - 1, ShapeError, "[", kOp,
               "] key_padding_mask must be ", query.dim() - 1, "-d for a ", query.dim(),
               "-d query; got shape ", padding.defined() ? shape_str(padding.sizes()) : "", ".");
  const Tensor& mask = o.attn_mask;
  STRIDE_CHECK(!mask.defined() || mask.dim() == 2 || mask.dim() == 3, ShapeError, "[", kOp,
               "] attn_mask must be 2-d (L, S) or 3-d (N * num_heads, L, S); got shape ",
               mask.defined() ? shape_str(mask.sizes()) : "", ".");
  STRIDE_CHECK(batched || !mask.defined() || mask.dim() == 2 || mask.size(0) == num_heads,
               ShapeError, "[", kOp, "] a 3-d attn_mask of an unbatched query must be (", num_heads,
               ", L, S); got shape ", mask.defined() ? shape_str(mask.sizes()) : "", ".");
  return batched;
}

// PyTorch's _canonical_mask: a bool mask (true: may not attend) as 0 / -inf
// of `dtype`, a floating one as given (added to the scores).
Tensor additive_mask(const Tensor& mask, ScalarType dtype, const char* name) {
  if (!mask.defined()) return mask;
  if (mask.dtype() == kBool) {
    return masked_fill(zeros(mask.sizes(), mask.options().dtype(dtype)), mask,
                       -std::numeric_limits<double>::infinity());
  }
  STRIDE_CHECK(mask.is_floating_point(), DTypeError, "[", kOp, "] ", name,
               " must be bool or floating-point; got ", to_string(mask.dtype()), ".");
  return mask;
}

// q, k and v projected: by in_proj_weight (3E, E) split in three, or by
// the three separate weights, each with its third of in_proj_bias.
std::array<Tensor, 3> projections(const Tensor& query,
                                  const Tensor& key,
                                  const Tensor& value,
                                  int64_t embed_dim,
                                  const Tensor& in_proj_weight,
                                  const Tensor& in_proj_bias,
                                  const MultiHeadAttentionOptions& o) {
  std::array<Tensor, 3> weights{o.q_proj_weight, o.k_proj_weight, o.v_proj_weight};
  if (o.use_separate_proj_weight) {
    STRIDE_CHECK(weights[0].defined() && weights[1].defined() && weights[2].defined(), ValueError,
                 "[", kOp,
                 "] use_separate_proj_weight needs q_proj_weight, k_proj_weight and "
                 "v_proj_weight; pass all three.");
  } else {
    STRIDE_CHECK(in_proj_weight.defined(), ValueError, "[", kOp,
                 "] in_proj_weight is undefined; pass it, or use_separate_proj_weight with "
                 "q_proj_weight, k_proj_weight and v_proj_weight.");
    for (int64_t i = 0; i < 3; ++i) {
      weights[size_t(i)] = in_proj_weight.narrow(0, i * embed_dim, embed_dim);
    }
  }
  const std::array<const Tensor*, 3> inputs{&query, &key, &value};
  std::array<Tensor, 3> out;
  for (int64_t i = 0; i < 3; ++i) {
    const Tensor bias =
        in_proj_bias.defined() ? in_proj_bias.narrow(0, i * embed_dim, embed_dim) : Tensor();
    out[size_t(i)] = linear(*inputs[size_t(i)], weights[size_t(i)], bias);
  }
  return out;
}

void check_attn_mask_shape(const Tensor& mask, IntArrayRef expected) {
  STRIDE_CHECK(mask.sizes() == expected, ShapeError, "[", kOp, "] the ", mask.dim(),
               "-d attn_mask must be ", shape_str(expected), "; got ", shape_str(mask.sizes()),
               ".");
}

// A mask with one more key column that every query may attend (bias_k's or
// the zero key's).
Tensor with_extra_key(const Tensor& mask) {
  return mask.defined() ? pad(mask, {0, 1}) : mask;
}

// A static key or value (N * heads, S, head_dim) replacing the projected one.
Tensor static_heads(const Tensor& given, int64_t heads, int64_t head_dim, const char* name) {
  STRIDE_CHECK(given.dim() == 3 && given.size(0) == heads && given.size(2) == head_dim, ShapeError,
               "[", kOp, "] ", name, " must be (N * num_heads, S, head_dim) = (", heads, ", S, ",
               head_dim, "); got ", shape_str(given.sizes()), ".");
  return given;
}

// The shapes every step below shares.
struct Dims {
  int64_t tgt, bsz, embed, heads, head_dim;
};

// The keys (or values) (S, N, E) as (N * heads, S', head_dim): with bias
// appended as one more key, or replaced by the static ones, and a zero key
// appended with add_zero_attn.
Tensor head_keys(Tensor k,
                 const Tensor& bias,
                 const Tensor& fixed,
                 bool add_zero_attn,
                 const Dims& d,
                 const char* static_name) {
  if (bias.defined()) {
    STRIDE_CHECK(!fixed.defined(), ValueError, "[", kOp, "] bias_k and bias_v cannot be added to ",
                 static_name, "; pass one or the other.");
    k = cat({k, bias.reshape({1, 1, d.embed}).expand({1, d.bsz, d.embed})}, 0);
  }
  k = fixed.defined() ? static_heads(fixed, d.bsz * d.heads, d.head_dim, static_name)
                      : k.reshape({k.size(0), d.bsz * d.heads, d.head_dim}).transpose(0, 1);
  if (add_zero_attn) k = cat({k, zeros({d.bsz * d.heads, 1, d.head_dim}, k.options())}, 1);
  return k;
}

// attn_mask (additive, (1 or N * heads, L, S)) merged with key_padding_mask
// (N, S) repeated over the heads.
Tensor merged_mask(const Tensor& mask, const Tensor& padding, const Dims& d, int64_t src) {
  if (!padding.defined()) return mask;
  STRIDE_CHECK(padding.size(0) == d.bsz && padding.size(1) == src, ShapeError, "[", kOp,
               "] key_padding_mask must be (N, S) = (", d.bsz, ", ", src, "); got ",
               shape_str(padding.sizes()), ".");
  const Tensor repeated = padding.reshape({d.bsz, 1, 1, src})
                              .expand({d.bsz, d.heads, 1, src})
                              .reshape({d.bsz * d.heads, 1, src});
  return mask.defined() ? mask + repeated : repeated;
}

// The heads' outputs (N * heads, L, head_dim) and weights (N * heads, L, S),
// formed explicitly (PyTorch's need_weights path).
std::pair<Tensor, Tensor> explicit_attention(const Tensor& q,
                                             const Tensor& k,
                                             const Tensor& v,
                                             const Tensor& mask,
                                             double dropout_p,
                                             Generator* gen) {
  const Tensor q_scaled = q * std::sqrt(1.0 / double(q.size(2)));
  const Tensor kt = k.transpose(-2, -1);
  Tensor weights = mask.defined() ? baddbmm(mask, q_scaled, kt) : bmm(q_scaled, kt);
  weights = weights.softmax(-1);
  if (dropout_p > 0.0) weights = dropout(weights, dropout_p, true, gen);
  return {bmm(weights, v), weights};
}

// The heads' outputs as (L, N, heads, head_dim) through
// scaled_dot_product_attention (PyTorch's path without weights).
Tensor fused_attention(const Tensor& q,
                       const Tensor& k,
                       const Tensor& v,
                       Tensor mask,
                       bool is_causal,
                       double dropout_p,
                       const Dims& d,
                       Generator* gen) {
  const int64_t src = k.size(1);
  if (mask.defined()) {
    mask = mask.size(0) == 1 ? mask.unsqueeze(0) : mask.reshape({d.bsz, d.heads, -1, src});
  }
  const auto heads = [&](const Tensor& t, int64_t len) {
    return t.reshape({d.bsz, d.heads, len, d.head_dim});
  };
  const std::optional<CausalAlignment> alignment =
      is_causal ? std::optional(CausalAlignment::TopLeft) : std::nullopt;
  return scaled_dot_product_attention(heads(q, d.tgt), heads(k, src), heads(v, src), mask,
                                      dropout_p, is_causal, std::nullopt, alignment, gen)
      .permute({2, 0, 1, 3});
}

}  // namespace

std::pair<Tensor, Tensor> multi_head_attention_forward(const Tensor& query,
                                                       const Tensor& key,
                                                       const Tensor& value,
                                                       int64_t embed_dim_to_check,
                                                       int64_t num_heads,
                                                       const Tensor& in_proj_weight,
                                                       const Tensor& in_proj_bias,
                                                       const Tensor& bias_k,
                                                       const Tensor& bias_v,
                                                       bool add_zero_attn,
                                                       double dropout_p,
                                                       const Tensor& out_proj_weight,
                                                       const Tensor& out_proj_bias,
                                                       const MultiHeadAttentionOptions& o) {
  check_dtype_rule(Op::multi_head_attention_forward, query);
  const bool batched = batched_inputs(query, key, value, o, num_heads);
  const auto batch = [&](const Tensor& t, int64_t dim) { return batched ? t : t.unsqueeze(dim); };
  const Tensor q_in = batch(query, 1), k_in = batch(key, 1), v_in = batch(value, 1);
  Tensor padding = o.key_padding_mask.defined() ? batch(o.key_padding_mask, 0) : Tensor();
  STRIDE_CHECK(num_heads > 0, ValueError, "[", kOp, "] num_heads must be positive; got ", num_heads,
               ".");
  const Dims d{q_in.size(0), q_in.size(1), q_in.size(2), num_heads, q_in.size(2) / num_heads};
  STRIDE_CHECK(d.embed == embed_dim_to_check, ShapeError, "[", kOp, "] query's embed dim is ",
               d.embed, " but embed_dim_to_check is ", embed_dim_to_check,
               "; pass the module's embed_dim.");
  STRIDE_CHECK(d.head_dim * num_heads == d.embed, ValueError, "[", kOp, "] embed_dim ", d.embed,
               " is not divisible by num_heads ", num_heads, "; pick a divisor.");
  STRIDE_CHECK(o.attn_mask.defined() || !o.is_causal, Error, "[", kOp,
               "] is_causal needs attn_mask: it is a hint that attn_mask is causal, not a mask; "
               "pass the causal attn_mask too.");
  STRIDE_CHECK(bias_k.defined() == bias_v.defined(), ValueError, "[", kOp,
               "] bias_k and bias_v must be given together; pass both or neither.");
  padding = additive_mask(padding, q_in.dtype(), "key_padding_mask");
  // PyTorch drops a causal attn_mask for the fused kernel's own causal mask
  // when nothing else masks and no weights are asked for.
  const bool causal_kernel = o.is_causal && !padding.defined() && !o.need_weights;
  Tensor mask = causal_kernel ? Tensor() : additive_mask(o.attn_mask, q_in.dtype(), "attn_mask");
  const int64_t src_given = k_in.size(0);
  if (mask.defined() && mask.dim() == 2) {
    check_attn_mask_shape(mask, {d.tgt, src_given});
    mask = mask.unsqueeze(0);
  } else if (mask.defined()) {
    check_attn_mask_shape(mask, {d.bsz * num_heads, d.tgt, src_given});
  }
  const auto [q_proj, k_proj, v_proj] =
      projections(q_in, k_in, v_in, d.embed, in_proj_weight, in_proj_bias, o);
  if (bias_k.defined()) {
    mask = with_extra_key(mask);
    padding = with_extra_key(padding);
  }
  const Tensor q = q_proj.reshape({d.tgt, d.bsz * num_heads, d.head_dim}).transpose(0, 1);
  const Tensor k = head_keys(k_proj, bias_k, o.static_k, add_zero_attn, d, "static_k");
  const Tensor v = head_keys(v_proj, bias_v, o.static_v, add_zero_attn, d, "static_v");
  if (add_zero_attn) {
    mask = with_extra_key(mask);
    padding = with_extra_key(padding);
  }
  const int64_t src = k.size(1);
  mask = merged_mask(mask, padding, d, src);
  const double p = o.training ? dropout_p : 0.0;
  const auto project_out = [&](const Tensor& heads) {
    const Tensor rows = heads.contiguous().reshape({d.tgt * d.bsz, d.embed});
    const Tensor out = linear(rows, out_proj_weight, out_proj_bias).reshape({d.tgt, d.bsz, -1});
    return batched ? out : out.squeeze(1);
  };
  if (!o.need_weights) {
    return {project_out(fused_attention(q, k, v, mask, causal_kernel, p, d, o.gen)), Tensor()};
  }
  const auto [heads, weights] = explicit_attention(q, k, v, mask, p, o.gen);
  Tensor w = weights.reshape({d.bsz, num_heads, d.tgt, src});
  if (o.average_attn_weights) w = w.mean({1});
  return {project_out(heads.transpose(0, 1)), batched ? w : w.squeeze(0)};
}

}  // namespace stride::nn::functional
