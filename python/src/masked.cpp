// stride._stride._masked: the masked ops of include/stride/masked.h with
// positional arguments (dim: None, an int or a sequence; dtype and masks:
// None or given). python/stride/masked.py gives them torch.masked's
// signatures and keyword names.
#include <nanobind/stl/optional.h>

#include "bindings.h"
#include "stride/masked.h"

namespace stride::python {

namespace {

using MaskArg = const std::optional<Tensor>&;
using Reduction = Tensor (*)(const Tensor&, IntArrayRef, bool, std::optional<ScalarType>, MaskArg);
using ArgReduction =
    Tensor (*)(const Tensor&, std::optional<int64_t>, bool, std::optional<ScalarType>, MaskArg);
using Normalization = Tensor (*)(const Tensor&, int64_t, std::optional<ScalarType>, MaskArg);

// (input, dim, keepdim, dtype, mask) -> a reduction over dim.
void def_reduction(nb::module_& m, const char* name, Reduction op, const char* doc) {
  m.def(
      name,
      [op](const Tensor& input, nb::handle dim, bool keepdim, nb::handle dtype, MaskArg mask) {
        return op(input, dims_arg(dim), keepdim, optional_dtype(dtype), mask);
      },
      nb::arg("input"), nb::arg("dim").none(), nb::arg("keepdim"), nb::arg("dtype").none(),
      nb::arg("mask").none(), doc);
}

void def_arg_reduction(nb::module_& m, const char* name, ArgReduction op, const char* doc) {
  m.def(
      name,
      [op](const Tensor& input, std::optional<int64_t> dim, bool keepdim, nb::handle dtype,
           MaskArg mask) { return op(input, dim, keepdim, optional_dtype(dtype), mask); },
      nb::arg("input"), nb::arg("dim").none(), nb::arg("keepdim"), nb::arg("dtype").none(),
      nb::arg("mask").none(), doc);
}

// (input, dim, dtype, mask) -> a scan or normalization along one dim.
void def_normalization(nb::module_& m, const char* name, Normalization op, const char* doc) {
  m.def(
      name,
      [op](const Tensor& input, int64_t dim, nb::handle dtype, MaskArg mask) {
        return op(input, dim, optional_dtype(dtype), mask);
      },
      nb::arg("input"), nb::arg("dim"), nb::arg("dtype").none(), nb::arg("mask").none(), doc);
}

void bind_reductions(nb::module_& m) {
  def_reduction(m, "sum", &masked::sum, "The sum of the masked-in elements.");
  def_reduction(m, "prod", &masked::prod, "The product of the masked-in elements.");
  def_reduction(m, "amax", &masked::amax, "The largest masked-in element.");
  def_reduction(m, "amin", &masked::amin, "The smallest masked-in element.");
  def_reduction(m, "mean", &masked::mean, "The mean of the masked-in elements.");
  def_reduction(m, "logsumexp", &masked::logsumexp, "log(sum(exp)) of the masked-in elements.");
  def_arg_reduction(m, "argmax", &masked::argmax, "The index of the largest masked-in element.");
  def_arg_reduction(m, "argmin", &masked::argmin, "The index of the smallest masked-in element.");
  m.def(
      "median",
      [](const Tensor& input, int64_t dim, bool keepdim, nb::handle dtype, MaskArg mask) {
        return masked::median(input, dim, keepdim, optional_dtype(dtype), mask);
      },
      nb::arg("input"), nb::arg("dim"), nb::arg("keepdim"), nb::arg("dtype").none(),
      nb::arg("mask").none(), "The lower median of the masked-in elements along dim.");
  m.def(
      "norm",
      [](const Tensor& input, double ord, nb::handle dim, bool keepdim, nb::handle dtype,
         MaskArg mask) {
        return masked::norm(input, ord, dims_arg(dim), keepdim, optional_dtype(dtype), mask);
      },
      nb::arg("input"), nb::arg("ord"), nb::arg("dim").none(), nb::arg("keepdim"),
      nb::arg("dtype").none(), nb::arg("mask").none(),
      "The vector norm of the masked-in elements.");
  for (const auto& [name, op] :
       {std::pair{"var", &masked::var}, std::pair{"std", &masked::std_dev}}) {
    m.def(
        name,
        [op](const Tensor& input, nb::handle dim, double correction, bool keepdim, nb::handle dtype,
             MaskArg mask) {
          return op(input, dims_arg(dim), correction, keepdim, optional_dtype(dtype), mask);
        },
        nb::arg("input"), nb::arg("dim").none(), nb::arg("correction"), nb::arg("keepdim"),
        nb::arg("dtype").none(), nb::arg("mask").none(),
        "The variance (standard deviation) of the masked-in elements.");
  }
}

void bind_normalizations(nb::module_& m) {
  def_normalization(m, "cumsum", &masked::cumsum, "Running sums of the masked-in elements.");
  def_normalization(m, "cumprod", &masked::cumprod, "Running products of the masked-in elements.");
  def_normalization(m, "softmax", &masked::softmax, "softmax over the masked-in elements.");
  def_normalization(m, "log_softmax", &masked::log_softmax,
                    "log_softmax over the masked-in elements.");
  def_normalization(m, "softmin", &masked::softmin, "softmin over the masked-in elements.");
  m.def(
      "normalize",
      [](const Tensor& input, double ord, int64_t dim, double eps, nb::handle dtype, MaskArg mask) {
        return masked::normalize(input, ord, dim, eps, optional_dtype(dtype), mask);
      },
      nb::arg("input"), nb::arg("ord"), nb::arg("dim"), nb::arg("eps"), nb::arg("dtype").none(),
      nb::arg("mask").none(), "input over its masked norm along dim.");
  m.def(
      "logaddexp",
      [](const Tensor& input, const Tensor& other, nb::handle dtype, MaskArg input_mask,
         MaskArg other_mask) {
        return masked::logaddexp(input, other, optional_dtype(dtype), input_mask, other_mask);
      },
      nb::arg("input"), nb::arg("other"), nb::arg("dtype").none(), nb::arg("input_mask").none(),
      nb::arg("other_mask").none(), "logaddexp with masked-out elements read as -inf.");
}

}  // namespace

void bind_masked(nb::module_& m) {
  nb::module_ sub = m.def_submodule("_masked", "The masked ops (stride.masked).");
  bind_reductions(sub);
  bind_normalizations(sub);
}

}  // namespace stride::python
