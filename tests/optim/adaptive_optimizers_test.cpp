// RMSprop, Adagrad, Adamax, NAdam and RAdam: PyTorch's state names, exact
// resumption from a state_dict, any parameter layout, the checks of their
// options, and hand-computed first steps. Their trajectories against PyTorch
// are in golden_test.cpp (OptimGolden).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <stride/optim.h>
#include <stride/stride.h>

#include "support/error_message.h"

namespace stride {
namespace {

using optim::ParamGroup;
using testing::message_of;

using Factory = std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>)>;

struct Case {
  const char* name;
  Factory make;
  std::set<std::string> tensors;  // state buffers of a parameter
  std::set<std::string> scalars;  // state numbers of a parameter
};

// Every optimizer with its options away from the defaults, so that each
// branch of its update runs.
std::vector<Case> cases() {
  return {
      {"RMSprop",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::RMSprop>(
             std::move(p),
             optim::RMSpropOptions(0.01).alpha(0.9).weight_decay(0.01).momentum(0.5).centered(
                 true));
       },
       {"square_avg", "momentum_buffer", "grad_avg"},
       {"step"}},
      {"Adagrad",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::Adagrad>(
             std::move(p), optim::AdagradOptions(0.1).lr_decay(0.1).initial_accumulator_value(0.5));
       },
       {"sum"},
       {"step"}},
      {"Adamax",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::Adamax>(
             std::move(p), optim::AdamaxOptions(0.01).weight_decay(0.1).maximize(true));
       },
       {"exp_avg", "exp_inf"},
       {"step"}},
      {"NAdam",
       [](std::vector<Tensor> p) {
         return std::make_unique<optim::NAdam>(
             std::move(p),
             optim::NAdamOptions(0.01).weight_decay(0.1).decoupled_weight_decay(true));
       },
       {"exp_avg", "exp_avg_sq"},
       {"step", "mu_product"}},
      {"RAdam",
       [](std::vector<Tensor> p) {
         // beta2 0.9 makes rho_t > 5 from step 3: both branches run.
         return std::make_unique<optim::RAdam>(
             std::move(p), optim::RAdamOptions(0.01).betas({0.9, 0.9}).weight_decay(0.1));
       },
       {"exp_avg", "exp_avg_sq"},
       {"step"}},
  };
}

std::vector<Tensor> make_params() {
  Generator gen(3);
  return {randn({4, 3}, kFloat32, &gen).requires_grad_(),
          randn({5}, kFloat32, &gen).requires_grad_()};
}

void run_steps(optim::Optimizer& opt, std::vector<Tensor>& params, int64_t from, int64_t to) {
  for (int64_t s = from; s < to; ++s) {
    Generator gen(100 + uint64_t(s));
    for (Tensor& p : params) p.mutable_grad() = randn(p.sizes(), kFloat32, &gen);
    opt.step();
  }
}

TEST(AdaptiveOptimizers, StateHasPyTorchsNames) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    std::vector<Tensor> params = make_params();
    auto opt = c.make(params);
    EXPECT_EQ(opt->name(), c.name);
    run_steps(*opt, params, 0, 2);
    const optim::ParamState* state = opt->state(params[1]);
    ASSERT_NE(state, nullptr);
    std::set<std::string> tensors, scalars;
    for (const auto& entry : state->tensors) tensors.insert(entry.first);
    for (const auto& entry : state->scalars) scalars.insert(entry.first);
    EXPECT_EQ(tensors, c.tensors);
    EXPECT_EQ(scalars, c.scalars);
    EXPECT_EQ(state->scalars.at("step"), 2);
    for (const auto& entry : state->tensors) EXPECT_EQ(entry.second.sizes(), params[1].sizes());
  }
}

TEST(AdaptiveOptimizers, ResumingFromAStateDictIsExact) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    std::vector<Tensor> straight = make_params();
    auto opt = c.make(straight);
    run_steps(*opt, straight, 0, 6);

    std::vector<Tensor> resumed = make_params();
    optim::OptimizerState saved;
    {
      auto first = c.make(resumed);
      run_steps(*first, resumed, 0, 3);
      saved = first->state_dict();
      for (auto& entry : saved.tensors) entry.second = entry.second.clone();
    }
    EXPECT_EQ(saved.optimizer, c.name);
    auto second = c.make(resumed);
    second->load_state_dict(saved);
    run_steps(*second, resumed, 3, 6);
    for (size_t i = 0; i < straight.size(); ++i) {
      EXPECT_EQ(resumed[i].to_vector<float>(), straight[i].to_vector<float>()) << "parameter " << i;
    }
  }
}

TEST(AdaptiveOptimizers, ATransposedParameterMovesExactlyLikeItsContiguousCopy) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    Generator gen(7);
    const Tensor base = randn({3, 4}, kFloat32, &gen);
    std::vector<Tensor> transposed{base.clone().t().requires_grad_()};
    std::vector<Tensor> contiguous{base.t().contiguous().requires_grad_()};
    ASSERT_FALSE(transposed[0].is_contiguous());
    auto a = c.make(transposed), b = c.make(contiguous);
    run_steps(*a, transposed, 0, 4);
    run_steps(*b, contiguous, 0, 4);
    EXPECT_EQ(transposed[0].contiguous().to_vector<float>(), contiguous[0].to_vector<float>());
    EXPECT_NE(contiguous[0].to_vector<float>(), base.t().contiguous().to_vector<float>());
  }
}

TEST(AdaptiveOptimizers, InvalidOptionsNameTheOptimizerGroupAndValue) {
  Tensor p = zeros({2}).requires_grad_();
  const std::string rms = message_of<ValueError>(
      [&] { optim::RMSprop({ParamGroup({p}, optim::RMSpropOptions().alpha(-1))}); });
  EXPECT_NE(rms.find("[RMSprop] param group 0: alpha must be >= 0; got -1"), std::string::npos)
      << rms;
  const std::string ada = message_of<ValueError>(
      [&] { optim::Adagrad({p}, optim::AdagradOptions().initial_accumulator_value(-0.5)); });
  EXPECT_NE(ada.find("[Adagrad] param group 0: initial_accumulator_value must be >= 0"),
            std::string::npos)
      << ada;
  const std::string adamax = message_of<ValueError>([&] {
    optim::Adamax({p}, optim::AdamaxOptions().betas({1.0, 0.9}));
  });
  EXPECT_NE(adamax.find("[Adamax] param group 0: betas[0] must be in [0, 1); got 1"),
            std::string::npos)
      << adamax;
  const std::string nadam =
      message_of<ValueError>([&] { optim::NAdam({p}, optim::NAdamOptions().momentum_decay(-1)); });
  EXPECT_NE(nadam.find("[NAdam] param group 0: momentum_decay must be >= 0"), std::string::npos)
      << nadam;
  optim::RAdam radam({p});
  const std::string group1 = message_of<ValueError>([&] {
    radam.add_param_group(ParamGroup({zeros({1}).requires_grad_()}, optim::RAdamOptions(-0.1)));
  });
  EXPECT_NE(group1.find("[RAdam] param group 1: lr must be >= 0"), std::string::npos) << group1;
}

// One float64 scalar parameter p = 1 with gradient 2, by hand.
TEST(AdaptiveOptimizers, FirstStepsMatchTheFormulas) {
  auto scalar = [] { return std::vector<Tensor>{full({1}, 1.0, kFloat64).requires_grad_()}; };
  auto step_with_grad = [](optim::Optimizer& opt, Tensor& p, double g) {
    p.mutable_grad() = full({1}, g, kFloat64);
    opt.step();
    return p.item<double>();
  };
  {
    // Adagrad: sum = 0.5 + 4; p -= 0.1 * 2 / (sqrt(4.5) + eps). Step 2 decays lr by 1 + lr_decay.
    std::vector<Tensor> p = scalar();
    optim::Adagrad opt(p, optim::AdagradOptions(0.1).lr_decay(0.5).initial_accumulator_value(0.5));
    const double p1 = 1 - 0.1 * 2 / (std::sqrt(4.5) + 1e-10);
    EXPECT_DOUBLE_EQ(step_with_grad(opt, p[0], 2), p1);
    EXPECT_DOUBLE_EQ(step_with_grad(opt, p[0], 2), p1 - 0.1 / 1.5 * 2 / (std::sqrt(8.5) + 1e-10));
  }
  {
    // RAdam's first steps (rho_t <= 5) are SGD with bias-corrected momentum:
    // the first moves p by lr * g.
    std::vector<Tensor> p = scalar();
    optim::RAdam opt(p, optim::RAdamOptions(0.1));
    EXPECT_DOUBLE_EQ(step_with_grad(opt, p[0], 2), 1 - 0.1 * 2);
  }
  {
    // Adamax: m = 0.1 g, u = |g| + eps; p -= lr / 0.1 * m / u = lr * g / (|g| + eps).
    std::vector<Tensor> p = scalar();
    optim::Adamax opt(p, optim::AdamaxOptions(0.1));
    EXPECT_NEAR(step_with_grad(opt, p[0], 2), 1 - 0.1 * 2 / (2 + 1e-8), 1e-15);
  }
  {
    // RMSprop without momentum: v = 0.01 * 4; p -= lr * g / (sqrt(v) + eps).
    std::vector<Tensor> p = scalar();
    optim::RMSprop opt(p, optim::RMSpropOptions(0.01));
    EXPECT_NEAR(step_with_grad(opt, p[0], 2), 1 - 0.01 * 2 / (std::sqrt(0.04) + 1e-8), 1e-15);
  }
  {
    // NAdam's mu_product is the float32 product of the mu_t, as PyTorch's
    // float32 state tensor holds it.
    std::vector<Tensor> p = scalar();
    optim::NAdam opt(p, optim::NAdamOptions());
    step_with_grad(opt, p[0], 2);
    step_with_grad(opt, p[0], 2);
    auto mu = [](double t) { return 0.9 * (1 - 0.5 * std::pow(0.96, t * 4e-3)); };
    const float product = float(float(mu(1)) * float(mu(2)));
    EXPECT_EQ(opt.state(p[0])->scalars.at("mu_product"), double(product));
  }
}

}  // namespace
}  // namespace stride
