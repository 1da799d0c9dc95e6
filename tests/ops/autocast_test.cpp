// Autocast (include/stride/autocast.h): matmul-class ops round float32
// operands to bfloat16 and accumulate in float32, forward and backward, for
// every operand layout; the parameter cast cache follows in-place updates;
// nothing else changes dtype.
#include <gtest/gtest.h>

#include <array>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <stride/stride.h>

#include "support/layouts.h"
#include "support/op_coverage.h"

namespace stride {
namespace {

namespace F = nn::functional;
using testing::close;
using testing::Layout;

// What autocast computes, in float64: the product of the bf16 roundings.
Tensor rounded(const Tensor& t) {
  return t.to(kBFloat16).to(kFloat64);
}

Tensor reference_matmul(const Tensor& a, const Tensor& b) {
  return rounded(a).matmul(rounded(b)).to(kFloat32);
}

TEST(Autocast, GuardsNestAndRestore) {
  EXPECT_FALSE(Autocast::is_enabled());
  {
    AutocastGuard on;
    EXPECT_TRUE(Autocast::is_enabled());
    {
      AutocastGuard off(false);
      EXPECT_FALSE(Autocast::is_enabled());
    }
    EXPECT_TRUE(Autocast::is_enabled());
  }
  EXPECT_FALSE(Autocast::is_enabled());
}

// Small products take the widened float32 GEMM, large ones the bf16 kernels:
// the same roundings either way.
TEST(Autocast, MatmulRoundsOperandsForEveryLayout) {
  Generator gen(7);
  for (auto [rows, inner, cols] :
       {std::array<int64_t, 3>{17, 40, 9}, std::array<int64_t, 3>{130, 96, 80}}) {
    for (Layout la : testing::kAllLayouts) {
      for (Layout lb : testing::kAllLayouts) {
        SCOPED_TRACE(std::string(testing::layout_name(la)) + " @ " + testing::layout_name(lb) +
                     ", rows " + std::to_string(rows));
        const Tensor a =
            testing::make_input({3, rows, inner}, kFloat32, la, testing::Domain::Any, gen);
        const Tensor b =
            testing::make_input({inner, cols}, kFloat32, lb, testing::Domain::Any, gen);
        Tensor c;
        {
          AutocastGuard autocast;
          c = a.matmul(b);
        }
        EXPECT_EQ(c.dtype(), kFloat32);
        EXPECT_TRUE(close(c, reference_matmul(a, b), 1e-5, 1e-5));
        // The rounding really happened: plain float32 differs.
        EXPECT_GT((c - a.matmul(b)).abs().max().item<double>(), 1e-4);
      }
    }
  }
}

TEST(Autocast, BatchedAndBroadcastMatmul) {
  Generator gen(8);
  const Tensor a = randn({4, 1, 5, 33}, {}, &gen);
  const Tensor b = randn({3, 33, 6}, {}, &gen).transpose(-1, -2).contiguous().transpose(-1, -2);
  AutocastGuard autocast;
  EXPECT_TRUE(close(a.matmul(b), reference_matmul(a, b), 1e-5, 1e-5));
  EXPECT_TRUE(close(bmm(b.transpose(1, 2), b), reference_matmul(b.transpose(1, 2), b), 1e-5, 1e-5));
}

TEST(Autocast, LinearForwardAndBackwardRoundOperandsEvenOutsideTheScope) {
  Generator gen(9);
  const Tensor x = randn({2, 7, 48}, {}, &gen).requires_grad_(true);
  const Tensor w = randn({24, 48}, {}, &gen).requires_grad_(true);
  const Tensor bias = randn({24}, {}, &gen).requires_grad_(true);
  const Tensor g = randn({2, 7, 24}, {}, &gen);
  Tensor y;
  {
    AutocastGuard autocast;
    y = F::linear(x, w, bias);
  }
  EXPECT_EQ(y.dtype(), kFloat32);
  EXPECT_TRUE(close(y, reference_matmul(x, w.t()) + bias, 1e-5, 1e-5));
  y.backward(g);  // outside the scope: the node remembers it ran under autocast
  const Tensor g2 = g.reshape({-1, 24});
  EXPECT_EQ(x.grad().dtype(), kFloat32);
  EXPECT_TRUE(close(x.grad(), reference_matmul(g, w), 1e-5, 1e-5));
  EXPECT_TRUE(close(w.grad(), reference_matmul(g2.t(), x.detach().reshape({-1, 48})), 1e-5, 1e-5));
  EXPECT_TRUE(close(bias.grad(), g2.sum({0}), 1e-6, 1e-6));
}

// linear_groups' own kernels (Note [Autocast on the float32 GEMM]) or one
// linear per group (where the CPU multiplies in bfloat16): every output and
// gradient is the product of the roundings, and so are decoding rows
// without a recorded backward (the bf16 decode GEMV).
TEST(Autocast, LinearGroupsForwardAndBackwardRoundOperands) {
  Generator gen(17);
  const Tensor x = randn({3, 40, 48}, {}, &gen).requires_grad_(true);
  const Tensor wq = randn({32, 48}, {}, &gen).requires_grad_(true);
  const Tensor wk = randn({16, 48}, {}, &gen).requires_grad_(true);
  const Tensor wv = randn({24, 48}, {}, &gen).requires_grad_(true);
  const Tensor g0 = randn({3, 40, 48}, {}, &gen), g1 = randn({3, 40, 24}, {}, &gen);
  std::vector<Tensor> ys;
  {
    AutocastGuard autocast;
    ys = F::linear_groups(x, {{wq, wk}, {wv}});
  }
  const Tensor wqk = cat({wq.detach(), wk.detach()}, 0);
  EXPECT_TRUE(close(ys[0], reference_matmul(x, wqk.t()), 1e-5, 1e-5));
  EXPECT_TRUE(close(ys[1], reference_matmul(x, wv.t()), 1e-5, 1e-5));
  autograd::backward({ys[0], ys[1]}, {g0, g1});
  const Tensor x2 = x.detach().reshape({-1, 48});
  const Tensor g02 = g0.reshape({-1, 48}), g12 = g1.reshape({-1, 24});
  EXPECT_TRUE(close(x.grad(), reference_matmul(g0, wqk) + reference_matmul(g1, wv), 1e-5, 1e-5));
  EXPECT_TRUE(close(wq.grad(), reference_matmul(g02.narrow(1, 0, 32).t(), x2), 1e-5, 1e-5));
  EXPECT_TRUE(close(wk.grad(), reference_matmul(g02.narrow(1, 32, 16).t(), x2), 1e-5, 1e-5));
  EXPECT_TRUE(close(wv.grad(), reference_matmul(g12.t(), x2), 1e-5, 1e-5));

  NoGradGuard no_grad;
  const Tensor row = x.detach().narrow(1, 0, 1);
  AutocastGuard autocast;
  const std::vector<Tensor> decoded = F::linear_groups(row, {{wq, wk}, {wv}});
  EXPECT_TRUE(close(decoded[0], reference_matmul(row, wqk.t()), 1e-5, 1e-5));
  EXPECT_TRUE(close(decoded[1], reference_matmul(row, wv.detach().t()), 1e-5, 1e-5));
}

TEST(Autocast, RecordedWithoutAutocastStaysFloat32InsideTheScope) {
  Generator gen(10);
  const Tensor x = randn({6, 32}, {}, &gen).requires_grad_(true);
  const Tensor w = randn({8, 32}, {}, &gen).requires_grad_(true);
  const Tensor y = F::linear(x, w, Tensor());
  EXPECT_TRUE(equal(y, x.detach().matmul(w.detach().t())));
  {
    AutocastGuard autocast;
    y.sum().backward();
  }
  EXPECT_TRUE(equal(x.grad(), ones({6, 8}).matmul(w.detach())));
}

TEST(Autocast, CachedWeightFollowsInPlaceUpdates) {
  Generator gen(11);
  const Tensor x = randn({4, 16}, {}, &gen);
  Tensor w = randn({5, 16}, {}, &gen).requires_grad_(true);
  AutocastGuard autocast;
  const Tensor y1 = F::linear(x, w, Tensor());
  {
    NoGradGuard no_grad;
    w.mul_(2.0);  // as an optimizer step would: the version moves
  }
  const Tensor y2 = F::linear(x, w, Tensor());
  EXPECT_TRUE(close(y2, y1 * 2.0, 1e-6, 1e-6));
  EXPECT_TRUE(close(y2, reference_matmul(x, w.detach().t()), 1e-5, 1e-5));
}

TEST(Autocast, MixedDtypeOperandsGetGradientsInTheirOwnDtype) {
  Generator gen(12);
  const Tensor a = randn({5, 12}, {}, &gen).requires_grad_(true);
  const Tensor b = randn({12, 3}, {}, &gen).to(kBFloat16).requires_grad_(true);
  {
    AutocastGuard autocast;
    const Tensor c = a.matmul(b);
    EXPECT_EQ(c.dtype(), kFloat32);
    c.sum().backward();
  }
  EXPECT_EQ(a.grad().dtype(), kFloat32);
  EXPECT_EQ(b.grad().dtype(), kBFloat16);
  EXPECT_TRUE(close(a.grad(), reference_matmul(ones({5, 3}), b.t()), 1e-5, 1e-5));
  // Without autocast the dtypes must match, as before.
  EXPECT_THROW(a.detach().matmul(b.detach()), DTypeError);
}

TEST(Autocast, LeavesFloat64AndOtherOpsAlone) {
  Generator gen(13);
  const Tensor a = randn({4, 8}, TensorOptions().dtype(kFloat64), &gen);
  const Tensor x = randn({4, 8}, {}, &gen);
  AutocastGuard autocast;
  EXPECT_TRUE(equal(a.matmul(a.t()), [&] {
    AutocastGuard off(false);
    return a.matmul(a.t());
  }()));
  EXPECT_EQ((x * 3.0).softmax(-1).dtype(), kFloat32);
}

TEST(Autocast, DoubleBackwardThroughAutocastLinear) {
  Generator gen(14);
  const Tensor x = randn({3, 8}, {}, &gen).requires_grad_(true);
  const Tensor w = randn({4, 8}, {}, &gen).requires_grad_(true);
  AutocastGuard autocast;
  const Tensor y = F::linear(x, w, Tensor()).pow(2).sum();
  const Tensor gx = autograd::grad({y}, {x}, {}, /*retain_graph=*/true, /*create_graph=*/true)[0];
  gx.sum().backward();
  ASSERT_TRUE(w.grad().defined());
  EXPECT_EQ(w.grad().dtype(), kFloat32);
}

// Every op whose list rule is Lower (src/core/op_list.h) multiplies the
// bfloat16 roundings of its factors under autocast, with a float32 result.
TEST(Autocast, EveryLowerOpMultipliesBfloat16Roundings) {
  Generator gen(15);
  const Tensor x = randn({6, 40}, {}, &gen), w = randn({24, 40}, {}, &gen);
  const Tensor expected = reference_matmul(x, w.t());
  const std::vector<std::pair<std::string, std::function<Tensor()>>> cases = {
      {"matmul", [&] { return x.matmul(w.t()); }},
      {"mm", [&] { return mm(x, w.t()); }},
      {"bmm", [&] { return bmm(x.unsqueeze(0), w.t().unsqueeze(0)).squeeze(0); }},
      {"linear", [&] { return F::linear(x, w); }},
      {"linear_concat",
       [&] {
         return F::linear_concat(x, {w.narrow(0, 0, 16), w.narrow(0, 16, 8)});
       }},
      {"linear_groups",
       [&] {
         return F::linear_groups(x, {{w.narrow(0, 0, 16)}, {w.narrow(0, 16, 8)}})[0];
       }},
  };
  std::vector<std::string> names;
  AutocastGuard autocast;
  for (const auto& [name, call] : cases) {
    SCOPED_TRACE(name);
    names.push_back(name);
    const Tensor y = call();
    EXPECT_EQ(y.dtype(), kFloat32);
    EXPECT_TRUE(close(y, expected.narrow(1, 0, y.size(1)), 1e-5, 1e-5));
  }
  EXPECT_EQ(testing::ops_without_a_case(names,
                                        [](const detail::OpInfo& op) {
                                          return op.autocast == detail::AutocastRule::Lower;
                                        }),
            std::vector<std::string>{});
}

// A Lower op saves its factors' bfloat16 casts, each recorded as a cast of
// its factor, so a backward recorded with create_graph reaches both factors.
TEST(Autocast, DoubleBackwardThroughAutocastMatmulReachesBothFactors) {
  Generator gen(16);
  const Tensor a = randn({5, 12}, {}, &gen).requires_grad_(true);
  const Tensor b = randn({12, 7}, {}, &gen).requires_grad_(true);
  auto second_order = [&](bool lowered) {
    Tensor(a).mutable_grad() = Tensor();
    Tensor(b).mutable_grad() = Tensor();
    AutocastGuard autocast(lowered);
    const Tensor y = a.matmul(b).pow(2).sum();
    const Tensor ga = autograd::grad({y}, {a}, {}, /*retain_graph=*/true, /*create_graph=*/true)[0];
    EXPECT_EQ(ga.dtype(), kFloat32);
    ga.pow(2).sum().backward();
    EXPECT_TRUE(a.grad().defined() && b.grad().defined());
    return std::pair{a.grad().clone(), b.grad().clone()};
  };
  const auto [ga32, gb32] = second_order(false);
  const auto [ga16, gb16] = second_order(true);
  EXPECT_EQ(ga16.dtype(), kFloat32);
  EXPECT_EQ(gb16.dtype(), kFloat32);
  // Relative to the largest element: second derivatives cancel in places.
  auto relative_error = [](const Tensor& got, const Tensor& want) {
    return (got - want).abs().max().item<double>() / want.abs().max().item<double>();
  };
  EXPECT_LT(relative_error(ga16, ga32), 1e-2);
  EXPECT_LT(relative_error(gb16, gb32), 1e-2);
  EXPECT_FALSE(equal(gb16, gb32));  // the bfloat16 roundings are there
}

}  // namespace
}  // namespace stride
