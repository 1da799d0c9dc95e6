// The elementwise composites of include/stride/ops.h (logical_*, fmax/fmin,
// round(decimals=), isclose, addcmul/addcdiv) and PyTorch's small aliases of
// listed ops (clamp_min/clamp_max, positive, rsub, true_divide, __rdiv__)
// as Tensor methods and stride.* functions, plus linspace and logspace.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <string>

#include "bindings.h"
#include "op_docs.h"

namespace stride::python {

namespace {

using TensorClass = nb::class_<Tensor>;

// A number beside a tensor, in the dtype PyTorch's wrapped numbers take.
Tensor number_beside(const Scalar& s, const Tensor& like) {
  return scalar_tensor(
      s, like.options().dtype(s.is_floating_point() && !like.is_floating_point() ? kFloat32
                                                                                 : like.dtype()));
}

// linspace's and logspace's start and end: a number or a 0-d tensor.
double endpoint(nb::handle h, const char* op) {
  if (nb::isinstance<Tensor>(h)) {
    const Tensor& t = nb::cast<const Tensor&>(h);
    if (t.numel() != 1) {
      throw nb::value_error((std::string(op) + "(): start and end as tensors must be 0-d; got " +
                             std::to_string(t.dim()) + " dims.")
                                .c_str());
    }
    return t.to(kFloat64).item<double>();
  }
  double value = 0;
  if (!nb::try_cast(h, value)) {
    throw nb::type_error((std::string(op) + "(): start and end are numbers or 0-d tensors; got a " +
                          nb::cast<std::string>(nb::str(h.type())) + ".")
                             .c_str());
  }
  return value;
}

void bind_logical_and_nan_aware(nb::module_& m, TensorClass& cls) {
  using Binary = Tensor (*)(const Tensor&, const Tensor&);
  for (const auto& [name, f] : {std::pair<const char*, Binary>{"logical_and", &logical_and},
                                {"logical_or", &logical_or},
                                {"logical_xor", &logical_xor},
                                {"fmax", &fmax},
                                {"fmin", &fmin}}) {
    def_both(m, cls, name, f, nb::arg("other"));
  }
  def_both(m, cls, "logical_not", &logical_not);
  def_both(
      m, cls, "round", [](const Tensor& t, int64_t decimals) { return round(t, decimals); },
      nb::kw_only(), nb::arg("decimals"));
  def_both(
      m, cls, "isclose",
      [](const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
        return isclose(a, b, rtol, atol, equal_nan);
      },
      nb::arg("other"), nb::arg("rtol") = 1e-5, nb::arg("atol") = 1e-8,
      nb::arg("equal_nan") = false);
}

void bind_aliases(nb::module_& m, TensorClass& cls) {
  for (const bool multiply : {true, false}) {
    def_both(
        m, cls, multiply ? "addcmul" : "addcdiv",
        [multiply](const Tensor& t, const Tensor& t1, const Tensor& t2, const Scalar& value) {
          return multiply ? addcmul(t, t1, t2, value) : addcdiv(t, t1, t2, value);
        },
        nb::arg("tensor1"), nb::arg("tensor2"), nb::kw_only(), nb::arg("value") = 1);
  }
  for (const bool lower : {true, false}) {
    const char* name = lower ? "clamp_min" : "clamp_max";
    def_both(
        m, cls, name,
        [lower](const Tensor& t, const Scalar& bound) {
          return lower ? t.clamp(bound, std::nullopt) : t.clamp(std::nullopt, bound);
        },
        nb::arg(lower ? "min" : "max"));
    def_both(
        m, cls, name,
        [lower](const Tensor& t, const Tensor& bound) {
          return lower ? clamp(t, bound, std::nullopt) : clamp(t, std::nullopt, bound);
        },
        nb::arg(lower ? "min" : "max"));
  }
  def_both(m, cls, "positive", [](const Tensor& t) { return t; });
  def_function(
      m, "rsub",
      [](const Tensor& t, const Tensor& other, const Scalar& alpha) {
        return sub(other, t, alpha);
      },
      nb::arg("input"), nb::arg("other"), nb::kw_only(), nb::arg("alpha") = 1);
  def_function(
      m, "rsub",
      [](const Tensor& t, const Scalar& other, const Scalar& alpha) {
        return sub(number_beside(other, t), t, alpha);
      },
      nb::arg("input"), nb::arg("other"), nb::kw_only(), nb::arg("alpha") = 1);
  def_both(
      m, cls, "true_divide", [](const Tensor& a, const Tensor& b) { return a / b; },
      nb::arg("other"));
  def_both(
      m, cls, "true_divide", [](const Tensor& a, const Scalar& b) { return a / b; },
      nb::arg("other"));
  // Python 2's name of __rtruediv__, which PyTorch keeps.
  cls.def("__rdiv__", [](const Tensor& a, const Tensor& b) { return b / a; })
      .def("__rdiv__", [](const Tensor& a, const Scalar& b) { return b / a; });
}

void bind_spaced_factories(nb::module_& m) {
  def_function(
      m, "linspace",
      [](nb::handle start, nb::handle end, int64_t steps, nb::handle dtype, nb::handle device,
         bool requires_grad) {
        Tensor t = linspace(endpoint(start, "linspace"), endpoint(end, "linspace"), steps,
                            options_from(dtype, device));
        return requires_grad ? t.requires_grad_(true) : t;
      },
      nb::arg("start"), nb::arg("end"), nb::arg("steps"), nb::kw_only(),
      nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(),
      nb::arg("requires_grad") = false);
  def_function(
      m, "logspace",
      [](nb::handle start, nb::handle end, int64_t steps, double base, nb::handle dtype,
         nb::handle device, bool requires_grad) {
        Tensor t = logspace(endpoint(start, "logspace"), endpoint(end, "logspace"), steps, base,
                            options_from(dtype, device));
        return requires_grad ? t.requires_grad_(true) : t;
      },
      nb::arg("start"), nb::arg("end"), nb::arg("steps"), nb::arg("base") = 10.0, nb::kw_only(),
      nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(),
      nb::arg("requires_grad") = false);
}

}  // namespace

void bind_elementwise_composites(nb::module_& m, TensorClass& cls) {
  bind_logical_and_nan_aware(m, cls);
  bind_aliases(m, cls);
  bind_spaced_factories(m);
}

}  // namespace stride::python
