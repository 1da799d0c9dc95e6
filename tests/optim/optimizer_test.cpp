// The Optimizer base and its optimizers: parameter checks, param groups,
// step/zero_grad semantics, state_dict round trips, and the fused steps
// against the op-by-op reference on every layout.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <unistd.h>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <stride/optim.h>
#include <stride/stride.h>

#include "support/error_message.h"
#include "support/layouts.h"
#include "support/thread_count.h"

namespace stride {
namespace {

using optim::Adam;
using optim::AdamOptions;
using optim::AdamW;
using optim::adamw_options;
using optim::ParamGroup;
using optim::SGD;
using optim::SGDOptions;
using testing::Layout;

using testing::message_of;

#define EXPECT_ERROR_CONTAINS(E, stmt, ...)                                  \
  do {                                                                       \
    const std::string msg_ = message_of<E>([&] { stmt; });                   \
    for (const char* part_ : {__VA_ARGS__}) {                                \
      EXPECT_NE(msg_.find(part_), std::string::npos) << "message: " << msg_; \
    }                                                                        \
  } while (0)

Tensor leaf(IntArrayRef shape, uint64_t seed = 1) {
  Generator gen(seed);
  return randn(shape, kFloat32, &gen).requires_grad_();
}

// ---- parameter checks ----

TEST(OptimizerErrors, DuplicateParameterNamesItsIndex) {
  Tensor a = leaf({3}), b = leaf({2});
  EXPECT_ERROR_CONTAINS(ValueError, SGD({a, b, a}, SGDOptions(0.1)), "[SGD]", "parameter 2",
                        "same tensor as parameter 0", "only once");
  // Across groups.
  EXPECT_ERROR_CONTAINS(ValueError, Adam({ParamGroup({a, b}), ParamGroup({b})}, AdamOptions()),
                        "[Adam]", "parameter 2 (group 1, position 0)",
                        "parameter 1 (group 0, position 1)");
  // Through add_param_group.
  Adam opt({a}, AdamOptions());
  EXPECT_ERROR_CONTAINS(ValueError, opt.add_param_group(ParamGroup({b, a})), "parameter 2",
                        "parameter 0");
  EXPECT_EQ(opt.param_groups().size(), 1u) << "a rejected group is not added";
  // Another leaf over exactly the same memory is the same parameter.
  Tensor alias = a.detach().requires_grad_();
  EXPECT_ERROR_CONTAINS(ValueError, SGD({a, alias}, SGDOptions(0.1)), "parameter 1", "parameter 0");
}

TEST(OptimizerErrors, NonLeafParameterIsRefused) {
  Tensor a = leaf({3});
  Tensor b = a * 2.0;
  EXPECT_ERROR_CONTAINS(ValueError, Adam({a, b}), "[Adam] parameter 1", "not a leaf", "Hint");
}

TEST(OptimizerErrors, IntegerParameterIsRefused) {
  Tensor i = arange(6);
  EXPECT_ERROR_CONTAINS(DTypeError, SGD({leaf({2}), i}, SGDOptions(0.1)), "[SGD] parameter 1",
                        "int64", "floating point");
}

TEST(OptimizerErrors, ParameterWithoutRequiresGradIsRefused) {
  EXPECT_ERROR_CONTAINS(ValueError, AdamW({zeros({2})}), "[AdamW] parameter 0",
                        "does not require grad");
}

TEST(OptimizerErrors, ExpandedParameterIsRefused) {
  Tensor e = zeros({1, 3}).expand({4, 3}).detach().requires_grad_();
  EXPECT_ERROR_CONTAINS(ValueError, SGD({e}, SGDOptions(0.1)), "parameter 0", "share memory");
}

TEST(OptimizerErrors, EmptyParameterListAndAnotherOptimizersOptions) {
  EXPECT_ERROR_CONTAINS(ValueError, Adam(std::vector<Tensor>{}), "empty parameter list");
  EXPECT_ERROR_CONTAINS(ValueError, Adam({ParamGroup({leaf({2})}, SGDOptions(0.1).momentum(0.9))}),
                        "[Adam] param group 0 has SGDOptions", "takes AdamOptions");
}

TEST(OptimizerErrors, InvalidHyperparameters) {
  Tensor p = leaf({2});
  EXPECT_ERROR_CONTAINS(ValueError, SGD({p}, SGDOptions(-1)), "lr must be >= 0");
  EXPECT_ERROR_CONTAINS(ValueError, SGD({p}, SGDOptions(0.1).nesterov(true)), "nesterov");
  EXPECT_ERROR_CONTAINS(ValueError, Adam({p}, AdamOptions().betas({0.9, 1.0})), "betas[1]");
  EXPECT_ERROR_CONTAINS(ValueError, AdamW({p}, adamw_options().eps(-1)), "eps");
  EXPECT_ERROR_CONTAINS(ValueError, Adam({ParamGroup({p}, AdamOptions().weight_decay(-0.1))}),
                        "param group 0", "weight_decay");
}

TEST(OptimizerErrors, GradientOfTheWrongShapeOrDtype) {
  Tensor p = leaf({2, 3});
  SGD opt({p}, SGDOptions(0.1));
  p.mutable_grad() = zeros({3, 2});
  EXPECT_ERROR_CONTAINS(ShapeError, opt.step(), "gradient of parameter 0", "(3, 2)", "(2, 3)");
  p.mutable_grad() = zeros({2, 3}, kFloat64);
  EXPECT_ERROR_CONTAINS(DTypeError, opt.step(), "float64", "float32");
}

// ---- semantics ----

TEST(Optimizer, StepSkipsParametersWithoutGradient) {
  Tensor a = leaf({3}, 1), b = leaf({3}, 2);
  const Tensor a0 = a.clone(), b0 = b.clone();
  Adam opt({a, b}, AdamOptions(0.1));
  a.mutable_grad() = ones({3});
  opt.step();
  EXPECT_FALSE(equal(a, a0));
  EXPECT_TRUE(equal(b, b0));
  EXPECT_NE(opt.state(a), nullptr);
  EXPECT_EQ(opt.state(b), nullptr) << "no state for a parameter never updated";
  EXPECT_EQ(opt.state(a)->scalars.at("step"), 1.0);
}

TEST(Optimizer, ZeroGradSetsToNoneOrZeroesInPlace) {
  Tensor a = leaf({3});
  SGD opt({a}, SGDOptions(0.1));
  (a * a).sum().backward();
  const Tensor g = a.grad();
  opt.zero_grad(/*set_to_none=*/false);
  ASSERT_TRUE(a.grad().defined());
  EXPECT_TRUE(a.grad().is_same(g)) << "zeroed in place";
  EXPECT_TRUE(equal(a.grad(), zeros({3})));
  opt.zero_grad();
  EXPECT_FALSE(a.grad().defined());
}

TEST(Optimizer, PerGroupOptionsApply) {
  Tensor a = leaf({4}, 1), b = leaf({4}, 2);
  const Tensor a0 = a.clone(), b0 = b.clone();
  SGD opt({ParamGroup({a}), ParamGroup({b}, /*lr=*/0.5)}, SGDOptions(0.1).dampening(0.25));
  EXPECT_EQ(opt.param_groups()[0].lr(), 0.1);
  EXPECT_EQ(opt.param_groups()[1].lr(), 0.5);
  EXPECT_EQ(static_cast<const SGDOptions&>(opt.param_groups()[1].options()).dampening(), 0.25)
      << "the defaults give the rest";
  a.mutable_grad() = ones({4});
  b.mutable_grad() = ones({4});
  opt.step();
  EXPECT_TRUE(equal(a, a0 - 0.1f)) << "p -= lr * g, in float32";
  EXPECT_TRUE(equal(b, b0 - 0.5f));
  opt.param_groups()[1].set_lr(0);
  opt.step();
  EXPECT_TRUE(equal(b, b0 - 0.5f)) << "lr 0 leaves the group alone";
}

TEST(Optimizer, AddParamGroupContinuesTheIndices) {
  Tensor a = leaf({2}, 1), b = leaf({3}, 2);
  Adam opt({a}, AdamOptions(0.1));
  opt.add_param_group(ParamGroup({b}, /*lr=*/0.01));
  EXPECT_EQ(opt.parameters().size(), 2u);
  a.mutable_grad() = ones({2});
  b.mutable_grad() = ones({3});
  opt.step();
  const optim::OptimizerState sd = opt.state_dict();
  EXPECT_EQ(sd.optimizer, "Adam");
  EXPECT_EQ(sd.scalars.at("param_groups.1.lr"), 0.01);
  EXPECT_EQ(sd.scalars.at("param_groups.1.num_params"), 1.0);
  EXPECT_EQ(sd.scalars.at("state.1.step"), 1.0);
  bool found = false;
  for (const auto& [k, t] : sd.tensors) found |= k == "state.1.exp_avg" && t.numel() == 3;
  EXPECT_TRUE(found);
}

TEST(Optimizer, ClosureRunsWithGradModeAndReturnsTheLoss) {
  Tensor a = leaf({3});
  SGD opt({a}, SGDOptions(0.1));
  NoGradGuard outer;  // step re-enables grad mode for the closure
  const Tensor loss = opt.step([&] {
    opt.zero_grad();
    Tensor l = (a * a).sum();
    l.backward();
    return l;
  });
  ASSERT_TRUE(loss.defined());
  EXPECT_TRUE(a.grad().defined());
}

TEST(Optimizer, StateBuffersKeepADenseParametersLayout) {
  Tensor t = leaf({3, 5}).t().detach().requires_grad_();  // (5, 3), strides (1, 5)
  Adam opt({t}, AdamOptions());
  t.mutable_grad() = ones({5, 3});
  opt.step();
  const Tensor& m = opt.state(t)->tensors.at("exp_avg");
  EXPECT_TRUE(m.strides() == t.strides()) << "as PyTorch's zeros_like(preserve_format)";
}

TEST(SGD, FirstMomentumStepUsesTheGradientAsBuffer) {
  Tensor p = zeros({2}).requires_grad_();
  SGD opt({p}, SGDOptions(1.0).momentum(0.9).dampening(0.5));
  p.mutable_grad() = full({2}, 2.0);
  opt.step();  // buf = g (no dampening on the first step)
  EXPECT_TRUE(equal(opt.state(p)->tensors.at("momentum_buffer"), full({2}, 2.0)));
  EXPECT_TRUE(equal(p, full({2}, -2.0)));
  opt.step();  // buf = 0.9 * 2 + 0.5 * 2 = 2.8
  EXPECT_TRUE(testing::close(opt.state(p)->tensors.at("momentum_buffer"), full({2}, 2.8)));
}

TEST(Adam, FirstStepMovesEachWeightByLr) {
  // m_hat = g and v_hat = g^2 at step 1, so the update is lr * g / (|g| + eps).
  Tensor p = zeros({3}).requires_grad_();
  Adam opt({p}, AdamOptions(0.1));
  p.mutable_grad() = tensor<float>({2.0f, -0.5f, 1e-3f});
  opt.step();
  EXPECT_TRUE(testing::close(p, tensor<float>({-0.1f, 0.1f, -0.1f}), 1e-4));
}

TEST(AdamW, WeightDecayIsDecoupled) {
  // A zero gradient: Adam's L2 term moves p through m/v, AdamW only scales p.
  Tensor p = full({2}, 4.0).requires_grad_();
  AdamW opt({p}, adamw_options(0.1).weight_decay(0.5));
  p.mutable_grad() = zeros({2});
  opt.step();
  EXPECT_TRUE(equal(p, full({2}, 4.0f * float(1 - 0.1 * 0.5))));
}

// torch.optim.Adam(decoupled_weight_decay=True) is AdamW: with one options
// type, the flag alone picks the decay, bit for bit, fused or op by op, and
// AdamW keeps its decay decoupled whatever a group's options say.
TEST(AdamW, IsAdamWithDecoupledWeightDecay) {
  for (bool fused : {true, false}) {
    Tensor a = leaf({4, 3}, 21), b = a.detach().clone().requires_grad_();
    Tensor c = a.detach().clone().requires_grad_();
    Adam adam({a}, AdamOptions(0.1).weight_decay(0.3).decoupled_weight_decay(true).fused(fused));
    AdamW adamw({b}, adamw_options(0.1).weight_decay(0.3).fused(fused));
    AdamW given_l2({ParamGroup({c}, AdamOptions(0.1).weight_decay(0.3).fused(fused))});
    for (int step = 0; step < 3; ++step) {
      const Tensor g = leaf({4, 3}, 30 + step).detach();
      a.mutable_grad() = g.clone();
      b.mutable_grad() = g.clone();
      c.mutable_grad() = g.clone();
      adam.step();
      adamw.step();
      given_l2.step();
    }
    EXPECT_TRUE(equal(a, b)) << "fused " << fused;
    EXPECT_TRUE(equal(c, b)) << "fused " << fused;
  }
  EXPECT_EQ(adamw_options().weight_decay(), 1e-2);
  EXPECT_TRUE(adamw_options().decoupled_weight_decay());
  EXPECT_FALSE(AdamOptions().decoupled_weight_decay());
}

// ---- state_dict ----

using Factory = std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>)>;

std::vector<Tensor> make_params() {
  return {leaf({4, 3}, 11), leaf({5}, 12), leaf({3, 4}, 13).t().detach().requires_grad_()};
}

std::vector<Tensor> make_grads(int64_t step) {
  Generator gen(100 + uint64_t(step));
  return {randn({4, 3}, kFloat32, &gen), randn({5}, kFloat32, &gen),
          randn({4, 3}, kFloat32, &gen) * 0.1};
}

void run_steps(optim::Optimizer& opt, std::vector<Tensor>& params, int64_t from, int64_t to) {
  for (int64_t s = from; s < to; ++s) {
    std::vector<Tensor> grads = make_grads(s);
    for (size_t i = 0; i < params.size(); ++i) params[i].mutable_grad() = grads[i];
    opt.step();
  }
}

void expect_resume_is_exact(const Factory& make, const Factory& make_other_options) {
  std::vector<Tensor> straight = make_params();
  auto opt = make(straight);
  run_steps(*opt, straight, 0, 6);

  std::vector<Tensor> resumed = make_params();
  optim::OptimizerState saved;
  {
    auto first = make(resumed);
    run_steps(*first, resumed, 0, 3);
    saved = first->state_dict();
    // A snapshot: the first optimizer's buffers must not be shared.
    for (auto& [k, t] : saved.tensors) t = t.clone();
  }
  auto second = make_other_options(resumed);
  second->load_state_dict(saved);
  run_steps(*second, resumed, 3, 6);

  for (size_t i = 0; i < straight.size(); ++i) {
    EXPECT_TRUE(equal(resumed[i], straight[i])) << "parameter " << i;
    const optim::ParamState* a = opt->state(straight[i]);
    const optim::ParamState* b = second->state(resumed[i]);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->scalars, b->scalars);
    ASSERT_EQ(a->tensors.size(), b->tensors.size());
    for (const auto& [k, t] : a->tensors) EXPECT_TRUE(equal(b->tensors.at(k), t)) << k;
  }
  EXPECT_EQ(second->state_dict().scalars, opt->state_dict().scalars) << "options restored";
}

TEST(OptimizerStateDict, ResumeIsBitExactForAdam) {
  expect_resume_is_exact(
      [](std::vector<Tensor> p) {
        return std::make_unique<Adam>(
            std::vector<ParamGroup>{
                ParamGroup({p[0], p[1]}),
                ParamGroup({p[2]}, AdamOptions(0.02).weight_decay(0.01).amsgrad(true))},
            AdamOptions(0.05).weight_decay(0.01));
      },
      [](std::vector<Tensor> p) {  // options differ: load restores them
        return std::make_unique<Adam>(
            std::vector<ParamGroup>{ParamGroup({p[0], p[1]}), ParamGroup({p[2]})}, AdamOptions());
      });
}

TEST(OptimizerStateDict, ResumeIsBitExactForAdamWAndSGD) {
  expect_resume_is_exact(
      [](std::vector<Tensor> p) {
        return std::make_unique<AdamW>(p, adamw_options(0.01).amsgrad(true));
      },
      [](std::vector<Tensor> p) { return std::make_unique<AdamW>(p, adamw_options()); });
  expect_resume_is_exact(
      [](std::vector<Tensor> p) {
        return std::make_unique<SGD>(p, SGDOptions(0.1).momentum(0.9).nesterov(true));
      },
      [](std::vector<Tensor> p) { return std::make_unique<SGD>(p, SGDOptions(1.0)); });
}

TEST(OptimizerStateDict, SurvivesSafetensorsAndJson) {
  // The representation is what a checkpoint stores: tensors in safetensors,
  // the rest as JSON metadata.
  std::vector<Tensor> straight = make_params(), resumed = make_params();
  auto make = [](std::vector<Tensor> p) {
    return std::make_unique<Adam>(p, AdamOptions(0.03).amsgrad(true));
  };
  auto opt = make(straight);
  run_steps(*opt, straight, 0, 4);
  const std::string path =
      ::testing::TempDir() + "/optim_state_" + std::to_string(::getpid()) + ".safetensors";
  {
    auto first = make(resumed);
    run_steps(*first, resumed, 0, 2);
    const optim::OptimizerState sd = first->state_dict();
    nlohmann::json scalars = sd.scalars;
    io::save_safetensors(path, sd.tensors,
                         {{"optimizer", sd.optimizer}, {"scalars", scalars.dump()}});
  }
  const io::SafetensorsContents file = io::load_safetensors(path);
  std::remove(path.c_str());
  optim::OptimizerState loaded;
  loaded.optimizer = file.metadata.at("optimizer");
  loaded.tensors = file.tensors;
  loaded.scalars =
      nlohmann::json::parse(file.metadata.at("scalars")).get<std::map<std::string, double>>();
  auto second = make(resumed);
  second->load_state_dict(loaded);
  run_steps(*second, resumed, 2, 4);
  for (size_t i = 0; i < straight.size(); ++i) EXPECT_TRUE(equal(resumed[i], straight[i]));
}

TEST(OptimizerStateDict, LoadValidatesBeforeChangingAnything) {
  std::vector<Tensor> p = make_params();
  Adam opt(p, AdamOptions(0.01));
  run_steps(opt, p, 0, 1);
  const optim::OptimizerState good = opt.state_dict();

  // Wrong number of parameters.
  Adam two({leaf({4, 3}), leaf({5})}, AdamOptions(0.01));
  EXPECT_ERROR_CONTAINS(ValueError, two.load_state_dict(good), "load_state_dict", "3 parameters",
                        "2 in this optimizer");
  // Wrong shape.
  Adam shapes({leaf({4, 3}), leaf({5}), leaf({4, 4})}, AdamOptions(0.01));
  EXPECT_ERROR_CONTAINS(ShapeError, shapes.load_state_dict(good), "state.2.exp_avg", "(4, 3)",
                        "parameter 2 has shape (4, 4)");
  EXPECT_EQ(shapes.state(shapes.parameters()[0]), nullptr) << "nothing was loaded";
  // Wrong kind.
  SGD sgd(make_params(), SGDOptions(0.1));
  EXPECT_ERROR_CONTAINS(ValueError, sgd.load_state_dict(good), "saved by Adam");
  // Unknown and missing entries.
  optim::OptimizerState bad = good;
  bad.tensors.emplace_back("state.0.bogus", zeros({4, 3}));
  EXPECT_ERROR_CONTAINS(ValueError, opt.load_state_dict(bad), "unknown state tensor",
                        "state.0.bogus");
  bad = good;
  bad.scalars.erase("state.1.step");
  EXPECT_ERROR_CONTAINS(ValueError, opt.load_state_dict(bad), "state.1.step is missing");
  bad = good;
  bad.scalars["param_groups.0.lr"] = -1;
  EXPECT_ERROR_CONTAINS(ValueError, opt.load_state_dict(bad), "lr must be >= 0");
  EXPECT_EQ(opt.param_groups()[0].lr(), 0.01);
  // The good state still loads.
  opt.load_state_dict(good);
}

// The group keys and values of every checkpoint written when options were a
// map of doubles (flags as 0 or 1): typed options must write and read the same.
TEST(OptimizerStateDict, GroupOptionsKeepTheirCheckpointKeys) {
  Tensor a = leaf({2}), b = leaf({3});
  Adam adam({ParamGroup({a}), ParamGroup({b}, AdamOptions(0.02).amsgrad(true))},
            AdamOptions(0.05).betas({0.8, 0.99}).eps(1e-6).weight_decay(0.01));
  optim::StepLR sched(adam, 10);
  const std::map<std::string, double> adam_keys = {
      {"param_groups.0.amsgrad", 0},    {"param_groups.0.beta1", 0.8},
      {"param_groups.0.beta2", 0.99},   {"param_groups.0.eps", 1e-6},
      {"param_groups.0.fused", 1},      {"param_groups.0.initial_lr", 0.05},
      {"param_groups.0.lr", 0.05},      {"param_groups.0.maximize", 0},
      {"param_groups.0.num_params", 1}, {"param_groups.0.weight_decay", 0.01},
      {"param_groups.1.amsgrad", 1},    {"param_groups.1.beta1", 0.9},
      {"param_groups.1.beta2", 0.999},  {"param_groups.1.eps", 1e-8},
      {"param_groups.1.fused", 1},      {"param_groups.1.initial_lr", 0.02},
      {"param_groups.1.lr", 0.02},      {"param_groups.1.maximize", 0},
      {"param_groups.1.num_params", 1}, {"param_groups.1.weight_decay", 0}};
  // decoupled_weight_decay came later: checkpoints without it load (below).
  std::map<std::string, double> adam_keys_now = adam_keys;
  adam_keys_now["param_groups.0.decoupled_weight_decay"] = 0;
  adam_keys_now["param_groups.1.decoupled_weight_decay"] = 0;
  EXPECT_EQ(adam.state_dict().scalars, adam_keys_now);
  SGD sgd({a}, SGDOptions(0.1).momentum(0.9).nesterov(true).fused(false));
  const std::map<std::string, double> sgd_keys = {
      {"param_groups.0.dampening", 0},  {"param_groups.0.fused", 0},
      {"param_groups.0.lr", 0.1},       {"param_groups.0.maximize", 0},
      {"param_groups.0.momentum", 0.9}, {"param_groups.0.nesterov", 1},
      {"param_groups.0.num_params", 1}, {"param_groups.0.weight_decay", 0}};
  EXPECT_EQ(sgd.state_dict().scalars, sgd_keys);

  // Such a checkpoint loads into the typed fields.
  optim::OptimizerState saved{"Adam", {}, adam_keys};
  saved.scalars["param_groups.0.amsgrad"] = 1;
  saved.scalars["param_groups.1.fused"] = 0;
  Adam fresh({ParamGroup({leaf({2})}), ParamGroup({leaf({3})})}, AdamOptions());
  fresh.load_state_dict(saved);
  const auto& g0 = static_cast<const AdamOptions&>(fresh.param_groups()[0].options());
  const auto& g1 = static_cast<const AdamOptions&>(fresh.param_groups()[1].options());
  EXPECT_EQ(g0.betas(), (optim::Betas{0.8, 0.99}));
  EXPECT_EQ(g0.eps(), 1e-6);
  EXPECT_TRUE(g0.amsgrad());
  EXPECT_EQ(g0.initial_lr().value_or(-1), 0.05);
  EXPECT_FALSE(g1.fused());
  EXPECT_EQ(g1.lr(), 0.02);
  saved.scalars["param_groups.1.momentum"] = 0.9;
  EXPECT_ERROR_CONTAINS(ValueError, fresh.load_state_dict(saved),
                        "unknown option 'param_groups.1.momentum'");
}

TEST(Optimizer, GroupOptionsAreTheGroupsOwn) {
  Tensor a = leaf({2}), b = leaf({2});
  const AdamOptions defaults = AdamOptions(0.1).weight_decay(0.5);
  ParamGroup unadded({a});
  EXPECT_FALSE(unadded.has_options());
  EXPECT_ERROR_CONTAINS(ValueError, unadded.options(), "no options until it is added");
  Adam opt({unadded, ParamGroup({b}, AdamOptions(0.2))}, defaults);
  auto& g0 = static_cast<AdamOptions&>(opt.param_groups()[0].options());
  EXPECT_EQ(g0.weight_decay(), 0.5) << "a copy of the defaults";
  g0.weight_decay(0.25);
  EXPECT_EQ(static_cast<const AdamOptions&>(opt.defaults()).weight_decay(), 0.5);
  EXPECT_EQ(static_cast<const AdamOptions&>(opt.param_groups()[1].options()).weight_decay(), 0.0)
      << "options given with the group are complete";
  const ParamGroup copy = opt.param_groups()[0];
  g0.lr(0.3);
  EXPECT_EQ(copy.lr(), 0.1) << "a copied group owns its options";
}

// ---- fused step == op-by-op reference, on every layout ----

struct FusedCase {
  std::string name;
  std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>, bool)> make;
};

std::vector<FusedCase> fused_cases() {
  return {
      {"sgd", [](auto p, bool f) { return std::make_unique<SGD>(p, SGDOptions(0.1).fused(f)); }},
      {"sgd_momentum_wd",
       [](auto p, bool f) {
         return std::make_unique<SGD>(
             p, SGDOptions(0.1).momentum(0.9).dampening(0.2).weight_decay(0.01).fused(f));
       }},
      {"sgd_nesterov_maximize",
       [](auto p, bool f) {
         return std::make_unique<SGD>(
             p, SGDOptions(0.05).momentum(0.8).nesterov(true).maximize(true).fused(f));
       }},
      {"adam",
       [](auto p, bool f) { return std::make_unique<Adam>(p, AdamOptions(0.01).fused(f)); }},
      {"adam_l2_amsgrad",
       [](auto p, bool f) {
         return std::make_unique<Adam>(
             p, AdamOptions(0.01).weight_decay(0.1).amsgrad(true).eps(1e-6).fused(f));
       }},
      {"adam_maximize",
       [](auto p, bool f) {
         return std::make_unique<Adam>(p,
                                       AdamOptions(0.01).betas({0.5, 0.9}).maximize(true).fused(f));
       }},
      {"adamw",
       [](auto p, bool f) { return std::make_unique<AdamW>(p, adamw_options(0.01).fused(f)); }},
      {"adamw_amsgrad",
       [](auto p, bool f) {
         return std::make_unique<AdamW>(
             p, adamw_options(0.003).weight_decay(0.2).amsgrad(true).fused(f));
       }},
  };
}

struct LayoutCase {
  Layout layout;
  ScalarType dtype;
};

class OptimFusedStep : public ::testing::TestWithParam<LayoutCase> {};

// Runs `c` on a parameter of `shape` in `layout` through both paths, with
// gradients in other layouts, and expects bit-identical parameters and state.
void expect_fused_matches_reference(const FusedCase& c,
                                    IntArrayRef shape,
                                    Layout layout,
                                    ScalarType dtype) {
  SCOPED_TRACE(c.name);
  Generator gen(5);
  Tensor base_r, base_f;
  Tensor init = randn(shape, dtype, &gen);
  Tensor pr = testing::make_output(shape, dtype, layout, base_r).copy_(init).detach();
  Tensor pf = testing::make_output(shape, dtype, layout, base_f).copy_(init).detach();
  pr.requires_grad_();
  pf.requires_grad_();
  const Tensor before = base_f.clone();
  auto ref = c.make({pr}, false);
  auto fused = c.make({pf}, true);
  for (int s = 0; s < 4; ++s) {
    // Gradients of a different layout than the parameter, with varying scale.
    Tensor g = testing::make_input(shape, dtype, s % 2 ? Layout::Transposed : Layout::Step2,
                                   testing::Domain::Any, gen);
    if (s == 2) g.mul_(0.01);
    pr.mutable_grad() = g;
    pf.mutable_grad() = g;
    ref->step();
    fused->step();
  }
  EXPECT_TRUE(equal(pf, pr)) << testing::close(pf, pr, 0, 0).message();
  EXPECT_FALSE(equal(pf, init));
  const optim::ParamState* sr = ref->state(pr);
  const optim::ParamState* sf = fused->state(pf);
  ASSERT_TRUE(sr && sf);
  ASSERT_EQ(sr->tensors.size(), sf->tensors.size());
  for (const auto& [k, t] : sr->tensors) {
    EXPECT_TRUE(equal(sf->tensors.at(k), t))
        << k << ": " << testing::close(sf->tensors.at(k), t, 0, 0).message();
  }
  testing::expect_written_only_inside(pf, pr, base_f, before, 0, c.name);
}

TEST_P(OptimFusedStep, IsBitIdenticalToTheReferenceOnEveryLayout) {
  const auto [layout, dtype] = GetParam();
  // Odd sizes: vector loops with tails, and more than one 512-element chunk.
  for (const FusedCase& c : fused_cases())
    expect_fused_matches_reference(c, {37, 23}, layout, dtype);
}

TEST(OptimFusedStep, IsBitIdenticalWhenSplitAcrossThreads) {
  // Several parallel tasks (grain 32768); results must not depend on the split.
  for (const FusedCase& c : fused_cases()) {
    if (c.name != "adamw_amsgrad" && c.name != "sgd_nesterov_maximize") continue;
    for (Layout layout : {Layout::Contiguous, Layout::Transposed}) {
      expect_fused_matches_reference(c, {300, 257}, layout, kFloat32);
    }
  }
}

std::vector<LayoutCase> layout_cases() {
  std::vector<LayoutCase> out;
  for (Layout l : testing::kOutputLayouts) {
    for (ScalarType t : {kFloat32, kFloat64}) out.push_back({l, t});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(OptimLayouts,
                         OptimFusedStep,
                         ::testing::ValuesIn(layout_cases()),
                         [](const auto& p) {
                           return std::string(testing::layout_name(p.param.layout)) + "_" +
                                  std::string(to_string(p.param.dtype));
                         });

// The parameters of a step update together (Note [Multi-tensor steps]):
// many of them, small and large, in several layouts, so that parallel tasks
// span parameter boundaries, give the bits of the reference path at 1 and 2
// threads.
TEST(OptimFusedStep, ManyParametersUpdateTogetherBitIdentically) {
  const std::vector<std::vector<int64_t>> shapes{{128},      {128, 128}, {3, 5},     {300, 257},
                                                 {128, 128}, {1},        {200, 100}, {65, 128}};
  for (const FusedCase& c : fused_cases()) {
    if (c.name != "adamw_amsgrad" && c.name != "sgd_nesterov_maximize" && c.name != "adam") {
      continue;
    }
    SCOPED_TRACE(c.name);
    for (int threads : {1, 2}) {
      testing::ThreadCount t(threads);
      Generator gen(9);
      std::vector<Tensor> pr, pf, bases(shapes.size());
      for (size_t i = 0; i < shapes.size(); ++i) {
        const Layout layout = i % 3 == 1 ? Layout::Transposed : Layout::Contiguous;
        const Tensor init = randn(shapes[i], kFloat32, &gen);
        pr.push_back(init.clone().requires_grad_());
        pf.push_back(testing::make_output(shapes[i], kFloat32, layout, bases[i])
                         .copy_(init)
                         .detach()
                         .requires_grad_());
      }
      auto ref = c.make(pr, false);
      auto fused = c.make(pf, true);
      for (int s = 0; s < 3; ++s) {
        for (size_t i = 0; i < shapes.size(); ++i) {
          const Tensor g = randn(shapes[i], kFloat32, &gen);
          pr[i].mutable_grad() = g;
          pf[i].mutable_grad() = g;
        }
        ref->step();
        fused->step();
      }
      for (size_t i = 0; i < shapes.size(); ++i) {
        EXPECT_TRUE(equal(pf[i], pr[i])) << "parameter " << i << ", " << threads << " threads";
        for (const auto& [k, v] : ref->state(pr[i])->tensors) {
          EXPECT_TRUE(equal(fused->state(pf[i])->tensors.at(k), v))
              << "parameter " << i << " " << k;
        }
      }
    }
  }
}

// Parameters that are overlapping views of one buffer update one after
// another, as the reference path does (the later one reads what the earlier
// one wrote), however many threads there are.
TEST(OptimFusedStep, OverlappingParametersUpdateInOrder) {
  for (int threads : {1, 2}) {
    testing::ThreadCount t(threads);
    const int64_t n = 60000, shift = 20000;  // each view spans tasks
    Generator gen(4);
    const Tensor init = randn({n + shift}, kFloat32, &gen);
    const Tensor gr = randn({n}, kFloat32, &gen), gs = randn({n}, kFloat32, &gen);
    Tensor ref_base = init.clone(), fused_base = init.clone();
    auto views = [&](Tensor& base) {
      return std::vector<Tensor>{base.narrow(0, 0, n).detach().requires_grad_(),
                                 base.narrow(0, shift, n).detach().requires_grad_()};
    };
    std::vector<Tensor> pr = views(ref_base), pf = views(fused_base);
    SGD ref(pr, SGDOptions(0.1).momentum(0.5).fused(false));
    SGD fused(pf, SGDOptions(0.1).momentum(0.5).fused(true));
    for (int s = 0; s < 2; ++s) {
      pr[0].mutable_grad() = gr;
      pf[0].mutable_grad() = gr;
      pr[1].mutable_grad() = gs;
      pf[1].mutable_grad() = gs;
      ref.step();
      fused.step();
    }
    EXPECT_TRUE(equal(fused_base, ref_base)) << threads << " threads";
  }
}

TEST(OptimFusedStep, SixteenBitParametersUseTheReferencePath) {
  Tensor p = ones({8}, kBFloat16).requires_grad_();
  AdamW opt({p}, adamw_options(0.1));
  p.mutable_grad() = full({8}, 0.5, kBFloat16);
  opt.step();
  EXPECT_EQ(opt.state(p)->tensors.at("exp_avg").dtype(), kBFloat16);
  EXPECT_LT(p[0].item<float>(), 1.0f);
}

}  // namespace
}  // namespace stride
