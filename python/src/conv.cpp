// stride._stride._nn's convolutions and poolings, with
// torch.nn.functional's names, arguments and defaults: a size is an int or a
// tuple of ints, a stride of None is the kernel size, and return_indices
// gives PyTorch's (values, indices) tuple.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "bindings.h"

namespace stride::python {

namespace {

namespace F = nn::functional;

// An int or a sequence of ints; TypeError naming `what` otherwise.
std::vector<int64_t> sizes(nb::handle h, const char* what) {
  if (const std::optional<int64_t> v = index_value(h, what)) return {*v};
  return int_list(h, what);
}

// A pooling stride: None (or an empty sequence) is the kernel size.
std::vector<int64_t> pool_stride(nb::handle h, const char* what) {
  if (h.is_none()) return {};
  return sizes(h, what);
}

// An adaptive pooling's output_size: an int, None, or a tuple of ints and
// Nones (None keeps the input's size).
F::AdaptiveSize adaptive_size(nb::handle h, const char* what) {
  if (h.is_none()) return {std::nullopt};
  if (const std::optional<int64_t> v = index_value(h, what)) return {*v};
  if (!nb::isinstance<nb::sequence>(h)) {
    throw nb::type_error((std::string(what) + " must be an int, None or a tuple of them; got " +
                          nb::inst_name(h).c_str() + ".")
                             .c_str());
  }
  F::AdaptiveSize out;
  for (nb::handle item : nb::iter(h)) {
    if (item.is_none()) {
      out.emplace_back(std::nullopt);
      continue;
    }
    const std::optional<int64_t> v = index_value(item, what);
    if (!v) {
      throw nb::type_error(
          (std::string(what) + " must hold ints or None; got " + nb::inst_name(item).c_str() + ".")
              .c_str());
    }
    out.emplace_back(*v);
  }
  return out;
}

// conv's padding: an int, a tuple of ints, or 'same' / 'valid'.
F::ConvOptions conv_options(
    nb::handle stride, nb::handle padding, nb::handle dilation, int64_t groups, const char* op) {
  F::ConvOptions o;
  const std::string name(op);
  o.stride = sizes(stride, (name + "(): stride").c_str());
  o.dilation = sizes(dilation, (name + "(): dilation").c_str());
  o.groups = groups;
  if (nb::isinstance<nb::str>(padding)) {
    const std::string mode = nb::cast<std::string>(padding);
    if (mode == "same") {
      o.padding_mode = F::ConvPadding::Same;
    } else if (mode == "valid") {
      o.padding_mode = F::ConvPadding::Valid;
    } else {
      throw nb::value_error(
          (name + "(): padding must be 'same', 'valid' or ints; got '" + mode + "'.").c_str());
    }
  } else {
    o.padding = sizes(padding, (name + "(): padding").c_str());
  }
  return o;
}

F::ConvTransposeOptions conv_transpose_options(nb::handle stride,
                                               nb::handle padding,
                                               nb::handle output_padding,
                                               int64_t groups,
                                               nb::handle dilation,
                                               const char* op) {
  const std::string name(op);
  F::ConvTransposeOptions o;
  o.stride = sizes(stride, (name + "(): stride").c_str());
  o.padding = sizes(padding, (name + "(): padding").c_str());
  o.output_padding = sizes(output_padding, (name + "(): output_padding").c_str());
  o.groups = groups;
  o.dilation = sizes(dilation, (name + "(): dilation").c_str());
  return o;
}

// The values, or PyTorch's (values, indices) with return_indices.
nb::object values_or_pair(const std::pair<Tensor, Tensor>& result, bool return_indices) {
  if (return_indices) return nb::make_tuple(result.first, result.second);
  return nb::cast(result.first);
}

void bind_convolutions(nb::module_& m) {
  m.def(
      "unfold",
      [](const Tensor& input, nb::handle kernel_size, nb::handle dilation, nb::handle padding,
         nb::handle stride) {
        return F::unfold(input, sizes(kernel_size, "unfold(): kernel_size"),
                         sizes(dilation, "unfold(): dilation"), sizes(padding, "unfold(): padding"),
                         sizes(stride, "unfold(): stride"));
      },
      nb::arg("input"), nb::arg("kernel_size"), nb::arg("dilation") = 1, nb::arg("padding") = 0,
      nb::arg("stride") = 1,
      "The sliding blocks of input (N, C, H, W) as columns (N, C * kh * kw, L) (im2col).");
  m.def(
      "fold",
      [](const Tensor& input, nb::handle output_size, nb::handle kernel_size, nb::handle dilation,
         nb::handle padding, nb::handle stride) {
        return F::fold(input, sizes(output_size, "fold(): output_size"),
                       sizes(kernel_size, "fold(): kernel_size"),
                       sizes(dilation, "fold(): dilation"), sizes(padding, "fold(): padding"),
                       sizes(stride, "fold(): stride"));
      },
      nb::arg("input"), nb::arg("output_size"), nb::arg("kernel_size"), nb::arg("dilation") = 1,
      nb::arg("padding") = 0, nb::arg("stride") = 1,
      "Blocks (N, C * kh * kw, L) summed into (N, C, *output_size) (col2im), unfold's adjoint.");
  const auto conv = [&m](const char* name, auto fn) {
    m.def(
        name,
        [fn, name](const Tensor& input, const Tensor& weight, std::optional<Tensor> bias,
                   nb::handle stride, nb::handle padding, nb::handle dilation, int64_t groups) {
          return fn(input, weight, or_undefined(bias),
                    conv_options(stride, padding, dilation, groups, name));
        },
        nb::arg("input"), nb::arg("weight"), nb::arg("bias") = nb::none(), nb::arg("stride") = 1,
        nb::arg("padding") = 0, nb::arg("dilation") = 1, nb::arg("groups") = 1,
        "Convolution of input (N, C_in, *spatial) with weight (C_out, C_in / groups, *kernel), "
        "plus bias (C_out); padding ints, 'same' or 'valid'.");
  };
  conv("conv1d", &F::conv1d);
  conv("conv2d", &F::conv2d);
  conv("conv3d", &F::conv3d);
  const auto conv_transpose = [&m](const char* name, auto fn) {
    m.def(
        name,
        [fn, name](const Tensor& input, const Tensor& weight, std::optional<Tensor> bias,
                   nb::handle stride, nb::handle padding, nb::handle output_padding, int64_t groups,
                   nb::handle dilation) {
          return fn(
              input, weight, or_undefined(bias),
              conv_transpose_options(stride, padding, output_padding, groups, dilation, name));
        },
        nb::arg("input"), nb::arg("weight"), nb::arg("bias") = nb::none(), nb::arg("stride") = 1,
        nb::arg("padding") = 0, nb::arg("output_padding") = 0, nb::arg("groups") = 1,
        nb::arg("dilation") = 1,
        "Transposed convolution of input (N, C_in, *spatial) with weight (C_in, C_out / groups, "
        "*kernel), plus bias (C_out).");
  };
  conv_transpose("conv_transpose1d", &F::conv_transpose1d);
  conv_transpose("conv_transpose2d", &F::conv_transpose2d);
  conv_transpose("conv_transpose3d", &F::conv_transpose3d);
}

void bind_poolings(nb::module_& m) {
  const auto max_pool = [&m](const char* name, auto fn) {
    m.def(
        name,
        [fn, name](const Tensor& input, nb::handle kernel_size, nb::handle stride,
                   nb::handle padding, nb::handle dilation, bool ceil_mode, bool return_indices) {
          const std::string op(name);
          F::PoolOptions o;
          o.stride = pool_stride(stride, (op + "(): stride").c_str());
          o.padding = sizes(padding, (op + "(): padding").c_str());
          o.dilation = sizes(dilation, (op + "(): dilation").c_str());
          o.ceil_mode = ceil_mode;
          return values_or_pair(fn(input, sizes(kernel_size, (op + "(): kernel_size").c_str()), o),
                                return_indices);
        },
        nb::arg("input"), nb::arg("kernel_size"), nb::arg("stride") = nb::none(),
        nb::arg("padding") = 0, nb::arg("dilation") = 1, nb::arg("ceil_mode") = false,
        nb::arg("return_indices") = false,
        "The maximum over each window of input (N, C, *spatial), padded with -inf; with "
        "return_indices also each maximum's position in its input plane.");
  };
  max_pool("max_pool1d", &F::max_pool1d_with_indices);
  max_pool("max_pool2d", &F::max_pool2d_with_indices);
  max_pool("max_pool3d", &F::max_pool3d_with_indices);
  const auto avg_pool = [&m](const char* name, auto fn) {
    m.def(
        name,
        [fn, name](const Tensor& input, nb::handle kernel_size, nb::handle stride,
                   nb::handle padding, bool ceil_mode, bool count_include_pad,
                   std::optional<int64_t> divisor_override) {
          const std::string op(name);
          F::PoolOptions o;
          o.stride = pool_stride(stride, (op + "(): stride").c_str());
          o.padding = sizes(padding, (op + "(): padding").c_str());
          o.ceil_mode = ceil_mode;
          o.count_include_pad = count_include_pad;
          o.divisor_override = divisor_override;
          return fn(input, sizes(kernel_size, (op + "(): kernel_size").c_str()), o);
        },
        nb::arg("input"), nb::arg("kernel_size"), nb::arg("stride") = nb::none(),
        nb::arg("padding") = 0, nb::arg("ceil_mode") = false, nb::arg("count_include_pad") = true,
        nb::arg("divisor_override") = nb::none(),
        "The mean over each window of input (N, C, *spatial), zero-padded; count_include_pad "
        "counts the padding in the divisor, divisor_override replaces it.");
  };
  avg_pool("avg_pool1d", &F::avg_pool1d);
  avg_pool("avg_pool2d", &F::avg_pool2d);
  avg_pool("avg_pool3d", &F::avg_pool3d);
  const auto adaptive_avg = [&m](const char* name, auto fn) {
    m.def(
        name,
        [fn, name](const Tensor& input, nb::handle output_size) {
          return fn(input,
                    adaptive_size(output_size, (std::string(name) + "(): output_size").c_str()));
        },
        nb::arg("input"), nb::arg("output_size"),
        "The mean over output_size windows of each spatial dim of input (N, C, *spatial).");
  };
  adaptive_avg("adaptive_avg_pool1d", &F::adaptive_avg_pool1d);
  adaptive_avg("adaptive_avg_pool2d", &F::adaptive_avg_pool2d);
  adaptive_avg("adaptive_avg_pool3d", &F::adaptive_avg_pool3d);
  const auto adaptive_max = [&m](const char* name, auto fn) {
    m.def(
        name,
        [fn, name](const Tensor& input, nb::handle output_size, bool return_indices) {
          return values_or_pair(
              fn(input,
                 adaptive_size(output_size, (std::string(name) + "(): output_size").c_str())),
              return_indices);
        },
        nb::arg("input"), nb::arg("output_size"), nb::arg("return_indices") = false,
        "The maximum over output_size windows of each spatial dim of input (N, C, *spatial); "
        "with return_indices also each maximum's position in its input plane.");
  };
  adaptive_max("adaptive_max_pool1d", &F::adaptive_max_pool1d_with_indices);
  adaptive_max("adaptive_max_pool2d", &F::adaptive_max_pool2d_with_indices);
  adaptive_max("adaptive_max_pool3d", &F::adaptive_max_pool3d_with_indices);
  const auto max_unpool = [&m](const char* name, auto fn) {
    m.def(
        name,
        [fn, name](const Tensor& input, const Tensor& indices, nb::handle kernel_size,
                   nb::handle stride, nb::handle padding, nb::handle output_size) {
          const std::string op(name);
          F::UnpoolOptions o;
          o.stride = pool_stride(stride, (op + "(): stride").c_str());
          o.padding = sizes(padding, (op + "(): padding").c_str());
          if (!output_size.is_none()) {
            o.output_size = int_list(output_size, (op + "(): output_size").c_str());
          }
          return fn(input, indices, sizes(kernel_size, (op + "(): kernel_size").c_str()), o);
        },
        nb::arg("input"), nb::arg("indices"), nb::arg("kernel_size"),
        nb::arg("stride") = nb::none(), nb::arg("padding") = 0, nb::arg("output_size") = nb::none(),
        "max_pool's partial inverse: each value of input (N, C, *spatial) at its index in its "
        "plane of a zero output.");
  };
  max_unpool("max_unpool1d", &F::max_unpool1d);
  max_unpool("max_unpool2d", &F::max_unpool2d);
  max_unpool("max_unpool3d", &F::max_unpool3d);
}

F::InterpolateMode interpolate_mode(const std::string& mode) {
  static const std::pair<const char*, F::InterpolateMode> kModes[] = {
      {"nearest", F::InterpolateMode::Nearest}, {"nearest-exact", F::InterpolateMode::NearestExact},
      {"linear", F::InterpolateMode::Linear},   {"bilinear", F::InterpolateMode::Bilinear},
      {"bicubic", F::InterpolateMode::Bicubic}, {"trilinear", F::InterpolateMode::Trilinear},
      {"area", F::InterpolateMode::Area},
  };
  for (const auto& [name, value] : kModes) {
    if (mode == name) return value;
  }
  throw nb::value_error(("interpolate(): mode must be 'nearest', 'nearest-exact', 'linear', "
                         "'bilinear', 'bicubic', 'trilinear' or 'area'; got '" +
                         mode + "'.")
                            .c_str());
}

// scale_factor: a float or a sequence of floats.
std::vector<double> scale_factors(nb::handle h) {
  if (h.is_none()) return {};
  if (nb::isinstance<nb::sequence>(h)) {
    std::vector<double> out;
    for (nb::handle item : nb::iter(h)) out.push_back(nb::cast<double>(item));
    return out;
  }
  return {nb::cast<double>(h)};
}

void bind_resampling(nb::module_& m) {
  m.def(
      "interpolate",
      [](const Tensor& input, nb::handle size, nb::handle scale_factor, const std::string& mode,
         std::optional<bool> align_corners, std::optional<bool> recompute_scale_factor,
         bool antialias) {
        if (antialias) {
          throw nb::type_error(
              "interpolate(): antialias=True is not supported; stride resamples "
              "without an anti-aliasing filter.");
        }
        F::InterpolateOptions o;
        if (!size.is_none()) o.size = sizes(size, "interpolate(): size");
        o.scale_factor = scale_factors(scale_factor);
        o.mode = interpolate_mode(mode);
        o.align_corners = align_corners;
        o.recompute_scale_factor = recompute_scale_factor;
        return F::interpolate(input, o);
      },
      nb::arg("input"), nb::arg("size") = nb::none(), nb::arg("scale_factor") = nb::none(),
      nb::arg("mode") = "nearest", nb::arg("align_corners") = nb::none(),
      nb::arg("recompute_scale_factor") = nb::none(), nb::arg("antialias") = false,
      "input (N, C, *spatial) resized to size or by scale_factor with mode 'nearest', "
      "'nearest-exact', 'linear', 'bilinear', 'bicubic', 'trilinear' or 'area'.");
  m.def("pixel_shuffle", &F::pixel_shuffle, nb::arg("input"), nb::arg("upscale_factor"),
        "(*, C * r^2, H, W) -> (*, C, H * r, W * r).");
  m.def("pixel_unshuffle", &F::pixel_unshuffle, nb::arg("input"), nb::arg("downscale_factor"),
        "(*, C, H * r, W * r) -> (*, C * r^2, H, W).");
  m.def(
      "group_norm",
      [](const Tensor& input, int64_t num_groups, std::optional<Tensor> weight,
         std::optional<Tensor> bias, double eps) {
        return F::group_norm(input, num_groups, or_undefined(weight), or_undefined(bias), eps);
      },
      nb::arg("input"), nb::arg("num_groups"), nb::arg("weight") = nb::none(),
      nb::arg("bias") = nb::none(), nb::arg("eps") = 1e-5,
      "input (N, C, *) normalised over each of num_groups groups of channels per sample, then "
      "scaled by weight and shifted by bias (C).");
}

}  // namespace

void bind_conv(nb::module_& m) {
  bind_convolutions(m);
  bind_poolings(m);
  bind_resampling(m);
}

}  // namespace stride::python
