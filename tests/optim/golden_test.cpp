// Optimizers, schedulers and clipping against PyTorch (docs/design.md invariant 7).
// tools/gen_optim_goldens.py writes tests/golden/optim.safetensors; its
// "config" metadata describes every case, and the tests below build the same
// objects from it, so the two sides cannot drift apart.
//
// Tolerances: float32 to rtol 1e-6 / atol 1e-7, float64 to 1e-12. On x86-64
// with FMA the optimizer and clipping results are in fact bit-identical to
// PyTorch's (both contract the same multiply-adds); the tolerance leaves room
// for CPUs and compilers that round differently; without FMA (x86-64's
// baseline level, Note [CPU capabilities]) float32 takes rtol 4e-6. Schedules (double arithmetic,
// closed form here, recursive in PyTorch) agree to 1e-12. Run: stride_tests
// --gtest_filter='*Golden*'.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <stride/optim.h>
#include <stride/stride.h>

#include "support/cpu_level.h"
#include "support/layouts.h"

namespace stride {
namespace {

using json = nlohmann::json;
using optim::ParamGroup;

const io::SafetensorsContents& golden() {
  static const io::SafetensorsContents file =
      io::load_safetensors(STRIDE_GOLDEN_DIR "/optim.safetensors");
  return file;
}

const json& config() {
  static const json cfg = json::parse(golden().metadata.at("config"));
  return cfg;
}

// Max |got - want| and max relative difference, for the failure message.
std::string diff_summary(const Tensor& got, const Tensor& want) {
  std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  double abs_d = 0, rel_d = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const double d = std::abs(g[i] - w[i]);
    abs_d = std::max(abs_d, d);
    if (w[i] != 0) rel_d = std::max(rel_d, d / std::abs(w[i]));
  }
  return "max abs diff " + std::to_string(abs_d) + ", max rel diff " + std::to_string(rel_d);
}

::testing::AssertionResult matches(const Tensor& got,
                                   const Tensor& want,
                                   double rtol,
                                   double atol) {
  auto r = testing::close(got, want, rtol, atol);
  if (!r) r << " (" << diff_summary(got, want) << ")";
  return r;
}

// ---- optimizers ----

optim::Betas betas_of(const json& j) {
  if (!j.contains("betas")) return {0.9, 0.999};
  return {j["betas"][0], j["betas"][1]};
}

template <class Groups>
std::unique_ptr<optim::Optimizer> make_adam(const json& c,
                                            const json& c1,
                                            const Groups& groups,
                                            bool fused);
template <class Groups>
std::unique_ptr<optim::Optimizer> make_adaptive(const json& c,
                                                const json& c1,
                                                const Groups& groups);

// The optimizer `c` describes over the groups {p0, p1} and {p2}; the second
// group's options are c's with c["group1"]'s entries instead.
std::unique_ptr<optim::Optimizer> make_optimizer(const json& c,
                                                 const std::vector<Tensor>& params,
                                                 bool fused) {
  json c1 = c;
  if (c.contains("group1")) c1.update(c["group1"]);
  auto groups = [&](const optim::OptimizerOptions& group1) {
    return std::vector<ParamGroup>{ParamGroup({params[0], params[1]}),
                                   ParamGroup({params[2]}, group1)};
  };
  const std::string kind = c.at("optimizer");
  if (kind == "SGD") {
    auto options = [&](const json& j) {
      return optim::SGDOptions(j.value("lr", 0.0))
          .momentum(j.value("momentum", 0.0))
          .dampening(j.value("dampening", 0.0))
          .weight_decay(j.value("weight_decay", 0.0))
          .nesterov(j.value("nesterov", false))
          .maximize(j.value("maximize", false))
          .fused(fused);
    };
    return std::make_unique<optim::SGD>(groups(options(c1)), options(c));
  }
  if (kind == "Adam" || kind == "AdamW") return make_adam(c, c1, groups, fused);
  return make_adaptive(c, c1, groups);
}

template <class Groups>
std::unique_ptr<optim::Optimizer> make_adam(const json& c,
                                            const json& c1,
                                            const Groups& groups,
                                            bool fused) {
  auto options = [&](const json& j) {
    const bool adamw = c.at("optimizer") == "AdamW";
    auto o =
        adamw ? optim::adamw_options(j.value("lr", 1e-3)) : optim::AdamOptions(j.value("lr", 1e-3));
    return o.betas(betas_of(j))
        .eps(j.value("eps", 1e-8))
        .weight_decay(j.value("weight_decay", o.weight_decay()))
        .amsgrad(j.value("amsgrad", false))
        .maximize(j.value("maximize", false))
        .fused(fused);
  };
  if (c.at("optimizer") == "Adam") {
    return std::make_unique<optim::Adam>(groups(options(c1)), options(c));
  }
  return std::make_unique<optim::AdamW>(groups(options(c1)), options(c));
}

// RMSprop, Adagrad, Adamax, NAdam and RAdam, which have no fused path.
template <class Groups>
std::unique_ptr<optim::Optimizer> make_adaptive(const json& c,
                                                const json& c1,
                                                const Groups& groups) {
  const std::string kind = c.at("optimizer");
  if (kind == "RMSprop") {
    auto options = [&](const json& j) {
      return optim::RMSpropOptions(j.value("lr", 1e-2))
          .alpha(j.value("alpha", 0.99))
          .eps(j.value("eps", 1e-8))
          .weight_decay(j.value("weight_decay", 0.0))
          .momentum(j.value("momentum", 0.0))
          .centered(j.value("centered", false))
          .maximize(j.value("maximize", false));
    };
    return std::make_unique<optim::RMSprop>(groups(options(c1)), options(c));
  }
  if (kind == "Adagrad") {
    auto options = [&](const json& j) {
      return optim::AdagradOptions(j.value("lr", 1e-2))
          .lr_decay(j.value("lr_decay", 0.0))
          .weight_decay(j.value("weight_decay", 0.0))
          .initial_accumulator_value(j.value("initial_accumulator_value", 0.0))
          .eps(j.value("eps", 1e-10))
          .maximize(j.value("maximize", false));
    };
    return std::make_unique<optim::Adagrad>(groups(options(c1)), options(c));
  }
  if (kind == "Adamax") {
    auto options = [&](const json& j) {
      return optim::AdamaxOptions(j.value("lr", 2e-3))
          .betas(betas_of(j))
          .eps(j.value("eps", 1e-8))
          .weight_decay(j.value("weight_decay", 0.0))
          .maximize(j.value("maximize", false));
    };
    return std::make_unique<optim::Adamax>(groups(options(c1)), options(c));
  }
  if (kind == "NAdam") {
    auto options = [&](const json& j) {
      return optim::NAdamOptions(j.value("lr", 2e-3))
          .betas(betas_of(j))
          .eps(j.value("eps", 1e-8))
          .weight_decay(j.value("weight_decay", 0.0))
          .momentum_decay(j.value("momentum_decay", 4e-3))
          .decoupled_weight_decay(j.value("decoupled_weight_decay", false))
          .maximize(j.value("maximize", false));
    };
    return std::make_unique<optim::NAdam>(groups(options(c1)), options(c));
  }
  EXPECT_EQ(kind, "RAdam");
  auto options = [&](const json& j) {
    return optim::RAdamOptions(j.value("lr", 1e-3))
        .betas(betas_of(j))
        .eps(j.value("eps", 1e-8))
        .weight_decay(j.value("weight_decay", 0.0))
        .decoupled_weight_decay(j.value("decoupled_weight_decay", false))
        .maximize(j.value("maximize", false));
  };
  return std::make_unique<optim::RAdam>(groups(options(c1)), options(c));
}

class OptimGolden : public ::testing::TestWithParam<bool> {};  // param: fused

TEST_P(OptimGolden, TrajectoriesAndStateMatchPyTorch) {
  const bool fused = GetParam();
  const auto& file = golden();
  const json& cfg = config();
  const int64_t steps = cfg.at("steps");
  ASSERT_FALSE(cfg.at("optimizers").empty());
  for (const auto& [name, c] : cfg.at("optimizers").items()) {
    SCOPED_TRACE(name + (fused ? " (fused)" : " (reference)"));
    const bool f64 = c.value("dtype", std::string("float32")) == "float64";
    const ScalarType dtype = f64 ? kFloat64 : kFloat32;
    const double rtol = f64 ? 1e-12 : 1e-6 * testing::fma_slack(4.0);
    const double atol = f64 ? 1e-12 : 1e-7;
    std::vector<Tensor> params;
    for (int i = 0; i < 3; ++i) {
      params.push_back(file.at("params/p" + std::to_string(i)).to(dtype).clone().requires_grad_());
    }
    auto opt = make_optimizer(c, params, fused);
    for (int64_t t = 0; t < steps; ++t) {
      for (int i = 0; i < 3; ++i) {
        bool missing = false;
        for (const auto& m : cfg.at("missing_grads")) missing |= m[0] == t && m[1] == i;
        params[size_t(i)].mutable_grad() =
            missing ? Tensor() : file.at("grads/p" + std::to_string(i))[t].to(dtype).clone();
      }
      opt->step();
      for (int i = 0; i < 3; ++i) {
        const Tensor want = file.at("opt/" + name + "/p" + std::to_string(i))[t];
        ASSERT_TRUE(matches(params[size_t(i)], want, rtol, atol))
            << "parameter " << i << " after step " << t + 1;
      }
    }
    // The final state, under PyTorch's names.
    const optim::OptimizerState sd = opt->state_dict();
    int64_t compared = 0;
    for (const auto& [key, t] : file.tensors) {
      const std::string prefix = "opt/" + name + "/state.";
      if (key.rfind(prefix, 0) != 0) continue;
      const std::string local = key.substr(prefix.size() - 6);  // "state.<i>.<name>"
      bool found = false;
      for (const auto& [k, v] : sd.tensors) {
        if (k != local) continue;
        found = true;
        EXPECT_TRUE(matches(v, t, rtol, atol)) << local;
      }
      EXPECT_TRUE(found) << "stride has no " << local;
      ++compared;
    }
    EXPECT_EQ(compared, int64_t(sd.tensors.size())) << "stride has state PyTorch does not";
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(sd.scalars.count("state." + std::to_string(i) + ".step"),
                c.at("optimizer") == "SGD" ? 0u : 1u);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(OptimPaths,
                         OptimGolden,
                         ::testing::Values(false, true),
                         [](const auto& p) { return p.param ? "fused" : "reference"; });

// ---- schedulers ----

std::shared_ptr<optim::LRScheduler> make_scheduler(const json& c, optim::Optimizer& opt) {
  const std::string type = c.at("type");
  if (type == "StepLR") {
    return std::make_shared<optim::StepLR>(opt, c.at("step_size").get<int64_t>(),
                                           c.value("gamma", 0.1));
  }
  if (type == "LinearLR") {
    return std::make_shared<optim::LinearLR>(opt, c.value("start_factor", 1.0 / 3),
                                             c.value("end_factor", 1.0),
                                             c.value("total_iters", int64_t(5)));
  }
  if (type == "CosineAnnealingLR") {
    return std::make_shared<optim::CosineAnnealingLR>(opt, c.at("T_max").get<int64_t>(),
                                                      c.value("eta_min", 0.0));
  }
  if (type == "LambdaLR") {
    const double base = c.at("base");
    return std::make_shared<optim::LambdaLR>(
        opt, [base](int64_t e) { return std::pow(base, double(e)); });
  }
  if (type == "MultiStepLR") {
    return std::make_shared<optim::MultiStepLR>(opt, c.at("milestones").get<std::vector<int64_t>>(),
                                                c.value("gamma", 0.1));
  }
  if (type == "ExponentialLR") {
    return std::make_shared<optim::ExponentialLR>(opt, c.at("gamma").get<double>());
  }
  if (type == "ConstantLR") {
    return std::make_shared<optim::ConstantLR>(opt, c.value("factor", 1.0 / 3),
                                               c.value("total_iters", int64_t(5)));
  }
  if (type == "CosineAnnealingWarmRestarts") {
    return std::make_shared<optim::CosineAnnealingWarmRestarts>(
        opt, c.at("T_0").get<int64_t>(), c.value("T_mult", int64_t(1)), c.value("eta_min", 0.0));
  }
  if (type == "OneCycleLR") {
    const json& max_lr = c.at("max_lr");
    const std::vector<double> max_lrs =
        max_lr.is_array() ? max_lr.get<std::vector<double>>() : std::vector<double>{max_lr};
    const auto options =
        optim::OneCycleLROptions()
            .pct_start(c.value("pct_start", 0.3))
            .anneal_strategy(c.value("anneal_strategy", std::string("cos")) == "linear"
                                 ? optim::AnnealStrategy::kLinear
                                 : optim::AnnealStrategy::kCos)
            .div_factor(c.value("div_factor", 25.0))
            .final_div_factor(c.value("final_div_factor", 1e4))
            .three_phase(c.value("three_phase", false));
    return std::make_shared<optim::OneCycleLR>(opt, max_lrs, c.at("total_steps").get<int64_t>(),
                                               options);
  }
  if (type == "warmup_cosine") {
    return std::make_shared<optim::WarmupCosineLR>(opt, c.at("warmup_steps").get<int64_t>(),
                                                   c.at("total_steps").get<int64_t>(),
                                                   c.at("min_lr_ratio").get<double>());
  }
  EXPECT_EQ(type, "SequentialLR");
  std::vector<std::shared_ptr<optim::LRScheduler>> subs;
  for (const auto& s : c.at("schedulers")) subs.push_back(make_scheduler(s, opt));
  return std::make_shared<optim::SequentialLR>(opt, subs,
                                               c.at("milestones").get<std::vector<int64_t>>());
}

TEST(SchedulerGolden, LrSequencesMatchPyTorch) {
  const json& cfg = config();
  const int64_t steps = cfg.at("sched_steps");
  const std::vector<double> lrs = cfg.at("sched_group_lrs");
  ASSERT_FALSE(cfg.at("schedulers").empty());
  for (const auto& [name, c] : cfg.at("schedulers").items()) {
    SCOPED_TRACE(name);
    std::vector<ParamGroup> groups;
    for (double lr : lrs) groups.emplace_back(std::vector<Tensor>{zeros({1}).requires_grad_()}, lr);
    optim::SGD opt(std::move(groups), optim::SGDOptions(1.0));
    auto sched = make_scheduler(c, opt);
    const Tensor want = golden().at("sched/" + name + "/lr");
    ASSERT_EQ(want.size(0), steps + 1);
    for (int64_t t = 0; t <= steps; ++t) {
      if (t > 0) {
        opt.step();
        sched->step();
      }
      EXPECT_EQ(sched->last_epoch(), t);
      const std::vector<double> got = sched->get_last_lr();
      ASSERT_EQ(got.size(), lrs.size());
      for (size_t g = 0; g < got.size(); ++g) {
        const double w = want[t][int64_t(g)].item<double>();
        EXPECT_NEAR(got[g], w, 1e-12 * std::abs(w) + 1e-15) << "epoch " << t << ", group " << g;
        EXPECT_EQ(opt.param_groups()[g].lr(), got[g]) << "the group's lr is the scheduler's";
      }
    }
  }
}

// ---- clipping ----

TEST(ClipGolden, ClipGradNormAndValueMatchPyTorch) {
  const auto& file = golden();
  ASSERT_FALSE(config().at("clip").empty());
  for (const auto& [name, c] : config().at("clip").items()) {
    SCOPED_TRACE(name);
    std::vector<Tensor> params;
    for (int i = 0;; ++i) {
      const std::string key = "clip/" + name + "/g" + std::to_string(i);
      bool present = false;
      for (const auto& kv : file.tensors) present |= kv.first == key;
      if (!present) break;
      Tensor p = zeros(file.at(key).sizes()).requires_grad_();
      p.mutable_grad() = file.at(key).clone();
      params.push_back(p);
    }
    ASSERT_FALSE(params.empty());
    if (c.at("kind") == "norm") {
      const double norm_type =
          c.at("norm_type").is_string() ? nn::utils::kInfNorm : c.at("norm_type").get<double>();
      const Tensor total = nn::utils::clip_grad_norm_(params, c.at("max_norm"), norm_type);
      EXPECT_TRUE(matches(total, file.at("clip/" + name + "/total"), 1e-6, 0));
    } else {
      nn::utils::clip_grad_value_(params, c.at("clip_value"));
    }
    for (size_t i = 0; i < params.size(); ++i) {
      EXPECT_TRUE(matches(params[i].grad(), file.at("clip/" + name + "/out" + std::to_string(i)),
                          1e-6, 1e-7))
          << "gradient " << i;
    }
  }
}

}  // namespace
}  // namespace stride
