// stride::cpu::vec::exp against exp in double, rounded errors counted in
// float ulps at the true value: a strided sweep over every float bit pattern
// whose result is finite and nonzero, the overflow/underflow edges, the
// special values, and exp_array on every tail length.
#include "backends/cpu/vec_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace stride::cpu::vec {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
// An exhaustive run over all floats measured 1.01 ulp (0.75 where the result
// is subnormal); the bound leaves room for another compiler's rounding.
constexpr double kMaxUlp = 1.5;

float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof(f));
  return f;
}

// |got - exp(x)| in units of the float ulp at exp(x); subnormals have ulp
// 2^-149. Infinity is right only where exp(x) rounds to it.
double ulp_error(float x, float got) {
  const double ref = std::exp(double(x));
  if (std::isinf(got) || float(ref) == kInf) return float(ref) == got ? 0.0 : kInf;
  int e;
  std::frexp(ref, &e);  // ref = m * 2^e, m in [0.5, 1)
  const double ulp = std::ldexp(1.0, std::max(e - 24, -149));
  return std::abs(double(got) - ref) / ulp;
}

// exp of `xs` through exp_array (vector and tail lanes alike).
std::vector<float> vec_exp(const std::vector<float>& xs) {
  std::vector<float> out(xs.size());
  exp_array(xs.data(), out.data(), int64_t(xs.size()));
  return out;
}

struct Sweep {
  double max_ulp = 0;
  float worst_x = 0;
};

// Every `step`-th bit pattern in [lo, hi].
Sweep sweep(uint32_t lo, uint32_t hi, uint32_t step) {
  std::vector<float> xs;
  for (uint64_t b = lo; b <= hi; b += step) xs.push_back(from_bits(uint32_t(b)));
  const std::vector<float> ys = vec_exp(xs);
  Sweep s;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double err = ulp_error(xs[i], ys[i]);
    if (err > s.max_ulp) s = {err, xs[i]};
  }
  return s;
}

TEST(VecMath, ExpWithinUlpBoundOverPositiveInputs) {
  // +0 up to 89 (past ln(FLT_MAX) ~ 88.72).
  const Sweep s = sweep(0x00000000u, 0x42B20000u, 61);
  EXPECT_LE(s.max_ulp, kMaxUlp) << "worst x = " << s.worst_x;
}

TEST(VecMath, ExpWithinUlpBoundOverNegativeInputs) {
  // -0 down to -104 (past ln(2^-150) ~ -103.97): results reach the subnormals.
  const Sweep s = sweep(0x80000000u, 0xC2D00000u, 61);
  EXPECT_LE(s.max_ulp, kMaxUlp) << "worst x = " << s.worst_x;
}

TEST(VecMath, ExpDenseAroundZeroAndEdges) {
  // Every float in small windows where the reduction or the scaling changes.
  for (float centre : {0.0f, 0.34657359f, -0.34657359f, 1.0f, -1.0f, 88.0f, 88.7228f, -87.33654f,
                       -103.27893f, -103.97208f}) {
    uint32_t c;
    std::memcpy(&c, &centre, sizeof(c));
    const Sweep s = sweep(c - 20000, c + 20000, 1);
    EXPECT_LE(s.max_ulp, kMaxUlp) << "near " << centre << ", worst x = " << s.worst_x;
  }
}

TEST(VecMath, ExpOverflowsToInfAndUnderflowsToZero) {
  // ln(FLT_MAX) = 88.7228391...: the float below still has a finite result.
  const float last_finite = 88.72283f, first_inf = 88.7228470f;
  const std::vector<float> xs{last_finite, first_inf, 89.0f,   100.0f, 1e10f, 3e38f,
                              -103.9720f,  -104.0f,   -110.0f, -1e10f, -3e38f};
  const std::vector<float> ys = vec_exp(xs);
  EXPECT_TRUE(std::isfinite(ys[0]));
  EXPECT_LE(ulp_error(xs[0], ys[0]), kMaxUlp);
  for (size_t i = 1; i < 6; ++i) EXPECT_EQ(ys[i], kInf) << "x = " << xs[i];
  EXPECT_GT(ys[6], 0.0f);  // exp(-103.972) ~ 1.4e-45, the smallest subnormal
  for (size_t i = 7; i < xs.size(); ++i) EXPECT_EQ(ys[i], 0.0f) << "x = " << xs[i];
}

TEST(VecMath, ExpSpecialValues) {
  const std::vector<float> ys = vec_exp({kInf, -kInf, kNaN, -kNaN, 0.0f, -0.0f});
  EXPECT_EQ(ys[0], kInf);
  EXPECT_EQ(ys[1], 0.0f);
  EXPECT_TRUE(std::isnan(ys[2]));
  EXPECT_TRUE(std::isnan(ys[3]));
  EXPECT_EQ(ys[4], 1.0f);
  EXPECT_EQ(ys[5], 1.0f);
}

TEST(VecMath, ExpArrayCoversEveryTailLengthInPlace) {
  // Each element gets the same bits whether it falls in a full vector or in
  // the tail, and the array may be its own output.
  std::vector<float> all(3 * kLanes);
  for (size_t i = 0; i < all.size(); ++i) all[i] = -8.0f + 0.37f * float(i);
  const std::vector<float> want = vec_exp(all);
  for (int64_t n = 0; n <= 3 * kLanes; ++n) {
    std::vector<float> buf(all.begin(), all.begin() + n);
    buf.push_back(-1.0f);  // a sentinel past the end stays untouched
    exp_array(buf.data(), buf.data(), n);
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(buf[size_t(i)], want[size_t(i)]) << n << " " << i;
    EXPECT_EQ(buf[size_t(n)], -1.0f);
  }
}

TEST(VecMath, SigmoidLimitsAndValues) {
  const std::vector<float> xs{-200.0f, -80.0f, -10.0f, -1.0f, 0.0f, 1.0f, 10.0f, 200.0f};
  Vec16f v = broadcast(0.0f);
  for (size_t i = 0; i < xs.size(); ++i) v[i] = xs[i];
  const Vec16f s = sigmoid(v);
  for (size_t i = 1; i + 1 < xs.size(); ++i) {
    const double ref = 1.0 / (1.0 + std::exp(-double(xs[i])));
    EXPECT_NEAR(double(s[i]), ref, 4e-7 * ref) << "x = " << xs[i];
  }
  EXPECT_EQ(s[0], 0.0f);  // e^200 overflows to inf
  EXPECT_EQ(s[7], 1.0f);
}

}  // namespace
}  // namespace stride::cpu::vec
