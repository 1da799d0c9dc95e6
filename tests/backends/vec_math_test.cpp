// The vec_math.h functions against libm in double, errors counted in float
// ulps at the true value: strided sweeps over the float bit patterns, dense
// windows where a reduction or a branch changes, the overflow/underflow
// edges, the special values (std::'s results: the scalar kernels' behaviour),
// and every tail length.
#include "backends/cpu/vec_math.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <numbers>
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

// |got - ref| in units of the float ulp at ref; subnormals have ulp 2^-149.
// Infinity is right only where ref rounds to it, NaN only where ref is NaN.
double ulp_error_of(double ref, float got) {
  if (std::isnan(got) || std::isnan(ref)) return std::isnan(got) && std::isnan(ref) ? 0.0 : kInf;
  if (std::isinf(got) || std::isinf(float(ref))) return float(ref) == got ? 0.0 : kInf;
  int e;
  std::frexp(ref, &e);  // ref = m * 2^e, m in [0.5, 1)
  const double ulp = std::ldexp(1.0, std::max(e - 24, -149));
  return std::abs(double(got) - ref) / ulp;
}

// |got - exp(x)| in float ulps at exp(x).
double ulp_error(float x, float got) {
  return ulp_error_of(std::exp(double(x)), got);
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

// range_of's pairs of vectors, its single vectors and its partial tail: the
// max, the min and a NaN are found wherever they lie, and nothing past n is
// read as a value (a larger and a smaller sentinel follow the array).
TEST(VecMath, RangeOfFindsTheMaxMinAndAnyNanAtEveryPosition) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(range_of(nullptr, 0).max, -inf);
  EXPECT_EQ(range_of(nullptr, 0).min, inf);
  for (int64_t n = 1; n <= 3 * kLanes + 5; ++n) {
    std::vector<float> x(size_t(n) + 2);
    for (int64_t i = 0; i < n; ++i) x[size_t(i)] = -100.0f - float(i % 7);
    x[size_t(n)] = 1e30f;
    x[size_t(n) + 1] = -1e30f;
    for (int64_t at = 0; at < n; ++at) {
      std::vector<float> y = x;
      y[size_t(at)] = -1.5f;
      EXPECT_EQ(range_of(y.data(), n).max, -1.5f) << n << " " << at;
      y[size_t(at)] = -200.0f;
      EXPECT_EQ(range_of(y.data(), n).min, -200.0f) << n << " " << at;
      y[size_t(at)] = std::numeric_limits<float>::quiet_NaN();
      const Range r = range_of(y.data(), n);
      EXPECT_TRUE(std::isnan(r.max)) << n << " " << at;
      float want_min = inf;  // the NaN is skipped
      for (int64_t i = 0; i < n; ++i) {
        if (i != at) want_min = std::min(want_min, y[size_t(i)]);
      }
      EXPECT_EQ(r.min, want_min) << n << " " << at;
    }
    std::vector<float> all_neg_inf(size_t(n), -inf);
    EXPECT_EQ(range_of(all_neg_inf.data(), n).max, -inf) << n;
    EXPECT_EQ(range_of(all_neg_inf.data(), n).min, -inf) << n;
  }
}

// On [-87, 88], where e^x is a normal float, exp_lanes's one-factor path
// gives exp_any_lanes's bits: every 7th float of the range, and every float
// near its ends and where the one-factor scale changes exponent. A vector
// with one lane outside the range takes exp_any_lanes whole; its other lanes
// keep their bits.
TEST(VecMath, ExpCommonCaseMatchesTheGeneralPathBitForBit) {
  using V = NativeVec;
  constexpr int64_t W = kNativeLanes;
  std::vector<float> xs;
  for (uint64_t b = 0x00000000u; b <= 0x42B00000u; b += 7) xs.push_back(from_bits(uint32_t(b)));
  for (uint64_t b = 0x80000000u; b <= 0xC2AE0000u; b += 7) xs.push_back(from_bits(uint32_t(b)));
  for (float edge : {-87.0f, 88.0f, -86.6434f, 87.3365f}) {
    uint32_t c;
    std::memcpy(&c, &edge, sizeof(c));
    for (uint32_t b = c - 5000; b <= c + 5000; ++b) {
      const float x = from_bits(b);
      if (x >= -87.0f && x <= 88.0f) xs.push_back(x);
    }
  }
  while (xs.size() % size_t(W) != 0) xs.push_back(0.0f);
  size_t mismatches = 0;
  float first_bad = 0;
  for (size_t i = 0; i < xs.size(); i += size_t(W)) {
    const V x = load_native(xs.data() + i);
    const V fast = detail::exp_lanes(x), any = detail::exp_any_lanes(x);
    V mixed = x;
    mixed[i / size_t(W) % size_t(W)] = -100.0f;
    const V slow = detail::exp_lanes(mixed);
    for (int64_t l = 0; l < W; ++l) {
      const bool same = std::bit_cast<uint32_t>(fast[l]) == std::bit_cast<uint32_t>(any[l]) &&
                        (mixed[l] == -100.0f ||
                         std::bit_cast<uint32_t>(slow[l]) == std::bit_cast<uint32_t>(fast[l]));
      if (!same && mismatches++ == 0) first_bad = x[l];
    }
  }
  EXPECT_EQ(mismatches, 0u) << "first at x = " << first_bad;
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

// The lane sum adds halves of halves: ((v0+v8) + (v4+v12)) + ... in a fixed
// tree, so its bits are known; the max sees every lane.
TEST(VecMath, SumAndMaxOfLanes) {
  Vec16f v;
  for (int l = 0; l < kLanes; ++l) v[l] = float(l + 1);
  EXPECT_EQ(sum_lanes(v), 136.0f);
  EXPECT_EQ(max_lanes(v), 16.0f);
  // 1 + 2^-24 lanes: added in lane order they would round differently than
  // in the tree; the tree's result is what sum_lanes must give.
  Vec16f w = broadcast(0.0f);
  w[0] = 1.0f;
  for (int l = 1; l < kLanes; ++l) w[l] = std::ldexp(1.0f, -24);
  float tree[16];
  for (int l = 0; l < 8; ++l) tree[l] = w[l] + w[l + 8];
  for (int l = 0; l < 4; ++l) tree[l] = tree[l] + tree[l + 4];
  EXPECT_EQ(sum_lanes(w), (tree[0] + tree[2]) + (tree[1] + tree[3]));
  for (int at = 0; at < kLanes; ++at) {
    Vec16f m = broadcast(-std::numeric_limits<float>::infinity());
    m[at] = -3.5f;
    EXPECT_EQ(max_lanes(m), -3.5f) << "lane " << at;
  }
  EXPECT_EQ(max_lanes(broadcast(-std::numeric_limits<float>::infinity())),
            -std::numeric_limits<float>::infinity());
}

// The register-width tails: the first n lanes come from memory and the rest
// are the fill; a store writes the first n lanes and nothing past them.
TEST(VecMath, NativeTailsLoadAndStoreExactlyTheirLanes) {
  constexpr int64_t W = kNativeLanes;
  std::vector<float> src(static_cast<size_t>(W)), dst(static_cast<size_t>(W) + 1);
  for (int64_t l = 0; l < W; ++l) src[size_t(l)] = float(l + 1);
  for (int64_t n = 0; n <= W; ++n) {
    const NativeVec v = load_native_n(src.data(), n, -7.0f);
    for (int64_t l = 0; l < W; ++l) {
      EXPECT_EQ(v[l], l < n ? float(l + 1) : -7.0f) << "n " << n << " lane " << l;
    }
    std::fill(dst.begin(), dst.end(), -1.0f);
    store_native_n(dst.data(), v * 2.0f, n);
    for (int64_t l = 0; l <= W; ++l) {
      EXPECT_EQ(dst[size_t(l)], l < n ? 2.0f * float(l + 1) : -1.0f) << "n " << n << " lane " << l;
    }
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

// ---- normal_cdf, gelu, tanh, log, sigmoid ----

using VecFn = std::function<Vec16f(Vec16f)>;
using RefFn = std::function<double(double)>;
// The ulp error allowed at x.
using BoundFn = std::function<double(float x)>;

// f over xs, 16 lanes at a time with a partial last block, as the kernels.
std::vector<float> vec_apply(const VecFn& f, const std::vector<float>& xs) {
  std::vector<float> out(xs.size());
  for_each_block(0, int64_t(xs.size()), [&](int64_t i, int64_t n) {
    store_n(out.data() + i, f(load_n(xs.data() + i, n)), n);
  });
  return out;
}

struct Check {
  double max_ulp = 0;  // the largest error seen
  float worst_x = 0;   // where the error is largest relative to its bound
  double worst_ratio = 0;
  bool ok() const { return worst_ratio <= 1.0; }
};

Check check_points(const VecFn& f,
                   const RefFn& ref,
                   const BoundFn& bound,
                   const std::vector<float>& xs) {
  const std::vector<float> ys = vec_apply(f, xs);
  Check c;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double err = ulp_error_of(ref(double(xs[i])), ys[i]);
    c.max_ulp = std::max(c.max_ulp, err);
    const double ratio = err / bound(xs[i]);
    if (!(ratio <= c.worst_ratio)) {
      c.worst_ratio = ratio;
      c.worst_x = xs[i];
    }
  }
  return c;
}

// Every `step`-th bit pattern in [lo, hi].
Check check_bits(const VecFn& f,
                 const RefFn& ref,
                 const BoundFn& bound,
                 uint32_t lo,
                 uint32_t hi,
                 uint32_t step) {
  std::vector<float> xs;
  for (uint64_t b = lo; b <= hi; b += step) xs.push_back(from_bits(uint32_t(b)));
  return check_points(f, ref, bound, xs);
}

// Every float within `half` bit patterns of each centre.
Check check_windows(const VecFn& f,
                    const RefFn& ref,
                    const BoundFn& bound,
                    std::initializer_list<float> centres,
                    uint32_t half = 20000) {
  std::vector<float> xs;
  for (float c : centres) {
    uint32_t b;
    std::memcpy(&b, &c, sizeof(b));
    for (uint32_t k = b - std::min(b & 0x7FFFFFFFu, half); k <= b + half; ++k)
      xs.push_back(from_bits(k));
  }
  return check_points(f, ref, bound, xs);
}

BoundFn flat(double ulp) {
  return [ulp](float) { return ulp; };
}

#define EXPECT_WITHIN_BOUND(check)                                                    \
  do {                                                                                \
    const Check c_ = (check);                                                         \
    EXPECT_TRUE(c_.ok()) << "worst x = " << c_.worst_x << " (" << c_.worst_ratio      \
                         << " of its bound); largest error " << c_.max_ulp << " ulp"; \
  } while (0)

// Bit patterns of a few float magnitudes, for sweep ranges.
constexpr uint32_t kBitsOf4p5 = 0x40900000u, kBitsOf10 = 0x41200000u, kBitsOfInf = 0x7F800000u;
constexpr uint32_t kSign = 0x80000000u;
const float kDenormMin = std::numeric_limits<float>::denorm_min();
const float kFltMin = std::numeric_limits<float>::min();
const float kFltMax = std::numeric_limits<float>::max();

// Measured over every float (a one-off exhaustive run; tanh is odd by
// construction): tanh 0.95 ulp, log 0.88. The bounds leave room for another
// compiler's contraction choices.
constexpr double kTanhMaxUlp = 1.25, kLogMaxUlp = 1.0;

// normal_cdf and gelu, relative: <= 3 ulp for x >= -1.3 (measured 2.7 and
// 2.3), then the rounding of their exponent grows as x^2: <= 2.5 x^2 ulp
// down to -5.6 (measured 1.7 x^2 and 2.2 x^2). Below -4 sqrt 2 both are 0
// (the true values are below 1.6e-8 and 4.4e-8).
// Without FMA (the x86-64 baseline level, Note [CPU capabilities]) each
// polynomial step rounds twice: measured up to 1.26 times these bounds.
#if defined(__FMA__) || defined(__aarch64__)
constexpr double kCdfSlack = 1.0;
#else
constexpr double kCdfSlack = 1.4;
#endif
double cdf_bound(float x) {
  return kCdfSlack * (x >= -1.3f ? 3.0 : 2.5 * double(x) * double(x));
}
double normal_cdf_ref(double x) {
  return 0.5 * std::erfc(-x / std::numbers::sqrt2);
}
double gelu_ref(double x) {
  return x * normal_cdf_ref(x);
}
constexpr uint32_t kBitsOf5p6 = 0x40B33333u;

TEST(VecMath, NormalCdfKeepsRelativeAccuracyInTheLowerTail) {
  const VecFn f = [](Vec16f v) { return normal_cdf(v); };
  EXPECT_WITHIN_BOUND(check_bits(f, normal_cdf_ref, cdf_bound, kSign, kSign | kBitsOf5p6, 127));
  EXPECT_WITHIN_BOUND(check_bits(f, normal_cdf_ref, cdf_bound, 0, kBitsOfInf, 257));
  EXPECT_WITHIN_BOUND(check_windows(f, normal_cdf_ref, cdf_bound, {0.0f, -1.3f, 5.6568542f}, 4000));
  const std::vector<float> ys =
      vec_apply(f, {-5.6568546f, -10.0f, -kInf, kInf, kNaN, -0.0f, 40.0f});
  EXPECT_EQ(ys[0], 0.0f);
  EXPECT_EQ(ys[1], 0.0f);
  EXPECT_EQ(ys[2], 0.0f);
  EXPECT_EQ(ys[3], 1.0f);
  EXPECT_TRUE(std::isnan(ys[4]));
  EXPECT_EQ(ys[5], 0.5f);
  EXPECT_EQ(ys[6], 1.0f);
}

TEST(VecMath, GeluWithinUlpBound) {
  const VecFn f = [](Vec16f v) { return gelu(v); };
  EXPECT_WITHIN_BOUND(check_bits(f, gelu_ref, cdf_bound, kSign, kSign | kBitsOf5p6, 127));
  EXPECT_WITHIN_BOUND(check_bits(f, gelu_ref, cdf_bound, 0, kBitsOf10, 127));
  EXPECT_WITHIN_BOUND(check_bits(f, gelu_ref, cdf_bound, kBitsOf10, 0x7F7FFFFFu, 4099));
  std::vector<float> far;
  for (float x = -5.6f; x > -20.0f; x -= 0.001f) far.push_back(x);
  const std::vector<float> ys = vec_apply(f, far);
  for (size_t i = 0; i < far.size(); ++i)
    ASSERT_LE(std::abs(double(ys[i]) - gelu_ref(far[i])), 4.5e-8) << "x = " << far[i];
}

TEST(VecMath, GeluSpecialValues) {
  // As 0.5 x (1 + erf(x / sqrt 2)) with std::erf: gelu(-inf) = -inf * 0.
  const VecFn f = [](Vec16f v) { return gelu(v); };
  const std::vector<float> ys = vec_apply(f, {0.0f, -0.0f, kInf, -kInf, kNaN, -30.0f, kDenormMin});
  EXPECT_EQ(ys[0], 0.0f);
  EXPECT_FALSE(std::signbit(ys[0]));
  EXPECT_EQ(ys[1], 0.0f);
  EXPECT_TRUE(std::signbit(ys[1]));
  EXPECT_EQ(ys[2], kInf);
  EXPECT_TRUE(std::isnan(ys[3]));
  EXPECT_TRUE(std::isnan(ys[4]));
  EXPECT_EQ(ys[5], 0.0f);
  EXPECT_TRUE(std::signbit(ys[5]));
  EXPECT_EQ(ys[6], 0.0f);  // 2^-149 / 2 rounds to even: 0, as the scalar formula
}

const VecFn vec_tanh = [](Vec16f v) { return tanh(v); };
const RefFn ref_tanh = [](double x) { return std::tanh(x); };

TEST(VecMath, TanhWithinUlpBound) {
  const BoundFn b = flat(kTanhMaxUlp);
  EXPECT_WITHIN_BOUND(check_bits(vec_tanh, ref_tanh, b, 0, kBitsOf10, 127));
  EXPECT_WITHIN_BOUND(check_bits(vec_tanh, ref_tanh, b, kSign, kSign | kBitsOf10, 257));
  EXPECT_WITHIN_BOUND(check_bits(vec_tanh, ref_tanh, b, kBitsOf10, kBitsOfInf, 4099));
  EXPECT_WITHIN_BOUND(
      check_bits(vec_tanh, ref_tanh, b, kSign | kBitsOf10, kSign | kBitsOfInf, 4099));
  // The branch point, tanh = 0.5, saturation to 1, and e^2x overflowing.
  EXPECT_WITHIN_BOUND(check_windows(vec_tanh, ref_tanh, b,
                                    {0.0f, 1.0f, -1.0f, 0.54930615f, 9.0109133f, 44.36142f}));
}

TEST(VecMath, TanhSpecialValues) {
  const std::vector<float> xs{0.0f, -0.0f, kInf, -kInf, kNaN, kDenormMin, -kFltMin, 1e-20f, 100.0f};
  const std::vector<float> ys = vec_apply(vec_tanh, xs);
  EXPECT_EQ(ys[0], 0.0f);
  EXPECT_FALSE(std::signbit(ys[0]));
  EXPECT_EQ(ys[1], 0.0f);
  EXPECT_TRUE(std::signbit(ys[1]));
  EXPECT_EQ(ys[2], 1.0f);
  EXPECT_EQ(ys[3], -1.0f);
  EXPECT_TRUE(std::isnan(ys[4]));
  for (size_t i = 5; i < 8; ++i) EXPECT_EQ(ys[i], xs[i]) << "tanh(x) = x for tiny x";
  EXPECT_EQ(ys[8], 1.0f);
}

const VecFn vec_log = [](Vec16f v) { return log(v); };
const RefFn ref_log = [](double x) { return std::log(x); };

TEST(VecMath, LogWithinUlpBound) {
  const BoundFn b = flat(kLogMaxUlp);
  // Every positive finite float, subnormals included.
  EXPECT_WITHIN_BOUND(check_bits(vec_log, ref_log, b, 1, 0x7F7FFFFFu, 127));
  // Around 1 (result near 0), where m wraps at sqrt(1/2) and sqrt(2), at the
  // subnormal boundary and at the ends.
  EXPECT_WITHIN_BOUND(check_windows(
      vec_log, ref_log, b, {1.0f, 0.70710677f, 1.4142135f, 2.828427f, kFltMin, kFltMax, 3e-45f}));
}

TEST(VecMath, LogSpecialValues) {
  const std::vector<float> xs{0.0f, -0.0f, -1.0f, -kInf, kInf, kNaN, 1.0f, -kDenormMin, kDenormMin};
  const std::vector<float> ys = vec_apply(vec_log, xs);
  EXPECT_EQ(ys[0], -kInf);
  EXPECT_EQ(ys[1], -kInf);
  EXPECT_TRUE(std::isnan(ys[2]));
  EXPECT_TRUE(std::isnan(ys[3]));
  EXPECT_EQ(ys[4], kInf);
  EXPECT_TRUE(std::isnan(ys[5]));
  EXPECT_EQ(ys[6], 0.0f);
  EXPECT_FALSE(std::signbit(ys[6]));
  EXPECT_TRUE(std::isnan(ys[7]));
  EXPECT_EQ(ys[8], std::log(kDenormMin));  // -103.28, not -inf: no flush
}

// 1 / (1 + e^-x): errors of e^-x, the sum and the division, measured 2.3 ulp
// while the result is normal (x > -87.3); beyond -88.7 e^-x overflows and
// the result is 0 (the scalar formula does the same).
TEST(VecMath, SigmoidWithinUlpBound) {
  const VecFn f = [](Vec16f v) { return sigmoid(v); };
  const RefFn ref = [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
  const uint32_t bits_of_87 = 0x42AE0000u;
  EXPECT_WITHIN_BOUND(check_bits(f, ref, flat(2.5), kSign, kSign | bits_of_87, 127));
  EXPECT_WITHIN_BOUND(check_bits(f, ref, flat(2.5), 0, kBitsOfInf, 257));
}

TEST(VecMath, NewFunctionsGiveEachLaneTheSameBitsInFullAndPartialBlocks) {
  // A value computed in lane k of a full block or of a padded last block
  // (any prefix length) has the same bits: what thread-count independence of
  // the kernels rests on.
  std::vector<float> all(3 * kLanes);
  for (size_t i = 0; i < all.size(); ++i) all[i] = -6.0f + 0.29f * float(i);
  for (const VecFn& f : {vec_tanh, VecFn([](Vec16f v) { return gelu(v); }),
                         VecFn([](Vec16f v) { return normal_cdf(v); })}) {
    const std::vector<float> want = vec_apply(f, all);
    for (size_t n = 0; n <= all.size(); ++n) {
      const std::vector<float> got = vec_apply(f, std::vector<float>(all.begin(), all.begin() + n));
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], want[i]) << n << " " << i;
    }
  }
  std::vector<float> pos(all.size());
  for (size_t i = 0; i < pos.size(); ++i) pos[i] = 0.01f + 0.37f * float(i);
  const std::vector<float> want = vec_apply(vec_log, pos);
  for (size_t n = 0; n <= pos.size(); ++n) {
    const std::vector<float> got =
        vec_apply(vec_log, std::vector<float>(pos.begin(), pos.begin() + n));
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], want[i]) << n << " " << i;
  }
}

}  // namespace
}  // namespace stride::cpu::vec
