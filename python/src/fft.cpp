// Complex numbers (view_as_real, real, conj, ...) as Tensor methods and
// stride.* functions, and torch.fft's functions as stride.fft (the
// extension's _fft, re-exported by python/stride/fft.py), with PyTorch's
// argument names.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "bindings.h"
#include "op_docs.h"

namespace stride::python {

namespace {

using TensorClass = nb::class_<Tensor>;

// norm= as PyTorch takes it: None is "backward".
std::string norm_arg(nb::handle norm) {
  if (norm.is_none()) return "backward";
  if (!nb::isinstance<nb::str>(norm)) {
    throw nb::type_error(("fft: norm must be a str (\"backward\", \"forward\" or \"ortho\") or "
                          "None; got " +
                          std::string(nb::inst_name(norm).c_str()) + ".")
                             .c_str());
  }
  return nb::cast<std::string>(norm);
}

// s= and dim= of the n-dimensional transforms: None, an int or a sequence.
fft::OptionalDims dims_or_none(nb::handle value, const char* what) {
  if (value.is_none()) return std::nullopt;
  if (const std::optional<int64_t> v = index_value(value, what)) return std::vector<int64_t>{*v};
  return int_list(value, what);
}

void bind_complex(nb::module_& m, TensorClass& cls) {
  def_both(m, cls, "view_as_real", [](const Tensor& t) { return view_as_real(t); });
  def_both(m, cls, "view_as_complex", [](const Tensor& t) { return view_as_complex(t); });
  def_function(
      m, "real", [](const Tensor& t) { return real(t); }, nb::arg("input"));
  def_function(
      m, "imag", [](const Tensor& t) { return imag(t); }, nb::arg("input"));
  cls.def_prop_ro(
      "real", [](const Tensor& t) { return real(t); }, op_doc("real").c_str());
  cls.def_prop_ro(
      "imag", [](const Tensor& t) { return imag(t); }, op_doc("imag").c_str());
  def_both(m, cls, "conj", [](const Tensor& t) { return conj(t); });
  def_both(m, cls, "conj_physical", [](const Tensor& t) { return conj_physical(t); });
  def_both(m, cls, "resolve_conj", [](const Tensor& t) { return resolve_conj(t); });
  def_both(m, cls, "angle", [](const Tensor& t) { return angle(t); });
  def_both(m, cls, "isreal", [](const Tensor& t) { return isreal(t); });
  def_method(cls, "is_complex", [](const Tensor& t) { return t.is_complex(); });
  def_function(
      m, "is_complex", [](const Tensor& t) { return t.is_complex(); }, nb::arg("input"));
  def_function(
      m, "complex", [](const Tensor& re, const Tensor& im) { return complex(re, im); },
      nb::arg("real"), nb::arg("imag"));
  def_function(
      m, "polar", [](const Tensor& abs, const Tensor& angle) { return polar(abs, angle); },
      nb::arg("abs"), nb::arg("angle"));
}

using OneDim = Tensor (*)(const Tensor&, std::optional<int64_t>, int64_t, std::string_view);
using NDim = Tensor (*)(const Tensor&,
                        const fft::OptionalDims&,
                        const fft::OptionalDims&,
                        std::string_view);
using TwoDim = Tensor (*)(const Tensor&,
                          const fft::OptionalDims&,
                          const std::vector<int64_t>&,
                          std::string_view);

void bind_transforms(nb::module_& f) {
  const std::pair<const char*, OneDim> one_dim[] = {{"fft", &fft::fft},   {"ifft", &fft::ifft},
                                                    {"rfft", &fft::rfft}, {"irfft", &fft::irfft},
                                                    {"hfft", &fft::hfft}, {"ihfft", &fft::ihfft}};
  for (const auto& [name, fn] : one_dim) {
    f.def(
        name,
        [fn](const Tensor& x, std::optional<int64_t> n, int64_t dim, nb::handle norm) {
          return fn(x, n, dim, norm_arg(norm));
        },
        nb::arg("input"), nb::arg("n") = nb::none(), nb::arg("dim") = -1,
        nb::arg("norm") = nb::none(), op_doc(std::string("fft.") + name).c_str());
  }
  const std::pair<const char*, NDim> n_dim[] = {{"fftn", &fft::fftn},   {"ifftn", &fft::ifftn},
                                                {"rfftn", &fft::rfftn}, {"irfftn", &fft::irfftn},
                                                {"hfftn", &fft::hfftn}, {"ihfftn", &fft::ihfftn}};
  for (const auto& [name, fn] : n_dim) {
    f.def(
        name,
        [fn](const Tensor& x, nb::handle s, nb::handle dim, nb::handle norm) {
          return fn(x, dims_or_none(s, "s"), dims_or_none(dim, "dim"), norm_arg(norm));
        },
        nb::arg("input"), nb::arg("s") = nb::none(), nb::arg("dim") = nb::none(),
        nb::arg("norm") = nb::none(), op_doc(std::string("fft.") + name).c_str());
  }
  const std::pair<const char*, TwoDim> two_dim[] = {
      {"fft2", &fft::fft2},     {"ifft2", &fft::ifft2}, {"rfft2", &fft::rfft2},
      {"irfft2", &fft::irfft2}, {"hfft2", &fft::hfft2}, {"ihfft2", &fft::ihfft2}};
  for (const auto& [name, fn] : two_dim) {
    f.def(
        name,
        [fn](const Tensor& x, nb::handle s, nb::handle dim, nb::handle norm) {
          // An int dim is a one-dim list, as PyTorch's IntArrayRef takes it.
          const std::vector<int64_t> dims =
              dims_or_none(dim, "dim").value_or(std::vector<int64_t>{-2, -1});
          return fn(x, dims_or_none(s, "s"), dims, norm_arg(norm));
        },
        nb::arg("input"), nb::arg("s") = nb::none(), nb::arg("dim") = nb::make_tuple(-2, -1),
        nb::arg("norm") = nb::none(), op_doc(std::string("fft.") + name).c_str());
  }
}

void bind_helpers(nb::module_& f) {
  for (const bool onesided : {false, true}) {
    const char* name = onesided ? "rfftfreq" : "fftfreq";
    f.def(
        name,
        [onesided](int64_t n, double d, nb::handle dtype, nb::handle device, bool requires_grad) {
          const TensorOptions options = options_from(dtype, device);
          Tensor out = onesided ? fft::rfftfreq(n, d, options) : fft::fftfreq(n, d, options);
          return requires_grad ? out.requires_grad_(true) : out;
        },
        nb::arg("n"), nb::arg("d") = 1.0, nb::kw_only(), nb::arg("dtype") = nb::none(),
        nb::arg("device") = nb::none(), nb::arg("requires_grad") = false,
        op_doc(std::string("fft.") + name).c_str());
  }
  for (const bool inverse : {false, true}) {
    const char* name = inverse ? "ifftshift" : "fftshift";
    f.def(
        name,
        [inverse](const Tensor& x, nb::handle dim) {
          const fft::OptionalDims dims = dims_or_none(dim, "dim");
          return inverse ? fft::ifftshift(x, dims) : fft::fftshift(x, dims);
        },
        nb::arg("input"), nb::arg("dim") = nb::none(), op_doc(std::string("fft.") + name).c_str());
  }
}

}  // namespace

void bind_complex_and_fft(nb::module_& m, TensorClass& cls) {
  bind_complex(m, cls);
  nb::module_ f = m.def_submodule("_fft", "torch.fft's transforms (stride.fft).");
  bind_transforms(f);
  bind_helpers(f);
}

}  // namespace stride::python
