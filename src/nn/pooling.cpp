// Max, average and adaptive pooling, composed of pad, unfold (src/nn/conv.cpp)
// and reductions (listed as Composite in src/core/op_list.h), so that their
// gradients are the reductions' and unfold's: a max pool is the maximum over
// each block of the input padded with -inf, an average pool the sum over each
// block of the zero-padded input divided by PyTorch's divisor. Adaptive
// pools are separable: an average pool is a product with a (out, in)
// averaging matrix per dim, a max pool the maximum over the rows and columns
// of each window gathered by index_select.
#include <algorithm>
#include <array>
#include <limits>
#include <vector>

#include "core/check.h"
#include "nn/conv_internal.h"
#include "ops/apply.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"

namespace stride::nn::functional {

namespace detail {

std::pair<int64_t, int64_t> adaptive_window(int64_t i, int64_t n, int64_t out) {
  return {i * n / out, ((i + 1) * n + out - 1) / out};
}

Tensor averaging_matrix(int64_t n, int64_t out) {
  std::vector<double> m(size_t(out * n), 0.0);
  for (int64_t i = 0; i < out; ++i) {
    const auto [start, end] = adaptive_window(i, n, out);
    for (int64_t j = start; j < end; ++j) m[size_t(i * n + j)] = 1.0 / double(end - start);
  }
  return tensor(m, {out, n});
}

}  // namespace detail

namespace {

using ::stride::detail::Op;
using Pair = std::array<int64_t, 2>;

struct PoolGeometry {
  Pair kernel, stride, padding, dilation;
  Pair in, out;
  Pair extra;  // padding past the right one that ceil_mode's last window reads
};

int64_t pooled_size(int64_t in, int64_t span, int64_t pad, int64_t stride, bool ceil_mode) {
  const int64_t room = in + 2 * pad - span;
  int64_t out = (ceil_mode ? (room + stride - 1) / stride : room / stride) + 1;
  // A last window starting in the right padding reads no input: PyTorch drops it.
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

// x a batched 2-d view (N, C, H, W).
PoolGeometry pool_geometry(
    const Tensor& x, IntArrayRef kernel_size, const PoolOptions& o, int64_t dims, const char* op) {
  PoolGeometry g{};
  g.kernel = detail::spatial_arg(kernel_size, dims, 1, 1, op, "kernel_size");
  g.stride = o.stride.empty() ? g.kernel : detail::spatial_arg(o.stride, dims, 1, 1, op, "stride");
  g.padding = detail::spatial_arg(o.padding, dims, 0, 0, op, "padding");
  g.dilation = detail::spatial_arg(o.dilation, dims, 1, 1, op, "dilation");
  for (size_t d = 0; d < 2; ++d) {
    const int64_t span = g.dilation[d] * (g.kernel[d] - 1) + 1;
    STRIDE_CHECK(g.padding[d] <= span / 2, ValueError, "[", op, "] padding ", g.padding[d],
                 " must be at most half the kernel's span ", span, ".");
    g.in[d] = x.size(int64_t(d) + 2);
    STRIDE_CHECK(g.in[d] + 2 * g.padding[d] >= span, ShapeError, "[", op, "] the input ",
                 shape_str(x.sizes()), " padded by ", g.padding[d],
                 " is smaller than the kernel's span ", span, " along spatial dim ", d,
                 ". Hint: use a smaller kernel_size or more padding.");
    g.out[d] = pooled_size(g.in[d], span, g.padding[d], g.stride[d], o.ceil_mode);
    g.extra[d] =
        std::max<int64_t>(0, (g.out[d] - 1) * g.stride[d] + span - g.in[d] - 2 * g.padding[d]);
  }
  return g;
}

// x padded on both sides of each plane dim, the right by ceil_mode's extra too.
Tensor padded(const Tensor& x, const PoolGeometry& g, const Scalar& value) {
  return pad(x, {g.padding[1], g.padding[1] + g.extra[1], g.padding[0], g.padding[0] + g.extra[0]},
             PadMode::Constant, value);
}

// The blocks of the padded x as (N, C, kernel elements, blocks).
Tensor pooling_blocks(const Tensor& xp, const PoolGeometry& g) {
  const Tensor cols = unfold(xp, {g.kernel[0], g.kernel[1]}, {g.dilation[0], g.dilation[1]}, {0},
                             {g.stride[0], g.stride[1]});
  return cols.view({xp.size(0), xp.size(1), g.kernel[0] * g.kernel[1], g.out[0] * g.out[1]});
}

// The padding of a max pool: no element is below it.
Scalar lowest(ScalarType dtype) {
  switch (dtype) {
    case kInt64:
      return std::numeric_limits<int64_t>::lowest();
    case kInt32:
      return int64_t(std::numeric_limits<int32_t>::lowest());
    case kUInt8:
    case kBool:
      return int64_t(0);
    default:
      return -std::numeric_limits<double>::infinity();
  }
}

// For each kernel element k and block b, the position in the (unpadded)
// input plane it reads, h * W + w: what return_indices gives for a maximum.
Tensor input_positions(const PoolGeometry& g, const Tensor& like) {
  std::vector<int64_t> at;
  at.reserve(size_t(g.kernel[0] * g.kernel[1] * g.out[0] * g.out[1]));
  for (int64_t i = 0; i < g.kernel[0]; ++i) {
    for (int64_t j = 0; j < g.kernel[1]; ++j) {
      for (int64_t r = 0; r < g.out[0]; ++r) {
        for (int64_t c = 0; c < g.out[1]; ++c) {
          const int64_t h = r * g.stride[0] - g.padding[0] + i * g.dilation[0];
          const int64_t w = c * g.stride[1] - g.padding[1] + j * g.dilation[1];
          at.push_back(h * g.in[1] + w);
        }
      }
    }
  }
  return tensor(at, {g.kernel[0] * g.kernel[1], g.out[0] * g.out[1]}).to(like.device());
}

// The batched 2-d result as the input was: unbatched, and (N, C, L) for 1-d.
Tensor as_input(const Tensor& y, int64_t dims, bool batched) {
  return detail::unbatched_output(dims == 1 ? y.squeeze(2) : y, batched);
}

std::pair<Tensor, Tensor> max_pool(const Tensor& input,
                                   IntArrayRef kernel_size,
                                   const PoolOptions& o,
                                   int64_t dims,
                                   bool with_indices,
                                   Op id,
                                   const char* op) {
  ::stride::detail::check_dtype_rule(id, op, &input);
  bool batched = true;
  const Tensor x = detail::batched_input(input, dims, op, batched);
  const PoolGeometry g = pool_geometry(x, kernel_size, o, dims, op);
  const Tensor blocks = pooling_blocks(padded(x, g, lowest(x.dtype())), g);
  auto [values, window] = blocks.max(2);
  const DimVector shape{x.size(0), x.size(1), g.out[0], g.out[1]};
  Tensor indices;
  if (with_indices) {
    const Tensor positions = input_positions(g, x).expand(blocks.sizes());
    indices = as_input(positions.gather(2, window.unsqueeze(2)).view(shape), dims, batched);
  }
  return {as_input(values.view(shape), dims, batched), indices};
}

// The divisor of each average: the window's size clipped to the input plus
// its padding (left and right, not ceil_mode's extra), or to the input alone
// without count_include_pad, as PyTorch's. (out_h, out_w) float64.
Tensor window_counts(const PoolGeometry& g, bool count_include_pad, const Tensor& like) {
  const auto extent = [&](size_t d, int64_t r) {
    const int64_t start = r * g.stride[d] - g.padding[d];
    const int64_t end = std::min(start + g.kernel[d], g.in[d] + g.padding[d]);
    if (count_include_pad) return end - start;
    return std::min(end, g.in[d]) - std::max<int64_t>(start, 0);
  };
  std::vector<double> counts;
  counts.reserve(size_t(g.out[0] * g.out[1]));
  for (int64_t r = 0; r < g.out[0]; ++r) {
    for (int64_t c = 0; c < g.out[1]; ++c) counts.push_back(double(extent(0, r) * extent(1, c)));
  }
  return tensor(counts, {g.out[0], g.out[1]}).to(like.device()).to(like.dtype());
}

Tensor avg_pool(const Tensor& input,
                IntArrayRef kernel_size,
                const PoolOptions& o,
                int64_t dims,
                Op id,
                const char* op) {
  ::stride::detail::check_dtype_rule(id, op, &input);
  STRIDE_CHECK(!o.divisor_override || *o.divisor_override != 0, ValueError, "[", op,
               "] divisor_override must not be zero.");
  bool batched = true;
  const Tensor x = detail::batched_input(input, dims, op, batched);
  const PoolGeometry g = pool_geometry(x, kernel_size, o, dims, op);
  const Tensor sums = pooling_blocks(padded(x, g, int64_t(0)), g).sum({2});
  const Tensor y = sums.view({x.size(0), x.size(1), g.out[0], g.out[1]}).to(x.dtype());
  const Tensor divisor = o.divisor_override ? full({1}, *o.divisor_override, x.options())
                                            : window_counts(g, o.count_include_pad, x);
  // Integers divide as PyTorch's integer pools do: truncating.
  const Tensor averages = is_floating_point(x.dtype()) ? y / divisor : div(y, divisor, "trunc");
  return as_input(averages, dims, batched);
}

// The output size of each plane dim (as (H, W) of the 2-d view).
Pair adaptive_sizes(const Tensor& x, const AdaptiveSize& size, int64_t dims, const char* op) {
  const auto n = int64_t(size.size());
  STRIDE_CHECK(n == 1 || n == dims, ValueError, "[", op, "] output_size must be one int or ", dims,
               " ints; got ", n, ".");
  Pair out{1, 1};
  for (int64_t d = 2 - dims; d < 2; ++d) {
    const std::optional<int64_t>& s = size[size_t(n == 1 ? 0 : d - (2 - dims))];
    out[size_t(d)] = s.value_or(x.size(d + 2));
    STRIDE_CHECK(out[size_t(d)] >= 0, ValueError, "[", op,
                 "] output_size must not be negative; got ", out[size_t(d)], ".");
  }
  return out;
}

// The input indices of the windows of n elements pooled to `out`, each
// window padded to the longest by repeating its last index: (out * longest).
std::pair<std::vector<int64_t>, int64_t> window_indices(int64_t n, int64_t out) {
  int64_t longest = 1;
  for (int64_t i = 0; i < out; ++i) {
    const auto [start, end] = detail::adaptive_window(i, n, out);
    longest = std::max(longest, end - start);
  }
  std::vector<int64_t> at;
  at.reserve(size_t(out * longest));
  for (int64_t i = 0; i < out; ++i) {
    const auto [start, end] = detail::adaptive_window(i, n, out);
    for (int64_t k = 0; k < longest; ++k) at.push_back(std::min(start + k, end - 1));
  }
  return {at, longest};
}

void check_adaptive_input(const Tensor& x, const char* op) {
  for (int64_t d = 2; d < 4; ++d) {
    STRIDE_CHECK(x.size(d) > 0, ShapeError, "[", op, "] expected non-empty spatial dims; got ",
                 shape_str(x.sizes()), ".");
  }
}

Tensor adaptive_avg_pool(
    const Tensor& input, const AdaptiveSize& size, int64_t dims, Op id, const char* op) {
  ::stride::detail::check_dtype_rule(id, op, &input);
  bool batched = true;
  const Tensor x = detail::batched_input(input, dims, op, batched);
  check_adaptive_input(x, op);
  const Pair out = adaptive_sizes(x, size, dims, op);
  const Tensor rows = detail::averaging_matrix(x.size(2), out[0]).to(x.device()).to(x.dtype());
  const Tensor cols = detail::averaging_matrix(x.size(3), out[1]).to(x.device()).to(x.dtype());
  return as_input(matmul(matmul(rows, x), cols.t()), dims, batched);
}

std::pair<Tensor, Tensor> adaptive_max_pool(
    const Tensor& input, const AdaptiveSize& size, int64_t dims, Op id, const char* op) {
  ::stride::detail::check_dtype_rule(id, op, &input);
  bool batched = true;
  const Tensor x = detail::batched_input(input, dims, op, batched);
  check_adaptive_input(x, op);
  const Pair out = adaptive_sizes(x, size, dims, op);
  const int64_t n = x.size(0), c = x.size(1), width = x.size(3);
  const auto [rows, row_len] = window_indices(x.size(2), out[0]);
  const auto [cols, col_len] = window_indices(width, out[1]);
  const Tensor row_index = tensor(rows, {out[0] * row_len}).to(x.device());
  const Tensor col_index = tensor(cols, {out[1] * col_len}).to(x.device());
  const Tensor windows = x.index_select(2, row_index)
                             .index_select(3, col_index)
                             .view({n, c, out[0], row_len, out[1], col_len})
                             .permute({0, 1, 2, 4, 3, 5})
                             .reshape({n, c, out[0], out[1], row_len * col_len});
  auto [values, window] = windows.max(4);
  std::vector<int64_t> positions;
  positions.reserve(size_t(out[0] * out[1] * row_len * col_len));
  for (int64_t r = 0; r < out[0]; ++r) {
    for (int64_t q = 0; q < out[1]; ++q) {
      for (int64_t a = 0; a < row_len; ++a) {
        for (int64_t b = 0; b < col_len; ++b) {
          positions.push_back(rows[size_t(r * row_len + a)] * width +
                              cols[size_t(q * col_len + b)]);
        }
      }
    }
  }
  const Tensor at = tensor(positions, {1, 1, out[0], out[1], row_len * col_len})
                        .to(x.device())
                        .expand(windows.sizes());
  const Tensor indices = at.gather(4, window.unsqueeze(4)).squeeze(4);
  return {as_input(values, dims, batched), as_input(indices, dims, batched)};
}

}  // namespace

Tensor max_pool1d(const Tensor& x, IntArrayRef kernel_size, const PoolOptions& options) {
  return max_pool(x, kernel_size, options, 1, false, Op::max_pool1d, "max_pool1d").first;
}
Tensor max_pool2d(const Tensor& x, IntArrayRef kernel_size, const PoolOptions& options) {
  return max_pool(x, kernel_size, options, 2, false, Op::max_pool2d, "max_pool2d").first;
}
std::pair<Tensor, Tensor> max_pool1d_with_indices(const Tensor& x,
                                                  IntArrayRef kernel_size,
                                                  const PoolOptions& options) {
  return max_pool(x, kernel_size, options, 1, true, Op::max_pool1d, "max_pool1d");
}
std::pair<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x,
                                                  IntArrayRef kernel_size,
                                                  const PoolOptions& options) {
  return max_pool(x, kernel_size, options, 2, true, Op::max_pool2d, "max_pool2d");
}
Tensor avg_pool1d(const Tensor& x, IntArrayRef kernel_size, const PoolOptions& options) {
  return avg_pool(x, kernel_size, options, 1, Op::avg_pool1d, "avg_pool1d");
}
Tensor avg_pool2d(const Tensor& x, IntArrayRef kernel_size, const PoolOptions& options) {
  return avg_pool(x, kernel_size, options, 2, Op::avg_pool2d, "avg_pool2d");
}
Tensor adaptive_avg_pool1d(const Tensor& x, const AdaptiveSize& output_size) {
  return adaptive_avg_pool(x, output_size, 1, Op::adaptive_avg_pool1d, "adaptive_avg_pool1d");
}
Tensor adaptive_avg_pool2d(const Tensor& x, const AdaptiveSize& output_size) {
  return adaptive_avg_pool(x, output_size, 2, Op::adaptive_avg_pool2d, "adaptive_avg_pool2d");
}
std::pair<Tensor, Tensor> adaptive_max_pool1d_with_indices(const Tensor& x,
                                                           const AdaptiveSize& output_size) {
  return adaptive_max_pool(x, output_size, 1, Op::adaptive_max_pool1d, "adaptive_max_pool1d");
}
std::pair<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& x,
                                                           const AdaptiveSize& output_size) {
  return adaptive_max_pool(x, output_size, 2, Op::adaptive_max_pool2d, "adaptive_max_pool2d");
}

}  // namespace stride::nn::functional
