// Learning-rate schedulers: construction, closed forms, SequentialLR,
// warm-up + cosine, state_dict, and errors. PyTorch parity is in
// golden_test.cpp (SchedulerGolden).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#include <stride/optim.h>
#include <stride/stride.h>

#include "support/error_message.h"

namespace stride {
namespace {

using optim::ParamGroup;

using testing::message_of;

std::unique_ptr<optim::SGD> make_sgd(std::vector<double> lrs = {0.1, 0.01}) {
  std::vector<ParamGroup> groups;
  for (double lr : lrs) {
    groups.emplace_back(std::vector<Tensor>{zeros({1}).requires_grad_()}, lr);
  }
  return std::make_unique<optim::SGD>(std::move(groups), optim::SGDOptions(1.0));
}

TEST(Scheduler, ConstructorPerformsTheInitialStep) {
  auto opt = make_sgd();
  optim::LinearLR warm(*opt, 0.5, 1.0, 4);
  EXPECT_EQ(warm.last_epoch(), 0);
  EXPECT_EQ(warm.get_last_lr(), (std::vector<double>{0.05, 0.005}));
  EXPECT_EQ(opt->param_groups()[0].lr(), 0.05);
  EXPECT_EQ(opt->param_groups()[0].options().initial_lr().value_or(-1), 0.1)
      << "the base lr, as PyTorch";
  EXPECT_EQ(warm.base_lrs(), (std::vector<double>{0.1, 0.01}));
  for (int i = 0; i < 4; ++i) warm.step();
  EXPECT_EQ(warm.get_last_lr(), (std::vector<double>{0.1, 0.01}));
  warm.step();
  EXPECT_EQ(warm.last_epoch(), 5);
  EXPECT_EQ(opt->param_groups()[1].lr(), 0.01) << "constant after total_iters";
}

TEST(Scheduler, StepLRDecaysEveryStepSize) {
  auto opt = make_sgd({1.0});
  optim::StepLR s(*opt, 3, 0.5);
  std::vector<double> seen;
  for (int e = 0; e < 8; ++e) {
    seen.push_back(s.get_last_lr()[0]);
    s.step();
  }
  EXPECT_EQ(seen, (std::vector<double>{1, 1, 1, 0.5, 0.5, 0.5, 0.25, 0.25}));
}

TEST(Scheduler, CosineClosedFormHitsItsEndpointsExactly) {
  auto opt = make_sgd({0.1});
  optim::CosineAnnealingLR s(*opt, 10, 0.001);
  for (int e = 0; e < 10; ++e) s.step();
  EXPECT_EQ(s.get_last_lr()[0], 0.001) << "eta_min at T_max";
  for (int e = 0; e < 10; ++e) s.step();
  EXPECT_DOUBLE_EQ(s.get_last_lr()[0], 0.1) << "back to the base lr at 2 T_max, as PyTorch";
}

TEST(Scheduler, LambdaLRPerGroup) {
  auto opt = make_sgd();
  optim::LambdaLR s(*opt,
                    std::vector<optim::LambdaLR::Fn>{[](int64_t e) { return 1.0 / double(e + 1); },
                                                     [](int64_t) { return 2.0; }});
  s.step();
  EXPECT_EQ(s.get_last_lr(), (std::vector<double>{0.05, 0.02}));
  EXPECT_NE(message_of<ValueError>([&] {
              optim::LambdaLR bad(*opt, std::vector<optim::LambdaLR::Fn>{});
            }).find("expected 2 lr_lambdas"),
            std::string::npos);
}

TEST(Scheduler, WarmupCosineShape) {
  auto opt = make_sgd({1.0});
  optim::WarmupCosineLR s = optim::warmup_cosine(*opt, 4, 12, 0.1);
  EXPECT_EQ(s.factor(0), 0.25);
  EXPECT_EQ(s.factor(3), 1.0) << "full lr at the end of warm-up";
  EXPECT_EQ(s.factor(4), 1.0) << "the cosine starts at the peak";
  EXPECT_NEAR(s.factor(8), 0.55, 1e-15) << "halfway: (1 + r) / 2";
  EXPECT_NEAR(s.factor(12), 0.1, 1e-15);
  EXPECT_EQ(s.factor(100), 0.1) << "the floor after total_steps";
  EXPECT_EQ(s.get_last_lr()[0], 0.25);
  double prev = 2;
  for (int e = 4; e <= 12; ++e) {
    EXPECT_LE(s.factor(e), prev) << "non-increasing after warm-up";
    prev = s.factor(e);
  }
  EXPECT_NE(message_of<ValueError>([&] {
              optim::warmup_cosine(*opt, 12, 12);
            }).find("warmup_steps < total"),
            std::string::npos);
  EXPECT_NE(
      message_of<ValueError>([&] { optim::warmup_cosine(*opt, 2, 12, 1.5); }).find("min_lr_ratio"),
      std::string::npos);
}

TEST(Scheduler, SequentialLRSwitchesAtMilestonesAndRestartsTheNext) {
  auto opt = make_sgd({1.0});
  auto warm = std::make_shared<optim::LinearLR>(*opt, 0.25, 1.0, 3);
  auto cos = std::make_shared<optim::CosineAnnealingLR>(*opt, 4);
  optim::SequentialLR s(*opt, {warm, cos}, {3});
  std::vector<double> seen;
  for (int e = 0; e < 8; ++e) {
    seen.push_back(s.get_last_lr()[0]);
    EXPECT_EQ(opt->param_groups()[0].lr(), seen.back());
    s.step();
  }
  const double pi = std::numbers::pi;
  const std::vector<double> want{
      0.25, 0.5, 0.75, 1.0, (1 + std::cos(pi / 4)) / 2, 0.5, (1 + std::cos(3 * pi / 4)) / 2, 0.0};
  ASSERT_EQ(seen.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(seen[i], want[i], 1e-15) << "epoch " << i;
  EXPECT_EQ(cos->last_epoch(), 5) << "restarted at the milestone";
}

TEST(Scheduler, SequentialLRErrors) {
  auto opt = make_sgd({1.0});
  auto other = make_sgd({1.0});
  auto a = std::make_shared<optim::StepLR>(*opt, 2);
  auto b = std::make_shared<optim::StepLR>(*opt, 3);
  auto foreign = std::make_shared<optim::StepLR>(*other, 3);
  EXPECT_NE(message_of<ValueError>([&] {
              optim::SequentialLR s(*opt, {a, b}, {});
            }).find("one milestone fewer"),
            std::string::npos);
  EXPECT_NE(message_of<ValueError>([&] {
              optim::SequentialLR s(*opt, {a, foreign}, {2});
            }).find("scheduler 1 drives a different optimizer"),
            std::string::npos);
  auto c = std::make_shared<optim::StepLR>(*opt, 3);
  EXPECT_NE(message_of<ValueError>([&] {
              optim::SequentialLR s(*opt, {a, b, c}, {5, 5});
            }).find("increasing"),
            std::string::npos);
}

TEST(Scheduler, ArgumentErrors) {
  auto opt = make_sgd();
  EXPECT_NE(message_of<ValueError>([&] { optim::StepLR s(*opt, 0); }).find("[StepLR] step_size"),
            std::string::npos);
  EXPECT_NE(message_of<ValueError>([&] { optim::LinearLR s(*opt, 1.5); }).find("start_factor"),
            std::string::npos);
  EXPECT_NE(message_of<ValueError>([&] { optim::CosineAnnealingLR s(*opt, 0); }).find("T_max"),
            std::string::npos);
  optim::StepLR s(*opt, 2);
  opt->add_param_group(ParamGroup({zeros({1}).requires_grad_()}));
  EXPECT_NE(message_of<ValueError>([&] { s.step(); }).find("after adding every param group"),
            std::string::npos);
}

TEST(Scheduler, StateDictResumesTheSchedule) {
  auto make = [](optim::Optimizer& opt) {
    auto warm = std::make_shared<optim::LinearLR>(opt, 0.1, 1.0, 5);
    auto cos = std::make_shared<optim::CosineAnnealingLR>(opt, 20, 1e-4);
    return std::make_unique<optim::SequentialLR>(
        opt, std::vector<std::shared_ptr<optim::LRScheduler>>{warm, cos}, std::vector<int64_t>{5});
  };
  auto opt1 = make_sgd();
  auto straight = make(*opt1);
  for (int e = 0; e < 15; ++e) straight->step();

  auto opt2 = make_sgd();
  std::map<std::string, double> saved;
  optim::OptimizerState opt_saved;
  {
    auto first = make(*opt2);
    for (int e = 0; e < 8; ++e) first->step();
    saved = first->state_dict();
    opt_saved = opt2->state_dict();
  }
  EXPECT_EQ(saved.at("last_epoch"), 8.0);
  EXPECT_EQ(saved.at("schedulers.1.T_max"), 20.0);
  auto opt3 = make_sgd();
  auto resumed = make(*opt3);
  resumed->load_state_dict(saved);
  opt3->load_state_dict(opt_saved);
  EXPECT_EQ(opt3->param_groups()[0].lr(), opt2->param_groups()[0].lr());
  for (int e = 8; e < 15; ++e) resumed->step();
  EXPECT_EQ(resumed->last_epoch(), 15);
  EXPECT_EQ(resumed->get_last_lr(), straight->get_last_lr());
  EXPECT_EQ(opt3->param_groups()[1].lr(), opt1->param_groups()[1].lr());

  optim::StepLR step(*opt3, 4);
  EXPECT_NE(message_of<ValueError>([&] { step.load_state_dict(saved); }).find("unknown key"),
            std::string::npos);
}

// ---- MultiStepLR, warm restarts, OneCycleLR, ReduceLROnPlateau ----

TEST(Scheduler, MultiStepLRCountsARepeatedMilestoneTwice) {
  auto opt = make_sgd({1.0});
  optim::MultiStepLR s(*opt, {4, 2, 4}, 0.5);
  std::vector<double> seen;
  for (int e = 0; e < 6; ++e) {
    seen.push_back(s.get_last_lr()[0]);
    s.step();
  }
  EXPECT_EQ(seen, (std::vector<double>{1, 1, 0.5, 0.5, 0.125, 0.125}));
}

TEST(Scheduler, WarmRestartsTakeFractionalEpochsAndResume) {
  auto opt = make_sgd({1.0});
  optim::CosineAnnealingWarmRestarts s(*opt, 2, 2, 0.0);
  auto cosine = [](double t_cur, double t_i) {
    return (1 + std::cos(std::numbers::pi * t_cur / t_i)) / 2;
  };
  s.step(4.5);  // the second cycle (epochs 2 to 6, T_i = 4) at T_cur = 2.5
  EXPECT_EQ(s.last_epoch(), 4);
  EXPECT_EQ(s.T_i(), 4);
  EXPECT_NEAR(s.get_last_lr()[0], cosine(2.5, 4), 1e-15);
  s.step();  // T_cur + 1 = 3.5
  EXPECT_EQ(s.last_epoch(), 5);
  EXPECT_NEAR(s.get_last_lr()[0], cosine(3.5, 4), 1e-15);
  s.step();  // 4.5 >= T_i: restart at 0.5 in a cycle of 8
  EXPECT_EQ(s.T_i(), 8);
  EXPECT_NEAR(s.T_cur(), 0.5, 1e-15);

  const std::map<std::string, double> saved = s.state_dict();
  auto opt2 = make_sgd({1.0});
  optim::CosineAnnealingWarmRestarts resumed(*opt2, 2, 2, 0.0);
  resumed.load_state_dict(saved);
  s.step();
  resumed.step();
  EXPECT_EQ(resumed.get_last_lr(), s.get_last_lr());
  EXPECT_NE(message_of<ValueError>([&] { s.step(-1.0); }).find("epoch >= 0"), std::string::npos);
}

TEST(Scheduler, OneCycleLRCyclesSGDMomentumAndAdamBeta1) {
  std::vector<Tensor> params{zeros({1}).requires_grad_()};
  optim::Adam adam(params, optim::AdamOptions(1.0).betas({0.9, 0.99}));
  optim::OneCycleLR cycle(adam, {1.0}, 10, optim::OneCycleLROptions().pct_start(0.5));
  auto beta1 = [&] {
    return static_cast<const optim::AdamOptions&>(adam.param_groups()[0].options()).betas();
  };
  // PyTorch's cosine from max_lr at pct 0 lands a few ulps off initial_lr.
  EXPECT_NEAR(cycle.get_last_lr()[0], 1.0 / 25, 1e-15);
  EXPECT_EQ(beta1(), (optim::Betas{0.95, 0.99})) << "max_momentum at the start; beta2 untouched";
  for (int e = 0; e < 4; ++e) cycle.step();  // epoch 4 = pct_start * 10 - 1: the peak
  EXPECT_DOUBLE_EQ(cycle.get_last_lr()[0], 1.0);
  EXPECT_DOUBLE_EQ(beta1().first, 0.85);
  for (int e = 4; e < 9; ++e) cycle.step();  // epoch 9 = total_steps - 1: the floor
  EXPECT_DOUBLE_EQ(cycle.get_last_lr()[0], 1.0 / 25 / 1e4);
  EXPECT_DOUBLE_EQ(beta1().first, 0.95);
  cycle.step();  // epoch total_steps still steps, as PyTorch's
  EXPECT_NE(message_of<ValueError>([&] { cycle.step(); }).find("tried to step 11 times"),
            std::string::npos);

  auto sgd = make_sgd({0.1, 0.2});
  optim::OneCycleLR linear(
      *sgd, {0.5, 1.0}, 4,
      optim::OneCycleLROptions().anneal_strategy(optim::AnnealStrategy::kLinear));
  EXPECT_EQ(sgd->param_groups()[1].options().values().at("momentum"), 0.95);
  EXPECT_EQ(linear.base_lrs(), (std::vector<double>{0.5 / 25, 1.0 / 25}));

  optim::Adagrad adagrad(params);
  EXPECT_NE(message_of<ValueError>([&] {
              optim::OneCycleLR(adagrad, {1.0}, 10);
            }).find("cycle_momentum needs an optimizer with momentum or betas"),
            std::string::npos);
  optim::OneCycleLR no_momentum(adagrad, {1.0}, 10,
                                optim::OneCycleLROptions().cycle_momentum(false));
  EXPECT_EQ(no_momentum.last_epoch(), 0);
}

TEST(Scheduler, ReduceLROnPlateauWaitsOutPatienceAndCooldown) {
  auto opt = make_sgd({1.0, 0.004});
  optim::ReduceLROnPlateau plateau(
      *opt,
      optim::ReduceLROnPlateauOptions().factor(0.5).patience(1).cooldown(1).min_lrs({0.0, 0.003}));
  std::vector<double> lr0, lr1;
  for (double metric : {5.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 3.0}) {
    plateau.step(metric);
    lr0.push_back(plateau.get_last_lr()[0]);
    lr1.push_back(plateau.get_last_lr()[1]);
  }
  // Two bad epochs (> patience 1) halve the lr; the cooldown epoch after it
  // does not count, so the next cut comes two bad epochs later.
  EXPECT_EQ(lr0, (std::vector<double>{1, 1, 1, 0.5, 0.5, 0.5, 0.25, 0.25}));
  EXPECT_EQ(lr1, (std::vector<double>{0.004, 0.004, 0.004, 0.003, 0.003, 0.003, 0.003, 0.003}))
      << "held at its min_lr";
  EXPECT_EQ(plateau.best(), 3.0);
  EXPECT_EQ(plateau.last_epoch(), 8);

  const std::map<std::string, double> saved = plateau.state_dict();
  auto opt2 = make_sgd({0.25, 0.003});
  optim::ReduceLROnPlateau resumed(
      *opt2,
      optim::ReduceLROnPlateauOptions().factor(0.5).patience(1).cooldown(1).min_lrs({0.0, 0.003}));
  resumed.load_state_dict(saved);
  for (double metric : {3.0, 3.0, 3.0}) {
    plateau.step(metric);
    resumed.step(metric);
  }
  EXPECT_EQ(resumed.get_last_lr(), plateau.get_last_lr());
  EXPECT_EQ(resumed.num_bad_epochs(), plateau.num_bad_epochs());

  auto opt3 = make_sgd({1.0});
  optim::ReduceLROnPlateau max_abs(*opt3, optim::ReduceLROnPlateauOptions()
                                              .mode(optim::PlateauMode::kMax)
                                              .threshold_mode(optim::ThresholdMode::kAbs)
                                              .threshold(0.5)
                                              .patience(0));
  max_abs.step(1.0);
  max_abs.step(1.4);  // not 0.5 above the best: a bad epoch, and patience is 0
  EXPECT_EQ(max_abs.get_last_lr()[0], 0.1);
  EXPECT_EQ(max_abs.best(), 1.0);
  EXPECT_NE(message_of<ValueError>([&] {
              optim::ReduceLROnPlateau(*opt3, optim::ReduceLROnPlateauOptions().factor(1.0));
            }).find("factor must be < 1"),
            std::string::npos);
}

}  // namespace
}  // namespace stride
