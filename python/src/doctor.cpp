// stride._stride._doctor: the C++ doctor's checks (stride/doctor.h) for
// Python models. Python modules are Python objects, so the checks that read
// a model's parameters get a C++ module tree that mirrors the Python one: the
// same dotted names, holding the very same tensors.
#include <nanobind/stl/function.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bindings.h"

namespace stride::python {

namespace {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// Registers `tensor` under the dotted `name` below `root`, creating the
// intermediate modules ("layers", "layers.0", ...) on the way.
void register_dotted(nn::Module& root, const std::string& name, const Tensor& tensor) {
  nn::Module* module = &root;
  size_t start = 0;
  for (size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', start)) {
    const std::string part = name.substr(start, dot - start);
    const auto children = module->named_children();
    if (const auto* child = children.find(part)) {
      module = child->get();
    } else {
      module = module->register_module(part, std::make_shared<nn::Module>("Module")).get();
    }
    start = dot + 1;
  }
  module->register_parameter(name.substr(start), tensor, tensor.requires_grad());
}

// A C++ module whose named_parameters() are `named`, in order.
std::shared_ptr<nn::Module> mirror(const NamedTensors& named) {
  auto root = std::make_shared<nn::Module>("Module");
  for (const auto& [name, tensor] : named) register_dotted(*root, name, tensor);
  return root;
}

void bind_results(nb::module_& m) {
  nb::class_<doctor::CausalityResult>(m, "CausalityResult")
      .def_ro("causal", &doctor::CausalityResult::causal)
      .def_ro("first_leaking_position", &doctor::CausalityResult::first_leaking_position)
      .def_ro("max_change", &doctor::CausalityResult::max_change)
      .def_ro("message", &doctor::CausalityResult::message)
      .def("__bool__", [](const doctor::CausalityResult& r) { return r.causal; })
      .def("__repr__", [](const doctor::CausalityResult& r) { return r.message; });
  nb::class_<doctor::AuditResult>(m, "AuditResult")
      .def_ro("ok", &doctor::AuditResult::ok)
      .def_ro("problems", &doctor::AuditResult::problems)
      .def_ro("message", &doctor::AuditResult::message)
      .def("__bool__", [](const doctor::AuditResult& r) { return r.ok; })
      .def("__repr__", [](const doctor::AuditResult& r) { return r.message; });
  nb::class_<doctor::GradientStat>(m, "GradientStat")
      .def_ro("name", &doctor::GradientStat::name)
      .def_ro("numel", &doctor::GradientStat::numel)
      .def_ro("zero_fraction", &doctor::GradientStat::zero_fraction)
      .def_ro("grad_norm", &doctor::GradientStat::grad_norm)
      .def_ro("weight_norm", &doctor::GradientStat::weight_norm)
      .def_ro("ratio", &doctor::GradientStat::ratio)
      .def_ro("has_grad", &doctor::GradientStat::has_grad)
      .def_ro("no_signal", &doctor::GradientStat::no_signal);
  nb::class_<doctor::GradientFlow>(m, "GradientFlow")
      .def_ro("params", &doctor::GradientFlow::params)
      .def_ro("ok", &doctor::GradientFlow::ok)
      .def("table", &doctor::GradientFlow::table)
      .def("__bool__", [](const doctor::GradientFlow& r) { return r.ok; })
      .def("__repr__", &doctor::GradientFlow::table);
  nb::class_<doctor::LogitsCheck>(m, "LogitsCheck")
      .def_ro("looks_like_probabilities", &doctor::LogitsCheck::looks_like_probabilities)
      .def_ro("message", &doctor::LogitsCheck::message)
      .def("__repr__", [](const doctor::LogitsCheck& r) { return r.message; });
}

}  // namespace

void bind_doctor(nb::module_& m) {
  nb::module_ d = m.def_submodule("_doctor", "The C++ doctor's checks; see stride.doctor.");
  bind_results(d);
  d.def(
      "check_causality",
      [](const std::function<Tensor(const Tensor&)>& forward, int64_t vocab_size, int64_t length,
         int64_t batch, int64_t trials, double tolerance, uint64_t seed) {
        return doctor::check_causality(
            forward, vocab_size, length,
            {.batch = batch, .trials = trials, .tolerance = tolerance, .seed = seed});
      },
      nb::arg("forward"), nb::arg("vocab_size"), nb::arg("length"), nb::arg("batch") = 2,
      nb::arg("trials") = 2, nb::arg("tolerance") = 0.0, nb::arg("seed") = 0);
  d.def(
      "audit_parameters",
      [](const NamedTensors& named, optim::Optimizer& optimizer,
         const std::function<Tensor()>& loss_fn) {
        auto model = mirror(named);
        return doctor::audit_parameters(*model, optimizer, loss_fn);
      },
      nb::arg("named_parameters"), nb::arg("optimizer"), nb::arg("loss_fn"));
  d.def(
      "gradient_flow",
      [](const NamedTensors& named, double zero_tolerance) {
        return doctor::gradient_flow(*mirror(named), zero_tolerance);
      },
      nb::arg("named_parameters"), nb::arg("zero_tolerance") = 0.0);
  d.def("check_logits", &doctor::check_logits, nb::arg("outputs"));
}

}  // namespace stride::python
