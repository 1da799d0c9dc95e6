// Autograd semantics, mirroring PyTorch's documented behaviour.
#include <gtest/gtest.h>

#include <stride/stride.h>

#include "support/error_message.h"
#include "support/layouts.h"

namespace stride {
namespace {

using testing::close;

using testing::message_of;

TEST(Autograd, LeavesAccumulateUntilZeroed) {
  Tensor x = tensor<double>({1, 2, 3}).requires_grad_();
  EXPECT_TRUE(x.is_leaf());
  EXPECT_FALSE(x.grad().defined());
  (x * x).sum().backward();
  EXPECT_TRUE(close(x.grad(), tensor<double>({2, 4, 6})));
  (x * 3.0).sum().backward();
  EXPECT_TRUE(close(x.grad(), tensor<double>({5, 7, 9})));
  x.mutable_grad().zero_();
  (x * 3.0).sum().backward();
  EXPECT_TRUE(close(x.grad(), tensor<double>({3, 3, 3})));
  x.mutable_grad() = Tensor();  // set_to_none
  x.sum().backward();
  EXPECT_TRUE(close(x.grad(), tensor<double>({1, 1, 1})));
}

TEST(Autograd, GradFnNamesAndLeafness) {
  Tensor a = randn({2, 2}).requires_grad_();
  Tensor b = a * 2.0;
  EXPECT_FALSE(b.is_leaf());
  ASSERT_NE(b.grad_fn(), nullptr);
  EXPECT_EQ(b.grad_fn()->name(), "MulBackward");
  EXPECT_EQ(bmm(a.unsqueeze(0), a.unsqueeze(0)).grad_fn()->name(), "BmmBackward");
  EXPECT_EQ(a.index_select(0, tensor<int64_t>({1})).grad_fn()->name(), "IndexSelectBackward");
  EXPECT_EQ(a.t().grad_fn()->name(), "TransposeBackward");
  EXPECT_EQ(randn({2}).requires_grad(), false);
  EXPECT_THROW(b.requires_grad_(false), Error);  // only leaves
  EXPECT_THROW(ones({2}, kInt64).requires_grad_(), DTypeError);
}

TEST(Autograd, NonLeafGradOnlyWithRetainGrad) {
  Tensor x = tensor<double>({1, 2}).requires_grad_();
  Tensor y = x * 2.0;
  Tensor z = y * y;
  y.retain_grad();
  Tensor w = x + 1.0;  // not retained
  (z.sum() + w.sum()).backward();
  EXPECT_TRUE(y.retains_grad());
  EXPECT_TRUE(close(y.grad(), tensor<double>({4, 8})));
  EXPECT_FALSE(w.grad().defined());
  EXPECT_TRUE(close(x.grad(), tensor<double>({9, 17})));
}

TEST(Autograd, DetachBreaksTheGraphAndSharesStorage) {
  Tensor x = tensor<double>({1, 2}).requires_grad_();
  Tensor d = (x * 2.0).detach();
  EXPECT_FALSE(d.requires_grad());
  EXPECT_TRUE(d.is_leaf());
  Tensor y = x * 3.0;
  Tensor yd = y.detach();
  EXPECT_EQ(yd.storage(), y.storage());
  (x * d).sum().backward();
  EXPECT_TRUE(close(x.grad(), tensor<double>({2, 4})));  // d is a constant
}

TEST(Autograd, NoGradRecordsNothing) {
  Tensor x = randn({3}).requires_grad_();
  {
    NoGradGuard no_grad;
    Tensor y = x * 2.0;
    EXPECT_FALSE(y.requires_grad());
    EXPECT_EQ(y.grad_fn(), nullptr);
    {
      EnableGradGuard enable;
      EXPECT_TRUE((x * 2.0).requires_grad());
    }
    InferenceModeGuard inference;
    EXPECT_FALSE(x.exp().requires_grad());
  }
  EXPECT_TRUE((x * 2.0).requires_grad());
}

TEST(Autograd, SecondBackwardThroughFreedGraphThrows) {
  Tensor x = randn({3}, kFloat64).requires_grad_();
  Tensor y = (x.exp() * x).sum();
  y.backward();
  auto msg = message_of([&] { y.backward(); });
  EXPECT_NE(msg.find("backward through the graph a second time"), std::string::npos) << msg;
  EXPECT_NE(msg.find("retain_graph=true"), std::string::npos) << msg;
  x.mutable_grad() = Tensor();
  Tensor z = (x.exp() * x).sum();
  z.backward({}, /*retain_graph=*/true);
  Tensor g1 = x.grad().clone();
  z.backward();
  EXPECT_TRUE(close(x.grad(), g1 * 2.0));
}

TEST(Autograd, BackwardOfNonScalarNeedsAGradient) {
  Tensor x = randn({3}).requires_grad_();
  Tensor y = x * 2.0;
  EXPECT_THROW(y.backward(), ShapeError);
  y.backward(tensor<float>({1, 0, 2}));
  EXPECT_TRUE(close(x.grad(), tensor<float>({2, 0, 4})));
  EXPECT_THROW(randn({2}).sum().backward(), Error);  // nothing requires grad
}

TEST(Autograd, HooksRunInOrderAndCanReplaceTheGradient) {
  Tensor x = tensor<double>({1, 2}).requires_grad_();
  std::vector<int> order;
  auto h1 = x.register_hook([&](const Tensor& g) {
    order.push_back(1);
    return g * 10.0;
  });
  auto h2 = x.register_hook([&](const Tensor& g) {
    order.push_back(2);
    EXPECT_TRUE(close(g, tensor<double>({10, 10})));  // sees hook 1's result
    return Tensor();                                  // keep it
  });
  x.sum().backward();
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  EXPECT_TRUE(close(x.grad(), tensor<double>({10, 10})));
  h1.remove();
  h2.remove();
  h2.remove();  // idempotent
  x.mutable_grad() = Tensor();
  x.sum().backward();
  EXPECT_TRUE(close(x.grad(), tensor<double>({1, 1})));
  // On a non-leaf, the hook sees the gradient flowing into it.
  Tensor y = x * 3.0;
  Tensor seen;
  y.register_hook([&](const Tensor& g) {
    seen = g.clone();
    return g * 0.0;
  });
  x.mutable_grad() = Tensor();
  (y * y).sum().backward();
  EXPECT_TRUE(close(seen, tensor<double>({6, 12})));
  EXPECT_TRUE(close(x.grad(), tensor<double>({0, 0})));
}

TEST(Autograd, ModifyingASavedTensorInPlaceThrows) {
  Tensor x = randn({3}, kFloat64).requires_grad_();
  Tensor a = x * 1.0;
  Tensor y = (a * a).sum();  // saves a
  a.add_(1.0);
  auto msg = message_of([&] { y.backward(); });
  EXPECT_NE(msg.find("modified by an inplace operation"), std::string::npos) << msg;
  // exp saves its output, not its input: changing the input is fine.
  Tensor b = x * 1.0;
  Tensor e = b.exp();
  b.mul_(2.0);
  EXPECT_NO_THROW(e.sum().backward());
}

TEST(Autograd, InPlaceOnLeafThatRequiresGradThrows) {
  Tensor w = randn({3}).requires_grad_();
  auto msg = message_of([&] { w.add_(1.0); });
  EXPECT_NE(msg.find("leaf tensor that requires grad"), std::string::npos) << msg;
  EXPECT_THROW(w.uniform_(), Error);
  {
    NoGradGuard no_grad;  // what optimizers do
    EXPECT_NO_THROW(w.add_(1.0));
    EXPECT_NO_THROW(w.uniform_());
  }
}

TEST(Autograd, InPlaceOnNonLeafIsRecordedCorrectly) {
  Tensor x = tensor<double>({1, 2, 3}).requires_grad_();
  Tensor y = x * 2.0;
  y.mul_(x);  // y = 2x^2
  y.sum().backward();
  EXPECT_TRUE(close(x.grad(), tensor<double>({4, 8, 12})));
  EXPECT_EQ(y.grad_fn()->name(), "MulBackward");
  // A plain buffer starts requiring grad when an operand does.
  Tensor buf = zeros({3}, kFloat64);
  buf.add_(x);
  EXPECT_TRUE(buf.requires_grad());
}

TEST(Autograd, InPlaceOnViewIsAClearErrorNeverAWrongGradient) {
  Tensor x = randn({2, 3}, kFloat64).requires_grad_();
  Tensor y = x * 1.0;
  Tensor row = y.select(0, 0);
  auto msg = message_of([&] { row.mul_(2.0); });
  EXPECT_NE(msg.find("view"), std::string::npos) << msg;
  EXPECT_NE(msg.find("clone()"), std::string::npos) << msg;
}

TEST(Autograd, GradFunctionCapturesWithoutTouchingDotGrad) {
  Tensor x = tensor<double>({1, 2}).requires_grad_();
  Tensor z = tensor<double>({3, 4}).requires_grad_();
  Tensor y = (x * x * z).sum();
  auto g = autograd::grad({y}, {x}, {}, /*retain_graph=*/true);
  EXPECT_TRUE(close(g[0], tensor<double>({6, 16})));
  EXPECT_FALSE(x.grad().defined());
  EXPECT_FALSE(z.grad().defined());
  Tensor unused = randn({2}, kFloat64).requires_grad_();
  EXPECT_THROW(autograd::grad({y}, {unused}, {}, true), Error);
  auto g2 = autograd::grad({y}, {unused}, {}, true, false, /*allow_unused=*/true);
  EXPECT_FALSE(g2[0].defined());
  // Gradient with respect to an intermediate tensor.
  Tensor h = x * 3.0;
  Tensor out = (h * h).sum();
  EXPECT_TRUE(close(autograd::grad({out}, {h})[0], tensor<double>({6, 12})));
}

TEST(Autograd, CreateGraphGivesSecondDerivatives) {
  Tensor x = tensor<double>({1, 2}).requires_grad_();
  Tensor y = (x * x * x).sum();
  auto g = autograd::grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true);
  EXPECT_TRUE(close(g[0], tensor<double>({3, 12})));
  g[0].sum().backward();
  EXPECT_TRUE(close(x.grad(), tensor<double>({6, 12})));  // d2/dx2 x^3 = 6x
}

TEST(Autograd, BroadcastGradientsAreReduced) {
  Tensor a = randn({3, 1}, kFloat64).requires_grad_();
  Tensor b = randn({4}, kFloat64).requires_grad_();
  (a * b).sum().backward();
  EXPECT_EQ(a.grad().sizes(), IntArrayRef({3, 1}));
  EXPECT_EQ(b.grad().sizes(), IntArrayRef({4}));
  EXPECT_TRUE(close(a.grad(), b.sum().detach().expand({3, 1}).clone()));
}

TEST(Autograd, DeepChainDoesNotOverflowTheStack) {
  Tensor x = tensor<double>({1.0}).requires_grad_();
  Tensor y = x;
  for (int i = 0; i < 100000; ++i) y = y * 1.0;
  y.sum().backward();
  EXPECT_EQ(x.grad().item<double>(), 1.0);
}

TEST(Autograd, AnomalyModeNamesTheForwardOp) {
  Tensor x = tensor<double>({0.0, 1.0}).requires_grad_();
  DetectAnomalyGuard anomaly;
  Tensor y = x.sqrt();  // d sqrt / dx at 0 is inf
  auto msg = message_of([&] { y.sum().backward(); });
  EXPECT_NE(msg.find("SqrtBackward"), std::string::npos) << msg;
  EXPECT_NE(msg.find("forward op sqrt with inputs (2)"), std::string::npos) << msg;
}

TEST(Autograd, OutFormsRefuseTensorsThatRequireGrad) {
  Tensor x = randn({2}).requires_grad_();
  Tensor out;
  EXPECT_THROW(exp_out(out, x), Error);
  NoGradGuard no_grad;
  EXPECT_NO_THROW(exp_out(out, x));
}

}  // namespace
}  // namespace stride

namespace stride {
namespace {

// A fresh gradient that nothing else holds becomes .grad without a copy (as
// in PyTorch); one that is shared — the same tensor flowing to two leaves,
// or one a hook kept — is cloned, so later accumulation cannot alias.
TEST(AccumulateGrad, StealsOnlyGradientsNobodyElseHolds) {
  Tensor a = randn({3, 4}).requires_grad_(), b = randn({3, 4}).requires_grad_();
  (a + b).sum().backward();  // AddBackward hands one tensor to both leaves
  EXPECT_NE(a.grad().data_ptr(), b.grad().data_ptr());
  (a + b).sum().backward();
  EXPECT_TRUE(equal(a.grad(), full({3, 4}, 2.0)));
  EXPECT_TRUE(equal(b.grad(), full({3, 4}, 2.0)));

  Tensor w = randn({2, 2}).requires_grad_();
  Tensor kept;
  w.register_hook([&](const Tensor& g) {
    kept = g;
    return Tensor();
  });
  (w * 3.0).sum().backward();
  (w * 3.0).sum().backward();
  EXPECT_TRUE(equal(w.grad(), full({2, 2}, 6.0)));
  EXPECT_TRUE(equal(kept, full({2, 2}, 3.0)));  // the hook's tensor was not accumulated into
}

// The engine sums a tensor's gradients in place only into a buffer nobody
// else holds. Here a's node passes its gradient on to b's buffer, where it
// arrives first, as is (a = b + 0) or as a view of it (a = b.view(...)),
// while a hook keeps it; b's other gradient (from c = b * 2, recorded
// earlier, so run later) must then go to a fresh sum, not into the hook's
// tensor. Without the hook the sum is done in place, with the same values.
// autograd::grad's results are held alike.
TEST(Engine, SumsGradientsInPlaceOnlyIntoBuffersNobodyElseHolds) {
  for (bool as_view : {false, true}) {
    for (bool hooked : {true, false}) {
      Tensor x = randn({3, 4}).requires_grad_();
      Tensor b = x * 1.0;
      Tensor c = b * 2.0;
      Tensor a = as_view ? b.view({12}) : b + 0.0;
      Tensor kept;
      if (hooked) {
        a.register_hook([&](const Tensor& g) {
          kept = g;
          return Tensor();
        });
      }
      ((a * 1.0).view({3, 4}) + c).sum().backward();
      const std::string what = std::string(as_view ? "view" : "add") + (hooked ? ", hooked" : "");
      EXPECT_TRUE(equal(x.grad(), full({3, 4}, 3.0))) << what;
      if (hooked) {
        EXPECT_TRUE(equal(kept, full(a.sizes(), 1.0))) << what;
      }
    }
  }
  Tensor x = randn({2, 3}).requires_grad_();
  Tensor b = x * 1.0;
  Tensor c = b * 2.0;
  Tensor a = b + 0.0;
  const auto grads = autograd::grad({((a * 1.0) + c).sum()}, {a, b});
  EXPECT_TRUE(equal(grads[0], full({2, 3}, 1.0)));
  EXPECT_TRUE(equal(grads[1], full({2, 3}, 3.0)));
}

TEST(Hooks, PostAccumulateGradHooksSeeTheAccumulatedGrad) {
  Tensor w = ones({3}).requires_grad_();
  std::vector<double> seen;
  HookHandle h = w.register_post_accumulate_grad_hook(
      [&](Tensor& p) { seen.push_back(p.grad().sum().item<double>()); });
  (w * 2).sum().backward();
  (w * 3).sum().backward();
  EXPECT_EQ(seen, (std::vector<double>{6, 15}));  // after each accumulation
  h.remove();
  (w * 1).sum().backward();
  EXPECT_EQ(seen.size(), 2u);
  Tensor y = w * 2;
  EXPECT_NE(message_of([&] {
              y.register_post_accumulate_grad_hook([](Tensor&) {});
            }).find("leaf tensors"),
            std::string::npos);
}

TEST(Engine, QueuedCallbacksRunAfterTheGraphInOrder) {
  Tensor a = ones({2}).requires_grad_(), b = ones({2}).requires_grad_();
  std::vector<std::string> log;
  a.register_post_accumulate_grad_hook([&](Tensor&) {
    log.push_back("a");
    autograd::queue_callback([&] { log.push_back("first"); });
    autograd::queue_callback([&] { log.push_back("second"); });
  });
  b.register_post_accumulate_grad_hook([&](Tensor&) { log.push_back("b"); });
  (a * b).sum().backward();
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[2], "first");
  EXPECT_EQ(log[3], "second");
  EXPECT_NE(message_of([] { autograd::queue_callback([] {}); }).find("during a backward pass"),
            std::string::npos);
}

}  // namespace
}  // namespace stride
