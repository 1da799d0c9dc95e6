// unfold and fold (im2col and col2im, each the other's gradient) through the
// apply path with their kernels, and the 1-, 2- and 3-d convolutions composed
// of them and matmul, all on (N, C, D, H, W) views: a convolution is the
// product of its weight (C_out, C_in * kernel) with the input's blocks
// (C_in * kernel, L), per group, so that its forward
// and both its gradients are GEMMs over the existing BLAS (docs/design.md,
// "Convolutions"), and every derivative is again unfold, fold and matmul.
#include <array>
#include <string>

#include "backends/kernels.h"
#include "core/check.h"
#include "nn/conv_internal.h"
#include "ops/apply.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"

namespace stride::nn::functional {

namespace detail {

Triple spatial_arg(
    IntArrayRef values, int64_t dims, int64_t min, int64_t flat, const char* op, const char* name) {
  const auto n = int64_t(values.size());
  STRIDE_CHECK(n == 1 || n == dims, ValueError, "[", op, "] ", name, " must be one int or ", dims,
               " ints, one per spatial dim; got ", n, ".");
  for (const int64_t v : values) {
    STRIDE_CHECK(v >= min, ValueError, "[", op, "] ", name, " must be at least ", min, "; got ", v,
                 ".");
  }
  Triple out{flat, flat, flat};
  for (int64_t d = 0; d < dims; ++d) out[size_t(3 - dims + d)] = values[size_t(n == 1 ? 0 : d)];
  return out;
}

Tensor batched_input(const Tensor& x, int64_t dims, const char* op, bool& batched) {
  STRIDE_CHECK(x.dim() == dims + 1 || x.dim() == dims + 2, ShapeError, "[", op, "] expected a ",
               dims + 1, "-d (C, *spatial) or ", dims + 2, "-d (N, C, *spatial) input; got ",
               shape_str(x.sizes()), ".");
  batched = x.dim() == dims + 2;
  Tensor b = batched ? x : x.unsqueeze(0);
  for (int64_t d = dims; d < 3; ++d) b = b.unsqueeze(2);
  return b;
}

Tensor unbatched_output(const Tensor& y, int64_t dims, bool batched) {
  Tensor out = y;
  for (int64_t d = dims; d < 3; ++d) out = out.squeeze(2);
  return batched ? out : out.squeeze(0);
}

}  // namespace detail

namespace {

using autograd::Grads;
using detail::Triple;
using kernels::Im2colGeometry;
using ::stride::detail::Op;

// The last `dims` values of a per-dim triple, as the op's arguments were
// given: (3, 3) for a 2-d op.
std::string dims_str(const Triple& v, int64_t dims) {
  return shape_str(IntArrayRef(v.data() + 3 - dims, size_t(dims)));
}

// The blocks of a (D, H, W) volume; ShapeError naming the op when there are
// none.
Im2colGeometry block_geometry(const Triple& volume,
                              const Triple& kernel,
                              const Triple& dilation,
                              const Triple& padding,
                              const Triple& stride,
                              int64_t dims,
                              const char* op) {
  Triple out{};
  Triple padded{};
  for (size_t d = 0; d < 3; ++d) padded[d] = volume[d] + 2 * padding[d];
  for (size_t d = 0; d < 3; ++d) {
    const int64_t room = padded[d] - (dilation[d] * (kernel[d] - 1) + 1);
    STRIDE_CHECK(room >= 0, ShapeError, "[", op, "] the kernel ", dims_str(kernel, dims),
                 " with dilation ", dims_str(dilation, dims), " is larger than the padded input ",
                 dims_str(padded, dims), ". Hint: use a smaller kernel or more padding.");
    out[d] = room / stride[d] + 1;
  }
  return {volume, kernel, padding, stride, dilation, out};
}

int64_t kernel_elements(const Im2colGeometry& g) {
  return g.kernel[0] * g.kernel[1] * g.kernel[2];
}

int64_t block_count(const Im2colGeometry& g) {
  return g.out[0] * g.out[1] * g.out[2];
}

// The kernels take no 16-bit floats: those go through float32 and back
// (exact for unfold's copies).
bool is_16bit(const Tensor& t) {
  return t.dtype() == kBFloat16 || t.dtype() == kFloat16;
}

// unfold of a batched (N, C, D, H, W) x.
Tensor unfold_volumes(const Tensor& x, const Im2colGeometry& g);

// fold into a batched (N, C, D, H, W).
Tensor fold_volumes(const Tensor& cols, int64_t channels, const Im2colGeometry& g) {
  const int64_t n = cols.size(0), blocks = block_count(g), kernel = kernel_elements(g);
  STRIDE_CHECK(cols.size(1) == channels * kernel && cols.size(2) == blocks, ShapeError,
               "[fold] expected blocks (N, C * ", kernel, ", ", blocks, ") for an output ",
               shape_str(IntArrayRef(g.size.data(), 3)), "; got ", shape_str(cols.sizes()),
               ". Hint: the number of blocks follows from output_size, kernel_size, dilation, "
               "padding and stride as in unfold.");
  if (is_16bit(cols)) return fold_volumes(cols.to(kFloat32), channels, g).to(cols.dtype());
  return ::stride::detail::apply(
      Op::fold, {&cols},
      [&] {
        Tensor x = empty({n, channels, g.size[0], g.size[1], g.size[2]}, cols.options());
        Tensor volumes = x.view({n * channels, g.size[0], g.size[1], g.size[2]});
        kernels::col2im(cols.device(), cols.contiguous().view({n * channels, kernel, blocks}), g,
                        volumes);
        return x;
      },
      [&](const Tensor&) {
        return [g](const Grads& gs) { return Grads{unfold_volumes(gs[0], g)}; };
      });
}

Tensor unfold_volumes(const Tensor& x, const Im2colGeometry& g) {
  const int64_t n = x.size(0), c = x.size(1), blocks = block_count(g), kernel = kernel_elements(g);
  if (is_16bit(x)) return unfold_volumes(x.to(kFloat32), g).to(x.dtype());
  return ::stride::detail::apply(
      Op::unfold, {&x},
      [&] {
        Tensor cols = empty({n, c * kernel, blocks}, x.options());
        Tensor volumes = cols.view({n * c, kernel, blocks});
        kernels::im2col(x.device(), x.contiguous().view({n * c, g.size[0], g.size[1], g.size[2]}),
                        g, volumes);
        return cols;
      },
      [&](const Tensor&) {
        return [g, c](const Grads& gs) { return Grads{fold_volumes(gs[0], c, g)}; };
      });
}

// The shared checks of the convolutions: ranks, channels, groups, dtypes.
void check_conv(const Tensor& x,
                const Tensor& weight,
                const Tensor& bias,
                int64_t groups,
                int64_t out_channels,
                int64_t in_channels_per_group,
                Op id,
                const char* op) {
  ::stride::detail::check_dtype_rule(id, op, &x);
  STRIDE_CHECK(groups >= 1, ValueError, "[", op, "] groups must be positive; got ", groups, ".");
  STRIDE_CHECK(weight.dtype() == x.dtype() && (!bias.defined() || bias.dtype() == x.dtype()),
               DTypeError, "[", op, "] the input (", to_string(x.dtype()), "), weight (",
               to_string(weight.dtype()),
               ") and bias must have one dtype. Hint: convert them "
               "with .to() so that they match.");
  STRIDE_CHECK(x.size(1) == in_channels_per_group * groups, ShapeError, "[", op, "] the input has ",
               x.size(1), " channels but the weight ", shape_str(weight.sizes()),
               " with groups=", groups, " expects ", in_channels_per_group * groups, ".");
  STRIDE_CHECK(out_channels % groups == 0, ShapeError, "[", op, "] the ", out_channels,
               " output channels must divide into groups=", groups, ".");
  STRIDE_CHECK(!bias.defined() || (bias.dim() == 1 && bias.size(0) == out_channels), ShapeError,
               "[", op, "] expected bias (", out_channels, "); got ", shape_str(bias.sizes()), ".");
}

// y (N, C, D, H, W) + bias (C) broadcast over the spatial dims, or y.
Tensor add_bias(const Tensor& y, const Tensor& bias) {
  if (!bias.defined()) return y;
  return y + bias.view({1, bias.size(0), 1, 1, 1});
}

// The weight (C, C', *kernel) as (C, C', kd, kh, kw).
Tensor volume_weight(const Tensor& weight, int64_t dims) {
  Tensor w = weight;
  for (int64_t d = dims; d < 3; ++d) w = w.unsqueeze(2);
  return w;
}

Triple kernel_of(const Tensor& w) {
  return {w.size(2), w.size(3), w.size(4)};
}

Triple spatial_sizes(const Tensor& x) {
  return {x.size(2), x.size(3), x.size(4)};
}

// x padded so that a stride-1 convolution keeps its size: PyTorch's 'same'
// pads dilation * (kernel - 1) in all, the odd element on the right. Returns
// the symmetric part as the convolution's padding.
Triple same_padding(
    Tensor& x, const Triple& kernel, const Triple& dilation, const Triple& stride, const char* op) {
  const bool unit_stride = stride == Triple{1, 1, 1};
  STRIDE_CHECK(unit_stride, ValueError, "[", op,
               "] padding='same' is not supported for strided convolutions. Hint: pad the input "
               "with pad() and use padding='valid'.");
  Triple left{};
  Triple odd{};
  for (size_t d = 0; d < 3; ++d) {
    const int64_t total = dilation[d] * (kernel[d] - 1);
    left[d] = total / 2;
    odd[d] = total - 2 * left[d];
  }
  if (odd != Triple{0, 0, 0}) x = pad(x, {0, odd[2], 0, odd[1], 0, odd[0]});
  return left;
}

// conv1d, conv2d and conv3d, on a 3-d view.
Tensor convolution(const Tensor& input,
                   const Tensor& weight,
                   const Tensor& bias,
                   const ConvOptions& o,
                   int64_t dims,
                   Op id,
                   const char* op) {
  bool batched = true;
  Tensor x = detail::batched_input(input, dims, op, batched);
  STRIDE_CHECK(weight.dim() == dims + 2, ShapeError, "[", op, "] expected a ", dims + 2,
               "-d weight (C_out, C_in / groups, *kernel); got ", shape_str(weight.sizes()), ".");
  const int64_t out_channels = weight.size(0), groups = o.groups;
  check_conv(x, weight, bias, groups, out_channels, weight.size(1), id, op);
  const Tensor w = volume_weight(weight, dims);
  const Triple kernel = kernel_of(w);
  const Triple stride = detail::spatial_arg(o.stride, dims, 1, 1, op, "stride");
  const Triple dilation = detail::spatial_arg(o.dilation, dims, 1, 1, op, "dilation");
  Triple padding{};
  if (o.padding_mode == ConvPadding::Same) {
    padding = same_padding(x, kernel, dilation, stride, op);
  } else if (!o.padding_mode) {
    padding = detail::spatial_arg(o.padding, dims, 0, 0, op, "padding");
  }
  const Im2colGeometry g =
      block_geometry(spatial_sizes(x), kernel, dilation, padding, stride, dims, op);
  const int64_t n = x.size(0), per_group = w.size(1) * kernel_elements(g);
  const Tensor cols = unfold_volumes(x, g).view({n, groups, per_group, block_count(g)});
  const Tensor y = matmul(w.reshape({groups, out_channels / groups, per_group}), cols);
  const Tensor out = y.reshape({n, out_channels, g.out[0], g.out[1], g.out[2]});
  return detail::unbatched_output(add_bias(out, bias), dims, batched);
}

// The size along each dim of the whole volume a transposed convolution's
// blocks reach, which padding then crops and output_padding extends;
// errors name the op.
Triple transposed_reach(const Tensor& x,
                        const Triple& kernel,
                        const Triple& stride,
                        const Triple& dilation,
                        const Triple& padding,
                        const Triple& extra,
                        const char* op) {
  Triple reach{};
  for (size_t d = 0; d < 3; ++d) {
    STRIDE_CHECK(extra[d] < stride[d] || extra[d] < dilation[d], ValueError, "[", op,
                 "] output_padding ", extra[d], " must be smaller than either the stride ",
                 stride[d], " or the dilation ", dilation[d], ".");
    reach[d] = (x.size(int64_t(d) + 2) - 1) * stride[d] + dilation[d] * (kernel[d] - 1) + 1;
    STRIDE_CHECK(reach[d] - 2 * padding[d] + extra[d] > 0, ShapeError, "[", op,
                 "] the output size ", reach[d] - 2 * padding[d] + extra[d],
                 " is not positive. Hint: use less padding.");
  }
  return reach;
}

// conv_transpose1d, 2d and 3d: the weight's transpose times the input gives
// each input position's contribution to its output block, which fold sums
// into place.
Tensor transposed_convolution(const Tensor& input,
                              const Tensor& weight,
                              const Tensor& bias,
                              const ConvTransposeOptions& o,
                              int64_t dims,
                              Op id,
                              const char* op) {
  bool batched = true;
  const Tensor x = detail::batched_input(input, dims, op, batched);
  STRIDE_CHECK(weight.dim() == dims + 2, ShapeError, "[", op, "] expected a ", dims + 2,
               "-d weight (C_in, C_out / groups, *kernel); got ", shape_str(weight.sizes()), ".");
  const int64_t groups = o.groups;
  STRIDE_CHECK(groups >= 1, ValueError, "[", op, "] groups must be positive; got ", groups, ".");
  const int64_t out_channels = weight.size(1) * groups;
  check_conv(x, weight, bias, groups, out_channels, weight.size(0) / groups, id, op);
  // 16-bit floats sum every product in float32 and round once, as PyTorch's.
  if (is_16bit(x)) {
    const Tensor b = bias.defined() ? bias.to(kFloat32) : bias;
    return transposed_convolution(input.to(kFloat32), weight.to(kFloat32), b, o, dims, id, op)
        .to(x.dtype());
  }
  const Tensor w = volume_weight(weight, dims);
  const Triple kernel = kernel_of(w);
  const Triple stride = detail::spatial_arg(o.stride, dims, 1, 1, op, "stride");
  const Triple dilation = detail::spatial_arg(o.dilation, dims, 1, 1, op, "dilation");
  const Triple padding = detail::spatial_arg(o.padding, dims, 0, 0, op, "padding");
  const Triple extra = detail::spatial_arg(o.output_padding, dims, 0, 0, op, "output_padding");
  const Triple reach = transposed_reach(x, kernel, stride, dilation, padding, extra, op);
  const Im2colGeometry g = block_geometry(reach, kernel, dilation, {0, 0, 0}, stride, dims, op);
  const int64_t n = x.size(0), in_per_group = x.size(1) / groups;
  const int64_t per_group = (out_channels / groups) * kernel_elements(g);
  const int64_t positions = x.size(2) * x.size(3) * x.size(4);
  const Tensor xs = x.reshape({n, groups, in_per_group, positions});
  const Tensor wt = w.reshape({groups, in_per_group, per_group}).transpose(1, 2);
  const Tensor cols = matmul(wt, xs).reshape({n, groups * per_group, positions});
  const Tensor whole = fold_volumes(cols, out_channels, g);
  const Tensor cropped = pad(whole, {-padding[2], extra[2] - padding[2], -padding[1],
                                     extra[1] - padding[1], -padding[0], extra[0] - padding[0]});
  return detail::unbatched_output(add_bias(cropped, bias), dims, batched);
}

}  // namespace

Tensor unfold(const Tensor& input,
              IntArrayRef kernel_size,
              IntArrayRef dilation,
              IntArrayRef padding,
              IntArrayRef stride) {
  ::stride::detail::check_dtype_rule(Op::unfold, "unfold", &input);
  bool batched = true;
  const Tensor x = detail::batched_input(input, 2, "unfold", batched);
  const Im2colGeometry g = block_geometry(
      spatial_sizes(x), detail::spatial_arg(kernel_size, 2, 1, 1, "unfold", "kernel_size"),
      detail::spatial_arg(dilation, 2, 1, 1, "unfold", "dilation"),
      detail::spatial_arg(padding, 2, 0, 0, "unfold", "padding"),
      detail::spatial_arg(stride, 2, 1, 1, "unfold", "stride"), 2, "unfold");
  const Tensor cols = unfold_volumes(x, g);
  return batched ? cols : cols.squeeze(0);
}

Tensor fold(const Tensor& input,
            IntArrayRef output_size,
            IntArrayRef kernel_size,
            IntArrayRef dilation,
            IntArrayRef padding,
            IntArrayRef stride) {
  ::stride::detail::check_dtype_rule(Op::fold, "fold", &input);
  STRIDE_CHECK(input.dim() == 2 || input.dim() == 3, ShapeError,
               "[fold] expected a 2-d (C * kernel, L) or 3-d (N, C * kernel, L) input; got ",
               shape_str(input.sizes()), ".");
  const bool batched = input.dim() == 3;
  const Tensor cols = batched ? input : input.unsqueeze(0);
  const Im2colGeometry g =
      block_geometry(detail::spatial_arg(output_size, 2, 1, 1, "fold", "output_size"),
                     detail::spatial_arg(kernel_size, 2, 1, 1, "fold", "kernel_size"),
                     detail::spatial_arg(dilation, 2, 1, 1, "fold", "dilation"),
                     detail::spatial_arg(padding, 2, 0, 0, "fold", "padding"),
                     detail::spatial_arg(stride, 2, 1, 1, "fold", "stride"), 2, "fold");
  const int64_t k = kernel_elements(g);
  STRIDE_CHECK(cols.size(1) % k == 0, ShapeError, "[fold] the input's dim ", batched ? 1 : 0, " (",
               cols.size(1), ") must be divisible by the kernel's ", k, " elements.");
  return detail::unbatched_output(fold_volumes(cols, cols.size(1) / k, g), 2, batched);
}

Tensor conv1d(const Tensor& x,
              const Tensor& weight,
              const Tensor& bias,
              const ConvOptions& options) {
  return convolution(x, weight, bias, options, 1, Op::conv1d, "conv1d");
}

Tensor conv2d(const Tensor& x,
              const Tensor& weight,
              const Tensor& bias,
              const ConvOptions& options) {
  return convolution(x, weight, bias, options, 2, Op::conv2d, "conv2d");
}

Tensor conv3d(const Tensor& x,
              const Tensor& weight,
              const Tensor& bias,
              const ConvOptions& options) {
  return convolution(x, weight, bias, options, 3, Op::conv3d, "conv3d");
}

Tensor conv_transpose1d(const Tensor& x,
                        const Tensor& weight,
                        const Tensor& bias,
                        const ConvTransposeOptions& options) {
  return transposed_convolution(x, weight, bias, options, 1, Op::conv_transpose1d,
                                "conv_transpose1d");
}

Tensor conv_transpose2d(const Tensor& x,
                        const Tensor& weight,
                        const Tensor& bias,
                        const ConvTransposeOptions& options) {
  return transposed_convolution(x, weight, bias, options, 2, Op::conv_transpose2d,
                                "conv_transpose2d");
}

Tensor conv_transpose3d(const Tensor& x,
                        const Tensor& weight,
                        const Tensor& bias,
                        const ConvTransposeOptions& options) {
  return transposed_convolution(x, weight, bias, options, 3, Op::conv_transpose3d,
                                "conv_transpose3d");
}

namespace detail {

Tensor volume_blocks(const Tensor& x,
                     const Triple& kernel,
                     const Triple& dilation,
                     const Triple& stride,
                     int64_t dims,
                     const char* op) {
  return unfold_volumes(
      x, block_geometry(spatial_sizes(x), kernel, dilation, {0, 0, 0}, stride, dims, op));
}

}  // namespace detail

}  // namespace stride::nn::functional
