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

}  // namespace
}  // namespace stride
