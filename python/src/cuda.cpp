// stride._stride._cuda: stride::cuda (include/stride/cuda.h) under
// stride.cuda (python/stride/cuda.py), torch.cuda's queries.
#include <nanobind/stl/string.h>

#include "bindings.h"
#include "stride/cuda.h"

namespace stride::python {

void bind_cuda(nb::module_& m) {
  nb::module_ c = m.def_submodule("_cuda", "The CUDA backend's queries.");
  c.def("is_available", &cuda::is_available, "Whether a CUDA device can be used.");
  c.def("device_count", &cuda::device_count, "How many CUDA devices there are.");
  c.def("unavailable_reason", &cuda::unavailable_reason,
        "Why no CUDA device can be used (the build, or the driver's error); '' when one can.");
  c.def("synchronize", &cuda::synchronize, nb::arg("device") = -1,
        "Waits for the work queued on the device (-1: the current one).");
  c.def("memory_allocated", &cuda::memory_allocated, nb::arg("device") = 0,
        "Bytes in live tensors on the device.");
  c.def("max_memory_allocated", &cuda::max_memory_allocated, nb::arg("device") = 0,
        "The most memory_allocated has been since the start or the last reset.");
  c.def("memory_reserved", &cuda::memory_reserved, nb::arg("device") = 0,
        "Bytes the caching allocator holds from the driver (live and cached).");
  c.def("reset_peak_memory_stats", &cuda::reset_peak_memory_stats, nb::arg("device") = 0,
        "Starts max_memory_allocated again from the bytes allocated now.");
  c.def("empty_cache", &cuda::empty_cache,
        "Returns the cached (free) blocks of every device to the driver.");
}

}  // namespace stride::python
