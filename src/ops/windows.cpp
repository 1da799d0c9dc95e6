// torch.signal.windows: each window a composite of linspace and the
// elementwise ops, in PyTorch's formulas and order of operations (so float32
// windows round as PyTorch's do). No kernel or node of their own.
#include <cmath>
#include <numbers>
#include <vector>

#include "core/check.h"
#include "stride/ops.h"

namespace stride::signal::windows {

namespace {

void check_window(const char* op, int64_t M, TensorOptions options) {
  STRIDE_CHECK(M >= 0, ValueError, "[signal.windows.", op,
               "] takes a non-negative window length M; got M=", M, ".");
  STRIDE_CHECK(options.dtype() == kFloat32 || options.dtype() == kFloat64, DTypeError,
               "[signal.windows.", op,
               "] makes float32 or float64 windows; got dtype=", to_string(options.dtype()),
               ". Pass dtype=float32 or float64.");
}

// The denominator of a window's spacing: M - 1 for a symmetric window, M for
// a periodic one (the symmetric window of M + 1 points without its last).
double span(int64_t M, bool sym) {
  return double(sym ? M - 1 : M);
}

// The centre offset of the exponential, gaussian and cosine windows:
// PyTorch's periodic window of one point is the symmetric one.
double periodic_length(int64_t M, bool sym) {
  return double(!sym && M > 1 ? M : M - 1);
}

// The degenerate lengths every window shares: 0 gives an empty window and,
// for the windows that divide by M - 1, 1 gives a single 1.
std::optional<Tensor> trivial_window(int64_t M, bool one_is_trivial, TensorOptions options) {
  if (M == 0) return empty({0}, options);
  if (M == 1 && one_is_trivial) return ones({1}, options);
  return std::nullopt;
}

}  // namespace

Tensor general_cosine(int64_t M, const std::vector<double>& a, bool sym, TensorOptions options) {
  check_window("general_cosine", M, options);
  if (auto w = trivial_window(M, true, options)) return *w;
  STRIDE_CHECK(!a.empty(), ValueError,
               "[signal.windows.general_cosine] takes at least one coefficient a; got none.");
  const double step = 2 * std::numbers::pi / span(M, sym);
  const Tensor k = linspace(0, double(M - 1) * step, M, options);
  std::vector<double> signed_a(a.size());
  for (size_t i = 0; i < a.size(); ++i) signed_a[i] = i % 2 == 0 ? a[i] : -a[i];
  const Tensor coefficients = tensor(signed_a).to(options.dtype()).to(options.device());
  const Tensor i = arange(int64_t(a.size()), options.dtype()).to(options.device());
  return (coefficients.unsqueeze(-1) * (i.unsqueeze(-1) * k).cos()).sum({0});
}

Tensor general_hamming(int64_t M, double alpha, bool sym, TensorOptions options) {
  check_window("general_hamming", M, options);  // named in errors as itself
  return general_cosine(M, {alpha, 1.0 - alpha}, sym, options);
}

Tensor hamming(int64_t M, bool sym, TensorOptions options) {
  check_window("hamming", M, options);  // named in errors as itself
  return general_hamming(M, 0.54, sym, options);
}

Tensor hann(int64_t M, bool sym, TensorOptions options) {
  check_window("hann", M, options);  // named in errors as itself
  return general_hamming(M, 0.5, sym, options);
}

Tensor blackman(int64_t M, bool sym, TensorOptions options) {
  check_window("blackman", M, options);
  return general_cosine(M, {0.42, 0.5, 0.08}, sym, options);
}

Tensor nuttall(int64_t M, bool sym, TensorOptions options) {
  check_window("nuttall", M, options);  // named in errors as itself
  return general_cosine(M, {0.3635819, 0.4891775, 0.1365995, 0.0106411}, sym, options);
}

Tensor bartlett(int64_t M, bool sym, TensorOptions options) {
  check_window("bartlett", M, options);
  if (auto w = trivial_window(M, true, options)) return *w;
  const double step = 2 / span(M, sym);
  return 1 - linspace(-1, -1 + double(M - 1) * step, M, options).abs();
}

Tensor cosine(int64_t M, bool sym, TensorOptions options) {
  check_window("cosine", M, options);
  if (auto w = trivial_window(M, false, options)) return *w;
  const double step = std::numbers::pi / (!sym && M > 1 ? double(M + 1) : double(M));
  return linspace(0.5 * step, (0.5 + double(M - 1)) * step, M, options).sin();
}

Tensor exponential(
    int64_t M, std::optional<double> center, double tau, bool sym, TensorOptions options) {
  check_window("exponential", M, options);
  STRIDE_CHECK(tau > 0, ValueError,
               "[signal.windows.exponential] takes a positive tau; got tau=", tau, ".");
  STRIDE_CHECK(!sym || !center, ValueError,
               "[signal.windows.exponential] takes a center for periodic windows only; pass "
               "sym=False or leave center out.");
  if (auto w = trivial_window(M, false, options)) return *w;
  const double c = center.value_or(periodic_length(M, sym) / 2.0);
  const double scale = 1 / tau;
  return (-linspace(-c * scale, (-c + double(M - 1)) * scale, M, options).abs()).exp();
}

Tensor gaussian(int64_t M, double std, bool sym, TensorOptions options) {
  check_window("gaussian", M, options);
  STRIDE_CHECK(std > 0, ValueError, "[signal.windows.gaussian] takes a positive std; got std=", std,
               ".");
  if (auto w = trivial_window(M, false, options)) return *w;
  const double start = -periodic_length(M, sym) / 2.0;
  const double scale = 1 / (std * std::sqrt(2.0));
  const Tensor k = linspace(start * scale, (start + double(M - 1)) * scale, M, options);
  return (-k.pow(Scalar(2))).exp();
}

Tensor kaiser(int64_t M, double beta, bool sym, TensorOptions options) {
  check_window("kaiser", M, options);
  STRIDE_CHECK(beta >= 0, ValueError,
               "[signal.windows.kaiser] takes a non-negative beta; got beta=", beta, ".");
  if (auto w = trivial_window(M, true, options)) return *w;
  // The end point in the window's dtype, as PyTorch computes it (a 0-d
  // tensor of beta), so a float32 window ends where PyTorch's does.
  const Tensor b = scalar_tensor(beta, options.dtype());
  const Tensor end = minimum(b, -b + (b * 2.0 / span(M, sym)) * double(M - 1));
  const Tensor k = linspace(-beta, end.to(kFloat64).item<double>(), M, options);
  const Tensor beta_here = b.to(options.device());
  return i0((beta_here * beta_here - k.pow(Scalar(2))).sqrt()) / i0(beta_here);
}

}  // namespace stride::signal::windows
