// Memory shared with NumPy and every DLPack framework, never copied:
// t.numpy(), stride.from_numpy(a), __dlpack__ / stride.from_dlpack, and the
// buffer protocol (memoryview(t), np.asarray(t)). Whoever owns the memory
// is kept alive for as long as a view from the other side exists.
#include <nanobind/ndarray.h>

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
    {kBool, Code::Bool, 8, "?"},      {kUInt8, Code::UInt, 8, "B"},
    {kInt32, Code::Int, 32, "i"},     {kInt64, Code::Int, 64, "q"},
    {kFloat16, Code::Float, 16, "e"}, {kBFloat16, Code::Bfloat, 16, nullptr},
    {kFloat32, Code::Float, 32, "f"}, {kFloat64, Code::Float, 64, "d"},
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
                        "float32 and float64.")
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
        if (!dtype.is_none()) array = array.attr("astype")(dtype);
        if (!copy.is_none() && nb::cast<bool>(copy)) array = array.attr("copy")();
        return array;
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
      "from_dlpack",
      [](nb::handle obj) {
        if (nb::isinstance<Tensor>(obj)) return nb::cast<Tensor>(obj);
        return wrap_array(nb::cast<AnyArray>(obj), "from_dlpack");
      },
      nb::arg("ext_tensor"),
      "A tensor sharing the memory of any object with __dlpack__ (NumPy, PyTorch, ...).");
}

}  // namespace stride::python
