// Python values to and from stride: numbers (Scalar), shapes, and nested
// lists of numbers, NumPy's values among them (torch.tensor, tolist).
#include <complex>
#include <optional>
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
  if (PyComplex_Check(o)) {  // NumPy's complex128 too, a subclass
    value =
        stride::Scalar(std::complex<double>(PyComplex_RealAsDouble(o), PyComplex_ImagAsDouble(o)));
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
  if (s.is_complex()) return PyComplex_FromDoubles(s.to_complex().real(), s.to_complex().imag());
  if (s.is_bool()) return PyBool_FromLong(s.to_bool());
  if (s.is_integral()) return PyLong_FromLongLong(s.to_int64());
  return PyFloat_FromDouble(s.to_double());
}

}  // namespace nanobind::detail

namespace stride::python {

std::optional<int64_t> index_value(nb::handle h, const char* what) {
  if (!PyIndex_Check(h.ptr()) || PyBool_Check(h.ptr())) return std::nullopt;
  nb::object i = nb::steal(PyNumber_Index(h.ptr()));
  if (!i.is_valid()) {
    PyErr_Clear();
    return std::nullopt;
  }
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (overflow != 0) {
    throw nb::value_error((std::string(what) + " holds " + nb::str(i).c_str() +
                           ", which is outside the range of int64.")
                              .c_str());
  }
  return int64_t(v);
}

std::vector<int64_t> int_list(nb::handle sequence, const char* what) {
  const auto not_a_sequence = [&] {
    return nb::type_error((std::string(what) + " must be a sequence of ints, not " +
                           nb::inst_name(sequence).c_str() + ".")
                              .c_str());
  };
  if (!nb::isinstance<nb::sequence>(sequence) || nb::isinstance<nb::str>(sequence)) {
    throw not_a_sequence();
  }
  // A 0-d NumPy array is a sequence to PySequence_Check, yet not iterable.
  nb::object items = nb::steal(PyObject_GetIter(sequence.ptr()));
  if (!items.is_valid()) {
    PyErr_Clear();
    throw not_a_sequence();
  }
  std::vector<int64_t> out;
  for (nb::handle item : items) {
    const std::optional<int64_t> value = index_value(item, what);
    if (!value) {
      throw nb::type_error(
          (std::string(what) + " must hold ints; got " + nb::inst_name(item).c_str() + ".")
              .c_str());
    }
    out.push_back(*value);
  }
  return out;
}

std::vector<int64_t> shape_from_args(const nb::args& args, const char* what) {
  if (args.size() == 1 && !index_value(args[0], what)) return int_list(args[0], what);
  return int_list(args, what);
}

namespace {

// The shape and dtype of nested lists, checked to be rectangular.
struct DataLayout {
  std::vector<int64_t> shape;
  // Promoted with each element's, as torch.tensor infers: bool, int64 and
  // float32 for Python's numbers, their own for NumPy's and 0-d tensors.
  ScalarType dtype = kBool;
  bool seen_element = false;
};

// What holds elements: lists, tuples and NumPy arrays of one dim or more.
bool holds_elements(nb::handle obj) {
  PyObject* o = obj.ptr();
  return PyList_Check(o) || PyTuple_Check(o) ||
         (is_numpy_array(obj) && nb::cast<int64_t>(obj.attr("ndim")) > 0);
}

ScalarType element_dtype(nb::handle obj, const char* what) {
  PyObject* o = obj.ptr();
  if (is_numpy(obj)) return numpy_dtype(obj, what);
  if (nb::isinstance<Tensor>(obj)) {
    const Tensor& t = nb::cast<const Tensor&>(obj);
    if (t.dim() != 0) {
      throw nb::value_error((std::string(what) +
                             ": a tensor among the nested lists must be 0-d (one number); got "
                             "one of " +
                             std::to_string(t.dim()) + " dims. Hint: stride.stack(tensors).")
                                .c_str());
    }
    return t.dtype();
  }
  if (PyBool_Check(o)) return kBool;
  if (PyLong_Check(o) || PyIndex_Check(o)) return kInt64;
  if (PyComplex_Check(o)) return kComplex64;  // torch.tensor(1j) is complex64
  if (PyFloat_Check(o) || PyObject_HasAttrString(o, "__float__")) return kFloat32;
  throw nb::type_error((std::string(what) +
                        " must be a number, nested lists of numbers, a NumPy array or a tensor; "
                        "got an element of type " +
                        nb::inst_name(obj).c_str() + ".")
                           .c_str());
}

void scan(nb::handle obj, size_t depth, DataLayout& layout, const char* what) {
  const std::string not_rectangular = std::string(what) + " is not rectangular: ";
  if (!holds_elements(obj)) {
    if (depth != layout.shape.size() && layout.seen_element) {
      throw nb::value_error((not_rectangular + "expected a sequence at dim " +
                             std::to_string(depth) + ", got a number.")
                                .c_str());
    }
    if (!layout.seen_element) layout.shape.resize(depth);
    layout.dtype = promote_types(layout.dtype, element_dtype(obj, what));
    layout.seen_element = true;
    return;
  }
  const int64_t n = int64_t(PySequence_Size(obj.ptr()));
  if (layout.seen_element && depth >= layout.shape.size()) {
    throw nb::value_error((not_rectangular + "expected a number at dim " + std::to_string(depth) +
                           ", got a sequence.")
                              .c_str());
  }
  if (depth == layout.shape.size()) {
    layout.shape.push_back(n);
  } else if (layout.shape[depth] != n) {
    throw nb::value_error((not_rectangular + "expected a sequence of length " +
                           std::to_string(layout.shape[depth]) + " at dim " +
                           std::to_string(depth) + ", got " + std::to_string(n) + ".")
                              .c_str());
  }
  for (nb::handle item : obj) scan(item, depth + 1, layout, what);
}

// One number of the nested lists, as T. scan() has checked the kinds: only
// integers (and bools) reach the int64 version. NumPy's scalars and 0-d
// tensors are read as the Python number their item() is.
template <class T>
T read_number(nb::handle obj) {
  nb::object number =
      is_numpy(obj) || nb::isinstance<Tensor>(obj) ? obj.attr("item")() : nb::borrow(obj);
  PyObject* o = number.ptr();
  if constexpr (std::is_same_v<T, std::complex<double>>) {
    const Py_complex v = PyComplex_AsCComplex(o);
    if (PyErr_Occurred()) throw nb::python_error();
    return {v.real, v.imag};
  } else if constexpr (std::is_same_v<T, double>) {
    const double v = PyFloat_AsDouble(o);
    if (PyErr_Occurred()) throw nb::python_error();
    return v;
  } else {
    nb::object i = nb::steal(PyNumber_Index(o));
    if (!i.is_valid()) throw nb::python_error();
    const long long v = PyLong_AsLongLong(i.ptr());
    if (PyErr_Occurred()) throw nb::python_error();
    return v;
  }
}

template <class T>
void flatten(nb::handle obj, std::vector<T>& out) {
  if (holds_elements(obj)) {
    for (nb::handle item : obj) flatten(item, out);
    return;
  }
  out.push_back(read_number<T>(obj));
}

}  // namespace

Tensor tensor_from_data(nb::handle data, std::optional<ScalarType> dtype, const char* what) {
  if (nb::isinstance<Tensor>(data)) {  // a copy, off the autograd graph, as torch.tensor(t)
    const Tensor& t = nb::cast<const Tensor&>(data);
    return t.detach().clone().to(dtype.value_or(t.dtype()));
  }
  if (is_numpy(data)) {
    const Tensor t = tensor_from_numpy(data, what);
    return dtype ? t.to(*dtype) : t;
  }
  DataLayout layout;
  scan(data, 0, layout, what);
  if (!layout.seen_element) layout.dtype = kFloat32;  // torch.tensor([]) is float32
  const ScalarType inferred = layout.dtype;
  const ScalarType target = dtype.value_or(inferred);
  if (is_complex(inferred) && !is_complex(target)) {  // as torch.tensor([1j], dtype=float32)
    throw nb::type_error((std::string(what) + " holds complex numbers, which dtype " +
                          std::string(to_string(target)) +
                          " cannot hold. Hint: pass a complex dtype, or the real parts.")
                             .c_str());
  }
  if (layout.shape.empty()) {  // a number: a 0-d tensor
    const Scalar value = is_complex(inferred) ? Scalar(read_number<std::complex<double>>(data))
                         : is_floating_point(inferred) ? Scalar(read_number<double>(data))
                         : inferred == kBool           ? Scalar(read_number<int64_t>(data) != 0)
                                                       : Scalar(read_number<int64_t>(data));
    return scalar_tensor(value, target);
  }
  Tensor out;
  if (is_complex(inferred) || is_complex(target)) {
    // The parts side by side as float64 pairs, viewed as complex128.
    std::vector<std::complex<double>> values;
    flatten(data, values);
    std::vector<double> interleaved;
    for (const std::complex<double>& v : values) {
      interleaved.push_back(v.real());
      interleaved.push_back(v.imag());
    }
    std::vector<int64_t> shape = layout.shape;
    shape.push_back(2);
    out = view_as_complex(tensor(interleaved, shape));
  } else if (!is_floating_point(inferred) && !is_floating_point(target)) {
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

// A tensor's values as tensor_to_list reads them: one of the three vectors.
struct Values {
  std::vector<double> doubles;
  std::vector<int64_t> ints;
  std::vector<std::complex<double>> complexes;
};

nb::object element(const Tensor& t, const Values& v, size_t i) {
  if (t.is_complex()) {
    return nb::steal(PyComplex_FromDoubles(v.complexes[i].real(), v.complexes[i].imag()));
  }
  const std::vector<double>& doubles = v.doubles;
  const std::vector<int64_t>& ints = v.ints;
  if (t.dtype() == kBool) return nb::bool_(ints[i] != 0);
  if (!t.is_floating_point()) return nb::int_(ints[i]);
  return nb::float_(doubles[i]);
}

nb::object nest(const Tensor& t, const Values& v, int64_t depth, size_t& pos) {
  if (depth == t.dim()) return element(t, v, pos++);
  nb::list out;
  for (int64_t i = 0; i < t.size(depth); ++i) out.append(nest(t, v, depth + 1, pos));
  return out;
}

}  // namespace

nb::object tensor_to_list(const Tensor& t) {
  Values v;
  if (t.is_complex()) {
    v.complexes = t.to_vector<std::complex<double>>();
  } else if (t.is_floating_point()) {
    v.doubles = t.to_vector<double>();
  } else {
    v.ints = t.to_vector<int64_t>();
  }
  size_t pos = 0;
  return nest(t, v, 0, pos);
}

}  // namespace stride::python
