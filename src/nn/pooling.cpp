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
#include <utility>
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

using detail::Triple;
using ::stride::detail::Op;

// Per spatial dim (depth, height, width) of the 3-d view.
struct PoolGeometry {
  Triple kernel, stride, padding, dilation;
  Triple in, out;
  Triple extra;  // padding past the right one that ceil_mode's last window reads
};

int64_t pooled_size(int64_t in, int64_t span, int64_t pad, int64_t stride, bool ceil_mode) {
  const int64_t room = in + 2 * pad - span;
  int64_t out = (ceil_mode ? (room + stride - 1) / stride : room / stride) + 1;
  // A last window starting in the right padding reads no input: PyTorch drops it.
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

// x a batched 3-d view (N, C, D, H, W).
PoolGeometry pool_geometry(
    const Tensor& x, IntArrayRef kernel_size, const PoolOptions& o, int64_t dims, const char* op) {
  PoolGeometry g{};
  g.kernel = detail::spatial_arg(kernel_size, dims, 1, 1, op, "kernel_size");
  g.stride = o.stride.empty() ? g.kernel : detail::spatial_arg(o.stride, dims, 1, 1, op, "stride");
  g.padding = detail::spatial_arg(o.padding, dims, 0, 0, op, "padding");
  g.dilation = detail::spatial_arg(o.dilation, dims, 1, 1, op, "dilation");
  for (size_t d = 0; d < 3; ++d) {
    const int64_t span = g.dilation[d] * (g.kernel[d] - 1) + 1;
    STRIDE_CHECK(g.padding[d] <= span / 2, ValueError, "[", op, "] padding ", g.padding[d],
                 " must be at most half the kernel's span ", span, ".");
    g.in[d] = x.size(int64_t(d) + 2);
    STRIDE_CHECK(g.in[d] + 2 * g.padding[d] >= span, ShapeError, "[", op, "] the input ",
                 shape_str(x.sizes()), " padded by ", g.padding[d],
                 " is smaller than the kernel's span ", span, " along spatial dim ",
                 int64_t(d) - (3 - dims), ". Hint: use a smaller kernel_size or more padding.");
    g.out[d] = pooled_size(g.in[d], span, g.padding[d], g.stride[d], o.ceil_mode);
    g.extra[d] =
        std::max<int64_t>(0, (g.out[d] - 1) * g.stride[d] + span - g.in[d] - 2 * g.padding[d]);
  }
  return g;
}

// x padded on both sides of each spatial dim, the right by ceil_mode's extra
// too.
Tensor padded(const Tensor& x, const PoolGeometry& g, const Scalar& value) {
  return pad(x,
             {g.padding[2], g.padding[2] + g.extra[2], g.padding[1], g.padding[1] + g.extra[1],
              g.padding[0], g.padding[0] + g.extra[0]},
             PadMode::Constant, value);
}

int64_t product(const Triple& v) {
  return v[0] * v[1] * v[2];
}

// The blocks of the padded x as (N, C, kernel elements, blocks).
Tensor pooling_blocks(const Tensor& xp, const PoolGeometry& g, int64_t dims, const char* op) {
  const Tensor cols = detail::volume_blocks(xp, g.kernel, g.dilation, g.stride, dims, op);
  return cols.view({xp.size(0), xp.size(1), product(g.kernel), product(g.out)});
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

// The positions along dim d that kernel offset k of each block reads.
std::vector<int64_t> read_positions(const PoolGeometry& g, size_t d, int64_t k) {
  std::vector<int64_t> at;
  at.reserve(size_t(g.out[d]));
  for (int64_t o = 0; o < g.out[d]; ++o) {
    at.push_back(o * g.stride[d] - g.padding[d] + k * g.dilation[d]);
  }
  return at;
}

// For each kernel element k and block b, the position in the (unpadded)
// input volume it reads, (d * H + h) * W + w: what return_indices gives for
// a maximum.
Tensor input_positions(const PoolGeometry& g, const Tensor& like) {
  std::vector<int64_t> at;
  at.reserve(size_t(product(g.kernel) * product(g.out)));
  for (int64_t a = 0; a < g.kernel[0]; ++a) {
    const std::vector<int64_t> depths = read_positions(g, 0, a);
    for (int64_t i = 0; i < g.kernel[1]; ++i) {
      const std::vector<int64_t> rows = read_positions(g, 1, i);
      for (int64_t j = 0; j < g.kernel[2]; ++j) {
        const std::vector<int64_t> cols = read_positions(g, 2, j);
        for (const int64_t d : depths) {
          for (const int64_t h : rows) {
            for (const int64_t w : cols) at.push_back((d * g.in[1] + h) * g.in[2] + w);
          }
        }
      }
    }
  }
  return tensor(at, {product(g.kernel), product(g.out)}).to(like.device());
}

// The batched 3-d result as the input was.
Tensor as_input(const Tensor& y, int64_t dims, bool batched) {
  return detail::unbatched_output(y, dims, batched);
}

DimVector pooled_shape(const Tensor& x, const Triple& out) {
  return {x.size(0), x.size(1), out[0], out[1], out[2]};
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
  const Tensor blocks = pooling_blocks(padded(x, g, lowest(x.dtype())), g, dims, op);
  auto [values, window] = blocks.max(2);
  const DimVector shape = pooled_shape(x, g.out);
  Tensor indices;
  if (with_indices) {
    const Tensor positions = input_positions(g, x).expand(blocks.sizes());
    indices = as_input(positions.gather(2, window.unsqueeze(2)).view(shape), dims, batched);
  }
  return {as_input(values.view(shape), dims, batched), indices};
}

// The divisor of each average: the window's size clipped to the input plus
// its padding (left and right, not ceil_mode's extra), or to the input alone
// without count_include_pad, as PyTorch's. (out_d, out_h, out_w) of like's
// dtype.
Tensor window_counts(const PoolGeometry& g, bool count_include_pad, const Tensor& like) {
  const auto extent = [&](size_t d, int64_t r) {
    const int64_t start = r * g.stride[d] - g.padding[d];
    const int64_t end = std::min(start + g.kernel[d], g.in[d] + g.padding[d]);
    if (count_include_pad) return end - start;
    return std::min(end, g.in[d]) - std::max<int64_t>(start, 0);
  };
  std::vector<double> counts;
  counts.reserve(size_t(product(g.out)));
  for (int64_t o = 0; o < g.out[0]; ++o) {
    for (int64_t r = 0; r < g.out[1]; ++r) {
      for (int64_t c = 0; c < g.out[2]; ++c) {
        counts.push_back(double(extent(0, o) * extent(1, r) * extent(2, c)));
      }
    }
  }
  return tensor(counts, {g.out[0], g.out[1], g.out[2]}).to(like.device()).to(like.dtype());
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
  const Tensor sums = pooling_blocks(padded(x, g, int64_t(0)), g, dims, op).sum({2});
  const Tensor y = sums.view(pooled_shape(x, g.out)).to(x.dtype());
  const Tensor divisor = o.divisor_override ? full({1}, *o.divisor_override, x.options())
                                            : window_counts(g, o.count_include_pad, x);
  // Integers divide as PyTorch's integer pools do: truncating.
  const Tensor averages = is_floating_point(x.dtype()) ? y / divisor : div(y, divisor, "trunc");
  return as_input(averages, dims, batched);
}

// The output size of each spatial dim (as (D, H, W) of the 3-d view).
Triple adaptive_sizes(const Tensor& x, const AdaptiveSize& size, int64_t dims, const char* op) {
  const auto n = int64_t(size.size());
  STRIDE_CHECK(n == 1 || n == dims, ValueError, "[", op, "] output_size must be one int or ", dims,
               " ints; got ", n, ".");
  Triple out{1, 1, 1};
  for (int64_t d = 3 - dims; d < 3; ++d) {
    const std::optional<int64_t>& s = size[size_t(n == 1 ? 0 : d - (3 - dims))];
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
  for (int64_t d = 2; d < 5; ++d) {
    STRIDE_CHECK(x.size(d) > 0, ShapeError, "[", op, "] expected non-empty spatial dims; got ",
                 shape_str(x.sizes()), ".");
  }
}

// The average over each window, one averaging product per spatial dim; a 1-
// or 2-d input has no depth to average.
Tensor adaptive_avg_pool(
    const Tensor& input, const AdaptiveSize& size, int64_t dims, Op id, const char* op) {
  ::stride::detail::check_dtype_rule(id, op, &input);
  bool batched = true;
  const Tensor x = detail::batched_input(input, dims, op, batched);
  check_adaptive_input(x, op);
  const Triple out = adaptive_sizes(x, size, dims, op);
  const auto averaging = [&](int64_t d) {
    return detail::averaging_matrix(x.size(d + 2), out[size_t(d)]).to(x.device()).to(x.dtype());
  };
  Tensor y = matmul(matmul(averaging(1), x), averaging(2).t());
  if (dims == 3) {
    const int64_t n = x.size(0), c = x.size(1);
    y = matmul(averaging(0), y.reshape({n, c, x.size(2), out[1] * out[2]}))
            .view(pooled_shape(x, out));
  }
  return as_input(y, dims, batched);
}

// The windows of each spatial dim: their input indices (window_indices) as
// an index tensor, and the longest window's length.
struct AdaptiveWindows {
  std::vector<int64_t> at;
  int64_t longest;
  Tensor index;
};

AdaptiveWindows adaptive_windows(const Tensor& x, int64_t d, int64_t out) {
  auto [at, longest] = window_indices(x.size(d + 2), out);
  const Tensor index = tensor(at, {out * longest}).to(x.device());
  return {std::move(at), longest, index};
}

// For each output element and each element of its window, the window
// element's position in the input volume, (d * H + h) * W + w: what
// return_indices gives for a maximum. (oD, oH, oW, window elements).
Tensor adaptive_positions(const std::array<AdaptiveWindows, 3>& w,
                          const Triple& out,
                          const Tensor& x) {
  const int64_t height = x.size(3), width = x.size(4);
  const int64_t window = w[0].longest * w[1].longest * w[2].longest;
  std::vector<int64_t> positions;
  positions.reserve(size_t(product(out) * window));
  for (int64_t o = 0; o < out[0]; ++o) {
    for (int64_t r = 0; r < out[1]; ++r) {
      for (int64_t q = 0; q < out[2]; ++q) {
        for (int64_t a = 0; a < w[0].longest; ++a) {
          const int64_t d = w[0].at[size_t(o * w[0].longest + a)];
          for (int64_t b = 0; b < w[1].longest; ++b) {
            const int64_t h = w[1].at[size_t(r * w[1].longest + b)];
            for (int64_t e = 0; e < w[2].longest; ++e) {
              positions.push_back((d * height + h) * width + w[2].at[size_t(q * w[2].longest + e)]);
            }
          }
        }
      }
    }
  }
  return tensor(positions, {1, 1, out[0], out[1], out[2], window}).to(x.device());
}

std::pair<Tensor, Tensor> adaptive_max_pool(
    const Tensor& input, const AdaptiveSize& size, int64_t dims, Op id, const char* op) {
  ::stride::detail::check_dtype_rule(id, op, &input);
  bool batched = true;
  const Tensor x = detail::batched_input(input, dims, op, batched);
  check_adaptive_input(x, op);
  const Triple out = adaptive_sizes(x, size, dims, op);
  const std::array<AdaptiveWindows, 3> w{adaptive_windows(x, 0, out[0]),
                                         adaptive_windows(x, 1, out[1]),
                                         adaptive_windows(x, 2, out[2])};
  const int64_t n = x.size(0), c = x.size(1);
  const Tensor windows =
      x.index_select(2, w[0].index)
          .index_select(3, w[1].index)
          .index_select(4, w[2].index)
          .view({n, c, out[0], w[0].longest, out[1], w[1].longest, out[2], w[2].longest})
          .permute({0, 1, 2, 4, 6, 3, 5, 7})
          .reshape({n, c, out[0], out[1], out[2], w[0].longest * w[1].longest * w[2].longest});
  auto [values, window] = windows.max(5);
  const Tensor at = adaptive_positions(w, out, x).expand(windows.sizes());
  const Tensor indices = at.gather(5, window.unsqueeze(5)).squeeze(5);
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

Tensor max_pool3d(const Tensor& x, IntArrayRef kernel_size, const PoolOptions& options) {
  return max_pool(x, kernel_size, options, 3, false, Op::max_pool3d, "max_pool3d").first;
}
std::pair<Tensor, Tensor> max_pool3d_with_indices(const Tensor& x,
                                                  IntArrayRef kernel_size,
                                                  const PoolOptions& options) {
  return max_pool(x, kernel_size, options, 3, true, Op::max_pool3d, "max_pool3d");
}
Tensor avg_pool3d(const Tensor& x, IntArrayRef kernel_size, const PoolOptions& options) {
  return avg_pool(x, kernel_size, options, 3, Op::avg_pool3d, "avg_pool3d");
}
Tensor adaptive_avg_pool3d(const Tensor& x, const AdaptiveSize& output_size) {
  return adaptive_avg_pool(x, output_size, 3, Op::adaptive_avg_pool3d, "adaptive_avg_pool3d");
}
std::pair<Tensor, Tensor> adaptive_max_pool3d_with_indices(const Tensor& x,
                                                           const AdaptiveSize& output_size) {
  return adaptive_max_pool(x, output_size, 3, Op::adaptive_max_pool3d, "adaptive_max_pool3d");
}

}  // namespace stride::nn::functional
