// The numeric composites of include/stride/ops.h (trace, diff, the
// trapezoidal rules, cov, corrcoef, renorm, gradient, the histograms, sgn,
// resolve_neg, the triangle indices, unravel_index) as Tensor methods and
// stride.* functions with PyTorch's argument names, and torch.signal.windows
// as the submodule _signal_windows (stride.signal.windows).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <tuple>

#include "bindings.h"
#include "op_docs.h"

namespace stride::python {

namespace {

using TensorClass = nb::class_<Tensor>;

std::string type_name_of(nb::handle h) {
  return nb::type_name(h.type()).c_str();
}

[[noreturn]] void refuse(const char* what, const char* expected, nb::handle got) {
  throw nb::type_error(
      (std::string(what) + " must be " + expected + "; got " + type_name_of(got) + ".").c_str());
}

double number_arg(nb::handle h, const char* what) {
  double v = 0;
  if (nb::isinstance<Tensor>(h) || nb::isinstance<nb::bool_>(h) || !nb::try_cast(h, v)) {
    refuse(what, "a number", h);
  }
  return v;
}

bool is_sequence(nb::handle h) {
  return nb::isinstance<nb::list>(h) || nb::isinstance<nb::tuple>(h);
}

nb::tuple as_tuple(const std::vector<Tensor>& tensors) {
  nb::list items;
  for (const Tensor& t : tensors) items.append(nb::cast(t));
  return nb::tuple(items);
}

nb::object return_type(const char* kind, nb::object first, nb::object second) {
  // Held for the interpreter's life, as values_indices' module.
  static const nb::object* types = new nb::object(nb::module_::import_("stride.return_types"));
  return types->attr(kind)(first, second);
}

void bind_trace_diff_and_signs(nb::module_& m, TensorClass& cls) {
  def_both(m, cls, "trace", [](const Tensor& t) { return trace(t); });
  def_both(
      m, cls, "diff",
      [](const Tensor& t, int64_t n, int64_t dim, std::optional<Tensor> prepend,
         std::optional<Tensor> append) { return diff(t, n, dim, prepend, append); },
      nb::arg("n") = 1, nb::arg("dim") = -1, nb::arg("prepend") = nb::none(),
      nb::arg("append") = nb::none());
  def_both(m, cls, "sgn", [](const Tensor& t) { return sgn(t); });
  def_both(m, cls, "resolve_neg", [](const Tensor& t) { return resolve_neg(t); });
  def_both(
      m, cls, "renorm",
      [](const Tensor& t, double p, int64_t dim, double maxnorm) {
        return renorm(t, p, dim, maxnorm);
      },
      nb::arg("p"), nb::arg("dim"), nb::arg("maxnorm"));
}

// trapezoid's and cumulative_trapezoid's x= (a tensor) or dx= (a number),
// not both; neither is a spacing of 1.
Tensor integrate(const char* op, const Tensor& y, nb::handle x, nb::handle dx, int64_t dim) {
  const bool cumulative = std::string(op) == "cumulative_trapezoid";
  if (!x.is_none() && !dx.is_none()) {
    throw nb::type_error((std::string(op) + "(): takes x or dx, not both.").c_str());
  }
  if (!x.is_none()) {
    if (!nb::isinstance<Tensor>(x)) refuse((std::string(op) + "(): x").c_str(), "a tensor", x);
    const Tensor& xs = nb::cast<const Tensor&>(x);
    return cumulative ? cumulative_trapezoid(y, xs, dim) : trapezoid(y, xs, dim);
  }
  const double step = dx.is_none() ? 1.0 : number_arg(dx, (std::string(op) + "(): dx").c_str());
  return cumulative ? cumulative_trapezoid(y, step, dim) : trapezoid(y, step, dim);
}

void bind_integration(nb::module_& m) {
  for (const char* name : {"trapezoid", "cumulative_trapezoid"}) {
    def_function(
        m, name,
        [name](const Tensor& y, nb::handle x, nb::handle dx, int64_t dim) {
          return integrate(name, y, x, dx, dim);
        },
        nb::arg("y"), nb::arg("x") = nb::none(), nb::kw_only(), nb::arg("dx") = nb::none(),
        nb::arg("dim") = -1);
  }
  def_function(
      m, "trapz",
      [](const Tensor& y, const Tensor& x, int64_t dim) { return trapezoid(y, x, dim); },
      nb::arg("y"), nb::arg("x"), nb::kw_only(), nb::arg("dim") = -1);
  def_function(
      m, "trapz", [](const Tensor& y, double dx, int64_t dim) { return trapezoid(y, dx, dim); },
      nb::arg("y"), nb::kw_only(), nb::arg("dx") = 1.0, nb::arg("dim") = -1);
}

void bind_statistics(nb::module_& m, TensorClass& cls) {
  def_both(
      m, cls, "cov",
      [](const Tensor& t, int64_t correction, std::optional<Tensor> fweights,
         std::optional<Tensor> aweights) { return cov(t, correction, fweights, aweights); },
      nb::kw_only(), nb::arg("correction") = 1, nb::arg("fweights") = nb::none(),
      nb::arg("aweights") = nb::none());
  def_both(m, cls, "corrcoef", [](const Tensor& t) { return corrcoef(t); });
}

// gradient's dims: None (every dim), an int or a sequence of ints.
std::vector<int64_t> gradient_dims(const Tensor& t, nb::handle dim) {
  if (dim.is_none()) {
    std::vector<int64_t> all(size_t(t.dim()));
    for (int64_t i = 0; i < t.dim(); ++i) all[size_t(i)] = i;
    return all;
  }
  if (const std::optional<int64_t> d = index_value(dim, "gradient(): dim")) return {*d};
  if (!is_sequence(dim)) refuse("gradient(): dim", "an int, a sequence of ints or None", dim);
  return int_list(dim, "gradient(): dim");
}

nb::tuple gradient_of(const Tensor& t, nb::handle spacing, nb::handle dim, int64_t edge_order) {
  const std::vector<int64_t> dims = gradient_dims(t, dim);
  if (spacing.is_none() || !is_sequence(spacing)) {
    const double h = spacing.is_none() ? 1.0 : number_arg(spacing, "gradient(): spacing");
    return as_tuple(gradient(t, std::vector<double>(dims.size(), h), dims, edge_order));
  }
  const nb::sequence items = nb::borrow<nb::sequence>(spacing);
  bool tensors = nb::len(items) > 0;
  for (nb::handle item : items) tensors = tensors && nb::isinstance<Tensor>(item);
  if (tensors) {
    return as_tuple(gradient(t, nb::cast<std::vector<Tensor>>(spacing), dims, edge_order));
  }
  std::vector<double> steps;
  for (nb::handle item : items) steps.push_back(number_arg(item, "gradient(): spacing"));
  return as_tuple(gradient(t, steps, dims, edge_order));
}

void bind_gradient(nb::module_& m) {
  def_function(m, "gradient", &gradient_of, nb::arg("input"), nb::kw_only(),
               nb::arg("spacing").none() = 1, nb::arg("dim") = nb::none(),
               nb::arg("edge_order") = 1);
}

// histogram's and histogramdd's range=: None, or min and max per dim.
std::vector<std::pair<double, double>> ranges_of(nb::handle range, const char* what) {
  if (range.is_none()) return {};
  if (!is_sequence(range)) refuse(what, "a sequence of numbers or None", range);
  std::vector<double> values;
  for (nb::handle v : nb::borrow<nb::sequence>(range)) values.push_back(number_arg(v, what));
  if (values.size() % 2 != 0) {
    throw nb::value_error((std::string(what) + " takes a min and a max per dim; got " +
                           std::to_string(values.size()) + " numbers.")
                              .c_str());
  }
  std::vector<std::pair<double, double>> pairs;
  for (size_t i = 0; i < values.size(); i += 2) pairs.emplace_back(values[i], values[i + 1]);
  return pairs;
}

nb::object histogram_of(const Tensor& t,
                        nb::handle bins,
                        nb::handle range,
                        std::optional<Tensor> weight,
                        bool density) {
  HistogramResult r;
  if (nb::isinstance<Tensor>(bins)) {
    if (!range.is_none()) {
      throw nb::type_error(
          "histogram(): range is taken with a number of bins only, not with "
          "bin edges.");
    }
    r = histogram(t, nb::cast<const Tensor&>(bins), weight, density);
  } else if (const std::optional<int64_t> n = index_value(bins, "histogram(): bins")) {
    const auto ranges = ranges_of(range, "histogram(): range");
    if (ranges.size() > 1) throw nb::value_error("histogram(): range takes a min and a max.");
    r = histogram(
        t, *n, ranges.empty() ? std::nullopt : std::optional<std::pair<double, double>>(ranges[0]),
        weight, density);
  } else {
    refuse("histogram(): bins", "an int or a tensor of bin edges", bins);
  }
  return return_type("histogram", nb::cast(r.hist), nb::cast(r.bin_edges));
}

nb::object histogramdd_of(const Tensor& t,
                          nb::handle bins,
                          nb::handle range,
                          std::optional<Tensor> weight,
                          bool density) {
  HistogramddResult r;
  const int64_t D = t.dim() > 0 ? t.size(-1) : 1;
  if (const std::optional<int64_t> n = index_value(bins, "histogramdd(): bins")) {
    r = histogramdd(t, std::vector<int64_t>(size_t(D), *n),
                    ranges_of(range, "histogramdd(): range"), weight, density);
  } else if (is_sequence(bins) && nb::len(bins) > 0 && nb::isinstance<Tensor>(bins[0])) {
    if (!range.is_none()) {
      throw nb::type_error(
          "histogramdd(): range is taken with numbers of bins only, not with "
          "bin edges.");
    }
    r = histogramdd(t, nb::cast<std::vector<Tensor>>(bins), weight, density);
  } else if (is_sequence(bins)) {
    r = histogramdd(t, int_list(bins, "histogramdd(): bins"),
                    ranges_of(range, "histogramdd(): range"), weight, density);
  } else {
    refuse("histogramdd(): bins", "an int, a sequence of ints or a sequence of tensors", bins);
  }
  return return_type("histogramdd", nb::cast(r.hist), as_tuple(r.bin_edges));
}

void bind_histograms(nb::module_& m, TensorClass& cls) {
  def_both(m, cls, "histogram", &histogram_of, nb::arg("bins") = 100, nb::kw_only(),
           nb::arg("range") = nb::none(), nb::arg("weight") = nb::none(),
           nb::arg("density") = false);
  def_function(m, "histogramdd", &histogramdd_of, nb::arg("input"), nb::arg("bins") = 10,
               nb::kw_only(), nb::arg("range") = nb::none(), nb::arg("weight") = nb::none(),
               nb::arg("density") = false);
}

void bind_index_factories(nb::module_& m) {
  for (const bool lower : {true, false}) {
    def_function(
        m, lower ? "tril_indices" : "triu_indices",
        [lower](int64_t row, int64_t col, int64_t offset, nb::handle dtype, nb::handle device) {
          const std::optional<ScalarType> d = optional_dtype(dtype);
          const TensorOptions options = options_from(nb::none(), device).dtype(d.value_or(kInt64));
          return lower ? tril_indices(row, col, offset, options)
                       : triu_indices(row, col, offset, options);
        },
        nb::arg("row"), nb::arg("col"), nb::arg("offset") = 0, nb::kw_only(),
        nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none());
  }
  def_function(
      m, "unravel_index",
      [](const Tensor& indices, nb::handle shape) {
        if (const std::optional<int64_t> n = index_value(shape, "unravel_index(): shape")) {
          return as_tuple(unravel_index(indices, {*n}));
        }
        if (!is_sequence(shape))
          refuse("unravel_index(): shape", "an int or a sequence of ints", shape);
        return as_tuple(unravel_index(indices, int_list(shape, "unravel_index(): shape")));
      },
      nb::arg("indices"), nb::arg("shape"));
}

Tensor requiring_grad(Tensor t, bool requires_grad) {
  return requires_grad ? t.requires_grad_(true) : t;
}

void bind_windows(nb::module_& m) {
  namespace sw = signal::windows;
  nb::module_ w =
      m.def_submodule("_signal_windows", "torch.signal.windows (stride.signal.windows).");
  using Plain = Tensor (*)(int64_t, bool, TensorOptions);
  for (const auto& [name, f] : {std::pair<const char*, Plain>{"bartlett", &sw::bartlett},
                                {"blackman", &sw::blackman},
                                {"cosine", &sw::cosine},
                                {"hamming", &sw::hamming},
                                {"hann", &sw::hann},
                                {"nuttall", &sw::nuttall}}) {
    w.def(
        name,
        [f](int64_t M, bool sym, nb::handle dtype, nb::handle device, bool requires_grad) {
          return requiring_grad(f(M, sym, options_from(dtype, device)), requires_grad);
        },
        nb::arg("M"), nb::kw_only(), nb::arg("sym") = true, nb::arg("dtype") = nb::none(),
        nb::arg("device") = nb::none(), nb::arg("requires_grad") = false,
        op_doc(std::string("signal.windows.") + name).c_str());
  }
  w.def(
      "exponential",
      [](int64_t M, std::optional<double> center, double tau, bool sym, nb::handle dtype,
         nb::handle device, bool requires_grad) {
        return requiring_grad(sw::exponential(M, center, tau, sym, options_from(dtype, device)),
                              requires_grad);
      },
      nb::arg("M"), nb::kw_only(), nb::arg("center") = nb::none(), nb::arg("tau") = 1.0,
      nb::arg("sym") = true, nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(),
      nb::arg("requires_grad") = false, op_doc("signal.windows.exponential").c_str());
  using OneParameter = Tensor (*)(int64_t, double, bool, TensorOptions);
  for (const auto& [name, parameter, fallback, f] :
       {std::tuple<const char*, const char*, double, OneParameter>{"gaussian", "std", 1.0,
                                                                   &sw::gaussian},
        {"general_hamming", "alpha", 0.54, &sw::general_hamming},
        {"kaiser", "beta", 12.0, &sw::kaiser}}) {
    w.def(
        name,
        [f](int64_t M, double value, bool sym, nb::handle dtype, nb::handle device,
            bool requires_grad) {
          return requiring_grad(f(M, value, sym, options_from(dtype, device)), requires_grad);
        },
        nb::arg("M"), nb::kw_only(), nb::arg(parameter) = fallback, nb::arg("sym") = true,
        nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(),
        nb::arg("requires_grad") = false, op_doc(std::string("signal.windows.") + name).c_str());
  }
  w.def(
      "general_cosine",
      [](int64_t M, nb::handle a, bool sym, nb::handle dtype, nb::handle device,
         bool requires_grad) {
        if (!is_sequence(a)) refuse("general_cosine(): a", "a list or tuple of numbers", a);
        std::vector<double> coefficients;
        for (nb::handle v : nb::borrow<nb::sequence>(a)) {
          coefficients.push_back(number_arg(v, "general_cosine(): a"));
        }
        return requiring_grad(sw::general_cosine(M, coefficients, sym, options_from(dtype, device)),
                              requires_grad);
      },
      nb::arg("M"), nb::kw_only(), nb::arg("a"), nb::arg("sym") = true,
      nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(),
      nb::arg("requires_grad") = false, op_doc("signal.windows.general_cosine").c_str());
}

}  // namespace

void bind_numeric_composites(nb::module_& m, TensorClass& cls) {
  bind_trace_diff_and_signs(m, cls);
  bind_integration(m);
  bind_statistics(m, cls);
  bind_gradient(m);
  bind_histograms(m, cls);
  bind_index_factories(m);
  bind_windows(m);
}

}  // namespace stride::python
