// stride.Tensor: properties, conversions, printing, and the factories.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "bindings.h"

namespace stride::python {

namespace {

nb::tuple size_tuple(IntArrayRef sizes) {
  nb::list out;
  for (int64_t s : sizes) out.append(s);
  return nb::tuple(out);
}

// A backward node as Python sees it: t.grad_fn prints <MulBackward>.
struct GradFn {
  std::shared_ptr<autograd::Node> node;
};

std::string tensor_repr(const Tensor& t) {
  std::string s = t.str();
  // stride prints "dtype=float64"; Python code spells it stride.float64.
  const std::string marker = ", dtype=";
  if (const size_t at = s.rfind(marker); at != std::string::npos) {
    s.insert(at + marker.size(), "stride.");
  }
  s.pop_back();  // the closing parenthesis
  if (!t.device().is_cpu() && device_backend(t.device()).has_data()) {
    s += ", device='" + t.device().str() + "'";
  }
  if (const auto fn = t.grad_fn()) {
    s += ", grad_fn=<" + fn->name() + ">";
  } else if (t.requires_grad()) {
    s += ", requires_grad=True";
  }
  return s + ")";
}

template <class F>
Tensor with_requires_grad(F&& make, bool requires_grad) {
  Tensor t = make();
  if (requires_grad) t.requires_grad_(true);
  return t;
}

void bind_factories_on(nb::module_& m) {
  // A factory of a shape, as torch's: f(2, 3) or f((2, 3)), with options.
  const auto shaped = [&m](const char* name, auto make, const char* doc) {
    m.def(
        name,
        [make, what = std::string(name) + "(): size"](nb::args size, nb::handle dtype,
                                                      nb::handle device, bool requires_grad) {
          const std::vector<int64_t> shape = shape_from_args(size, what.c_str());
          return with_requires_grad([&] { return make(shape, options_from(dtype, device)); },
                                    requires_grad);
        },
        nb::arg("size"), nb::kw_only(), nb::arg("dtype") = nb::none(),
        nb::arg("device") = nb::none(), nb::arg("requires_grad") = false, doc);
  };
  shaped("zeros", &zeros, "A tensor of zeros: zeros(2, 3) or zeros((2, 3)).");
  shaped("ones", &ones, "A tensor of ones: ones(2, 3) or ones((2, 3)).");
  shaped("empty", &empty, "A new tensor whose values are unspecified: empty(2, 3).");
  m.def(
      "empty_strided",
      [](nb::handle size, nb::handle stride, nb::handle dtype, nb::handle device,
         bool requires_grad) {
        const std::vector<int64_t> shape = int_list(size, "empty_strided(): size");
        const std::vector<int64_t> strides = int_list(stride, "empty_strided(): stride");
        return with_requires_grad(
            [&] { return empty_strided(shape, strides, options_from(dtype, device)); },
            requires_grad);
      },
      nb::arg("size"), nb::arg("stride"), nb::kw_only(), nb::arg("dtype") = nb::none(),
      nb::arg("device") = nb::none(), nb::arg("requires_grad") = false,
      "A new tensor of the given sizes and strides whose values are unspecified.");
  m.def(
      "empty_permuted",
      [](nb::handle size, nb::handle layout, nb::handle dtype, nb::handle device,
         bool requires_grad) {
        const std::vector<int64_t> shape = int_list(size, "empty_permuted(): size");
        const std::vector<int64_t> order = int_list(layout, "empty_permuted(): physical_layout");
        if (order.size() != shape.size()) {
          throw nb::value_error("empty_permuted(): physical_layout names each dim once.");
        }
        // Dims laid out in memory in `order` (outermost first), seen in the
        // logical order of size.
        std::vector<int64_t> physical(shape.size()), logical(shape.size());
        for (size_t i = 0; i < order.size(); ++i) {
          physical[i] = shape.at(size_t(order[i]));
          logical.at(size_t(order[i])) = int64_t(i);
        }
        return with_requires_grad(
            [&] { return empty(physical, options_from(dtype, device)).permute(logical); },
            requires_grad);
      },
      nb::arg("size"), nb::arg("physical_layout"), nb::kw_only(), nb::arg("dtype") = nb::none(),
      nb::arg("device") = nb::none(), nb::arg("requires_grad") = false,
      "A new tensor of shape size whose dims lie in memory in the order physical_layout.");
  m.def(
      "full",
      [](nb::handle size, const Scalar& value, nb::handle dtype, nb::handle device,
         bool requires_grad) {
        const std::vector<int64_t> shape = int_list(size, "full(): size");
        return with_requires_grad([&] { return full(shape, value, options_from(dtype, device)); },
                                  requires_grad);
      },
      nb::arg("size"), nb::arg("fill_value"), nb::kw_only(), nb::arg("dtype") = nb::none(),
      nb::arg("device") = nb::none(), nb::arg("requires_grad") = false,
      "A tensor filled with fill_value (its dtype from the value unless given).");
  m.def(
      "arange",
      [](const Scalar& a, std::optional<Scalar> b, const Scalar& step, nb::handle dtype,
         nb::handle device, bool requires_grad) {
        const Scalar start = b ? a : Scalar(int64_t(0));
        const Scalar end = b ? *b : a;
        Tensor t = arange(start, end, step, optional_dtype(dtype));
        if (const auto d = optional_device(device)) t = t.to(*d);
        if (requires_grad) t.requires_grad_(true);
        return t;
      },
      nb::arg("start"), nb::arg("end") = nb::none(), nb::arg("step") = 1, nb::kw_only(),
      nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(),
      nb::arg("requires_grad") = false,
      "Values from start to end (excluded) by step: arange(5), arange(1, 4, 0.5).");
  m.def(
      "eye",
      [](int64_t n, std::optional<int64_t> cols, nb::handle dtype, nb::handle device,
         bool requires_grad) {
        return with_requires_grad([&] { return eye(n, cols, options_from(dtype, device)); },
                                  requires_grad);
      },
      nb::arg("n"), nb::arg("m") = nb::none(), nb::kw_only(), nb::arg("dtype") = nb::none(),
      nb::arg("device") = nb::none(), nb::arg("requires_grad") = false, "The identity matrix.");
  m.def(
      "tensor",
      [](nb::handle data, nb::handle dtype, nb::handle device, bool requires_grad) {
        Tensor t = tensor_from_data(data, optional_dtype(dtype), "tensor(): data");
        if (const auto d = optional_device(device)) t = t.to(*d);
        if (requires_grad) t.requires_grad_(true);
        return t;
      },
      nb::arg("data").none(), nb::kw_only(), nb::arg("dtype") = nb::none(),
      nb::arg("device") = nb::none(), nb::arg("requires_grad") = false,
      "A new tensor holding a copy of data (a number, nested lists, a NumPy array or a tensor), "
      "as torch.tensor: the dtype is data's unless given.");
  // The _like factories: input's shape, and its dtype and device unless
  // given.
  const auto like = [&m](const char* name, auto fill, const char* doc) {
    m.def(
        name,
        [fill](const Tensor& t, nb::handle dtype, nb::handle device, bool requires_grad,
               nb::handle /*memory_format: the result is always contiguous*/) {
          return with_requires_grad([&] { return fill(t.sizes(), options_like(t, dtype, device)); },
                                    requires_grad);
        },
        nb::arg("input"), nb::kw_only(), nb::arg("dtype") = nb::none(),
        nb::arg("device") = nb::none(), nb::arg("requires_grad") = false,
        nb::arg("memory_format") = nb::none(), doc);
  };
  like("zeros_like", &zeros, "A tensor of zeros with input's shape, dtype and device.");
  like("ones_like", &ones, "A tensor of ones with input's shape, dtype and device.");
  like("empty_like", &empty, "An uninitialised tensor with input's shape, dtype and device.");
  m.def(
      "full_like",
      [](const Tensor& t, const Scalar& value, nb::handle dtype, nb::handle device,
         bool requires_grad, nb::handle /*memory_format*/) {
        return with_requires_grad(
            [&] { return full(t.sizes(), value, options_like(t, dtype, device)); }, requires_grad);
      },
      nb::arg("input"), nb::arg("fill_value"), nb::kw_only(), nb::arg("dtype") = nb::none(),
      nb::arg("device") = nb::none(), nb::arg("requires_grad") = false,
      nb::arg("memory_format") = nb::none(),
      "A tensor filled with fill_value with input's shape, dtype and device.");
  m.def(
      "manual_seed", [](uint64_t seed) { manual_seed(seed); }, nb::arg("seed"),
      "Seeds the default generator (the same seed gives the C++ API's numbers).");
  m.def(
      "scalar_tensor",
      [](const Scalar& value, nb::handle dtype, nb::handle device, bool requires_grad) {
        return with_requires_grad([&] { return scalar_tensor(value, options_from(dtype, device)); },
                                  requires_grad);
      },
      nb::arg("value"), nb::kw_only(), nb::arg("dtype") = nb::none(),
      nb::arg("device") = nb::none(), nb::arg("requires_grad") = false,
      "A 0-d tensor holding value (float32 unless dtype= says otherwise), as "
      "torch.scalar_tensor.");
  m.def("set_num_threads", &set_num_threads, nb::arg("num_threads"),
        "The number of threads stride's kernels use (torch.set_num_threads).");
  m.def("get_num_threads", &get_num_threads,
        "The number of threads stride's kernels use (torch.get_num_threads).");
}

// PyTorch's legacy tensor type names, by dtype.
std::string tensor_type_name(ScalarType t) {
  switch (t) {
    case kFloat32:
      return "stride.FloatTensor";
    case kFloat64:
      return "stride.DoubleTensor";
    case kFloat16:
      return "stride.HalfTensor";
    case kBFloat16:
      return "stride.BFloat16Tensor";
    case kInt64:
      return "stride.LongTensor";
    case kInt32:
      return "stride.IntTensor";
    case kUInt8:
      return "stride.ByteTensor";
    case kBool:
      return "stride.BoolTensor";
    case kComplex64:
      return "stride.ComplexFloatTensor";
    case kComplex128:
      return "stride.ComplexDoubleTensor";
  }
  return "stride.Tensor";
}

// t.new_zeros(size), ...: new tensors with t's dtype and device unless
// given, as torch.Tensor.new_*.
void bind_new_factories(nb::class_<Tensor>& cls) {
  const auto shaped = [&cls](const char* name, auto make, const char* doc) {
    cls.def(
        name,
        [make, what = std::string(name) + "(): size"](const Tensor& t, nb::args size,
                                                      nb::handle dtype, nb::handle device,
                                                      bool requires_grad) {
          const std::vector<int64_t> shape = shape_from_args(size, what.c_str());
          return with_requires_grad([&] { return make(shape, options_like(t, dtype, device)); },
                                    requires_grad);
        },
        nb::arg("size"), nb::kw_only(), nb::arg("dtype") = nb::none(),
        nb::arg("device") = nb::none(), nb::arg("requires_grad") = false, doc);
  };
  shaped("new_zeros", &zeros,
         "A tensor of zeros of size, with self's dtype and device unless given.");
  shaped("new_ones", &ones, "A tensor of ones of size, with self's dtype and device unless given.");
  shaped("new_empty", &empty,
         "An uninitialised tensor of size, with self's dtype and device unless given.");
  cls.def(
      "new_empty_strided",
      [](const Tensor& t, nb::handle size, nb::handle stride, nb::handle dtype, nb::handle device,
         bool requires_grad) {
        const std::vector<int64_t> shape = int_list(size, "new_empty_strided(): size");
        const std::vector<int64_t> strides = int_list(stride, "new_empty_strided(): stride");
        return with_requires_grad(
            [&] { return empty_strided(shape, strides, options_like(t, dtype, device)); },
            requires_grad);
      },
      nb::arg("size"), nb::arg("stride"), nb::kw_only(), nb::arg("dtype") = nb::none(),
      nb::arg("device") = nb::none(), nb::arg("requires_grad") = false,
      "An uninitialised tensor of size and stride, with self's dtype and device unless given.");
  cls.def(
      "new_full",
      [](const Tensor& t, nb::handle size, const Scalar& value, nb::handle dtype, nb::handle device,
         bool requires_grad) {
        const std::vector<int64_t> shape = int_list(size, "new_full(): size");
        return with_requires_grad(
            [&] { return full(shape, value, options_like(t, dtype, device)); }, requires_grad);
      },
      nb::arg("size"), nb::arg("fill_value"), nb::kw_only(), nb::arg("dtype") = nb::none(),
      nb::arg("device") = nb::none(), nb::arg("requires_grad") = false,
      "A tensor of size filled with fill_value, with self's dtype and device unless given.");
  cls.def(
      "new_tensor",
      [](const Tensor& t, nb::handle data, nb::handle dtype, nb::handle device,
         bool requires_grad) {
        const TensorOptions o = options_like(t, dtype, device);
        return with_requires_grad(
            [&] { return tensor_from_data(data, o.dtype(), "new_tensor(): data").to(o.device()); },
            requires_grad);
      },
      nb::arg("data"), nb::kw_only(), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none(),
      nb::arg("requires_grad") = false,
      "A copy of data as a tensor, with self's dtype and device unless given.");
}

// f"{loss:.4f}" formats a 0-d tensor's number; other tensors take only the
// empty spec, as torch.Tensor.__format__. t.type() names the tensor's type
// ("stride.FloatTensor"); t.type(dtype) converts, as torch's.
void bind_format_and_type(nb::class_<Tensor>& cls) {
  cls.def(
      "__format__",
      [](nb::handle self, const std::string& spec) -> nb::object {
        const Tensor& t = nb::cast<const Tensor&>(self);
        if (t.dim() == 0 && !t.device().is_meta()) {
          return nb::module_::import_("builtins").attr("format")(tensor_to_list(t), spec);
        }
        if (spec.empty()) return nb::str(self);
        throw nb::type_error(("Tensor.__format__: format_spec '" + spec +
                              "' needs a 0-d tensor (a number); format a tensor with dims "
                              "with an empty spec, or format t.item() or t.tolist().")
                                 .c_str());
      },
      nb::arg("format_spec"));
  cls.def(
      "type",
      [](const Tensor& t, nb::handle dtype, bool /*non_blocking*/) -> nb::object {
        if (dtype.is_none()) return nb::str(tensor_type_name(t.dtype()).c_str());
        return nb::cast(t.to(*optional_dtype(dtype)));
      },
      nb::arg("dtype") = nb::none(), nb::arg("non_blocking") = false,
      "The tensor's type name (stride.FloatTensor, ...) without dtype; else the tensor converted "
      "to dtype.");
}

}  // namespace

TensorOptions options_like(const Tensor& t, nb::handle dtype, nb::handle device) {
  TensorOptions o = t.options();
  if (const auto d = optional_dtype(dtype)) o = o.dtype(*d);
  if (const auto d = optional_device(device)) o = o.device(*d);
  return o;
}

void bind_tensor(nb::module_& m) {
  nb::class_<GradFn>(m, "GradFn", "A backward function of the autograd graph (t.grad_fn).")
      .def("name", [](const GradFn& g) { return g.node->name(); })
      .def_prop_ro(
          "next_functions",
          [](const GradFn& g) {
            nb::list out;
            for (const auto& e : g.node->next_edges) {
              out.append(nb::make_tuple(e.fn ? nb::cast(GradFn{e.fn}) : nb::none(), e.input_nr));
            }
            return nb::tuple(out);
          })
      .def("__repr__", [](const GradFn& g) { return "<" + g.node->name() + ">"; });

  nb::class_<Tensor> cls(m, "Tensor", nb::type_slots(tensor_buffer_slots()),
                         "A strided view of memory on a device, as torch.Tensor.");
  // stride.Tensor(t) is another handle on t's tensor (same memory, same
  // autograd identity); it is what Python subclasses such as
  // stride.nn.Parameter build on.
  cls.def(nb::init<const Tensor&>(), nb::arg("data"),
          "Another handle on data's tensor: the same memory and autograd identity.")
      .def_prop_ro(
          "shape", [](const Tensor& t) { return size_tuple(t.sizes()); },
          "The size of each dim, as a tuple of ints (torch.Size).")
      .def_prop_ro(
          "dtype", [](const Tensor& t) { return dtype_object(t.dtype()); },
          "The type of the elements (stride.float32, ...).")
      .def_prop_ro("device", &Tensor::device, "The device the memory lives on.")
      .def_prop_ro("ndim", &Tensor::dim, "The number of dims (the same as dim()).")
      .def_prop_ro("is_leaf", &Tensor::is_leaf,
                   "True for a tensor no recorded op made (a leaf of the autograd graph): "
                   "backward() fills .grad of leaves that require grad.")
      .def_prop_ro(
          "is_cpu", [](const Tensor& t) { return t.device().is_cpu(); },
          "True if the memory is on the CPU.")
      .def_prop_ro(
          "is_meta", [](const Tensor& t) { return t.device().is_meta(); },
          "True on the meta device (shape and dtype, no memory).")
      .def_prop_ro(
          "T",
          [](const Tensor& t) {
            std::vector<int64_t> dims;
            for (int64_t d = t.dim() - 1; d >= 0; --d) dims.push_back(d);
            return t.permute(dims);
          },
          "A view with the dims in reverse order (the transpose of a matrix).")
      .def_prop_rw(
          "requires_grad", [](const Tensor& t) { return t.requires_grad(); },
          [](Tensor& t, bool on) { t.requires_grad_(on); },
          "Whether autograd records the ops on this tensor; settable on leaves.")
      .def_prop_rw(
          "grad",
          [](const Tensor& t) -> nb::object {
            const Tensor& g = t.grad();
            return g.defined() ? nb::cast(g) : nb::none();
          },
          [](Tensor& t, std::optional<Tensor> g) { t.mutable_grad() = g ? *g : Tensor(); },
          nb::arg("value").none(),
          "The gradient backward() accumulated into this leaf (None until then); settable.")
      .def_prop_ro(
          "grad_fn",
          [](const Tensor& t) -> nb::object {
            auto fn = t.grad_fn();
            return fn ? nb::cast(GradFn{std::move(fn)}) : nb::none();
          },
          "The backward function of the op that made this tensor (None for a leaf).")
      .def_prop_rw(
          "data", [](const Tensor& t) { return t.detach(); },
          [](Tensor& t, const Tensor& src) {
            NoGradGuard no_grad;
            t.impl()->set_data(*src.impl());
          },
          "The tensor detached from the graph; assigning replaces its memory (no autograd).")
      .def(
          "size",
          [](const Tensor& t, std::optional<int64_t> dim) -> nb::object {
            if (dim) return nb::int_(t.size(*dim));
            return size_tuple(t.sizes());
          },
          nb::arg("dim") = nb::none(), "The shape as a tuple, or the size of dim `dim` (an int).")
      .def(
          "stride",
          [](const Tensor& t, std::optional<int64_t> dim) -> nb::object {
            if (dim) return nb::int_(t.stride(*dim));
            return size_tuple(t.strides());
          },
          nb::arg("dim") = nb::none(),
          "The strides (in elements) as a tuple, or the stride of dim `dim`.")
      .def("storage_offset", &Tensor::storage_offset,
           "The offset of the first element in the storage, in elements.")
      .def("is_contiguous", &Tensor::is_contiguous,
           "True if the elements lie in memory in row-major order without gaps.")
      .def("is_floating_point", &Tensor::is_floating_point,
           "True for a floating-point dtype (float16, bfloat16, float32, float64).")
      .def(
          "data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()); },
          "The address of the first element, as an int.")
      .def("numel", &Tensor::numel, "The number of elements (the product of the shape).")
      .def("dim", &Tensor::dim, "The number of dims.")
      .def("element_size", &Tensor::element_size, "The size of one element in bytes.")
      .def(
          "item",
          [](const Tensor& t) {
            if (t.numel() != 1) {
              throw nb::value_error(("a Tensor with " + std::to_string(t.numel()) +
                                     " elements cannot be converted to a Python number.")
                                        .c_str());
            }
            return t.item();
          },
          "The value of a one-element tensor as a Python number; ValueError otherwise.")
      .def("tolist", &tensor_to_list,
           "The elements as nested Python lists (a number for a 0-d tensor).")
      .def("__repr__", &tensor_repr)
      .def("__len__",
           [](const Tensor& t) {
             if (t.dim() == 0) throw nb::type_error("len() of a 0-d tensor");
             return t.size(0);
           })
      .def("__iter__",
           [](const Tensor& t) {
             if (t.dim() == 0) throw nb::type_error("iteration over a 0-d tensor");
             nb::list rows;
             for (int64_t i = 0; i < t.size(0); ++i) rows.append(t.select(0, i));
             return nb::iter(rows);
           })
      .def("__bool__",
           [](const Tensor& t) {
             if (t.numel() != 1) {
               throw nb::value_error(
                   "the truth value of a tensor with more than one element is ambiguous.");
             }
             return t.item().to_bool();
           })
      .def("__float__", [](const Tensor& t) { return t.item().to_double(); })
      .def("__int__", [](const Tensor& t) { return t.item().to_int64(); })
      .def("__index__",
           [](const Tensor& t) {
             if (t.numel() != 1 || t.is_floating_point()) {
               throw nb::type_error("only integer tensors of a single element can be an index.");
             }
             return t.item().to_int64();
           })
      .def("__hash__", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.impl()); });

  bind_factories_on(m);
  bind_new_factories(cls);
  bind_format_and_type(cls);
  bind_indexing(cls);
  bind_ops(m, cls);
  bind_numpy(m, cls);
  bind_autograd(m, cls);
}

}  // namespace stride::python
