// stride over pybind11: the twin of stride._stride's bindings for what
// bench/binding_overhead.py calls (a + b, the small MLP step), written as a
// careful pybind11 binding would be and with the same overloads, argument
// names and return conventions as python/src, so that the benchmark times
// the binding library, not two different bindings. Not part of the package.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "stride/stride.h"

namespace py = pybind11;

namespace pybind11::detail {

// Python bool, int and float as stride::Scalar, keeping the kind, as
// python/src/convert.cpp's nanobind caster does.
template <>
struct type_caster<stride::Scalar> {
  PYBIND11_TYPE_CASTER(stride::Scalar, const_name("float | int | bool"));

  bool load(handle src, bool convert) {
    PyObject* o = src.ptr();
    if (PyBool_Check(o)) {
      value = stride::Scalar(o == Py_True);
      return true;
    }
    if (PyLong_Check(o)) {
      int overflow = 0;
      const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
      if (overflow != 0) return false;
      value = stride::Scalar(int64_t(v));
      return true;
    }
    if (PyFloat_Check(o)) {
      value = stride::Scalar(PyFloat_AS_DOUBLE(o));
      return true;
    }
    if (!convert) return false;
    const double d = PyFloat_AsDouble(o);
    if (d == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
    value = stride::Scalar(d);
    return true;
  }

  static handle cast(const stride::Scalar& s, return_value_policy, handle) {
    if (s.is_bool()) return py::bool_(s.to_bool()).release();
    if (s.is_integral()) return PyLong_FromLongLong(s.to_int64());
    return PyFloat_FromDouble(s.to_double());
  }
};

}  // namespace pybind11::detail

namespace {

using stride::Scalar;
using stride::Tensor;

// A shape as f(2, 3), f((2, 3)) or f([2, 3]).
std::vector<int64_t> shape_from_args(const py::args& args) {
  const py::sequence seq = (args.size() == 1 && !PyIndex_Check(args[0].ptr()))
                               ? py::reinterpret_borrow<py::sequence>(args[0])
                               : py::sequence(args);
  std::vector<int64_t> shape;
  for (py::handle item : seq) shape.push_back(item.cast<int64_t>());
  return shape;
}

// dim= as None (every dim), an int, or a sequence of ints.
std::vector<int64_t> dims_arg(py::handle dim) {
  if (dim.is_none()) return {};
  if (PyIndex_Check(dim.ptr())) return {dim.cast<int64_t>()};
  return dim.cast<std::vector<int64_t>>();
}

// An in-place method returns the very object it was called on
// (`y = x.sub_(g)` makes `y is x`), as python/src/ops.cpp's in_place.
template <class F, class R, class... Args>
auto in_place_with(F f, R (F::*)(Tensor&, Args...) const) {
  return [f](py::object self, Args... args) {
    f(self.cast<Tensor&>(), std::forward<Args>(args)...);
    return self;
  };
}
template <class F>
auto in_place(F f) {
  return in_place_with(f, &F::operator());
}

}  // namespace

// STRIDE_PYBIND11_MODULE: _stride_pybind11_<pybind11's version>, set by the
// CMakeLists.
PYBIND11_MODULE(STRIDE_PYBIND11_MODULE, m) {
  m.doc() = "stride's C++ core over pybind11, for bench/binding_overhead.py only.";
  m.attr("pybind11_version") = std::to_string(PYBIND11_VERSION_MAJOR) + "." +
                               std::to_string(PYBIND11_VERSION_MINOR) + "." +
                               std::to_string(PYBIND11_VERSION_PATCH);

  py::class_<Tensor> cls(m, "Tensor", "A strided view of memory on a device, as torch.Tensor.");
  cls.def(py::init<const Tensor&>(), py::arg("data"))
      .def_property_readonly("shape",
                             [](const Tensor& t) {
                               py::tuple out(t.dim());
                               for (int64_t d = 0; d < t.dim(); ++d) out[d] = t.size(d);
                               return out;
                             })
      .def_property(
          "requires_grad", [](const Tensor& t) { return t.requires_grad(); },
          [](Tensor& t, bool on) { t.requires_grad_(on); })
      .def_property(
          "grad",
          [](const Tensor& t) -> py::object {
            const Tensor& g = t.grad();
            return g.defined() ? py::cast(g) : py::none();
          },
          [](Tensor& t, std::optional<Tensor> g) { t.mutable_grad() = g ? *g : Tensor(); })
      .def("__repr__", [](const Tensor& t) { return t.str(); });

  // The operators and methods the benchmark calls, with python/src/ops.cpp's
  // overloads (a tensor first, then a number).
  cls.def("__add__", [](const Tensor& a, const Tensor& b) { return a + b; })
      .def("__add__", [](const Tensor& a, const Scalar& b) { return a + b; })
      .def("__mul__", [](const Tensor& a, const Tensor& b) { return a * b; })
      .def("__mul__", [](const Tensor& a, const Scalar& b) { return a * b; })
      .def("__matmul__", [](const Tensor& a, const Tensor& b) { return matmul(a, b); })
      .def(
          "matmul", [](const Tensor& a, const Tensor& b) { return matmul(a, b); }, py::arg("other"))
      .def("relu", [](const Tensor& t) { return t.relu(); })
      .def("square", [](const Tensor& t) { return t.square(); })
      .def(
          "mean",
          [](const Tensor& t, py::handle dim, bool keepdim) {
            return mean(t, dims_arg(dim), keepdim);
          },
          py::arg("dim") = py::none(), py::arg("keepdim") = false);
  cls.def("sub_",
          in_place([](Tensor& a, const Tensor& b, const Scalar& alpha) { a.sub_(b, alpha); }),
          py::arg("other"), py::kw_only(), py::arg("alpha") = 1);
  cls.def("sub_", in_place([](Tensor& a, const Scalar& b) { a.sub_(b); }), py::arg("other"));

  // Autograd, as python/src/autograd.cpp binds it.
  cls.def(
      "backward",
      [](const Tensor& t, std::optional<Tensor> gradient, std::optional<bool> retain_graph,
         bool create_graph) {
        t.backward(gradient ? *gradient : Tensor(), retain_graph, create_graph);
      },
      py::arg("gradient") = py::none(), py::arg("retain_graph") = py::none(),
      py::arg("create_graph") = false);
  cls.def(
      "requires_grad_",
      [](py::object self, bool on) {
        self.cast<Tensor&>().requires_grad_(on);
        return self;
      },
      py::arg("requires_grad") = true);
  m.def("is_grad_enabled", &stride::GradMode::is_enabled);
  m.def("set_grad_enabled", &stride::GradMode::set_enabled, py::arg("mode"));

  // A factory of a shape, as torch's: randn(2, 3) or randn((2, 3)).
  m.def(
      "randn",
      [](const py::args& size, bool requires_grad) {
        Tensor t = stride::randn(shape_from_args(size));
        if (requires_grad) t.requires_grad_(true);
        return t;
      },
      py::arg("requires_grad") = false);  // keyword-only, after *size
}
