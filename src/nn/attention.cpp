// scaled_dot_product_attention composed from ops (matmul, where, softmax,
// dropout, matmul), so it is differentiable to any order. A fused
// (flash-style) kernel can replace the composition later; this stays as its
// reference.
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
#include <limits>

#include "core/check.h"
#include "stride/autograd.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"

namespace stride::nn::functional {

namespace {

// (L, S) bool: true where query i may attend to key j.
Tensor causal_keep(int64_t L, int64_t S, CausalAlignment alignment) {
  const int64_t shift = alignment == CausalAlignment::BottomRight ? S - L : 0;
  std::vector<bool> keep(size_t(L * S));
  for (int64_t i = 0; i < L; ++i) {
    for (int64_t j = 0; j < S; ++j) keep[size_t(i * S + j)] = j <= i + shift;
  }
  return tensor<bool>(keep, {L, S});
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
  const char* op = "scaled_dot_product_attention";
  STRIDE_CHECK(q.is_floating_point() && k.dtype() == q.dtype() && v.dtype() == q.dtype(),
               DTypeError, "[", op, "] expected q, k, v of one floating-point dtype; got ",
               to_string(q.dtype()), ", ", to_string(k.dtype()), ", ", to_string(v.dtype()), ".");
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
  const double s = scale.value_or(1.0 / std::sqrt(double(q.size(-1))));
  Tensor scores = matmul(q, k.transpose(-2, -1)) * s;
  const Tensor neg_inf = scalar_tensor(-std::numeric_limits<double>::infinity(), scores.dtype());
  if (is_causal) {
    scores =
        where(causal_keep(L, S, alignment.value_or(CausalAlignment::TopLeft)), scores, neg_inf);
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

}  // namespace stride::nn::functional
