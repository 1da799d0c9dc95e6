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
  nb::class_<doctor::CausalityResult>(m, "CausalityResult",
                                      "What check_causality found; truthy when causal.")
      .def_ro("causal", &doctor::CausalityResult::causal,
              "True if no output depended on a later token.")
      .def_ro("first_leaking_position", &doctor::CausalityResult::first_leaking_position,
              "The first position whose output changed with later tokens (-1 when causal).")
      .def_ro("max_change", &doctor::CausalityResult::max_change,
              "The largest change of an output seen anywhere.")
      .def_ro("message", &doctor::CausalityResult::message, "The verdict, as text.")
      .def("__bool__", [](const doctor::CausalityResult& r) { return r.causal; })
      .def("__repr__", [](const doctor::CausalityResult& r) { return r.message; });
  nb::class_<doctor::AuditResult>(m, "AuditResult",
                                  "What audit_parameters found; truthy when clean.")
      .def_ro("ok", &doctor::AuditResult::ok, "True if there is no problem.")
      .def_ro("problems", &doctor::AuditResult::problems,
              "One line per problem, naming the parameter.")
      .def_ro("message", &doctor::AuditResult::message, "The verdict, as text.")
      .def("__bool__", [](const doctor::AuditResult& r) { return r.ok; })
      .def("__repr__", [](const doctor::AuditResult& r) { return r.message; });
  nb::class_<doctor::GradientStat>(m, "GradientStat", "The gradient that reached one parameter.")
      .def_ro("name", &doctor::GradientStat::name, "The parameter's dotted name.")
      .def_ro("numel", &doctor::GradientStat::numel, "Its number of elements.")
      .def_ro("zero_fraction", &doctor::GradientStat::zero_fraction,
              "The fraction of gradient entries within the tolerance of 0 (1 without a grad).")
      .def_ro("grad_norm", &doctor::GradientStat::grad_norm, "|grad|, the gradient's 2-norm.")
      .def_ro("weight_norm", &doctor::GradientStat::weight_norm, "|w|, the parameter's 2-norm.")
      .def_ro("ratio", &doctor::GradientStat::ratio, "|grad| / |w| (0 when the weight is 0).")
      .def_ro("has_grad", &doctor::GradientStat::has_grad, "True if the parameter has a .grad.")
      .def_ro("no_signal", &doctor::GradientStat::no_signal,
              "True without a gradient or with every entry within the tolerance.");
  nb::class_<doctor::GradientFlow>(m, "GradientFlow",
                                   "What gradient_flow found; truthy when every parameter got "
                                   "a signal.")
      .def_ro("params", &doctor::GradientFlow::params, "One GradientStat per parameter.")
      .def_ro("ok", &doctor::GradientFlow::ok, "True if no trainable parameter is without signal.")
      .def("table", &doctor::GradientFlow::table,
           "The stats as a text table: name, numel, % near-zero, |grad|, |grad|/|w|, a flag.")
      .def("__bool__", [](const doctor::GradientFlow& r) { return r.ok; })
      .def("__repr__", &doctor::GradientFlow::table);
  nb::class_<doctor::LogitsCheck>(m, "LogitsCheck", "What check_logits found.")
      .def_ro("looks_like_probabilities", &doctor::LogitsCheck::looks_like_probabilities,
              "True if every row is in [0, 1] and sums to 1 (softmax output, not logits).")
      .def_ro("message", &doctor::LogitsCheck::message, "The verdict, as text.")
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
      nb::arg("trials") = 2, nb::arg("tolerance") = 0.0, nb::arg("seed") = 0,
      "Whether forward's output at position t depends only on tokens <= t.");
  d.def(
      "audit_parameters",
      [](const NamedTensors& named, optim::Optimizer& optimizer,
         const std::function<Tensor()>& loss_fn) {
        auto model = mirror(named);
        return doctor::audit_parameters(*model, optimizer, loss_fn);
      },
      nb::arg("named_parameters"), nb::arg("optimizer"), nb::arg("loss_fn"),
      "Takes one optimizer step and checks each parameter is owned, gets a gradient, changes.");
  d.def(
      "gradient_flow",
      [](const NamedTensors& named, double zero_tolerance) {
        return doctor::gradient_flow(*mirror(named), zero_tolerance);
      },
      nb::arg("named_parameters"), nb::arg("zero_tolerance") = 0.0,
      "Per parameter, how much gradient arrived (run a backward pass first).");
  d.def("check_logits", &doctor::check_logits, nb::arg("outputs"),
        "Flags outputs (..., C) that look like probabilities (every value in [0, 1], every row "
        "summing to 1) where a loss expects logits.");
}

}  // namespace stride::python
