// stride._stride._profiler: the C++ profiler (stride/profiler.h) under
// stride.profiler (python/stride/profiler.py), which adds torch.profiler's
// names. record_function scopes are the C++ RecordFunction's begin and end,
// so a Python scope nests with the ops it encloses on the same thread's stack.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "bindings.h"

namespace stride::python {

namespace {

// torch.profiler reports microseconds; stride records nanoseconds.
double to_us(int64_t ns) {
  return double(ns) / 1e3;
}

void bind_event(nb::module_& p) {
  nb::class_<profiler::Event>(p, "Event", "One recorded scope (an op, a backward node, ...).")
      .def_ro("name", &profiler::Event::name)
      .def_ro("thread", &profiler::Event::thread, "A small id per thread, in order of first use.")
      .def_ro("depth", &profiler::Event::depth, "Nesting depth on its thread (0 outermost).")
      .def_ro("input_shapes", &profiler::Event::shapes,
              "The inputs' shapes as text, when record_shapes is on.")
      .def_prop_ro(
          "start_us", [](const profiler::Event& e) { return to_us(e.start_ns); },
          "Start, in microseconds since the profiler started.")
      .def_prop_ro(
          "end_us", [](const profiler::Event& e) { return to_us(e.end_ns); },
          "End, in microseconds since the profiler started.")
      .def_prop_ro(
          "cpu_time_total", [](const profiler::Event& e) { return to_us(e.end_ns - e.start_ns); },
          "Duration in microseconds, nested scopes included.")
      .def_prop_ro(
          "self_cpu_time_total", [](const profiler::Event& e) { return to_us(e.self_ns); },
          "Duration in microseconds minus that of nested scopes.")
      .def("__repr__", [](const profiler::Event& e) {
        return "<Event " + e.name + " thread=" + std::to_string(e.thread) +
               " depth=" + std::to_string(e.depth) + ">";
      });
}

void bind_averages(nb::module_& p) {
  nb::class_<profiler::EventAverage>(p, "EventAverage",
                                     "All events of one name (and input shapes, if grouped).")
      .def_ro("key", &profiler::EventAverage::name)
      .def_ro("input_shapes", &profiler::EventAverage::shapes)
      .def_ro("count", &profiler::EventAverage::calls)
      .def_prop_ro(
          "self_cpu_time_total", [](const profiler::EventAverage& r) { return to_us(r.self_ns); },
          "Microseconds.")
      .def_prop_ro(
          "cpu_time_total", [](const profiler::EventAverage& r) { return to_us(r.total_ns); },
          "Microseconds.")
      .def("__repr__", [](const profiler::EventAverage& r) {
        return "<EventAverage " + r.name + " count=" + std::to_string(r.calls) + ">";
      });
  nb::class_<profiler::KeyAverages>(p, "KeyAverages", "The events grouped by name.")
      .def("rows", &profiler::KeyAverages::rows)
      .def("table", &profiler::KeyAverages::table, nb::arg("sort_by") = "self_cpu_time_total",
           nb::arg("row_limit") = 0,
           "A table like PyTorch's; sort_by: self_cpu_time_total, cpu_time_total or count.");
}

void bind_profiler_class(nb::module_& p) {
  nb::class_<profiler::Profiler>(p, "Profiler", "The C++ profiler; one records at a time.")
      .def(
          "__init__",
          [](profiler::Profiler* self, bool record_shapes) {
            new (self) profiler::Profiler(profiler::ProfilerOptions{record_shapes});
          },
          nb::arg("record_shapes") = false)
      .def("start", &profiler::Profiler::start)
      .def("stop", &profiler::Profiler::stop)
      .def("events", &profiler::Profiler::events, "The events, by thread then start time.")
      .def("key_averages", &profiler::Profiler::key_averages,
           nb::arg("group_by_input_shape") = false)
      .def("export_chrome_trace", &profiler::Profiler::export_chrome_trace, nb::arg("path"),
           "Trace Event JSON for Perfetto or chrome://tracing, written atomically.");
}

}  // namespace

void bind_profiler(nb::module_& m) {
  nb::module_ p = m.def_submodule("_profiler", "The C++ profiler.");
  bind_event(p);
  bind_averages(p);
  bind_profiler_class(p);
  p.def("is_enabled", &profiler::is_enabled, "Whether a profiler is recording.");
  // A scope of the calling thread, as RecordFunction opens and closes one.
  // begin copies the name; end closes the innermost open scope.
  p.def(
      "begin_scope",
      [](const std::string& name) { profiler::detail::begin(name.c_str(), nullptr, 0); },
      nb::arg("name"));
  p.def("end_scope", &profiler::detail::end);
}

}  // namespace stride::python
