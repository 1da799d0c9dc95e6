// interpolate and pixel_shuffle / pixel_unshuffle (listed as Composite in
// src/core/op_list.h). Every mode of interpolate is separable: each spatial
// dim is resampled in turn, nearest modes by index_select, the interpolating
// ones and area by a product with an (out, in) matrix of PyTorch's weights,
// so the gradients are index_select's and matmul's.
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "core/check.h"
#include "nn/conv_internal.h"
#include "ops/apply.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"

namespace stride::nn::functional {

namespace {

using ::stride::detail::Op;

const char* mode_name(InterpolateMode mode) {
  switch (mode) {
    case InterpolateMode::Nearest:
      return "nearest";
    case InterpolateMode::NearestExact:
      return "nearest-exact";
    case InterpolateMode::Linear:
      return "linear";
    case InterpolateMode::Bilinear:
      return "bilinear";
    case InterpolateMode::Bicubic:
      return "bicubic";
    case InterpolateMode::Trilinear:
      return "trilinear";
    case InterpolateMode::Area:
      return "area";
  }
  return "?";
}

// The spatial dims a mode takes: 0 for any of 1 to 3.
int64_t mode_dims(InterpolateMode mode) {
  switch (mode) {
    case InterpolateMode::Linear:
      return 1;
    case InterpolateMode::Bilinear:
    case InterpolateMode::Bicubic:
      return 2;
    case InterpolateMode::Trilinear:
      return 3;
    default:
      return 0;
  }
}

bool interpolates(InterpolateMode mode) {
  return mode_dims(mode) != 0;
}

// One spatial dim's sizes and the scale_factor that maps its coordinates,
// if one does.
struct DimResize {
  int64_t in, out;
  std::optional<double> scale;
};

std::vector<DimResize> resizes(const Tensor& x, const InterpolateOptions& o) {
  const int64_t dims = x.dim() - 2;
  STRIDE_CHECK(o.size.empty() != o.scale_factor.empty(), ValueError,
               "[interpolate] give exactly one of size and scale_factor.");
  const auto per_dim = [&](size_t n, const char* name) {
    STRIDE_CHECK(n == 1 || int64_t(n) == dims, ValueError, "[interpolate] ", name,
                 " must be one value or ", dims, " (one per spatial dim); got ", n, ".");
  };
  std::vector<DimResize> out;
  for (int64_t d = 0; d < dims; ++d) {
    const int64_t in = x.size(d + 2);
    if (!o.size.empty()) {
      per_dim(o.size.size(), "size");
      const int64_t s = o.size[o.size.size() == 1 ? 0 : size_t(d)];
      STRIDE_CHECK(s > 0, ValueError, "[interpolate] size must be positive; got ", s, ".");
      out.push_back({in, s, std::nullopt});
      continue;
    }
    per_dim(o.scale_factor.size(), "scale_factor");
    const double scale = o.scale_factor[o.scale_factor.size() == 1 ? 0 : size_t(d)];
    STRIDE_CHECK(scale > 0, ValueError, "[interpolate] scale_factor must be positive; got ", scale,
                 ".");
    const auto size = int64_t(std::floor(double(in) * scale));
    STRIDE_CHECK(size > 0, ValueError, "[interpolate] scale_factor ", scale, " shrinks dim ", d + 2,
                 " of ", in, " elements to none.");
    const bool keep = !o.recompute_scale_factor.value_or(false);
    out.push_back({in, size, keep ? std::optional<double>(scale) : std::nullopt});
  }
  return out;
}

// Output to input coordinates for the interpolating modes (PyTorch's
// area_pixel_compute_scale and area_pixel_compute_source_index).
double source_scale(const DimResize& r, bool align_corners) {
  if (align_corners) return r.out > 1 ? double(r.in - 1) / double(r.out - 1) : 0.0;
  return r.scale ? 1.0 / *r.scale : double(r.in) / double(r.out);
}
double source_index(double scale, int64_t dst, bool align_corners, bool cubic) {
  if (align_corners) return scale * double(dst);
  const double src = scale * (double(dst) + 0.5) - 0.5;
  return (!cubic && src < 0) ? 0.0 : src;
}

// The input element each output element of a nearest mode copies; the
// product is in float, as PyTorch's CPU kernel computes it.
Tensor nearest_indices(const DimResize& r, bool exact) {
  const float scale = r.scale ? float(1.0 / *r.scale) : float(r.in) / float(r.out);
  std::vector<int64_t> at;
  for (int64_t i = 0; i < r.out; ++i) {
    const float position = exact ? (float(i) + 0.5f) * scale : float(i) * scale;
    at.push_back(std::min(int64_t(std::floor(position)), r.in - 1));
  }
  return tensor(at, {r.out});
}

// PyTorch's cubic convolution weights with A = -0.75 for the four taps
// around a source position t in [0, 1) past its floor.
std::array<double, 4> cubic_weights(double t) {
  constexpr double A = -0.75;
  const auto near = [](double x) { return ((A + 2) * x - (A + 3)) * x * x + 1; };
  const auto far = [](double x) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; };
  return {far(t + 1), near(t), near(1 - t), far(2 - t)};
}

// (out, in) weights of the linear or cubic interpolation of one dim.
Tensor interpolation_matrix(const DimResize& r, bool cubic, bool align_corners) {
  std::vector<double> m(size_t(r.out * r.in), 0.0);
  const double scale = source_scale(r, align_corners);
  const auto add = [&](int64_t row, int64_t col, double w) {
    m[size_t(row * r.in + std::clamp<int64_t>(col, 0, r.in - 1))] += w;
  };
  for (int64_t i = 0; i < r.out; ++i) {
    const double src = source_index(scale, i, align_corners, cubic);
    if (cubic) {
      const double floor = std::floor(src);
      const std::array<double, 4> w = cubic_weights(src - floor);
      for (int64_t k = 0; k < 4; ++k) add(i, int64_t(floor) - 1 + k, w[size_t(k)]);
      continue;
    }
    // At the last element both weights fall on it (add clamps the column).
    const auto left = int64_t(src);
    const double frac = src - double(left);
    add(i, left, 1.0 - frac);
    add(i, left + 1, frac);
  }
  return tensor(m, {r.out, r.in});
}

// x with dim d resampled by the (out, in) matrix m.
Tensor resample(const Tensor& x, int64_t d, const Tensor& m) {
  return matmul(x.transpose(d, -1), m.to(x.device()).to(x.dtype()).t()).transpose(d, -1);
}

void check_mode(const Tensor& x, const InterpolateOptions& o) {
  const int64_t dims = x.dim() - 2;
  STRIDE_CHECK(dims >= 1 && dims <= 3, ShapeError,
               "[interpolate] expected a 3-d to 5-d input (N, C, *spatial); got ",
               shape_str(x.sizes()), ".");
  const int64_t wanted = mode_dims(o.mode);
  STRIDE_CHECK(wanted == 0 || wanted == dims, ShapeError, "[interpolate] mode '", mode_name(o.mode),
               "' takes a ", wanted + 2, "-d input; got ", shape_str(x.sizes()), ".");
  STRIDE_CHECK(!o.align_corners || interpolates(o.mode), ValueError,
               "[interpolate] align_corners can only be set with the interpolating modes "
               "(linear, bilinear, bicubic, trilinear), not '",
               mode_name(o.mode), "'.");
}

}  // namespace

Tensor interpolate(const Tensor& x, const InterpolateOptions& o) {
  ::stride::detail::check_dtype_rule(Op::interpolate, "interpolate", &x);
  check_mode(x, o);
  const std::vector<DimResize> dims = resizes(x, o);
  const bool align_corners = o.align_corners.value_or(false);
  Tensor y = x;
  for (size_t i = 0; i < dims.size(); ++i) {
    const DimResize& r = dims[i];
    const auto d = int64_t(i) + 2;
    if (o.mode == InterpolateMode::Area) {
      // adaptive_avg_pool's windows, of any number of dims.
      y = resample(y, d, detail::averaging_matrix(r.in, r.out));
    } else if (interpolates(o.mode)) {
      y = resample(y, d,
                   interpolation_matrix(r, o.mode == InterpolateMode::Bicubic, align_corners));
    } else {
      const bool exact = o.mode == InterpolateMode::NearestExact;
      y = y.index_select(d, nearest_indices(r, exact).to(x.device()));
    }
  }
  return y;
}

Tensor pixel_shuffle(const Tensor& x, int64_t upscale_factor) {
  ::stride::detail::check_dtype_rule(Op::pixel_shuffle, "pixel_shuffle", &x);
  const int64_t r = upscale_factor;
  STRIDE_CHECK(r > 0, ValueError, "[pixel_shuffle] upscale_factor must be positive; got ", r, ".");
  STRIDE_CHECK(x.dim() >= 3 && x.size(-3) % (r * r) == 0, ShapeError,
               "[pixel_shuffle] expected (*, C * r^2, H, W) with r = ", r, "; got ",
               shape_str(x.sizes()), ".");
  const int64_t lead = x.dim() - 3;
  const int64_t c = x.size(-3) / (r * r), h = x.size(-2), w = x.size(-1);
  DimVector split(x.sizes().begin(), x.sizes().begin() + lead);
  DimVector merged = split;
  for (const int64_t s : {c, r, r, h, w}) split.push_back(s);
  for (const int64_t s : {c, h * r, w * r}) merged.push_back(s);
  std::vector<int64_t> order;
  for (int64_t i = 0; i < lead; ++i) order.push_back(i);
  for (const int64_t i : {0, 3, 1, 4, 2}) order.push_back(lead + i);
  return x.reshape(split).permute(order).reshape(merged);
}

Tensor pixel_unshuffle(const Tensor& x, int64_t downscale_factor) {
  ::stride::detail::check_dtype_rule(Op::pixel_unshuffle, "pixel_unshuffle", &x);
  const int64_t r = downscale_factor;
  STRIDE_CHECK(r > 0, ValueError, "[pixel_unshuffle] downscale_factor must be positive; got ", r,
               ".");
  STRIDE_CHECK(x.dim() >= 3 && x.size(-2) % r == 0 && x.size(-1) % r == 0, ShapeError,
               "[pixel_unshuffle] expected (*, C, H, W) with H and W divisible by ", r, "; got ",
               shape_str(x.sizes()), ".");
  const int64_t lead = x.dim() - 3;
  const int64_t c = x.size(-3), h = x.size(-2) / r, w = x.size(-1) / r;
  DimVector split(x.sizes().begin(), x.sizes().begin() + lead);
  DimVector merged = split;
  for (const int64_t s : {c, h, r, w, r}) split.push_back(s);
  for (const int64_t s : {c * r * r, h, w}) merged.push_back(s);
  std::vector<int64_t> order;
  for (int64_t i = 0; i < lead; ++i) order.push_back(i);
  for (const int64_t i : {0, 2, 4, 1, 3}) order.push_back(lead + i);
  return x.reshape(split).permute(order).reshape(merged);
}

}  // namespace stride::nn::functional
