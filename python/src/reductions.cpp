// The reductions beyond sum and mean (prod, nansum, median, quantile, ...),
// the scatters and index_* ops, and searching and counting (searchsorted,
// unique, ...) as Tensor methods and stride.* functions with PyTorch's
// argument names; (values, indices) results are PyTorch's named tuples.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "bindings.h"
#include "op_docs.h"

namespace stride::python {

namespace {

using TensorClass = nb::class_<Tensor>;

// An optional int argument (dim=, start=); a TypeError naming `what` for
// anything else.
std::optional<int64_t> optional_dim(nb::handle dim, const char* what) {
  if (dim.is_none()) return std::nullopt;
  if (const std::optional<int64_t> v = index_value(dim, what)) return v;
  throw nb::type_error((std::string(what) + " must be an int or None; got " +
                        nb::type_name(dim.type()).c_str() + ".")
                           .c_str());
}

// A Python number or tensor as a tensor (searchsorted's and isin's
// operands, quantile's q), numbers 0-d of `like`'s dtype when it is floating.
Tensor tensor_or_number(nb::handle value, const Tensor& like, const char* what) {
  if (nb::isinstance<Tensor>(value)) return nb::cast<Tensor>(value);
  Scalar s;
  if (!nb::try_cast<Scalar>(value, s)) {
    throw nb::type_error((std::string(what) + " must be a tensor or a number; got " +
                          nb::type_name(value.type()).c_str() + ".")
                             .c_str());
  }
  if (s.is_floating_point()) {
    return full({}, s, like.options().dtype(like.is_floating_point() ? like.dtype() : kFloat32));
  }
  return full({}, s, like.options().dtype(s.is_integral() ? kInt64 : kBool));
}

// A scalar argument given as a number or a one-element tensor (index_fill's
// value, scatter's value).
Scalar scalar_of(nb::handle value) {
  if (nb::isinstance<Tensor>(value)) return nb::cast<Tensor>(value).item();
  return nb::cast<Scalar>(value);
}

nb::object pair_as(const char* kind, std::pair<Tensor, Tensor> r) {
  return values_indices(kind, std::move(r));
}

void bind_variance(nb::module_& m, TensorClass& cls) {
  for (const bool is_std : {false, true}) {
    def_both(
        m, cls, is_std ? "std_mean" : "var_mean",
        [is_std](const Tensor& t, nb::handle dim, std::optional<bool> unbiased,
                 std::optional<double> correction, bool keepdim) {
          if (nb::isinstance<nb::bool_>(dim)) {  // var_mean(input, unbiased)
            unbiased = nb::cast<bool>(dim);
            dim = nb::none();
          }
          const double c = correction.value_or(unbiased.value_or(true) ? 1 : 0);
          const auto r = is_std ? std_mean(t, dims_arg(dim), c, keepdim)
                                : var_mean(t, dims_arg(dim), c, keepdim);
          return nb::make_tuple(r.first, r.second);
        },
        nb::arg("dim") = nb::none(), nb::arg("unbiased") = nb::none(), nb::kw_only(),
        nb::arg("correction") = nb::none(), nb::arg("keepdim") = false);
  }
}

void bind_products_and_counts(nb::module_& m, TensorClass& cls) {
  def_both(
      m, cls, "prod",
      [](const Tensor& t, nb::handle dim, bool keepdim, nb::handle dtype) {
        return prod(t, optional_dim(dim, "prod(): dim"), keepdim, optional_dtype(dtype));
      },
      nb::arg("dim") = nb::none(), nb::arg("keepdim") = false, nb::kw_only(),
      nb::arg("dtype") = nb::none());
  def_both(
      m, cls, "nansum",
      [](const Tensor& t, nb::handle dim, bool keepdim, nb::handle dtype) {
        return nansum(t, dims_arg(dim), keepdim, optional_dtype(dtype));
      },
      nb::arg("dim") = nb::none(), nb::arg("keepdim") = false, nb::kw_only(),
      nb::arg("dtype") = nb::none());
  def_both(
      m, cls, "nanmean",
      [](const Tensor& t, nb::handle dim, bool keepdim, nb::handle dtype) {
        const std::optional<ScalarType> d = optional_dtype(dtype);
        return nanmean(d ? t.to(*d) : t, dims_arg(dim), keepdim);
      },
      nb::arg("dim") = nb::none(), nb::arg("keepdim") = false, nb::kw_only(),
      nb::arg("dtype") = nb::none());
  def_both(
      m, cls, "count_nonzero",
      [](const Tensor& t, nb::handle dim) { return count_nonzero(t, dims_arg(dim)); },
      nb::arg("dim") = nb::none());
  def_both(
      m, cls, "aminmax",
      [](const Tensor& t, nb::handle dim, bool keepdim) {
        return pair_as("aminmax", aminmax(t, optional_dim(dim, "aminmax(): dim"), keepdim));
      },
      nb::kw_only(), nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
}

void bind_order_statistics(nb::module_& m, TensorClass& cls) {
  for (const bool skip_nan : {false, true}) {
    const char* name = skip_nan ? "nanmedian" : "median";
    def_both(
        m, cls, name,
        [skip_nan, name](const Tensor& t, nb::handle dim, bool keepdim) -> nb::object {
          const std::optional<int64_t> d0 =
              optional_dim(dim, skip_nan ? "nanmedian(): dim" : "median(): dim");
          if (!d0) return nb::cast(skip_nan ? nanmedian(t) : median(t));
          const int64_t d = *d0;
          return pair_as(name, skip_nan ? nanmedian(t, d, keepdim) : median(t, d, keepdim));
        },
        nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  }
  def_both(
      m, cls, "kthvalue",
      [](const Tensor& t, int64_t k, int64_t dim, bool keepdim) {
        return pair_as("kthvalue", kthvalue(t, k, dim, keepdim));
      },
      nb::arg("k"), nb::arg("dim") = -1, nb::arg("keepdim") = false);
  def_both(
      m, cls, "mode",
      [](const Tensor& t, int64_t dim, bool keepdim) {
        return pair_as("mode", mode(t, dim, keepdim));
      },
      nb::arg("dim") = -1, nb::arg("keepdim") = false);
  for (const bool skip_nan : {false, true}) {
    def_both(
        m, cls, skip_nan ? "nanquantile" : "quantile",
        [skip_nan](const Tensor& t, nb::handle q, nb::handle dim, bool keepdim,
                   const std::string& interpolation) {
          const char* what = skip_nan ? "nanquantile(): q" : "quantile(): q";
          const Tensor qt = tensor_or_number(q, t, what);
          const std::optional<int64_t> d =
              optional_dim(dim, skip_nan ? "nanquantile(): dim" : "quantile(): dim");
          return skip_nan ? nanquantile(t, qt, d, keepdim, interpolation)
                          : quantile(t, qt, d, keepdim, interpolation);
        },
        nb::arg("q"), nb::arg("dim") = nb::none(), nb::arg("keepdim") = false, nb::kw_only(),
        nb::arg("interpolation") = "linear");
  }
  def_both(m, cls, "msort", [](const Tensor& t) { return msort(t); });
  for (const bool is_max : {true, false}) {
    const char* name = is_max ? "cummax" : "cummin";
    def_both(
        m, cls, name,
        [is_max, name](const Tensor& t, int64_t dim) {
          return pair_as(name, is_max ? cummax(t, dim) : cummin(t, dim));
        },
        nb::arg("dim"));
  }
  def_both(
      m, cls, "logcumsumexp", [](const Tensor& t, int64_t dim) { return logcumsumexp(t, dim); },
      nb::arg("dim"));
}

// scatter's reduce= (PyTorch's older form): add or multiply, into self.
Tensor scatter_with(const Tensor& t,
                    int64_t dim,
                    const Tensor& index,
                    const Tensor& src,
                    const std::optional<std::string>& reduce) {
  if (!reduce) return scatter(t, dim, index, src);
  if (*reduce == "add") return scatter_reduce(t, dim, index, src, "sum");
  if (*reduce == "multiply") return scatter_reduce(t, dim, index, src, "prod");
  throw nb::value_error(
      ("scatter(): reduce must be 'add' or 'multiply'; got '" + *reduce + "'.").c_str());
}

Tensor scatter_any(const Tensor& t,
                   int64_t dim,
                   const Tensor& index,
                   nb::handle src,
                   const std::optional<std::string>& reduce) {
  if (nb::isinstance<Tensor>(src))
    return scatter_with(t, dim, index, nb::cast<Tensor>(src), reduce);
  const Tensor value = full({}, scalar_of(src), t.options()).expand(index.sizes());
  if (!reduce) return scatter(t, dim, index, scalar_of(src));
  return scatter_with(t, dim, index, value.contiguous(), reduce);
}

void bind_scatters(nb::module_& m, TensorClass& cls) {
  def_both(
      m, cls, "scatter",
      [](const Tensor& t, int64_t dim, const Tensor& index, nb::handle src,
         std::optional<std::string> reduce) { return scatter_any(t, dim, index, src, reduce); },
      nb::arg("dim"), nb::arg("index"), nb::arg("src"), nb::kw_only(),
      nb::arg("reduce") = nb::none());
  def_method(
      cls, "scatter_",
      [](Tensor& t, int64_t dim, const Tensor& index, nb::handle src,
         std::optional<std::string> reduce) -> Tensor& {
        return t.copy_(scatter_any(t, dim, index, src, reduce));
      },
      nb::arg("dim"), nb::arg("index"), nb::arg("src"), nb::kw_only(),
      nb::arg("reduce") = nb::none(), nb::rv_policy::reference);
  def_both(
      m, cls, "scatter_reduce",
      [](const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src,
         const std::string& reduce,
         bool include_self) { return scatter_reduce(t, dim, index, src, reduce, include_self); },
      nb::arg("dim"), nb::arg("index"), nb::arg("src"), nb::arg("reduce"), nb::kw_only(),
      nb::arg("include_self") = true);
  def_both(
      m, cls, "index_add",
      [](const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source,
         const Scalar& alpha) { return index_add(t, dim, index, source, alpha); },
      nb::arg("dim"), nb::arg("index"), nb::arg("source"), nb::kw_only(), nb::arg("alpha") = 1);
  def_both(
      m, cls, "index_copy",
      [](const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source) {
        return index_copy(t, dim, index, source);
      },
      nb::arg("dim"), nb::arg("index"), nb::arg("source"));
  def_both(
      m, cls, "index_fill",
      [](const Tensor& t, int64_t dim, const Tensor& index, nb::handle value) {
        if (!nb::isinstance<Tensor>(value)) return index_fill(t, dim, index, scalar_of(value));
        // A 0-d tensor value takes the gradient of the elements it fills.
        const Tensor filled =
            index_fill(zeros(t.sizes(), t.options().dtype(kBool)), dim, index, true);
        return where(filled, nb::cast<Tensor>(value).to(t.dtype()), t);
      },
      nb::arg("dim"), nb::arg("index"), nb::arg("value"));
  def_both(
      m, cls, "index_reduce",
      [](const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source,
         const std::string& reduce,
         bool include_self) { return index_reduce(t, dim, index, source, reduce, include_self); },
      nb::arg("dim"), nb::arg("index"), nb::arg("source"), nb::arg("reduce"), nb::kw_only(),
      nb::arg("include_self") = true);
}

void bind_selections(nb::module_& m, TensorClass& cls) {
  def_both(
      m, cls, "take", [](const Tensor& t, const Tensor& index) { return take(t, index); },
      nb::arg("index"));
  def_both(
      m, cls, "put",
      [](const Tensor& t, const Tensor& index, const Tensor& source, bool accumulate) {
        return put(t, index, source, accumulate);
      },
      nb::arg("index"), nb::arg("source"), nb::arg("accumulate") = false);
  def_both(
      m, cls, "take_along_dim",
      [](const Tensor& t, const Tensor& indices, nb::handle dim) {
        return take_along_dim(t, indices, optional_dim(dim, "take_along_dim(): dim"));
      },
      nb::arg("indices"), nb::arg("dim") = nb::none());
  def_both(
      m, cls, "masked_select",
      [](const Tensor& t, const Tensor& mask) { return masked_select(t, mask); }, nb::arg("mask"));
  def_both(
      m, cls, "masked_scatter",
      [](const Tensor& t, const Tensor& mask, const Tensor& source) {
        return masked_scatter(t, mask, source);
      },
      nb::arg("mask"), nb::arg("source"));
  def_both(
      m, cls, "nonzero",
      [](const Tensor& t, bool as_tuple) -> nb::object {
        const Tensor positions = nonzero(t);
        if (!as_tuple) return nb::cast(positions);
        // As PyTorch's: one tensor per dim (a 0-d input counts as 1-d).
        const int64_t dims = std::max<int64_t>(t.dim(), 1);
        nb::list parts;
        for (int64_t d = 0; d < dims; ++d) {
          parts.append(t.dim() == 0 ? zeros({positions.size(0)}, positions.options())
                                    : positions.select(1, d));
        }
        return nb::tuple(parts);
      },
      nb::kw_only(), nb::arg("as_tuple") = false);
  def_both(m, cls, "argwhere", [](const Tensor& t) { return argwhere(t); });
  def_function(
      m, "nonzero_static",
      [](const Tensor& t, int64_t size, int64_t fill_value) {
        return nonzero_static(t, size, fill_value);
      },
      nb::arg("input"), nb::kw_only(), nb::arg("size"), nb::arg("fill_value") = -1);
  def_both(
      m, cls, "select_scatter",
      [](const Tensor& t, const Tensor& src, int64_t dim, int64_t index) {
        return select_scatter(t, src, dim, index);
      },
      nb::arg("src"), nb::arg("dim"), nb::arg("index"));
  def_both(
      m, cls, "slice_scatter",
      [](const Tensor& t, const Tensor& src, int64_t dim, nb::handle start, nb::handle end,
         int64_t step) {
        return slice_scatter(t, src, dim, optional_dim(start, "slice_scatter(): start"),
                             optional_dim(end, "slice_scatter(): end"), step);
      },
      nb::arg("src"), nb::arg("dim") = 0, nb::arg("start") = nb::none(),
      nb::arg("end") = nb::none(), nb::arg("step") = 1);
  def_both(
      m, cls, "diagonal_scatter",
      [](const Tensor& t, const Tensor& src, int64_t offset, int64_t dim1, int64_t dim2) {
        return diagonal_scatter(t, src, offset, dim1, dim2);
      },
      nb::arg("src"), nb::arg("offset") = 0, nb::arg("dim1") = 0, nb::arg("dim2") = 1);
}

// unique's result: the values alone, or a tuple with what was asked for.
nb::object unique_result(const UniqueResult& r, bool return_inverse, bool return_counts) {
  if (!return_inverse && !return_counts) return nb::cast(r.values);
  nb::list parts;
  parts.append(r.values);
  if (return_inverse) parts.append(r.inverse);
  if (return_counts) parts.append(r.counts);
  return nb::tuple(parts);
}

void bind_search(nb::module_& m, TensorClass& cls) {
  def_function(
      m, "searchsorted",
      [](const Tensor& sorted, nb::handle values, bool out_int32, bool right,
         std::optional<std::string> side, std::optional<Tensor> sorter) {
        if (side) {
          if (*side != "left" && *side != "right") {
            throw nb::value_error(
                ("searchsorted(): side must be 'left' or 'right'; got '" + *side + "'.").c_str());
          }
          if (right && *side == "left") {
            throw nb::value_error("searchsorted(): side='left' contradicts right=True.");
          }
          right = *side == "right";
        }
        return searchsorted(sorted, tensor_or_number(values, sorted, "searchsorted(): input"),
                            out_int32, right, sorter);
      },
      nb::arg("sorted_sequence"), nb::arg("input"), nb::kw_only(), nb::arg("out_int32") = false,
      nb::arg("right") = false, nb::arg("side") = nb::none(), nb::arg("sorter") = nb::none());
  def_function(
      m, "bucketize",
      [](nb::handle input, const Tensor& boundaries, bool out_int32, bool right) {
        return bucketize(tensor_or_number(input, boundaries, "bucketize(): input"), boundaries,
                         out_int32, right);
      },
      nb::arg("input"), nb::arg("boundaries"), nb::kw_only(), nb::arg("out_int32") = false,
      nb::arg("right") = false);
  def_both(
      m, cls, "bincount",
      [](const Tensor& t, std::optional<Tensor> weights, int64_t minlength) {
        return bincount(t, weights, minlength);
      },
      nb::arg("weights") = nb::none(), nb::arg("minlength") = 0);
  def_both(
      m, cls, "histc",
      [](const Tensor& t, int64_t bins, double min, double max) {
        return histc(t, bins, min, max);
      },
      nb::arg("bins") = 100, nb::arg("min") = 0, nb::arg("max") = 0);
  def_both(
      m, cls, "unique",
      [](const Tensor& t, bool sorted, bool return_inverse, bool return_counts, nb::handle dim) {
        return unique_result(
            unique(t, sorted, return_inverse, return_counts, optional_dim(dim, "unique(): dim")),
            return_inverse, return_counts);
      },
      nb::arg("sorted") = true, nb::arg("return_inverse") = false, nb::arg("return_counts") = false,
      nb::arg("dim") = nb::none());
  def_both(
      m, cls, "unique_consecutive",
      [](const Tensor& t, bool return_inverse, bool return_counts, nb::handle dim) {
        return unique_result(unique_consecutive(t, return_inverse, return_counts,
                                                optional_dim(dim, "unique_consecutive(): dim")),
                             return_inverse, return_counts);
      },
      nb::arg("return_inverse") = false, nb::arg("return_counts") = false,
      nb::arg("dim") = nb::none());
  def_function(
      m, "isin",
      [](nb::handle elements, nb::handle test_elements, bool assume_unique, bool invert) {
        const bool e_tensor = nb::isinstance<Tensor>(elements);
        if (!e_tensor && !nb::isinstance<Tensor>(test_elements)) {
          throw nb::type_error("isin(): elements or test_elements must be a tensor.");
        }
        const Tensor like = e_tensor ? nb::cast<Tensor>(elements) : nb::cast<Tensor>(test_elements);
        return isin(tensor_or_number(elements, like, "isin(): elements"),
                    tensor_or_number(test_elements, like, "isin(): test_elements"), assume_unique,
                    invert);
      },
      nb::arg("elements"), nb::arg("test_elements"), nb::kw_only(),
      nb::arg("assume_unique") = false, nb::arg("invert") = false);
}

}  // namespace

void bind_reductions_and_scatters(nb::module_& m, TensorClass& cls) {
  bind_variance(m, cls);
  bind_products_and_counts(m, cls);
  bind_order_statistics(m, cls);
  bind_scatters(m, cls);
  bind_selections(m, cls);
  bind_search(m, cls);
}

}  // namespace stride::python
