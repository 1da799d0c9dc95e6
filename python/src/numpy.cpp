// Memory shared with NumPy and every DLPack framework, never copied:
// t.numpy(), stride.from_numpy(a), __dlpack__ / stride.from_dlpack, and the
// buffer protocol (memoryview(t), np.asarray(t)). Whoever owns the memory
// is kept alive for as long as a view from the other side exists. Also
// NumPy's arrays and scalars as data: stride.tensor(a) copies,
// stride.as_tensor(a) shares when it can.
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <string>

#include "bindings.h"

namespace stride::python {

namespace {

using AnyArray = nb::ndarray<nb::ro, nb::device::cpu>;

// stride's dtypes as DLPack codes (read both ways) and as buffer-protocol
// formats (bfloat16 has none).
struct ForeignType {
  ScalarType type;
  nb::dlpack::dtype_code code;
  uint8_t bits;
  const char* buffer_format;
};
using Code = nb::dlpack::dtype_code;
constexpr ForeignType kForeignTypes[] = {
    {kBool, Code::Bool, 8, "?"},           {kUInt8, Code::UInt, 8, "B"},
    {kInt32, Code::Int, 32, "i"},          {kInt64, Code::Int, 64, "q"},
    {kFloat16, Code::Float, 16, "e"},      {kBFloat16, Code::Bfloat, 16, nullptr},
    {kFloat32, Code::Float, 32, "f"},      {kFloat64, Code::Float, 64, "d"},
    {kComplex64, Code::Complex, 64, "Zf"}, {kComplex128, Code::Complex, 128, "Zd"},
};

const ForeignType& foreign_type(ScalarType t) {
  for (const ForeignType& f : kForeignTypes) {
    if (f.type == t) return f;
  }
  throw nb::type_error("unknown dtype");
}

nb::dlpack::dtype dlpack_dtype(ScalarType t) {
  const ForeignType& f = foreign_type(t);
  return {uint8_t(f.code), f.bits, 1};
}

ScalarType scalar_type_of(nb::dlpack::dtype d) {
  for (const ForeignType& known : kForeignTypes) {
    if (d.lanes == 1 && d.code == uint8_t(known.code) && d.bits == known.bits) return known.type;
  }
  throw nb::type_error(("stride has no dtype for this array's elements (DLPack code " +
                        std::to_string(int(d.code)) + ", " + std::to_string(int(d.bits)) +
                        " bits); stride holds bool, uint8, int32, int64, float16, bfloat16, "
                        "float32, float64, complex64 and complex128.")
                           .c_str());
}

void check_shareable(const Tensor& t, const char* what) {
  if (!t.device().is_cpu()) {
    throw nb::type_error((std::string(what) + ": the tensor is on " + t.device().str() +
                          "; copy it to the CPU first with .cpu().")
                             .c_str());
  }
}

// The tensor's memory as a nanobind ndarray whose owner holds a reference
// to the tensor (its storage lives while any consumer's view does).
template <class... Framework>
nb::ndarray<Framework...> as_ndarray(const Tensor& t) {
  std::vector<size_t> shape(t.sizes().begin(), t.sizes().end());
  std::vector<int64_t> strides(t.strides().begin(), t.strides().end());
  auto* keep = new Tensor(t);
  nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<Tensor*>(p); });
  return nb::ndarray<Framework...>(t.data_ptr(), shape.size(), shape.data(), owner, strides.data(),
                                   dlpack_dtype(t.dtype()), nb::device::cpu::value, 0);
}

// The deleter of a stride storage that wraps another framework's memory:
// drops the reference (a heap copy of the ndarray) with the GIL held, since
// the last tensor may die on any thread.
void release_array(void*, void* ctx) {
  nb::gil_scoped_acquire gil;
  delete static_cast<AnyArray*>(ctx);
}

bool has_negative_stride(const AnyArray& array) {
  for (size_t i = 0; i < array.ndim(); ++i) {
    if (array.stride(i) < 0) return true;
  }
  return false;
}

Tensor wrap_array(const AnyArray& array, const char* what) {
  const ScalarType dtype = scalar_type_of(array.dtype());
  std::vector<int64_t> sizes, strides;
  int64_t extent = 1;  // elements from the first to one past the last
  bool empty = false;
  for (size_t i = 0; i < array.ndim(); ++i) {
    const int64_t size = int64_t(array.shape(i)), stride = array.stride(i);
    if (stride < 0) {
      throw nb::value_error((std::string(what) +
                             ": arrays with negative strides are not supported (stride has no "
                             "negative strides). Hint: pass a copy, e.g. a.copy().")
                                .c_str());
    }
    empty |= size == 0;
    extent += (size - 1) * stride;
    sizes.push_back(size);
    strides.push_back(stride);
  }
  const size_t nbytes = empty ? 0 : size_t(extent) * element_size(dtype);
  auto* owner = new AnyArray(array);
  char* data = static_cast<char*>(array.data_handle()) + array.byte_offset();
  auto storage = std::make_shared<StorageImpl>(data, nbytes, Device(kCPU), &release_array, owner);
  return Tensor(std::make_shared<TensorImpl>(std::move(storage), dtype, sizes, strides, 0));
}

// numpy.ndarray and numpy.generic (NumPy's scalars), or null while NumPy is
// not imported: then no object can be either. NumPy is never unloaded, so
// the types are looked up once and kept.
struct NumpyTypes {
  PyObject* ndarray = nullptr;
  PyObject* generic = nullptr;
};

const NumpyTypes& numpy_types() {
  static NumpyTypes types;
  if (types.ndarray == nullptr) {
    nb::object numpy = nb::steal(PyImport_GetModule(nb::str("numpy").ptr()));
    if (!numpy.is_valid()) {
      PyErr_Clear();
      return types;
    }
    types.generic = nb::object(numpy.attr("generic")).release().ptr();
    types.ndarray = nb::object(numpy.attr("ndarray")).release().ptr();
  }
  return types;
}

bool is_instance(nb::handle obj, PyObject* type) {
  return type != nullptr && PyObject_IsInstance(obj.ptr(), type) == 1;
}

// The elements of a NumPy array that stride.tensor(a) copies and
// stride.as_tensor(a) may share; dtype= converts afterwards.
Tensor copy_array(nb::handle array, const char* what) {
  numpy_dtype(array, what);  // refuses what stride cannot hold, naming `what`
  nb::module_ numpy = nb::module_::import_("numpy");
  // C order in native byte order, as stride's memory is; the copy is the
  // tensor's alone.
  nb::object copy =
      numpy.attr("array")(array, nb::arg("dtype") = array.attr("dtype").attr("newbyteorder")("="),
                          nb::arg("order") = "C", nb::arg("copy") = true);
  return wrap_array(nb::cast<AnyArray>(copy), what);
}

// The shape and strides (in bytes) a Py_buffer points at, freed on release.
struct BufferGeometry {
  std::vector<Py_ssize_t> shape, strides;
};

int get_buffer(PyObject* self, Py_buffer* view, int flags) noexcept {
  const Tensor* t = nb::inst_ptr<Tensor>(self);
  const char* format = foreign_type(t->dtype()).buffer_format;
  if (!t->device().is_cpu() || format == nullptr) {
    PyErr_SetString(PyExc_BufferError,
                    "only CPU tensors of a NumPy dtype export a buffer (not bfloat16).");
    view->obj = nullptr;
    return -1;
  }
  if ((flags & PyBUF_STRIDES) != PyBUF_STRIDES && !t->is_contiguous()) {
    PyErr_SetString(PyExc_BufferError, "the tensor is not contiguous; ask for a strided buffer.");
    view->obj = nullptr;
    return -1;
  }
  auto* geometry = new BufferGeometry;
  for (int64_t d = 0; d < t->dim(); ++d) {
    geometry->shape.push_back(Py_ssize_t(t->size(d)));
    geometry->strides.push_back(Py_ssize_t(t->stride(d) * int64_t(t->element_size())));
  }
  view->buf = t->data_ptr();
  view->obj = Py_NewRef(self);
  view->len = Py_ssize_t(t->nbytes());
  view->itemsize = Py_ssize_t(t->element_size());
  view->readonly = 0;
  view->format = (flags & PyBUF_FORMAT) ? const_cast<char*>(format) : nullptr;
  view->ndim = int(t->dim());
  view->shape = geometry->shape.data();
  view->strides = geometry->strides.data();
  view->suboffsets = nullptr;
  view->internal = geometry;
  return 0;
}

void release_buffer(PyObject*, Py_buffer* view) noexcept {
  delete static_cast<BufferGeometry*>(view->internal);
}

}  // namespace

bool is_numpy_array(nb::handle obj) {
  return is_instance(obj, numpy_types().ndarray);
}

bool is_numpy(nb::handle obj) {
  return is_numpy_array(obj) || is_instance(obj, numpy_types().generic);
}

ScalarType numpy_dtype(nb::handle obj, const char* what) {
  nb::object type = obj.attr("dtype");
  const std::string kind = nb::cast<std::string>(type.attr("kind"));
  const size_t bits = nb::cast<size_t>(type.attr("itemsize")) * 8;
  std::optional<Code> code;
  if (kind == "b") code = Code::Bool;
  if (kind == "u") code = Code::UInt;
  if (kind == "i") code = Code::Int;
  if (kind == "f") code = Code::Float;
  if (kind == "c") code = Code::Complex;
  for (const ForeignType& known : kForeignTypes) {
    if (code == known.code && known.bits == bits) return known.type;
  }
  throw nb::type_error(
      (std::string(what) + ": stride has no dtype for NumPy's " +
       nb::cast<std::string>(nb::str(type)) +
       "; stride holds bool, uint8, int32, int64, float16, bfloat16, float32, "
       "float64, complex64 and complex128. Hint: convert to one of those first with a.astype(...).")
          .c_str());
}

Tensor tensor_from_numpy(nb::handle obj, const char* what) {
  return copy_array(nb::module_::import_("numpy").attr("asarray")(obj), what);
}

PyType_Slot* tensor_buffer_slots() {
  static PyType_Slot slots[] = {{Py_bf_getbuffer, reinterpret_cast<void*>(&get_buffer)},
                                {Py_bf_releasebuffer, reinterpret_cast<void*>(&release_buffer)},
                                {0, nullptr}};
  return slots;
}

void bind_numpy(nb::module_& m, nb::class_<Tensor>& cls) {
  cls.def(
      "numpy",
      [](const Tensor& t) {
        check_shareable(t, "numpy()");
        if (t.requires_grad()) {
          throw nb::type_error(
              "can't call numpy() on a tensor that requires grad. Use tensor.detach().numpy() "
              "instead.");
        }
        if (t.dtype() == kBFloat16) throw nb::type_error("NumPy has no bfloat16 dtype.");
        return as_ndarray<nb::numpy>(t);
      },
      "The tensor's memory as a NumPy array (shared: a write through one shows in the other).");
  cls.def(
      "__array__",
      [](const Tensor& t, nb::handle dtype, nb::handle copy) {
        check_shareable(t, "__array__");
        nb::object array = nb::cast(as_ndarray<nb::numpy>(t.detach()));
        if (!dtype.is_none()) {
          nb::object type;
          try {
            type = nb::module_::import_("numpy").attr("dtype")(dtype);
          } catch (const nb::python_error&) {
            throw nb::type_error(("__array__(): dtype must be a NumPy dtype or None; got " +
                                  std::string(nb::inst_name(dtype).c_str()) + ".")
                                     .c_str());
          }
          array = array.attr("astype")(type);
        }
        bool copy_now = false;
        if (!copy.is_none() && !nb::try_cast(copy, copy_now)) {
          throw nb::type_error(("__array__(): copy must be True, False or None; got " +
                                std::string(nb::inst_name(copy).c_str()) + ".")
                                   .c_str());
        }
        return copy_now ? array.attr("copy")() : array;
      },
      nb::arg("dtype") = nb::none(), nb::arg("copy") = nb::none());
  cls.def(
      "__dlpack__",
      [](const Tensor& t, nb::kwargs) {
        check_shareable(t, "__dlpack__");
        // An unversioned "dltensor" capsule, which every consumer accepts
        // (the protocol lets a producer ignore max_version).
        return nb::cast(as_ndarray<>(t.detach()));
      },
      "A DLPack capsule of the tensor's memory (shared).");
  cls.def("__dlpack_device__", [](const Tensor& t) {
    check_shareable(t, "__dlpack_device__");
    return nb::make_tuple(int(nb::device::cpu::value), 0);
  });
  m.def(
      "from_numpy",
      [](nb::ndarray<nb::numpy, nb::ro, nb::device::cpu> a) {
        return wrap_array(AnyArray(a), "from_numpy");
      },
      nb::arg("ndarray"), nb::sig("def from_numpy(ndarray: numpy.ndarray) -> Tensor"),
      "A tensor sharing the array's memory (writes through either show in both); the array "
      "stays alive while the tensor does.");
  m.def(
      "as_tensor",
      [](nb::handle data, nb::handle dtype, nb::handle device) -> nb::object {
        const std::optional<ScalarType> type = optional_dtype(dtype);
        const std::optional<Device> to = optional_device(device);
        Tensor t;
        if (nb::isinstance<Tensor>(data)) {
          t = nb::cast<Tensor>(data);
          if ((!type || *type == t.dtype()) && (!to || *to == t.device())) {
            return nb::borrow(data);
          }
        } else if (is_numpy_array(data)) {
          // Shared as from_numpy shares, unless the dtype or device differ
          // or stride cannot point at the memory (another byte order,
          // negative strides) or must not write it (a read-only array).
          AnyArray array;
          const bool shareable = (!type || *type == numpy_dtype(data, "as_tensor()")) &&
                                 (!to || to->is_cpu()) &&
                                 nb::cast<bool>(data.attr("dtype").attr("isnative")) &&
                                 nb::cast<bool>(data.attr("flags").attr("writeable")) &&
                                 nb::try_cast(data, array) && !has_negative_stride(array);
          t = shareable ? wrap_array(array, "as_tensor()") : copy_array(data, "as_tensor()");
        } else {
          t = tensor_from_data(data, type, "as_tensor(): data");
        }
        if (type) t = t.to(*type);
        if (to) t = t.to(*to);
        return nb::cast(t);
      },
      nb::arg("data").none(), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(),
      "data as a tensor, as torch.as_tensor: a tensor itself when its dtype and device fit, a "
      "NumPy array's memory shared (as from_numpy) when its dtype fits and device is the CPU, "
      "else a copy (as tensor).");
  m.def(
      "from_dlpack",
      [](nb::handle obj) {
        if (nb::isinstance<Tensor>(obj)) return nb::cast<Tensor>(obj);
        AnyArray array;
        if (!nb::try_cast(obj, array)) {
          throw nb::type_error(("from_dlpack(): ext_tensor must have __dlpack__ (a NumPy array, a "
                                "PyTorch tensor, ...) or the buffer protocol; got " +
                                std::string(nb::inst_name(obj).c_str()) + ".")
                                   .c_str());
        }
        return wrap_array(array, "from_dlpack");
      },
      nb::arg("ext_tensor"),
      "A tensor sharing the memory of any object with __dlpack__ (NumPy, PyTorch, ...).");
}

}  // namespace stride::python
