// Autograd from Python: backward, stride.autograd.grad, hooks, grad and
// anomaly modes, gradcheck, and the C++ half of custom functions. The
// context managers (no_grad, ...) and stride.autograd.Function are Python
// classes over these (python/stride/autograd.py).
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
  const auto refuse = [what](nb::handle got) {
    return nb::type_error((std::string(what) + " must be a tensor or a sequence of tensors; got " +
                           nb::inst_name(got).c_str() + ".")
                              .c_str());
  };
  // Strings are sequences, of strings.
  nb::object items =
      nb::steal(nb::isinstance<nb::str>(obj) ? nullptr : PyObject_GetIter(obj.ptr()));
  if (!items.is_valid()) {
    PyErr_Clear();
    throw refuse(obj);
  }
  std::vector<Tensor> out;
  for (nb::handle item : items) {
    if (item.is_none()) {
      out.emplace_back();
      continue;
    }
    if (!nb::isinstance<Tensor>(item)) throw refuse(item);
    out.push_back(nb::cast<Tensor>(item));
  }
  return out;
}

// The C++ context of one call of a stride.autograd.Function (its ctx keeps
// it as ctx._cpp). Python owns this wrapper; the node shares the context
// itself, which holds no Python object.
struct FunctionContextPy {
  std::shared_ptr<autograd::AutogradContext> ctx;
};

// What a Python backward returned, as one gradient per forward input.
autograd::Grads grads_from_python(nb::handle result, const std::string& name) {
  autograd::Grads grads;
  size_t position = 0;
  for (nb::handle item : result) {
    ++position;
    if (item.is_none()) {
      grads.emplace_back();
    } else if (nb::isinstance<Tensor>(item)) {
      grads.push_back(nb::cast<Tensor>(item));
    } else {
      throw nb::type_error(("function " + name + " returned a " + nb::inst_name(item).c_str() +
                            " as gradient " + std::to_string(position) +
                            "; expected a tensor or None.")
                               .c_str());
    }
  }
  return grads;
}

// A Python backward as the C++ custom function's: called with the GIL taken
// (autograd may run it from any C++ caller), with the output gradients as a
// tuple (None where undefined). A Python exception it raises propagates out
// of backward() as itself.
autograd::CustomBackward python_backward(nb::object fn, std::string name) {
  PyCallable call(std::move(fn));
  return [call, name = std::move(name)](autograd::AutogradContext&, const autograd::Grads& grads) {
    nb::gil_scoped_acquire gil;
    nb::list args;
    for (const Tensor& g : grads) args.append(g.defined() ? nb::cast(g) : nb::none());
    nb::object result = call(nb::tuple(args));
    return grads_from_python(result, name);
  };
}

void bind_custom_functions(nb::module_& ag) {
  nb::class_<FunctionContextPy>(ag, "_FunctionContext",
                                "The C++ state of a custom function's ctx: saved tensors, "
                                "needs_input_grad, non-differentiable outputs.")
      .def(
          "__init__",
          [](FunctionContextPy* self, nb::handle inputs) {
            new (self) FunctionContextPy{std::make_shared<autograd::AutogradContext>(
                tensors_of(inputs, "FunctionCtx(): inputs"))};
          },
          nb::arg("inputs"))
      .def_prop_ro("needs_input_grad",
                   [](const FunctionContextPy& c) {
                     nb::list out;
                     for (bool b : c.ctx->needs_input_grad()) out.append(nb::bool_(b));
                     return nb::tuple(out);
                   })
      .def("save_for_backward",
           [](FunctionContextPy& c, nb::handle tensors) {
             c.ctx->save_for_backward(tensors_of(tensors, "save_for_backward(): tensors"));
           })
      .def_prop_ro("saved_tensors",
                   [](const FunctionContextPy& c) {
                     nb::list out;
                     for (const Tensor& t : c.ctx->saved_tensors()) {
                       out.append(t.defined() ? nb::cast(t) : nb::none());
                     }
                     return nb::tuple(out);
                   })
      .def("mark_non_differentiable",
           [](FunctionContextPy& c, nb::handle tensors) {
             c.ctx->mark_non_differentiable(
                 tensors_of(tensors, "mark_non_differentiable(): tensors"));
           })
      .def("set_materialize_grads",
           [](FunctionContextPy& c, bool value) { c.ctx->set_materialize_grads(value); });
  ag.def(
      "_record_function",
      [](const std::string& name, FunctionContextPy& c, nb::handle inputs, nb::handle outputs,
         nb::object backward) {
        const std::vector<Tensor> recorded = autograd::record_function(
            name, c.ctx, tensors_of(inputs, "inputs"), tensors_of(outputs, "outputs"),
            python_backward(std::move(backward), name));
        nb::list out;
        for (const Tensor& t : recorded) out.append(t);
        return nb::tuple(out);
      },
      nb::arg("name"), nb::arg("ctx"), nb::arg("inputs"), nb::arg("outputs"), nb::arg("backward"),
      "Records outputs (computed under no_grad) as a function of inputs (None for "
      "non-tensors) whose backward is backward(grads) -> one gradient per input.");
}

struct HookHandlePy {
  HookHandle handle;
  void remove() { handle.remove(); }
};

}  // namespace

void bind_autograd(nb::module_& m, nb::class_<Tensor>& cls) {
  nb::class_<HookHandlePy>(m, "RemovableHandle", "Removes a hook: handle.remove().")
      .def("remove", &HookHandlePy::remove, "Unregisters the hook (a second call does nothing).");

  cls.def(
      "backward",
      [](const Tensor& t, std::optional<Tensor> gradient, std::optional<bool> retain_graph,
         bool create_graph) {
        t.backward(gradient ? *gradient : Tensor(), retain_graph, create_graph);
      },
      nb::arg("gradient") = nb::none(), nb::arg("retain_graph") = nb::none(),
      nb::arg("create_graph") = false,
      "Accumulates d(self)/d(leaf) into every leaf's .grad (gradient= for non-scalars).");
  cls.def("retain_grad", &Tensor::retain_grad,
          "Makes backward() fill .grad of this non-leaf tensor too.");
  cls.def_prop_ro("retains_grad", &Tensor::retains_grad,
                  "True if retain_grad() was called on this non-leaf tensor.");
  cls.def(
      "requires_grad_",
      [](nb::object self, bool on) {
        nb::cast<Tensor&>(self).requires_grad_(on);
        return self;
      },
      nb::arg("requires_grad") = true, "Sets requires_grad in place (a leaf only); returns self.");
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
  ag.def("is_grad_enabled", &GradMode::is_enabled,
         "True if autograd records ops on this thread (False under no_grad).");
  ag.def("set_grad_enabled", &GradMode::set_enabled, nb::arg("mode"),
         "Turns the recording of ops on or off for this thread.");
  ag.def("is_anomaly_enabled", &AnomalyMode::is_enabled,
         "True if anomaly detection (NaN checks in backward, forward traces) is on.");
  ag.def("set_anomaly_enabled", &AnomalyMode::set_enabled, nb::arg("mode"),
         "Turns anomaly detection on or off.");
  ag.def(
      "grad",
      [](nb::handle outputs, nb::handle inputs, nb::handle grad_outputs,
         std::optional<bool> retain_graph, bool create_graph, bool allow_unused) {
        const std::vector<Tensor> grads = autograd::grad(
            tensors_of(outputs, "grad(): outputs"), tensors_of(inputs, "grad(): inputs"),
            tensors_of(grad_outputs, "grad(): grad_outputs"), retain_graph, create_graph,
            allow_unused);
        nb::list out;
        for (const Tensor& g : grads) out.append(g.defined() ? nb::cast(g) : nb::none());
        return nb::tuple(out);
      },
      nb::arg("outputs"), nb::arg("inputs"), nb::arg("grad_outputs") = nb::none(),
      nb::arg("retain_graph") = nb::none(), nb::arg("create_graph") = false,
      nb::arg("allow_unused") = false,
      "The gradients of outputs with respect to inputs, as a tuple, without touching .grad "
      "(None for an unused input when allow_unused, else RuntimeError).");
  ag.def(
      "backward",
      [](nb::handle tensors, nb::handle grad_tensors, std::optional<bool> retain_graph,
         bool create_graph) {
        autograd::backward(tensors_of(tensors, "backward(): tensors"),
                           tensors_of(grad_tensors, "backward(): grad_tensors"), retain_graph,
                           create_graph);
      },
      nb::arg("tensors"), nb::arg("grad_tensors") = nb::none(),
      nb::arg("retain_graph") = nb::none(), nb::arg("create_graph") = false,
      "Accumulates the gradients of tensors (grad_tensors for non-scalars) into the leaves' "
      ".grad.");
  ag.def(
      "gradcheck",
      [](nb::object fn, nb::handle inputs, double eps, double atol, double rtol) {
        PyCallable call(std::move(fn));
        return autograd::gradcheck(
            [&call](const std::vector<Tensor>& xs) {
              nb::list args;
              for (const Tensor& x : xs) args.append(x);
              nb::object out = call(nb::tuple(args));
              if (!nb::isinstance<Tensor>(out)) {
                throw nb::type_error(("gradcheck(): func must return a tensor; got " +
                                      std::string(nb::inst_name(out).c_str()) + ".")
                                         .c_str());
              }
              return nb::cast<Tensor>(out);
            },
            tensors_of(inputs, "gradcheck(): inputs"), eps, atol, rtol);
      },
      nb::arg("func"), nb::arg("inputs"), nb::arg("eps") = 1e-6, nb::arg("atol") = 1e-5,
      nb::arg("rtol") = 1e-3,
      "True if func's analytical gradients match finite differences (float64 inputs); "
      "RuntimeError naming the first mismatch otherwise.");
  bind_custom_functions(ag);
}

}  // namespace stride::python
