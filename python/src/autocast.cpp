// stride._stride._autocast: the thread's autocast switch as a stack, for
// stride.amp.autocast's context manager (python/stride/amp.py). Each push
// holds a stride::AutocastGuard until its pop, so blocks nest and restore
// what they found, per thread as the C++ guard does.
#include <memory>
#include <vector>

#include "bindings.h"
#include "stride/autocast.h"

namespace stride::python {

namespace {

std::vector<std::unique_ptr<AutocastGuard>>& guards() {
  thread_local std::vector<std::unique_ptr<AutocastGuard>> stack;
  return stack;
}

}  // namespace

void bind_autocast(nb::module_& m) {
  nb::module_ a = m.def_submodule("_autocast", "The thread's autocast switch (stride.amp).");
  a.def(
      "push", [](bool enabled) { guards().push_back(std::make_unique<AutocastGuard>(enabled)); },
      nb::arg("enabled"), "Turns autocast on or off on this thread until the matching pop().");
  a.def(
      "pop",
      [] {
        if (guards().empty()) {
          throw nb::value_error("_autocast.pop(): no autocast block is open on this thread.");
        }
        guards().pop_back();
      },
      "Restores the switch the matching push() found.");
  a.def("is_enabled", &Autocast::is_enabled, "Whether autocast is on, on this thread.");
}

}  // namespace stride::python
