// The docstrings of the op bindings (ops.cpp and the random functions of generator.cpp),
// one table looked up by name: the elementwise ops that the X-macros of
// src/core/op_list.h bind get theirs without an edit of the op list. A
// method and its stride.* function share one text, and every overload of a
// name gets the same one, which nanobind then shows once (in __doc__ and in
// the stubs).
#pragma once

#include <nanobind/nanobind.h>

#include <string>
#include <string_view>

#include "stride/tensor.h"

namespace stride::python {

// The docstring of op `name`. An in-place `name_` without an entry of its
// own is documented as the in-place version of `name`; "" (no docstring)
// for a name the table lacks (python/tests/test_docs.py catches that).
std::string op_doc(std::string_view name);

// Binds a Tensor method, or a stride.* function, with its docstring from the
// table (op_docs.h): every overload of a name gets the same text, which
// nanobind shows once.
template <class F, class... Extra>
void def_method(nanobind::class_<Tensor>& cls, const char* name, F f, const Extra&... extra) {
  cls.def(name, f, extra..., op_doc(name).c_str());
}
template <class F, class... Extra>
void def_function(nanobind::module_& m, const char* name, F f, const Extra&... extra) {
  m.def(name, f, extra..., op_doc(name).c_str());
}

// Binds `f(const Tensor& self, args...)` as a method and as a function whose
// first argument is `input`.
template <class F, class... Extra>
void def_both(nanobind::module_& m,
              nanobind::class_<Tensor>& cls,
              const char* name,
              F f,
              const Extra&... extra) {
  def_method(cls, name, f, extra...);
  def_function(m, name, f, nanobind::arg("input"), extra...);
}

}  // namespace stride::python
