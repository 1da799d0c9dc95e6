// Numeric ops that PyTorch writes as compositions, written the same way
// here: trace, diff, the trapezoidal rules, cov and corrcoef, renorm,
// gradient, the histograms (over searchsorted and index_add), sgn, the
// triangle indices and unravel_index. No kernel or node of their own, so
// their gradients are those of the ops they are written with (and
// differentiable again).
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/check.h"
#include "ops/apply.h"
#include "stride/ops.h"

namespace stride {

using detail::Op;

namespace {

bool is_integral_or_bool(ScalarType t) {
  return !is_floating_point(t) && !is_complex(t);
}

// x.slice(dim, start, end) with PyTorch's clamping of negative bounds.
Tensor part(const Tensor& x, int64_t dim, int64_t start, int64_t end) {
  const int64_t n = x.size(dim);
  const auto clamp_bound = [n](int64_t b) { return std::clamp(b < 0 ? b + n : b, int64_t(0), n); };
  const int64_t s = clamp_bound(start), e = std::max(clamp_bound(end), s);
  return x.narrow(dim, s, e - s);
}

Tensor from(const Tensor& x, int64_t dim, int64_t start) {
  return part(x, dim, start, x.size(dim));
}

// A tensor joined before (after) x along dim for diff: a 0-d one is
// broadcast to a slice of x.
Tensor as_slice_along(const Tensor& t, const Tensor& x, int64_t dim, const char* name) {
  if (t.dim() == 0) {
    std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
    shape[size_t(dim)] = 1;
    return t.expand(shape);
  }
  STRIDE_CHECK(t.dim() == x.dim(), ShapeError, "[diff] ", name,
               " must be 0-d or have the input's number of dims (", x.dim(), "); got shape ",
               shape_str(t.sizes()), ".");
  return t;
}

Tensor nth_difference(Tensor x, int64_t n, int64_t dim) {
  if (n == 0) return x.clone();
  const bool logical = x.dtype() == kBool;
  const int64_t steps = std::min(n, x.size(dim));  // more leave an empty dim
  for (int64_t i = 0; i < steps; ++i) {
    const int64_t len = x.size(dim) - 1;
    const Tensor later = x.narrow(dim, 1, len), earlier = x.narrow(dim, 0, len);
    x = logical ? logical_xor(later, earlier) : later - earlier;
  }
  return x;
}

}  // namespace

Tensor trace(const Tensor& x) {
  detail::check_dtype_rule(Op::trace, x);
  STRIDE_CHECK(x.dim() == 2, ShapeError, "[trace] takes a matrix (2-d); got shape ",
               shape_str(x.sizes()), ".");
  const Tensor d = x.diagonal();
  return is_integral_or_bool(x.dtype()) ? sum(d, {}, false, kInt64) : d.sum();
}

Tensor diff(const Tensor& x,
            int64_t n,
            int64_t dim,
            const std::optional<Tensor>& prepend,
            const std::optional<Tensor>& append) {
  detail::check_dtype_rule(Op::diff, x);
  STRIDE_CHECK(x.dim() >= 1, ShapeError, "[diff] takes an input of at least one dim; got a 0-d ",
               "tensor.");
  STRIDE_CHECK(n >= 0, ValueError, "[diff] takes a non-negative order n; got n=", n, ".");
  const int64_t d = wrap_dim(dim, x.dim(), "diff");
  if (n == 0 || (!prepend && !append)) return nth_difference(x, n, d);
  std::vector<Tensor> parts;
  if (prepend) parts.push_back(as_slice_along(*prepend, x, d, "prepend"));
  parts.push_back(x);
  if (append) parts.push_back(as_slice_along(*append, x, d, "append"));
  return nth_difference(cat(parts, d), n, d);
}

namespace {

Tensor zeros_without_dim(const Tensor& y, int64_t dim) {
  std::vector<int64_t> shape(y.sizes().begin(), y.sizes().end());
  shape.erase(shape.begin() + dim);
  return zeros(shape, y.options());
}

void check_not_bool(const Tensor& t, const char* op, const char* name) {
  STRIDE_CHECK(t.dtype() != kBool, DTypeError, "[", op, "] takes a numeric ", name,
               "; got a bool tensor. Convert it with .to().");
}

// The spacings x[i + 1] - x[i] along dim, shaped to broadcast with y's
// differences: a 1-d x lies along dim, a shorter one gains leading dims.
Tensor sample_spacings(const Tensor& y, const Tensor& x, int64_t dim, const char* op) {
  Tensor aligned = x;
  if (x.dim() == 1) {
    STRIDE_CHECK(x.size(0) == y.size(dim), ShapeError, "[", op,
                 "] takes one x for each sample point: ", y.size(dim), " along dim ", dim, "; got ",
                 x.size(0), ".");
    std::vector<int64_t> shape(size_t(y.dim()), 1);
    shape[size_t(dim)] = x.size(0);
    aligned = x.view(shape);
  } else if (x.dim() < y.dim()) {
    std::vector<int64_t> shape(size_t(y.dim() - x.dim()), 1);
    shape.insert(shape.end(), x.sizes().begin(), x.sizes().end());
    aligned = x.view(shape);
  }
  return from(aligned, dim, 1) - part(aligned, dim, 0, -1);
}

// The sum of each pair of neighbours along dim.
Tensor neighbour_sums(const Tensor& y, int64_t dim) {
  return from(y, dim, 1) + part(y, dim, 0, -1);
}

}  // namespace

Tensor trapezoid(const Tensor& y, const Tensor& x, int64_t dim) {
  detail::check_dtype_rule(Op::trapezoid, y);
  const int64_t d = wrap_dim(dim, y.dim(), "trapezoid");
  if (y.size(d) == 0) return zeros_without_dim(y, d);
  check_not_bool(y, "trapezoid", "y");
  check_not_bool(x, "trapezoid", "x");
  return (neighbour_sums(y, d) * sample_spacings(y, x, d, "trapezoid")).sum({d}) / 2.0;
}

Tensor trapezoid(const Tensor& y, double dx, int64_t dim) {
  detail::check_dtype_rule(Op::trapezoid, y);
  const int64_t d = wrap_dim(dim, y.dim(), "trapezoid");
  if (y.size(d) == 0) return zeros_without_dim(y, d);
  check_not_bool(y, "trapezoid", "y");
  // PyTorch's form: the sum less half of each end, times dx.
  return (y.sum({d}) - (y.select(d, 0) + y.select(d, -1)) * 0.5) * dx;
}

Tensor cumulative_trapezoid(const Tensor& y, const Tensor& x, int64_t dim) {
  detail::check_dtype_rule(Op::cumulative_trapezoid, y);
  const int64_t d = wrap_dim(dim, y.dim(), "cumulative_trapezoid");
  check_not_bool(y, "cumulative_trapezoid", "y");
  check_not_bool(x, "cumulative_trapezoid", "x");
  return (sample_spacings(y, x, d, "cumulative_trapezoid") * neighbour_sums(y, d) / 2.0).cumsum(d);
}

Tensor cumulative_trapezoid(const Tensor& y, double dx, int64_t dim) {
  detail::check_dtype_rule(Op::cumulative_trapezoid, y);
  const int64_t d = wrap_dim(dim, y.dim(), "cumulative_trapezoid");
  check_not_bool(y, "cumulative_trapezoid", "y");
  return (dx / 2.0 * neighbour_sums(y, d)).cumsum(d);
}

namespace {

void check_observation_weights(const Tensor& w, int64_t observations, const char* name) {
  STRIDE_CHECK(w.dim() <= 1, ShapeError, "[cov] takes ", name, " of at most one dim; got shape ",
               shape_str(w.sizes()), ".");
  STRIDE_CHECK(w.numel() == observations, ShapeError, "[cov] takes one of ", name,
               " per observation (", observations, "); got ", w.numel(), ".");
  STRIDE_CHECK(observations == 0 || w.min().ge(Scalar(0)).item<bool>(), ValueError, "[cov] ", name,
               " cannot be negative.");
}

}  // namespace

Tensor cov(const Tensor& x,
           int64_t correction,
           const std::optional<Tensor>& fweights,
           const std::optional<Tensor>& aweights) {
  detail::check_dtype_rule(Op::cov, x);
  STRIDE_CHECK(x.dim() <= 2, ShapeError, "[cov] takes an input of at most two dims; got shape ",
               shape_str(x.sizes()), ".");
  STRIDE_CHECK(x.dtype() != kBool, DTypeError,
               "[cov] does not take bool input; convert it with .to().");
  const Tensor in = x.dim() < 2 ? x.reshape({1, -1}) : x;
  const int64_t observations = in.size(1);
  Tensor w;
  if (fweights) {
    STRIDE_CHECK(is_integral_or_bool(fweights->dtype()) && fweights->dtype() != kBool, DTypeError,
                 "[cov] takes integer fweights; got ", to_string(fweights->dtype()), ".");
    check_observation_weights(*fweights, observations, "fweights");
    w = *fweights;
  }
  if (aweights) {
    STRIDE_CHECK(aweights->is_floating_point(), DTypeError,
                 "[cov] takes floating-point aweights; got ", to_string(aweights->dtype()), ".");
    check_observation_weights(*aweights, observations, "aweights");
    w = w.defined() ? w * *aweights : *aweights;
  }
  const Tensor w_sum = w.defined() ? w.sum() : scalar_tensor(observations, kInt64);
  STRIDE_CHECK(!w.defined() || w_sum.ne(Scalar(0)).item<bool>(), ValueError,
               "[cov] weights sum to zero; they cannot be normalized.");
  const Tensor avg = (w.defined() ? in * w : in).sum({1}) / w_sum;
  // As PyTorch's (which warns): no degrees of freedom gives a zero divisor.
  // Unweighted, the divisor is known without reading values, so cov runs on
  // meta.
  Tensor norm_factor;
  if (!w.defined()) {
    norm_factor = scalar_tensor(std::max<int64_t>(observations - correction, 0), kInt64);
  } else {
    norm_factor = aweights && correction != 0
                      ? w_sum - (w * *aweights).sum() * double(correction) / w_sum
                      : w_sum - Scalar(correction);
    if (norm_factor.le(Scalar(0)).item<bool>()) norm_factor = zeros_like(norm_factor);
  }
  const Tensor centred = in - avg.unsqueeze(1);
  const Tensor c = mm(centred, (w.defined() ? centred * w : centred).t().conj());
  return (c / norm_factor).squeeze();
}

Tensor corrcoef(const Tensor& x) {
  detail::check_dtype_rule(Op::corrcoef, x);
  STRIDE_CHECK(x.dim() <= 2, ShapeError,
               "[corrcoef] takes an input of at most two dims; got shape ", shape_str(x.sizes()),
               ".");
  Tensor c = cov(x);
  if (c.dim() == 0) return c / c;  // NaN for a zero, infinite or NaN variance, else 1
  const Tensor stddev = c.diagonal().sqrt();
  c = c / stddev.view({-1, 1});
  c = c / stddev.view({1, -1});
  return c.clamp(Scalar(-1), Scalar(1));
}

Tensor renorm(const Tensor& x, double p, int64_t dim, double maxnorm) {
  // PyTorch's renorm takes complex inputs too; the rule refuses integers and bools.
  if (!x.is_complex()) detail::check_dtype_rule(Op::renorm, x);
  STRIDE_CHECK(p > 0, ValueError, "[renorm] takes a positive norm order p; got p=", p, ".");
  STRIDE_CHECK(maxnorm >= 0, ValueError,
               "[renorm] takes a non-negative maxnorm; got maxnorm=", maxnorm, ".");
  STRIDE_CHECK(x.dim() >= 2, ShapeError, "[renorm] takes an input of at least two dims; got shape ",
               shape_str(x.sizes()), ".");
  const int64_t d = wrap_dim(dim, x.dim(), "renorm");
  std::vector<int64_t> others;
  for (int64_t i = 0; i < x.dim(); ++i) {
    if (i != d) others.push_back(i);
  }
  const Tensor norms = norm(x, p, others, true);
  const Tensor factor =
      where(norms.gt(Scalar(maxnorm)), maxnorm / (norms + 1e-7), ones_like(norms));
  return x * factor;
}

namespace {

// The ends of a gradient along dim, each a slice of width 1, joined to the
// interior.
Tensor with_ends(const Tensor& first, const Tensor& interior, const Tensor& last, int64_t dim) {
  return cat({first, interior, last}, dim);
}

void check_gradient_dims(const Tensor& x, IntArrayRef dims, int64_t edge_order) {
  STRIDE_CHECK(edge_order == 1 || edge_order == 2, ValueError,
               "[gradient] takes edge_order 1 or 2; got ", edge_order, ".");
  for (const int64_t dim : dims) {
    const int64_t d = wrap_dim(dim, x.dim(), "gradient");
    STRIDE_CHECK(x.size(d) >= edge_order + 1, ValueError,
                 "[gradient] needs at least edge_order + 1 = ", edge_order + 1,
                 " samples along each dim; dim ", d, " has ", x.size(d), ".");
  }
}

Tensor uniform_gradient(const Tensor& x, double h, int64_t d, int64_t edge_order) {
  const Tensor interior = (from(x, d, 2) - part(x, d, 0, -2)) / h;
  const auto at = [&](int64_t i) { return part(x, d, i, i == -1 ? x.size(d) : i + 1); };
  if (edge_order == 1) {
    return with_ends((at(1) - at(0)) / h, interior / 2.0, (at(-1) - at(-2)) / h, d);
  }
  const Tensor first = (at(0) * -1.5 + at(1) * 2 - at(2) * 0.5) / h;
  const Tensor last = (at(-3) * 0.5 + at(-2) * -2 + at(-1) * 1.5) / h;
  return with_ends(first, interior / 2.0, last, d);
}

// Second-order differences on uneven samples, as PyTorch's (and NumPy's)
// weights of the three neighbours.
Tensor coordinate_gradient(const Tensor& x, const Tensor& coords, int64_t d, int64_t edge_order) {
  STRIDE_CHECK(coords.dim() == 1 && coords.size(0) == x.size(d), ShapeError,
               "[gradient] takes spacing tensors of one dim, one coordinate per sample (",
               x.size(d), " along dim ", d, "); got shape ", shape_str(coords.sizes()), ".");
  std::vector<int64_t> shape(size_t(x.dim()), 1);
  shape[size_t(d)] = -1;
  const Tensor dx = diff(coords);
  const Tensor dx1 = part(dx, 0, 0, -1), dx2 = from(dx, 0, 1);
  const Tensor a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape);
  const Tensor b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape);
  const Tensor c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape);
  const Tensor interior = a * part(x, d, 0, -2) + b * part(x, d, 1, -1) + c * from(x, d, 2);
  const auto at = [&](int64_t i) { return part(x, d, i, i == -1 ? x.size(d) : i + 1); };
  const auto h = [&](int64_t i) { return dx.select(0, i); };
  if (edge_order == 1) {
    return with_ends((at(1) - at(0)) / h(0), interior, (at(-1) - at(-2)) / h(-1), d);
  }
  const Tensor first = -(2.0 * h(0) + h(1)) / (h(0) * (h(0) + h(1))) * at(0) +
                       (h(0) + h(1)) / (h(0) * h(1)) * at(1) +
                       -h(0) / (h(1) * (h(0) + h(1))) * at(2);
  const Tensor last = h(-1) / (h(-2) * (h(-1) + h(-2))) * at(-3) +
                      -(h(-1) + h(-2)) / (h(-1) * h(-2)) * at(-2) +
                      (2.0 * h(-1) + h(-2)) / (h(-1) * (h(-1) + h(-2))) * at(-1);
  return with_ends(first, interior, last, d);
}

}  // namespace

std::vector<Tensor> gradient(const Tensor& x,
                             const std::vector<double>& spacing,
                             IntArrayRef dims,
                             int64_t edge_order) {
  detail::check_dtype_rule(Op::gradient, x);
  STRIDE_CHECK(spacing.size() == dims.size(), ValueError, "[gradient] takes one spacing per dim (",
               dims.size(), "); got ", spacing.size(), ".");
  check_gradient_dims(x, dims, edge_order);
  std::vector<Tensor> result;
  for (size_t i = 0; i < dims.size(); ++i) {
    result.push_back(
        uniform_gradient(x, spacing[i], wrap_dim(dims[i], x.dim(), "gradient"), edge_order));
  }
  return result;
}

std::vector<Tensor> gradient(const Tensor& x,
                             const std::vector<Tensor>& coordinates,
                             IntArrayRef dims,
                             int64_t edge_order) {
  detail::check_dtype_rule(Op::gradient, x);
  STRIDE_CHECK(coordinates.size() == dims.size(), ValueError,
               "[gradient] takes one spacing per dim (", dims.size(), "); got ", coordinates.size(),
               ".");
  check_gradient_dims(x, dims, edge_order);
  std::vector<Tensor> result;
  for (size_t i = 0; i < dims.size(); ++i) {
    result.push_back(
        coordinate_gradient(x, coordinates[i], wrap_dim(dims[i], x.dim(), "gradient"), edge_order));
  }
  return result;
}

namespace {

void check_histogram_input(const Tensor& x, const std::optional<Tensor>& weight, const char* op) {
  STRIDE_CHECK(!weight || weight->dtype() == x.dtype(), DTypeError, "[", op,
               "] takes a weight of the input's dtype (", to_string(x.dtype()), "); got ",
               to_string(weight ? weight->dtype() : x.dtype()), ".");
}

// The outer edges of each of the D dims of points (N, D): the given range
// or the points' min and max, an empty one widened by 0.5 each way.
std::vector<std::pair<double, double>> outer_edges(
    const Tensor& points, const std::vector<std::pair<double, double>>& range, const char* op) {
  const int64_t D = points.size(1);
  STRIDE_CHECK(range.empty() || int64_t(range.size()) == D, ValueError, "[", op, "] takes ", 2 * D,
               " range values (a min and a max for each of ", D, " dims); got ", 2 * range.size(),
               ".");
  // As PyTorch's: no points and no range give [0, 1].
  std::vector<std::pair<double, double>> edges(size_t(D), {0.0, 1.0});
  if (!range.empty()) {
    edges = range;
  } else if (points.size(0) > 0) {
    const Tensor lo = points.amin({0}).to(kFloat64), hi = points.amax({0}).to(kFloat64);
    for (int64_t d = 0; d < D; ++d) {
      edges[size_t(d)] = {lo.select(0, d).item<double>(), hi.select(0, d).item<double>()};
    }
  }
  for (auto& [lo, hi] : edges) {
    STRIDE_CHECK(std::isfinite(lo) && std::isfinite(hi), ValueError, "[", op,
                 "] needs a finite range; got [", lo, ", ", hi, "].");
    STRIDE_CHECK(lo <= hi, ValueError, "[", op,
                 "] takes a range whose max is at least its min; got [", lo, ", ", hi, "].");
    if (lo == hi) {
      lo -= 0.5;
      hi += 0.5;
    }
  }
  return edges;
}

void check_edges(const Tensor& edges, const Tensor& x, const char* op) {
  STRIDE_CHECK(edges.dim() == 1 && edges.numel() >= 1, ShapeError, "[", op,
               "] takes bin edges as a 1-d tensor of at least one edge; got shape ",
               shape_str(edges.sizes()), ".");
  STRIDE_CHECK(edges.dtype() == x.dtype(), DTypeError, "[", op,
               "] takes bin edges of the input's dtype (", to_string(x.dtype()), "); got ",
               to_string(edges.dtype()), ".");
}

// The bin of each value among edges (increasing): bin i holds
// [edges[i], edges[i + 1]), the last bin its right edge too; -1 outside.
Tensor bin_of(const Tensor& values, const Tensor& edges) {
  const int64_t last_bin = edges.numel() - 2;
  const Tensor pos = searchsorted(edges.contiguous(), values.contiguous(), false, true) - Scalar(1);
  const Tensor inside = values.ge(edges.select(0, 0)) * values.le(edges.select(0, -1));
  return where(inside, pos.clamp(Scalar(0), Scalar(std::max<int64_t>(last_bin, 0))),
               full_like(pos, Scalar(-1)));
}

// The histogram of points (N, D) over one set of edges per dim: every point
// inside all dims' ranges counted (weighted) in its bin, row-major.
HistogramddResult count_points(const Tensor& points,
                               std::vector<Tensor> edges,
                               const std::optional<Tensor>& weight,
                               bool density,
                               const char* op) {
  const Tensor no_grad_points = points.detach();
  const int64_t N = points.size(0);
  std::vector<int64_t> bins;
  Tensor flat = zeros({N}, points.options().dtype(kInt64));
  Tensor counted = ones({N}, points.options().dtype(kBool));
  for (size_t d = 0; d < edges.size(); ++d) {
    const int64_t n = edges[d].numel() - 1;
    const Tensor b = bin_of(no_grad_points.select(1, int64_t(d)), edges[d]);
    counted = logical_and(counted, b.ge(Scalar(0)));
    flat = flat * Scalar(n) + b.clamp(Scalar(0), std::nullopt);
    bins.push_back(n);
  }
  STRIDE_CHECK(!weight || weight->numel() == N, ShapeError, "[", op,
               "] takes one weight per input point (", N, "); got shape ",
               shape_str(weight ? weight->sizes() : IntArrayRef{}), ".");
  const Tensor w = weight ? weight->detach().reshape({N}) : ones({N}, points.options());
  const int64_t total = numel_of(bins);
  // Summed in float64, as bincount sums weights; index_add rather than
  // bincount, whose length depends on the values: this one has `total` bins,
  // so the histograms run on meta.
  Tensor hist = index_add(zeros({total}, points.options().dtype(kFloat64)), 0, flat,
                          where(counted, w, zeros_like(w)).to(kFloat64))
                    .to(points.dtype());
  hist = hist.view(bins);
  if (density) {
    hist = hist / hist.sum();
    for (size_t d = 0; d < edges.size(); ++d) {
      std::vector<int64_t> shape(edges.size(), 1);
      shape[d] = -1;
      hist = hist / diff(edges[d]).view(shape);
    }
  }
  return {hist, std::move(edges)};
}

Tensor points_of(const Tensor& x, int64_t D) {
  return x.reshape({-1, D});
}

}  // namespace

namespace {

HistogramddResult histogram_over_counts(const Tensor& x,
                                        IntArrayRef bins,
                                        const std::vector<std::pair<double, double>>& range,
                                        const std::optional<Tensor>& weight,
                                        bool density,
                                        const char* op) {
  check_histogram_input(x, weight, op);
  const int64_t D = x.size(-1);
  STRIDE_CHECK(int64_t(bins.size()) == D, ValueError, "[", op, "] takes one bin count per dim (", D,
               "); got ", bins.size(), ".");
  const Tensor points = points_of(x, D);
  const auto outer = outer_edges(points.detach(), range, op);
  std::vector<Tensor> edges;
  for (int64_t d = 0; d < D; ++d) {
    STRIDE_CHECK(bins[size_t(d)] > 0, ValueError, "[", op, "] takes positive bin counts; got ",
                 bins[size_t(d)], ".");
    const auto [lo, hi] = outer[size_t(d)];
    edges.push_back(linspace(lo, hi, bins[size_t(d)] + 1, x.options()));
  }
  return count_points(points, std::move(edges), weight, density, op);
}

HistogramddResult histogram_over_edges(const Tensor& x,
                                       const std::vector<Tensor>& bins,
                                       const std::optional<Tensor>& weight,
                                       bool density,
                                       const char* op) {
  check_histogram_input(x, weight, op);
  const int64_t D = x.size(-1);
  STRIDE_CHECK(int64_t(bins.size()) == D, ValueError, "[", op,
               "] takes one tensor of bin edges per dim (", D, "); got ", bins.size(), ".");
  for (const Tensor& e : bins) check_edges(e, x, op);
  return count_points(points_of(x, D), bins, weight, density, op);
}

void check_points(const Tensor& x) {
  STRIDE_CHECK(x.dim() >= 1, ShapeError,
               "[histogramdd] takes points of at least one dim (..., D); got a 0-d tensor.");
}

std::optional<Tensor> flat_weight(const std::optional<Tensor>& weight) {
  return weight ? std::optional<Tensor>(weight->reshape({-1})) : std::nullopt;
}

}  // namespace

HistogramResult histogram(const Tensor& x,
                          int64_t bins,
                          std::optional<std::pair<double, double>> range,
                          const std::optional<Tensor>& weight,
                          bool density) {
  detail::check_dtype_rule(Op::histogram, x);
  std::vector<std::pair<double, double>> ranges;
  if (range) ranges.push_back(*range);
  const std::vector<int64_t> counts{bins};
  HistogramddResult r = histogram_over_counts(x.reshape({-1, 1}), counts, ranges,
                                              flat_weight(weight), density, "histogram");
  return {r.hist, r.bin_edges[0]};
}

HistogramResult histogram(const Tensor& x,
                          const Tensor& bins,
                          const std::optional<Tensor>& weight,
                          bool density) {
  detail::check_dtype_rule(Op::histogram, x);
  HistogramddResult r =
      histogram_over_edges(x.reshape({-1, 1}), {bins}, flat_weight(weight), density, "histogram");
  return {r.hist, r.bin_edges[0]};
}

HistogramddResult histogramdd(const Tensor& x,
                              IntArrayRef bins,
                              const std::vector<std::pair<double, double>>& range,
                              const std::optional<Tensor>& weight,
                              bool density) {
  detail::check_dtype_rule(Op::histogramdd, x);
  check_points(x);
  return histogram_over_counts(x, bins, range, weight, density, "histogramdd");
}

HistogramddResult histogramdd(const Tensor& x,
                              const std::vector<Tensor>& bins,
                              const std::optional<Tensor>& weight,
                              bool density) {
  detail::check_dtype_rule(Op::histogramdd, x);
  check_points(x);
  return histogram_over_edges(x, bins, weight, density, "histogramdd");
}

Tensor sgn(const Tensor& x) {
  detail::check_dtype_rule(Op::sgn, x);
  if (!x.is_complex()) return sign(x);
  const Tensor magnitude = x.abs();
  return x / where(magnitude.eq(Scalar(0)), ones_like(magnitude), magnitude);
}

Tensor resolve_neg(const Tensor& x) {
  detail::check_dtype_rule(Op::resolve_neg, x);
  return x;
}

namespace {

// The (row, col) pairs of a row x col matrix with col - row <= offset
// (lower) or >= offset (upper), row-major. On meta, only their count.
Tensor triangle_indices(
    int64_t row, int64_t col, int64_t offset, TensorOptions options, bool lower, const char* op) {
  STRIDE_CHECK(row >= 0 && col >= 0, ValueError, "[", op,
               "] takes a non-negative row and col; got row=", row, ", col=", col, ".");
  const auto in_row = [&](int64_t i) {
    return lower ? std::clamp(i + offset + 1, int64_t(0), col)
                 : col - std::clamp(i + offset, int64_t(0), col);
  };
  int64_t count = 0;
  for (int64_t i = 0; i < row; ++i) count += in_row(i);
  if (options.device().type() == DeviceType::Meta) return empty({2, count}, options);
  std::vector<int64_t> pairs(size_t(2 * count));
  int64_t k = 0;
  for (int64_t i = 0; i < row; ++i) {
    const int64_t first = lower ? 0 : col - in_row(i);
    for (int64_t j = first; j < first + in_row(i); ++j, ++k) {
      pairs[size_t(k)] = i;
      pairs[size_t(count + k)] = j;
    }
  }
  return tensor(pairs, {2, count}).to(options.dtype()).to(options.device());
}

}  // namespace

Tensor tril_indices(int64_t row, int64_t col, int64_t offset, TensorOptions options) {
  return triangle_indices(row, col, offset, options, true, "tril_indices");
}

Tensor triu_indices(int64_t row, int64_t col, int64_t offset, TensorOptions options) {
  return triangle_indices(row, col, offset, options, false, "triu_indices");
}

std::vector<Tensor> unravel_index(const Tensor& indices, IntArrayRef shape) {
  detail::check_dtype_rule(Op::unravel_index, indices);
  STRIDE_CHECK(is_integral_or_bool(indices.dtype()) && indices.dtype() != kBool, DTypeError,
               "[unravel_index] takes integer indices; got ", to_string(indices.dtype()), ".");
  std::vector<int64_t> strides(shape.size());
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    STRIDE_CHECK(shape[i] >= 0, ValueError,
                 "[unravel_index] takes a shape without negative sizes; got ", shape_str(shape),
                 ".");
    strides[i] = stride;
    stride *= shape[i];
  }
  STRIDE_CHECK(indices.numel() == 0 || stride > 0, ValueError,
               "[unravel_index] cannot place indices in a shape of no elements; got ",
               shape_str(shape), ".");
  const Tensor flat = indices.to(kInt64);
  std::vector<Tensor> coordinates;
  for (size_t i = 0; i < shape.size(); ++i) {
    // Python's floor division and modulo, as PyTorch's; the modulo from
    // the truncated remainder, which cannot overflow as q - floor(q / n) * n
    // can for sizes near 2^63.
    const Tensor q = div(flat, scalar_tensor(strides[i], flat.options()), "floor");
    const Tensor size = scalar_tensor(shape[i], flat.options());
    const Tensor r = q - div(q, size, "trunc") * size;
    coordinates.push_back(where(r.lt(Scalar(0)), r + size, r));
  }
  return coordinates;
}

}  // namespace stride
