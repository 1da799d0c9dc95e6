// The docstrings of the op bindings (ops.cpp and the random functions of generator.cpp),
// one table looked up by name: the elementwise ops that the X-macros of
// src/core/op_list.h bind get theirs without an edit of the op list. A
// method and its stride.* function share one text, and every overload of a
// name gets the same one, which nanobind then shows once (in __doc__ and in
// the stubs).
#pragma once

#include <string>
#include <string_view>

namespace stride::python {

// The docstring of op `name`. An in-place `name_` without an entry of its
// own is documented as the in-place version of `name`; "" (no docstring)
// for a name the table lacks (python/tests/test_docs.py catches that).
std::string op_doc(std::string_view name);

}  // namespace stride::python
