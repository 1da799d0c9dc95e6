// Gradient clipping: behaviour beyond the PyTorch goldens (golden_test.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <stride/optim.h>
#include <stride/stride.h>

#include "support/layouts.h"

namespace stride {
namespace {

using nn::utils::clip_grad_norm_;
using nn::utils::clip_grad_value_;

Tensor param_with_grad(const Tensor& grad) {
  Tensor p = zeros(grad.sizes()).requires_grad_();
  p.mutable_grad() = grad;
  return p;
}

TEST(ClipGradNorm, ScalesToMaxNormAndReturnsTheTotal) {
  Tensor a = param_with_grad(tensor<float>({3.0f, 0.0f}));
  Tensor b = param_with_grad(tensor<float>({4.0f}));
  const Tensor total = clip_grad_norm_({a, b}, 1.0);
  EXPECT_EQ(total.dim(), 0);
  EXPECT_FLOAT_EQ(total.item<float>(), 5.0f);
  EXPECT_TRUE(testing::close(a.grad(), tensor<float>({0.6f, 0.0f})));
  EXPECT_TRUE(testing::close(b.grad(), tensor<float>({0.8f})));
  // Below the limit the gradients keep their values (times a clamped 1).
  const Tensor again = clip_grad_norm_({a, b}, 10.0);
  EXPECT_NEAR(again.item<float>(), 1.0f, 1e-6);
  EXPECT_TRUE(testing::close(b.grad(), tensor<float>({0.8f})));
}

TEST(ClipGradNorm, InfNormIsTheLargestMagnitude) {
  Tensor a = param_with_grad(tensor<float>({-6.0f, 1.0f}));
  Tensor b = param_with_grad(tensor<float>({2.0f}));
  EXPECT_EQ(clip_grad_norm_({a, b}, 3.0, nn::utils::kInfNorm).item<float>(), 6.0f);
  EXPECT_TRUE(testing::close(a.grad(), tensor<float>({-3.0f, 0.5f}), 1e-6));
}

TEST(ClipGradNorm, SkipsParametersWithoutGradAndHandlesNone) {
  Tensor none = zeros({3}).requires_grad_();
  EXPECT_EQ(clip_grad_norm_({none}, 1.0).item<float>(), 0.0f);
  Tensor a = param_with_grad(tensor<float>({0.0f, 2.0f}));
  EXPECT_EQ(clip_grad_norm_({none, a}, 1.0).item<float>(), 2.0f);
  EXPECT_FALSE(none.grad().defined());
}

TEST(ClipGradNorm, NonFiniteTotalThrowsOnlyWhenAsked) {
  Tensor a = param_with_grad(tensor<float>({1.0f, std::numeric_limits<float>::quiet_NaN()}));
  const Tensor before = a.grad().clone();
  try {
    clip_grad_norm_({a}, 1.0, 2.0, /*error_if_nonfinite=*/true);
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[clip_grad_norm_]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("nan"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(testing::close(a.grad(), before)) << "left alone";
  EXPECT_TRUE(std::isnan(clip_grad_norm_({a}, 1.0).item<float>()));
}

TEST(ClipGradNorm, StridedGradientsAreScaledInPlace) {
  for (testing::Layout layout : testing::kOutputLayouts) {
    SCOPED_TRACE(testing::layout_name(layout));
    Generator gen(3);
    Tensor base;
    Tensor g = testing::make_output({6, 5}, kFloat32, layout, base);
    g.copy_(randn({6, 5}, kFloat32, &gen) * 3.0);
    const Tensor dense = g.contiguous().clone();
    const Tensor before = base.clone();
    Tensor p = param_with_grad(g);
    Tensor q = param_with_grad(dense);
    const Tensor t1 = clip_grad_norm_({p}, 0.5), t2 = clip_grad_norm_({q}, 0.5);
    EXPECT_TRUE(p.grad().is_same(g)) << "the same gradient tensor, modified in place";
    EXPECT_TRUE(equal(t1, t2));
    testing::expect_written_only_inside(g, q.grad(), base, before, 0, "grad");
  }
}

TEST(ClipGradValue, ClampsEveryElement) {
  Tensor a = param_with_grad(tensor<float>({-2.0f, 0.1f, 5.0f}));
  Tensor skipped = zeros({2}).requires_grad_();
  clip_grad_value_({a, skipped}, 0.5);
  EXPECT_TRUE(equal(a.grad(), tensor<float>({-0.5f, 0.1f, 0.5f})));
  clip_grad_value_(a, 0.25);
  EXPECT_TRUE(equal(a.grad(), tensor<float>({-0.25f, 0.1f, 0.25f})));
}

}  // namespace
}  // namespace stride
