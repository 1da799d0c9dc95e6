// one_hot and the vector functions of torch.nn.functional (normalize,
// cosine_similarity, pairwise_distance), composed of ops (listed as
// Composite in src/core/op_list.h).
#include <algorithm>
#include <cmath>

#include "core/check.h"
#include "ops/apply.h"
#include "stride/autograd.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"

namespace stride::nn::functional {

namespace {

using ::stride::detail::check_dtype_rule;
using ::stride::detail::Op;

// ||x||_p along dim whose gradient at a zero vector is 0, as PyTorch's norm
// backward gives (sqrt's or pow's backward at 0 would make it inf * 0 =
// NaN): the root is taken of 1 where the sum is 0, and replaced by 0.
Tensor vector_norm(const Tensor& x, double p, int64_t dim, bool keepdim) {
  if (p == 0 || p == 1 || std::isinf(p)) return norm(x, p, {dim}, keepdim);
  const Tensor s = p == 2 ? (x * x).sum({dim}, keepdim) : x.abs().pow(p).sum({dim}, keepdim);
  const Tensor positive = s.gt(0.0);
  const Tensor safe = where(positive, s, ones_like(s));
  return where(positive, p == 2 ? safe.sqrt() : safe.pow(1.0 / p), zeros_like(s));
}

// dim as a dim of a tensor of `rank` dims (negative counts from the end),
// or an IndexError naming the op.
int64_t wrap_dim(int64_t dim, int64_t rank, const char* op) {
  STRIDE_CHECK(dim >= -rank && dim < rank, IndexError, "[", op, "] dim ", dim,
               " is out of range for an input of ", rank, " dims. Hint: dim must be in [", -rank,
               ", ", rank, ").");
  return dim < 0 ? dim + rank : dim;
}

}  // namespace

Tensor one_hot(const Tensor& indices, int64_t num_classes) {
  check_dtype_rule(Op::one_hot, indices);
  STRIDE_CHECK(indices.dtype() == kInt64, DTypeError,
               "[one_hot] expected int64 class indices; got ", to_string(indices.dtype()),
               ". Hint: convert with .to(kInt64).");
  STRIDE_CHECK(num_classes >= -1, ValueError,
               "[one_hot] num_classes must be >= 0, or -1 to infer it; got ", num_classes, ".");
  // The values are read on the host (a meta tensor has none, so it needs
  // num_classes).
  if (!indices.device().is_meta() && indices.numel() > 0) {
    NoGradGuard no_grad;
    const int64_t lo = amin(indices).item<int64_t>(), hi = amax(indices).item<int64_t>();
    if (num_classes == -1) num_classes = std::max<int64_t>(hi + 1, 0);
    const int64_t bad = lo < 0 ? lo : hi;
    STRIDE_CHECK(lo >= 0 && hi < num_classes, ValueError,
                 "[one_hot] class values must be in [0, num_classes); got ", bad,
                 " with num_classes=", num_classes, ".");
  }
  STRIDE_CHECK(num_classes >= 0, ValueError,
               "[one_hot] num_classes=-1 infers the number of classes from the "
               "values, and ",
               indices.device().is_meta() ? "a meta tensor holds none" : "the input is empty",
               "; pass num_classes.");
  const Tensor classes = arange(num_classes, kInt64).to(indices.device());
  return eq(indices.unsqueeze(-1), classes).to(kInt64);
}

Tensor normalize(const Tensor& x, double p, int64_t dim, double eps) {
  check_dtype_rule(Op::normalize, x);
  // A 0-d input is one vector of one element (dim 0 or -1), as PyTorch.
  if (x.dim() == 0)
    return normalize(x.reshape({1}), p, wrap_dim(dim, 1, "normalize"), eps).view({});
  const int64_t d = wrap_dim(dim, x.dim(), "normalize");
  return x / vector_norm(x, p, d, true).clamp(eps, std::nullopt);
}

Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim, double eps) {
  check_dtype_rule(Op::cosine_similarity, x1);
  check_dtype_rule(Op::cosine_similarity, x2);
  // 16-bit inputs compute in float32 and round once: PyTorch's norms
  // accumulate in float, and quotients, products and a sum each rounded to
  // bfloat16 would land an ulp or more off.
  if ((x1.dtype() == kBFloat16 || x1.dtype() == kFloat16) && x2.dtype() == x1.dtype()) {
    return cosine_similarity(x1.to(kFloat32), x2.to(kFloat32), dim, eps).to(x1.dtype());
  }
  const DimVector shape = broadcast_shapes(x1.sizes(), x2.sizes(), "cosine_similarity");
  // 0-d inputs are vectors of one element (dim 0 or -1), as PyTorch.
  if (shape.empty()) {
    wrap_dim(dim, 1, "cosine_similarity");
    return cosine_similarity(x1.reshape({1}), x2.reshape({1}), 0, eps);
  }
  const int64_t d = wrap_dim(dim, int64_t(shape.size()), "cosine_similarity");
  const Tensor a = x1.expand(shape), b = x2.expand(shape);
  // PyTorch divides each input by its norm first (which keeps the result in
  // [-1, 1]) and clamps the norms at eps in place under no_grad: clamped in
  // value, the identity for the gradient.
  const auto clamped_norm = [&](const Tensor& t) {
    const Tensor n = vector_norm(t, 2.0, d, true);
    return n + (n.clamp(eps, std::nullopt) - n).detach();
  };
  return ((a / clamped_norm(a)) * (b / clamped_norm(b))).sum({d});
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
  check_dtype_rule(Op::pairwise_distance, x1);
  const int64_t rank = std::max(x1.dim(), x2.dim());
  STRIDE_CHECK(rank > 0, ShapeError,
               "[pairwise_distance] expected inputs with at least one dim (the "
               "vectors' last "
               "dim); got two 0-d tensors.");
  return vector_norm(x1 - x2 + eps, p, rank - 1, keepdim);
}

}  // namespace stride::nn::functional
