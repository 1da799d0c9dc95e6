// gradcheck: analytic gradients against central finite differences in
// float64. Inputs may have any layout; an input whose elements share memory
// (an expanded view) is checked per memory location, against the sum of the
// analytic gradients of the elements stored there.
#include <cmath>
#include <map>

#include "core/check.h"
#include "stride/autograd.h"
#include "stride/generator.h"
#include "stride/ops.h"

namespace stride::autograd {

namespace {

// Storage offsets (in elements) of every element of `t`, in row-major order.
std::vector<int64_t> element_offsets(const Tensor& t) {
  std::vector<int64_t> out;
  out.reserve(size_t(t.numel()));
  if (t.numel() == 0) return out;
  DimVector idx(size_t(t.dim()), 0);
  for (int64_t e = 0; e < t.numel(); ++e) {
    int64_t off = t.storage_offset();
    for (int64_t d = 0; d < t.dim(); ++d) off += idx[size_t(d)] * t.strides()[size_t(d)];
    out.push_back(off);
    for (int64_t d = t.dim() - 1; d >= 0; --d) {
      if (++idx[size_t(d)] < t.sizes()[size_t(d)]) break;
      idx[size_t(d)] = 0;
    }
  }
  return out;
}

}  // namespace

bool gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
               const std::vector<Tensor>& inputs,
               double eps,
               double atol,
               double rtol) {
  std::vector<Tensor> wrt;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    if (!t.defined() || !t.requires_grad()) continue;
    STRIDE_CHECK(t.dtype() == kFloat64, DTypeError, "[gradcheck] input ", i,
                 " must be float64 for finite differences to be meaningful; got ",
                 to_string(t.dtype()), ".");
    STRIDE_CHECK(t.is_leaf(), ValueError, "[gradcheck] input ", i, " must be a leaf tensor.");
    wrt.push_back(t);
  }
  STRIDE_CHECK(!wrt.empty(), ValueError, "[gradcheck] no input requires grad.");

  // A fixed random weighting turns any output into a scalar whose gradient
  // exercises every output element differently.
  Tensor out = fn(inputs);
  STRIDE_CHECK(out.is_floating_point(), DTypeError,
               "[gradcheck] the function must return a "
               "floating-point tensor; got ",
               to_string(out.dtype()), ".");
  Generator gen(20240601);
  const Tensor weights = randn(out.sizes(), out.dtype(), &gen);
  auto objective = [&](const Tensor& y) { return (y * weights).sum(); };
  std::vector<Tensor> analytic =
      grad({objective(out)}, wrt, {}, std::nullopt, false, /*allow_unused=*/true);

  // The function is evaluated with grad mode as the caller has it, so that
  // functions which themselves call autograd::grad (second derivatives) work.
  // The perturbations write memory directly, outside the graph.
  for (size_t k = 0; k < wrt.size(); ++k) {
    const Tensor& x = wrt[k];
    std::vector<double> a = analytic[k].defined() ? analytic[k].to_vector<double>()
                                                  : std::vector<double>(size_t(x.numel()), 0.0);
    // Group logical elements by the memory location they read.
    std::map<int64_t, std::vector<size_t>> by_location;
    const std::vector<int64_t> offsets = element_offsets(x);
    for (size_t e = 0; e < offsets.size(); ++e) by_location[offsets[e]].push_back(e);
    double* base = static_cast<double*>(x.storage()->data());
    for (const auto& [offset, elems] : by_location) {
      const double saved = base[offset];
      base[offset] = saved + eps;
      const double plus = objective(fn(inputs)).item<double>();
      base[offset] = saved - eps;
      const double minus = objective(fn(inputs)).item<double>();
      base[offset] = saved;
      const double numeric = (plus - minus) / (2 * eps);
      double expected = 0;
      for (size_t e : elems) expected += a[e];
      if (!(std::abs(expected - numeric) <= atol + rtol * std::abs(numeric))) {
        throw GradcheckError(detail::str_cat("[gradcheck] gradient mismatch for input ", k,
                                             " (shape ", shape_str(x.sizes()), ") at element ",
                                             elems.front(), ": analytic ", expected, ", numeric ",
                                             numeric, " (atol ", atol, ", rtol ", rtol, ")."));
      }
    }
  }
  return true;
}

}  // namespace stride::autograd
