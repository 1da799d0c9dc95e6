// complex64 and complex128: views of the parts share the storage, copies
// convert as PyTorch's, a complex Scalar promotes, ops without complex
// support refuse with a DTypeError naming them, and the transforms of any
// length invert each other and match the DFT's definition.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>
#include <sstream>

#include <stride/stride.h>

#include "support/error_message.h"

namespace stride {
namespace {

using testing::message_of;
using C = std::complex<double>;

Tensor complex_of(const std::vector<C>& values) {
  std::vector<double> parts;
  for (const C& v : values) {
    parts.push_back(v.real());
    parts.push_back(v.imag());
  }
  return view_as_complex(tensor(parts, {int64_t(values.size()), 2}));
}

TEST(Complex, PartsAreViewsOfTheStorage) {
  Tensor z = complex_of({{1, 2}, {3, -4}});
  EXPECT_EQ(z.dtype(), kComplex128);
  Tensor re = real(z), im = imag(z);
  re.fill_(0.5);
  im.select(0, 1).fill_(7.0);
  EXPECT_EQ(z.to_vector<C>(), (std::vector<C>{{0.5, 2}, {0.5, 7}}));
  Tensor r = view_as_real(z.select(0, 1));
  EXPECT_EQ(r.storage_offset(), 2);
  EXPECT_EQ(view_as_complex(r).to_vector<C>(), std::vector<C>{C(0.5, 7)});
}

TEST(Complex, CopiesConvertAsPyTorch) {
  EXPECT_EQ(tensor<double>({1.0, -2.0}).to(kComplex64).to_vector<std::complex<float>>(),
            (std::vector<std::complex<float>>{{1, 0}, {-2, 0}}));
  // The imaginary part is dropped, as PyTorch's copy_ (which warns).
  EXPECT_EQ(complex_of({{1, 2}, {3, 4}}).to(kFloat32).to_vector<float>(),
            (std::vector<float>{1, 3}));
  EXPECT_EQ(complex_of({{0, 2}, {0, 0}}).to(kBool).to_vector<bool>(),
            (std::vector<bool>{true, false}));
}

TEST(Complex, ComplexScalarsPromote) {
  const Tensor f = ones({2}), d = ones({2}, kFloat64);
  EXPECT_EQ((f * Scalar(C(0, 1))).dtype(), kComplex64);
  EXPECT_EQ((d * Scalar(C(0, 1))).dtype(), kComplex128);
  EXPECT_EQ((f * Scalar(C(0, 1))).to_vector<std::complex<float>>()[0], std::complex<float>(0, 1));
  EXPECT_EQ(scalar_tensor(Scalar(C(2, -1)), kComplex128).item().to_complex(), C(2, -1));
}

TEST(Complex, PrintsAsPyTorch) {
  std::ostringstream os;
  os << complex_of({{1, 2}, {3, -1}}).to(kComplex64);
  EXPECT_EQ(os.str(), "tensor([1.+2.j, 3.-1.j])");
}

TEST(Complex, OpsWithoutComplexSupportNameThemselves) {
  const Tensor z = complex_of({{1, 2}, {3, 4}});
  const auto refuses = [&](const char* op, const std::function<void()>& f) {
    const std::string msg = message_of<DTypeError>(f);
    EXPECT_NE(msg.find(std::string("[") + op + "]"), std::string::npos) << op << ": " << msg;
  };
  refuses("sin", [&] { (void)sin(z); });
  refuses("maximum", [&] { (void)maximum(z, z); });
  refuses("matmul", [&] { (void)matmul(z.view({1, 2}), z.view({2, 1})); });
  refuses("cumsum", [&] { (void)cumsum(z, 0); });
  refuses("softmax", [&] { (void)softmax(z, 0); });
  refuses("fft.rfft", [&] { (void)fft::rfft(z); });
  refuses("imag", [&] { (void)imag(ones({2})); });
  refuses("view_as_real", [&] { (void)view_as_real(ones({2})); });
}

// The DFT from its definition, sum_k x[k] e^(-2 pi i jk / n).
std::vector<C> dft(const std::vector<C>& x) {
  const size_t n = x.size();
  std::vector<C> out(n);
  for (size_t j = 0; j < n; ++j) {
    for (size_t k = 0; k < n; ++k) {
      out[j] += x[k] * std::polar(1.0, -2 * std::numbers::pi * double(j * k % n) / double(n));
    }
  }
  return out;
}

TEST(Fft, AnyLengthMatchesTheDefinitionAndInverts) {
  for (const int64_t n : {1, 2, 5, 7, 12, 13, 30, 97}) {
    std::vector<C> x;
    for (int64_t k = 0; k < n; ++k) x.emplace_back(std::sin(double(k) * 0.7), std::cos(double(k)));
    const Tensor z = complex_of(x);
    const std::vector<C> got = fft::fft(z).to_vector<C>(), want = dft(x);
    for (size_t j = 0; j < want.size(); ++j) EXPECT_LT(std::abs(got[j] - want[j]), 1e-10) << n;
    const std::vector<C> back = fft::ifft(fft::fft(z)).to_vector<C>();
    for (size_t j = 0; j < x.size(); ++j) EXPECT_LT(std::abs(back[j] - x[j]), 1e-12) << n;
  }
}

TEST(Fft, RealTransformsRoundTrip) {
  const Tensor x = randn({3, 11}, kFloat64);
  EXPECT_TRUE(allclose(fft::irfft(fft::rfft(x), 11), x, 1e-12, 1e-12));
  EXPECT_TRUE(allclose(fft::hfft(fft::ihfft(x), 11), x, 1e-12, 1e-12));
  EXPECT_TRUE(allclose(fft::irfftn(fft::rfftn(x), std::vector<int64_t>{3, 11}), x, 1e-12, 1e-12));
}

}  // namespace
}  // namespace stride
