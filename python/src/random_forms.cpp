// PyTorch's other random forms, drawn from stride's Philox generators (one
// rand or randn call, so the stream advances as for those): torch.normal
// with tensor or number mean and std, torch.bernoulli, and the in-place
// samplers exponential_, geometric_, log_normal_ and cauchy_, each a
// transform of uniform or normal draws. The transforms are written with ops:
// normal's result has the gradient of mean + std * noise.
#include <nanobind/stl/optional.h>

#include <cmath>
#include <numbers>
#include <string>

#include "bindings.h"
#include "op_docs.h"

namespace stride::python {

namespace {

using TensorClass = nb::class_<Tensor>;

// Uniform draws in [0, 1) of t's shape: in float32 for float32 and 16-bit
// floats (a transform then rounds once), float64 otherwise.
Tensor uniform_like(const Tensor& t, Generator* gen) {
  const ScalarType d = t.dtype() == kFloat64 || !t.is_floating_point() ? kFloat64 : kFloat32;
  return rand(t.sizes(), t.options().dtype(d), gen);
}

void check_floating(const Tensor& t, const char* op) {
  if (!t.is_floating_point()) {
    throw nb::type_error((std::string(op) + "() fills floating-point tensors; got a " +
                          std::string(to_string(t.dtype())) + " one.")
                             .c_str());
  }
}

// self filled in place with draw(uniform draws, parameter); returns self.
// An integer-valued draw (geometric_) fills integer tensors too.
template <class Draw>
auto sampler(const char* op, Draw draw, bool integer_valued = false) {
  return [op, draw, integer_valued](nb::object self, double parameter, Generator* gen) {
    Tensor& t = nb::cast<Tensor&>(self);
    if (!integer_valued || t.dtype() == kBool) check_floating(t, op);
    NoGradGuard no_grad;
    t.copy_(draw(uniform_like(t, gen), parameter));
    return self;
  };
}

Tensor normal_draws(const Tensor& mean, const Tensor& std, Generator* gen) {
  const DimVector shape = broadcast_shapes(mean.sizes(), std.sizes(), "normal");
  const ScalarType d = promote_types(mean.dtype(), std.dtype());
  if (!is_floating_point(d)) throw nb::type_error("normal(): mean and std must be floating-point.");
  return mean + std * randn(shape, mean.options().dtype(d), gen);
}

void bind_normal_and_bernoulli(nb::module_& m) {
  def_function(
      m, "normal",
      [](const Tensor& mean, const Tensor& std, Generator* gen) {
        return normal_draws(mean, std, gen);
      },
      nb::arg("mean"), nb::arg("std"), nb::kw_only(), nb::arg("generator").none() = nb::none());
  def_function(
      m, "normal",
      [](const Tensor& mean, double std, Generator* gen) {
        return normal_draws(mean, scalar_tensor(std, mean.options()), gen);
      },
      nb::arg("mean"), nb::arg("std") = 1.0, nb::kw_only(),
      nb::arg("generator").none() = nb::none());
  def_function(
      m, "normal",
      [](double mean, const Tensor& std, Generator* gen) {
        return normal_draws(scalar_tensor(mean, std.options()), std, gen);
      },
      nb::arg("mean"), nb::arg("std"), nb::kw_only(), nb::arg("generator").none() = nb::none());
  def_function(
      m, "normal",
      [](double mean, double std, nb::handle size, Generator* gen, nb::handle dtype,
         nb::handle /*layout: stride tensors are strided*/, nb::handle device, bool /*pin_memory*/,
         bool requires_grad) {
        Tensor t = randn(int_list(size, "normal(): size"), options_from(dtype, device), gen);
        t = t * std + mean;
        return requires_grad ? t.requires_grad_(true) : t;
      },
      nb::arg("mean"), nb::arg("std"), nb::arg("size"), nb::kw_only(),
      nb::arg("generator").none() = nb::none(), nb::arg("dtype") = nb::none(),
      nb::arg("layout") = nb::none(), nb::arg("device") = nb::none(), nb::arg("pin_memory") = false,
      nb::arg("requires_grad") = false);
  def_function(
      m, "bernoulli",
      [](const Tensor& probs, std::optional<double> p, Generator* gen) {
        check_floating(probs, "bernoulli");
        const Tensor u = uniform_like(probs, gen);
        const Tensor hits = p ? u.lt(*p) : u.lt(probs.to(u.dtype()));
        // Written over probs, so that autograd records it with PyTorch's zero
        // gradient.
        return probs.masked_fill(hits, 1).masked_fill(logical_not(hits), 0);
      },
      nb::arg("input"), nb::arg("p") = nb::none(), nb::kw_only(),
      nb::arg("generator").none() = nb::none());
}

void bind_inplace_samplers(TensorClass& cls) {
  // Inverse CDFs of the uniform draw u in [0, 1); 1 - u is in (0, 1].
  def_method(cls, "exponential_",
             sampler("exponential_",
                     [](const Tensor& u, double lambd) { return (-u).log1p() * (-1.0 / lambd); }),
             nb::arg("lambd") = 1.0, nb::kw_only(), nb::arg("generator").none() = nb::none());
  def_method(cls, "geometric_",
             sampler(
                 "geometric_",
                 [](const Tensor& u, double p) {
                   // The number of trials up to the first success, at least one.
                   return ((-u).log1p() / std::log1p(-p)).ceil().clamp(1.0, std::nullopt);
                 },
                 true),
             nb::arg("p"), nb::kw_only(), nb::arg("generator").none() = nb::none());
  def_method(
      cls, "cauchy_",
      [](nb::object self, double median, double sigma, Generator* gen) {
        Tensor& t = nb::cast<Tensor&>(self);
        check_floating(t, "cauchy_");
        NoGradGuard no_grad;
        t.copy_(((uniform_like(t, gen) - 0.5) * std::numbers::pi).tan() * sigma + median);
        return self;
      },
      nb::arg("median") = 0.0, nb::arg("sigma") = 1.0, nb::kw_only(),
      nb::arg("generator").none() = nb::none());
  def_method(
      cls, "log_normal_",
      [](nb::object self, double mean, double std, Generator* gen) {
        Tensor& t = nb::cast<Tensor&>(self);
        check_floating(t, "log_normal_");
        NoGradGuard no_grad;
        const ScalarType d = t.dtype() == kFloat64 ? kFloat64 : kFloat32;
        t.copy_((randn(t.sizes(), t.options().dtype(d), gen) * std + mean).exp());
        return self;
      },
      nb::arg("mean") = 1.0, nb::arg("std") = 2.0, nb::kw_only(),
      nb::arg("generator").none() = nb::none());
}

}  // namespace

void bind_random_forms(nb::module_& m, TensorClass& cls) {
  bind_normal_and_bernoulli(m);
  bind_inplace_samplers(cls);
}

}  // namespace stride::python
