// The seed bug as a regression test. PyTorch on Apple GPUs trained models
// whose encoder weight was non-contiguous (stored transposed) without ever
// updating it: Adam's addcmul_/addcdiv_ wrote into a contiguous temporary
// that was never copied back, so the weight silently stayed at its
// initialisation while the loss still went down through the other layers.
//
// Here a tiny encoder–decoder trains with a non-contiguous encoder weight
// (transposed, a step-2 slice, or a view at an offset) and again with a
// contiguous copy of it. The two runs must end bit-for-bit identical —
// weights and optimizer state — every weight element must have moved, the
// state must be nonzero, and no memory around the strided parameter may be
// touched.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include <stride/optim.h>
#include <stride/stride.h>

#include "support/layouts.h"

namespace stride {
namespace {

using testing::Layout;

constexpr int64_t kIn = 6, kHidden = 4, kBatch = 5, kSteps = 6;

enum class Opt { Adam, AdamAmsgrad, AdamW, SGDMomentum, SGDNesterov };

const char* opt_name(Opt o) {
  switch (o) {
    case Opt::Adam:
      return "Adam";
    case Opt::AdamAmsgrad:
      return "AdamAmsgrad";
    case Opt::AdamW:
      return "AdamW";
    case Opt::SGDMomentum:
      return "SGDMomentum";
    case Opt::SGDNesterov:
      return "SGDNesterov";
  }
  return "?";
}

std::unique_ptr<optim::Optimizer> make(Opt o, std::vector<Tensor> params, bool fused) {
  switch (o) {
    case Opt::Adam:
      return std::make_unique<optim::Adam>(
          params, optim::AdamOptions(0.05).weight_decay(0.01).fused(fused));
    case Opt::AdamAmsgrad:
      return std::make_unique<optim::Adam>(params,
                                           optim::AdamOptions(0.05).amsgrad(true).fused(fused));
    case Opt::AdamW:
      return std::make_unique<optim::AdamW>(
          params, optim::adamw_options(0.05).weight_decay(0.1).fused(fused));
    case Opt::SGDMomentum:
      return std::make_unique<optim::SGD>(
          params, optim::SGDOptions(0.1).momentum(0.9).dampening(0.1).fused(fused));
    case Opt::SGDNesterov:
      return std::make_unique<optim::SGD>(
          params,
          optim::SGDOptions(0.1).momentum(0.9).nesterov(true).weight_decay(0.01).fused(fused));
  }
  return nullptr;
}

// The state tensor that shows the update reached every element.
const char* state_name(Opt o) {
  return o == Opt::SGDMomentum || o == Opt::SGDNesterov ? "momentum_buffer" : "exp_avg_sq";
}

struct Data {
  std::vector<Tensor> inputs, targets;
};

Data make_data(Generator& gen) {
  Data d;
  for (int i = 0; i < 3; ++i) {
    d.inputs.push_back(randn({kBatch, kIn}, kFloat32, &gen));
    d.targets.push_back(randn({kBatch, kIn}, kFloat32, &gen));
  }
  return d;
}

// Encoder W_e (kIn, kHidden) and decoder W_d (kHidden, kIn); MSE from ops.
// The forward reads W_e through contiguous() so that both runs feed GEMM the
// same layout: what differs between them is only what the optimizer sees.
Tensor loss_of(const Tensor& w_e, const Tensor& w_d, const Tensor& x, const Tensor& y) {
  const Tensor h = tanh(x.matmul(w_e.contiguous()));
  const Tensor diff = h.matmul(w_d) - y;
  return (diff * diff).mean();
}

void train(optim::Optimizer& opt, const Tensor& w_e, const Tensor& w_d, const Data& d) {
  for (int64_t s = 0; s < kSteps; ++s) {
    opt.zero_grad();
    const size_t k = size_t(s) % d.inputs.size();
    loss_of(w_e, w_d, d.inputs[k], d.targets[k]).backward();
    opt.step();
  }
}

// Trains with W_e in `layout` and with a contiguous copy; checks they agree.
void check_layout(Opt o, Layout layout, bool fused) {
  SCOPED_TRACE(std::string(opt_name(o)) + ", W_e " + testing::layout_name(layout) +
               (fused ? ", fused" : ", reference"));
  Generator gen(1234);
  const Tensor init_e = randn({kIn, kHidden}, kFloat32, &gen);
  const Tensor init_d = randn({kHidden, kIn}, kFloat32, &gen);
  const Data data = make_data(gen);

  // The strided parameter lives inside a sentinel-filled buffer.
  Tensor base;
  Tensor strided_e = testing::make_output({kIn, kHidden}, kFloat32, layout, base);
  strided_e.copy_(init_e);
  strided_e = strided_e.detach().requires_grad_();
  if (layout != Layout::Contiguous) {
    EXPECT_TRUE(!strided_e.is_contiguous() || strided_e.storage_offset() != 0);
  }
  const Tensor base_before = base.clone();
  Tensor w_d1 = init_d.clone().requires_grad_();
  auto opt1 = make(o, {strided_e, w_d1}, fused);
  train(*opt1, strided_e, w_d1, data);

  Tensor dense_e = init_e.clone().requires_grad_();
  Tensor w_d2 = init_d.clone().requires_grad_();
  auto opt2 = make(o, {dense_e, w_d2}, fused);
  train(*opt2, dense_e, w_d2, data);

  // Identical weights, every element moved, nothing written outside the view.
  EXPECT_TRUE(equal(strided_e, dense_e)) << testing::close(strided_e, dense_e, 0, 0).message();
  EXPECT_TRUE(equal(w_d1, w_d2));
  EXPECT_EQ(strided_e.ne(init_e).sum().item<int64_t>(), strided_e.numel())
      << "some encoder weights never changed";
  EXPECT_EQ(w_d1.ne(init_d).sum().item<int64_t>(), w_d1.numel());
  testing::expect_written_only_inside(strided_e, dense_e, base, base_before, 0, "W_e");

  // Identical, nonzero state.
  const optim::ParamState* s1 = opt1->state(strided_e);
  const optim::ParamState* s2 = opt2->state(dense_e);
  ASSERT_NE(s1, nullptr);
  ASSERT_NE(s2, nullptr);
  for (const auto& [name, t] : s2->tensors) {
    ASSERT_TRUE(s1->tensors.count(name)) << name;
    EXPECT_TRUE(equal(s1->tensors.at(name), t)) << name;
  }
  const Tensor& key_state = s1->tensors.at(state_name(o));
  EXPECT_EQ(key_state.ne(0.0).sum().item<int64_t>(), key_state.numel())
      << state_name(o) << " has zero entries";
  EXPECT_EQ(s1->scalars, s2->scalars);
}

// The headline cases, as the issue states them.
TEST(AdamSeedBug, TransposedEncoderWeightTrainsExactlyLikeItsContiguousCopy) {
  check_layout(Opt::Adam, Layout::Transposed, /*fused=*/false);
  check_layout(Opt::AdamW, Layout::Transposed, /*fused=*/false);
  check_layout(Opt::Adam, Layout::Transposed, /*fused=*/true);
  check_layout(Opt::AdamW, Layout::Transposed, /*fused=*/true);
}

TEST(SGDSeedBug, TransposedEncoderWeightTrainsExactlyLikeItsContiguousCopy) {
  check_layout(Opt::SGDMomentum, Layout::Transposed, /*fused=*/false);
  check_layout(Opt::SGDMomentum, Layout::Transposed, /*fused=*/true);
}

TEST(AdamSeedBug, TransposedLeafFromTDetachIsANonContiguousParameter) {
  // The construction the issue names: W_e = randn({out, in}).t(), made a leaf.
  Generator gen(7);
  Tensor w_e = randn({kHidden, kIn}, kFloat32, &gen).t().detach().requires_grad_();
  ASSERT_FALSE(w_e.is_contiguous());
  ASSERT_TRUE(w_e.is_leaf());
  const Tensor before = w_e.clone();
  Tensor w_d = randn({kHidden, kIn}, kFloat32, &gen).requires_grad_();
  const Data data = make_data(gen);
  optim::Adam opt({w_e, w_d}, optim::AdamOptions(0.01));
  train(opt, w_e, w_d, data);
  EXPECT_FALSE(w_e.is_contiguous()) << "the parameter keeps its layout";
  EXPECT_EQ(w_e.ne(before).sum().item<int64_t>(), w_e.numel());
  EXPECT_GT(opt.state(w_e)->tensors.at("exp_avg_sq").min().item<float>(), 0.0f);
}

// The checks above have teeth: an SGD that reproduces the original bug —
// it updates param.contiguous(), a temporary copy when the parameter is
// strided, and never writes it back — leaves the transposed weight untouched
// while the contiguous one trains, so "identical" and "every element moved"
// both fail for it.
class ContiguousTemporarySGD : public optim::Optimizer {
 public:
  ContiguousTemporarySGD(std::vector<Tensor> params, double lr)
      : Optimizer("ContiguousTemporarySGD", optim::SGDOptions(lr)) {
    init({optim::ParamGroup(std::move(params))});
  }

 protected:
  void check_options(const optim::OptimizerOptions&, size_t) const override {}
  void update(Tensor& param,
              const Tensor& grad,
              const optim::ParamGroup& group,
              optim::ParamState&) override {
    Tensor dense = param.contiguous();  // the bug: a copy for strided params
    dense.add_(grad, -group.lr());      // ... updated, then dropped
  }
  StateSchema state_schema() const override { return {}; }
};

TEST(OptimSeedBug, TheChecksCatchAnOptimizerThatDropsStridedUpdates) {
  Generator gen(99);
  const Tensor init_e = randn({kIn, kHidden}, kFloat32, &gen);
  const Tensor init_d = randn({kHidden, kIn}, kFloat32, &gen);
  const Data data = make_data(gen);
  auto run = [&](Tensor w_e) {
    Tensor w_d = init_d.clone().requires_grad_();
    ContiguousTemporarySGD opt({w_e, w_d}, 0.1);
    train(opt, w_e, w_d, data);
    return w_e;
  };
  const Tensor strided = run(init_e.t().contiguous().t().detach().requires_grad_());
  const Tensor dense = run(init_e.clone().requires_grad_());
  EXPECT_EQ(strided.ne(init_e).sum().item<int64_t>(), 0) << "the strided weight never trained";
  EXPECT_EQ(dense.ne(init_e).sum().item<int64_t>(), dense.numel());
  EXPECT_FALSE(equal(strided, dense));
}

// Every optimizer x every output layout x both paths.
struct Case {
  Opt opt;
  Layout layout;
  bool fused;
};

class OptimSeedBugSweep : public ::testing::TestWithParam<Case> {};

TEST_P(OptimSeedBugSweep, StridedParameterMatchesContiguousRun) {
  check_layout(GetParam().opt, GetParam().layout, GetParam().fused);
}

std::vector<Case> all_cases() {
  std::vector<Case> out;
  for (Opt o : {Opt::Adam, Opt::AdamAmsgrad, Opt::AdamW, Opt::SGDMomentum, Opt::SGDNesterov}) {
    for (Layout l : testing::kOutputLayouts) {
      for (bool fused : {false, true}) out.push_back({o, l, fused});
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(
    OptimLayouts, OptimSeedBugSweep, ::testing::ValuesIn(all_cases()), [](const auto& p) {
      return std::string(opt_name(p.param.opt)) + "_" + testing::layout_name(p.param.layout) +
             (p.param.fused ? "_fused" : "_reference");
    });

}  // namespace
}  // namespace stride
