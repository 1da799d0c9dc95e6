// dtypes: promotion as PyTorch, and exact 16-bit float conversions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include <stride/stride.h>

namespace stride {
namespace {

TEST(Promotion, FollowsPyTorchLattice) {
  EXPECT_EQ(promote_types(kBool, kUInt8), kUInt8);
  EXPECT_EQ(promote_types(kUInt8, kInt32), kInt32);
  EXPECT_EQ(promote_types(kInt32, kInt64), kInt64);
  EXPECT_EQ(promote_types(kInt64, kFloat16), kFloat16);
  EXPECT_EQ(promote_types(kFloat16, kBFloat16), kFloat32);
  EXPECT_EQ(promote_types(kBFloat16, kFloat32), kFloat32);
  EXPECT_EQ(promote_types(kFloat32, kFloat64), kFloat64);
  EXPECT_EQ(promote_types(kFloat32, kComplex64), kComplex64);
  EXPECT_EQ(promote_types(kFloat64, kComplex64), kComplex128);
  EXPECT_EQ(promote_types(kInt64, kComplex64), kComplex64);
  EXPECT_EQ(promote_types(kBFloat16, kComplex64), kComplex64);
  EXPECT_EQ(promote_types(kComplex64, kComplex128), kComplex128);
  EXPECT_EQ(element_size(kComplex64), 8u);
  EXPECT_EQ(element_size(kComplex128), 16u);
  EXPECT_FALSE(is_floating_point(kComplex64));
  EXPECT_EQ(to_real_dtype(kComplex128), kFloat64);
  EXPECT_EQ(to_complex_dtype(kInt64), kComplex64);
}

TEST(Promotion, ScalarsAndZeroDimTensorsDoNotWidenWithinACategory) {
  Tensor f = ones({2});
  Tensor i = ones({2}, kInt64);
  EXPECT_EQ((f * 2.5).dtype(), kFloat32);
  EXPECT_EQ((i * 2).dtype(), kInt64);
  EXPECT_EQ((i * 2.5).dtype(), kFloat32);
  EXPECT_EQ((ones({2}, kBool) + 1).dtype(), kInt64);
  EXPECT_EQ((f + scalar_tensor(1.0, kFloat64)).dtype(), kFloat32);
  EXPECT_EQ((i + scalar_tensor(1.0, kFloat64)).dtype(), kFloat64);
  EXPECT_EQ((ones({2}, kInt32) + i).dtype(), kInt64);
  EXPECT_EQ(div(i, i).dtype(), kFloat32);  // true division
  EXPECT_EQ(exp(i).dtype(), kFloat32);
  EXPECT_EQ(ones({2}, kBFloat16).add(ones({2}, kFloat16)).dtype(), kFloat32);
  EXPECT_EQ(sum(ones({2}, kInt32)).dtype(), kInt64);
}

TEST(HalfFloats, EveryHalfRoundTripsThroughFloat) {
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    Half h;
    h.bits = uint16_t(bits);
    const float f = h;
    if (std::isnan(f)) continue;
    EXPECT_EQ(Half(f).bits, h.bits) << bits;
  }
}

// The compiler's IEEE half: GCC 12 has _Float16 in C++ on x86 only; on
// AArch64 its __fp16 (IEEE format there) converts with the same rounding.
#if defined(__aarch64__)
using HardwareHalf = __fp16;
#else
using HardwareHalf = _Float16;
#endif

TEST(HalfFloats, FloatToHalfRoundsToNearestEvenLikeTheHardware) {
  // The hardware's conversions are IEEE round-to-nearest-even: compare on a
  // dense sweep of float bit patterns, subnormals and overflow included.
  for (uint64_t bits = 0; bits < (1ull << 32); bits += 4099) {
    uint32_t b = uint32_t(bits);
    float f;
    std::memcpy(&f, &b, 4);
    if (std::isnan(f)) continue;
    HardwareHalf ref = static_cast<HardwareHalf>(f);
    uint16_t ref_bits;
    std::memcpy(&ref_bits, &ref, 2);
    ASSERT_EQ(Half(f).bits, ref_bits) << "float bits " << b;
  }
  EXPECT_TRUE(std::isnan(float(Half(std::nanf("")))));
}

TEST(BFloat16, RoundsToNearestEven) {
  EXPECT_EQ(BFloat16(1.0f).bits, 0x3f80);
  // 1 + 2^-8 is halfway between two bfloat16s: ties go to the even one.
  EXPECT_EQ(BFloat16(1.00390625f).bits, 0x3f80);
  EXPECT_EQ(BFloat16(1.01171875f).bits, 0x3f82);
  EXPECT_EQ(float(BFloat16(3.0f)), 3.0f);
  EXPECT_TRUE(std::isnan(float(BFloat16(std::nanf("")))));
  EXPECT_EQ(float(BFloat16(INFINITY)), INFINITY);
}

TEST(HalfFloats, TensorsStoreAndConvert) {
  Tensor x = tensor<float>({1.5f, -2.25f, 65504.f, 1e-7f});
  Tensor h = x.to(kFloat16);
  EXPECT_EQ(h.element_size(), 2u);
  EXPECT_EQ(h.to(kFloat32).to_vector<float>()[2], 65504.f);
  Tensor b = x.to(kBFloat16);
  EXPECT_EQ(b.to(kFloat32).to_vector<float>()[0], 1.5f);
  EXPECT_EQ((b * 2).dtype(), kBFloat16);
  EXPECT_EQ((b * 2).to(kFloat32).to_vector<float>()[1], -4.5f);
}

}  // namespace
}  // namespace stride
