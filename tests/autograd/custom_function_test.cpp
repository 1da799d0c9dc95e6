// Custom functions (Note [Custom functions] in include/stride/autograd.h):
// a forward computed without recording and a backward written by the
// caller, with torch.autograd.Function's semantics.
#include <gtest/gtest.h>

#include <stride/stride.h>

#include "support/layouts.h"

namespace stride {
namespace {

using autograd::AutogradContext;
using autograd::Grads;
using testing::close;

// y = exp(x) * k, saving its output; backward is written with ops, so it can
// be differentiated again.
Tensor scaled_exp(const Tensor& x, double k) {
  return autograd::apply_function(
      "ScaledExpBackward", {x},
      [k](AutogradContext& ctx, const std::vector<Tensor>& in) {
        Tensor y = exp(in[0]) * k;
        ctx.save_for_backward({y});
        return std::vector<Tensor>{y};
      },
      [](AutogradContext& ctx, const Grads& g) { return Grads{g[0] * ctx.saved_tensors()[0]}; })[0];
}

TEST(CustomFunction, NamesItsNodeAndComputesTheGradient) {
  Tensor x = tensor<double>({0.0, 1.0}).requires_grad_();
  Tensor y = scaled_exp(x, 3.0);
  ASSERT_NE(y.grad_fn(), nullptr);
  EXPECT_EQ(y.grad_fn()->name(), "ScaledExpBackward");
  y.sum().backward();
  EXPECT_TRUE(close(x.grad(), exp(x.detach()) * 3.0));
}

TEST(CustomFunction, PassesFirstAndSecondOrderGradcheck) {
  Tensor x = randn({3, 4}, kFloat64).requires_grad_();
  auto f = [](const std::vector<Tensor>& in) { return scaled_exp(in[0] * in[1], 0.5); };
  Tensor w = randn({3, 4}, kFloat64).requires_grad_();
  EXPECT_TRUE(autograd::gradcheck(f, {x, w}));
  auto first_grad = [f](const std::vector<Tensor>& in) {
    Grads g = autograd::grad({f(in).sum()}, in, {}, std::nullopt, /*create_graph=*/true);
    return g[0] + g[1] * 2.0;
  };
  EXPECT_TRUE(autograd::gradcheck(first_grad, {x, w}));
}

TEST(CustomFunction, NothingIsRecordedWithoutGrad) {
  Tensor x = tensor<double>({1.0});
  EXPECT_EQ(scaled_exp(x, 1.0).grad_fn(), nullptr);
  Tensor leaf = tensor<double>({1.0}).requires_grad_();
  NoGradGuard no_grad;
  EXPECT_FALSE(scaled_exp(leaf, 1.0).requires_grad());
}

TEST(CustomFunction, NonTensorInputsAndNeedsInputGrad) {
  Tensor a = tensor<double>({2.0}).requires_grad_();
  Tensor b = tensor<double>({5.0});
  std::vector<bool> seen;
  Tensor y = autograd::apply_function(
      "MulAddBackward", {a, b, Tensor()},
      [&seen](AutogradContext& ctx, const std::vector<Tensor>& in) {
        seen = ctx.needs_input_grad();
        return std::vector<Tensor>{in[0] * in[1] + 1.0};
      },
      [b](AutogradContext&, const Grads& g) {
        return Grads{g[0] * b, Tensor(), Tensor()};
      })[0];
  EXPECT_EQ(seen, (std::vector<bool>{true, false, false}));
  y.backward();
  EXPECT_TRUE(close(a.grad(), tensor<double>({5.0})));
}

// Two outputs, the second marked non-differentiable; a gradient flows into
// the first only, and the second reaches backward as zeros (materialized) or
// undefined.
std::vector<Tensor> split_max(const Tensor& x, bool materialize, std::vector<bool>* defined) {
  return autograd::apply_function(
      "SplitMaxBackward", {x},
      [materialize](AutogradContext& ctx, const std::vector<Tensor>& in) {
        Tensor doubled = in[0] * 2.0;
        Tensor argmax = in[0].argmax(0);
        ctx.mark_non_differentiable({argmax});
        ctx.set_materialize_grads(materialize);
        return std::vector<Tensor>{doubled, argmax};
      },
      [defined](AutogradContext&, const Grads& g) {
        defined->assign({g[0].defined(), g[1].defined()});
        return Grads{g[0] * 2.0};
      });
}

TEST(CustomFunction, MultipleOutputsNonDifferentiableAndMaterializedGrads) {
  for (bool materialize : {true, false}) {
    Tensor x = tensor<double>({1.0, 3.0, 2.0}).requires_grad_();
    std::vector<bool> defined;
    std::vector<Tensor> out = split_max(x, materialize, &defined);
    EXPECT_TRUE(out[0].requires_grad());
    EXPECT_FALSE(out[1].requires_grad());
    EXPECT_EQ(out[1].item<int64_t>(), 1);
    out[0].sum().backward();
    EXPECT_EQ(defined, (std::vector<bool>{true, materialize}));
    EXPECT_TRUE(close(x.grad(), tensor<double>({2.0, 2.0, 2.0})));
  }
}

TEST(CustomFunction, AnInputReturnedAsIsIsRecordedAsAnAlias) {
  Tensor x = tensor<double>({1.0, 2.0}).requires_grad_();
  Tensor y = autograd::apply_function(
      "IdentityBackward", {x},
      [](AutogradContext&, const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0]}; },
      [](AutogradContext&, const Grads& g) { return Grads{g[0] * 3.0}; })[0];
  EXPECT_FALSE(y.is_same(x));
  EXPECT_TRUE(x.is_leaf());
  EXPECT_EQ(y.data_ptr(), x.data_ptr());
  y.sum().backward();
  EXPECT_TRUE(close(x.grad(), tensor<double>({3.0, 3.0})));
}

TEST(CustomFunction, AWrongNumberOfGradientsNamesTheFunction) {
  Tensor x = tensor<double>({1.0}).requires_grad_();
  Tensor y = autograd::apply_function(
      "TwoGradsBackward", {x, Tensor()},
      [](AutogradContext&, const std::vector<Tensor>& in) {
        return std::vector<Tensor>{in[0] * 2.0};
      },
      [](AutogradContext&, const Grads& g) { return Grads{g[0]}; })[0];
  try {
    y.backward();
    ADD_FAILURE() << "no exception";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("TwoGradsBackward returned an incorrect number of "
                                         "gradients (expected 2, got 1)"),
              std::string::npos)
        << e.what();
  }
}

TEST(CustomFunction, AWrongShapedGradientNamesTheFunction) {
  Tensor x = tensor<double>({1.0, 2.0}).requires_grad_();
  Tensor y = autograd::apply_function(
      "BadShapeBackward", {x},
      [](AutogradContext&, const std::vector<Tensor>& in) {
        return std::vector<Tensor>{in[0] * 2.0};
      },
      [](AutogradContext&, const Grads&) { return Grads{ones({3}, kFloat64)}; })[0];
  try {
    y.sum().backward();
    ADD_FAILURE() << "no exception";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("BadShapeBackward"), std::string::npos) << e.what();
  }
}

TEST(CustomFunction, ASavedTensorModifiedInPlaceIsAnError) {
  Tensor x = tensor<double>({1.0, 2.0}).requires_grad_();
  Tensor y = scaled_exp(x, 1.0);
  {
    NoGradGuard no_grad;
    y.mul_(2.0);
  }
  EXPECT_THROW(y.sum().backward(), Error);
}

}  // namespace
}  // namespace stride
