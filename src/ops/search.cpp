// Searching and counting: searchsorted, bucketize, bincount, histc, unique,
// unique_consecutive and isin. The kernels are in
// src/backends/cpu/search.cpp; unique sorts with the sort kernel and finds
// the runs of equal neighbours with consecutive_groups. Their results are
// integers or counts, so none has a gradient.
#include <algorithm>
#include <cmath>

#include "backends/kernels.h"
#include "ops/apply.h"
#include "ops/elementwise_common.h"
#include "stride/ops.h"

namespace stride {

using detail::Op;

namespace {

// The dtype both operands of a search compare in: 16-bit floats in float32.
ScalarType search_dtype(const Tensor& a, const Tensor& b) {
  const ScalarType t = promote_types(a.dtype(), b.dtype());
  return detail::is_16bit(t) || t == kBool ? (t == kBool ? kInt64 : kFloat32) : t;
}

void check_search_shapes(const Tensor& sorted, const Tensor& values) {
  STRIDE_CHECK(sorted.dim() >= 1, ShapeError,
               "[searchsorted] sorted_sequence must have at least one dim; got a 0-d tensor.");
  if (sorted.dim() == 1) return;
  bool same_lead = values.dim() == sorted.dim();
  for (int64_t d = 0; same_lead && d + 1 < sorted.dim(); ++d) {
    same_lead = values.size(d) == sorted.size(d);
  }
  STRIDE_CHECK(same_lead, ShapeError, "[searchsorted] sorted_sequence ", shape_str(sorted.sizes()),
               " and values ", shape_str(values.sizes()),
               " must have the same leading dims (all but the last), or sorted_sequence must be "
               "1-d.");
}

}  // namespace

Tensor searchsorted(const Tensor& sorted_sequence,
                    const Tensor& values,
                    bool out_int32,
                    bool right,
                    const std::optional<Tensor>& sorter) {
  return detail::apply_without_grad(Op::searchsorted, {&sorted_sequence, &values}, [&] {
    check_search_shapes(sorted_sequence, values);
    const ScalarType out_dtype = out_int32 ? kInt32 : kInt64;
    if (values.numel() == 0) return empty(values.sizes(), values.options().dtype(out_dtype));
    Tensor seq = sorted_sequence;
    if (sorter) {
      STRIDE_CHECK(sorter->sizes() == sorted_sequence.sizes(), ShapeError, "[searchsorted] sorter ",
                   shape_str(sorter->sizes()), " must have sorted_sequence's shape ",
                   shape_str(sorted_sequence.sizes()), ".");
      seq = seq.gather(-1, *sorter);
    }
    const ScalarType t = search_dtype(seq, values);
    const int64_t n = seq.size(-1);
    const int64_t rows = sorted_sequence.dim() == 1 ? 1 : seq.numel() / std::max<int64_t>(n, 1);
    const Tensor s = seq.to(t).contiguous().reshape({rows, n});
    const Tensor v = values.to(t).contiguous().reshape({rows, values.numel() / rows});
    Tensor out = empty(v.sizes(), values.options().dtype(out_dtype));
    kernels::searchsorted(values.device(), s, v, right, out);
    return out.view(values.sizes());
  });
}

Tensor bucketize(const Tensor& x, const Tensor& boundaries, bool out_int32, bool right) {
  detail::check_dtype_rule(Op::bucketize, x);
  STRIDE_CHECK(boundaries.dim() == 1, ShapeError, "[bucketize] boundaries must be 1-d; got shape ",
               shape_str(boundaries.sizes()), ".");
  return searchsorted(boundaries, x, out_int32, right);
}

Tensor bincount(const Tensor& x, const std::optional<Tensor>& weights, int64_t minlength) {
  return detail::apply_without_grad(Op::bincount, {&x}, [&] {
    STRIDE_CHECK(!x.is_floating_point() && x.dtype() != kBool, DTypeError,
                 "[bincount] input must be a tensor of integers; got ", to_string(x.dtype()), ".");
    STRIDE_CHECK(x.dim() == 1, ShapeError, "[bincount] input must be 1-d; got shape ",
                 shape_str(x.sizes()), ".");
    STRIDE_CHECK(minlength >= 0, ValueError, "[bincount] minlength must be non-negative; got ",
                 minlength, ".");
    STRIDE_CHECK(!weights || weights->sizes() == x.sizes(), ShapeError, "[bincount] weights ",
                 shape_str(weights ? weights->sizes() : x.sizes()), " must have the input's shape ",
                 shape_str(x.sizes()), ".");
    const Tensor values = x.to(kInt64).contiguous();
    const int64_t lowest = x.numel() > 0 ? values.min().item<int64_t>() : 0;
    STRIDE_CHECK(lowest >= 0, ValueError, "[bincount] input must be non-negative; got ", lowest,
                 ".");
    const int64_t bins = std::max(minlength, x.numel() > 0 ? values.max().item<int64_t>() + 1 : 0);
    // As PyTorch's: float32 weights sum into float32, others into float64.
    const ScalarType rt = !weights ? kInt64 : (weights->dtype() == kFloat32 ? kFloat32 : kFloat64);
    Tensor out = zeros({bins}, x.options().dtype(weights ? kFloat64 : kInt64));
    const Tensor w = weights ? weights->to(kFloat64).contiguous() : Tensor();
    kernels::bincount(x.device(), values, w, out);
    return out.to(rt);
  });
}

Tensor histc(const Tensor& x, int64_t bins, double min, double max) {
  return detail::apply_without_grad(Op::histc, {&x}, [&] {
    STRIDE_CHECK(x.is_floating_point(), DTypeError, "[histc] input must be floating point; got ",
                 to_string(x.dtype()), ".");
    STRIDE_CHECK(bins > 0, ValueError, "[histc] bins must be positive; got ", bins, ".");
    STRIDE_CHECK(min <= max, ValueError, "[histc] max must be at least min; got min ", min,
                 " and max ", max, ".");
    const Tensor xf = (detail::is_16bit(x.dtype()) ? x.to(kFloat32) : x).contiguous().reshape({-1});
    // As PyTorch's: min == max takes the data's range, and an empty range
    // widens to [min - 1, max + 1].
    if (min == max && xf.numel() > 0) {
      min = xf.min().item<double>();
      max = xf.max().item<double>();
    }
    if (min == max) {
      min -= 1;
      max += 1;
    }
    STRIDE_CHECK(std::isfinite(min) && std::isfinite(max), ValueError, "[histc] the range [", min,
                 ", ", max, "] is not finite.");
    Tensor out = zeros({bins}, xf.options());
    kernels::histc(x.device(), xf, min, max, out);
    return out.to(x.dtype());
  });
}

namespace {

// x with dim moved first, the other dims keeping their order (PyTorch's
// unique compares slices in that order).
Tensor dim_first(const Tensor& x, int64_t dim) {
  DimVector order{dim};
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d != dim) order.push_back(d);
  }
  return x.permute(order);
}

// Groups of equal neighbouring slices of rows (N, K): the group of each
// row, and the number of groups. -0.0 counts as 0.0.
std::pair<Tensor, int64_t> consecutive_groups(const Tensor& rows) {
  const Tensor normal = rows.is_floating_point() ? rows + Scalar(0.0) : rows;
  Tensor group = empty({rows.size(0)}, rows.options().dtype(kInt64));
  const int64_t n = kernels::consecutive_groups(rows.device(), normal.contiguous(), group);
  return {group, n};
}

// The order that sorts the rows (N, K) lexicographically, stably: stable
// sorts by each column from the last to the first.
Tensor lexicographic_order(const Tensor& rows) {
  Tensor order = arange(Scalar(rows.size(0))).to(rows.device());
  for (int64_t k = rows.size(1) - 1; k >= 0; --k) {
    const Tensor key = rows.select(1, k).index_select(0, order);
    order = order.index_select(0, key.argsort(0, false, true));
  }
  return order;
}

// The unique rows of rows (N, K) taken in `order` (which groups equal rows
// together): the first row of each group (its index in rows), the group of
// every row and each group's size.
UniqueResult unique_rows(const Tensor& rows, const Tensor& order, int64_t rows_total) {
  const Tensor ordered = rows.index_select(0, order);
  auto [group_in_order, groups] = consecutive_groups(ordered);
  const Tensor counts = bincount(group_in_order, std::nullopt, groups);
  const Tensor starts = counts.cumsum(0) - counts;
  UniqueResult r;
  r.values = order.index_select(0, starts);  // positions in rows
  r.inverse = scatter(empty({rows_total}, order.options()), 0, order, group_in_order);
  r.counts = counts;
  return r;
}

// unique and unique_consecutive: rows are x's elements (dim none) or its
// slices along dim; `sort` orders them first.
UniqueResult unique_impl(const Tensor& x,
                         std::optional<int64_t> dim,
                         bool sort_first,
                         bool return_inverse,
                         bool return_counts) {
  const Tensor xs = x.dim() == 0 && dim ? x.reshape({1}) : x;
  const int64_t d = dim ? wrap_dim(*dim, xs.dim(), "unique") : 0;
  const Tensor moved = dim ? dim_first(xs, d) : xs.reshape({-1});
  const int64_t n = moved.dim() == 0 ? 1 : moved.size(0);
  // Each row one slice of k elements (k from the count: with 0 elements,
  // -1 could not be inferred).
  const int64_t k = n == 0 ? 1 : moved.numel() / n;
  const Tensor rows = moved.contiguous().reshape({n, k});
  const Tensor order =
      sort_first ? (dim ? lexicographic_order(rows) : rows.select(1, 0).argsort(0, false, true))
                 : arange(Scalar(n)).to(x.device());
  UniqueResult r = unique_rows(rows, order, n);
  if (dim) {
    r.values = xs.index_select(d, r.values);
  } else {
    r.values = moved.index_select(0, r.values);
    r.inverse = r.inverse.view(x.sizes());
  }
  if (!return_inverse) r.inverse = empty({0}, x.options().dtype(kInt64));
  if (!return_counts) r.counts = empty({0}, x.options().dtype(kInt64));
  return r;
}

}  // namespace

UniqueResult unique(const Tensor& x,
                    bool /*sorted*/,
                    bool return_inverse,
                    bool return_counts,
                    std::optional<int64_t> dim) {
  // Always sorted, which PyTorch allows for sorted=False too.
  detail::OpScope scope(Op::unique, {&x});
  NoGradGuard no_grad;
  return unique_impl(x, dim, true, return_inverse, return_counts);
}

UniqueResult unique_consecutive(const Tensor& x,
                                bool return_inverse,
                                bool return_counts,
                                std::optional<int64_t> dim) {
  detail::OpScope scope(Op::unique_consecutive, {&x});
  NoGradGuard no_grad;
  return unique_impl(x, dim, false, return_inverse, return_counts);
}

Tensor isin(const Tensor& elements,
            const Tensor& test_elements,
            bool /*assume_unique*/,
            bool invert) {
  detail::check_dtype_rule(Op::isin, elements);
  NoGradGuard no_grad;
  // PyTorch's sorting method: each element's insertion point in the sorted
  // test elements holds it exactly when it is there.
  const ScalarType t = promote_types(elements.dtype(), test_elements.dtype());
  const Tensor tests = test_elements.to(t).reshape({-1}).sort(0).first;
  const Tensor e = elements.to(t);
  Tensor found;
  if (tests.numel() == 0) {
    found = zeros(elements.sizes(), elements.options().dtype(kBool));
  } else {
    const Tensor at =
        searchsorted(tests, e.reshape({-1})).clamp(Scalar(0), Scalar(tests.numel() - 1));
    found = tests.index_select(0, at).eq(e.reshape({-1})).view(elements.sizes());
  }
  return invert ? found.eq(Scalar(false)) : found;
}

}  // namespace stride
