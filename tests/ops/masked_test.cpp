// The rules of the masked ops (include/stride/masked.h) beside their values
// (which the goldens check against PyTorch): fully masked-out slices give the
// identity or NaN, masks broadcast, dims may be a list, keepdim keeps them,
// non-contiguous inputs read right, masked-out elements get no gradient, and
// bad masks and dims are errors that name the op.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <stride/stride.h>

#include "support/error_message.h"

namespace stride {
namespace {

using testing::message_of;

constexpr double kInf = std::numeric_limits<double>::infinity();

// [[1, 2, 3], [4, 5, 6]] with row 1 fully masked out.
Tensor values() {
  return tensor<double>({1, 2, 3, 4, 5, 6}, {2, 3});
}
Tensor row_mask() {
  return tensor<int64_t>({1, 0, 1, 0, 0, 0}, {2, 3}).ne(0);
}

std::vector<double> as_vector(const Tensor& t) {
  return t.to(kFloat64).contiguous().to_vector<double>();
}

TEST(Masked, FullyMaskedOutSlicesGiveTheIdentity) {
  EXPECT_EQ(as_vector(masked::sum(values(), {1}, false, std::nullopt, row_mask())),
            (std::vector<double>{4, 0}));
  EXPECT_EQ(as_vector(masked::prod(values(), {1}, false, std::nullopt, row_mask())),
            (std::vector<double>{3, 1}));
  EXPECT_EQ(as_vector(masked::amax(values(), {1}, false, std::nullopt, row_mask())),
            (std::vector<double>{3, -kInf}));
  EXPECT_EQ(as_vector(masked::amin(values(), {1}, false, std::nullopt, row_mask())),
            (std::vector<double>{1, kInf}));
  EXPECT_EQ(as_vector(masked::logsumexp(values(), {1}, false, std::nullopt, row_mask()))[1], -kInf);
}

TEST(Masked, FullyMaskedOutSlicesWithoutAnIdentityGiveNaN) {
  for (const Tensor& r : {masked::mean(values(), {1}, false, std::nullopt, row_mask()),
                          masked::median(values(), 1, false, std::nullopt, row_mask()),
                          masked::var(values(), {1}, 1, false, std::nullopt, row_mask()),
                          masked::std_dev(values(), {1}, 0, false, std::nullopt, row_mask())}) {
    const std::vector<double> v = as_vector(r);
    EXPECT_FALSE(std::isnan(v[0]));
    EXPECT_TRUE(std::isnan(v[1]));
  }
  EXPECT_DOUBLE_EQ(as_vector(masked::mean(values(), {1}, false, std::nullopt, row_mask()))[0], 2);
  // The softmax of a fully masked-out slice is NaN; masked-out elements of
  // the others get 0.
  const std::vector<double> s = as_vector(masked::softmax(values(), 1, std::nullopt, row_mask()));
  EXPECT_DOUBLE_EQ(s[1], 0);
  EXPECT_NEAR(s[0] + s[2], 1, 1e-12);
  EXPECT_TRUE(std::isnan(s[3]));
}

TEST(Masked, KeepdimAndDimListsAndNoDim) {
  const Tensor x = arange(24, kFloat64).reshape({2, 3, 4});
  const Tensor mask = x.gt(2);  // elements 0, 1 and 2 masked out
  EXPECT_EQ(masked::sum(x, {0, 2}, true, std::nullopt, mask).sizes(), (DimVector{1, 3, 1}));
  EXPECT_EQ(masked::sum(x, {-1, 0}, false, std::nullopt, mask).sizes(), (DimVector{3}));
  EXPECT_EQ(masked::prod(x, {}, true, std::nullopt, mask).sizes(), (DimVector{1, 1, 1}));
  // dim empty: every element; the same as listing every dim.
  EXPECT_TRUE(allclose(masked::sum(x, {}, false, std::nullopt, mask),
                       masked::sum(x, {0, 1, 2}, false, std::nullopt, mask)));
  EXPECT_DOUBLE_EQ(masked::sum(x, {}, false, std::nullopt, mask).item<double>(),
                   sum(where(mask, x, zeros_like(x))).item<double>());
}

TEST(Masked, AMaskBroadcastsToTheInput) {
  const Tensor x = values();
  const Tensor columns = tensor<int64_t>({1, 0, 1}, {3}).ne(0);
  EXPECT_EQ(as_vector(masked::sum(x, {1}, false, std::nullopt, columns)),
            (std::vector<double>{4, 10}));
  EXPECT_EQ(as_vector(masked::cumsum(x, 1, std::nullopt, columns)),
            (std::vector<double>{1, 1, 4, 4, 4, 10}));
}

TEST(Masked, NonContiguousInputsReadRight) {
  const Tensor x = values().t();  // (3, 2), transposed
  const Tensor mask = row_mask().t();
  EXPECT_EQ(as_vector(masked::sum(x, {0}, false, std::nullopt, mask)), (std::vector<double>{4, 0}));
  EXPECT_EQ(as_vector(masked::amax(x, {0}, false, std::nullopt, mask)),
            (std::vector<double>{3, -kInf}));
}

TEST(Masked, DtypesFollowPyTorch) {
  const Tensor ints = tensor<int32_t>({1, 2, 3}, {3});
  EXPECT_EQ(masked::sum(ints).dtype(), kInt64);
  EXPECT_EQ(masked::cumsum(ints, 0).dtype(), kInt32);
  EXPECT_EQ(masked::argmax(values(), 1).dtype(), kFloat64);  // the input's, as torch.masked
  EXPECT_EQ(masked::var(ints).dtype(), kFloat32);
  EXPECT_EQ(masked::sum(values(), {}, false, kFloat32).dtype(), kFloat32);
}

TEST(Masked, MaskedOutElementsGetNoGradient) {
  const Tensor x = values().requires_grad_();
  masked::sum(x, {1}, false, std::nullopt, row_mask()).sum().backward();
  EXPECT_EQ(as_vector(x.grad()), (std::vector<double>{1, 0, 1, 0, 0, 0}));
  const Tensor y = values().requires_grad_();
  masked::softmax(y, 1, std::nullopt, tensor<int64_t>({1, 0, 1}, {3}).ne(0))
      .mul(arange(6, kFloat64).reshape({2, 3}))
      .sum()
      .backward();
  const std::vector<double> g = as_vector(y.grad());
  EXPECT_EQ(g[1], 0);
  EXPECT_EQ(g[4], 0);
  EXPECT_NE(g[0], 0);
}

TEST(Masked, ArgmaxSkipsMaskedOutElements) {
  const Tensor mask = tensor<int64_t>({1, 0, 0, 1, 1, 0}, {2, 3}).ne(0);
  EXPECT_EQ(as_vector(masked::argmax(values(), 1, false, kInt64, mask)),
            (std::vector<double>{0, 1}));
  EXPECT_EQ(as_vector(masked::argmin(values(), 1, false, kInt64, mask)),
            (std::vector<double>{0, 0}));
}

TEST(Masked, BadMasksAndDimsNameTheOp) {
  const std::string wide = message_of<IndexError>([] {
    (void)masked::sum(ones({3}), {}, false, {}, ones({2, 3}).ne(0));
  });
  EXPECT_NE(wide.find("[masked.sum] mask"), std::string::npos) << wide;
  const std::string shape = message_of<ShapeError>([] {
    (void)masked::amax(ones({2, 3}), {}, false, {}, ones({2}).ne(0));
  });
  EXPECT_NE(shape.find("[masked.amax] mask"), std::string::npos) << shape;
  const std::string other = message_of<ShapeError>(
      [] { (void)masked::logaddexp(ones({3}), ones({3}), {}, std::nullopt, ones({2}).ne(0)); });
  EXPECT_NE(other.find("other_mask"), std::string::npos) << other;
  const std::string twice = message_of<ShapeError>([] {
    (void)masked::sum(ones({2, 3}), {1, -1});
  });
  EXPECT_NE(twice.find("[masked.sum] dim"), std::string::npos) << twice;
  const std::string mean = message_of<ValueError>([] {
    (void)masked::mean(tensor<int64_t>({1, 2}, {2}));
  });
  EXPECT_NE(mean.find("[masked.mean]"), std::string::npos) << mean;
  const std::string median = message_of<ValueError>([] {
    (void)masked::median(tensor<int64_t>({1, 2}, {2}), 0, false, {}, zeros({2}).ne(0));
  });
  EXPECT_NE(median.find("[masked.median]"), std::string::npos) << median;
}

}  // namespace
}  // namespace stride
