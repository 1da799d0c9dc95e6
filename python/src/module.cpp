// stride._stride: the C++ core as Python sees it. python/stride/__init__.py
// re-exports it with PyTorch's names and adds what is written in Python.
#include <nanobind/stl/string.h>

#include "bindings.h"

NB_MODULE(_stride, m) {
  m.doc() = "stride's C++ core (tensors, ops, autograd); import stride, not this module.";
  // The dtype singletons are owned by stride's Python modules, which the
  // interpreter may tear down after this extension (torch's import makes it
  // do so), and nanobind would report them as leaked at every exit.
  // Lifetimes are checked by the tests instead, also under ASan
  // (tools/python_asan.sh).
  nb::set_leak_warnings(false);
  m.attr("__version__") = STRIDE_VERSION;
  // The CPU kernels' instruction-set level (include/stride/cpu_capability.h),
  // for stride.show_config() and stride.backends.cpu.
  m.def("_cpu_capability", [] { return stride::cpu_capability_name(stride::cpu_capability()); });
  m.def("_cpu_capability_supported",
        [] { return stride::cpu_capability_name(stride::cpu_capability_supported()); });
  m.def("_cpu_capability_summary", &stride::cpu_capability_summary);
  stride::python::bind_errors(m);
  stride::python::bind_dtypes(m);
  stride::python::bind_tensor(m);
  stride::python::bind_generator(m);
  stride::python::bind_data(m);
  stride::python::bind_profiler(m);
  stride::python::bind_cuda(m);
  stride::python::bind_serialize(m);
  stride::python::bind_tokenizers(m);
  stride::python::bind_plot(m);
  stride::python::bind_nn(m);
  stride::python::bind_optim(m);
  stride::python::bind_doctor(m);
  stride::python::bind_autocast(m);
  stride::python::bind_indexing_functions(m);
  stride::python::bind_linalg(m);
  stride::python::bind_masked(m);
}
