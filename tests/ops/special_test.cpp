// The special functions' rules beside their values (which the goldens
// check against PyTorch): where PyTorch has no gradient they refuse or
// record none, their argument checks, and the dtypes they compute in.
#include <gtest/gtest.h>

#include <cmath>

#include <stride/stride.h>

#include "support/error_message.h"

namespace stride {
namespace {

using testing::message_of;

Tensor requiring_grad(std::vector<double> values) {
  return tensor<double>(values, {int64_t(values.size())}).requires_grad_();
}

TEST(Special, ZetaAndIncompleteGammaRefuseTheGradientOfTheirFirstOperand) {
  for (auto* op : {&special_zeta, &igamma, &igammac}) {
    const Tensor a = requiring_grad({2.5, 3.0}), b = requiring_grad({1.5, 2.0});
    const std::string msg = message_of<NotImplementedError>([&] { op(a, b).sum().backward(); });
    EXPECT_NE(msg.find("is not implemented"), std::string::npos) << msg;
    // With the first operand constant, the second's gradient flows.
    const Tensor x = requiring_grad({1.5, 2.0});
    op(tensor<double>({2.5, 3.0}, {2}), x).sum().backward();
    EXPECT_TRUE(x.grad().defined());
  }
}

TEST(Special, FunctionsWithoutAGradientRecordNone) {
  const Tensor x = requiring_grad({0.5, 1.5});
  EXPECT_FALSE(special_airy_ai(x).requires_grad());
  EXPECT_FALSE(special_scaled_modified_bessel_k0(x).requires_grad());
  EXPECT_FALSE(special_chebyshev_polynomial_t(x, tensor<double>({3.0, 4.0}, {2})).requires_grad());
  EXPECT_TRUE(special_bessel_j0(x).requires_grad());
}

TEST(Special, PolygammaRefusesANegativeOrderNamingIt) {
  const std::string msg = message_of<ValueError>([] { (void)polygamma(-1, ones({2})); });
  EXPECT_NE(msg.find("[polygamma]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("n = -1"), std::string::npos) << msg;
}

TEST(Special, MvlgammaRefusesElementsAtOrBelowItsBound) {
  const std::string msg = message_of<ValueError>([] { (void)mvlgamma(full({2}, 1.0), 3); });
  EXPECT_NE(msg.find("[mvlgamma]"), std::string::npos) << msg;
  EXPECT_NE(message_of<ValueError>([] { (void)mvlgamma(ones({2}), 0); }), "no exception");
}

TEST(Special, IntegerInputsComputeInFloat32) {
  const Tensor n = tensor<int64_t>({1, 2, 3}, {3});
  EXPECT_EQ(lgamma(n).dtype(), kFloat32);
  EXPECT_EQ(special_i0e(n).dtype(), kFloat32);
  EXPECT_EQ(special_zeta(n + 1, n).dtype(), kFloat32);
  EXPECT_FLOAT_EQ(lgamma(n)[2].item<float>(), std::log(2.0f));
}

TEST(Special, PolynomialsTruncateTheirDegree) {
  const Tensor x = tensor<double>({0.3}, {1});
  EXPECT_DOUBLE_EQ(special_hermite_polynomial_h(x, tensor<double>({2.9}, {1})).item<double>(),
                   4 * 0.3 * 0.3 - 2);
  EXPECT_EQ(special_legendre_polynomial_p(x, tensor<double>({-1.0}, {1})).item<double>(), 0.0);
}

}  // namespace
}  // namespace stride
