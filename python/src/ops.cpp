// Every op of the C++ API as a Tensor method and a stride.* function, with
// PyTorch's argument names, and the Python operators. The elementwise ops
// come from the op list (src/core/op_list.h), so a new one is bound here
// without an edit.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <tuple>

#include "bindings.h"
#include "core/op_list.h"
#include "op_docs.h"

namespace stride::python {

namespace {

using TensorClass = nb::class_<Tensor>;

// An in-place method returns the very object it was called on, as in
// PyTorch (`y = x.add_(1)` makes `y is x`).
template <class F, class R, class... Args>
auto in_place_with(F f, R (F::*)(Tensor&, Args...) const) {
  return [f](nb::object self, Args... args) {
    f(nb::cast<Tensor&>(self), std::forward<Args>(args)...);
    return self;
  };
}
template <class F>
auto in_place(F f) {
  return in_place_with(f, &F::operator());
}

// A number beside a tensor, as the C++ operators wrap it.
Tensor wrapped_number(const Scalar& s, const Tensor& like) {
  return scalar_tensor(
      s, like.options().dtype(s.is_floating_point() && !like.is_floating_point() ? kFloat32
                                                                                 : like.dtype()));
}

// squeeze(dims): the dims of size 1 among dims removed, as PyTorch's.
Tensor squeezed(const Tensor& t, std::vector<int64_t> dims) {
  for (int64_t& d : dims) d = d < 0 ? d + std::max<int64_t>(t.dim(), 1) : d;
  std::sort(dims.rbegin(), dims.rend());
  Tensor r = t;
  for (const int64_t d : dims) r = r.squeeze(d);
  return r;
}

// split with a list of sizes, which must add up to the dim's size.
std::vector<Tensor> split_by_sizes(const Tensor& t,
                                   const std::vector<int64_t>& sizes,
                                   int64_t dim) {
  int64_t start = 0;
  std::vector<Tensor> parts;
  for (const int64_t n : sizes) {
    parts.push_back(t.narrow(dim, start, n));
    start += n;
  }
  if (start != t.size(dim)) {
    throw nb::value_error(("split: the sizes add up to " + std::to_string(start) + " but dim " +
                           std::to_string(dim) + " has " + std::to_string(t.size(dim)) +
                           " elements.")
                              .c_str());
  }
  return parts;
}

// t laid out with its channels (dim 1) innermost, seen in its own dim
// order: (N, C, H, W) stored as (N, H, W, C), as PyTorch's channels_last.
Tensor channels_innermost(const Tensor& t, const std::string& name, int64_t rank) {
  if (t.dim() != rank) {
    throw nb::value_error(("memory_format=" + name + " takes a tensor of " + std::to_string(rank) +
                           " dims; got " + std::to_string(t.dim()) + ".")
                              .c_str());
  }
  std::vector<int64_t> to_last{0}, back{0, rank - 1};
  for (int64_t d = 2; d < rank; ++d) {
    to_last.push_back(d);
    back.push_back(d - 1);
  }
  to_last.push_back(1);
  return t.permute(to_last).contiguous().permute(back);
}

// memory_format=: stride.preserve_format (None) keeps the layout,
// stride.contiguous_format makes it contiguous, stride.channels_last (4
// dims) and channels_last_3d (5 dims) store the channels innermost.
Tensor in_memory_format(const Tensor& t, nb::handle memory_format) {
  if (memory_format.is_none()) return t;
  const std::string name = nb::cast<std::string>(nb::str(memory_format));
  if (name == "stride.preserve_format") return t;
  if (name == "stride.contiguous_format") return t.contiguous();
  if (name == "stride.channels_last") return channels_innermost(t, name, 4);
  if (name == "stride.channels_last_3d") return channels_innermost(t, name, 5);
  throw nb::type_error(("memory_format=" + name + " is not a stride memory format.").c_str());
}

Tensor cast_to(const Tensor& t, nb::handle dtype) {
  const std::optional<ScalarType> d = optional_dtype(dtype);
  return d ? t.to(*d) : t;
}

Tensor to_any(const Tensor& t, nb::handle target, nb::handle dtype, nb::handle device) {
  Tensor out = t;
  if (!target.is_none()) {
    if (nb::isinstance<Tensor>(target)) {
      const Tensor& other = nb::cast<const Tensor&>(target);
      return t.to(other.dtype()).to(other.device());
    }
    out = is_dtype(target) ? out.to(*optional_dtype(target)) : out.to(*optional_device(target));
  }
  if (const auto d = optional_dtype(dtype)) out = out.to(*d);
  if (const auto d = optional_device(device)) out = out.to(*d);
  return out;
}

void bind_elementwise(nb::module_& m, TensorClass& cls) {
#define STRIDE_BIND_UNARY(name, ...)                                 \
  def_both(m, cls, #name, [](const Tensor& t) { return t.name(); }); \
  def_method(cls, #name "_", in_place([](Tensor& t) { t.name##_(); }));
  STRIDE_FLOAT_UNARY_OPS(STRIDE_BIND_UNARY)
  STRIDE_SAME_UNARY_OPS(STRIDE_BIND_UNARY)
#undef STRIDE_BIND_UNARY

#define STRIDE_BIND_BINARY(name, ...)                                             \
  def_both(                                                                       \
      m, cls, #name, [](const Tensor& a, const Tensor& b) { return name(a, b); }, \
      nb::arg("other"));
  STRIDE_BINARY_OPS(STRIDE_BIND_BINARY)
#undef STRIDE_BIND_BINARY

#define STRIDE_BIND_FLOAT_BINARY(name, ...)                                           \
  def_both(                                                                           \
      m, cls, #name, [](const Tensor& a, const Tensor& b) { return name(a, b); },     \
      nb::arg("other"));                                                              \
  def_both(                                                                           \
      m, cls, #name,                                                                  \
      [](const Tensor& a, const Scalar& b) { return name(a, wrapped_number(b, a)); }, \
      nb::arg("other"));
  STRIDE_FLOAT_BINARY_OPS(STRIDE_BIND_FLOAT_BINARY)
#undef STRIDE_BIND_FLOAT_BINARY

#define STRIDE_BIND_INTEGER_BINARY(name, ...)                                            \
  def_both(                                                                              \
      m, cls, #name, [](const Tensor& a, const Tensor& b) { return a.name(b); },         \
      nb::arg("other"));                                                                 \
  def_both(                                                                              \
      m, cls, #name, [](const Tensor& a, const Scalar& b) { return a.name(b); },         \
      nb::arg("other"));                                                                 \
  def_method(cls, #name "_", in_place([](Tensor& a, const Tensor& b) { a.name##_(b); }), \
             nb::arg("other"));                                                          \
  def_method(cls, #name "_", in_place([](Tensor& a, const Scalar& b) { a.name##_(b); }), \
             nb::arg("other"));
  STRIDE_INTEGER_BINARY_OPS(STRIDE_BIND_INTEGER_BINARY)
#undef STRIDE_BIND_INTEGER_BINARY
  def_both(m, cls, "bitwise_not", [](const Tensor& t) { return t.bitwise_not(); });
  def_method(cls, "bitwise_not_", in_place([](Tensor& t) { t.bitwise_not_(); }));

#define STRIDE_BIND_COMPARISON(name, ...)                                        \
  def_both(                                                                      \
      m, cls, #name, [](const Tensor& a, const Tensor& b) { return a.name(b); }, \
      nb::arg("other"));                                                         \
  def_both(                                                                      \
      m, cls, #name, [](const Tensor& a, const Scalar& b) { return a.name(b); }, \
      nb::arg("other"));
  STRIDE_COMPARISON_OPS(STRIDE_BIND_COMPARISON)
#undef STRIDE_BIND_COMPARISON

  def_both(
      m, cls, "add",
      [](const Tensor& a, const Tensor& b, const Scalar& alpha) { return a.add(b, alpha); },
      nb::arg("other"), nb::kw_only(), nb::arg("alpha") = 1);
  def_both(
      m, cls, "add",
      [](const Tensor& a, const Scalar& b, const Scalar& alpha) {
        return a.add(Scalar(b.to_double() * alpha.to_double()));
      },
      nb::arg("other"), nb::kw_only(), nb::arg("alpha") = 1);
  def_both(
      m, cls, "sub",
      [](const Tensor& a, const Tensor& b, const Scalar& alpha) { return a.sub(b, alpha); },
      nb::arg("other"), nb::kw_only(), nb::arg("alpha") = 1);
  def_both(
      m, cls, "sub", [](const Tensor& a, const Scalar& b) { return a.sub(b); }, nb::arg("other"));
  def_both(
      m, cls, "mul", [](const Tensor& a, const Scalar& b) { return a.mul(b); }, nb::arg("other"));
  def_both(
      m, cls, "div",
      [](const Tensor& a, const Tensor& b, std::optional<std::string> mode) {
        return mode ? div(a, b, *mode) : a.div(b);
      },
      nb::arg("other"), nb::kw_only(), nb::arg("rounding_mode") = nb::none());
  def_both(
      m, cls, "div",
      [](const Tensor& a, const Scalar& b, std::optional<std::string> mode) {
        return mode ? div(a, wrapped_number(b, a), *mode) : a.div(b);
      },
      nb::arg("other"), nb::kw_only(), nb::arg("rounding_mode") = nb::none());
  def_both(
      m, cls, "floor_divide", [](const Tensor& a, const Tensor& b) { return div(a, b, "floor"); },
      nb::arg("other"));
  def_both(
      m, cls, "floor_divide",
      [](const Tensor& a, const Scalar& b) { return div(a, wrapped_number(b, a), "floor"); },
      nb::arg("other"));
  def_both(
      m, cls, "fmod", [](const Tensor& a, const Tensor& b) { return a.fmod(b); }, nb::arg("other"));
  def_both(
      m, cls, "fmod", [](const Tensor& a, const Scalar& b) { return a.fmod(b); }, nb::arg("other"));
  def_both(
      m, cls, "remainder", [](const Tensor& a, const Tensor& b) { return a.remainder(b); },
      nb::arg("other"));
  def_both(
      m, cls, "remainder", [](const Tensor& a, const Scalar& b) { return a.remainder(b); },
      nb::arg("other"));
  // torch.remainder(number, tensor) (its Scalar_Tensor overload).
  def_function(
      m, "remainder", [](const Scalar& a, const Tensor& b) { return remainder(a, b); },
      nb::arg("input"), nb::arg("other"));
  def_both(m, cls, "frexp", [](const Tensor& x) { return values_indices("frexp", x.frexp()); });
  def_both(
      m, cls, "pow", [](const Tensor& a, const Tensor& b) { return a.pow(b); },
      nb::arg("exponent"));
  def_both(
      m, cls, "pow", [](const Tensor& a, const Scalar& b) { return a.pow(b); },
      nb::arg("exponent"));
  def_method(cls, "add_",
             in_place([](Tensor& a, const Tensor& b, const Scalar& alpha) { a.add_(b, alpha); }),
             nb::arg("other"), nb::kw_only(), nb::arg("alpha") = 1);
  def_method(cls, "add_", in_place([](Tensor& a, const Scalar& b) { a.add_(b); }),
             nb::arg("other"));
  def_method(cls, "sub_",
             in_place([](Tensor& a, const Tensor& b, const Scalar& alpha) { a.sub_(b, alpha); }),
             nb::arg("other"), nb::kw_only(), nb::arg("alpha") = 1);
  def_method(cls, "sub_", in_place([](Tensor& a, const Scalar& b) { a.sub_(b); }),
             nb::arg("other"));
  def_method(cls, "mul_", in_place([](Tensor& a, const Tensor& b) { a.mul_(b); }),
             nb::arg("other"));
  def_method(cls, "mul_", in_place([](Tensor& a, const Scalar& b) { a.mul_(b); }),
             nb::arg("other"));
  def_method(cls, "div_", in_place([](Tensor& a, const Tensor& b) { a.div_(b); }),
             nb::arg("other"));
  def_method(cls, "div_", in_place([](Tensor& a, const Scalar& b) { a.div_(b); }),
             nb::arg("other"));
  def_method(cls, "pow_", in_place([](Tensor& a, const Scalar& b) { a.pow_(b); }),
             nb::arg("exponent"));
  def_method(cls, "fmod_", in_place([](Tensor& a, const Tensor& b) { a.fmod_(b); }),
             nb::arg("other"));
  def_method(cls, "fmod_", in_place([](Tensor& a, const Scalar& b) { a.fmod_(b); }),
             nb::arg("other"));
  def_method(cls, "remainder_", in_place([](Tensor& a, const Tensor& b) { a.remainder_(b); }),
             nb::arg("other"));
  def_method(cls, "remainder_", in_place([](Tensor& a, const Scalar& b) { a.remainder_(b); }),
             nb::arg("other"));
  def_method(cls, "lerp_",
             in_place([](Tensor& a, const Tensor& end, const Scalar& w) { a.lerp_(end, w); }),
             nb::arg("end"), nb::arg("weight"));
  def_method(cls, "addcmul_",
             in_place([](Tensor& a, const Tensor& t1, const Tensor& t2, const Scalar& value) {
               a.addcmul_(t1, t2, value);
             }),
             nb::arg("tensor1"), nb::arg("tensor2"), nb::kw_only(), nb::arg("value") = 1);
  def_method(cls, "addcdiv_",
             in_place([](Tensor& a, const Tensor& t1, const Tensor& t2, const Scalar& value) {
               a.addcdiv_(t1, t2, value);
             }),
             nb::arg("tensor1"), nb::arg("tensor2"), nb::kw_only(), nb::arg("value") = 1);
  def_both(
      m, cls, "lerp",
      [](const Tensor& a, const Tensor& end, const Scalar& w) { return lerp(a, end, w); },
      nb::arg("end"), nb::arg("weight"));
  def_both(
      m, cls, "lerp",
      [](const Tensor& a, const Tensor& end, const Tensor& w) { return lerp(a, end, w); },
      nb::arg("end"), nb::arg("weight"));
  def_both(
      m, cls, "clamp",
      [](const Tensor& t, std::optional<Scalar> lo, std::optional<Scalar> hi) {
        return t.clamp(lo, hi);
      },
      nb::arg("min") = nb::none(), nb::arg("max") = nb::none());
  def_both(
      m, cls, "clamp",
      [](const Tensor& t, std::optional<Tensor> lo, std::optional<Tensor> hi) {
        return clamp(t, lo, hi);
      },
      nb::arg("min") = nb::none(), nb::arg("max") = nb::none());
  def_method(cls, "clamp_",
             in_place([](Tensor& t, std::optional<Scalar> lo, std::optional<Scalar> hi) {
               t.clamp_(lo, hi);
             }),
             nb::arg("min") = nb::none(), nb::arg("max") = nb::none());
  def_both(
      m, cls, "masked_fill",
      [](const Tensor& t, const Tensor& mask, const Scalar& v) { return t.masked_fill(mask, v); },
      nb::arg("mask"), nb::arg("value"));
  def_both(
      m, cls, "masked_fill",
      [](const Tensor& t, const Tensor& mask, const Tensor& v) { return masked_fill(t, mask, v); },
      nb::arg("mask"), nb::arg("value"));
  def_method(cls, "masked_fill_", in_place([](Tensor& t, const Tensor& mask, const Scalar& v) {
               t.masked_fill_(mask, v);
             }),
             nb::arg("mask"), nb::arg("value"));
  def_both(
      m, cls, "tril", [](const Tensor& t, int64_t d) { return t.tril(d); },
      nb::arg("diagonal") = 0);
  def_both(
      m, cls, "triu", [](const Tensor& t, int64_t d) { return t.triu(d); },
      nb::arg("diagonal") = 0);
  def_method(cls, "tril_", in_place([](Tensor& t, int64_t d) { t.tril_(d); }),
             nb::arg("diagonal") = 0);
  def_method(cls, "triu_", in_place([](Tensor& t, int64_t d) { t.triu_(d); }),
             nb::arg("diagonal") = 0);
  def_function(m, "where", &where, nb::arg("condition"), nb::arg("input"), nb::arg("other"));
  def_function(
      m, "where",
      [](const Tensor& c, const Tensor& a, const Scalar& b) {
        return where(c, a, full_like(a, b));
      },
      nb::arg("condition"), nb::arg("input"), nb::arg("other"));
  // torch.Tensor.where(condition, other): self where condition holds.
  def_method(
      cls, "where",
      [](const Tensor& self, const Tensor& c, const Tensor& b) { return where(c, self, b); },
      nb::arg("condition"), nb::arg("other"));
  def_method(
      cls, "where",
      [](const Tensor& self, const Tensor& c, const Scalar& b) {
        return where(c, self, full_like(self, b));
      },
      nb::arg("condition"), nb::arg("other"));
  def_method(cls, "fill_", in_place([](Tensor& t, const Scalar& v) { t.fill_(v); }),
             nb::arg("value"));
  def_method(cls, "zero_", in_place([](Tensor& t) { t.zero_(); }));
  // The function forms as masked_fill over every position, so that autograd
  // records them as PyTorch does (input's gradient zero; a tensor value's
  // the sum of the result's).
  def_function(
      m, "zero_",
      [](nb::object t) {
        if (!nb::isinstance<Tensor>(t)) throw nb::type_error("zero_(): input must be a tensor.");
        Tensor& self = nb::cast<Tensor&>(t);
        self.masked_fill_(ones(self.sizes(), TensorOptions(kBool).device(self.device())), 0);
        return t;
      },
      nb::arg("input"));
  def_function(
      m, "fill",
      [](const Tensor& t, const Scalar& v) {
        return masked_fill(t, ones(t.sizes(), TensorOptions(kBool).device(t.device())), v);
      },
      nb::arg("input"), nb::arg("value"));
  def_function(
      m, "fill",
      [](const Tensor& t, const Tensor& v) {
        return masked_fill(t, ones(t.sizes(), TensorOptions(kBool).device(t.device())), v);
      },
      nb::arg("input"), nb::arg("value"));
  def_method(cls, "copy_", in_place([](Tensor& t, const Tensor& src) { t.copy_(src); }),
             nb::arg("src"));
}

void bind_operators(TensorClass& cls) {
  cls.def("__add__", [](const Tensor& a, const Tensor& b) { return a + b; })
      .def("__add__", [](const Tensor& a, const Scalar& b) { return a + b; })
      .def("__radd__", [](const Tensor& a, const Scalar& b) { return b + a; })
      .def("__radd__", [](const Tensor& a, const Tensor& b) { return b + a; })
      .def("__rsub__", [](const Tensor& a, const Tensor& b) { return b - a; })
      .def("__rmul__", [](const Tensor& a, const Tensor& b) { return b * a; })
      .def("__rtruediv__", [](const Tensor& a, const Tensor& b) { return b / a; })
      .def("__rpow__", [](const Tensor& a, const Tensor& b) { return b.pow(a); })
      .def("__floordiv__", [](const Tensor& a, const Tensor& b) { return div(a, b, "floor"); })
      .def("__floordiv__",
           [](const Tensor& a, const Scalar& b) { return div(a, wrapped_number(b, a), "floor"); })
      .def("__rfloordiv__",
           [](const Tensor& a, const Scalar& b) { return div(wrapped_number(b, a), a, "floor"); })
      .def("__mod__", [](const Tensor& a, const Tensor& b) { return a.remainder(b); })
      .def("__mod__", [](const Tensor& a, const Scalar& b) { return a.remainder(b); })
      .def("__rmod__", [](const Tensor& a, const Tensor& b) { return b.remainder(a); })
      .def("__rmod__", [](const Tensor& a, const Scalar& b) { return remainder(b, a); })
      .def("__imod__", in_place([](Tensor& a, const Tensor& b) { a.remainder_(b); }))
      .def("__imod__", in_place([](Tensor& a, const Scalar& b) { a.remainder_(b); }))
      .def("__sub__", [](const Tensor& a, const Tensor& b) { return a - b; })
      .def("__sub__", [](const Tensor& a, const Scalar& b) { return a - b; })
      .def("__rsub__", [](const Tensor& a, const Scalar& b) { return b - a; })
      .def("__mul__", [](const Tensor& a, const Tensor& b) { return a * b; })
      .def("__mul__", [](const Tensor& a, const Scalar& b) { return a * b; })
      .def("__rmul__", [](const Tensor& a, const Scalar& b) { return b * a; })
      .def("__truediv__", [](const Tensor& a, const Tensor& b) { return a / b; })
      .def("__truediv__", [](const Tensor& a, const Scalar& b) { return a / b; })
      .def("__rtruediv__", [](const Tensor& a, const Scalar& b) { return b / a; })
      .def("__matmul__", [](const Tensor& a, const Tensor& b) { return matmul(a, b); })
      .def("__pow__", [](const Tensor& a, const Tensor& b) { return a.pow(b); })
      .def("__pow__", [](const Tensor& a, const Scalar& b) { return a.pow(b); })
      .def("__rpow__", [](const Tensor& a, const Scalar& b) { return full_like(a, b).pow(a); })
      .def("__neg__", [](const Tensor& a) { return -a; })
      .def("__pos__", [](const Tensor& a) { return a; })
      .def("__abs__", [](const Tensor& a) { return a.abs(); })
      .def("__iadd__", in_place([](Tensor& a, const Tensor& b) { a += b; }))
      .def("__iadd__", in_place([](Tensor& a, const Scalar& b) { a += b; }))
      .def("__isub__", in_place([](Tensor& a, const Tensor& b) { a -= b; }))
      .def("__isub__", in_place([](Tensor& a, const Scalar& b) { a -= b; }))
      .def("__imul__", in_place([](Tensor& a, const Tensor& b) { a *= b; }))
      .def("__imul__", in_place([](Tensor& a, const Scalar& b) { a *= b; }))
      .def("__itruediv__", in_place([](Tensor& a, const Tensor& b) { a /= b; }))
      .def("__itruediv__", in_place([](Tensor& a, const Scalar& b) { a /= b; }));
  // The integer operators: & | ^ commute, so a number on the left is the
  // method's other (promoted as the method promotes it: 1 & mask is int64);
  // << and >> take it as the shifted operand.
#define STRIDE_BIND_INTEGER_OPERATOR(op, iop, name)                         \
  cls.def(op, [](const Tensor& a, const Tensor& b) { return a.name(b); });  \
  cls.def(op, [](const Tensor& a, const Scalar& b) { return a.name(b); });  \
  cls.def(iop, in_place([](Tensor& a, const Tensor& b) { a.name##_(b); })); \
  cls.def(iop, in_place([](Tensor& a, const Scalar& b) { a.name##_(b); }));
#define STRIDE_BIND_COMMUTING_OPERATOR(op, rop, iop, name)                  \
  STRIDE_BIND_INTEGER_OPERATOR(op, iop, name)                               \
  cls.def(rop, [](const Tensor& a, const Tensor& b) { return b.name(a); }); \
  cls.def(rop, [](const Tensor& a, const Scalar& b) { return a.name(b); });
#define STRIDE_BIND_SHIFT_OPERATOR(op, rop, iop, name)                       \
  STRIDE_BIND_INTEGER_OPERATOR(op, iop, name)                                \
  cls.def(rop, [](const Tensor& a, const Tensor& b) { return name(b, a); }); \
  cls.def(rop, [](const Tensor& a, const Scalar& b) { return name(wrapped_number(b, a), a); });
  STRIDE_BIND_COMMUTING_OPERATOR("__and__", "__rand__", "__iand__", bitwise_and)
  STRIDE_BIND_COMMUTING_OPERATOR("__or__", "__ror__", "__ior__", bitwise_or)
  STRIDE_BIND_COMMUTING_OPERATOR("__xor__", "__rxor__", "__ixor__", bitwise_xor)
  STRIDE_BIND_SHIFT_OPERATOR("__lshift__", "__rlshift__", "__ilshift__", bitwise_left_shift)
  STRIDE_BIND_SHIFT_OPERATOR("__rshift__", "__rrshift__", "__irshift__", bitwise_right_shift)
#undef STRIDE_BIND_SHIFT_OPERATOR
#undef STRIDE_BIND_COMMUTING_OPERATOR
#undef STRIDE_BIND_INTEGER_OPERATOR
  cls.def("__invert__", [](const Tensor& a) { return a.bitwise_not(); });
#define STRIDE_BIND_COMPARISON_OPERATOR(op, name)                          \
  cls.def(op, [](const Tensor& a, const Tensor& b) { return a.name(b); }); \
  cls.def(op, [](const Tensor& a, const Scalar& b) { return a.name(b); });
  STRIDE_BIND_COMPARISON_OPERATOR("__eq__", eq)
  STRIDE_BIND_COMPARISON_OPERATOR("__ne__", ne)
  STRIDE_BIND_COMPARISON_OPERATOR("__lt__", lt)
  STRIDE_BIND_COMPARISON_OPERATOR("__le__", le)
  STRIDE_BIND_COMPARISON_OPERATOR("__gt__", gt)
  STRIDE_BIND_COMPARISON_OPERATOR("__ge__", ge)
#undef STRIDE_BIND_COMPARISON_OPERATOR
}

// The logical operators of boolean masks (`~mask`, `a & b`, `a | b`,
// `a ^ b`), as PyTorch's on bool tensors. stride has no bitwise kernels, so
// integer and floating operands are refused rather than misread.
void check_bool_operand(const Tensor& t, const char* op) {
  if (t.dtype() != kBool) {
    throw nb::type_error((std::string("operator ") + op +
                          " is defined for bool tensors (masks) only; got a " +
                          std::string(to_string(t.dtype())) + " tensor.")
                             .c_str());
  }
}

template <class F>
auto logical(const char* op, F f) {
  return [op, f](const Tensor& a, const Tensor& b) {
    check_bool_operand(a, op);
    check_bool_operand(b, op);
    return f(a, b);
  };
}

void bind_logical_operators(TensorClass& cls) {
  cls.def("__invert__",
          [](const Tensor& a) {
            check_bool_operand(a, "~");
            return a.eq(Scalar(false));
          })
      .def("__and__", logical("&", [](const Tensor& a, const Tensor& b) { return a * b; }))
      .def("__or__", logical("|", [](const Tensor& a, const Tensor& b) { return a + b; }))
      .def("__xor__", logical("^", [](const Tensor& a, const Tensor& b) { return a.ne(b); }));
}

void bind_reductions(nb::module_& m, TensorClass& cls) {
  def_both(
      m, cls, "sum",
      [](const Tensor& t, nb::handle dim, bool keepdim, nb::handle dtype) {
        return sum(t, dims_arg(dim), keepdim, optional_dtype(dtype));
      },
      nb::arg("dim") = nb::none(), nb::arg("keepdim") = false, nb::kw_only(),
      nb::arg("dtype") = nb::none());
  def_both(
      m, cls, "mean",
      [](const Tensor& t, nb::handle dim, bool keepdim) { return mean(t, dims_arg(dim), keepdim); },
      nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  for (const bool is_std : {false, true}) {
    // correction= wins over the older unbiased= (default: Bessel's, 1).
    def_both(
        m, cls, is_std ? "std" : "var",
        [is_std](const Tensor& t, nb::handle dim, std::optional<bool> unbiased,
                 std::optional<double> correction, bool keepdim) {
          if (nb::isinstance<nb::bool_>(dim)) {  // var(input, unbiased), PyTorch's older form
            unbiased = nb::cast<bool>(dim);
            dim = nb::none();
          }
          const double c = correction.value_or(unbiased.value_or(true) ? 1 : 0);
          return is_std ? std_dev(t, dims_arg(dim), c, keepdim) : var(t, dims_arg(dim), c, keepdim);
        },
        nb::arg("dim") = nb::none(), nb::arg("unbiased") = nb::none(), nb::kw_only(),
        nb::arg("correction") = nb::none(), nb::arg("keepdim") = false);
  }
  for (const bool is_max : {true, false}) {
    // The elementwise form, torch.max(input, other), before the reduction's:
    // a tensor never reads as a dim.
    def_both(
        m, cls, is_max ? "max" : "min",
        [is_max](const Tensor& a, const Tensor& b) {
          return is_max ? maximum(a, b) : minimum(a, b);
        },
        nb::arg("other"));
    def_both(
        m, cls, is_max ? "max" : "min",
        [is_max](const Tensor& t, std::optional<int64_t> dim, bool keepdim) -> nb::object {
          if (!dim) return nb::cast(is_max ? t.max() : t.min());
          return values_indices(is_max ? "max" : "min",
                                is_max ? t.max(*dim, keepdim) : t.min(*dim, keepdim));
        },
        nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
    def_both(
        m, cls, is_max ? "amax" : "amin",
        [is_max](const Tensor& t, nb::handle dim, bool keepdim) {
          return is_max ? amax(t, dims_arg(dim), keepdim) : amin(t, dims_arg(dim), keepdim);
        },
        nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
    def_both(
        m, cls, is_max ? "argmax" : "argmin",
        [is_max](const Tensor& t, std::optional<int64_t> dim, bool keepdim) {
          return is_max ? t.argmax(dim, keepdim) : t.argmin(dim, keepdim);
        },
        nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  }
  def_both(
      m, cls, "logsumexp",
      [](const Tensor& t, nb::handle dim, bool keepdim) {
        return logsumexp(t, dims_arg(dim), keepdim);
      },
      nb::arg("dim"), nb::arg("keepdim") = false);
  def_both(
      m, cls, "norm",
      [](const Tensor& t, double p, nb::handle dim, bool keepdim) {
        return norm(t, p, dims_arg(dim), keepdim);
      },
      nb::arg("p") = 2.0, nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  // dtype= casts the input first, as PyTorch's.
  def_both(
      m, cls, "softmax",
      [](const Tensor& t, int64_t dim, nb::handle dtype) { return cast_to(t, dtype).softmax(dim); },
      nb::arg("dim"), nb::kw_only(), nb::arg("dtype") = nb::none());
  def_both(
      m, cls, "log_softmax",
      [](const Tensor& t, int64_t dim, nb::handle dtype) {
        return cast_to(t, dtype).log_softmax(dim);
      },
      nb::arg("dim"), nb::kw_only(), nb::arg("dtype") = nb::none());
}

void bind_views(nb::module_& m, TensorClass& cls) {
  def_method(cls, "view", [](const Tensor& t, nb::args shape) {
    return t.view(shape_from_args(shape, "view(): shape"));
  });
  def_method(cls, "reshape", [](const Tensor& t, nb::args shape) {
    return t.reshape(shape_from_args(shape, "reshape(): shape"));
  });
  def_function(
      m, "reshape",
      [](const Tensor& t, nb::handle shape) {
        return t.reshape(int_list(shape, "reshape(): shape"));
      },
      nb::arg("input"), nb::arg("shape"));
  def_method(
      cls, "view_as", [](const Tensor& t, const Tensor& o) { return t.view(o.sizes()); },
      nb::arg("other"));
  def_method(
      cls, "reshape_as", [](const Tensor& t, const Tensor& o) { return t.reshape(o.sizes()); },
      nb::arg("other"));
  def_method(cls, "permute", [](const Tensor& t, nb::args dims) {
    return t.permute(shape_from_args(dims, "permute(): dims"));
  });
  def_function(
      m, "permute",
      [](const Tensor& t, nb::handle dims) { return t.permute(int_list(dims, "permute(): dims")); },
      nb::arg("input"), nb::arg("dims"));
  def_method(cls, "expand", [](const Tensor& t, nb::args size) {
    return t.expand(shape_from_args(size, "expand(): size"));
  });
  def_method(cls, "expand_as", &Tensor::expand_as, nb::arg("other"));
  def_both(
      m, cls, "transpose", [](const Tensor& t, int64_t a, int64_t b) { return t.transpose(a, b); },
      nb::arg("dim0"), nb::arg("dim1"));
  def_both(m, cls, "t", [](const Tensor& t) { return t.t(); });
  def_both(
      m, cls, "unsqueeze", [](const Tensor& t, int64_t d) { return t.unsqueeze(d); },
      nb::arg("dim"));
  def_both(
      m, cls, "squeeze",
      [](const Tensor& t, nb::handle dim) {
        if (dim.is_none()) return t.squeeze();
        return squeezed(t, dims_arg(dim));
      },
      nb::arg("dim") = nb::none());
  def_both(
      m, cls, "flatten", [](const Tensor& t, int64_t s, int64_t e) { return t.flatten(s, e); },
      nb::arg("start_dim") = 0, nb::arg("end_dim") = -1);
  def_both(
      m, cls, "narrow",
      [](const Tensor& t, int64_t d, int64_t s, int64_t n) { return t.narrow(d, s, n); },
      nb::arg("dim"), nb::arg("start"), nb::arg("length"));
  def_both(
      m, cls, "select", [](const Tensor& t, int64_t d, int64_t i) { return t.select(d, i); },
      nb::arg("dim"), nb::arg("index"));
  def_both(
      m, cls, "chunk", [](const Tensor& t, int64_t n, int64_t d) { return t.chunk(n, d); },
      nb::arg("chunks"), nb::arg("dim") = 0);
  def_both(
      m, cls, "split",
      [](const Tensor& t, nb::handle sizes, int64_t d) {
        if (const std::optional<int64_t> n = index_value(sizes, "split_size"))
          return t.split(*n, d);
        return split_by_sizes(t, int_list(sizes, "split_size_or_sections"), d);
      },
      nb::arg("split_size_or_sections"), nb::arg("dim") = 0);
  def_both(
      m, cls, "unbind",
      [](const Tensor& t, int64_t d) {
        nb::list parts;
        for (const Tensor& p : t.unbind(d)) parts.append(nb::cast(p));
        return nb::tuple(parts);
      },
      nb::arg("dim") = 0);
  def_both(
      m, cls, "diagonal",
      [](const Tensor& t, int64_t o, int64_t a, int64_t b) { return t.diagonal(o, a, b); },
      nb::arg("offset") = 0, nb::arg("dim1") = 0, nb::arg("dim2") = 1);
  def_both(
      m, cls, "as_strided",
      [](const Tensor& t, nb::handle size, nb::handle stride, std::optional<int64_t> offset) {
        return t.as_strided(int_list(size, "as_strided(): size"),
                            int_list(stride, "as_strided(): stride"), offset);
      },
      nb::arg("size"), nb::arg("stride"), nb::arg("storage_offset") = nb::none());
  def_both(
      m, cls, "as_strided_scatter",
      [](const Tensor& t, const Tensor& src, nb::handle size, nb::handle stride,
         std::optional<int64_t> offset) {
        return as_strided_scatter(t, src, int_list(size, "as_strided_scatter(): size"),
                                  int_list(stride, "as_strided_scatter(): stride"), offset);
      },
      nb::arg("src"), nb::arg("size"), nb::arg("stride"), nb::arg("storage_offset") = nb::none());
  // Tensor.unfold is the window view; stride.nn.functional.unfold (im2col)
  // owns the table's "unfold" entry, so the method carries its own text.
  cls.def(
      "unfold",
      [](const Tensor& t, int64_t d, int64_t size, int64_t step) {
        return t.unfold(d, size, step);
      },
      nb::arg("dimension"), nb::arg("size"), nb::arg("step"),
      "A view of every window of `size` elements along `dimension`, `step` apart, as a new last "
      "dim.");
  // ATen's slice (torch.ops.aten.slice): Tensor has no such method in torch.
  def_function(
      m, "slice",
      [](const Tensor& t, int64_t d, std::optional<int64_t> start, std::optional<int64_t> end,
         int64_t step) { return t.slice(d, start, end, step); },
      nb::arg("input"), nb::arg("dim") = 0, nb::arg("start") = nb::none(),
      nb::arg("end") = nb::none(), nb::arg("step") = 1);
  def_method(cls, "resize_", [](nb::object self, nb::args size) {
    nb::cast<Tensor&>(self).resize_(shape_from_args(size, "resize_(): size"));
    return self;
  });
  def_method(cls, "resize_as_",
             in_place([](Tensor& t, const Tensor& other) { t.resize_as_(other); }),
             nb::arg("the_template"));
  // The function form checks its input itself: in_place casts it unchecked.
  def_function(
      m, "resize_as_",
      [](nb::object input, const Tensor& other) {
        if (!nb::isinstance<Tensor>(input)) {
          throw nb::type_error(("resize_as_(): input must be a stride.Tensor; got " +
                                std::string(nb::type_name(input.type()).c_str()) + ".")
                                   .c_str());
        }
        nb::cast<Tensor&>(input).resize_as_(other);
        return input;
      },
      nb::arg("input"), nb::arg("the_template"));
  def_method(cls, "contiguous", &Tensor::contiguous);
  def_both(m, cls, "clone", [](const Tensor& t) { return t.clone(); });
  def_method(cls, "detach", &Tensor::detach);
  def_method(cls, "detach_", in_place([](Tensor& t) { t.detach_(); }));
  def_method(
      cls, "to",
      [](const Tensor& t, nb::handle target, nb::handle dtype, nb::handle device,
         bool /*non_blocking*/, bool copy, nb::handle memory_format) {
        Tensor out = in_memory_format(to_any(t, target, dtype, device), memory_format);
        return copy && out.is_same(t) ? t.clone() : out;
      },
      nb::arg("target") = nb::none(), nb::kw_only(), nb::arg("dtype") = nb::none(),
      nb::arg("device") = nb::none(), nb::arg("non_blocking") = false, nb::arg("copy") = false,
      nb::arg("memory_format") = nb::none());
  // torch's positional forms: to(device, dtype, non_blocking, copy) and
  // to(dtype, non_blocking, copy), where the arguments after a dtype shift
  // one place left.
  def_method(
      cls, "to",
      [](const Tensor& t, nb::handle target, nb::handle second, bool third, bool fourth,
         nb::handle memory_format) {
        const bool to_dtype = is_dtype(target);
        const bool copy = to_dtype ? third : fourth;
        Tensor out = in_memory_format(to_any(t, target, to_dtype ? nb::none() : second, nb::none()),
                                      memory_format);
        return copy && out.is_same(t) ? t.clone() : out;
      },
      nb::arg("target").none(), nb::arg("second").none(), nb::arg("third") = false,
      nb::arg("fourth") = false, nb::kw_only(), nb::arg("memory_format") = nb::none());
  const auto cast = [&cls](const char* name, ScalarType type) {
    def_method(
        cls, name,
        [type](const Tensor& t, nb::handle memory_format) {
          return in_memory_format(t.to(type), memory_format);
        },
        nb::kw_only(), nb::arg("memory_format") = nb::none());
  };
  cast("float", kFloat32);
  cast("double", kFloat64);
  cast("half", kFloat16);
  cast("bfloat16", kBFloat16);
  cast("long", kInt64);
  cast("int", kInt32);
  cast("bool", kBool);
  cast("byte", kUInt8);
  // int8 and int16 are not stride dtypes: the conversions say so.
  for (const char* name : {"char", "short"}) {
    def_method(
        cls, name,
        [name](const Tensor&, nb::handle /*memory_format*/) -> Tensor {
          throw nb::type_error((std::string("Tensor.") + name + "() converts to " +
                                (name == std::string("char") ? "int8" : "int16") +
                                ", which stride does not have; its integer dtypes are uint8, int32 "
                                "and int64.")
                                   .c_str());
        },
        nb::kw_only(), nb::arg("memory_format") = nb::none());
  }
  def_method(cls, "cpu", [](const Tensor& t) { return t.to(Device(kCPU)); });
  def_method(
      cls, "cuda", [](const Tensor& t, int device) { return t.to(Device(kCUDA, device)); },
      nb::arg("device") = 0);
  def_method(
      cls, "type_as", [](const Tensor& t, const Tensor& o) { return t.to(o.dtype()); },
      nb::arg("other"));
}

void bind_linalg_and_indexing_ops(nb::module_& m, TensorClass& cls) {
  def_both(
      m, cls, "matmul", [](const Tensor& a, const Tensor& b) { return matmul(a, b); },
      nb::arg("other"));
  def_both(
      m, cls, "mm", [](const Tensor& a, const Tensor& b) { return mm(a, b); }, nb::arg("mat2"));
  def_both(
      m, cls, "bmm", [](const Tensor& a, const Tensor& b) { return bmm(a, b); }, nb::arg("mat2"));
  def_function(m, "cat", &cat, nb::arg("tensors"), nb::arg("dim") = 0);
  def_function(m, "stack", &stack, nb::arg("tensors"), nb::arg("dim") = 0);
  def_both(
      m, cls, "index_select",
      [](const Tensor& t, int64_t d, const Tensor& i) { return t.index_select(d, i); },
      nb::arg("dim"), nb::arg("index"));
  def_both(
      m, cls, "gather", [](const Tensor& t, int64_t d, const Tensor& i) { return t.gather(d, i); },
      nb::arg("dim"), nb::arg("index"));
  def_both(
      m, cls, "scatter_add",
      [](const Tensor& t, int64_t d, const Tensor& i, const Tensor& s) {
        return t.scatter_add(d, i, s);
      },
      nb::arg("dim"), nb::arg("index"), nb::arg("src"));
  def_method(cls, "scatter_add_",
             in_place([](Tensor& t, int64_t d, const Tensor& i, const Tensor& s) {
               t.scatter_add_(d, i, s);
             }),
             nb::arg("dim"), nb::arg("index"), nb::arg("src"));
  def_function(m, "allclose", &allclose, nb::arg("input"), nb::arg("other"), nb::arg("rtol") = 1e-5,
               nb::arg("atol") = 1e-8, nb::arg("equal_nan") = false);
  def_both(
      m, cls, "equal", [](const Tensor& a, const Tensor& b) { return equal(a, b); },
      nb::arg("other"));
}

}  // namespace

std::vector<int64_t> dims_arg(nb::handle dim) {
  if (dim.is_none()) return {};
  if (const std::optional<int64_t> d = index_value(dim, "dim")) return {*d};
  return int_list(dim, "dim");
}

// A binary special function of (tensor, tensor), (tensor, number) and
// (number, tensor), as PyTorch's, under `name` in module `m`.
template <Tensor (*fn)(const Tensor&, const Tensor&)>
void def_special_binary(nb::module_& m, const char* name, const char* doc_name, const char* b) {
  const std::string doc = op_doc(doc_name);
  m.def(
      name, [](const Tensor& x, const Tensor& y) { return fn(x, y); }, nb::arg("input"), nb::arg(b),
      doc.c_str());
  m.def(
      name, [](const Tensor& x, const Scalar& y) { return fn(x, wrapped_number(y, x)); },
      nb::arg("input"), nb::arg(b), doc.c_str());
  m.def(
      name, [](const Scalar& x, const Tensor& y) { return fn(wrapped_number(x, y), y); },
      nb::arg("input"), nb::arg(b), doc.c_str());
}

// The special functions (src/core/op_list.h): torch.*'s as functions and
// Tensor methods; torch.special's in the submodule _stride.special (named
// without their special_ prefix), which python/stride/special.py extends
// with PyTorch's aliases of other ops.
void bind_special_functions(nb::module_& m, TensorClass& cls) {
  for (auto [name, fn, method] : {std::tuple{"lgamma", &stride::lgamma, &Tensor::lgamma_},
                                  std::tuple{"digamma", &stride::digamma, &Tensor::digamma_},
                                  std::tuple{"erfinv", &stride::erfinv, &Tensor::erfinv_},
                                  std::tuple{"i0", &stride::i0, &Tensor::i0_},
                                  std::tuple{"sinc", &stride::sinc, &Tensor::sinc_}}) {
    def_both(m, cls, name, [fn](const Tensor& t) { return fn(t); });
    def_method(cls, (std::string(name) + "_").c_str(),
               in_place([method](Tensor& t) { (t.*method)(); }));
  }
  for (auto [name, fn] :
       {std::pair{"igamma", &stride::igamma}, std::pair{"igammac", &stride::igammac},
        std::pair{"nextafter", &stride::nextafter}}) {
    def_both(
        m, cls, name, [fn](const Tensor& a, const Tensor& b) { return fn(a, b); },
        nb::arg("other"));
  }
  def_function(
      m, "polygamma", [](int64_t n, const Tensor& t) { return polygamma(n, t); }, nb::arg("n"),
      nb::arg("input"));
  def_method(
      cls, "polygamma", [](const Tensor& t, int64_t n) { return polygamma(n, t); }, nb::arg("n"));
  def_both(
      m, cls, "mvlgamma", [](const Tensor& t, int64_t p) { return mvlgamma(t, p); }, nb::arg("p"));
  def_both(
      m, cls, "logit", [](const Tensor& t, std::optional<double> eps) { return logit(t, eps); },
      nb::arg("eps") = nb::none());

  for (auto [name, fn] :
       {std::pair{"deg2rad", &stride::deg2rad}, std::pair{"rad2deg", &stride::rad2deg},
        std::pair{"signbit", &stride::signbit}, std::pair{"isposinf", &stride::isposinf},
        std::pair{"isneginf", &stride::isneginf}}) {
    def_both(m, cls, name, [fn](const Tensor& t) { return fn(t); });
  }
  def_both(
      m, cls, "nan_to_num",
      [](const Tensor& t, std::optional<double> nan, std::optional<double> posinf,
         std::optional<double> neginf) { return nan_to_num(t, nan.value_or(0.0), posinf, neginf); },
      nb::arg("nan") = 0.0, nb::arg("posinf") = nb::none(), nb::arg("neginf") = nb::none());
  def_both(
      m, cls, "heaviside", [](const Tensor& t, const Tensor& v) { return heaviside(t, v); },
      nb::arg("values"));
  def_both(
      m, cls, "ldexp", [](const Tensor& t, const Tensor& o) { return ldexp(t, o); },
      nb::arg("other"));
  def_both(
      m, cls, "float_power", [](const Tensor& t, const Tensor& e) { return float_power(t, e); },
      nb::arg("exponent"));
  def_both(
      m, cls, "float_power", [](const Tensor& t, const Scalar& e) { return float_power(t, e); },
      nb::arg("exponent"));
  def_function(
      m, "float_power",
      [](const Scalar& x, const Tensor& e) {
        return float_power(scalar_tensor(x, TensorOptions(kFloat64).device(e.device())), e);
      },
      nb::arg("input"), nb::arg("exponent"));

  nb::module_ sp = m.def_submodule("special", "torch.special's functions (stride.special).");
#define STRIDE_BIND_SPECIAL_UNARY(name, ...)                                               \
  if (std::string_view(#name).starts_with("special_")) {                                   \
    sp.def(                                                                                \
        std::string_view(#name).substr(8).data(), [](const Tensor& t) { return name(t); }, \
        nb::arg("input"), op_doc(#name).c_str());                                          \
  }
  STRIDE_SPECIAL_UNARY_OPS(STRIDE_BIND_SPECIAL_UNARY)
  STRIDE_SPECIAL_UNARY_NOGRAD_OPS(STRIDE_BIND_SPECIAL_UNARY)
#undef STRIDE_BIND_SPECIAL_UNARY
  def_special_binary<special_xlog1py>(sp, "xlog1py", "special_xlog1py", "other");
  def_special_binary<special_zeta>(sp, "zeta", "special_zeta", "other");
  // The polynomials p_n(x), of (input, n); nextafter is torch.*'s, above.
#define STRIDE_BIND_POLYNOMIAL(name, ...)                                               \
  if (std::string_view(#name).starts_with("special_")) {                                \
    def_special_binary<name>(sp, std::string_view(#name).substr(8).data(), #name, "n"); \
  }
  STRIDE_SPECIAL_BINARY_NOGRAD_OPS(STRIDE_BIND_POLYNOMIAL)
#undef STRIDE_BIND_POLYNOMIAL
}

void bind_ops(nb::module_& m, TensorClass& cls) {
  bind_elementwise(m, cls);
  bind_operators(cls);
  bind_logical_operators(cls);
  bind_reductions(m, cls);
  bind_views(m, cls);
  bind_linalg_and_indexing_ops(m, cls);
  bind_sorting_and_scans(m, cls);
  bind_shape_ops(m, cls);
  bind_elementwise_composites(m, cls);
  bind_random_forms(m, cls);
  bind_complex_and_fft(m, cls);
  bind_reductions_and_scatters(m, cls);
  bind_numeric_composites(m, cls);
  bind_special_functions(m, cls);
}

}  // namespace stride::python
