// The pieces of the extension stride._stride and what they share: nanobind
// casters for stride's Scalar, the parsing of shapes, dtypes and devices as
// Python code writes them, and one bind_* function per part of the API.
#pragma once

#include <nanobind/nanobind.h>

#include <optional>
#include <vector>

#include "stride/stride.h"

namespace nb = nanobind;

namespace nanobind::detail {

// Python bool, int and float (and NumPy's scalars) as stride::Scalar, which
// keeps the kind: `int_tensor + 1` stays integral, `int_tensor + 1.5`
// promotes, as in PyTorch.
template <>
struct type_caster<stride::Scalar> {
  NB_TYPE_CASTER(stride::Scalar, const_name("float | int | bool"))

  bool from_python(handle src, uint8_t flags, cleanup_list*) noexcept;
  static handle from_cpp(const stride::Scalar& value, rv_policy, cleanup_list*) noexcept;
};

}  // namespace nanobind::detail

namespace stride::python {

// A shape as PyTorch's functions take it: `f(2, 3)`, `f((2, 3))` or
// `f([2, 3])` (NumPy's integers and arrays too), and a sequence of ints.
// TypeError for anything else, naming `what` ("zeros(): size").
std::vector<int64_t> shape_from_args(const nb::args& args, const char* what);
std::vector<int64_t> int_list(nb::handle sequence, const char* what);
// A tensor argument that may be None: the tensor, or an undefined one
// (python/src/nn.cpp).
Tensor or_undefined(const std::optional<Tensor>& t);
// dim= as PyTorch's reductions take it: None (every dim), an int, or a
// sequence of ints.
std::vector<int64_t> dims_arg(nb::handle dim);
// The int a Python or NumPy integer holds; nullopt for anything else, a
// NumPy array of several elements included (it has __index__ too).
// ValueError naming `what` past int64.
std::optional<int64_t> index_value(nb::handle h, const char* what);

// dtype= and device= arguments: None (the default), a stride.dtype, a
// string ("cpu", "cuda:0", "meta") or a stride.device.
std::optional<ScalarType> optional_dtype(nb::handle obj);
bool is_dtype(nb::handle obj);
std::optional<Device> optional_device(nb::handle obj);
TensorOptions options_from(nb::handle dtype, nb::handle device);
// t's dtype and device, each replaced when given (the _like and new_*
// factories).
TensorOptions options_like(const Tensor& t, nb::handle dtype, nb::handle device);

// Converts nested Python lists and numbers, NumPy arrays and scalars (also
// inside the lists) and tensors to a new tensor, as torch.tensor does: the
// dtype is inferred (bool, int64, float32, a NumPy value's own dtype,
// promoted together) unless given. `what` names the argument in errors
// ("tensor(): data").
Tensor tensor_from_data(nb::handle data, std::optional<ScalarType> dtype, const char* what);
// The tensor as nested Python lists (a number for a 0-d tensor).
nb::object tensor_to_list(const Tensor& t);

// NumPy's values: is_numpy() is true for an array or a NumPy scalar,
// numpy_dtype() is the stride dtype of one (TypeError naming `what` for
// NumPy dtypes stride does not have), tensor_from_numpy() a copy of one.
bool is_numpy(nb::handle obj);
bool is_numpy_array(nb::handle obj);
ScalarType numpy_dtype(nb::handle obj, const char* what);
Tensor tensor_from_numpy(nb::handle obj, const char* what);

// The singleton Python object of a dtype (stride.float32, ...).
nb::object dtype_object(ScalarType type);

// The buffer protocol's slots for stride.Tensor (memoryview(t), np.asarray(t)).
PyType_Slot* tensor_buffer_slots();

void bind_errors(nb::module_& m);
void bind_linalg(nb::module_& m);
void bind_masked(nb::module_& m);
void bind_dtypes(nb::module_& m);
void bind_tensor(nb::module_& m);
void bind_indexing(nb::class_<Tensor>& cls);
void bind_indexing_functions(nb::module_& m);
void bind_ops(nb::module_& m, nb::class_<Tensor>& cls);
void bind_sorting_and_scans(nb::module_& m, nb::class_<Tensor>& cls);
void bind_shape_ops(nb::module_& m, nb::class_<Tensor>& cls);
void bind_elementwise_composites(nb::module_& m, nb::class_<Tensor>& cls);
void bind_random_forms(nb::module_& m, nb::class_<Tensor>& cls);
// view_as_real, real, conj, ... and the submodule _fft (stride.fft).
void bind_complex_and_fft(nb::module_& m, nb::class_<Tensor>& cls);
// prod, median, quantile, ..., the scatters and index_* ops, searchsorted,
// unique, ... (reductions.cpp).
void bind_reductions_and_scatters(nb::module_& m, nb::class_<Tensor>& cls);
// A (values, indices) result as PyTorch's named tuple of that op
// (stride.return_types.sort, .topk, .max, ...).
nb::object values_indices(const char* kind, std::pair<Tensor, Tensor> result);
// trace, diff, cov, gradient, the histograms, ... and the submodule
// _signal_windows (stride.signal.windows) (numeric.cpp).
void bind_numeric_composites(nb::module_& m, nb::class_<Tensor>& cls);
void bind_numpy(nb::module_& m, nb::class_<Tensor>& cls);
void bind_autograd(nb::module_& m, nb::class_<Tensor>& cls);
// After bind_tensor: stride.Generator and generator= overloads of the
// random functions and methods.
void bind_generator(nb::module_& m);
void bind_data(nb::module_& m);
void bind_profiler(nb::module_& m);
void bind_cuda(nb::module_& m);
void bind_serialize(nb::module_& m);
void bind_tokenizers(nb::module_& m);
// stride._stride._plot: heatmap grids as images (python/src/plot.cpp).
void bind_plot(nb::module_& m);
void bind_nn(nb::module_& m);
// The convolutions and poolings, into stride._stride._nn (python/src/conv.cpp).
void bind_conv(nb::module_& m);
void bind_optim(nb::module_& m);
void bind_doctor(nb::module_& m);
void bind_autocast(nb::module_& m);

}  // namespace stride::python
