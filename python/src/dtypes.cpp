// stride.dtype and stride.device, and how arguments become them.
#include <nanobind/stl/string.h>

#include <array>
#include <string>

#include "bindings.h"

namespace stride::python {

namespace {

// A dtype as Python sees it: one object per ScalarType, so that
// `t.dtype is stride.float32` holds, as in PyTorch.
struct DType {
  ScalarType type;
};

constexpr std::array kAllTypes = {kBool,     kUInt8,   kInt32,   kInt64,     kFloat16,
                                  kBFloat16, kFloat32, kFloat64, kComplex64, kComplex128};

// Borrowed: the module's attributes (stride.float32, ...) own them, so
// nothing outlives the interpreter.
std::array<PyObject*, kAllTypes.size()>& dtype_objects() {
  static std::array<PyObject*, kAllTypes.size()> objects{};
  return objects;
}

}  // namespace

nb::object dtype_object(ScalarType type) {
  return nb::borrow(dtype_objects()[size_t(type)]);
}

std::optional<ScalarType> optional_dtype(nb::handle obj) {
  if (obj.is_none()) return std::nullopt;
  if (nb::isinstance<DType>(obj)) return nb::cast<DType&>(obj).type;
  throw nb::type_error(("dtype must be a stride.dtype (e.g. stride.float32), not " +
                        std::string(nb::inst_name(obj).c_str()) + ".")
                           .c_str());
}

bool is_dtype(nb::handle obj) {
  return nb::isinstance<DType>(obj);
}

namespace {

// A device string such as "cuda:1"; a string that names none is a bad
// value (ValueError), where stride's DeviceError reads as a RuntimeError.
Device parse_device(const std::string& spec) {
  try {
    return Device(std::string_view(spec));
  } catch (const DeviceError& e) {
    throw nb::value_error(e.what());
  }
}

}  // namespace

std::optional<Device> optional_device(nb::handle obj) {
  if (obj.is_none()) return std::nullopt;
  if (nb::isinstance<Device>(obj)) return nb::cast<Device>(obj);
  if (nb::isinstance<nb::str>(obj)) return parse_device(nb::cast<std::string>(obj));
  throw nb::type_error(("device must be a string such as 'cpu' or a stride.device, not " +
                        std::string(nb::inst_name(obj).c_str()) + ".")
                           .c_str());
}

TensorOptions options_from(nb::handle dtype, nb::handle device) {
  TensorOptions options;
  if (auto t = optional_dtype(dtype)) options = options.dtype(*t);
  if (auto d = optional_device(device)) options = options.device(*d);
  return options;
}

void bind_dtypes(nb::module_& m) {
  nb::class_<DType>(m, "dtype", "The type of a tensor's elements (stride.float32, ...).")
      .def_prop_ro(
          "is_floating_point", [](const DType& d) { return is_floating_point(d.type); },
          "True for float16, bfloat16, float32 and float64.")
      .def_prop_ro(
          "is_complex", [](const DType& d) { return is_complex(d.type); },
          "True for complex64 and complex128.")
      .def_prop_ro(
          "itemsize", [](const DType& d) { return element_size(d.type); },
          "The size of one element in bytes.")
      .def("__repr__", [](const DType& d) { return "stride." + std::string(to_string(d.type)); })
      .def("__eq__",
           [](const DType& a, nb::handle b) {
             return nb::isinstance<DType>(b) && nb::cast<DType&>(b).type == a.type;
           })
      .def("__hash__", [](const DType& d) { return size_t(d.type); });
  for (ScalarType t : kAllTypes) {
    nb::object obj = nb::cast(DType{t});
    dtype_objects()[size_t(t)] = obj.ptr();
    m.attr(std::string(to_string(t)).c_str()) = obj;
  }

  nb::class_<Device>(m, "device", "Where a tensor's memory lives: 'cpu', 'cuda:N' or 'meta'.")
      .def(
          "__init__",
          [](Device* self, const std::string& spec) { new (self) Device(parse_device(spec)); },
          nb::arg("spec"))
      .def(
          "__init__",
          [](Device* self, const std::string& type, int index) {
            new (self) Device(parse_device(type + ":" + std::to_string(index)));
          },
          nb::arg("type"), nb::arg("index"))
      .def_prop_ro(
          "type", [](const Device& d) { return std::string(device_type_name(d.type())); },
          "The kind of device: 'cpu', 'cuda' or 'meta'.")
      .def_prop_ro(
          "index",
          [](const Device& d) -> nb::object {
            return d.is_cuda() ? nb::object(nb::int_(d.index())) : nb::none();
          },
          "The CUDA device's ordinal (None for 'cpu' and 'meta').")
      .def("__repr__",
           [](const Device& d) {
             std::string out = "device(type='" + std::string(device_type_name(d.type())) + "'";
             if (d.is_cuda()) out += ", index=" + std::to_string(d.index());
             return out + ")";
           })
      .def("__str__", &Device::str)
      .def("__eq__",
           [](const Device& a, nb::handle b) {
             const auto other = nb::isinstance<nb::str>(b) || nb::isinstance<Device>(b)
                                    ? optional_device(b)
                                    : std::nullopt;
             return other && *other == a;
           })
      .def("__hash__", [](const Device& d) { return size_t(d.type()) * 1024 + size_t(d.index()); });
}

}  // namespace stride::python
