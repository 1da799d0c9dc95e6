// stride._stride: the C++ core as Python sees it. python/stride/__init__.py
// re-exports it with PyTorch's names and adds what is written in Python.
#include "bindings.h"

NB_MODULE(_stride, m) {
  m.doc() = "stride's C++ core (tensors, ops, autograd); import stride, not this module.";
  stride::python::bind_errors(m);
  stride::python::bind_dtypes(m);
  stride::python::bind_tensor(m);
  stride::python::bind_generator(m);
  stride::python::bind_data(m);
  stride::python::bind_profiler(m);
  stride::python::bind_serialize(m);
}
