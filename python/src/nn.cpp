// stride._stride._nn: the C++ kernels under stride.nn — the functional ops
// (torch.nn.functional's names and arguments), the initialisers of
// torch.nn.init and gradient clipping. The modules themselves are Python
// classes (python/stride/nn/), as PyTorch's are, over these functions.
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <tuple>

#include "bindings.h"

namespace stride::python {

Tensor or_undefined(const std::optional<Tensor>& t) {
  return t ? *t : Tensor();
}

namespace {

namespace F = nn::functional;
namespace init = nn::init;

F::Reduction reduction_from(const std::string& name) {
  if (name == "mean") return F::Reduction::Mean;
  if (name == "sum") return F::Reduction::Sum;
  if (name == "none") return F::Reduction::None;
  throw nb::value_error(("reduction must be 'mean', 'sum' or 'none'; got '" + name + "'.").c_str());
}

F::EmbeddingBagMode bag_mode_from(const std::string& mode) {
  if (mode == "sum") return F::EmbeddingBagMode::Sum;
  if (mode == "mean") return F::EmbeddingBagMode::Mean;
  if (mode == "max") return F::EmbeddingBagMode::Max;
  throw nb::value_error(
      ("embedding_bag(): mode must be 'sum', 'mean' or 'max'; got '" + mode + "'.").c_str());
}

F::RopeConvention convention_from(const std::string& name) {
  if (name == "interleaved") return F::RopeConvention::Interleaved;
  if (name == "half_split") return F::RopeConvention::HalfSplit;
  throw nb::value_error(("convention must be 'interleaved' (Meta's Llama) or 'half_split' "
                         "(Hugging Face's); got '" +
                         name + "'.")
                            .c_str());
}

std::optional<F::CausalAlignment> alignment_from(const std::optional<std::string>& name) {
  if (!name) return std::nullopt;
  if (*name == "top_left") return F::CausalAlignment::TopLeft;
  if (*name == "bottom_right") return F::CausalAlignment::BottomRight;
  throw nb::value_error(
      ("alignment must be 'top_left' or 'bottom_right'; got '" + *name + "'.").c_str());
}

init::Nonlinearity nonlinearity_from(const std::string& name) {
  static const std::pair<const char*, init::Nonlinearity> kNames[] = {
      {"linear", init::Nonlinearity::Linear},   {"conv1d", init::Nonlinearity::Conv1d},
      {"conv2d", init::Nonlinearity::Conv2d},   {"conv3d", init::Nonlinearity::Conv3d},
      {"sigmoid", init::Nonlinearity::Sigmoid}, {"tanh", init::Nonlinearity::Tanh},
      {"relu", init::Nonlinearity::ReLU},       {"leaky_relu", init::Nonlinearity::LeakyReLU},
      {"selu", init::Nonlinearity::SELU},
  };
  for (const auto& [key, value] : kNames) {
    if (name == key) return value;
  }
  throw nb::value_error(("unsupported nonlinearity '" + name + "'.").c_str());
}

init::FanMode fan_mode_from(const std::string& mode) {
  if (mode == "fan_in") return init::FanMode::FanIn;
  if (mode == "fan_out") return init::FanMode::FanOut;
  throw nb::value_error(("mode must be 'fan_in' or 'fan_out'; got '" + mode + "'.").c_str());
}

// PyTorch's inplace=True: the result written into input, which is returned.
// When autograd records the op, it runs on a clone, so that the tensors its
// backward saves are not the ones the copy overwrites; a leaf that requires
// grad is refused by the copy, as PyTorch refuses it.
template <class Op>
Tensor maybe_inplace(const Tensor& input, bool inplace, Op op) {
  if (!inplace) return op(input);
  const bool records = GradMode::is_enabled() && input.requires_grad();
  Tensor self = input;
  self.copy_(op(records ? input.clone() : input));
  return self;
}

void bind_composed_activations(nb::module_& m) {
  m.def(
      "leaky_relu",
      [](const Tensor& x, double negative_slope, bool inplace) {
        return maybe_inplace(x, inplace,
                             [&](const Tensor& t) { return F::leaky_relu(t, negative_slope); });
      },
      nb::arg("input"), nb::arg("negative_slope") = 0.01, nb::arg("inplace") = false,
      "LeakyReLU: x where x > 0, negative_slope * x elsewhere.");
  m.def(
      "elu",
      [](const Tensor& x, double alpha, bool inplace) {
        return maybe_inplace(x, inplace, [&](const Tensor& t) { return F::elu(t, alpha); });
      },
      nb::arg("input"), nb::arg("alpha") = 1.0, nb::arg("inplace") = false,
      "ELU: x where x > 0, alpha * (exp(x) - 1) elsewhere.");
  m.def(
      "selu", [](const Tensor& x, bool inplace) { return maybe_inplace(x, inplace, F::selu); },
      nb::arg("input"), nb::arg("inplace") = false,
      "SELU: scale * elu(x, alpha) with alpha = 1.6732632423543772 and scale = "
      "1.0507009873554805.");
  m.def(
      "celu",
      [](const Tensor& x, double alpha, bool inplace) {
        return maybe_inplace(x, inplace, [&](const Tensor& t) { return F::celu(t, alpha); });
      },
      nb::arg("input"), nb::arg("alpha") = 1.0, nb::arg("inplace") = false,
      "CELU: max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).");
  m.def("softplus", &F::softplus, nb::arg("input"), nb::arg("beta") = 1.0,
        nb::arg("threshold") = 20.0,
        "Softplus: log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold.");
  m.def(
      "hardtanh",
      [](const Tensor& x, const Scalar& min_val, const Scalar& max_val, bool inplace) {
        return maybe_inplace(x, inplace,
                             [&](const Tensor& t) { return F::hardtanh(t, min_val, max_val); });
      },
      nb::arg("input"), nb::arg("min_val") = -1.0, nb::arg("max_val") = 1.0,
      nb::arg("inplace") = false, "HardTanh: x clamped into [min_val, max_val].");
  m.def(
      "relu6", [](const Tensor& x, bool inplace) { return maybe_inplace(x, inplace, F::relu6); },
      nb::arg("input"), nb::arg("inplace") = false, "ReLU6: min(max(0, x), 6).");
  m.def(
      "hardswish",
      [](const Tensor& x, bool inplace) { return maybe_inplace(x, inplace, F::hardswish); },
      nb::arg("input"), nb::arg("inplace") = false, "Hardswish: x * relu6(x + 3) / 6.");
  m.def(
      "hardsigmoid",
      [](const Tensor& x, bool inplace) { return maybe_inplace(x, inplace, F::hardsigmoid); },
      nb::arg("input"), nb::arg("inplace") = false, "Hardsigmoid: relu6(x + 3) / 6.");
  m.def(
      "mish", [](const Tensor& x, bool inplace) { return maybe_inplace(x, inplace, F::mish); },
      nb::arg("input"), nb::arg("inplace") = false, "Mish: x * tanh(softplus(x)).");
  m.def("logsigmoid", &F::logsigmoid, nb::arg("input"),
        "log(sigmoid(x)), computed stably as min(x, 0) - log(1 + exp(-|x|)).");
  m.def("softsign", &F::softsign, nb::arg("input"), "Softsign: x / (1 + |x|).");
  m.def("tanhshrink", &F::tanhshrink, nb::arg("input"), "Tanhshrink: x - tanh(x).");
  m.def("softshrink", &F::softshrink, nb::arg("input"), nb::arg("lambd") = 0.5,
        "Softshrink: x - lambd above lambd, x + lambd below -lambd, 0 between.");
  m.def("hardshrink", &F::hardshrink, nb::arg("input"), nb::arg("lambd") = 0.5,
        "Hardshrink: 0 where -lambd <= x <= lambd, x elsewhere.");
  m.def(
      "threshold",
      [](const Tensor& x, const Scalar& threshold, const Scalar& value, bool inplace) {
        return maybe_inplace(x, inplace,
                             [&](const Tensor& t) { return F::threshold(t, threshold, value); });
      },
      nb::arg("input"), nb::arg("threshold"), nb::arg("value"), nb::arg("inplace") = false,
      "Threshold: x where x > threshold, value elsewhere.");
  m.def("glu", &F::glu, nb::arg("input"), nb::arg("dim") = -1,
        "GLU: a * sigmoid(b), with a and b the two halves of input along dim.");
  m.def("prelu", &F::prelu, nb::arg("input"), nb::arg("weight"),
        "PReLU: x where x > 0, weight * x elsewhere; weight is one value or one per channel "
        "(dim 1 of input).");
  m.def(
      "softmin",
      [](const Tensor& x, std::optional<int64_t> dim, int /*_stacklevel*/, nb::handle dtype) {
        if (!dim) throw nb::type_error("softmin() needs dim=: the dimension to normalise over.");
        return F::softmin(x, *dim, optional_dtype(dtype));
      },
      nb::arg("input"), nb::arg("dim") = nb::none(), nb::arg("_stacklevel") = 3,
      nb::arg("dtype") = nb::none(), "softmax(-input, dim); dtype= casts first.");
}

void bind_activations(nb::module_& m) {
  m.def("relu", &F::relu, nb::arg("input"), "ReLU, max(x, 0), elementwise.");
  m.def("silu", &F::silu, nb::arg("input"), "SiLU (swish), x * sigmoid(x), elementwise.");
  m.def(
      "gelu",
      [](const Tensor& x, const std::string& approximate) { return F::gelu(x, approximate); },
      nb::arg("input"), nb::arg("approximate") = "none",
      "GELU, x * Phi(x): the exact erf form, or approximate='tanh' (GPT-2's).");
  m.def("softmax", &F::softmax, nb::arg("input"), nb::arg("dim"),
        "exp(x) / sum(exp(x)) along dim.");
  m.def(
      "log_softmax",
      [](const Tensor& x, std::optional<int64_t> dim, int /*_stacklevel*/, nb::handle dtype) {
        if (!dim)
          throw nb::type_error("log_softmax() needs dim=: the dimension to normalise over.");
        const std::optional<ScalarType> d = optional_dtype(dtype);
        return F::log_softmax(d ? x.to(*d) : x, *dim);
      },
      nb::arg("input"), nb::arg("dim") = nb::none(), nb::arg("_stacklevel") = 3,
      nb::arg("dtype") = nb::none(),
      "log(softmax(input, dim)), computed stably; dtype= casts first.");
  m.def(
      "swiglu",
      [](const Tensor& gate, const Tensor& up, const std::optional<Tensor>& beta) {
        return beta ? F::swiglu(gate, up, *beta) : F::swiglu(gate, up);
      },
      nb::arg("gate"), nb::arg("up"), nb::arg("beta") = nb::none(),
      "silu(gate) * up, fused with its backward; with beta, gate * sigmoid(beta * gate) * up.");
  m.def("dropout", &F::dropout, nb::arg("input"), nb::arg("p") = 0.5, nb::arg("training") = true,
        nb::arg("generator").none() = nb::none(),
        "When training, zeroes each element with probability p and scales the rest by "
        "1 / (1 - p); input itself otherwise.");
}

void bind_layers(nb::module_& m) {
  m.def(
      "linear",
      [](const Tensor& x, const Tensor& w, const std::optional<Tensor>& b) {
        return F::linear(x, w, or_undefined(b));
      },
      nb::arg("input"), nb::arg("weight"), nb::arg("bias") = nb::none(),
      "input @ weight.T + bias: input (..., in), weight (out, in), bias (out) -> (..., out).");
  m.def("linear_concat", &F::linear_concat, nb::arg("input"), nb::arg("weights"),
        "torch.cat([linear(input, w) for w in weights], -1) as one op.");
  m.def("linear_groups", &F::linear_groups, nb::arg("input"), nb::arg("groups"),
        "[linear_concat(input, g) for g in groups] as one op (attention's q, k, v).");
  m.def("embedding", &F::embedding, nb::arg("input"), nb::arg("weight"),
        "The rows of weight (V, D) at the integer ids input (any shape): (..., D).");
  m.def(
      "embedding_bag",
      [](const Tensor& input, const Tensor& weight, const std::optional<Tensor>& offsets,
         std::optional<double> max_norm, double norm_type, bool scale_grad_by_freq,
         const std::string& mode, const std::optional<Tensor>& per_sample_weights,
         bool include_last_offset, std::optional<int64_t> padding_idx) {
        F::EmbeddingBagOptions o;
        o.offsets = or_undefined(offsets);
        o.max_norm = max_norm;
        o.norm_type = norm_type;
        o.scale_grad_by_freq = scale_grad_by_freq;
        o.mode = bag_mode_from(mode);
        o.per_sample_weights = or_undefined(per_sample_weights);
        o.include_last_offset = include_last_offset;
        o.padding_idx = padding_idx;
        return F::embedding_bag(input, weight, o);
      },
      nb::arg("input"), nb::arg("weight"), nb::arg("offsets") = nb::none(),
      nb::arg("max_norm") = nb::none(), nb::arg("norm_type") = 2.0,
      nb::arg("scale_grad_by_freq") = false, nb::arg("mode") = "mean",
      nb::arg("per_sample_weights") = nb::none(), nb::arg("include_last_offset") = false,
      nb::arg("padding_idx") = nb::none(),
      "The sum, mean or max of each bag's rows of weight: bags are the rows of a 2-d input, or "
      "a 1-d input cut at offsets.");
  m.def(
      "layer_norm",
      [](const Tensor& x, nb::handle shape, const std::optional<Tensor>& w,
         const std::optional<Tensor>& b, double eps) {
        return F::layer_norm(x, int_list(shape, "layer_norm(): normalized_shape"), or_undefined(w),
                             or_undefined(b), eps);
      },
      nb::arg("input"), nb::arg("normalized_shape"), nb::arg("weight") = nb::none(),
      nb::arg("bias") = nb::none(), nb::arg("eps") = 1e-5,
      "(x - mean) / sqrt(var + eps) * weight + bias over the trailing normalized_shape dims.");
  m.def(
      "rms_norm",
      [](const Tensor& x, const std::optional<Tensor>& w, double eps) {
        return F::rms_norm(x, or_undefined(w), eps);
      },
      nb::arg("input"), nb::arg("weight") = nb::none(), nb::arg("eps") = 1e-6,
      "x / sqrt(mean(x^2) + eps) * weight over the last dim, fused.");
  m.def(
      "batch_norm",
      [](const Tensor& x, const std::optional<Tensor>& running_mean,
         const std::optional<Tensor>& running_var, const std::optional<Tensor>& w,
         const std::optional<Tensor>& b, bool training, double momentum, double eps) {
        return F::batch_norm(x, or_undefined(running_mean), or_undefined(running_var),
                             or_undefined(w), or_undefined(b), training, momentum, eps);
      },
      nb::arg("input"), nb::arg("running_mean").none(), nb::arg("running_var").none(),
      nb::arg("weight") = nb::none(), nb::arg("bias") = nb::none(), nb::arg("training") = false,
      nb::arg("momentum") = 0.1, nb::arg("eps") = 1e-5,
      "Batch normalisation over dim 1 of (N, C, *): batch statistics (updating the "
      "running ones) when training, else running_mean and running_var.");
}

void bind_losses(nb::module_& m) {
  m.def(
      "linear_cross_entropy_chunked",
      [](const Tensor& input, const Tensor& linear_weight, const Tensor& target,
         const std::optional<Tensor>& linear_bias, const std::optional<Tensor>& weight,
         const std::string& reduction, int64_t ignore_index, double label_smoothing,
         int64_t batch_chunk_size) {
        F::LinearCrossEntropyOptions o;
        o.linear_bias = or_undefined(linear_bias);
        o.weight = or_undefined(weight);
        o.reduction = reduction_from(reduction);
        o.ignore_index = ignore_index;
        o.label_smoothing = label_smoothing;
        o.batch_chunk_size = batch_chunk_size;
        return F::linear_cross_entropy(input, linear_weight, target, o);
      },
      nb::arg("input"), nb::arg("linear_weight"), nb::arg("target"),
      nb::arg("linear_bias") = nb::none(), nb::arg("weight") = nb::none(),
      nb::arg("reduction") = "mean", nb::arg("ignore_index") = -100,
      nb::arg("label_smoothing") = 0.0, nb::arg("batch_chunk_size") = 0,
      "cross_entropy(input @ linear_weight.T + linear_bias, target) computed batch_chunk_size "
      "rows at a time (0: all), forward and backward, without the whole (N, C) logits.");
  m.def(
      "mse_loss",
      [](const Tensor& input, const Tensor& target, const std::string& reduction) {
        return F::mse_loss(input, target, reduction_from(reduction));
      },
      nb::arg("input"), nb::arg("target"), nb::arg("reduction") = "mean",
      "(input - target)^2, reduced by reduction ('mean', 'sum' or 'none').");
}

// A loss's reduction: PyTorch's deprecated size_average= and reduce=, when
// either is given, decide it (_Reduction.legacy_get_string), with PyTorch's
// warning; otherwise `reduction`, checked (batchmean: kl_div's fourth).
std::string loss_reduction(const char* op,
                           std::optional<bool> size_average,
                           std::optional<bool> reduce,
                           const std::string& reduction,
                           bool batchmean = false) {
  if (size_average || reduce) {
    const bool mean = size_average.value_or(true), reduced = reduce.value_or(true);
    const char* legacy = reduced ? (mean ? "mean" : "sum") : "none";
    const std::string warning = std::string(op) +
                                "(): size_average and reduce are deprecated; pass reduction='" +
                                legacy + "' instead.";
    if (PyErr_WarnEx(PyExc_UserWarning, warning.c_str(), 1) != 0) throw nb::python_error();
    return legacy;
  }
  if (reduction == "mean" || reduction == "sum" || reduction == "none" ||
      (batchmean && reduction == "batchmean")) {
    return reduction;
  }
  throw nb::value_error((std::string(op) + "(): reduction must be 'mean', 'sum', 'none'" +
                         (batchmean ? " or 'batchmean'" : "") + "; got '" + reduction + "'.")
                            .c_str());
}

F::Reduction reduction_of(const char* op,
                          std::optional<bool> size_average,
                          std::optional<bool> reduce,
                          const std::string& reduction) {
  return reduction_from(loss_reduction(op, size_average, reduce, reduction));
}

F::PadMode pad_mode_from(const std::string& mode) {
  if (mode == "constant") return F::PadMode::Constant;
  if (mode == "reflect") return F::PadMode::Reflect;
  if (mode == "replicate") return F::PadMode::Replicate;
  if (mode == "circular") return F::PadMode::Circular;
  throw nb::value_error(("pad(): mode must be 'constant', 'reflect', 'replicate' or 'circular'; "
                         "got '" +
                         mode + "'.")
                            .c_str());
}

void bind_composed_losses(nb::module_& m) {
  using Flag = std::optional<bool>;
  m.def(
      "cross_entropy",
      [](const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
         Flag size_average, int64_t ignore_index, Flag reduce, const std::string& reduction,
         double label_smoothing) {
        return F::cross_entropy(input, target, or_undefined(weight), ignore_index,
                                reduction_of("cross_entropy", size_average, reduce, reduction),
                                label_smoothing);
      },
      nb::arg("input"), nb::arg("target"), nb::arg("weight") = nb::none(),
      nb::arg("size_average") = nb::none(), nb::arg("ignore_index") = -100,
      nb::arg("reduce") = nb::none(), nb::arg("reduction") = "mean",
      nb::arg("label_smoothing") = 0.0,
      "log_softmax + NLL of logits (N, C, ...) against class indices (N, ...) or class "
      "probabilities of the logits' shape; fused for index targets without a class weight.");
  m.def(
      "nll_loss",
      [](const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
         Flag size_average, int64_t ignore_index, Flag reduce, const std::string& reduction) {
        return F::nll_loss(input, target, or_undefined(weight), ignore_index,
                           reduction_of("nll_loss", size_average, reduce, reduction));
      },
      nb::arg("input"), nb::arg("target"), nb::arg("weight") = nb::none(),
      nb::arg("size_average") = nb::none(), nb::arg("ignore_index") = -100,
      nb::arg("reduce") = nb::none(), nb::arg("reduction") = "mean",
      "Negative log-likelihood of log-probabilities (N, C, ...) against class indices "
      "(N, ...); weight (C) weighs each class.");
  m.def(
      "cosine_embedding_loss",
      [](const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
         Flag size_average, Flag reduce, const std::string& reduction) {
        return F::cosine_embedding_loss(
            input1, input2, target, margin,
            reduction_of("cosine_embedding_loss", size_average, reduce, reduction));
      },
      nb::arg("input1"), nb::arg("input2"), nb::arg("target"), nb::arg("margin") = 0.0,
      nb::arg("size_average") = nb::none(), nb::arg("reduce") = nb::none(),
      nb::arg("reduction") = "mean",
      "1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is -1.");
  m.def(
      "margin_ranking_loss",
      [](const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
         Flag size_average, Flag reduce, const std::string& reduction) {
        return F::margin_ranking_loss(
            input1, input2, target, margin,
            reduction_of("margin_ranking_loss", size_average, reduce, reduction));
      },
      nb::arg("input1"), nb::arg("input2"), nb::arg("target"), nb::arg("margin") = 0.0,
      nb::arg("size_average") = nb::none(), nb::arg("reduce") = nb::none(),
      nb::arg("reduction") = "mean", "max(0, -target * (input1 - input2) + margin), reduced.");
  m.def(
      "multi_margin_loss",
      [](const Tensor& input, const Tensor& target, int64_t p, double margin,
         const std::optional<Tensor>& weight, Flag size_average, Flag reduce,
         const std::string& reduction) {
        return F::multi_margin_loss(
            input, target, p, margin, or_undefined(weight),
            reduction_of("multi_margin_loss", size_average, reduce, reduction));
      },
      nb::arg("input"), nb::arg("target"), nb::arg("p") = 1, nb::arg("margin") = 1.0,
      nb::arg("weight") = nb::none(), nb::arg("size_average") = nb::none(),
      nb::arg("reduce") = nb::none(), nb::arg("reduction") = "mean",
      "Per sample, the sum over classes j != y of max(0, margin - x[y] + x[j])^p / C, times "
      "weight[y].");
  m.def(
      "multilabel_margin_loss",
      [](const Tensor& input, const Tensor& target, Flag size_average, Flag reduce,
         const std::string& reduction) {
        return F::multilabel_margin_loss(
            input, target, reduction_of("multilabel_margin_loss", size_average, reduce, reduction));
      },
      nb::arg("input"), nb::arg("target"), nb::arg("size_average") = nb::none(),
      nb::arg("reduce") = nb::none(), nb::arg("reduction") = "mean",
      "Hinge loss between each sample's target classes (the indices before its first -1) and "
      "its other classes.");
  m.def(
      "multilabel_soft_margin_loss",
      [](const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
         Flag size_average, Flag reduce, const std::string& reduction) {
        return F::multilabel_soft_margin_loss(
            input, target, or_undefined(weight),
            reduction_of("multilabel_soft_margin_loss", size_average, reduce, reduction));
      },
      nb::arg("input"), nb::arg("target"), nb::arg("weight") = nb::none(),
      nb::arg("size_average") = nb::none(), nb::arg("reduce") = nb::none(),
      nb::arg("reduction") = "mean",
      "The mean over classes of the binary cross-entropy of sigmoid(input) against target.");
  m.def(
      "triplet_margin_loss",
      [](const Tensor& anchor, const Tensor& positive, const Tensor& negative, double margin,
         double p, double eps, bool swap, Flag size_average, Flag reduce,
         const std::string& reduction) {
        return F::triplet_margin_loss(
            anchor, positive, negative, margin, p, eps, swap,
            reduction_of("triplet_margin_loss", size_average, reduce, reduction));
      },
      nb::arg("anchor"), nb::arg("positive"), nb::arg("negative"), nb::arg("margin") = 1.0,
      nb::arg("p") = 2.0, nb::arg("eps") = 1e-6, nb::arg("swap") = false,
      nb::arg("size_average") = nb::none(), nb::arg("reduce") = nb::none(),
      nb::arg("reduction") = "mean",
      "max(0, margin + d(anchor, positive) - d(anchor, negative)) with the p-norm distance.");
  m.def(
      "triplet_margin_with_distance_loss",
      [](const Tensor& anchor, const Tensor& positive, const Tensor& negative,
         const std::optional<F::DistanceFunction>& distance_function, double margin, bool swap,
         const std::string& reduction) {
        return F::triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function.value_or(F::DistanceFunction()), margin,
            swap, reduction_of("triplet_margin_with_distance_loss", {}, {}, reduction));
      },
      nb::arg("anchor"), nb::arg("positive"), nb::arg("negative"), nb::kw_only(),
      nb::arg("distance_function") = nb::none(), nb::arg("margin") = 1.0, nb::arg("swap") = false,
      nb::arg("reduction") = "mean",
      "max(0, margin + d(anchor, positive) - d(anchor, negative)), d being distance_function "
      "(pairwise_distance when None).");
  m.def(
      "gaussian_nll_loss",
      [](const Tensor& input, const Tensor& target, const Tensor& var, bool full, double eps,
         const std::string& reduction) {
        return F::gaussian_nll_loss(input, target, var, full, eps,
                                    reduction_of("gaussian_nll_loss", {}, {}, reduction));
      },
      nb::arg("input"), nb::arg("target"), nb::arg("var"), nb::arg("full") = false,
      nb::arg("eps") = 1e-6, nb::arg("reduction") = "mean",
      "0.5 * (log(var) + (input - target)^2 / var), var clamped below at eps.");
  m.def(
      "l1_loss",
      [](const Tensor& input, const Tensor& target, Flag size_average, Flag reduce,
         const std::string& reduction, const std::optional<Tensor>& weight) {
        return F::l1_loss(input, target, reduction_of("l1_loss", size_average, reduce, reduction),
                          or_undefined(weight));
      },
      nb::arg("input"), nb::arg("target"), nb::arg("size_average") = nb::none(),
      nb::arg("reduce") = nb::none(), nb::arg("reduction") = "mean", nb::arg("weight") = nb::none(),
      "|input - target|, reduced; with weight, weighted (and 'mean' divides by the weights' "
      "sum).");
  m.def(
      "smooth_l1_loss",
      [](const Tensor& input, const Tensor& target, Flag size_average, Flag reduce,
         const std::string& reduction, double beta) {
        return F::smooth_l1_loss(
            input, target, reduction_of("smooth_l1_loss", size_average, reduce, reduction), beta);
      },
      nb::arg("input"), nb::arg("target"), nb::arg("size_average") = nb::none(),
      nb::arg("reduce") = nb::none(), nb::arg("reduction") = "mean", nb::arg("beta") = 1.0,
      "0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere (d = input - target), reduced.");
  m.def(
      "huber_loss",
      [](const Tensor& input, const Tensor& target, const std::string& reduction, double delta,
         const std::optional<Tensor>& weight) {
        return F::huber_loss(input, target, reduction_of("huber_loss", {}, {}, reduction), delta,
                             or_undefined(weight));
      },
      nb::arg("input"), nb::arg("target"), nb::arg("reduction") = "mean", nb::arg("delta") = 1.0,
      nb::arg("weight") = nb::none(),
      "0.5 d^2 where |d| < delta, delta (|d| - 0.5 delta) elsewhere (d = input - target), "
      "reduced.");
  m.def(
      "binary_cross_entropy",
      [](const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
         Flag size_average, Flag reduce, const std::string& reduction) {
        return F::binary_cross_entropy(
            input, target, or_undefined(weight),
            reduction_of("binary_cross_entropy", size_average, reduce, reduction));
      },
      nb::arg("input"), nb::arg("target"), nb::arg("weight") = nb::none(),
      nb::arg("size_average") = nb::none(), nb::arg("reduce") = nb::none(),
      nb::arg("reduction") = "mean",
      "-weight (t log(x) + (1 - t) log(1 - x)) of probabilities x, each log clamped at -100.");
  m.def(
      "binary_cross_entropy_with_logits",
      [](const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
         Flag size_average, Flag reduce, const std::string& reduction,
         const std::optional<Tensor>& pos_weight) {
        return F::binary_cross_entropy_with_logits(
            input, target, or_undefined(weight), or_undefined(pos_weight),
            reduction_of("binary_cross_entropy_with_logits", size_average, reduce, reduction));
      },
      nb::arg("input"), nb::arg("target"), nb::arg("weight") = nb::none(),
      nb::arg("size_average") = nb::none(), nb::arg("reduce") = nb::none(),
      nb::arg("reduction") = "mean", nb::arg("pos_weight") = nb::none(),
      "binary_cross_entropy(sigmoid(input), target), computed stably from logits; pos_weight "
      "weighs the positive term per class.");
  m.def(
      "kl_div",
      [](const Tensor& input, const Tensor& target, Flag size_average, Flag reduce,
         const std::string& reduction, bool log_target) {
        return F::kl_div(input, target,
                         loss_reduction("kl_div", size_average, reduce, reduction, true),
                         log_target);
      },
      nb::arg("input"), nb::arg("target"), nb::arg("size_average") = nb::none(),
      nb::arg("reduce") = nb::none(), nb::arg("reduction") = "mean", nb::arg("log_target") = false,
      "KL divergence target (log target - input) of log-probabilities input; "
      "reduction='batchmean' gives the KL divergence proper.");
  m.def(
      "soft_margin_loss",
      [](const Tensor& input, const Tensor& target, Flag size_average, Flag reduce,
         const std::string& reduction) {
        return F::soft_margin_loss(
            input, target, reduction_of("soft_margin_loss", size_average, reduce, reduction));
      },
      nb::arg("input"), nb::arg("target"), nb::arg("size_average") = nb::none(),
      nb::arg("reduce") = nb::none(), nb::arg("reduction") = "mean",
      "log(1 + exp(-target * input)) for targets of +-1, reduced.");
  m.def(
      "hinge_embedding_loss",
      [](const Tensor& input, const Tensor& target, double margin, Flag size_average, Flag reduce,
         const std::string& reduction) {
        return F::hinge_embedding_loss(
            input, target, margin,
            reduction_of("hinge_embedding_loss", size_average, reduce, reduction));
      },
      nb::arg("input"), nb::arg("target"), nb::arg("margin") = 1.0,
      nb::arg("size_average") = nb::none(), nb::arg("reduce") = nb::none(),
      nb::arg("reduction") = "mean",
      "input where target is 1, max(0, margin - input) where it is -1, reduced.");
  m.def(
      "poisson_nll_loss",
      [](const Tensor& input, const Tensor& target, bool log_input, bool full, Flag size_average,
         double eps, Flag reduce, const std::string& reduction) {
        return F::poisson_nll_loss(
            input, target, log_input, full, eps,
            reduction_of("poisson_nll_loss", size_average, reduce, reduction));
      },
      nb::arg("input"), nb::arg("target"), nb::arg("log_input") = true, nb::arg("full") = false,
      nb::arg("size_average") = nb::none(), nb::arg("eps") = 1e-8, nb::arg("reduce") = nb::none(),
      nb::arg("reduction") = "mean",
      "Poisson negative log-likelihood: exp(input) - target * input (log_input), or input - "
      "target * log(input + eps); full adds Stirling's term.");
}

void bind_composed_layers(nb::module_& m) {
  const auto dropout_doc = [](const char* what) {
    return std::string("When training, ") + what +
           "; input itself otherwise (torch.nn.functional's, with a stride Generator).";
  };
  for (const auto& [name, fn, what] :
       {std::tuple{"dropout1d", &F::dropout1d, "zeroes whole channels of (N, C, L) or (C, L)"},
        std::tuple{"dropout2d", &F::dropout2d,
                   "zeroes whole channels of (N, C, H, W) or (C, H, W)"},
        std::tuple{"dropout3d", &F::dropout3d,
                   "zeroes whole channels of (N, C, D, H, W) or (C, D, H, W)"}}) {
    m.def(name, fn, nb::arg("input"), nb::arg("p") = 0.5, nb::arg("training") = true,
          nb::arg("generator").none() = nb::none(), dropout_doc(what).c_str());
  }
  m.def("alpha_dropout", &F::alpha_dropout, nb::arg("input"), nb::arg("p") = 0.5,
        nb::arg("training") = false, nb::arg("generator").none() = nb::none(),
        dropout_doc("drops elements keeping a SELU network's mean and variance").c_str());
  m.def("feature_alpha_dropout", &F::feature_alpha_dropout, nb::arg("input"), nb::arg("p") = 0.5,
        nb::arg("training") = false, nb::arg("generator").none() = nb::none(),
        dropout_doc("alpha-drops whole channels of (N, C, *)").c_str());
  m.def("rrelu", &F::rrelu, nb::arg("input"), nb::arg("lower") = 1.0 / 8,
        nb::arg("upper") = 1.0 / 3, nb::arg("training") = false,
        nb::arg("generator").none() = nb::none(),
        "x where x >= 0, else x * a: a uniform in [lower, upper] per element in training, "
        "(lower + upper) / 2 in eval.");
  m.def(
      "bilinear",
      [](const Tensor& x1, const Tensor& x2, const Tensor& weight,
         const std::optional<Tensor>& bias) {
        return F::bilinear(x1, x2, weight, or_undefined(bias));
      },
      nb::arg("input1"), nb::arg("input2"), nb::arg("weight"), nb::arg("bias") = nb::none(),
      "y_o = x1^T W_o x2 + b_o for weight (out, in1, in2).");
  m.def("channel_shuffle", &F::channel_shuffle, nb::arg("input"), nb::arg("groups"),
        "(N, C, *) with channel g * (C / groups) + i moved to i * groups + g.");
  m.def("pdist", &F::pdist, nb::arg("input"), nb::arg("p") = 2.0,
        "The p-norm distance between each pair of rows i < j of input (N, M).");
  m.def("local_response_norm", &F::local_response_norm, nb::arg("input"), nb::arg("size"),
        nb::arg("alpha") = 1e-4, nb::arg("beta") = 0.75, nb::arg("k") = 1.0,
        "input / (k + alpha * mean of input^2 over size neighbouring channels)^beta.");
}

void bind_vectors_and_padding(nb::module_& m) {
  m.def("one_hot", &F::one_hot, nb::arg("tensor"), nb::arg("num_classes") = -1,
        "int64 (..., num_classes) with a 1 at each class index of tensor; num_classes=-1 takes "
        "the largest index + 1.");
  m.def(
      "normalize",
      [](const Tensor& input, double p, int64_t dim, double eps, std::optional<Tensor> out) {
        const Tensor y = F::normalize(input, p, dim, eps);
        if (!out) return y;
        out->copy_(y);
        return *out;
      },
      nb::arg("input"), nb::arg("p") = 2.0, nb::arg("dim") = 1, nb::arg("eps") = 1e-12,
      nb::arg("out") = nb::none(), "input / max(||input||_p along dim, eps).");
  m.def("cosine_similarity", &F::cosine_similarity, nb::arg("x1"), nb::arg("x2"),
        nb::arg("dim") = 1, nb::arg("eps") = 1e-8,
        "Cosine similarity of x1 and x2 (broadcast) along dim, each norm clamped at eps.");
  m.def("pairwise_distance", &F::pairwise_distance, nb::arg("x1"), nb::arg("x2"),
        nb::arg("p") = 2.0, nb::arg("eps") = 1e-6, nb::arg("keepdim") = false,
        "||x1 - x2 + eps||_p along the last dim.");
  m.def(
      "pad",
      [](const Tensor& input, nb::handle pad, const std::string& mode,
         std::optional<Scalar> value) {
        const F::PadMode pad_mode = pad_mode_from(mode);
        if (value && pad_mode != F::PadMode::Constant) {
          throw nb::value_error(
              ("pad(): mode '" + mode + "' takes no value; only 'constant' fills.").c_str());
        }
        return F::pad(input, int_list(pad, "pad(): pad"), pad_mode, value.value_or(Scalar(0)));
      },
      nb::arg("input"), nb::arg("pad"), nb::arg("mode") = "constant", nb::arg("value") = nb::none(),
      "input padded by pad = (left, right) pairs, the last dim's first: 'constant' fills with "
      "value (0) any number of dims, 'reflect', 'replicate' and 'circular' pad the last 1-3; a "
      "negative pad crops.");
}

void bind_attention(nb::module_& m) {
  m.def(
      "scaled_dot_product_attention",
      [](const Tensor& q, const Tensor& k, const Tensor& v, const std::optional<Tensor>& mask,
         double dropout_p, bool is_causal, std::optional<double> scale,
         const std::optional<std::string>& alignment, Generator* gen) {
        return F::scaled_dot_product_attention(q, k, v, or_undefined(mask), dropout_p, is_causal,
                                               scale, alignment_from(alignment), gen);
      },
      nb::arg("query"), nb::arg("key"), nb::arg("value"), nb::arg("attn_mask") = nb::none(),
      nb::arg("dropout_p") = 0.0, nb::arg("is_causal") = false, nb::arg("scale") = nb::none(),
      nb::kw_only(), nb::arg("alignment") = nb::none(), nb::arg("generator").none() = nb::none(),
      "softmax(q k^T * scale + mask) v; fused when there is no attn_mask. With is_causal and "
      "query and key lengths that differ, alignment='top_left' or 'bottom_right' is required.");
  m.def(
      "rotary_embedding",
      [](const Tensor& x, int64_t position_offset, double base, const std::string& convention) {
        return F::rotary_embedding(x, position_offset, base, convention_from(convention));
      },
      nb::arg("input"), nb::arg("position_offset") = 0, nb::arg("base") = 10000.0,
      nb::arg("convention") = "interleaved",
      "x (..., T, D) with pair i at position p rotated by p * base^(-2i/D).");
  m.def(
      "rotary_embedding_tables",
      [](const Tensor& x, const Tensor& cos, const Tensor& sin, const std::string& convention) {
        return F::rotary_embedding(x, cos, sin, convention_from(convention));
      },
      nb::arg("input"), nb::arg("cos"), nb::arg("sin"), nb::arg("convention") = "interleaved",
      "x (..., T, D) with pair i at position t rotated by the angle of cos, sin (T, D / 2).");
  m.def(
      "rotary_attention",
      [](const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& cos, const Tensor& sin,
         const std::string& convention, double dropout_p, bool is_causal,
         std::optional<double> scale, Generator* gen) {
        return F::rotary_attention(q, k, v, cos, sin, convention_from(convention), dropout_p,
                                   is_causal, scale, gen);
      },
      nb::arg("query"), nb::arg("key"), nb::arg("value"), nb::arg("cos"), nb::arg("sin"),
      nb::arg("convention") = "interleaved", nb::arg("dropout_p") = 0.0,
      nb::arg("is_causal") = false, nb::arg("scale") = nb::none(),
      nb::arg("generator").none() = nb::none(),
      "scaled_dot_product_attention of rotary_embedding(q), rotary_embedding(k) and v, fused: "
      "the rotated q and k are never written to memory.");
  m.def(
      "multi_head_attention_forward",
      [](const Tensor& query, const Tensor& key, const Tensor& value, int64_t embed_dim_to_check,
         int64_t num_heads, const std::optional<Tensor>& in_proj_weight,
         const std::optional<Tensor>& in_proj_bias, const std::optional<Tensor>& bias_k,
         const std::optional<Tensor>& bias_v, bool add_zero_attn, double dropout_p,
         const Tensor& out_proj_weight, const std::optional<Tensor>& out_proj_bias, bool training,
         const std::optional<Tensor>& key_padding_mask, bool need_weights,
         const std::optional<Tensor>& attn_mask, bool use_separate_proj_weight,
         const std::optional<Tensor>& q_proj_weight, const std::optional<Tensor>& k_proj_weight,
         const std::optional<Tensor>& v_proj_weight, const std::optional<Tensor>& static_k,
         const std::optional<Tensor>& static_v, bool average_attn_weights,
         bool is_causal) -> std::pair<Tensor, std::optional<Tensor>> {
        F::MultiHeadAttentionOptions o;
        o.training = training;
        o.key_padding_mask = or_undefined(key_padding_mask);
        o.need_weights = need_weights;
        o.attn_mask = or_undefined(attn_mask);
        o.use_separate_proj_weight = use_separate_proj_weight;
        o.q_proj_weight = or_undefined(q_proj_weight);
        o.k_proj_weight = or_undefined(k_proj_weight);
        o.v_proj_weight = or_undefined(v_proj_weight);
        o.static_k = or_undefined(static_k);
        o.static_v = or_undefined(static_v);
        o.average_attn_weights = average_attn_weights;
        o.is_causal = is_causal;
        auto [out, weights] = F::multi_head_attention_forward(
            query, key, value, embed_dim_to_check, num_heads, or_undefined(in_proj_weight),
            or_undefined(in_proj_bias), or_undefined(bias_k), or_undefined(bias_v), add_zero_attn,
            dropout_p, out_proj_weight, or_undefined(out_proj_bias), o);
        if (!weights.defined()) return {out, std::nullopt};
        return {out, weights};
      },
      nb::arg("query"), nb::arg("key"), nb::arg("value"), nb::arg("embed_dim_to_check"),
      nb::arg("num_heads"), nb::arg("in_proj_weight").none(), nb::arg("in_proj_bias").none(),
      nb::arg("bias_k").none(), nb::arg("bias_v").none(), nb::arg("add_zero_attn"),
      nb::arg("dropout_p"), nb::arg("out_proj_weight"), nb::arg("out_proj_bias").none(),
      nb::arg("training") = true, nb::arg("key_padding_mask") = nb::none(),
      nb::arg("need_weights") = true, nb::arg("attn_mask") = nb::none(),
      nb::arg("use_separate_proj_weight") = false, nb::arg("q_proj_weight") = nb::none(),
      nb::arg("k_proj_weight") = nb::none(), nb::arg("v_proj_weight") = nb::none(),
      nb::arg("static_k") = nb::none(), nb::arg("static_v") = nb::none(),
      nb::arg("average_attn_weights") = true, nb::arg("is_causal") = false,
      "Multi-head attention of query (L, N, E) over key and value (S, N, E): (output, weights "
      "or None), as torch.nn.functional.multi_head_attention_forward.");
  // The standard angles only: the Python API has no RopeScaling (yet).
  m.def(
      "rotary_tables",
      [](int64_t length, int64_t dim, int64_t position_offset, double base) {
        return F::rotary_tables(length, dim, position_offset, base);
      },
      nb::arg("length"), nb::arg("dim"), nb::arg("position_offset") = 0, nb::arg("base") = 10000.0,
      "(cos, sin) float64 tables (length, dim / 2) of the standard RoPE angles.");
}

void bind_init(nb::module_& m) {
  m.def("calculate_fan_in_and_fan_out", &init::calculate_fan_in_and_fan_out, nb::arg("tensor"),
        "(fan_in, fan_out) of a weight, as PyTorch computes them.");
  m.def(
      "calculate_gain",
      [](const std::string& nonlinearity, std::optional<double> param) {
        return init::calculate_gain(nonlinearity_from(nonlinearity), param);
      },
      nb::arg("nonlinearity"), nb::arg("param") = nb::none(),
      "The recommended gain for a nonlinearity: 1 (linear, conv, sigmoid), 5/3 (tanh), "
      "sqrt(2) (relu), sqrt(2 / (1 + param^2)) (leaky_relu), 3/4 (selu).");
  m.def("uniform_", &init::uniform_, nb::arg("tensor"), nb::arg("a") = 0.0, nb::arg("b") = 1.0,
        nb::arg("generator").none() = nb::none(), "Fills tensor with samples of U(a, b).");
  m.def("normal_", &init::normal_, nb::arg("tensor"), nb::arg("mean") = 0.0, nb::arg("std") = 1.0,
        nb::arg("generator").none() = nb::none(), "Fills tensor with samples of N(mean, std^2).");
  m.def("constant_", &init::constant_, nb::arg("tensor"), nb::arg("val"), "Fills tensor with val.");
  m.def("zeros_", &init::zeros_, nb::arg("tensor"), "Fills tensor with zeros.");
  m.def("ones_", &init::ones_, nb::arg("tensor"), "Fills tensor with ones.");
  m.def("xavier_uniform_", &init::xavier_uniform_, nb::arg("tensor"), nb::arg("gain") = 1.0,
        nb::arg("generator").none() = nb::none(),
        "Glorot: fills tensor with U(-b, b), b = gain * sqrt(6 / (fan_in + fan_out)).");
  m.def("xavier_normal_", &init::xavier_normal_, nb::arg("tensor"), nb::arg("gain") = 1.0,
        nb::arg("generator").none() = nb::none(),
        "Glorot: fills tensor with N(0, std^2), std = gain * sqrt(2 / (fan_in + fan_out)).");
  const auto kaiming = [&m](const char* name, auto fill, const char* doc) {
    m.def(
        name,
        [fill](const Tensor& t, double a, const std::string& mode, const std::string& nonlinearity,
               Generator* gen) {
          return fill(t, a, fan_mode_from(mode), nonlinearity_from(nonlinearity), gen);
        },
        nb::arg("tensor"), nb::arg("a") = 0.0, nb::arg("mode") = "fan_in",
        nb::arg("nonlinearity") = "leaky_relu", nb::arg("generator").none() = nb::none(), doc);
  };
  kaiming("kaiming_uniform_", &init::kaiming_uniform_,
          "He: fills tensor with U(-b, b), b = gain * sqrt(3 / fan), fan by mode and gain "
          "calculate_gain(nonlinearity, a).");
  kaiming("kaiming_normal_", &init::kaiming_normal_,
          "He: fills tensor with N(0, std^2), std = gain / sqrt(fan), fan by mode and gain "
          "calculate_gain(nonlinearity, a).");
}

void bind_clip_grad(nb::module_& m) {
  m.def(
      "clip_grad_norm_",
      [](const std::vector<Tensor>& params, double max_norm, double norm_type,
         bool error_if_nonfinite) {
        return optim::clip_grad_norm_(params, max_norm, norm_type, error_if_nonfinite);
      },
      nb::arg("parameters"), nb::arg("max_norm"), nb::arg("norm_type") = 2.0,
      nb::arg("error_if_nonfinite") = false,
      "Scales the gradients together to a total norm <= max_norm; returns the norm before.");
  m.def(
      "clip_grad_value_",
      [](const std::vector<Tensor>& params, double clip_value) {
        optim::clip_grad_value_(params, clip_value);
      },
      nb::arg("parameters"), nb::arg("clip_value"),
      "Clamps every gradient element into [-clip_value, clip_value].");
}

void bind_recurrent(nb::module_& m) {
  // torch.rnn_tanh_cell and its siblings: one time step, biases optional.
  for (const auto& [name, fn, what] : {std::tuple{"rnn_tanh_cell", &F::rnn_tanh_cell, "tanh"},
                                       std::tuple{"rnn_relu_cell", &F::rnn_relu_cell, "relu"}}) {
    m.def(
        name,
        [fn](const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
             const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
          return fn(input, hx, w_ih, w_hh, or_undefined(b_ih), or_undefined(b_hh));
        },
        nb::arg("input"), nb::arg("hx"), nb::arg("w_ih"), nb::arg("w_hh"),
        nb::arg("b_ih") = nb::none(), nb::arg("b_hh") = nb::none(),
        (std::string("One RNN step: ") + what + "(input w_ih^T + b_ih + hx w_hh^T + b_hh).")
            .c_str());
  }
  m.def(
      "lstm_cell",
      [](const Tensor& input, const std::pair<Tensor, Tensor>& hx, const Tensor& w_ih,
         const Tensor& w_hh, const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
        return F::lstm_cell(input, hx, w_ih, w_hh, or_undefined(b_ih), or_undefined(b_hh));
      },
      nb::arg("input"), nb::arg("hx"), nb::arg("w_ih"), nb::arg("w_hh"),
      nb::arg("b_ih") = nb::none(), nb::arg("b_hh") = nb::none(),
      "One LSTM step: hx = (h, c) -> (h', c'), gates (i, f, g, o).");
  m.def(
      "gru_cell",
      [](const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
         const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
        return F::gru_cell(input, hx, w_ih, w_hh, or_undefined(b_ih), or_undefined(b_hh));
      },
      nb::arg("input"), nb::arg("hx"), nb::arg("w_ih"), nb::arg("w_hh"),
      nb::arg("b_ih") = nb::none(), nb::arg("b_hh") = nb::none(),
      "One GRU step, gates (r, z, n), b_hn inside r * (h w_hn^T + b_hn).");
  // at::lstm and its siblings: whole sequences, every layer and direction;
  // a state of None is zeros.
  const auto options = [](bool has_biases, int64_t num_layers, double dropout, bool train,
                          bool bidirectional, bool batch_first, Generator* generator) {
    return F::RecurrentOptions{has_biases,    num_layers,  dropout,  train,
                               bidirectional, batch_first, generator};
  };
  for (const auto& [name, fn] : {std::pair{"rnn_tanh", &F::rnn_tanh},
                                 std::pair{"rnn_relu", &F::rnn_relu}, std::pair{"gru", &F::gru}}) {
    m.def(
        name,
        [fn, options](const Tensor& input, const std::optional<Tensor>& hx,
                      const std::vector<Tensor>& params, bool has_biases, int64_t num_layers,
                      double dropout, bool train, bool bidirectional, bool batch_first,
                      Generator* generator) {
          return fn(input, or_undefined(hx), params,
                    options(has_biases, num_layers, dropout, train, bidirectional, batch_first,
                            generator));
        },
        nb::arg("input"), nb::arg("hx").none(), nb::arg("params"), nb::arg("has_biases"),
        nb::arg("num_layers"), nb::arg("dropout"), nb::arg("train"), nb::arg("bidirectional"),
        nb::arg("batch_first"), nb::arg("generator").none() = nb::none(),
        "A whole sequence through every layer and direction -> (output, h_n).");
  }
  m.def(
      "lstm",
      [options](const Tensor& input, const std::optional<std::pair<Tensor, Tensor>>& hx,
                const std::vector<Tensor>& params, bool has_biases, int64_t num_layers,
                double dropout, bool train, bool bidirectional, bool batch_first,
                Generator* generator) {
        return F::lstm(
            input, hx.value_or(std::pair<Tensor, Tensor>{}), params,
            options(has_biases, num_layers, dropout, train, bidirectional, batch_first, generator));
      },
      nb::arg("input"), nb::arg("hx").none(), nb::arg("params"), nb::arg("has_biases"),
      nb::arg("num_layers"), nb::arg("dropout"), nb::arg("train"), nb::arg("bidirectional"),
      nb::arg("batch_first"), nb::arg("generator").none() = nb::none(),
      "A whole sequence through every layer and direction; hx = (h_0, c_0) -> (output, h_n, "
      "c_n).");
}

}  // namespace

void bind_nn(nb::module_& m) {
  nb::module_ nn = m.def_submodule("_nn", "The kernels under stride.nn.");
  bind_activations(nn);
  bind_composed_activations(nn);
  bind_composed_losses(nn);
  bind_composed_layers(nn);
  bind_vectors_and_padding(nn);
  bind_layers(nn);
  bind_losses(nn);
  bind_attention(nn);
  bind_conv(nn);
  nb::module_ init_module = nn.def_submodule("init", "torch.nn.init's initialisers.");
  bind_init(init_module);
  bind_clip_grad(nn);
  bind_recurrent(nn);
}

}  // namespace stride::python
