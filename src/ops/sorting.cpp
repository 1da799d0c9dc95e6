// Sorting and sampling: sort, argsort, topk and multinomial. Each works on
// rows: the op moves the sorted dim last and makes the rows contiguous, and
// the kernel (src/backends/cpu/sort.cpp) orders or samples each row.
#include "backends/kernels.h"
#include "ops/apply.h"
#include "ops/elementwise_common.h"

namespace stride {

using autograd::Grads;
using detail::Op;

namespace {

// x with `dim` last, as contiguous rows (R, N); a 0-d x is one row of one.
Tensor rows_along(const Tensor& x, int64_t dim) {
  if (x.dim() == 0) return x.reshape({1, 1});
  const Tensor last = x.transpose(dim, -1).contiguous();
  // The row count from the other dims, not reshape's -1: it cannot infer
  // one for an empty x.
  int64_t rows = 1;
  for (int64_t i = 0; i + 1 < last.dim(); ++i) rows *= last.size(i);
  return last.reshape({rows, x.size(dim)});
}

// Rows (R, K) back in x's layout, with K elements along `dim`.
Tensor rows_back(const Tensor& rows, const Tensor& x, int64_t dim) {
  if (x.dim() == 0) return rows.reshape({});
  DimVector shape = x.transpose(dim, -1).sizes().dims();
  shape.back() = rows.size(1);
  return rows.view(shape).transpose(dim, -1).contiguous();
}

// The first k of each row along dim (all of them: k = size) in order.
std::pair<Tensor, Tensor> ordered(
    const Tensor& x, int64_t dim, int64_t k, bool descending, const char* op) {
  if (detail::is_16bit(x.dtype())) {  // an order: exact in float32
    auto [values, indices] = ordered(x.to(kFloat32), dim, k, descending, op);
    return {values.to(x.dtype()), indices};
  }
  const Tensor rows = rows_along(x, dim);
  Tensor values = empty({rows.size(0), k}, x.options());
  Tensor indices = empty({rows.size(0), k}, x.options().dtype(kInt64));
  kernels::sort_rows(x.device(), rows, descending, values, indices);
  return {rows_back(values, x, dim), rows_back(indices, x, dim)};
}

// The gradient of values picked from x along dim: each goes back to the
// position it came from.
auto scatter_back(const Tensor& x, int64_t dim, const Tensor& indices) {
  return [shape = x.sizes().dims(), dim, indices](const Grads& gs) {
    if (shape.empty()) return Grads{gs[0]};
    return Grads{zeros(shape, gs[0].options()).scatter_add(dim, indices, gs[0])};
  };
}

int64_t wrap_sorted_dim(const Tensor& x, int64_t dim, const char* op) {
  return x.dim() == 0 ? 0 : wrap_dim(dim, x.dim(), op);
}

}  // namespace

std::pair<Tensor, Tensor> sort(const Tensor& x, int64_t dim, bool descending, bool /*stable*/) {
  // Always stable: ties keep their order whether or not stable is asked.
  const int64_t d = wrap_sorted_dim(x, dim, "sort");
  return detail::apply(
      Op::sort, {&x},
      [&] { return ordered(x, d, x.dim() == 0 ? 1 : x.size(d), descending, "sort"); },
      [&](const std::pair<Tensor, Tensor>& r) { return scatter_back(x, d, r.second); });
}

Tensor argsort(const Tensor& x, int64_t dim, bool descending, bool stable) {
  return detail::apply_without_grad(Op::argsort, {&x},
                                    [&] { return sort(x, dim, descending, stable).second; });
}

std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest, bool
                               /*sorted*/) {
  // Always sorted, which PyTorch allows for sorted=False too.
  const int64_t d = wrap_sorted_dim(x, dim, "topk");
  const int64_t n = x.dim() == 0 ? 1 : x.size(d);
  STRIDE_CHECK(k >= 0 && k <= n, IndexError, "[topk] k = ", k, " is out of range for dim ", d,
               " of size ", n, " in shape ", shape_str(x.sizes()), ". Hint: 0 <= k <= ", n, ".");
  return detail::apply(
      Op::topk, {&x}, [&] { return ordered(x, d, k, largest, "topk"); },
      [&](const std::pair<Tensor, Tensor>& r) { return scatter_back(x, d, r.second); });
}

namespace {

void check_distribution(const Tensor& probs, int64_t num_samples, bool replacement) {
  STRIDE_CHECK(probs.dim() == 1 || probs.dim() == 2, ShapeError,
               "[multinomial] probabilities must be 1-d or 2-d; got shape ",
               shape_str(probs.sizes()), ".");
  const int64_t n = probs.size(-1);
  STRIDE_CHECK(n > 0, ShapeError, "[multinomial] the probability rows are empty (shape ",
               shape_str(probs.sizes()), ").");
  STRIDE_CHECK(num_samples > 0, ValueError, "[multinomial] num_samples must be positive; got ",
               num_samples, ".");
  STRIDE_CHECK(replacement || num_samples <= n, ValueError, "[multinomial] cannot draw ",
               num_samples, " samples from ", n,
               " categories without replacement. Hint: pass replacement=True.");
  if (probs.device().is_meta()) return;
  STRIDE_CHECK(!(probs.lt(0).any().item<bool>() || !probs.isfinite().all().item<bool>()),
               ValueError,
               "[multinomial] the probabilities contain inf, NaN or a negative number.");
  const Tensor positive = probs.gt(0).sum({-1});
  STRIDE_CHECK(positive.gt(0).all().item<bool>(), ValueError,
               "[multinomial] a row of probabilities sums to 0.");
  STRIDE_CHECK(replacement || positive.ge(num_samples).all().item<bool>(), ValueError,
               "[multinomial] a row has fewer than ", num_samples,
               " categories of positive probability to draw without replacement.");
}

}  // namespace

Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement, Generator* gen) {
  return detail::apply_without_grad(Op::multinomial, {&probs}, [&] {
    check_distribution(probs, num_samples, replacement);
    const Tensor rows = (detail::is_16bit(probs.dtype()) ? probs.to(kFloat32) : probs)
                            .contiguous()
                            .reshape({-1, probs.size(-1)});
    const int64_t draws = replacement ? num_samples : rows.size(1);
    Tensor uniforms = empty({rows.size(0), draws}, probs.options().dtype(kFloat64));
    uniforms.uniform_(0, 1, gen);
    Tensor samples = empty({rows.size(0), num_samples}, probs.options().dtype(kInt64));
    kernels::multinomial(probs.device(), rows, uniforms, replacement, samples);
    return probs.dim() == 1 ? samples.reshape({num_samples}) : samples;
  });
}

std::pair<Tensor, Tensor> Tensor::sort(int64_t dim, bool descending, bool stable) const {
  return stride::sort(*this, dim, descending, stable);
}
Tensor Tensor::argsort(int64_t dim, bool descending, bool stable) const {
  return stride::argsort(*this, dim, descending, stable);
}
std::pair<Tensor, Tensor> Tensor::topk(int64_t k, int64_t dim, bool largest, bool sorted) const {
  return stride::topk(*this, k, dim, largest, sorted);
}
Tensor Tensor::multinomial(int64_t num_samples, bool replacement, Generator* gen) const {
  return stride::multinomial(*this, num_samples, replacement, gen);
}

}  // namespace stride
