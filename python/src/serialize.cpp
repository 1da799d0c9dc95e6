// stride._stride._serialize: safetensors files through stride::io, under
// stride.save and stride.load (python/stride/serialization.py). The reading
// and writing run without the GIL: they touch tensors and files only, and a
// large state dict must not stall the interpreter's other threads.
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <utility>

#include "bindings.h"
#include "stride/io.h"

namespace stride::python {

namespace {

void save_file(const std::string& path,
               const io::NamedTensors& tensors,
               const io::Metadata& metadata) {
  nb::gil_scoped_release no_gil;
  io::save_safetensors(path, tensors, metadata);
}

std::pair<io::NamedTensors, io::Metadata> load_file(const std::string& path) {
  io::SafetensorsContents contents;
  {
    nb::gil_scoped_release no_gil;
    contents = io::load_safetensors(path);
  }
  return {std::move(contents.tensors), std::move(contents.metadata)};
}

std::pair<io::NamedTensors, io::Metadata> map_file(const std::string& path) {
  io::SafetensorsContents contents;
  {
    nb::gil_scoped_release no_gil;
    contents = io::map_safetensors(path);
  }
  return {std::move(contents.tensors), std::move(contents.metadata)};
}

}  // namespace

void bind_serialize(nb::module_& m) {
  nb::module_ s = m.def_submodule("_serialize", "safetensors files.");
  s.def("save_file", &save_file, nb::arg("path"), nb::arg("tensors"), nb::arg("metadata"),
        "Writes (name, tensor) pairs in order, atomically (stride::io::save_safetensors).");
  s.def("load_file", &load_file, nb::arg("path"),
        "([(name, tensor)] in the file's data order, metadata); OSError for a bad file.");
  s.def("map_file", &map_file, nb::arg("path"),
        "As load_file, each tensor a view of the file mapped copy-on-write "
        "(stride::io::map_safetensors).");
}

}  // namespace stride::python
