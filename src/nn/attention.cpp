// scaled_dot_product_attention. Without a mask tensor and with dropout_p < 1
// (causal or not, with or without dropout: the Llama case) it runs a fused
// kernel with its own backward; every other case, and the reference the fused
// kernel is tested against (scaled_dot_product_attention_reference), is
// composed from ops (matmul, where, softmax, dropout, matmul), differentiable
// to any order.
//
// Note [Fused attention] and Note [Rotary attention]
// (src/backends/cpu/attention.cpp) describe the fused kernels; when their
// backward is itself recorded (create_graph), it is written with public ops
// instead (the dropout mask M as a tensor), so second derivatives are right.
//
// Note [Causal alignment]
// ~~~~~~~~~~~~~~~~~~~~~~~
// With L queries and S keys, PyTorch's is_causal keeps key j for query i when
// j <= i (top-left: the diagonal starts at the first key). That is right for
// self-attention over one sequence (L == S). When L != S, e.g. the last L
// queries of a KV-cached decode against S cached keys, the queries are the
// *last* L positions and the mask must be bottom-right: j <= i + S - L. The
// two differ silently (top-left hides most of the cache), so stride refuses
// is_causal with L != S unless the caller names the alignment.
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "backends/kernels.h"
#include "core/check.h"
#include "nn/rope_tables.h"
#include "nn/row_layout.h"
#include "ops/apply.h"
#include "stride/autograd.h"
#include "stride/backend.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"

namespace stride::nn::functional {

namespace {

// (L, S) bool: true where query i may attend to key j.
Tensor causal_keep(int64_t L, int64_t S, CausalAlignment alignment, Device device) {
  const int64_t shift = alignment == CausalAlignment::BottomRight ? S - L : 0;
  std::vector<bool> keep(size_t(L * S));
  for (int64_t i = 0; i < L; ++i) {
    for (int64_t j = 0; j < S; ++j) keep[size_t(i * S + j)] = j <= i + shift;
  }
  return tensor<bool>(keep, {L, S}).to(device);
}

using kernels::AttentionShape;

// AttentionShape holds the alignment and the convention as bools: the
// backends it is written for sit below nn, which defines the enums.
CausalAlignment alignment_of(const AttentionShape& a) {
  return a.bottom_right ? CausalAlignment::BottomRight : CausalAlignment::TopLeft;
}

RopeConvention convention_of(const AttentionShape::Rotary& r) {
  return r.interleaved ? RopeConvention::Interleaved : RopeConvention::HalfSplit;
}

// The dropout mask M of Note [Fused attention] as a (..., L, S) tensor of q's
// leading dims and dtype.
Tensor dropout_mask(const AttentionShape& a, const Tensor& q) {
  DimVector shape = q.sizes().dims();
  shape.back() = a.S;
  Tensor mask = empty(shape, q.options());
  kernels::attention_dropout_mask(q.device(), a, mask);
  return mask;
}

// The backward of Note [Fused attention] written with ops (create_graph).
autograd::Grads backward_with_ops(const AttentionShape& a,
                                  const Tensor& q,
                                  const Tensor& k,
                                  const Tensor& v,
                                  const Tensor& out,
                                  const Tensor& dout) {
  Tensor scores = matmul(q, k.transpose(-2, -1)) * a.scale;
  if (a.causal) {
    scores = where(causal_keep(a.L, a.S, alignment_of(a), q.device()), scores,
                   scalar_tensor(-std::numeric_limits<double>::infinity(), scores.options()));
  }
  const Tensor p = stride::softmax(scores, -1);
  Tensor pd = p, dp = matmul(dout, v.transpose(-2, -1));
  if (a.dropout_p > 0) {
    const Tensor mask = dropout_mask(a, q);
    pd = p * mask;
    dp = dp * mask;
  }
  const Tensor dv = matmul(pd.transpose(-2, -1), dout);
  const Tensor ds = p * (dp - (dout * out).sum({-1}, true));
  return {matmul(ds, k) * a.scale, matmul(ds.transpose(-2, -1), q) * a.scale, dv};
}

// Whether the fused kernel handles these arguments: no mask tensor, dropout
// p < 1 (p == 1 is dropout's x * 0, which keeps NaN; nobody trains with it),
// one floating dtype it computes in, and q, k, v with the same leading
// (batch) dims.
bool fusable(
    const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, double dropout_p) {
  if (mask.defined() || dropout_p >= 1) return false;
  if (q.dtype() != kFloat32 && q.dtype() != kFloat64) return false;
  if (q.dim() != k.dim() || q.dim() != v.dim()) return false;
  for (int64_t d = 0; d < q.dim() - 2; ++d) {
    if (q.size(d) != k.size(d) || q.size(d) != v.size(d)) return false;
  }
  return true;
}

// Whether the forward keeps P for the backward (Note [Fused attention]): when
// a row of scores is no longer than the q and output rows it goes with
// (S <= E + Ev), P takes no more memory than they do, and the backward
// skips recomputing q k^T, exp and the dropout draws. Longer rows are
// recomputed, so memory does not grow with L * S.
bool saves_probs(const AttentionShape& a, const Tensor& q, const Tensor& k, const Tensor& v) {
  using autograd::requires_grad;
  return GradMode::is_enabled() && (requires_grad(q) || requires_grad(k) || requires_grad(v)) &&
         a.S <= a.E + a.Ev;
}

// The fused kernel's description of a call, reserving dropout's counters.
AttentionShape fused_shape(const Tensor& q,
                           const Tensor& k,
                           const Tensor& v,
                           double dropout_p,
                           bool is_causal,
                           double scale,
                           std::optional<CausalAlignment> alignment,
                           Generator* gen) {
  const int64_t L = q.size(-2), S = k.size(-2);
  AttentionShape a;
  a.N = 1;
  for (int64_t d = 0; d < q.dim() - 2; ++d) a.N *= q.size(d);
  a.L = L;
  a.S = S;
  a.E = q.size(-1);
  a.Ev = v.size(-1);
  a.scale = scale;
  a.causal = is_causal;
  a.bottom_right = alignment == CausalAlignment::BottomRight;
  // Reserve what dropout's bernoulli_ fill over the (N, L, S) probabilities
  // would (none for an empty fill), so the generator ends in the same state.
  if (dropout_p > 0) {
    int64_t probabilities = 0;
    STRIDE_CHECK(!__builtin_mul_overflow(a.N, L, &probabilities) &&
                     !__builtin_mul_overflow(probabilities, S, &probabilities),
                 ShapeError, "[scaled_dot_product_attention] dropout over ", a.N, " x ", L, " x ",
                 S, " attention probabilities: more than int64 can count.");
    if (probabilities > 0) {
      Generator& g = gen ? *gen : default_generator(q.device());
      constexpr int64_t K = kernels::kUniformDoublePerCounter;
      a.dropout_p = dropout_p;
      a.base = g.reserve(uint64_t((probabilities + K - 1) / K));
      a.key = g.key();
    }
  }
  return a;
}

Tensor fused_attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionShape& a) {
  using ::stride::detail::Op;
  const Op op = a.rotary ? Op::rotary_attention : Op::scaled_dot_product_attention;
  Tensor lse = empty({a.N, a.L}, q.options());
  Tensor probs, keep;
  if (saves_probs(a, q, k, v)) {
    // Only the visible part of each row is written, and only it is read.
    probs = empty({a.N, a.L, a.S}, q.options());
    if (a.dropout_p > 0) keep = empty({a.N, a.L, a.S}, q.options().dtype(kUInt8));
  }
  auto forward = [&] {
    Tensor out = detail::empty_preserving_layout(q, a.Ev);
    kernels::attention_forward(q.device(), a, detail::with_row_layout(q),
                               detail::with_row_layout(k), detail::with_row_layout(v), out, lse,
                               probs, keep);
    return out;
  };
  auto backward = [&](const Tensor& out) {
    return [a, sq = autograd::SavedTensor::input(q), sk = autograd::SavedTensor::input(k),
            sv = autograd::SavedTensor::input(v), so = autograd::SavedTensor::output(out), lse,
            probs, keep](const autograd::Grads& gs) {
      const Tensor qv = sq.get(), kv = sk.get(), vv = sv.get(), ov = so.get();
      if (GradMode::is_enabled()) {
        if (!a.rotary) return backward_with_ops(a, qv, kv, vv, ov, gs[0]);
        // Through the rotations: q_rot = R q, so dq = R^T dq_rot, the rotation by -angle.
        const AttentionShape::Rotary& r = *a.rotary;
        const RopeConvention convention = convention_of(r);
        autograd::Grads g =
            backward_with_ops(a, rotary_embedding(qv, r.cos, r.sin, convention),
                              rotary_embedding(kv, r.cos, r.sin, convention), vv, ov, gs[0]);
        for (int i : {0, 1})
          g[size_t(i)] = rotary_embedding(g[size_t(i)], r.cos, -r.sin, convention);
        return g;
      }
      using detail::with_row_layout;
      const Tensor qr = with_row_layout(qv), kr = with_row_layout(kv), vr = with_row_layout(vv);
      const Tensor doutr = with_row_layout(gs[0]);
      Tensor dq = detail::empty_preserving_layout(qv, a.E);
      Tensor dk = detail::empty_preserving_layout(kv, a.E);
      Tensor dv = detail::empty_preserving_layout(vv, a.Ev);
      kernels::attention_backward(qv.device(), a, qr, kr, vr, lse, probs, keep, doutr, dq, dk, dv);
      return autograd::Grads{dq, dk, dv};
    };
  };
  return ::stride::detail::apply(op, {&q, &k, &v}, forward, backward);
}

void check_attention_args(const Tensor& q,
                          const Tensor& k,
                          const Tensor& v,
                          const Tensor& attn_mask,
                          double dropout_p,
                          bool is_causal,
                          std::optional<CausalAlignment> alignment) {
  const char* op = "scaled_dot_product_attention";
  STRIDE_CHECK(q.is_floating_point() && k.dtype() == q.dtype() && v.dtype() == q.dtype(),
               DTypeError, "[", op, "] expected q, k, v of one floating-point dtype; got ",
               to_string(q.dtype()), ", ", to_string(k.dtype()), ", ", to_string(v.dtype()), ".");
  ::stride::detail::common_device(op, {&q, &k, &v, &attn_mask});
  STRIDE_CHECK(q.dim() >= 2 && k.dim() >= 2 && v.dim() >= 2, ShapeError, "[", op,
               "] expected q (..., L, E), k (..., S, E), v (..., S, Ev); got q ",
               shape_str(q.sizes()), ", k ", shape_str(k.sizes()), ", v ", shape_str(v.sizes()),
               ".");
  STRIDE_CHECK(q.size(-1) == k.size(-1) && k.size(-2) == v.size(-2), ShapeError, "[", op,
               "] expected q (..., L, E), k (..., S, E), v (..., S, Ev) with matching E and S; got "
               "q ",
               shape_str(q.sizes()), ", k ", shape_str(k.sizes()), ", v ", shape_str(v.sizes()),
               ". Hint: heads usually go before the sequence dim: (B, H, T, head_dim).");
  STRIDE_CHECK(dropout_p >= 0 && dropout_p <= 1, ValueError, "[", op,
               "] expected 0 <= dropout_p <= 1; got ", dropout_p, ".");
  const int64_t L = q.size(-2), S = k.size(-2);
  if (is_causal) {
    STRIDE_CHECK(!attn_mask.defined(), ValueError, "[", op,
                 "] got both attn_mask and is_causal (PyTorch refuses this too). Hint: fold the "
                 "causal mask into attn_mask yourself, e.g. attn_mask & tril(ones(L, S)).");
    STRIDE_CHECK(L == S || alignment.has_value(), ValueError, "[", op,
                 "] is_causal with query length L = ", L, " != key length S = ", S,
                 " is ambiguous: PyTorch aligns the causal mask top-left (query i sees keys "
                 "<= i), but queries that are the last L of S positions (KV-cache decoding) "
                 "need bottom-right (query i sees keys <= i + S - L). Hint: pass alignment = "
                 "CausalAlignment::BottomRight (decoding) or CausalAlignment::TopLeft "
                 "(PyTorch's behaviour).");
  }
  if (attn_mask.defined()) {
    STRIDE_CHECK(attn_mask.dtype() == kBool || attn_mask.is_floating_point(), DTypeError, "[", op,
                 "] attn_mask must be bool (true = attend) or floating (added to the scores); "
                 "got ",
                 to_string(attn_mask.dtype()), ". Hint: convert a 0/1 mask with .to(kBool).");
    const IntArrayRef qs = q.sizes(), ks = k.sizes();
    DimVector scores_shape = broadcast_shapes(IntArrayRef(qs.data(), qs.size() - 2),
                                              IntArrayRef(ks.data(), ks.size() - 2), op);
    scores_shape.push_back(L);
    scores_shape.push_back(S);
    bool ok = attn_mask.dim() <= int64_t(scores_shape.size());
    for (int64_t i = 1; ok && i <= attn_mask.dim(); ++i) {
      const int64_t m = attn_mask.size(-i), s = scores_shape[scores_shape.size() - size_t(i)];
      ok = m == s || m == 1;
    }
    STRIDE_CHECK(ok, ShapeError, "[", op, "] attn_mask ", shape_str(attn_mask.sizes()),
                 " does not broadcast to the attention scores (..., L, S) = ",
                 shape_str(scores_shape), ". Hint: a padding mask over keys is (B, 1, 1, S).");
  }
}

Tensor composed_attention(const Tensor& q,
                          const Tensor& k,
                          const Tensor& v,
                          const Tensor& attn_mask,
                          double dropout_p,
                          bool is_causal,
                          double s,
                          CausalAlignment alignment,
                          Generator* gen) {
  const int64_t L = q.size(-2), S = k.size(-2);
  Tensor scores = matmul(q, k.transpose(-2, -1)) * s;
  const Tensor neg_inf = scalar_tensor(-std::numeric_limits<double>::infinity(), scores.options());
  if (is_causal) {
    scores = where(causal_keep(L, S, alignment, q.device()), scores, neg_inf);
  } else if (attn_mask.defined() && attn_mask.dtype() == kBool) {
    scores = where(attn_mask, scores, neg_inf);
  } else if (attn_mask.defined()) {
    scores = scores + attn_mask;
  }
  // A row with every key masked is all -inf and softmax gives NaN, as in PyTorch.
  Tensor attn = stride::softmax(scores, -1);
  if (dropout_p > 0) attn = dropout(attn, dropout_p, true, gen);
  return matmul(attn, v);
}

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& q,
                                    const Tensor& k,
                                    const Tensor& v,
                                    const Tensor& attn_mask,
                                    double dropout_p,
                                    bool is_causal,
                                    std::optional<double> scale,
                                    std::optional<CausalAlignment> alignment,
                                    Generator* gen) {
  check_attention_args(q, k, v, attn_mask, dropout_p, is_causal, alignment);
  // 16-bit floats attend in float32 and round the output once, as PyTorch's
  // CPU kernels accumulate: scores rounded to bfloat16 (a unit of 1 at 200)
  // would move the softmax by whole factors of e.
  if (q.dtype() == kBFloat16 || q.dtype() == kFloat16) {
    const auto up = [](const Tensor& t) {
      return t.defined() && is_floating_point(t.dtype()) ? t.to(kFloat32) : t;
    };
    return scaled_dot_product_attention(up(q), up(k), up(v), up(attn_mask), dropout_p, is_causal,
                                        scale, alignment, gen)
        .to(q.dtype());
  }
  const double s = scale.value_or(1.0 / std::sqrt(double(q.size(-1))));
  if (fusable(q, k, v, attn_mask, dropout_p)) {
    return fused_attention(q, k, v, fused_shape(q, k, v, dropout_p, is_causal, s, alignment, gen));
  }
  return composed_attention(q, k, v, attn_mask, dropout_p, is_causal, s,
                            alignment.value_or(CausalAlignment::TopLeft), gen);
}

Tensor rotary_attention(const Tensor& q,
                        const Tensor& k,
                        const Tensor& v,
                        const Tensor& cos,
                        const Tensor& sin,
                        RopeConvention convention,
                        double dropout_p,
                        bool is_causal,
                        std::optional<double> scale,
                        Generator* gen) {
  ::stride::detail::check_dtype_rule(::stride::detail::Op::rotary_attention, q);
  check_attention_args(q, k, v, {}, dropout_p, is_causal, std::nullopt);
  STRIDE_CHECK(q.size(-2) == k.size(-2) && q.size(-1) % 2 == 0, ShapeError,
               "[rotary_attention] expected q (..., T, E) and k (..., T, E) of one length T and an "
               "even E; got q ",
               shape_str(q.sizes()), ", k ", shape_str(k.sizes()),
               ". Hint: with a KV cache, rotate with rotary_embedding and call "
               "scaled_dot_product_attention.");
  detail::check_tables("rotary_attention", q, cos, sin);
  if (!fusable(q, k, v, {}, dropout_p)) {
    return scaled_dot_product_attention(rotary_embedding(q, cos, sin, convention),
                                        rotary_embedding(k, cos, sin, convention), v, {}, dropout_p,
                                        is_causal, scale, std::nullopt, gen);
  }
  const double s = scale.value_or(1.0 / std::sqrt(double(q.size(-1))));
  AttentionShape a = fused_shape(q, k, v, dropout_p, is_causal, s, std::nullopt, gen);
  a.rotary = std::make_shared<const AttentionShape::Rotary>(AttentionShape::Rotary{
      cos, sin, convention == RopeConvention::Interleaved, detail::float64_tables(cos, sin)});
  return fused_attention(q, k, v, a);
}

Tensor scaled_dot_product_attention_reference(const Tensor& q,
                                              const Tensor& k,
                                              const Tensor& v,
                                              const Tensor& attn_mask,
                                              double dropout_p,
                                              bool is_causal,
                                              std::optional<double> scale,
                                              std::optional<CausalAlignment> alignment,
                                              Generator* gen) {
  check_attention_args(q, k, v, attn_mask, dropout_p, is_causal, alignment);
  return composed_attention(q, k, v, attn_mask, dropout_p, is_causal,
                            scale.value_or(1.0 / std::sqrt(double(q.size(-1)))),
                            alignment.value_or(CausalAlignment::TopLeft), gen);
}

}  // namespace stride::nn::functional
