// The numeric composites of src/ops/numeric_composites.cpp and the windows
// of src/ops/windows.cpp beyond their PyTorch goldens
// (tests/ops/golden_test.cpp) and gradchecks: empty, 0-d and non-contiguous
// inputs, negative dims, dtypes, and the errors for bad arguments.
#include <gtest/gtest.h>

#include <stride/stride.h>

namespace stride {
namespace {

std::vector<double> values_of(const Tensor& t) {
  return t.to(kFloat64).contiguous().to_vector<double>();
}

TEST(NumericComposites, TraceSumsTheDiagonalAndPromotesIntegers) {
  const Tensor m = arange(12).view({3, 4});
  EXPECT_EQ(trace(m).dtype(), kInt64);
  EXPECT_EQ(trace(m).item<int64_t>(), 0 + 5 + 10);
  EXPECT_EQ(trace(m.t().to(kFloat32)).item<float>(), 15.0f);  // non-contiguous
  EXPECT_EQ(trace(zeros({0, 3})).item<float>(), 0.0f);
  EXPECT_THROW(trace(ones({2})), ShapeError);
}

TEST(NumericComposites, DiffClampsTheOrderAndJoinsPrependAndAppend) {
  const Tensor x = tensor<float>({1, 4, 9, 16});
  EXPECT_EQ(values_of(diff(x)), (std::vector<double>{3, 5, 7}));
  EXPECT_EQ(values_of(diff(x, 2)), (std::vector<double>{2, 2}));
  EXPECT_EQ(diff(x, 9).sizes(), IntArrayRef({0}));  // more than the size: empty
  EXPECT_EQ(values_of(diff(x, 0, -1, scalar_tensor(5.0f))), values_of(x));
  EXPECT_EQ(values_of(diff(x, 1, -1, scalar_tensor(0.0f), tensor<float>({20}))),
            (std::vector<double>{1, 3, 5, 7, 4}));
  const Tensor m = arange(6).view({2, 3}).t();  // non-contiguous
  EXPECT_EQ(values_of(diff(m, 1, -2)), (std::vector<double>{1, 1, 1, 1}));
  EXPECT_EQ(diff(tensor<bool>({true, true, false}), 1).dtype(), kBool);
  EXPECT_THROW(diff(scalar_tensor(1.0f)), ShapeError);
  EXPECT_THROW(diff(x, -1), ValueError);
  EXPECT_THROW(diff(m, 1, 5), IndexError);
  EXPECT_THROW(diff(m, 1, 0, ones({3})), ShapeError);
}

TEST(NumericComposites, TrapezoidIntegratesAlongDim) {
  const Tensor y = tensor<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(values_of(trapezoid(y)), (std::vector<double>{4, 10}));
  EXPECT_EQ(values_of(trapezoid(y, 2.0, 0)), (std::vector<double>{5, 7, 9}));
  EXPECT_EQ(values_of(trapezoid(y, tensor<float>({0, 1, 3}))), (std::vector<double>{6.5, 15.5}));
  EXPECT_EQ(values_of(cumulative_trapezoid(y, 1.0, -1)), (std::vector<double>{1.5, 4, 4.5, 10}));
  EXPECT_EQ(trapezoid(zeros({2, 0})).sizes(), IntArrayRef({2}));  // no samples: 0
  EXPECT_EQ(trapezoid(arange(4)).dtype(), kFloat32);              // integers: float
  EXPECT_THROW(trapezoid(y, tensor<float>({0, 1})), ShapeError);
  EXPECT_THROW(trapezoid(y.gt(Scalar(2))), DTypeError);
}

TEST(NumericComposites, CovWeightsAndCorrcoef) {
  const Tensor x = tensor<double>({1, 2, 4, 2, 4, 8}, {2, 3});
  const Tensor c = cov(x);
  EXPECT_NEAR(c[0][0].item<double>(), 7.0 / 3.0, 1e-12);
  EXPECT_NEAR(c[0][1].item<double>(), 14.0 / 3.0, 1e-12);
  // fweights repeat observations: counts of 2 equal the doubled data.
  const Tensor doubled = cat({x, x}, 1);
  EXPECT_TRUE(allclose(cov(x, 1, tensor<int64_t>({2, 2, 2})), cov(doubled)));
  EXPECT_EQ(cov(tensor<double>({1, 2, 3})).dim(), 0);
  EXPECT_NEAR(corrcoef(x)[0][1].item<double>(), 1.0, 1e-12);
  EXPECT_EQ(cov(arange(3)).dtype(), kFloat32);
  EXPECT_THROW(cov(ones({2, 2, 2})), ShapeError);
  EXPECT_THROW(cov(x, 1, tensor<double>({1, 1, 1})), DTypeError);
  EXPECT_THROW(cov(x, 1, tensor<int64_t>({1, -1, 1})), ValueError);
  EXPECT_THROW(cov(x, 1, std::nullopt, tensor<double>({1, 1})), ShapeError);
}

TEST(NumericComposites, RenormScalesOnlyTheSlicesAboveMaxnorm) {
  const Tensor x = tensor<double>({3, 4, 0.3, 0.4}, {2, 2});
  const Tensor r = renorm(x, 2, 0, 1.0);
  EXPECT_NEAR(r[0][0].item<double>(), 0.6, 1e-6);
  EXPECT_EQ(r[1][1].item<double>(), 0.4);
  EXPECT_TRUE(allclose(renorm(x.t(), 2, -1, 1.0), r.t(), 1e-6));
  EXPECT_THROW(renorm(x, 0, 0, 1.0), ValueError);
  EXPECT_THROW(renorm(x, 2, 0, -1.0), ValueError);
  EXPECT_THROW(renorm(ones({3}), 2, 0, 1.0), ShapeError);
}

TEST(NumericComposites, GradientOfPolynomials) {
  // x^2 sampled at 0..4: exact in the interior, and at the ends to second order.
  const Tensor f = tensor<double>({0, 1, 4, 9, 16});
  EXPECT_EQ(values_of(gradient(f, std::vector<double>{1.0}, {0})[0]),
            (std::vector<double>{1, 2, 4, 6, 7}));
  EXPECT_EQ(values_of(gradient(f, std::vector<double>{1.0}, {-1}, 2)[0]),
            (std::vector<double>{0, 2, 4, 6, 8}));
  const Tensor coords = tensor<double>({0, 1, 2, 3, 4});
  EXPECT_TRUE(allclose(gradient(f, std::vector<Tensor>{coords}, {0}, 2)[0],
                       gradient(f, std::vector<double>{1.0}, {0}, 2)[0]));
  EXPECT_THROW(gradient(ones({2}), std::vector<double>{1.0}, {0}, 2), ValueError);
  EXPECT_THROW(gradient(f, std::vector<double>{1.0}, {0}, 3), ValueError);
  EXPECT_THROW(gradient(f, std::vector<Tensor>{ones({4})}, {0}), ShapeError);
}

TEST(NumericComposites, HistogramsCountEdgesInclusiveOnTheRight) {
  const Tensor x = tensor<float>({0, 1, 1, 2, 3, 4, 9});
  const HistogramResult h = histogram(x, 3, std::pair{0.0, 3.0});
  EXPECT_EQ(values_of(h.hist), (std::vector<double>{1, 2, 2}));  // 3 is in the last bin
  EXPECT_EQ(values_of(h.bin_edges), (std::vector<double>{0, 1, 2, 3}));
  EXPECT_EQ(values_of(histogram(zeros({0}), 2).bin_edges), (std::vector<double>{0, 0.5, 1}));
  EXPECT_EQ(values_of(histogram(scalar_tensor(2.0f), 1).bin_edges),
            (std::vector<double>{1.5, 2.5}));
  const HistogramddResult dd = histogramdd(x.view({-1, 1}).expand({7, 2}), {2, 1});
  EXPECT_EQ(values_of(dd.hist), (std::vector<double>{6, 1}));
  EXPECT_THROW(histogram(arange(3), 2), DTypeError);
  EXPECT_THROW(histogram(x, tensor<double>({0, 1})), DTypeError);
  EXPECT_THROW(histogram(x, 0), ValueError);
  EXPECT_THROW(histogramdd(ones({3, 2}), std::vector<int64_t>{2}), ValueError);
}

TEST(NumericComposites, SgnAndResolveNeg) {
  const Tensor x = tensor<float>({-2, 0, 3});
  EXPECT_EQ(values_of(sgn(x)), (std::vector<double>{-1, 0, 1}));
  EXPECT_TRUE(resolve_neg(x).is_same(x));
  const Tensor z = complex(tensor<float>({3, 0}), tensor<float>({4, 0}));
  EXPECT_TRUE(allclose(view_as_real(sgn(z)).flatten(), tensor<float>({0.6f, 0.8f, 0, 0})));
}

TEST(NumericComposites, TriangleIndicesAndUnravelIndex) {
  EXPECT_EQ(values_of(tril_indices(3, 3)),
            (std::vector<double>{0, 1, 1, 2, 2, 2, 0, 0, 1, 0, 1, 2}));
  EXPECT_EQ(values_of(triu_indices(2, 3, 1)), (std::vector<double>{0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(tril_indices(0, 4).sizes(), IntArrayRef({2, 0}));
  EXPECT_EQ(triu_indices(3, 3, 0, kMeta).sizes(), IntArrayRef({2, 6}));
  EXPECT_EQ(tril_indices(2, 2, 0, kFloat64).dtype(), kFloat64);
  EXPECT_THROW(tril_indices(-1, 2), ValueError);
  const std::vector<Tensor> c = unravel_index(tensor<int64_t>({7, -1}), {2, 4});
  EXPECT_EQ(values_of(c[0]), (std::vector<double>{1, 1}));  // -1 wraps, as Python's %
  EXPECT_EQ(values_of(c[1]), (std::vector<double>{3, 3}));
  EXPECT_TRUE(unravel_index(scalar_tensor(3, kInt64), {}).empty());
  EXPECT_THROW(unravel_index(ones({2}), {2}), DTypeError);
  EXPECT_THROW(unravel_index(tensor<int64_t>({1}), {-2}), ValueError);
}

TEST(SignalWindows, LengthsZeroAndOneAndDtypes) {
  namespace sw = signal::windows;
  EXPECT_EQ(sw::hann(0).sizes(), IntArrayRef({0}));
  EXPECT_EQ(values_of(sw::kaiser(1)), (std::vector<double>{1}));
  EXPECT_EQ(values_of(sw::gaussian(1)), (std::vector<double>{1}));
  EXPECT_EQ(sw::bartlett(4, true, kFloat64).dtype(), kFloat64);
  // A periodic window is the symmetric one of M + 1 points without its last.
  EXPECT_TRUE(allclose(sw::hann(6, false), sw::hann(7).narrow(0, 0, 6), 1e-6, 1e-7));
  EXPECT_NEAR(sw::hamming(5)[2].item<float>(), 1.0f, 1e-6f);
  EXPECT_THROW(sw::hann(-1), ValueError);
  EXPECT_THROW(sw::hann(3, true, kInt64), DTypeError);
  EXPECT_THROW(sw::gaussian(3, 0.0), ValueError);
  EXPECT_THROW(sw::exponential(3, 1.0), ValueError);  // a center needs sym=false
  EXPECT_THROW(sw::kaiser(3, -1.0), ValueError);
  EXPECT_THROW(sw::general_cosine(3, {}), ValueError);
}

}  // namespace
}  // namespace stride
