// Sorting and sampling: sort, argsort, topk, mode, kthvalue and multinomial,
// and the order statistics composed of sort (median, quantile). Each works on
// rows: the op moves the sorted dim last and makes the rows contiguous, and
// the kernel (src/backends/cpu/sort.cpp) orders or samples each row.
#include <limits>
#include <string_view>

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
  const int64_t n = x.size(dim);
  // The row count from the other dims: with n = 0, -1 could not be inferred.
  int64_t rows = 1;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d != dim) rows *= x.size(d);
  }
  return x.transpose(dim, -1).contiguous().reshape({rows, n});
}

// Rows (R, K) back in x's layout, with K elements along `dim`.
Tensor rows_back(const Tensor& rows, const Tensor& x, int64_t dim) {
  if (x.dim() == 0) return rows.reshape({});
  DimVector shape = x.transpose(dim, -1).sizes().dims();
  shape.back() = rows.size(1);
  return rows.view(shape).transpose(dim, -1).contiguous();
}

// The first k of each row along dim (all of them: k = size) in `how`'s
// order.
std::pair<Tensor, Tensor> ordered(
    const Tensor& x, int64_t dim, int64_t k, kernels::RowOrder how, bool descending) {
  if (detail::is_16bit(x.dtype())) {  // an order: exact in float32
    auto [values, indices] = ordered(x.to(kFloat32), dim, k, how, descending);
    return {values.to(x.dtype()), indices};
  }
  const Tensor rows = rows_along(x, dim);
  Tensor values = empty({rows.size(0), k}, x.options());
  Tensor indices = empty({rows.size(0), k}, x.options().dtype(kInt64));
  kernels::sort_rows(x.device(), rows, how, descending, values, indices);
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

// Ties are ordered as PyTorch's CPU sort orders them: by index when
// stable, else where its std::sort leaves them.
std::pair<Tensor, Tensor> sort(const Tensor& x, int64_t dim, bool descending, bool stable) {
  const int64_t d = wrap_sorted_dim(x, dim, "sort");
  const auto how = stable ? kernels::RowOrder::Stable : kernels::RowOrder::Sort;
  return detail::apply(
      Op::sort, {&x}, [&] { return ordered(x, d, x.dim() == 0 ? 1 : x.size(d), how, descending); },
      [&](const std::pair<Tensor, Tensor>& r) { return scatter_back(x, d, r.second); });
}

Tensor argsort(const Tensor& x, int64_t dim, bool descending, bool stable) {
  return detail::apply_without_grad(Op::argsort, {&x},
                                    [&] { return sort(x, dim, descending, stable).second; });
}

// Ties, and the order of an unsorted result, are PyTorch's CPU topk's.
std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest, bool sorted) {
  const int64_t d = wrap_sorted_dim(x, dim, "topk");
  const int64_t n = x.dim() == 0 ? 1 : x.size(d);
  STRIDE_CHECK(k >= 0 && k <= n, IndexError, "[topk] k = ", k, " is out of range for dim ", d,
               " of size ", n, " in shape ", shape_str(x.sizes()), ". Hint: 0 <= k <= ", n, ".");
  const auto how = sorted ? kernels::RowOrder::Topk : kernels::RowOrder::TopkUnsorted;
  return detail::apply(
      Op::topk, {&x}, [&] { return ordered(x, d, k, how, largest); },
      [&](const std::pair<Tensor, Tensor>& r) { return scatter_back(x, d, r.second); });
}

Tensor msort(const Tensor& x) {
  detail::check_dtype_rule(Op::msort, x);
  return sort(x, 0).first;
}

// ---- order statistics: kthvalue, median, nanmedian, mode, quantile ----
// Composites of sort (whose gradient goes back to where each value came
// from) and gather, as the values they return are picked from sorted lines;
// mode's and kthvalue's positions come from row kernels, their values from
// gather.

namespace {

// x with dim moved last, the other dims keeping their order.
Tensor dim_last(const Tensor& x, int64_t dim) {
  DimVector order;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d != dim) order.push_back(d);
  }
  order.push_back(dim);
  return x.permute(order);
}

// The element at position `pos` (keepdim form: size 1 along dim) of each
// line of x sorted along dim, and its index in x.
std::pair<Tensor, Tensor> sorted_at(
    const Tensor& sorted, const Tensor& order, const Tensor& pos, int64_t dim, bool keepdim) {
  Tensor values = sorted.gather(dim, pos), indices = order.gather(dim, pos);
  if (!keepdim) return {values.squeeze(dim), indices.squeeze(dim)};
  return {values, indices};
}

// The number of NaNs of each line along dim (keepdim form); 0 for integers.
Tensor nan_count(const Tensor& x, int64_t dim) {
  if (!x.is_floating_point()) return zeros_like(x.narrow(dim, 0, 1)).to(kInt64);
  return sum(x.isnan(), {dim}, true);
}

// The lower median along dim: a NaN in the line wins (its first one, which
// sorts first among the NaNs in a stable sort), unless skip_nan, which
// takes the lower median of the other elements (NaN when there are none).
std::pair<Tensor, Tensor> median_along(
    const Tensor& x, int64_t dim, bool keepdim, bool skip_nan, const char* op) {
  const Tensor xs = x.dim() == 0 ? x.reshape({1}) : x;
  const int64_t d = x.dim() == 0 ? 0 : wrap_dim(dim, x.dim(), op);
  const int64_t n = xs.size(d);
  STRIDE_CHECK(n > 0, IndexError, "[", op, "] cannot take the median of dim ", d, " of size 0 in ",
               shape_str(x.sizes()), ".");
  auto [sorted, order] = sort(xs, d, /*descending=*/false, /*stable=*/true);
  Tensor pos;
  {
    NoGradGuard no_grad;
    const Tensor nans = nan_count(xs, d);
    const Tensor numbers = nans.neg() + Scalar(n);  // the non-NaN elements
    pos = skip_nan ? div(clamp(numbers - Scalar(1), Scalar(0), std::nullopt),
                         full({}, Scalar(2), nans.options()), "floor")
                   : where(nans.gt(Scalar(0)), numbers, full_like(nans, Scalar((n - 1) / 2)));
  }
  auto result = sorted_at(sorted, order, pos, d, keepdim || x.dim() == 0);
  if (x.dim() == 0) return {result.first.reshape({}), result.second.reshape({})};
  return result;
}

// The median of every element: NaN for an empty x.
Tensor median_all(const Tensor& x, bool skip_nan, const char* op) {
  if (x.numel() == 0) return full({}, std::numeric_limits<double>::quiet_NaN(), x.options());
  return median_along(x.reshape({-1}), 0, false, skip_nan, op).first;
}

}  // namespace

Tensor median(const Tensor& x) {
  detail::check_dtype_rule(Op::median, x);
  return median_all(x, false, "median");
}
std::pair<Tensor, Tensor> median(const Tensor& x, int64_t dim, bool keepdim) {
  detail::check_dtype_rule(Op::median, x);
  return median_along(x, dim, keepdim, false, "median");
}
Tensor nanmedian(const Tensor& x) {
  detail::check_dtype_rule(Op::nanmedian, x);
  return median_all(x, true, "nanmedian");
}
std::pair<Tensor, Tensor> nanmedian(const Tensor& x, int64_t dim, bool keepdim) {
  detail::check_dtype_rule(Op::nanmedian, x);
  return median_along(x, dim, keepdim, true, "nanmedian");
}

std::pair<Tensor, Tensor> kthvalue(const Tensor& x, int64_t k, int64_t dim, bool keepdim) {
  // A kernel op outside apply(): the scope gives it the device and dtype
  // checks and its profiler span, around the gather that carries the gradient.
  detail::OpScope scope(Op::kthvalue, {&x});
  const Tensor xs = x.dim() == 0 ? x.reshape({1}) : x;
  const int64_t d = x.dim() == 0 ? 0 : wrap_dim(dim, x.dim(), "kthvalue");
  const int64_t n = xs.size(d);
  STRIDE_CHECK(k >= 1 && k <= n, IndexError, "[kthvalue] k = ", k, " is out of range for dim ", d,
               " of size ", n, ". Hint: 1 <= k <= ", n, ".");
  // The kernel picks the position (PyTorch's among ties); the value is
  // gathered there, which carries the gradient.
  Tensor indices;
  {
    NoGradGuard no_grad;
    const Tensor rows = rows_along(detail::is_16bit(xs.dtype()) ? xs.to(kFloat32) : xs, d);
    Tensor picked = empty({rows.size(0)}, x.options().dtype(kInt64));
    kernels::kth_rows(x.device(), rows, k - 1, picked);
    indices = rows_back(picked.view({rows.size(0), 1}), xs, d);
  }
  Tensor values = xs.gather(d, indices);
  if (x.dim() == 0) return {values.reshape({}), indices.reshape({})};
  if (!keepdim) return {values.squeeze(d), indices.squeeze(d)};
  return {values, indices};
}

std::pair<Tensor, Tensor> mode(const Tensor& x, int64_t dim, bool keepdim) {
  detail::OpScope scope(Op::mode, {&x});  // as kthvalue's
  const Tensor xs = x.dim() == 0 ? x.reshape({1}) : x;
  const int64_t d = x.dim() == 0 ? 0 : wrap_dim(dim, x.dim(), "mode");
  const int64_t n = xs.size(d);
  STRIDE_CHECK(n > 0, IndexError, "[mode] cannot take the mode of dim ", d, " of size 0 in ",
               shape_str(x.sizes()), ".");
  // The kernel picks the position (an order: exact in float32 for 16-bit
  // floats); the value is gathered there, which carries the gradient.
  Tensor index;
  {
    NoGradGuard no_grad;
    const Tensor rows = rows_along(detail::is_16bit(xs.dtype()) ? xs.to(kFloat32) : xs, d);
    Tensor picked = empty({rows.size(0)}, x.options().dtype(kInt64));
    kernels::mode_rows(x.device(), rows, picked);
    index = rows_back(picked.view({rows.size(0), 1}), xs, d);
  }
  Tensor values = xs.gather(d, index);
  if (x.dim() == 0) return {values.reshape({}), index.reshape({})};
  if (!keepdim) return {values.squeeze(d), index.squeeze(d)};
  return {values, index};
}

namespace {

enum class Interpolation { Linear, Lower, Higher, Nearest, Midpoint };

Interpolation parse_interpolation(std::string_view name, const char* op) {
  if (name == "linear") return Interpolation::Linear;
  if (name == "lower") return Interpolation::Lower;
  if (name == "higher") return Interpolation::Higher;
  if (name == "nearest") return Interpolation::Nearest;
  if (name == "midpoint") return Interpolation::Midpoint;
  throw ValueError(detail::str_cat("[", op,
                                   "] interpolation must be one of linear, lower, higher, nearest, "
                                   "midpoint; got '",
                                   name, "'."));
}

void check_quantile_args(const Tensor& x, const Tensor& q, const char* op) {
  STRIDE_CHECK(x.numel() > 0, ValueError, "[", op, "] input must be non-empty.");
  STRIDE_CHECK(q.dim() <= 1, ShapeError, "[", op, "] q must be a scalar or 1-d; got shape ",
               shape_str(q.sizes()), ".");
  STRIDE_CHECK(q.dtype() == x.dtype(), DTypeError, "[", op, "] q must have input's dtype ",
               to_string(x.dtype()), "; got ", to_string(q.dtype()), ".");
  STRIDE_CHECK(q.device().is_meta() || q.numel() == 0 ||
                   (q.ge(Scalar(0)).all().item<bool>() && q.le(Scalar(1)).all().item<bool>()),
               ValueError, "[", op, "] q values must be in [0, 1].");
}

// PyTorch's quantile: each line of x sorted along its last dim (NaNs last),
// the rank q * (count - 1) (count: the line's length, or its non-NaN
// elements when skip_nan; a line with a NaN ranks last unless skip_nan),
// and the values at the ranks below and above mixed as interpolation says.
// sorted (S..., n) -> (Q, S...).
Tensor quantiles_of_sorted(const Tensor& sorted,
                           const Tensor& q,
                           bool skip_nan,
                           Interpolation how) {
  const int64_t n = sorted.size(-1);
  DimVector q_shape(size_t(sorted.dim()), 1);
  q_shape.insert(q_shape.begin(), q.numel());
  const Tensor qs = q.reshape(q_shape);  // (Q, 1..., 1)
  // The rank carries q's gradient, as PyTorch's (through the linear weight).
  Tensor nans;
  {
    NoGradGuard no_grad;
    nans = sorted.isnan().sum({-1}, true).unsqueeze(0).to(sorted.dtype());
  }
  Tensor rank = skip_nan
                    ? clamp(qs * (nans.neg() + Scalar(n - 1)), Scalar(0), std::nullopt)
                    : where(nans.gt(Scalar(0)), full_like(nans, Scalar(n - 1)), qs * Scalar(n - 1));
  if (how == Interpolation::Lower) rank = rank.floor();
  if (how == Interpolation::Higher) rank = rank.ceil();
  if (how == Interpolation::Nearest) rank = rank.round();
  DimVector lines_shape = sorted.sizes().dims();
  lines_shape.insert(lines_shape.begin(), q.numel());
  const Tensor lines = sorted.unsqueeze(0).expand(lines_shape);  // (Q, S..., n)
  Tensor below_rank;
  {
    NoGradGuard no_grad;
    below_rank = rank.floor();
  }
  Tensor below = lines.gather(-1, below_rank.to(kInt64));
  if (how == Interpolation::Linear || how == Interpolation::Midpoint) {
    const Tensor above = lines.gather(-1, rank.ceil().to(kInt64));
    const Tensor weight =
        how == Interpolation::Midpoint ? full_like(rank, Scalar(0.5)) : rank - below_rank;
    below = below + weight * (above - below);
  }
  return below.squeeze(-1);
}

Tensor quantile_impl(const Tensor& x,
                     const Tensor& q,
                     std::optional<int64_t> dim,
                     bool keepdim,
                     std::string_view interpolation,
                     bool skip_nan,
                     Op id) {
  const char* op = detail::op_name(id);
  detail::check_dtype_rule(id, x);
  const Interpolation how = parse_interpolation(interpolation, op);
  check_quantile_args(x, q, op);
  Tensor r;  // (Q, S...)
  DimVector keep_shape;
  if (!dim) {
    r = quantiles_of_sorted(sort(x.reshape({-1}), -1).first, q, skip_nan, how);
    keep_shape.assign(size_t(x.dim()), 1);
  } else {
    const Tensor xs = x.dim() == 0 ? x.reshape({1}) : x;
    const int64_t d = x.dim() == 0 ? 0 : wrap_dim(*dim, x.dim(), op);
    r = quantiles_of_sorted(sort(dim_last(xs, d), -1).first, q, skip_nan, how);
    keep_shape = x.sizes().dims();
    if (x.dim() > 0) keep_shape[size_t(d)] = 1;
  }
  if (keepdim) {
    DimVector shape = keep_shape;
    shape.insert(shape.begin(), q.numel());
    r = r.reshape(shape);
  }
  return q.dim() == 0 ? r.squeeze(0) : r;
}

}  // namespace

Tensor quantile(const Tensor& x,
                const Tensor& q,
                std::optional<int64_t> dim,
                bool keepdim,
                std::string_view interpolation) {
  return quantile_impl(x, q, dim, keepdim, interpolation, false, Op::quantile);
}

Tensor nanquantile(const Tensor& x,
                   const Tensor& q,
                   std::optional<int64_t> dim,
                   bool keepdim,
                   std::string_view interpolation) {
  return quantile_impl(x, q, dim, keepdim, interpolation, true, Op::nanquantile);
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
