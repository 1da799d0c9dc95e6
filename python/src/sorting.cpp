// Sorting, sampling, scans, all/any and the composite products as Tensor
// methods and stride.* functions, with PyTorch's argument names; the ops
// returning (values, indices) return PyTorch's named tuples.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "bindings.h"
#include "op_docs.h"

namespace stride::python {

namespace {

using TensorClass = nb::class_<Tensor>;

// An int or a sequence of ints, as roll's shifts and dims and flip's dims.
std::vector<int64_t> ints(nb::handle value, const char* what) {
  if (const std::optional<int64_t> v = index_value(value, what)) return {*v};
  return int_list(value, what);
}

void bind_sorting(nb::module_& m, TensorClass& cls) {
  def_both(
      m, cls, "sort",
      [](const Tensor& t, int64_t dim, bool descending, bool stable) {
        return values_indices("sort", t.sort(dim, descending, stable));
      },
      nb::arg("dim") = -1, nb::arg("descending") = false, nb::kw_only(), nb::arg("stable") = false);
  def_both(
      m, cls, "argsort",
      [](const Tensor& t, int64_t dim, bool descending, bool stable) {
        return t.argsort(dim, descending, stable);
      },
      nb::arg("dim") = -1, nb::arg("descending") = false, nb::kw_only(), nb::arg("stable") = false);
  def_both(
      m, cls, "topk",
      [](const Tensor& t, int64_t k, int64_t dim, bool largest, bool sorted) {
        return values_indices("topk", t.topk(k, dim, largest, sorted));
      },
      nb::arg("k"), nb::arg("dim") = -1, nb::arg("largest") = true, nb::arg("sorted") = true);
  def_both(
      m, cls, "multinomial",
      [](const Tensor& t, int64_t n, bool replacement, Generator* gen) {
        return t.multinomial(n, replacement, gen);
      },
      nb::arg("num_samples"), nb::arg("replacement") = false, nb::kw_only(),
      nb::arg("generator").none() = nb::none());
}

void bind_scans_and_tests(nb::module_& m, TensorClass& cls) {
  for (const bool product : {false, true}) {
    def_both(
        m, cls, product ? "cumprod" : "cumsum",
        [product](const Tensor& t, int64_t dim, nb::handle dtype) {
          const std::optional<ScalarType> d = optional_dtype(dtype);
          return product ? t.cumprod(dim, d) : t.cumsum(dim, d);
        },
        nb::arg("dim"), nb::kw_only(), nb::arg("dtype") = nb::none());
  }
  for (const bool every : {true, false}) {
    def_both(
        m, cls, every ? "all" : "any",
        [every](const Tensor& t, nb::handle dim, bool keepdim) {
          return every ? t.all(dims_arg(dim), keepdim) : t.any(dims_arg(dim), keepdim);
        },
        nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  }
  def_both(m, cls, "isnan", [](const Tensor& t) { return t.isnan(); });
  def_both(m, cls, "isinf", [](const Tensor& t) { return t.isinf(); });
  def_both(m, cls, "isfinite", [](const Tensor& t) { return t.isfinite(); });
}

void bind_reorders_and_products(nb::module_& m, TensorClass& cls) {
  def_both(
      m, cls, "flip", [](const Tensor& t, nb::handle dims) { return t.flip(ints(dims, "dims")); },
      nb::arg("dims"));
  def_method(cls, "flip",
             [](const Tensor& t, nb::args dims) { return t.flip(shape_from_args(dims, "dims")); });
  def_both(
      m, cls, "roll",
      [](const Tensor& t, nb::handle shifts, nb::handle dims) {
        return t.roll(ints(shifts, "shifts"),
                      dims.is_none() ? std::vector<int64_t>{} : ints(dims, "dims"));
      },
      nb::arg("shifts"), nb::arg("dims") = nb::none());
  def_both(
      m, cls, "outer", [](const Tensor& a, const Tensor& b) { return outer(a, b); },
      nb::arg("vec2"));
  def_both(
      m, cls, "addmm",
      [](const Tensor& t, const Tensor& m1, const Tensor& m2, const Scalar& beta,
         const Scalar& alpha) { return addmm(t, m1, m2, beta, alpha); },
      nb::arg("mat1"), nb::arg("mat2"), nb::kw_only(), nb::arg("beta") = 1, nb::arg("alpha") = 1);
  def_both(
      m, cls, "baddbmm",
      [](const Tensor& t, const Tensor& b1, const Tensor& b2, const Scalar& beta,
         const Scalar& alpha) { return baddbmm(t, b1, b2, beta, alpha); },
      nb::arg("batch1"), nb::arg("batch2"), nb::kw_only(), nb::arg("beta") = 1,
      nb::arg("alpha") = 1);
}

}  // namespace

nb::object values_indices(const char* kind, std::pair<Tensor, Tensor> result) {
  // Held for the interpreter's life: torn down after it, a module object's
  // destructor would run without the GIL.
  static const nb::object* types = new nb::object(nb::module_::import_("stride.return_types"));
  return types->attr(kind)(result.first, result.second);
}

void bind_sorting_and_scans(nb::module_& m, TensorClass& cls) {
  bind_sorting(m, cls);
  bind_scans_and_tests(m, cls);
  bind_reorders_and_products(m, cls);
}

}  // namespace stride::python
