// Autograd from Python: backward, stride.autograd.grad, hooks, grad and
// anomaly modes, gradcheck. The context managers (no_grad, ...) are Python
// classes over the mode switches (python/stride/autograd.py).
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>

#include "bindings.h"

namespace stride::python {

namespace {

// A Python callable held by C++ (a hook, a gradcheck function). The graph
// that holds a hook may be freed wherever its last tensor dies, so the
// reference is dropped with the GIL held. Callers hold the GIL to call it.
class PyCallable {
 public:
  explicit PyCallable(nb::object fn) : fn_(new nb::object(std::move(fn)), Release{}) {}
  nb::object operator()(nb::handle arg) const { return (*fn_)(arg); }

 private:
  struct Release {
    void operator()(nb::object* o) const {
      nb::gil_scoped_acquire gil;
      delete o;
    }
  };
  std::shared_ptr<nb::object> fn_;
};

std::vector<Tensor> tensors_of(nb::handle obj, const char* what) {
  if (nb::isinstance<Tensor>(obj)) return {nb::cast<Tensor>(obj)};
  if (obj.is_none()) return {};
  std::vector<Tensor> out;
  for (nb::handle item : obj) {
    if (item.is_none()) {
      out.emplace_back();
      continue;
    }
    if (!nb::isinstance<Tensor>(item)) {
      throw nb::type_error((std::string(what) + " must be a tensor or a sequence of tensors; got " +
                            nb::inst_name(item).c_str() + ".")
                               .c_str());
    }
    out.push_back(nb::cast<Tensor>(item));
  }
  return out;
}

struct HookHandlePy {
  HookHandle handle;
  void remove() { handle.remove(); }
};

}  // namespace

void bind_autograd(nb::module_& m, nb::class_<Tensor>& cls) {
  nb::class_<HookHandlePy>(m, "RemovableHandle", "Removes a hook: handle.remove().")
      .def("remove", &HookHandlePy::remove);

  cls.def(
      "backward",
      [](const Tensor& t, std::optional<Tensor> gradient, std::optional<bool> retain_graph,
         bool create_graph) {
        t.backward(gradient ? *gradient : Tensor(), retain_graph, create_graph);
      },
      nb::arg("gradient") = nb::none(), nb::arg("retain_graph") = nb::none(),
      nb::arg("create_graph") = false,
      "Accumulates d(self)/d(leaf) into every leaf's .grad (gradient= for non-scalars).");
  cls.def("retain_grad", &Tensor::retain_grad);
  cls.def_prop_ro("retains_grad", &Tensor::retains_grad);
  cls.def(
      "requires_grad_",
      [](nb::object self, bool on) {
        nb::cast<Tensor&>(self).requires_grad_(on);
        return self;
      },
      nb::arg("requires_grad") = true);
  cls.def(
      "register_hook",
      [](Tensor& t, nb::object fn) {
        PyCallable hook(std::move(fn));
        return HookHandlePy{t.register_hook([hook](const Tensor& g) {
          nb::gil_scoped_acquire gil;
          nb::object out = hook(nb::cast(g));
          return out.is_none() ? Tensor() : nb::cast<Tensor>(out);
        })};
      },
      nb::arg("hook"),
      "hook(grad) runs when this tensor's gradient is computed; a tensor it returns replaces "
      "the gradient.");

  nb::module_ ag = m.def_submodule("_autograd", "Autograd's switches and functions.");
  ag.def("is_grad_enabled", &GradMode::is_enabled);
  ag.def("set_grad_enabled", &GradMode::set_enabled, nb::arg("mode"));
  ag.def("is_anomaly_enabled", &AnomalyMode::is_enabled);
  ag.def("set_anomaly_enabled", &AnomalyMode::set_enabled, nb::arg("mode"));
  ag.def(
      "grad",
      [](nb::handle outputs, nb::handle inputs, nb::handle grad_outputs,
         std::optional<bool> retain_graph, bool create_graph, bool allow_unused) {
        const std::vector<Tensor> grads = autograd::grad(
            tensors_of(outputs, "outputs"), tensors_of(inputs, "inputs"),
            tensors_of(grad_outputs, "grad_outputs"), retain_graph, create_graph, allow_unused);
        nb::list out;
        for (const Tensor& g : grads) out.append(g.defined() ? nb::cast(g) : nb::none());
        return nb::tuple(out);
      },
      nb::arg("outputs"), nb::arg("inputs"), nb::arg("grad_outputs") = nb::none(),
      nb::arg("retain_graph") = nb::none(), nb::arg("create_graph") = false,
      nb::arg("allow_unused") = false);
  ag.def(
      "backward",
      [](nb::handle tensors, nb::handle grad_tensors, std::optional<bool> retain_graph,
         bool create_graph) {
        autograd::backward(tensors_of(tensors, "tensors"), tensors_of(grad_tensors, "grad_tensors"),
                           retain_graph, create_graph);
      },
      nb::arg("tensors"), nb::arg("grad_tensors") = nb::none(),
      nb::arg("retain_graph") = nb::none(), nb::arg("create_graph") = false);
  ag.def(
      "gradcheck",
      [](nb::object fn, nb::handle inputs, double eps, double atol, double rtol) {
        PyCallable call(std::move(fn));
        return autograd::gradcheck(
            [&call](const std::vector<Tensor>& xs) {
              nb::list args;
              for (const Tensor& x : xs) args.append(x);
              nb::object out = call(nb::tuple(args));
              return nb::cast<Tensor>(out);
            },
            tensors_of(inputs, "inputs"), eps, atol, rtol);
      },
      nb::arg("func"), nb::arg("inputs"), nb::arg("eps") = 1e-6, nb::arg("atol") = 1e-5,
      nb::arg("rtol") = 1e-3);
}

}  // namespace stride::python
