// torch.nn.functional entries that PyTorch composes from other ops
// (CompositeImplicitAutograd), composed the same way here so that their
// gradients to any order follow: the channel-wise and alpha dropouts,
// rrelu, bilinear, channel_shuffle, pdist and local_response_norm. The
// deterministic ones are listed as Composite in src/core/op_list.h; the
// random ones, like dropout, are not (their draws have no golden).
#include <cmath>
#include <vector>

#include "core/check.h"
#include "ops/apply.h"
#include "stride/autograd.h"
#include "stride/linalg.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"

namespace stride::nn::functional {

namespace {

using ::stride::detail::check_dtype_rule;
using ::stride::detail::Op;

// SELU's alpha * scale: alpha dropout sets dropped elements to its negative
// saturation, -kSeluAlphaScale, then corrects mean and variance affinely.
constexpr double kSeluAlphaScale = 1.7580993408473766;

void check_probability(double p, const char* op) {
  STRIDE_CHECK(p >= 0 && p <= 1, ValueError, "[", op, "] p must be in [0, 1]; got ", p, ".");
}

// 1 with probability 1 - p, else 0, of `shape` and x's dtype.
Tensor keep_mask(const Tensor& x, IntArrayRef shape, double p, Generator* gen) {
  NoGradGuard no_grad;
  Tensor keep = empty(shape, TensorOptions(kFloat32).device(x.device()));
  keep.bernoulli_(1 - p, gen);
  return keep.to(x.dtype());
}

// One mask entry per (sample, channel) of (N, C, *) — or per channel of an
// unbatched (C, *): the spatial dims broadcast.
DimVector feature_shape(const Tensor& x, bool batched) {
  const int64_t lead = batched ? 2 : 1;
  DimVector shape(size_t(x.dim()), 1);
  for (int64_t d = 0; d < lead; ++d) shape[size_t(d)] = x.size(d);
  return shape;
}

// PyTorch's _dropout_impl: plain dropout scales kept elements by
// 1 / (1 - p); alpha dropout sets dropped ones to SELU's negative
// saturation and corrects mean and variance affinely.
Tensor dropout_with(
    const Tensor& x, double p, bool training, IntArrayRef noise_shape, bool alpha, Generator* gen) {
  if (p == 0 || !training || x.numel() == 0) return x;
  if (p == 1) return x * zeros_like(x);
  const Tensor keep = keep_mask(x, noise_shape, p, gen);
  if (!alpha) return x * (keep / (1 - p));
  const double a = 1.0 / std::sqrt((kSeluAlphaScale * kSeluAlphaScale * p + 1) * (1 - p));
  const Tensor b = (keep - 1.0) * (kSeluAlphaScale * a) + kSeluAlphaScale * a * p;
  return x * (keep * a) + b;
}

// dropout1d/2d/3d: (N, C, *spatial) or unbatched (C, *spatial) with
// `spatial` spatial dims.
Tensor feature_dropout(
    const Tensor& x, double p, bool training, int64_t spatial, Generator* gen, const char* op) {
  check_probability(p, op);
  STRIDE_CHECK(x.dim() == spatial + 1 || x.dim() == spatial + 2, ValueError, "[", op,
               "] input must have ", spatial + 1, " (unbatched) or ", spatial + 2,
               " (batched) dims; got shape ", shape_str(x.sizes()), ".");
  return dropout_with(x, p, training, feature_shape(x, x.dim() == spatial + 2), false, gen);
}

// The indices (i, j), i < j, of the pairs of `rows` rows in row-major order.
std::pair<Tensor, Tensor> row_pairs(int64_t rows, Device device) {
  std::vector<int64_t> first, second;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = i + 1; j < rows; ++j) {
      first.push_back(i);
      second.push_back(j);
    }
  }
  const auto as_tensor = [&](const std::vector<int64_t>& v) {
    return tensor<int64_t>(v, {int64_t(v.size())}).to(device);
  };
  return {as_tensor(first), as_tensor(second)};
}

// x with `before` and `after` zero channels around dim 1.
Tensor pad_channels(const Tensor& x, int64_t before, int64_t after) {
  std::vector<Tensor> parts;
  const auto zero_channels = [&](int64_t count) {
    DimVector shape = x.sizes().dims();
    shape[1] = count;
    return zeros(shape, x.options());
  };
  if (before) parts.push_back(zero_channels(before));
  parts.push_back(x);
  if (after) parts.push_back(zero_channels(after));
  return parts.size() > 1 ? cat(parts, 1) : x;
}

}  // namespace

Tensor dropout1d(const Tensor& x, double p, bool training, Generator* gen) {
  return feature_dropout(x, p, training, 1, gen, "dropout1d");
}

Tensor dropout2d(const Tensor& x, double p, bool training, Generator* gen) {
  return feature_dropout(x, p, training, 2, gen, "dropout2d");
}

Tensor dropout3d(const Tensor& x, double p, bool training, Generator* gen) {
  return feature_dropout(x, p, training, 3, gen, "dropout3d");
}

Tensor alpha_dropout(const Tensor& x, double p, bool training, Generator* gen) {
  check_probability(p, "alpha_dropout");
  return dropout_with(x, p, training, x.sizes(), true, gen);
}

Tensor feature_alpha_dropout(const Tensor& x, double p, bool training, Generator* gen) {
  check_probability(p, "feature_alpha_dropout");
  if (!training || p == 0) return x;  // PyTorch returns before it looks at the shape
  STRIDE_CHECK(x.dim() >= 2, ShapeError,
               "[feature_alpha_dropout] input must be (N, C, *) with at least 2 dims; got shape ",
               shape_str(x.sizes()), ".");
  return dropout_with(x, p, training, feature_shape(x, true), true, gen);
}

Tensor rrelu(const Tensor& x, double lower, double upper, bool training, Generator* gen) {
  if (!training) return leaky_relu(x, (lower + upper) / 2);
  Tensor slopes;
  {
    NoGradGuard no_grad;
    slopes = empty(x.sizes(), x.options()).uniform_(lower, upper, gen);
  }
  return where(x.ge(0), x, x * slopes);
}

Tensor bilinear(const Tensor& x1, const Tensor& x2, const Tensor& weight, const Tensor& bias) {
  check_dtype_rule(Op::bilinear, x1);
  STRIDE_CHECK(weight.dim() == 3 && x1.dim() >= 1 && x1.size(-1) == weight.size(1), ShapeError,
               "[bilinear] weight must be (out, in1, in2) with in1 input1's last dim; got weight ",
               shape_str(weight.sizes()), " for input1 ", shape_str(x1.sizes()), ".");
  STRIDE_CHECK(x2.dim() >= 1 && x2.size(-1) == weight.size(2), ShapeError,
               "[bilinear] input2's last dim must be weight's in2 (", weight.size(2), "); got ",
               shape_str(x2.sizes()), ".");
  const int64_t out = weight.size(0), in1 = weight.size(1), in2 = weight.size(2);
  const ScalarType dtype = x1.dtype();
  // One rounding at the end for 16-bit floats, as PyTorch's
  // float-accumulating kernel.
  const bool widen = dtype == kBFloat16 || dtype == kFloat16;
  const Tensor a = widen ? x1.to(kFloat32) : x1, b = widen ? x2.to(kFloat32) : x2;
  const Tensor w = widen ? weight.to(kFloat32) : weight;
  // x1 @ W viewed (in1, out * in2) gives x1^T W_o for every o at once.
  const Tensor left = a.matmul(w.permute({1, 0, 2}).reshape({in1, out * in2}));
  DimVector shape = left.sizes().dims();
  shape.back() = out;
  shape.push_back(in2);
  const Tensor y = (left.reshape(shape) * b.unsqueeze(-2)).sum({-1}).to(dtype);
  return bias.defined() ? y + bias : y;
}

Tensor channel_shuffle(const Tensor& x, int64_t groups) {
  check_dtype_rule(Op::channel_shuffle, x);
  STRIDE_CHECK(x.dim() >= 3, ShapeError,
               "[channel_shuffle] input must be (N, C, *) with at least 3 dims; got shape ",
               shape_str(x.sizes()), ".");
  const int64_t channels = x.size(1);
  STRIDE_CHECK(groups > 0 && channels % groups == 0, ValueError,
               "[channel_shuffle] groups must be positive and divide the ", channels,
               " channels; got ", groups, ".");
  DimVector grouped = x.sizes().dims();
  grouped[1] = channels / groups;
  grouped.insert(grouped.begin() + 1, groups);
  return x.reshape(grouped).transpose(1, 2).reshape(x.sizes());
}

Tensor pdist(const Tensor& x, double p) {
  check_dtype_rule(Op::pdist, x);
  STRIDE_CHECK(x.dim() == 2, ShapeError, "[pdist] input must be (N, M); got shape ",
               shape_str(x.sizes()), ".");
  STRIDE_CHECK(p >= 0, ValueError, "[pdist] p must be non-negative; got ", p, ".");
  const int64_t rows = x.size(0);
  // An empty view of x when there is no pair, so that it still has a gradient.
  if (rows < 2) return x.reshape({-1}).narrow(0, 0, 0);
  const auto [first, second] = row_pairs(rows, x.device());
  return linalg::vector_norm(x.index_select(0, first) - x.index_select(0, second), p, {1});
}

Tensor local_response_norm(const Tensor& x, int64_t size, double alpha, double beta, double k) {
  check_dtype_rule(Op::local_response_norm, x);
  STRIDE_CHECK(x.dim() >= 3, ValueError,
               "[local_response_norm] input must be (N, C, *) with at least 3 dims; got shape ",
               shape_str(x.sizes()), ".");
  STRIDE_CHECK(size > 0, ValueError, "[local_response_norm] size must be positive; got ", size,
               ".");
  if (x.numel() == 0) return x;
  const int64_t channels = x.size(1);
  const Tensor padded = pad_channels(x * x, size / 2, (size - 1) / 2);
  Tensor window = padded.narrow(1, 0, channels);
  for (int64_t offset = 1; offset < size; ++offset) {
    window = window + padded.narrow(1, offset, channels);
  }
  // PyTorch averages with avg_pool, whose integer form truncates (the
  // window sums squares: floor is truncation here).
  const Tensor mean = x.is_floating_point()
                          ? window / double(size)
                          : div(window, scalar_tensor(size, window.options()), "floor");
  return x / (mean * alpha + k).pow(beta);
}

}  // namespace stride::nn::functional
