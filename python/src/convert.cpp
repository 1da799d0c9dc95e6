// Python values to and from stride: numbers (Scalar), shapes, and nested
// lists of numbers (torch.tensor, tolist).
#include <string>
#include <type_traits>

#include "bindings.h"

namespace nanobind::detail {

bool type_caster<stride::Scalar>::from_python(handle src, uint8_t flags, cleanup_list*) noexcept {
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
  if (!(flags & uint8_t(cast_flags::convert))) return false;
  // NumPy's scalars: integers have __index__, floats __float__.
  if (PyIndex_Check(o)) {
    PyObject* i = PyNumber_Index(o);
    if (!i) {
      PyErr_Clear();
      return false;
    }
    const long long v = PyLong_AsLongLong(i);
    Py_DECREF(i);
    if (PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
    value = stride::Scalar(int64_t(v));
    return true;
  }
  if (PyObject_HasAttrString(o, "__float__") && !PyObject_HasAttrString(o, "__dlpack__")) {
    const double v = PyFloat_AsDouble(o);
    if (PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
    value = stride::Scalar(v);
    return true;
  }
  return false;
}

handle type_caster<stride::Scalar>::from_cpp(const stride::Scalar& s,
                                             rv_policy,
                                             cleanup_list*) noexcept {
  if (s.is_bool()) return PyBool_FromLong(s.to_bool());
  if (s.is_integral()) return PyLong_FromLongLong(s.to_int64());
  return PyFloat_FromDouble(s.to_double());
}

}  // namespace nanobind::detail

namespace stride::python {

std::vector<int64_t> int_list(nb::handle sequence, const char* what) {
  if (!nb::isinstance<nb::sequence>(sequence) || nb::isinstance<nb::str>(sequence)) {
    throw nb::type_error((std::string(what) + " must be a sequence of ints, not " +
                          nb::inst_name(sequence).c_str() + ".")
                             .c_str());
  }
  std::vector<int64_t> out;
  for (nb::handle item : sequence) {
    if (!PyIndex_Check(item.ptr()) || PyBool_Check(item.ptr())) {
      throw nb::type_error(
          (std::string(what) + " must hold ints; got " + nb::inst_name(item).c_str() + ".")
              .c_str());
    }
    out.push_back(nb::cast<int64_t>(nb::handle(PyNumber_Index(item.ptr())), false));
  }
  return out;
}

std::vector<int64_t> shape_from_args(const nb::args& args) {
  if (args.size() == 1 && !PyIndex_Check(args[0].ptr())) return int_list(args[0], "size");
  return int_list(args, "size");
}

namespace {

// The shape and dtype of nested lists, checked to be rectangular.
struct DataLayout {
  std::vector<int64_t> shape;
  ScalarType dtype = kBool;  // widened by each element: bool < int64 < float32
  bool seen_element = false;
};

void scan(nb::handle obj, size_t depth, DataLayout& layout) {
  PyObject* o = obj.ptr();
  const bool is_list = PyList_Check(o) || PyTuple_Check(o);
  if (!is_list) {
    if (depth != layout.shape.size() && layout.seen_element) {
      throw nb::value_error(
          "expected a sequence at this depth: the nested lists are not rectangular.");
    }
    if (!layout.seen_element) layout.shape.resize(depth);
    layout.seen_element = true;
    if (PyBool_Check(o)) return;
    if (PyLong_Check(o) || PyIndex_Check(o)) {
      if (layout.dtype == kBool) layout.dtype = kInt64;
      return;
    }
    if (PyFloat_Check(o) || PyObject_HasAttrString(o, "__float__")) {
      layout.dtype = kFloat32;
      return;
    }
    throw nb::type_error(("could not make a tensor from an element of type " +
                          std::string(nb::inst_name(obj).c_str()) + ".")
                             .c_str());
  }
  const int64_t n = int64_t(PySequence_Size(o));
  if (layout.seen_element && depth >= layout.shape.size()) {
    throw nb::value_error("expected a number at this depth: the nested lists are not rectangular.");
  }
  if (depth == layout.shape.size()) {
    layout.shape.push_back(n);
  } else if (layout.shape[depth] != n) {
    throw nb::value_error(("expected a sequence of length " + std::to_string(layout.shape[depth]) +
                           " at dim " + std::to_string(depth) + " (got " + std::to_string(n) +
                           "): the nested lists are not rectangular.")
                              .c_str());
  }
  for (nb::handle item : nb::borrow<nb::sequence>(obj)) scan(item, depth + 1, layout);
}

// One number of the nested lists, as T. scan() has checked the kinds: only
// integers (and bools) reach the int64 version.
template <class T>
T read_number(PyObject* o) {
  if constexpr (std::is_same_v<T, double>) {
    const double v = PyFloat_AsDouble(o);
    if (PyErr_Occurred()) throw nb::python_error();
    return v;
  } else {
    PyObject* i = PyNumber_Index(o);
    if (!i) throw nb::python_error();
    const long long v = PyLong_AsLongLong(i);
    Py_DECREF(i);
    if (PyErr_Occurred()) throw nb::python_error();
    return v;
  }
}

template <class T>
void flatten(nb::handle obj, std::vector<T>& out) {
  PyObject* o = obj.ptr();
  if (PyList_Check(o) || PyTuple_Check(o)) {
    for (nb::handle item : nb::borrow<nb::sequence>(obj)) flatten(item, out);
    return;
  }
  out.push_back(read_number<T>(o));
}

}  // namespace

Tensor tensor_from_data(nb::handle data, std::optional<ScalarType> dtype) {
  DataLayout layout;
  scan(data, 0, layout);
  if (!layout.seen_element) layout.dtype = kFloat32;  // torch.tensor([]) is float32
  const ScalarType inferred = layout.dtype;
  const ScalarType target = dtype.value_or(inferred);
  Tensor out;
  if (layout.shape.empty()) {  // a number: a 0-d tensor
    const Scalar value = is_floating_point(inferred) ? Scalar(nb::cast<double>(data))
                         : inferred == kBool         ? Scalar(nb::cast<bool>(data))
                                                     : Scalar(nb::cast<int64_t>(data));
    return scalar_tensor(value, target);
  }
  if (!is_floating_point(inferred) && !is_floating_point(target)) {
    // Integers go through int64 so that values past 2^53 stay exact.
    std::vector<int64_t> values;
    flatten(data, values);
    out = tensor(values, layout.shape);
  } else {
    std::vector<double> values;
    flatten(data, values);
    out = tensor(values, layout.shape);
  }
  return out.to(target);
}

namespace {

nb::object element(const Tensor& t,
                   const std::vector<double>& doubles,
                   const std::vector<int64_t>& ints,
                   size_t i) {
  if (t.dtype() == kBool) return nb::bool_(ints[i] != 0);
  if (!t.is_floating_point()) return nb::int_(ints[i]);
  return nb::float_(doubles[i]);
}

nb::object nest(const Tensor& t,
                const std::vector<double>& doubles,
                const std::vector<int64_t>& ints,
                int64_t depth,
                size_t& pos) {
  if (depth == t.dim()) return element(t, doubles, ints, pos++);
  nb::list out;
  for (int64_t i = 0; i < t.size(depth); ++i) out.append(nest(t, doubles, ints, depth + 1, pos));
  return out;
}

}  // namespace

nb::object tensor_to_list(const Tensor& t) {
  std::vector<double> doubles;
  std::vector<int64_t> ints;
  if (t.is_floating_point()) {
    doubles = t.to_vector<double>();
  } else {
    ints = t.to_vector<int64_t>();
  }
  size_t pos = 0;
  return nest(t, doubles, ints, 0, pos);
}

}  // namespace stride::python
