#include "support/layouts.h"

#include <cmath>
#include <sstream>

namespace stride::testing {

const char* layout_name(Layout l) {
  switch (l) {
    case Layout::Contiguous:
      return "contiguous";
    case Layout::Transposed:
      return "transposed";
    case Layout::Step2:
      return "step2";
    case Layout::Offset:
      return "offset";
    case Layout::Expanded:
      return "expanded";
  }
  return "?";
}

namespace {

// A view of `shape` in `layout` over a fresh buffer (`base`).
Tensor layout_view(IntArrayRef shape, ScalarType dtype, Layout layout, Tensor& base) {
  const int64_t n = int64_t(shape.size());
  switch (layout) {
    case Layout::Contiguous:
      base = empty(shape, dtype);
      return base;
    case Layout::Transposed: {
      if (n < 2) return layout_view(shape, dtype, Layout::Step2, base);
      DimVector rev(shape.begin(), shape.end());
      std::reverse(rev.begin(), rev.end());
      base = empty(rev, dtype);
      DimVector perm;
      for (int64_t i = n - 1; i >= 0; --i) perm.push_back(i);
      return base.permute(perm);
    }
    case Layout::Step2: {
      if (n == 0) return layout_view(shape, dtype, Layout::Offset, base);
      DimVector wide(shape.begin(), shape.end());
      wide.back() = wide.back() * 2 + 1;
      base = empty(wide, dtype);
      return base.slice(-1, 1, std::nullopt, 2).narrow(-1, 0, shape.back());
    }
    case Layout::Offset: {
      const int64_t numel = numel_of(shape);
      base = empty({numel + 7}, dtype);
      return base.as_strided(shape, contiguous_strides(shape), 5);
    }
    case Layout::Expanded: {
      if (n == 0 || shape[0] == 0) return layout_view(shape, dtype, Layout::Contiguous, base);
      DimVector one(shape.begin(), shape.end());
      one[0] = 1;
      base = empty(one, dtype);
      return base.expand(shape);
    }
  }
  return {};
}

void fill_sentinel(Tensor& t) {
  if (t.is_floating_point())
    t.fill_(std::nan(""));
  else if (t.dtype() == kBool)
    t.fill_(true);
  else
    t.fill_(111);
}

}  // namespace

Tensor make_input(
    IntArrayRef shape, ScalarType dtype, Layout layout, Domain domain, Generator& gen) {
  Tensor base;
  Tensor view = layout_view(shape, dtype, layout, base);
  fill_sentinel(base);
  if (dtype == kBool) {
    Tensor bits = empty(base.sizes(), kFloat64).uniform_(0, 1, &gen);
    base.copy_(bits.gt(0.5));
  } else if (is_floating_point(dtype)) {
    switch (domain) {
      case Domain::Any:
        base.normal_(0, 1, &gen);
        break;
      case Domain::Positive:
        base.uniform_(0.1, 3, &gen);
        break;
      case Domain::Unit:
        base.uniform_(-0.9, 0.9, &gen);
        break;
      case Domain::AboveOne:
        base.uniform_(1.1, 4, &gen);
        break;
      case Domain::Probability:
        base.uniform_(0.05, 0.95, &gen);
        break;
    }
  } else if (domain == Domain::Probability) {
    base.random_(0, 2, &gen);
  } else {
    base.random_(domain == Domain::Any ? -5 : domain == Domain::AboveOne ? 2 : 1, 6, &gen);
  }
  return view;
}

Tensor make_output(IntArrayRef shape, ScalarType dtype, Layout layout, Tensor& base) {
  Tensor view = layout_view(shape, dtype, layout, base);
  fill_sentinel(base);
  return view;
}

std::vector<int64_t> element_offsets(const Tensor& view) {
  std::vector<int64_t> out;
  const int64_t n = view.dim();
  if (view.numel() == 0) return out;
  DimVector idx(size_t(n), 0);
  for (int64_t e = 0; e < view.numel(); ++e) {
    int64_t off = view.storage_offset();
    for (int64_t d = 0; d < n; ++d) off += idx[size_t(d)] * view.strides()[size_t(d)];
    out.push_back(off);
    for (int64_t d = n - 1; d >= 0; --d) {
      if (++idx[size_t(d)] < view.sizes()[size_t(d)]) break;
      idx[size_t(d)] = 0;
    }
  }
  return out;
}

::testing::AssertionResult close(const Tensor& got, const Tensor& want, double rtol, double atol) {
  if (!(got.sizes() == want.sizes())) {
    return ::testing::AssertionFailure()
           << "shape " << shape_str(got.sizes()) << " vs expected " << shape_str(want.sizes());
  }
  if (got.dtype() != want.dtype()) {
    return ::testing::AssertionFailure()
           << "dtype " << to_string(got.dtype()) << " vs expected " << to_string(want.dtype());
  }
  if (got.is_complex()) {  // part by part
    return close(view_as_real(got.to(kComplex128)), view_as_real(want.to(kComplex128)), rtol, atol);
  }
  std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  double worst = 0;
  int64_t worst_i = -1;
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(g[i]) && std::isnan(w[i])) continue;
    if (g[i] == w[i]) continue;
    const double diff = std::abs(g[i] - w[i]);
    if (!(diff <= atol + rtol * std::abs(w[i])) && (worst_i < 0 || !(diff <= worst))) {
      worst = diff;
      worst_i = int64_t(i);
    }
  }
  if (worst_i < 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "element " << worst_i << ": got " << g[size_t(worst_i)] << ", expected "
         << w[size_t(worst_i)] << " (|diff| " << worst << ")";
}

void expect_written_only_inside(const Tensor& view,
                                const Tensor& expected,
                                const Tensor& base,
                                const Tensor& before,
                                double rtol,
                                const std::string& what) {
  EXPECT_TRUE(close(view, expected, rtol)) << what;
  std::vector<int64_t> inside = element_offsets(view);
  std::vector<bool> covered(size_t(base.storage()->nbytes() / base.element_size()), false);
  for (int64_t o : inside) covered[size_t(o)] = true;
  Tensor flat_now = base.reshape({-1}), flat_before = before.reshape({-1});
  std::vector<double> now = flat_now.to_vector<double>(), was = flat_before.to_vector<double>();
  int64_t clobbered = 0;
  for (size_t i = 0; i < now.size(); ++i) {
    if (covered[size_t(base.storage_offset()) + i]) continue;
    const bool same = (std::isnan(now[i]) && std::isnan(was[i])) || now[i] == was[i];
    if (!same) ++clobbered;
  }
  EXPECT_EQ(clobbered, 0) << what << ": elements outside the output view were written";
}

}  // namespace stride::testing
