// The CPU's elementwise kernels against the functors every device expands
// (backends/elementwise_math.h):
//   - each op of the lists of core/op_list.h gives, element by element, the
//     bits of its functor, for every dtype it takes, in every input layout,
//     at a length that ends in a partial vector block. The float32 ops that
//     the CPU runs through a vec_math.h form are compared within that form's
//     error bound instead (vec_math_test.cpp measures the forms);
//   - on float16 and bfloat16, every elementwise op (the listed ones and
//     those written out) gives the bits of its float32 result on the widened
//     inputs, rounded once (Note [16-bit elementwise] in loops.h).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cpu/special_math.h"
#include "backends/elementwise_math.h"
#include "core/op_list.h"
#include "support/layouts.h"

namespace stride {
namespace {

using testing::Domain;
using testing::Layout;

// 5 x 300: runs longer than vec_kernel's 256-element buffer, ending in a
// partial 16-lane block.
const DimVector kShape{5, 300};

Tensor input_of(ScalarType dtype, Layout layout, Domain domain, uint64_t seed) {
  Generator gen(seed);
  return testing::make_input(kShape, dtype, layout, domain, gen);
}

// The elements of `t` in row-major order, as T.
template <class T>
std::vector<T> values_of(const Tensor& t) {
  const Tensor c = t.contiguous();
  const T* p = c.data_ptr<T>();
  return std::vector<T>(p, p + c.numel());
}

// Where got's bits differ from want's: "" when they all agree.
template <class T>
std::string first_difference(const std::vector<T>& got, const std::vector<T>& want) {
  for (size_t i = 0; i < want.size(); ++i) {
    const T g = got[i], w = want[i];  // vector<bool> holds no addressable bools
    if (std::memcmp(&g, &w, sizeof(T)) != 0)
      return "element " + std::to_string(i) + ": got " + std::to_string(double(g)) + ", want " +
             std::to_string(double(w));
  }
  return "";
}

// The functor of Op over x's elements, in T.
template <class T, class Op>
std::vector<T> unary_reference(const Tensor& x) {
  std::vector<T> r;
  for (T v : values_of<T>(x)) r.push_back(Op{}(v));
  return r;
}
template <class T, class Op>
auto binary_reference(const Tensor& a, const Tensor& b) {
  const std::vector<T> x = values_of<T>(a), y = values_of<T>(b);
  std::vector<decltype(Op{}(T{}, T{}))> r;
  for (size_t i = 0; i < x.size(); ++i) r.push_back(Op{}(x[i], y[i]));
  return r;
}

// The special functions' float64 kernels give their functor's value to the
// last bits only: their series and recurrences inline differently into the
// kernel's loop than into this test (with or without fused multiply-adds);
// float32 rounds the difference away.
template <class T, class Op>
void expect_special_unary_near_functor(const char* name,
                                       Tensor (*fn)(const Tensor&),
                                       ScalarType dtype,
                                       Domain domain) {
  for (Layout layout : testing::kAllLayouts) {
    SCOPED_TRACE(std::string(name) + " " + std::string(to_string(dtype)) + " " +
                 testing::layout_name(layout));
    const Tensor x = input_of(dtype, layout, domain, 7);
    const Tensor y = fn(x);
    ASSERT_EQ(y.dtype(), dtype);
    EXPECT_TRUE(testing::close(y, tensor(unary_reference<T, Op>(x), y.sizes()), 1e-13, 1e-300));
  }
}

template <class T, class Op>
void expect_special_binary_near_functor(const char* name,
                                        Tensor (*fn)(const Tensor&, const Tensor&),
                                        ScalarType dtype) {
  for (Layout layout : testing::kAllLayouts) {
    SCOPED_TRACE(std::string(name) + " " + std::string(to_string(dtype)) + " " +
                 testing::layout_name(layout));
    const Tensor a = input_of(dtype, layout, Domain::Any, 3);
    const Tensor b = input_of(dtype, Layout::Contiguous, Domain::Any, 4);
    const Tensor y = fn(a, b);
    // The polynomials' recurrences cancel: relative to the terms, not the value.
    EXPECT_TRUE(testing::close(y, tensor(binary_reference<T, Op>(a, b), y.sizes()), 1e-12, 1e-12));
  }
}

// The listed float32 ops the CPU computes with a vec_math.h form.
bool has_vector_form(const std::string& op) {
  for (const char* v : {"exp", "log", "tanh", "sigmoid", "silu", "gelu"})
    if (op == v) return true;
  return false;
}

template <class T, class Op>
void expect_unary_matches_functor(const char* name,
                                  Tensor (*fn)(const Tensor&),
                                  ScalarType dtype,
                                  Domain domain) {
  for (Layout layout : testing::kAllLayouts) {
    SCOPED_TRACE(std::string(name) + " " + std::string(to_string(dtype)) + " " +
                 testing::layout_name(layout));
    const Tensor x = input_of(dtype, layout, domain, 7);
    const Tensor y = fn(x);
    ASSERT_EQ(y.dtype(), dtype);
    if (std::is_same_v<T, float> && has_vector_form(name)) {
      EXPECT_TRUE(testing::close(y, tensor(unary_reference<T, Op>(x), y.sizes()), 4e-6, 1e-7));
    } else {
      EXPECT_EQ(first_difference(values_of<T>(y), unary_reference<T, Op>(x)), "");
    }
  }
}

template <class T, class Op>
void expect_binary_matches_functor(const char* name,
                                   Tensor (*fn)(const Tensor&, const Tensor&),
                                   ScalarType dtype) {
  for (Layout layout : testing::kAllLayouts) {
    SCOPED_TRACE(std::string(name) + " " + std::string(to_string(dtype)) + " " +
                 testing::layout_name(layout));
    const Tensor a = input_of(dtype, layout, Domain::Any, 3);
    // Half of b's elements equal a's, so that comparisons see ties.
    const Tensor b = where(input_of(kBool, Layout::Contiguous, Domain::Any, 5), a,
                           input_of(dtype, Layout::Contiguous, Domain::Any, 4));
    const Tensor y = fn(a, b);
    using R = decltype(Op{}(T{}, T{}));
    EXPECT_EQ(first_difference(values_of<R>(y), binary_reference<T, Op>(a, b)), "");
  }
}

TEST(ElementwiseMath, EveryListedUnaryOpGivesItsFunctorsBits) {
#define STRIDE_FLOAT_UNARY_CASE(name, which, backward, domain)                            \
  expect_unary_matches_functor<float, math::name>(#name, name, kFloat32, Domain::domain); \
  expect_unary_matches_functor<double, math::name>(#name, name, kFloat64, Domain::domain);
#define STRIDE_SAME_UNARY_CASE(name, which, backward, domain)                             \
  STRIDE_FLOAT_UNARY_CASE(name, which, backward, domain)                                  \
  expect_unary_matches_functor<int32_t, math::name>(#name, name, kInt32, Domain::domain); \
  expect_unary_matches_functor<int64_t, math::name>(#name, name, kInt64, Domain::domain); \
  expect_unary_matches_functor<uint8_t, math::name>(#name, name, kUInt8, Domain::domain);
  STRIDE_FLOAT_UNARY_OPS(STRIDE_FLOAT_UNARY_CASE)
  STRIDE_SAME_UNARY_OPS(STRIDE_SAME_UNARY_CASE)
#undef STRIDE_SAME_UNARY_CASE
#undef STRIDE_FLOAT_UNARY_CASE
}

TEST(ElementwiseMath, EverySpecialFunctionGivesItsFunctorsValue) {
#define STRIDE_SPECIAL_UNARY_CASE(name, which, backward, domain)                          \
  expect_unary_matches_functor<float, math::name>(#name, name, kFloat32, Domain::domain); \
  expect_special_unary_near_functor<double, math::name>(#name, name, kFloat64, Domain::domain);
  STRIDE_SPECIAL_UNARY_OPS(STRIDE_SPECIAL_UNARY_CASE)
#define STRIDE_SPECIAL_NOGRAD_CASE(name, domain) STRIDE_SPECIAL_UNARY_CASE(name, x, g, domain)
  STRIDE_SPECIAL_UNARY_NOGRAD_OPS(STRIDE_SPECIAL_NOGRAD_CASE)
#undef STRIDE_SPECIAL_NOGRAD_CASE
#undef STRIDE_SPECIAL_UNARY_CASE
}

// Every binary op and comparison of the lists, over every dtype they share.
TEST(ElementwiseMath, EveryListedBinaryOpGivesItsFunctorsBits) {
#define STRIDE_BINARY_CASE(name, ...)                                       \
  expect_binary_matches_functor<float, math::name>(#name, name, kFloat32);  \
  expect_binary_matches_functor<double, math::name>(#name, name, kFloat64); \
  expect_binary_matches_functor<int32_t, math::name>(#name, name, kInt32);  \
  expect_binary_matches_functor<int64_t, math::name>(#name, name, kInt64);  \
  expect_binary_matches_functor<uint8_t, math::name>(#name, name, kUInt8);  \
  expect_binary_matches_functor<bool, math::name>(#name, name, kBool);
  STRIDE_BINARY_OPS(STRIDE_BINARY_CASE)
  STRIDE_COMPARISON_OPS(STRIDE_BINARY_CASE)
#undef STRIDE_BINARY_CASE
#define STRIDE_FLOAT_BINARY_CASE(name, ...)                                \
  expect_binary_matches_functor<float, math::name>(#name, name, kFloat32); \
  expect_binary_matches_functor<double, math::name>(#name, name, kFloat64);
  STRIDE_FLOAT_BINARY_OPS(STRIDE_FLOAT_BINARY_CASE)
#undef STRIDE_FLOAT_BINARY_CASE
}

// Every integer op of the list, over the integers, and the bitwise logic
// over bool too.
TEST(ElementwiseMath, EveryIntegerOpGivesItsFunctorsBits) {
#define STRIDE_INTEGER_BINARY_CASE(name, ...)                              \
  expect_binary_matches_functor<int32_t, math::name>(#name, name, kInt32); \
  expect_binary_matches_functor<int64_t, math::name>(#name, name, kInt64); \
  expect_binary_matches_functor<uint8_t, math::name>(#name, name, kUInt8);
  STRIDE_INTEGER_BINARY_OPS(STRIDE_INTEGER_BINARY_CASE)
#undef STRIDE_INTEGER_BINARY_CASE
  expect_binary_matches_functor<bool, math::bitwise_and>("bitwise_and", bitwise_and, kBool);
  expect_binary_matches_functor<bool, math::bitwise_or>("bitwise_or", bitwise_or, kBool);
  expect_binary_matches_functor<bool, math::bitwise_xor>("bitwise_xor", bitwise_xor, kBool);
}

// The functors' edge cases, PyTorch's values: shift counts outside [0, width)
// and magnitudes of the most negative int64 (no undefined behaviour: UBSan).
TEST(ElementwiseMath, IntegerEdgeCasesArePyTorchs) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(math::bitwise_left_shift{}(int64_t(-1), int64_t(63)), kMin);
  EXPECT_EQ(math::bitwise_left_shift{}(int64_t(5), int64_t(64)), 0);
  EXPECT_EQ(math::bitwise_left_shift{}(int64_t(5), int64_t(-1)), 0);
  EXPECT_EQ(math::bitwise_right_shift{}(int64_t(-5), int64_t(64)), -1);
  EXPECT_EQ(math::bitwise_right_shift{}(int64_t(5), int64_t(-2)), 0);
  EXPECT_EQ(math::bitwise_right_shift{}(int64_t(-5), int64_t(1)), -3);
  EXPECT_EQ(math::bitwise_left_shift{}(uint8_t(255), uint8_t(7)), uint8_t(128));
  EXPECT_EQ(math::bitwise_right_shift{}(uint8_t(255), uint8_t(8)), uint8_t(0));
  EXPECT_EQ(math::gcd{}(kMin, int64_t(0)), kMin);
  EXPECT_EQ(math::gcd{}(int64_t(-12), int64_t(18)), 6);
  EXPECT_EQ(math::gcd{}(int64_t(0), int64_t(0)), 0);
  EXPECT_EQ(math::lcm{}(int64_t(-4), int64_t(6)), 12);
  EXPECT_EQ(math::lcm{}(int64_t(0), int64_t(6)), 0);
  EXPECT_EQ(math::lcm{}(int32_t(-7), int32_t(-3)), 21);
}

TEST(ElementwiseMath, EveryBinarySpecialFunctionGivesItsFunctorsValue) {
#define STRIDE_SPECIAL_BINARY_CASE(name, ...)                              \
  expect_binary_matches_functor<float, math::name>(#name, name, kFloat32); \
  expect_special_binary_near_functor<double, math::name>(#name, name, kFloat64);
  STRIDE_SPECIAL_BINARY_OPS(STRIDE_SPECIAL_BINARY_CASE)
  STRIDE_SPECIAL_BINARY_NOGRAD_OPS(STRIDE_SPECIAL_BINARY_CASE)
#undef STRIDE_SPECIAL_BINARY_CASE
}

// An op on up to three operands of one dtype.
using OpFn = std::function<Tensor(const std::vector<Tensor>&)>;
struct SixteenBitCase {
  std::string name;
  int arity;
  OpFn fn;
  Domain domain = Domain::Any;
};

std::vector<SixteenBitCase> sixteen_bit_cases() {
  using In = const std::vector<Tensor>&;
  std::vector<SixteenBitCase> cases = {
#define STRIDE_UNARY_16(name, which, backward, domain) \
  {#name, 1, [](In x) { return name(x[0]); }, Domain::domain},
      STRIDE_FLOAT_UNARY_OPS(STRIDE_UNARY_16) STRIDE_SAME_UNARY_OPS(STRIDE_UNARY_16)
          STRIDE_SPECIAL_UNARY_OPS(STRIDE_UNARY_16)
#undef STRIDE_UNARY_16
#define STRIDE_SPECIAL_NOGRAD_16(name, domain) \
  {#name, 1, [](In x) { return name(x[0]); }, Domain::domain},
              STRIDE_SPECIAL_UNARY_NOGRAD_OPS(STRIDE_SPECIAL_NOGRAD_16)
#undef STRIDE_SPECIAL_NOGRAD_16
#define STRIDE_BINARY_16(name, ...) {#name, 2, [](In x) { return name(x[0], x[1]); }},
                  STRIDE_BINARY_OPS(STRIDE_BINARY_16) STRIDE_FLOAT_BINARY_OPS(STRIDE_BINARY_16)
                      STRIDE_COMPARISON_OPS(STRIDE_BINARY_16)
                          STRIDE_SPECIAL_BINARY_OPS(STRIDE_BINARY_16)
                              STRIDE_SPECIAL_BINARY_NOGRAD_OPS(STRIDE_BINARY_16)
#undef STRIDE_BINARY_16
                                  {"add", 2, [](In x) { return add(x[0], x[1]); }},
      {"add alpha", 2, [](In x) { return add(x[0], x[1], 2.5); }},
      {"sub alpha", 2, [](In x) { return sub(x[0], x[1], -0.75); }},
      {"div", 2, [](In x) { return div(x[0], x[1]); }},
      {"pow", 2, [](In x) { return pow(x[0], x[1]); }, Domain::Positive},
      {"lerp_", 2, [](In x) { return x[0].clone().lerp_(x[1], 0.3); }},
      {"lerp_ above one half", 2, [](In x) { return x[0].clone().lerp_(x[1], 0.8); }},
      {"addcmul_", 3, [](In x) { return x[0].clone().addcmul_(x[1], x[2], 0.5); }},
      {"addcdiv_", 3, [](In x) { return x[0].clone().addcdiv_(x[1], x[2], -2.0); }},
      {"clamp", 1, [](In x) { return clamp(x[0], -0.5, 0.25); }},
      {"clamp max only", 1, [](In x) { return clamp(x[0], std::nullopt, 0.25); }},
      {"where", 2, [](In x) { return where(x[0].gt(x[1]), x[0], x[1]); }},
      {"gelu backward", 2,
       [](In x) {
         const Tensor leaf = x[0].detach().requires_grad_();
         gelu(leaf).backward(x[1]);
         return leaf.grad();
       }},
  };
  return cases;
}

// On float16 and bfloat16 an op computes in float32 inside its loop, so each
// element is the float32 op on the widened inputs, rounded once: the bits
// of computing in float32 on converted copies, which is what the loop saves.
TEST(ElementwiseMath, SixteenBitOpsRoundTheirFloat32ResultOnce) {
  for (ScalarType dtype : {kBFloat16, kFloat16}) {
    for (const SixteenBitCase& c : sixteen_bit_cases()) {
      for (Layout layout : testing::kAllLayouts) {
        SCOPED_TRACE(c.name + " " + std::string(to_string(dtype)) + " " +
                     testing::layout_name(layout));
        std::vector<Tensor> in16, in32;
        for (int k = 0; k < c.arity; ++k) {
          in16.push_back(input_of(kFloat32, layout, c.domain, 11 + uint64_t(k)).to(dtype));
          in32.push_back(in16.back().to(kFloat32));
        }
        const Tensor got = c.fn(in16);
        const Tensor f32 = c.fn(in32);
        const Tensor want = f32.dtype() == kBool ? f32 : f32.to(dtype);
        ASSERT_EQ(got.dtype(), want.dtype());
        if (want.dtype() == kBool)
          EXPECT_EQ(first_difference(values_of<bool>(got), values_of<bool>(want)), "");
        else if (dtype == kBFloat16)
          EXPECT_EQ(first_difference(values_of<BFloat16>(got), values_of<BFloat16>(want)), "");
        else
          EXPECT_EQ(first_difference(values_of<Half>(got), values_of<Half>(want)), "");
      }
    }
  }
}

}  // namespace
}  // namespace stride
