// stride._stride._optim: the C++ optimizers and schedulers under
// stride.optim. The C++ objects hold the hyperparameters and the state, and
// run the (fused) updates; python/stride/optim/ gives them PyTorch's Python
// surface (param_groups as dicts, state_dict in PyTorch's layout).
#include <nanobind/stl/function.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bindings.h"

namespace stride::python {

namespace {

using Options = std::map<std::string, double>;
// A group as Python hands it over: its parameters and the options it sets
// (the others come from the optimizer's defaults).
using GroupSpec = std::pair<std::vector<Tensor>, Options>;

void set_options(optim::OptimizerOptions& options, const Options& values, const char* optimizer) {
  for (const auto& [key, value] : values) {
    if (!options.set_value(key, value)) {
      throw nb::type_error(
          (std::string(optimizer) + " got an unexpected hyperparameter '" + key + "'.").c_str());
    }
  }
}

// Builds optimizer O with options type Opts from Python's groups and defaults.
template <class O, class Opts>
std::unique_ptr<optim::Optimizer> make_optimizer(const std::vector<GroupSpec>& specs,
                                                 const Options& defaults,
                                                 const char* name) {
  Opts options(0.0);
  set_options(options, defaults, name);
  std::vector<optim::ParamGroup> groups;
  for (const auto& [params, overrides] : specs) {
    Opts group_options = options;
    set_options(group_options, overrides, name);
    groups.emplace_back(params, group_options);
  }
  return std::make_unique<O>(std::move(groups), options);
}

optim::ParamGroup& group_at(optim::Optimizer& o, size_t g) {
  if (g >= o.param_groups().size()) {
    throw nb::index_error(("param group " + std::to_string(g) +
                           " out of range (the optimizer has " +
                           std::to_string(o.param_groups().size()) + ")")
                              .c_str());
  }
  return o.param_groups()[g];
}

nb::tuple state_dict_of(const optim::Optimizer& o) {
  const optim::OptimizerState state = o.state_dict();
  return nb::make_tuple(state.optimizer, state.tensors, state.scalars);
}

void load_state_dict_into(optim::Optimizer& o,
                          const std::string& name,
                          std::vector<std::pair<std::string, Tensor>> tensors,
                          Options scalars) {
  o.load_state_dict(optim::OptimizerState{name, std::move(tensors), std::move(scalars)});
}

void bind_optimizer(nb::module_& m) {
  nb::class_<optim::Optimizer>(m, "Optimizer", "A C++ optimizer; see stride.optim.")
      .def("step", [](optim::Optimizer& o) { o.step(); })
      .def("zero_grad", &optim::Optimizer::zero_grad, nb::arg("set_to_none") = true)
      .def_prop_ro("name", &optim::Optimizer::name)
      .def("num_groups", [](const optim::Optimizer& o) { return o.param_groups().size(); })
      .def(
          "group_params", [](optim::Optimizer& o, size_t g) { return group_at(o, g).params(); },
          nb::arg("group"))
      .def(
          "group_options",
          [](optim::Optimizer& o, size_t g) { return group_at(o, g).options().values(); },
          nb::arg("group"))
      .def(
          "set_group_option",
          [](optim::Optimizer& o, size_t g, const std::string& key, double value) {
            optim::OptimizerOptions& options = group_at(o, g).options();
            if (!options.set_value(key, value)) {
              throw nb::key_error((o.name() + " has no hyperparameter '" + key + "'.").c_str());
            }
          },
          nb::arg("group"), nb::arg("key"), nb::arg("value"))
      .def(
          "add_param_group",
          [](optim::Optimizer& o, std::vector<Tensor> params, const Options& overrides) {
            std::unique_ptr<optim::OptimizerOptions> options = o.defaults().clone();
            set_options(*options, overrides, o.name().c_str());
            o.add_param_group(optim::ParamGroup(std::move(params), *options));
          },
          nb::arg("params"), nb::arg("options"))
      .def(
          "state",
          [](optim::Optimizer& o, const Tensor& param) -> nb::object {
            const optim::ParamState* state = o.state(param);
            if (!state) return nb::none();
            return nb::make_tuple(state->tensors, state->scalars);
          },
          nb::arg("param"))
      .def("state_dict", &state_dict_of)
      .def("load_state_dict", &load_state_dict_into, nb::arg("name"), nb::arg("tensors"),
           nb::arg("scalars"));

  m.def("SGD", &make_optimizer<optim::SGD, optim::SGDOptions>, nb::arg("groups"),
        nb::arg("defaults"), nb::arg("name") = "SGD");
  m.def("Adam", &make_optimizer<optim::Adam, optim::AdamOptions>, nb::arg("groups"),
        nb::arg("defaults"), nb::arg("name") = "Adam");
  m.def("AdamW", &make_optimizer<optim::AdamW, optim::AdamOptions>, nb::arg("groups"),
        nb::arg("defaults"), nb::arg("name") = "AdamW");
  m.def("RMSprop", &make_optimizer<optim::RMSprop, optim::RMSpropOptions>, nb::arg("groups"),
        nb::arg("defaults"), nb::arg("name") = "RMSprop");
  m.def("Adagrad", &make_optimizer<optim::Adagrad, optim::AdagradOptions>, nb::arg("groups"),
        nb::arg("defaults"), nb::arg("name") = "Adagrad");
  m.def("Adamax", &make_optimizer<optim::Adamax, optim::AdamaxOptions>, nb::arg("groups"),
        nb::arg("defaults"), nb::arg("name") = "Adamax");
  m.def("NAdam", &make_optimizer<optim::NAdam, optim::NAdamOptions>, nb::arg("groups"),
        nb::arg("defaults"), nb::arg("name") = "NAdam");
  m.def("RAdam", &make_optimizer<optim::RAdam, optim::RAdamOptions>, nb::arg("groups"),
        nb::arg("defaults"), nb::arg("name") = "RAdam");
}

// CosineAnnealingWarmRestarts, whose step takes an optional (fractional)
// epoch.
void bind_warm_restarts(nb::module_& m) {
  using optim::CosineAnnealingWarmRestarts;
  nb::class_<CosineAnnealingWarmRestarts, optim::LRScheduler>(
      m, "CosineAnnealingWarmRestarts",
      "The C++ CosineAnnealingWarmRestarts; see stride.optim.lr_scheduler.")
      .def(
          "step_epoch", [](CosineAnnealingWarmRestarts& s, double epoch) { s.step(epoch); },
          nb::arg("epoch"))
      .def_prop_ro("T_cur", &CosineAnnealingWarmRestarts::T_cur)
      .def_prop_ro("T_i", &CosineAnnealingWarmRestarts::T_i);
  m.def(
      "make_CosineAnnealingWarmRestarts",
      [](optim::Optimizer& o, int64_t t_0, int64_t t_mult,
         double eta_min) -> std::shared_ptr<CosineAnnealingWarmRestarts> {
        return std::make_shared<CosineAnnealingWarmRestarts>(o, t_0, t_mult, eta_min);
      },
      nb::arg("optimizer"), nb::arg("T_0"), nb::arg("T_mult"), nb::arg("eta_min"),
      nb::keep_alive<0, 1>());
}

void bind_one_cycle(nb::module_& m) {
  m.def(
      "OneCycleLR",
      [](optim::Optimizer& o, std::vector<double> max_lrs, int64_t total_steps, double pct_start,
         bool linear, bool cycle_momentum, double base_momentum, double max_momentum,
         double div_factor, double final_div_factor,
         bool three_phase) -> std::shared_ptr<optim::LRScheduler> {
        const auto options = optim::OneCycleLROptions()
                                 .pct_start(pct_start)
                                 .anneal_strategy(linear ? optim::AnnealStrategy::kLinear
                                                         : optim::AnnealStrategy::kCos)
                                 .cycle_momentum(cycle_momentum)
                                 .base_momentum(base_momentum)
                                 .max_momentum(max_momentum)
                                 .div_factor(div_factor)
                                 .final_div_factor(final_div_factor)
                                 .three_phase(three_phase);
        return std::make_shared<optim::OneCycleLR>(o, std::move(max_lrs), total_steps, options);
      },
      nb::arg("optimizer"), nb::arg("max_lrs"), nb::arg("total_steps"), nb::arg("pct_start"),
      nb::arg("linear"), nb::arg("cycle_momentum"), nb::arg("base_momentum"),
      nb::arg("max_momentum"), nb::arg("div_factor"), nb::arg("final_div_factor"),
      nb::arg("three_phase"), nb::keep_alive<0, 1>());
}

void bind_plateau(nb::module_& m) {
  using optim::ReduceLROnPlateau;
  nb::class_<ReduceLROnPlateau>(m, "ReduceLROnPlateau",
                                "The C++ ReduceLROnPlateau; see stride.optim.lr_scheduler.")
      .def("step", &ReduceLROnPlateau::step, nb::arg("metric"))
      .def("get_last_lr", &ReduceLROnPlateau::get_last_lr)
      .def_prop_ro("last_epoch", &ReduceLROnPlateau::last_epoch)
      .def_prop_ro("best", &ReduceLROnPlateau::best)
      .def_prop_ro("num_bad_epochs", &ReduceLROnPlateau::num_bad_epochs)
      .def_prop_ro("in_cooldown", &ReduceLROnPlateau::in_cooldown)
      .def("state_dict", &ReduceLROnPlateau::state_dict)
      .def("load_state_dict", &ReduceLROnPlateau::load_state_dict, nb::arg("state"));
  m.def(
      "make_ReduceLROnPlateau",
      [](optim::Optimizer& o, bool max_mode, double factor, int64_t patience, double threshold,
         bool abs_threshold, int64_t cooldown, std::vector<double> min_lrs,
         double eps) -> std::unique_ptr<ReduceLROnPlateau> {
        const auto options =
            optim::ReduceLROnPlateauOptions()
                .mode(max_mode ? optim::PlateauMode::kMax : optim::PlateauMode::kMin)
                .factor(factor)
                .patience(patience)
                .threshold(threshold)
                .threshold_mode(abs_threshold ? optim::ThresholdMode::kAbs
                                              : optim::ThresholdMode::kRel)
                .cooldown(cooldown)
                .min_lrs(std::move(min_lrs))
                .eps(eps);
        return std::make_unique<ReduceLROnPlateau>(o, options);
      },
      nb::arg("optimizer"), nb::arg("max_mode"), nb::arg("factor"), nb::arg("patience"),
      nb::arg("threshold"), nb::arg("abs_threshold"), nb::arg("cooldown"), nb::arg("min_lrs"),
      nb::arg("eps"), nb::keep_alive<0, 1>());
}

// Schedulers keep their optimizer alive (keep_alive<0, 1>): the C++ object
// holds a reference to it.
void bind_schedulers(nb::module_& m) {
  using optim::LRScheduler;
  nb::class_<LRScheduler>(m, "LRScheduler", "A C++ learning-rate scheduler; see stride.optim.")
      .def("step", &LRScheduler::step)
      .def("get_last_lr", &LRScheduler::get_last_lr)
      .def_prop_ro("last_epoch", &LRScheduler::last_epoch)
      .def_prop_ro("base_lrs", &LRScheduler::base_lrs)
      .def("state_dict", &LRScheduler::state_dict)
      .def("load_state_dict", &LRScheduler::load_state_dict, nb::arg("state"));

  const auto keep = nb::keep_alive<0, 1>();
  m.def(
      "StepLR",
      [](optim::Optimizer& o, int64_t step_size, double gamma) -> std::shared_ptr<LRScheduler> {
        return std::make_shared<optim::StepLR>(o, step_size, gamma);
      },
      nb::arg("optimizer"), nb::arg("step_size"), nb::arg("gamma"), keep);
  m.def(
      "LinearLR",
      [](optim::Optimizer& o, double start, double end,
         int64_t total_iters) -> std::shared_ptr<LRScheduler> {
        return std::make_shared<optim::LinearLR>(o, start, end, total_iters);
      },
      nb::arg("optimizer"), nb::arg("start_factor"), nb::arg("end_factor"), nb::arg("total_iters"),
      keep);
  m.def(
      "CosineAnnealingLR",
      [](optim::Optimizer& o, int64_t t_max, double eta_min) -> std::shared_ptr<LRScheduler> {
        return std::make_shared<optim::CosineAnnealingLR>(o, t_max, eta_min);
      },
      nb::arg("optimizer"), nb::arg("T_max"), nb::arg("eta_min"), keep);
  m.def(
      "LambdaLR",
      [](optim::Optimizer& o,
         std::vector<optim::LambdaLR::Fn> fns) -> std::shared_ptr<LRScheduler> {
        return std::make_shared<optim::LambdaLR>(o, std::move(fns));
      },
      nb::arg("optimizer"), nb::arg("lr_lambdas"), keep);
  m.def(
      "SequentialLR",
      [](optim::Optimizer& o, std::vector<std::shared_ptr<LRScheduler>> schedulers,
         std::vector<int64_t> milestones) -> std::shared_ptr<LRScheduler> {
        return std::make_shared<optim::SequentialLR>(o, std::move(schedulers),
                                                     std::move(milestones));
      },
      nb::arg("optimizer"), nb::arg("schedulers"), nb::arg("milestones"), keep);
  m.def(
      "MultiStepLR",
      [](optim::Optimizer& o, std::vector<int64_t> milestones,
         double gamma) -> std::shared_ptr<LRScheduler> {
        return std::make_shared<optim::MultiStepLR>(o, std::move(milestones), gamma);
      },
      nb::arg("optimizer"), nb::arg("milestones"), nb::arg("gamma"), keep);
  m.def(
      "ExponentialLR",
      [](optim::Optimizer& o, double gamma) -> std::shared_ptr<LRScheduler> {
        return std::make_shared<optim::ExponentialLR>(o, gamma);
      },
      nb::arg("optimizer"), nb::arg("gamma"), keep);
  m.def(
      "ConstantLR",
      [](optim::Optimizer& o, double factor, int64_t total_iters) -> std::shared_ptr<LRScheduler> {
        return std::make_shared<optim::ConstantLR>(o, factor, total_iters);
      },
      nb::arg("optimizer"), nb::arg("factor"), nb::arg("total_iters"), keep);
  bind_warm_restarts(m);
  bind_one_cycle(m);
  bind_plateau(m);
  m.def(
      "WarmupCosineLR",
      [](optim::Optimizer& o, int64_t warmup, int64_t total,
         double min_lr_ratio) -> std::shared_ptr<LRScheduler> {
        return std::make_shared<optim::WarmupCosineLR>(o, warmup, total, min_lr_ratio);
      },
      nb::arg("optimizer"), nb::arg("warmup_steps"), nb::arg("total_steps"),
      nb::arg("min_lr_ratio"), keep);
}

}  // namespace

void bind_optim(nb::module_& m) {
  nb::module_ optim = m.def_submodule("_optim", "The C++ optimizers under stride.optim.");
  bind_optimizer(optim);
  bind_schedulers(optim);
}

}  // namespace stride::python
