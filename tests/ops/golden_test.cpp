// Ops against PyTorch (docs/design.md invariant 7). tools/gen_goldens.py builds
// inputs and PyTorch's outputs into tests/golden/ops.safetensors as
// CASE/in0.. and CASE/out0..; the table below recomputes every case with
// stride. The GoldenFile tests keep the two tables in sync: a case on one
// side only fails. Run: stride_tests --gtest_filter='Golden*'.
//
// Comparison: the dtype and shape always exactly; float32 values to
// rtol 1e-5 / atol 1e-6, float64 to 1e-12 / 1e-12, and everything else
// (integers, bool, bfloat16, float16, and cases marked Exact: copies, index
// ops, selections) bit for bit, signed zeros included, a NaN matching any NaN
// (PyTorch's own NaN payloads depend on its code path). Inf must match exactly
// and NaN positions must agree. On failure the case prints its max
// abs/rel diff and the first mismatching element.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/op_list.h"
#include "stride/autograd.h"
#include "stride/io.h"
#include "stride/linalg.h"
#include "stride/masked.h"
#include "stride/nn/functional.h"
#include "stride/nn/rnn.h"
#include "stride/ops.h"
#include "support/golden_file.h"
#include "support/op_coverage.h"
#include "support/options.h"

namespace stride {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

using Ins = std::vector<Tensor>;
using Outs = std::vector<Tensor>;
using CaseFn = std::function<Outs(const Ins&)>;
using testing::with;

// Auto: tolerance for float32/float64 outputs, bit-exact for other dtypes.
// Exact: bit-exact for every dtype (the op only moves or selects values).
// LongSum: as Auto, but float32 to atol 1e-5 (PyTorch's own float32 atol in
// assert_close): each output sums over a hundred or more products of
// unit-scale values, and two summation orders (PyTorch's GEMM and stride's
// split k as each CPU's kernel likes) differ by a few 1e-6 near zero.
// Cephes: rtol 1e-4, atol 1e-7 for both: PyTorch's Airy and Bessel J and Y
// functions (Cephes-style forms) are accurate to 1e-5 relative in places,
// and its trigamma to 1e-9, where stride's (Boost.Math's) agree with mpmath
// to 1e-15; these goldens check the edge values and catch gross errors.
enum class Cmp { Auto, Exact, LongSum, Cephes };

struct GoldenCase {
  std::string name;
  CaseFn fn;
  Cmp cmp = Cmp::Auto;
};

// Cases that currently disagree with PyTorch. They stay in the table (so
// re-enabling one is deleting its line here) but are not run.
const std::map<std::string, std::string>& known_bugs() {
  static const std::map<std::string, std::string> bugs = {};
  return bugs;
}

std::string dim_tag(int64_t d) {
  return d >= 0 ? "d" + std::to_string(d) : "dm" + std::to_string(-d);
}

using UnaryFn = Tensor (*)(const Tensor&);
using BinaryFn = Tensor (*)(const Tensor&, const Tensor&);

std::vector<GoldenCase> build_cases() {
  std::vector<GoldenCase> cases;
  auto reg = [&](std::string name, CaseFn fn, Cmp cmp = Cmp::Auto) {
    cases.push_back({std::move(name), std::move(fn), cmp});
  };

  // ---- elementwise: binary ----
  reg("add_f32", [](const Ins& in) -> Outs { return {in[0] + in[1]}; });
  reg("add_alpha_f32", [](const Ins& in) -> Outs { return {add(in[0], in[1], -2.5)}; });
  reg("add_broadcast_f32", [](const Ins& in) -> Outs { return {in[0] + in[1]}; });
  reg("add_scalar_f32", [](const Ins& in) -> Outs { return {in[0] + 2.5}; });
  reg("mul_large_strided_f32", [](const Ins& in) -> Outs {
    return {in[0].t() * in[1], exp(in[0].t()) + in[1]};
  });
  reg("add_f64", [](const Ins& in) -> Outs { return {add(in[0], in[1], 0.3)}; });
  reg("add_i64", [](const Ins& in) -> Outs { return {add(in[0], in[1], 3)}; });
  reg("sub_f32", [](const Ins& in) -> Outs { return {in[0] - in[1]}; });
  reg("sub_alpha_f32", [](const Ins& in) -> Outs { return {sub(in[0], in[1], 0.5)}; });
  reg("sub_broadcast_f32", [](const Ins& in) -> Outs { return {in[0] - in[1]}; });
  reg("sub_scalar_i64", [](const Ins& in) -> Outs { return {in[0] - 7}; });
  reg("mul_f32", [](const Ins& in) -> Outs { return {in[0] * in[1]}; });
  reg("mul_broadcast_f32", [](const Ins& in) -> Outs { return {in[0] * in[1]}; });
  reg("mul_scalar_f32", [](const Ins& in) -> Outs { return {in[0] * -0.125}; });
  reg("mul_f64", [](const Ins& in) -> Outs { return {in[0] * in[1]}; });
  reg("mul_i64", [](const Ins& in) -> Outs { return {in[0] * in[1]}; });
  reg("div_f32", [](const Ins& in) -> Outs { return {in[0] / in[1]}; });
  reg("div_broadcast_f32", [](const Ins& in) -> Outs { return {in[0] / in[1]}; });
  reg("div_scalar_f32", [](const Ins& in) -> Outs { return {in[0] / 3.0}; });
  reg("div_by_zero_f32", [](const Ins& in) -> Outs { return {in[0] / in[1]}; });
  reg("div_f64", [](const Ins& in) -> Outs { return {in[0] / in[1]}; });
  reg("div_int_int", [](const Ins& in) -> Outs { return {in[0] / in[1]}; });
  reg("div_i32_scalar", [](const Ins& in) -> Outs { return {in[0] / 4}; });
  reg("fmod_remainder_f32", [](const Ins& in) -> Outs {
    return {fmod(in[0], in[1]), remainder(in[0], in[1])};
  });
  reg(
      "fmod_remainder_specials_f64",
      [](const Ins& in) -> Outs {
        return {fmod(in[0], in[1]), remainder(in[0], in[1])};
      },
      Cmp::Exact);
  reg("fmod_remainder_i64", [](const Ins& in) -> Outs {
    return {fmod(in[0], in[1]), remainder(in[0], in[1])};
  });
  reg("remainder_scalars_bf16", [](const Ins& in) -> Outs {
    return {remainder(in[0], 0.3), fmod(in[0], -0.3), remainder(1.5, in[0])};
  });
  reg(
      "div_floor_trunc_f32",
      [](const Ins& in) -> Outs {
        return {div(in[0], in[1], "floor"), div(in[0], in[1], "trunc")};
      },
      Cmp::Exact);
  reg("div_floor_bf16", [](const Ins& in) -> Outs {
    return {div(in[0], in[1], "floor"), div(in[0], in[1], "floor"), div(in[0], in[1], "trunc")};
  });
  reg("div_floor_trunc_i64", [](const Ins& in) -> Outs {
    return {div(in[0], in[1], "floor"), div(in[0], in[1], "trunc")};
  });
  reg(
      "frexp_f32",
      [](const Ins& in) -> Outs {
        auto [mantissa, exponent] = frexp(in[0]);
        return {mantissa, exponent};
      },
      Cmp::Exact);
  reg("pow_tensor_f32", [](const Ins& in) -> Outs { return {pow(in[0], in[1])}; });
  reg("pow_negative_base_f32", [](const Ins& in) -> Outs { return {pow(in[0], in[1])}; });
  reg("pow_broadcast_f32", [](const Ins& in) -> Outs { return {pow(in[0], in[1])}; });
  reg("pow_scalar2_f32", [](const Ins& in) -> Outs { return {in[0].pow(2)}; });
  reg("pow_scalar3_f32", [](const Ins& in) -> Outs { return {in[0].pow(3.0)}; });
  reg("pow_scalar_half_f32", [](const Ins& in) -> Outs { return {in[0].pow(0.5)}; });
  reg("pow_scalar_neg1_f32", [](const Ins& in) -> Outs { return {in[0].pow(-1)}; });
  reg("pow_scalar_neg_half_f32", [](const Ins& in) -> Outs { return {in[0].pow(-0.5)}; });
  reg("pow_f64", [](const Ins& in) -> Outs { return {pow(in[0], in[1])}; });
  reg("pow_i64", [](const Ins& in) -> Outs { return {pow(in[0], in[1])}; });
  reg("pow_i64_float_scalar", [](const Ins& in) -> Outs { return {in[0].pow(0.5)}; });
  reg(
      "maximum_nan_f32", [](const Ins& in) -> Outs { return {maximum(in[0], in[1])}; }, Cmp::Exact);
  reg(
      "minimum_nan_f32", [](const Ins& in) -> Outs { return {minimum(in[0], in[1])}; }, Cmp::Exact);
  reg(
      "maximum_broadcast_f32", [](const Ins& in) -> Outs { return {maximum(in[0], in[1])}; },
      Cmp::Exact);
  reg(
      "minimum_broadcast_f32", [](const Ins& in) -> Outs { return {minimum(in[0], in[1])}; },
      Cmp::Exact);
  reg("maximum_i64", [](const Ins& in) -> Outs { return {maximum(in[0], in[1])}; });

  // ---- type promotion ----
  reg("promote_i64_plus_float_scalar", [](const Ins& in) -> Outs { return {in[0] + 2.5}; });
  reg("promote_i64_mul_int_scalar", [](const Ins& in) -> Outs { return {in[0] * 3}; });
  for (const char* name :
       {"promote_i32_plus_i64", "promote_i32_plus_i64_0d", "promote_bool_plus_i64",
        "promote_bool_plus_bool", "promote_f32_plus_f64", "promote_f32_plus_f64_0d",
        "promote_f32_0d_plus_f64", "promote_i64_plus_f64_0d", "promote_bf16_plus_f16",
        "promote_bf16_plus_f32_0d", "promote_bf16_add_bf16"}) {
    reg(name, [](const Ins& in) -> Outs { return {in[0] + in[1]}; });
  }
  reg("promote_bf16_plus_float_scalar", [](const Ins& in) -> Outs { return {in[0] + 0.3}; });
  reg("promote_bf16_mul_float_scalar", [](const Ins& in) -> Outs {
    return {in[0] * 0.3, in[0] / 0.3, 0.3 * in[0]};
  });
  reg("promote_f32_pow_f64_0d", [](const Ins& in) -> Outs { return {pow(in[0], in[1])}; });
  reg("promote_f32_gt_i64_0d", [](const Ins& in) -> Outs { return {gt(in[0], in[1])}; });
  for (const char* name : {"promote_bool_mul_bool", "promote_bool_mul_f32", "promote_i64_mul_f32",
                           "promote_f16_mul_f32", "promote_f16_mul_f64_0d"}) {
    reg(name, [](const Ins& in) -> Outs { return {in[0] * in[1]}; });
  }

  // ---- elementwise: unary ----
  // Every unary op of the list (src/core/op_list.h): an op without its
  // rows in tools/gen_goldens.py fails here.
  const std::vector<std::pair<std::string, UnaryFn>> unary = {
#define STRIDE_FLOAT_UNARY_GOLDEN(name, which, backward, domain) {#name, name},
#define STRIDE_SAME_UNARY_GOLDEN(name, which, backward, domain) {#name, name},
      STRIDE_FLOAT_UNARY_OPS(STRIDE_FLOAT_UNARY_GOLDEN)
          STRIDE_SAME_UNARY_OPS(STRIDE_SAME_UNARY_GOLDEN)
#undef STRIDE_SAME_UNARY_GOLDEN
#undef STRIDE_FLOAT_UNARY_GOLDEN
  };
  for (const auto& [name, fn] : unary) {
    // Ops that move or round values, without arithmetic of their own.
    static const std::set<std::string> moves_values = {"neg",  "abs",   "relu",  "sign", "floor",
                                                       "ceil", "round", "trunc", "frac"};
    const Cmp cmp = moves_values.contains(name) ? Cmp::Exact : Cmp::Auto;
    reg(
        name + "_f32", [fn](const Ins& in) -> Outs { return {fn(in[0])}; }, cmp);
    reg(
        name + "_f32_strided", [fn](const Ins& in) -> Outs { return {fn(in[0].t())}; }, cmp);
  }
  // Every floating binary op of the list, with special values on both sides.
#define STRIDE_FLOAT_BINARY_GOLDEN(name, ...) \
  reg(#name "_f32", [](const Ins& in) -> Outs { return {name(in[0], in[1])}; });
  STRIDE_FLOAT_BINARY_OPS(STRIDE_FLOAT_BINARY_GOLDEN)
#undef STRIDE_FLOAT_BINARY_GOLDEN
  // Every special function of the lists, in float32 with special values and
  // in float64 (the binary ones in float64, with pairs of special values).
  const std::set<std::string> cephes_accuracy = {"special_bessel_j0", "special_bessel_j1",
                                                 "special_bessel_y0", "special_bessel_y1",
                                                 "special_airy_ai"};
  const auto special_cmp = [&](const char* name) {
    return cephes_accuracy.contains(name) ? Cmp::Cephes : Cmp::Auto;
  };
#define STRIDE_SPECIAL_UNARY_GOLDEN(name, ...)                                                \
  reg(                                                                                        \
      #name "_f32", [](const Ins& in) -> Outs { return {name(in[0])}; }, special_cmp(#name)); \
  reg(                                                                                        \
      #name "_f64", [](const Ins& in) -> Outs { return {name(in[0])}; }, special_cmp(#name));
  STRIDE_SPECIAL_UNARY_OPS(STRIDE_SPECIAL_UNARY_GOLDEN)
  STRIDE_SPECIAL_UNARY_NOGRAD_OPS(STRIDE_SPECIAL_UNARY_GOLDEN)
#undef STRIDE_SPECIAL_UNARY_GOLDEN
#define STRIDE_SPECIAL_BINARY_GOLDEN(name, ...) \
  reg(#name "_f64", [](const Ins& in) -> Outs { return {name(in[0], in[1])}; });
  STRIDE_SPECIAL_BINARY_OPS(STRIDE_SPECIAL_BINARY_GOLDEN)
  STRIDE_SPECIAL_BINARY_NOGRAD_OPS(STRIDE_SPECIAL_BINARY_GOLDEN)
#undef STRIDE_SPECIAL_BINARY_GOLDEN
  reg(
      "polygamma_f64",
      [](const Ins& in) -> Outs {
        return {polygamma(0, in[0]), polygamma(1, in[0]), polygamma(2, in[0]), polygamma(3, in[0]),
                polygamma(4, in[0])};
      },
      Cmp::Cephes);
  reg("mvlgamma_f64", [](const Ins& in) -> Outs {
    return {mvlgamma(in[0], 1), mvlgamma(in[0], 3), mvlgamma(in[0], 5)};
  });
  reg("deg2rad_f32", [](const Ins& in) -> Outs { return {deg2rad(in[0]), rad2deg(in[0])}; });
  reg("rad2deg_i64", [](const Ins& in) -> Outs { return {deg2rad(in[0]), rad2deg(in[0])}; });
  reg(
      "signbit_f32",
      [](const Ins& in) -> Outs {
        return {signbit(in[0]), isposinf(in[0]), isneginf(in[0])};
      },
      Cmp::Exact);
  reg(
      "isposinf_i64",
      [](const Ins& in) -> Outs {
        return {signbit(in[0]), isposinf(in[0]), isneginf(in[0])};
      },
      Cmp::Exact);
  reg(
      "isneginf_f32", [](const Ins& in) -> Outs { return {isneginf(in[0])}; }, Cmp::Exact);
  reg(
      "nan_to_num_f32",
      [](const Ins& in) -> Outs {
        return {nan_to_num(in[0]), nan_to_num(in[0], 1.0, 2.0, -3.0)};
      },
      Cmp::Exact);
  reg(
      "heaviside_f32", [](const Ins& in) -> Outs { return {heaviside(in[0], in[1])}; }, Cmp::Exact);
  reg("ldexp_f32", [](const Ins& in) -> Outs { return {ldexp(in[0], in[1])}; });
  reg("float_power_f32", [](const Ins& in) -> Outs {
    return {float_power(in[0], in[1]), float_power(in[0], 2.5)};
  });
  reg("logit_f64", [](const Ins& in) -> Outs { return {logit(in[0]), logit(in[0], 0.2)}; });
  reg("unary_16bit", [](const Ins& in) -> Outs {
    const Tensor &x = in[0], &y = in[1];
    return {exp(x), sigmoid(x), tanh(x), x * y, y * y, y + y};
  });
  const std::vector<std::pair<std::string, UnaryFn>> unary_f64 = {
      {"exp", exp},   {"log", log},   {"sqrt", sqrt}, {"tanh", tanh},   {"sigmoid", sigmoid},
      {"gelu", gelu}, {"silu", silu}, {"sin", sin},   {"rsqrt", rsqrt},
  };
  for (const auto& [name, fn] : unary_f64) {
    reg(name + "_f64", [fn](const Ins& in) -> Outs { return {fn(in[0])}; });
  }
  reg(
      "abs_signed_zero_f32", [](const Ins& in) -> Outs { return {abs(in[0])}; }, Cmp::Exact);
  reg(
      "relu_signed_zero_f32", [](const Ins& in) -> Outs { return {relu(in[0])}; }, Cmp::Exact);
  reg("neg_i64", [](const Ins& in) -> Outs { return {neg(in[0])}; });
  reg("abs_i64", [](const Ins& in) -> Outs { return {abs(in[0])}; });
  reg("square_i64", [](const Ins& in) -> Outs { return {square(in[0])}; });
  reg("relu_i64", [](const Ins& in) -> Outs { return {relu(in[0])}; });
  reg("exp_i64", [](const Ins& in) -> Outs { return {exp(in[0])}; });
  reg("sqrt_i32", [](const Ins& in) -> Outs { return {sqrt(in[0])}; });

  // ---- clamp, where, masked_fill, tril/triu ----
  reg(
      "clamp_min_f32",
      [](const Ins& in) -> Outs { return {clamp(in[0], Scalar(-0.5), std::nullopt)}; }, Cmp::Exact);
  reg(
      "clamp_max_f32",
      [](const Ins& in) -> Outs { return {clamp(in[0], std::nullopt, Scalar(0.5))}; }, Cmp::Exact);
  reg(
      "clamp_both_f32",
      [](const Ins& in) -> Outs { return {clamp(in[0], Scalar(-0.5), Scalar(0.75))}; }, Cmp::Exact);
  reg(
      "clamp_min_gt_max_f32",
      [](const Ins& in) -> Outs { return {clamp(in[0], Scalar(0.5), Scalar(-0.5))}; }, Cmp::Exact);
  reg("clamp_nan_bound_f32", [](const Ins& in) -> Outs {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    return {clamp(in[0], Scalar(nan), std::nullopt), clamp(in[0], std::nullopt, Scalar(nan))};
  });
  reg("clamp_i64", [](const Ins& in) -> Outs { return {clamp(in[0], Scalar(-3), Scalar(4))}; });
  reg(
      "clamp_i64_float_bound",
      [](const Ins& in) -> Outs { return {clamp(in[0], Scalar(-2.5), std::nullopt)}; }, Cmp::Exact);
  for (const char* name : {"where_f32", "where_promote", "where_0d_promote", "where_f32_f64"}) {
    reg(
        name, [](const Ins& in) -> Outs { return {where(in[0], in[1], in[2])}; }, Cmp::Exact);
  }
  reg(
      "masked_fill_f32", [](const Ins& in) -> Outs { return {in[0].masked_fill(in[1], -kInf)}; },
      Cmp::Exact);
  reg("masked_fill_i64", [](const Ins& in) -> Outs { return {in[0].masked_fill(in[1], 42)}; });
  for (int64_t d : {-1, 0, 2}) {
    const std::string tag = d < 0 ? "m" + std::to_string(-d) : std::to_string(d);
    reg(
        "tril_diag" + tag, [d](const Ins& in) -> Outs { return {tril(in[0], d)}; }, Cmp::Exact);
    reg(
        "triu_diag" + tag, [d](const Ins& in) -> Outs { return {triu(in[0], d)}; }, Cmp::Exact);
  }
  reg(
      "tril_strided_f32",
      [](const Ins& in) -> Outs {
        return {tril(in[0].t(), 1), triu(in[0].t(), -1)};
      },
      Cmp::Exact);
  reg("tril_tall_i64", [](const Ins& in) -> Outs { return {tril(in[0], -1)}; });

  // ---- comparisons ----
  struct Comparison {
    const char* name;
    BinaryFn fn;
    Tensor (*scalar_fn)(const Tensor&, const Scalar&);
  };
  // Every comparison of the list (src/core/op_list.h).
  const Comparison comparisons[] = {
#define STRIDE_COMPARISON_GOLDEN(name) \
  {#name, name, [](const Tensor& a, const Scalar& s) { return a.name(s); }},
      STRIDE_COMPARISON_OPS(STRIDE_COMPARISON_GOLDEN)
#undef STRIDE_COMPARISON_GOLDEN
  };
  for (const Comparison& c : comparisons) {
    const std::string name = c.name;
    reg(name + "_f32", [fn = c.fn](const Ins& in) -> Outs { return {fn(in[0], in[1])}; });
    reg(name + "_broadcast_i64", [fn = c.fn](const Ins& in) -> Outs { return {fn(in[0], in[1])}; });
    reg(name + "_scalar_f32",
        [fn = c.scalar_fn](const Ins& in) -> Outs { return {fn(in[0], 0.5)}; });
  }
  // ---- integer ops ----
  struct IntegerOp {
    const char* name;
    BinaryFn fn;
    Tensor (*scalar_fn)(const Tensor&, const Scalar&);
  };
  // Every integer op of the list (src/core/op_list.h).
  const IntegerOp integer_ops[] = {
#define STRIDE_INTEGER_GOLDEN(name, dispatch) \
  {#name, name, [](const Tensor& a, const Scalar& s) { return a.name(s); }},
      STRIDE_INTEGER_BINARY_OPS(STRIDE_INTEGER_GOLDEN)
#undef STRIDE_INTEGER_GOLDEN
  };
  const std::set<std::string> bitwise_logic = {"bitwise_and", "bitwise_or", "bitwise_xor"};
  const std::set<std::string> shifts = {"bitwise_left_shift", "bitwise_right_shift"};
  for (const IntegerOp& op : integer_ops) {
    const std::string name = op.name;
    auto binary = [fn = op.fn](const Ins& in) -> Outs { return {fn(in[0], in[1])}; };
    if (bitwise_logic.count(name)) {
      reg(name + "_broadcast_i64", binary);
      reg(name + "_bool", binary);
      reg(name + "_scalar_i32",
          [fn = op.scalar_fn](const Ins& in) -> Outs { return {fn(in[0], int64_t(6))}; });
    } else if (shifts.count(name)) {
      reg(name + "_i64", binary);
      reg(name + "_i32", binary);
    } else {
      reg(name + "_i64", binary);
      reg(name + "_broadcast_i32", binary);
    }
  }
  reg("bitwise_not_i64", [](const Ins& in) -> Outs { return {bitwise_not(in[0])}; });
  reg("bitwise_not_bool", [](const Ins& in) -> Outs { return {in[0].bitwise_not()}; });

  reg("gt_i64_float_scalar", [](const Ins& in) -> Outs {
    return {in[0].gt(0.5), in[0].gt(16777216.0)};
  });
  reg("lt_i64_vs_f32", [](const Ins& in) -> Outs { return {lt(in[0], in[1])}; });

  // ---- optimizer-style in-place updates ----
  reg("lerp_w3_f32", [](const Ins& in) -> Outs { return {in[0].clone().lerp_(in[1], 0.3)}; });
  reg("lerp_w5_f32", [](const Ins& in) -> Outs { return {in[0].clone().lerp_(in[1], 0.5)}; });
  reg("lerp_w7_f32", [](const Ins& in) -> Outs { return {in[0].clone().lerp_(in[1], 0.7)}; });
  reg("lerp_strided_self_f32", [](const Ins& in) -> Outs {
    Tensor base = in[0].clone();
    base.t().lerp_(in[1], 0.25);
    return {base};
  });
  reg("addcmul_strided_self_f32", [](const Ins& in) -> Outs {
    Tensor base = in[0].clone();
    base.slice(1, std::nullopt, std::nullopt, 2).addcmul_(in[1], in[2], -1.5);
    return {base};
  });
  reg("addcdiv_strided_self_f32", [](const Ins& in) -> Outs {
    Tensor base = in[0].clone();
    base.t().addcdiv_(in[1], in[2], 0.01);
    return {base};
  });
  reg("addcmul_f32",
      [](const Ins& in) -> Outs { return {in[0].clone().addcmul_(in[1], in[2], 0.5)}; });
  reg("addcdiv_f32",
      [](const Ins& in) -> Outs { return {in[0].clone().addcdiv_(in[1], in[2], -2.0)}; });
  reg("addcdiv_f64",
      [](const Ins& in) -> Outs { return {in[0].clone().addcdiv_(in[1], in[2], 1e-3)}; });

  // ---- reductions ----
  struct ReduceDims {
    const char* tag;
    std::vector<int64_t> dims;  // empty: all dims
    bool keepdim;
  };
  const ReduceDims reduce_dims[] = {
      {"all", {}, false},       {"d1", {1}, false},         {"d02", {0, 2}, false},
      {"dm1_keep", {-1}, true}, {"d01_keep", {0, 1}, true}, {"alldims_keep", {0, 1, 2}, true},
  };
  for (const ReduceDims& r : reduce_dims) {
    const std::string tag = r.tag;
    const std::vector<int64_t> dims = r.dims;
    const bool keep = r.keepdim;
    reg("sum_" + tag + "_f32", [=](const Ins& in) -> Outs { return {sum(in[0], dims, keep)}; });
    reg("mean_" + tag + "_f32", [=](const Ins& in) -> Outs { return {mean(in[0], dims, keep)}; });
    for (int64_t c : {0, 1}) {
      reg("var_" + tag + "_c" + std::to_string(c) + "_f32",
          [=](const Ins& in) -> Outs { return {var(in[0], dims, c, keep)}; });
    }
    reg(
        "amax_" + tag + "_f32", [=](const Ins& in) -> Outs { return {amax(in[0], dims, keep)}; },
        Cmp::Exact);
    reg(
        "amin_" + tag + "_f32", [=](const Ins& in) -> Outs { return {amin(in[0], dims, keep)}; },
        Cmp::Exact);
    const std::vector<int64_t> lse_dims = dims.empty() ? std::vector<int64_t>{0, 1, 2} : dims;
    reg("logsumexp_" + tag + "_f32",
        [=](const Ins& in) -> Outs { return {logsumexp(in[0], lse_dims, keep)}; });
  }
  reg("sum_all_f64", [](const Ins& in) -> Outs { return {in[0].sum()}; });
  reg("sum_d1_i64", [](const Ins& in) -> Outs { return {sum(in[0], {1})}; });
  reg("sum_all_i32", [](const Ins& in) -> Outs { return {in[0].sum()}; });
  reg("sum_d0_bool", [](const Ins& in) -> Outs { return {sum(in[0], {0})}; });
  reg("sum_dtype_f64_of_f32", [](const Ins& in) -> Outs { return {in[0].sum(kFloat64)}; });
  reg("sum_strided_f32", [](const Ins& in) -> Outs {
    return {in[0].permute({2, 0, 1}).sum({0, 2})};
  });
  reg("mean_d1_f64", [](const Ins& in) -> Outs { return {mean(in[0], {1})}; });
  reg("var_d1_c1_f64", [](const Ins& in) -> Outs { return {var(in[0], {1}, 1)}; });
  reg("var_offset_f32", [](const Ins& in) -> Outs { return {var(in[0], {1}, 1)}; });
  reg(
      "amax_nan_f32",
      [](const Ins& in) -> Outs {
        return {amax(in[0], {1}), amin(in[0], {1}), amax(in[0]), amin(in[0], {0})};
      },
      Cmp::Exact);
  reg(
      "amax_inf_rows_f32",
      [](const Ins& in) -> Outs {
        return {amax(in[0], {1}), amin(in[0], {1}), in[0][0].max(), in[0][1].min()};
      },
      Cmp::Exact);
  reg("long_rows_f32", [](const Ins& in) -> Outs {
    const Tensor& x = in[0];
    auto [v, i] = max(x, 1);
    return {sum(x, {1}),
            mean(x, {1}),
            var(x, {1}),
            amax(x, {1}),
            v,
            i,
            argmin(x),
            logsumexp(x, {1}),
            softmax(x, 1).slice(1, 16990, 17010)};
  });
  reg("reduce_empty_f32", [](const Ins&) -> Outs {
    const Tensor x = zeros({3, 0});
    return {sum(x, {1}), mean(x, {1}), x.sum(), norm(x, 2, {1})};
  });
  reg("var_empty_f32", [](const Ins&) -> Outs { return {var(zeros({3, 0}), {1})}; });
  reg("logsumexp_empty_f32", [](const Ins&) -> Outs { return {logsumexp(zeros({3, 0}), {1})}; });
  reg("reduce_bf16_f16", [](const Ins& in) -> Outs {
    const Tensor &x = in[0], &y = in[1];
    auto [v, i] = max(x, 1);
    return {sum(x, {1}), sum(y, {1}), mean(y, {1}), v, i, amin(y, {0})};
  });
  reg("var_single_c1_f32", [](const Ins& in) -> Outs { return {var(in[0], {1}, 1)}; });
  reg("var_large_correction_f32", [](const Ins& in) -> Outs { return {var(in[0], {1}, 3)}; });
  reg("sum_dtype_f32_of_i64", [](const Ins& in) -> Outs { return {in[0].sum(kFloat32)}; });
  reg("amax_d1_i64", [](const Ins& in) -> Outs { return {amax(in[0], {1}), amin(in[0], {0, 2})}; });
  reg(
      "max_all_f32",
      [](const Ins& in) -> Outs {
        return {in[0].max(), in[0].min()};
      },
      Cmp::Exact);
  for (int64_t d : {0, 1, 2, -1}) {
    for (bool keep : {false, true}) {
      const std::string tag = dim_tag(d) + (keep ? "_keep" : "");
      reg(
          "max_" + tag + "_ties_f32",
          [=](const Ins& in) -> Outs {
            auto [v, i] = max(in[0], d, keep);
            return {v, i};
          },
          Cmp::Exact);
      reg(
          "min_" + tag + "_ties_f32",
          [=](const Ins& in) -> Outs {
            auto [v, i] = min(in[0], d, keep);
            return {v, i};
          },
          Cmp::Exact);
      reg("argmax_" + tag + "_ties_f32", [=](const Ins& in) -> Outs {
        return {argmax(in[0], d, keep), argmin(in[0], d, keep)};
      });
    }
  }
  reg(
      "max_d1_random_f32",
      [](const Ins& in) -> Outs {
        auto [v, i] = max(in[0], 1);
        auto [w, j] = min(in[0], 0);
        return {v, i, w, j};
      },
      Cmp::Exact);
  reg("max_d1_ties_i64", [](const Ins& in) -> Outs {
    auto [v, i] = max(in[0], 1);
    auto [w, j] = min(in[0], 1);
    return {v, i, w, j};
  });
  reg("argmax_all_ties_f32", [](const Ins& in) -> Outs {
    return {argmax(in[0]), argmin(in[0]), argmax(in[0], std::nullopt, true)};
  });
  reg("argmax_all_random_f32", [](const Ins& in) -> Outs {
    return {argmax(in[0]), argmin(in[0])};
  });
  // ---- scans, sorting, all/any, isnan/isinf/isfinite ----
  reg("cumsum_f32", [](const Ins& in) -> Outs {
    return {cumsum(in[0], 1), cumsum(in[0], 0), cumsum(in[0], -1, kFloat64)};
  });
  reg("cumsum_i64", [](const Ins& in) -> Outs { return {cumsum(in[0], 1), cumsum(in[1], 0)}; });
  reg("cumprod_f32", [](const Ins& in) -> Outs { return {cumprod(in[0], 1), cumprod(in[0], 0)}; });
  reg("cumprod_i64", [](const Ins& in) -> Outs { return {cumprod(in[0], 1)}; });
  // Reductions beyond sum and max, order statistics, scans.
  reg("prod_f32", [](const Ins& in) -> Outs {
    return {prod(in[0], 1), prod(in[0]), prod(in[0], 0, true)};
  });
  reg("prod_i64", [](const Ins& in) -> Outs {
    return {prod(in[0], 1), prod(in[0], 0, false, kFloat64)};
  });
  reg("std_dev_f32", [](const Ins& in) -> Outs {
    return {std_dev(in[0], {0, 1}, 0.5), std_dev(in[0], {1}, 1, true)};
  });
  reg("var_mean_f32", [](const Ins& in) -> Outs {
    auto [v, m] = var_mean(in[0], {1}, 2);
    return {v, m};
  });
  reg("std_mean_f32", [](const Ins& in) -> Outs {
    auto [sd, m] = std_mean(in[0], {0}, 0, true);
    return {sd, m};
  });
  reg("nansum_f32", [](const Ins& in) -> Outs { return {nansum(in[0], {1}), nansum(in[0])}; });
  reg("nanmean_f32", [](const Ins& in) -> Outs { return {nanmean(in[0], {1}), nanmean(in[0])}; });
  reg("count_nonzero_f32", [](const Ins& in) -> Outs {
    return {count_nonzero(in[0], {1}), count_nonzero(in[0])};
  });
  reg("aminmax_f32", [](const Ins& in) -> Outs {
    auto [lo, hi] = aminmax(in[0], 1);
    auto [all_lo, all_hi] = aminmax(in[0]);
    return {lo, hi, all_lo, all_hi};
  });
  reg("median_f32", [](const Ins& in) -> Outs {
    auto [v, i] = median(in[0], 1);
    return {v, i, median(in[0].narrow(0, 0, 3))};
  });
  reg("nanmedian_f32", [](const Ins& in) -> Outs {
    auto [v, i] = nanmedian(in[0], 1);
    return {v, i, nanmedian(in[0])};
  });
  reg("kthvalue_f32", [](const Ins& in) -> Outs {
    auto [v, i] = kthvalue(in[0], 3, 1);
    auto [v0, i0] = kthvalue(in[0], 1, 0, true);
    return {v, i, v0, i0};
  });
  reg("mode_i64", [](const Ins& in) -> Outs {
    auto [v, i] = mode(in[0], 1);
    return {v, i};
  });
  reg("quantile_f32", [](const Ins& in) -> Outs {
    Outs out{quantile(in[0], in[1], 1), quantile(in[0], full({}, 0.25f), std::nullopt, true)};
    for (const char* how : {"lower", "higher", "nearest", "midpoint"}) {
      out.push_back(quantile(in[0], in[1], 0, false, how));
    }
    return out;
  });
  reg("nanquantile_f32", [](const Ins& in) -> Outs {
    const Tensor q = full({}, 0.4f);
    return {nanquantile(in[0], q, 1), quantile(in[0], q, 1)};
  });
  reg("msort_f32", [](const Ins& in) -> Outs { return {msort(in[0])}; });
  reg("cummax_f32", [](const Ins& in) -> Outs {
    auto [v, i] = cummax(in[0], 1);
    auto [v0, i0] = cummax(in[0], 0);
    return {v, i, v0, i0};
  });
  reg("cummin_i64", [](const Ins& in) -> Outs {
    auto [v, i] = cummin(in[0], 1);
    return {v, i};
  });
  reg("logcumsumexp_f32", [](const Ins& in) -> Outs {
    return {logcumsumexp(in[0], 1), logcumsumexp(in[0], 0)};
  });
  // Scatters, index_* ops, selections.
  reg("scatter_f32", [](const Ins& in) -> Outs {
    return {scatter(in[0], 1, in[1], in[2]), scatter(in[0], 1, in[1], 2.5)};
  });
  reg("scatter_reduce_f32", [](const Ins& in) -> Outs {
    Outs out;
    for (const char* how : {"sum", "prod", "mean", "amax", "amin"}) {
      out.push_back(scatter_reduce(in[0], 1, in[1], in[2], how));
      out.push_back(scatter_reduce(in[0], 1, in[1], in[2], how, false));
    }
    return out;
  });
  reg("scatter_reduce_i64", [](const Ins& in) -> Outs {
    return {scatter_reduce(in[0], 1, in[1], in[2], "mean", false)};
  });
  reg("index_add_f32",
      [](const Ins& in) -> Outs { return {index_add(in[0], 1, in[1], in[2], 2.0)}; });
  reg("index_copy_f32", [](const Ins& in) -> Outs { return {index_copy(in[0], 0, in[1], in[2])}; });
  reg("index_fill_f32", [](const Ins& in) -> Outs { return {index_fill(in[0], 1, in[1], -2.0)}; });
  reg("index_reduce_f32", [](const Ins& in) -> Outs {
    Outs out;
    for (const char* how : {"prod", "mean", "amax", "amin"}) {
      out.push_back(index_reduce(in[0], 0, in[1], in[2], how));
      out.push_back(index_reduce(in[0], 0, in[1], in[2], how, false));
    }
    return out;
  });
  reg("take_f32", [](const Ins& in) -> Outs { return {take(in[0], in[1])}; });
  reg("put_f32", [](const Ins& in) -> Outs {
    return {put(in[0], in[1], in[2], true),
            put(in[0], in[1].narrow(0, 0, 2), in[2].narrow(0, 0, 2))};
  });
  reg("take_along_dim_f32", [](const Ins& in) -> Outs {
    return {take_along_dim(in[0], in[1], 1), take_along_dim(in[0], in[1])};
  });
  reg("masked_select_f32", [](const Ins& in) -> Outs { return {masked_select(in[0], in[1])}; });
  reg("masked_scatter_f32",
      [](const Ins& in) -> Outs { return {masked_scatter(in[0], in[1], in[2])}; });
  reg("nonzero_f32", [](const Ins& in) -> Outs { return {nonzero(in[0])}; });
  reg("argwhere_f32", [](const Ins& in) -> Outs { return {argwhere(in[0])}; });
  reg("select_scatter_f32",
      [](const Ins& in) -> Outs { return {select_scatter(in[0], in[1], 1, -2)}; });
  reg("slice_scatter_f32",
      [](const Ins& in) -> Outs { return {slice_scatter(in[0], in[1], 1, 1, std::nullopt, 2)}; });
  reg("as_strided_scatter_f32", [](const Ins& in) -> Outs {
    return {as_strided_scatter(in[0], in[1], {3, 2}, {5, 2}, 1),
            as_strided_scatter(in[0].t(), in[2], {2, 2}, {4, 1})};
  });
  reg("diagonal_scatter_f32",
      [](const Ins& in) -> Outs { return {diagonal_scatter(in[0], in[1], -1)}; });
  // Searching and counting.
  reg("searchsorted_f32", [](const Ins& in) -> Outs {
    return {searchsorted(in[0], in[1]), searchsorted(in[0], in[1], false, true),
            searchsorted(in[0].select(0, 0), in[1], true)};
  });
  reg("bucketize_f32", [](const Ins& in) -> Outs {
    return {bucketize(in[0], in[1]), bucketize(in[0], in[1], false, true)};
  });
  reg("bincount_i64", [](const Ins& in) -> Outs {
    return {bincount(in[0]), bincount(in[0], in[1], 10)};
  });
  reg("histc_f32", [](const Ins& in) -> Outs { return {histc(in[0], 7, -1, 1), histc(in[0], 5)}; });
  reg("unique_f32", [](const Ins& in) -> Outs {
    const UniqueResult all = unique(in[0], true, true, true);
    const UniqueResult rows = unique(in[1], true, true, true, 0);
    return {all.values, all.inverse, all.counts, rows.values, rows.inverse, rows.counts};
  });
  reg("unique_consecutive_i64", [](const Ins& in) -> Outs {
    const UniqueResult r = unique_consecutive(in[0], true, true);
    return {r.values, r.inverse, r.counts};
  });
  reg("isin_f32", [](const Ins& in) -> Outs {
    return {isin(in[0], in[1]), isin(in[0], in[1], false, true)};
  });
  reg(
      "sort_ties_nan_f32",
      [](const Ins& in) -> Outs {
        auto [av, ai] = sort(in[0], 1, false, true);
        auto [dv, di] = sort(in[0], 1, true, true);
        auto [v0, i0] = sort(in[0], 0, false, true);
        return {av, ai, dv, di, v0, i0};
      },
      Cmp::Exact);
  reg(
      "sort_long_rows_f32",
      [](const Ins& in) -> Outs {
        auto [av, ai] = sort(in[0], 1, false, true);
        auto [dv, di] = sort(in[0], 1, true, true);
        auto [uav, uai] = sort(in[0], 1);
        auto [udv, udi] = sort(in[0], 1, true);
        return {av, ai, dv, di, uav, uai, udv, udi};
      },
      Cmp::Exact);
  reg(
      "sort_long_rows_f64_i64",
      [](const Ins& in) -> Outs {
        auto [av, ai] = sort(in[0], 1, false, true);
        auto [dv, di] = sort(in[0], 1, true, true);
        auto [nav, nai] = sort(in[1], 1, false, true);
        auto [ndv, ndi] = sort(in[1], 1, true, true);
        auto [uav, uai] = sort(in[2], 1);
        auto [udv, udi] = sort(in[2], 1, true);
        return {av, ai, dv, di, nav, nai, ndv, ndi, uav, uai, udv, udi};
      },
      Cmp::Exact);
  reg("sort_i64", [](const Ins& in) -> Outs {
    auto [av, ai] = sort(in[0], 1, false, true);
    auto [dv, di] = sort(in[0], 0, true, true);
    return {av, ai, dv, di};
  });
  reg("argsort_f32", [](const Ins& in) -> Outs {
    return {argsort(in[0], -1, false, true), argsort(in[0], 0, true, true)};
  });
  reg(
      "topk_f32",
      [](const Ins& in) -> Outs {
        auto [v, i] = topk(in[0], 5);
        auto [sv, si] = topk(in[0], 3, -1, false);
        auto [v0, i0] = topk(in[0], 2, 0);
        return {v, i, sv, si, v0, i0};
      },
      Cmp::Exact);
  reg("sort_unstable_ties_bool", [](const Ins& in) -> Outs {
    auto [av, ai] = sort(in[0], 1);
    auto [dv, di] = sort(in[0], 1, true);
    return {av, ai, dv, di};
  });
  reg("topk_ties_i64", [](const Ins& in) -> Outs {
    auto [v, i] = topk(in[0], 3, 1);
    auto [sv, si] = topk(in[0], 1, 1, false);
    auto [uv, ui] = topk(in[0], 10, 1, true, false);
    return {v, i, sv, si, uv, ui};
  });
  reg("logspace_bf16", [](const Ins&) -> Outs {
    return {logspace(-3.3, 4.7, 11, 10.0, kBFloat16), logspace(0.0, 20.0, 50, 2.0, kBFloat16),
            logspace(1.1, 5.0, 1, 10.0, kBFloat16), logspace(-1.5, 2.25, 7, 10.0, kFloat32)};
  });
  reg("all_f32", [](const Ins& in) -> Outs {
    return {all(in[0]), all(in[0], {1}), all(in[1], {1})};
  });
  reg("any_f32", [](const Ins& in) -> Outs {
    return {any(in[0]), any(in[0], {0}, true), any(in[1], {1})};
  });
  for (const auto& [name, fn] : std::vector<std::pair<std::string, UnaryFn>>{
           {"isnan", isnan}, {"isinf", isinf}, {"isfinite", isfinite}}) {
    reg(name + "_f32", [fn](const Ins& in) -> Outs { return {fn(in[0])}; });
    reg(name + "_i64", [fn](const Ins& in) -> Outs { return {fn(in[0])}; });
  }
  reg(
      "flip_f32",
      [](const Ins& in) -> Outs {
        return {flip(in[0], {0, 2}), flip(in[0], {1})};
      },
      Cmp::Exact);
  reg(
      "roll_f32",
      [](const Ins& in) -> Outs {
        const Tensor& x = in[0];
        return {roll(x, {2}, {1}), roll(x, {-7, 3}, {2, 0}), roll(x, {4})};
      },
      Cmp::Exact);
  // ---- elementwise composites (src/ops/elementwise_composites.cpp) ----
  reg("logical_fmax_isclose_f32", [](const Ins& in) -> Outs {
    const Tensor &a = in[0], &b = in[1], &n = in[2];
    return {logical_and(a, b),
            logical_or(a, n),
            logical_xor(n, b),
            logical_not(n),
            fmax(a, b),
            fmin(a, b),
            isclose(a, b),
            isclose(a, b, 0.5, 0.1, true),
            isclose(n, n.flip({0}), 0.0, 1.0)};
  });
  reg("round_decimals_f32", [](const Ins& in) -> Outs {
    return {round(in[0], 2), round(in[0], -2), round(in[0], 0)};
  });
  reg("addcmul_addcdiv_f32", [](const Ins& in) -> Outs {
    return {addcmul(in[0], in[1], in[2], -0.5), addcdiv(in[0], in[1], in[2], 2.0)};
  });
  reg("linspace_logspace", [](const Ins&) -> Outs {
    return {linspace(-1.0, 2.0, 7),     linspace(3.0, -3.0, 10, kFloat64),
            linspace(0, 10, 4, kInt64), linspace(1.0, 1.0, 1),
            logspace(-1.0, 2.0, 5),     logspace(0.0, 3.0, 4, 2.0, kFloat64)};
  });
  // ---- shape ops (src/ops/shape_ops.cpp) ----
  // A case per op: its variants' results joined flat, then the gradients of
  // the inputs at `wrt` (the last input is the upstream gradient).
  {
    using Fn = std::function<Tensor(const Ins&)>;
    const auto joined = [](const Outs& parts) {
      Outs flat;
      for (const Tensor& p : parts) flat.push_back(p.reshape({-1}));
      return cat(flat);
    };
    const auto shape_case = [&](const std::string& name, std::vector<size_t> wrt, Fn fn) {
      reg(name + "_f32",
          [wrt, fn](const Ins& in) -> Outs { return testing::value_and_grads(in, wrt, fn); });
    };
    shape_case("atleast_1d", {0, 1}, [=](const Ins& x) {
      return joined({atleast_1d(x[0]), atleast_1d(x[1])});
    });
    shape_case("atleast_2d", {0, 1}, [=](const Ins& x) {
      return joined({atleast_2d(x[0]), atleast_2d(x[1])});
    });
    shape_case("atleast_3d", {0, 1}, [=](const Ins& x) {
      return joined({atleast_3d(x[0]), atleast_3d(x[1])});
    });
    shape_case("broadcast_to", {0}, [](const Ins& x) { return broadcast_to(x[0], {2, 3, 4}); });
    shape_case("broadcast_tensors", {0, 1}, [](const Ins& x) {
      return stack(broadcast_tensors({x[0], x[1]}));
    });
    shape_case("hstack", {0, 1, 2}, [=](const Ins& x) {
      const Tensor &s = x[0], &v = x[1], &m = x[2];
      return joined({hstack({v, v, s}), hstack({m, m})});
    });
    shape_case("vstack", {0, 1, 2}, [](const Ins& x) {
      return vstack({x[1], x[2], x[0].expand({3})});
    });
    shape_case("dstack", {0, 1}, [=](const Ins& x) {
      return joined({dstack({x[1], x[1]}), dstack({x[0], x[0]})});
    });
    shape_case("column_stack", {0, 1, 2}, [](const Ins& x) {
      return column_stack({x[1], x[2].t(), x[0].expand({3})});
    });
    shape_case("tensor_split", {0}, [=](const Ins& x) {
      Outs parts = tensor_split(x[0], 3);
      for (const Tensor& p : tensor_split_at(x[0], {1, 5, -1, 9}, -1)) parts.push_back(p);
      return joined(parts);
    });
    shape_case("split_with_sizes", {0}, [=](const Ins& x) {
      return joined(split_with_sizes(x[0], {3, 0, 4}));
    });
    shape_case("hsplit", {0}, [=](const Ins& x) {
      Outs parts = hsplit(x[0], 2);
      for (const Tensor& p : hsplit_at(x[0], {1, 3})) parts.push_back(p);
      return joined(parts);
    });
    shape_case("vsplit", {0}, [=](const Ins& x) { return joined(vsplit_at(x[0], {2})); });
    shape_case("dsplit", {0}, [=](const Ins& x) { return joined(dsplit(x[0], 3)); });
    shape_case("movedim", {0}, [=](const Ins& x) {
      return joined({movedim(x[0], {0, 3}, {2, 0}), movedim(x[0], {-1}, {1})});
    });
    shape_case("rot90", {0}, [=](const Ins& x) {
      return joined(
          {rot90(x[0], 1, {1, 2}), rot90(x[0], -1), rot90(x[0], 2, {3, 0}), rot90(x[0], 4)});
    });
    shape_case("fliplr", {0}, [](const Ins& x) { return fliplr(x[0]); });
    shape_case("flipud", {0}, [](const Ins& x) { return flipud(x[0]); });
    shape_case("ravel", {0}, [](const Ins& x) { return ravel(x[0].transpose(0, 2)); });
    shape_case("unflatten", {0}, [](const Ins& x) { return unflatten(x[0], 2, {2, -1}); });
    shape_case("sum_to_size", {0}, [](const Ins& x) { return sum_to_size(x[0], {3, 1, 5}); });
    shape_case("diag", {0, 1}, [=](const Ins& x) {
      return joined({diag(x[0], 1), diag(x[0], -2), diag(x[1], 1)});
    });
    shape_case("diag_embed", {0}, [=](const Ins& x) {
      return joined({diag_embed(x[0]), diag_embed(x[0], 1, 0, 2), diag_embed(x[0], -1, 2, 0)});
    });
    shape_case("diagflat", {0}, [](const Ins& x) { return diagflat(x[0], -1); });
    shape_case("block_diag", {0, 1, 2}, [](const Ins& x) {
      const Tensor &m = x[0], &v = x[1], &b = x[2];
      return block_diag({m, v, b.select(0, 0).select(0, 0), b});
    });
    shape_case("meshgrid", {0, 1, 2}, [=](const Ins& x) {
      const Ins abc(x.begin(), x.begin() + 3);
      Outs grids = meshgrid(abc, "ij");
      for (const Tensor& t : meshgrid(abc, "xy")) grids.push_back(t);
      return joined(grids);
    });
    shape_case("cartesian_prod", {0, 1}, [](const Ins& x) { return cartesian_prod({x[0], x[1]}); });
    shape_case("combinations", {0, 1, 2}, [=](const Ins& x) {
      return joined({combinations(x[1]), combinations(x[0], 3, true), combinations(x[2], 3)});
    });
    shape_case("repeat", {0}, [=](const Ins& x) {
      return joined({repeat(x[0], {2, 1, 3}), repeat(x[0], {1, 0})});
    });
    shape_case("tile", {0}, [=](const Ins& x) {
      return joined({tile(x[0], {2}), tile(x[0], {2, 1, 2})});
    });
    shape_case("repeat_interleave", {0}, [=](const Ins& x) {
      return joined({repeat_interleave(x[0], 2), repeat_interleave(x[0], 3, 1),
                     repeat_interleave(x[0], x[1], 1)});
    });
    reg(
        "repeat_interleave_counts_i64",
        [](const Ins& in) -> Outs { return {repeat_interleave(arange(3), in[0], 0)}; }, Cmp::Exact);
  }
  reg("products_f32", [](const Ins& in) -> Outs {
    const Tensor &v = in[0], &w = in[1], &m = in[2], &t = in[3];
    return {dot(v, w),
            inner(m, t),
            mv(m, v),
            addmv(m.select(1, 0), m, v, 0.5, 2.0),
            addr(m, m.select(1, 1), v, 1, -1.0),
            kron(m, t),
            tensordot(t, m, {1, 2}, {0, 1}),
            tensordot(m, t, 0)};
  });
  reg(
      "einsum_f32",
      [](const Ins& in) -> Outs {
        const Tensor &a = in[0], &b = in[1], &c = in[2], &d = in[3];
        return {einsum("bij,jk->bik", {a, b}),
                einsum("ii->i", {c}),
                einsum("ii", {c}),
                einsum("ij->", {c}),
                einsum("...j,jk", {a, b}),
                einsum("bij,jk,bik->bk", {a, b, d.expand({2, 3, 5})}),
                einsum("b i j , b j k -> b i k", {a.transpose(1, 2), d}),
                einsum("...ij,...jk->...ik", {c, d}),
                einsum("ij,kl->ijkl", {c, b}),
                einsum("ijk->kji", {a}),
                einsum("Ab,bC", {c, b.narrow(0, 0, 3)})};
      },
      Cmp::LongSum);
  reg("more_products_f32", [](const Ins& in) -> Outs {
    const Tensor &x = in[0], &b1 = in[1], &b2 = in[2], &p = in[3], &q = in[4];
    return {addbmm(x, b1, b2, 0.5, -1.0),
            chain_matmul({x.narrow(1, 0, 2).t(), x, q}),
            cdist(p, q),
            cdist(p, q, 1.0),
            cdist(p, q, std::numeric_limits<double>::infinity()),
            cdist(p, q, 0.5),
            dist(p, q.narrow(0, 0, 4), 3.0)};
  });
  reg(
      "numeric_composites_f32",
      [](const Ins& in) -> Outs {
        const Tensor &x = in[0], &y = in[1], &w = in[2], &s = in[3], &flat = in[4], &counts = in[5];
        Outs out = {trace(x),
                    diff(x),
                    diff(x, 2, 0, y.narrow(1, 0, 5), x.narrow(0, 0, 1)),
                    diff(x.gt(Scalar(0)), 1, 0),
                    trapezoid(y, s),
                    trapezoid(y, 0.5, 0),
                    cumulative_trapezoid(y, s),
                    cumulative_trapezoid(y, 2.0),
                    cov(x),
                    cov(x, 0, counts, w),
                    corrcoef(x),
                    renorm(x, 2, 0, 2.0),
                    renorm(x, 1, 1, 1.0)};
        for (const auto& parts : {gradient(x, std::vector<double>{1.0, 1.0}, {0, 1}),
                                  gradient(x, std::vector<double>{2.0, 0.5}, {0, 1}, 2),
                                  gradient(y, std::vector<Tensor>{s}, {1}, 2)}) {
          out.insert(out.end(), parts.begin(), parts.end());
        }
        out.push_back(tril_indices(4, 6, 1));
        out.push_back(triu_indices(5, 3, -1));
        for (const Tensor& t : unravel_index(flat, {3, 4, 5})) out.push_back(t);
        return out;
      },
      Cmp::LongSum);
  // products, elementwise and numeric compositions (linalg.cpp, einsum.cpp,
  // elementwise_composites.cpp, numeric_composites.cpp): a case per op.
  reg("histogram_f32", [](const Ins& in) -> Outs {
    const Tensor &x = in[0], &w = in[1], &edges = in[2];
    const HistogramResult counted = histogram(x, 7);
    const HistogramResult weighted = histogram(x, 4, std::pair{-1.0, 1.0}, w, true);
    const HistogramResult over_edges = histogram(x, edges, std::nullopt, true);
    return {counted.hist,       counted.bin_edges, weighted.hist,
            weighted.bin_edges, over_edges.hist,   over_edges.bin_edges};
  });
  reg("histogramdd_f32", [](const Ins& in) -> Outs {
    const Tensor &p = in[0], &w = in[1], &edges = in[2];
    const HistogramddResult counted = histogramdd(p, {3, 4});
    return {counted.hist, counted.bin_edges[0], counted.bin_edges[1],
            histogramdd(p, {edges, edges.narrow(0, 1, 4)}, w, true).hist,
            histogramdd(p, {2, 3}, {{-1.0, 1.0}, {0.0, 2.0}}).hist};
  });
  // A differentiable op's value and its inputs' gradients for a random
  // upstream gradient (the last input), in float64.
  {
    using Fn = std::function<Tensor(const Ins&)>;
    const auto with_grads = [&](const std::string& name, std::vector<size_t> wrt, Fn fn) {
      reg(name, [wrt, fn](const Ins& in) -> Outs { return testing::value_and_grads(in, wrt, fn); });
    };
    with_grads("dot_f64", {0, 1}, [](const Ins& x) { return dot(x[0], x[1]); });
    with_grads("inner_f64", {0, 1}, [](const Ins& x) { return inner(x[0], x[1]); });
    with_grads("mv_f64", {0, 1}, [](const Ins& x) { return mv(x[0], x[1]); });
    with_grads("addmv_f64", {0, 1, 2},
               [](const Ins& x) { return addmv(x[0], x[1], x[2], 0.5, 2.0); });
    with_grads("addr_f64", {0, 1, 2},
               [](const Ins& x) { return addr(x[0], x[1], x[2], 2.0, -1.0); });
    with_grads("addbmm_f64", {0, 1, 2},
               [](const Ins& x) { return addbmm(x[0], x[1], x[2], 0.5, 2.0); });
    with_grads("tensordot_f64", {0, 1}, [](const Ins& x) {
      return tensordot(x[0], x[1], {1, 2}, {1, 0});
    });
    with_grads("chain_matmul_f64", {0, 1, 2}, [](const Ins& x) {
      return chain_matmul({x[0], x[1], x[2]});
    });
    with_grads("kron_f64", {0, 1}, [](const Ins& x) { return kron(x[0], x[1]); });
    with_grads("cdist_f64", {0, 1}, [](const Ins& x) { return cdist(x[0], x[1]); });
    with_grads("cdist_p1_f64", {0, 1}, [](const Ins& x) { return cdist(x[0], x[1], 1.0); });
    with_grads("dist_f64", {0, 1}, [](const Ins& x) { return dist(x[0], x[1], 3.0); });
    with_grads("einsum_grad_f64", {0, 1}, [](const Ins& x) {
      return einsum("bij,jk->bik", {x[0], x[1]});
    });
    with_grads("fmax_f64", {0, 1}, [](const Ins& x) { return fmax(x[0], x[1]); });
    with_grads("fmin_f64", {0, 1}, [](const Ins& x) { return fmin(x[0], x[1]); });
    with_grads("trace_f64", {0}, [](const Ins& x) { return trace(x[0]); });
    with_grads("diff_f64", {0, 1},
               [](const Ins& x) { return diff(x[0], 2, 1, x[1], std::nullopt); });
    with_grads("trapezoid_f64", {0, 1}, [](const Ins& x) { return trapezoid(x[0], x[1]); });
    with_grads("cumulative_trapezoid_f64", {0, 1},
               [](const Ins& x) { return cumulative_trapezoid(x[0], x[1], 1); });
    with_grads("cov_f64", {0, 1}, [](const Ins& x) { return cov(x[0], 1, std::nullopt, x[1]); });
    with_grads("corrcoef_f64", {0}, [](const Ins& x) { return corrcoef(x[0]); });
    with_grads("renorm_f64", {0}, [](const Ins& x) { return renorm(x[0], 2, 0, 2.0); });
    with_grads("gradient_f64", {0}, [](const Ins& x) {
      return stack(gradient(x[0], std::vector<double>{0.5, 2.0}, {0, 1}, 2));
    });
    with_grads("sgn_f64", {0}, [](const Ins& x) { return sgn(x[0]) * x[0]; });
    with_grads("resolve_neg_f64", {0}, [](const Ins& x) { return resolve_neg(x[0] * 2.0); });
  }
  reg("logical_and_i64", [](const Ins& in) -> Outs { return {logical_and(in[0], in[1])}; });
  reg("logical_or_i64", [](const Ins& in) -> Outs { return {logical_or(in[0], in[1])}; });
  reg("logical_xor_i64", [](const Ins& in) -> Outs { return {logical_xor(in[0], in[1])}; });
  reg("logical_not_f32", [](const Ins& in) -> Outs { return {logical_not(in[0])}; });
  reg("isclose_f64", [](const Ins& in) -> Outs {
    return {isclose(in[0], in[1]), isclose(in[0], in[1], 1e-3, 1e-4)};
  });
  reg("unravel_index_i64", [](const Ins& in) -> Outs { return unravel_index(in[0], {3, 4, 5}); });
  reg("signal_windows_f32", [](const Ins&) -> Outs {
    namespace sw = signal::windows;
    return {sw::bartlett(7),
            sw::blackman(8, false),
            sw::cosine(6),
            sw::exponential(7, 2.0, 1.5, false),
            sw::gaussian(9, 1.7),
            sw::general_cosine(8, {0.5, 0.3, 0.2}),
            sw::general_hamming(6, 0.6, false),
            sw::hamming(5),
            sw::hann(10, false),
            sw::kaiser(9, 5.0),
            sw::nuttall(7, true, kFloat64)};
  });
  reg("outer_f32", [](const Ins& in) -> Outs { return {outer(in[0], in[1])}; });
  reg("addmm_f32", [](const Ins& in) -> Outs {
    return {addmm(in[0], in[1], in[2], 0.5, 2.0), addmm(in[3], in[1], in[2], 0.0),
            addmm(in[0].select(0, 0), in[1], in[2])};
  });
  reg("baddbmm_f32", [](const Ins& in) -> Outs {
    return {baddbmm(in[0], in[1], in[2]), baddbmm(in[0], in[1], in[2], 1.0, -1.5)};
  });
  reg("argmax_all_nan_f32", [](const Ins& in) -> Outs {
    return {argmax(in[0]), argmin(in[0]), argmax(in[0], 1)};
  });
  reg("argmax_all_i64", [](const Ins& in) -> Outs {
    return {argmax(in[0]), argmin(in[0]), argmax(in[0], 0)};
  });
  reg("logsumexp_neginf_row_f32", [](const Ins& in) -> Outs {
    return {logsumexp(in[0], {1}), logsumexp(in[0], {0, 1})};
  });
  reg("logsumexp_large_f32", [](const Ins& in) -> Outs { return {logsumexp(in[0], {1}, true)}; });
  reg("logsumexp_d1_f64", [](const Ins& in) -> Outs { return {logsumexp(in[0], {1})}; });
  for (double p : {1.0, 2.0, kInf, 3.0}) {
    const std::string tag = std::isinf(p) ? "inf" : std::to_string(int(p));
    reg("norm_p" + tag + "_all_f32", [p](const Ins& in) -> Outs { return {norm(in[0], p)}; });
    reg("norm_p" + tag + "_d1_f32", [p](const Ins& in) -> Outs { return {norm(in[0], p, {1})}; });
    reg("norm_p" + tag + "_d02_keep_f32", [p](const Ins& in) -> Outs {
      return {norm(in[0], p, {0, 2}, true)};
    });
  }
  reg("norm_p2_d1_f64", [](const Ins& in) -> Outs { return {norm(in[0], 2, {1})}; });
  reg("norm_p0_d1_f32", [](const Ins& in) -> Outs { return {norm(in[0], 0, {1})}; });

  // ---- matmul ----
  enum class Mm { Matmul, Mm, Bmm };
  auto mm_case = [&](const char* name, bool ta, bool tb, Mm kind = Mm::Matmul,
                     Cmp cmp = Cmp::Auto) {
    reg(
        name,
        [=](const Ins& in) -> Outs {
          const Tensor a = ta ? in[0].transpose(-1, -2) : in[0];
          const Tensor b = tb ? in[1].transpose(-1, -2) : in[1];
          switch (kind) {
            case Mm::Mm:
              return {mm(a, b)};
            case Mm::Bmm:
              return {bmm(a, b)};
            case Mm::Matmul:
              break;
          }
          return {matmul(a, b)};
        },
        cmp);
  };
  mm_case("matmul_3d_2d_f32", false, false, Mm::Matmul, Cmp::LongSum);  // k = 128
  for (const char* name :
       {"matmul_1d_1d_f32", "matmul_2d_1d_f32", "matmul_1d_2d_f32", "matmul_2d_2d_f32",
        "matmul_3d_1d_f32", "matmul_1d_3d_f32", "matmul_bcast_f32", "matmul_2d_3d_f32",
        "matmul_1x1_f32", "matmul_2d_2d_f64", "matmul_bcast_f64", "matmul_1d_1d_f64"}) {
    mm_case(name, false, false);
  }
  mm_case("matmul_ta_f32", true, false);
  mm_case("matmul_tb_f32", false, true);
  mm_case("matmul_tab_f32", true, true);
  mm_case("matmul_batched_ta_f32", true, false);
  mm_case("mm_f32", false, false, Mm::Mm);
  mm_case("mm_tb_f32", false, true, Mm::Mm);
  mm_case("bmm_f32", false, false, Mm::Bmm);
  mm_case("bmm_ta_f32", true, false, Mm::Bmm);
  mm_case("bmm_tb_f64", false, true, Mm::Bmm);
  reg("matmul_permuted_batch_f32", [](const Ins& in) -> Outs {
    return {matmul(in[0].permute({1, 0, 2}), in[1])};
  });
  reg("matmul_expanded_f32", [](const Ins& in) -> Outs {
    return {matmul(in[0].expand({3, 4, 6}), in[1])};
  });
  reg("matmul_empty_k_f32", [](const Ins&) -> Outs {
    return {matmul(zeros({3, 0}), zeros({0, 4}))};
  });
  reg("matmul_sliced_f32", [](const Ins& in) -> Outs {
    const Tensor a = in[0].slice(0, std::nullopt, std::nullopt, 2).slice(1, 1, 9);
    const Tensor b = in[1].slice(0, 1, 9).slice(1, std::nullopt, std::nullopt, 3);
    return {matmul(a, b)};
  });

  // ---- softmax family ----
  for (int64_t d : {0, 1, 2, -1}) {
    reg("softmax_" + dim_tag(d) + "_f32",
        [d](const Ins& in) -> Outs { return {softmax(in[0], d)}; });
    reg("log_softmax_" + dim_tag(d) + "_f32",
        [d](const Ins& in) -> Outs { return {log_softmax(in[0], d)}; });
  }
  reg("softmax_large_f32", [](const Ins& in) -> Outs {
    const Tensor& x = in[0];
    return {softmax(x, 2), softmax(x, 0), log_softmax(x, 2), log_softmax(x, 1)};
  });
  reg("softmax_neginf_f32", [](const Ins& in) -> Outs {
    const Tensor& x = in[0];
    return {softmax(x, 2),     softmax(x, 1),     softmax(x, 0),
            log_softmax(x, 2), log_softmax(x, 1), log_softmax(x, 0)};
  });
  reg("softmax_strided_f32", [](const Ins& in) -> Outs {
    return {softmax(in[0].t(), 1), log_softmax(in[0].t(), 0)};
  });
  reg("softmax_size1_dim_f32", [](const Ins& in) -> Outs {
    return {softmax(in[0], 1), log_softmax(in[0], 1)};
  });
  reg("softmax_posinf_nan_f32", [](const Ins& in) -> Outs {
    return {softmax(in[0], 1), log_softmax(in[0], 1)};
  });
  reg("softmax_16bit", [](const Ins& in) -> Outs {
    return {softmax(in[0], 1), log_softmax(in[0], 0)};
  });
  reg("softmax_d1_f64", [](const Ins& in) -> Outs {
    return {softmax(in[0], 1), log_softmax(in[0], 1)};
  });

  // ---- indexing and joining (values move, so exact) ----
  reg(
      "index_select_d0_f32", [](const Ins& in) -> Outs { return {index_select(in[0], 0, in[1])}; },
      Cmp::Exact);
  reg(
      "index_select_d1_f32", [](const Ins& in) -> Outs { return {index_select(in[0], 1, in[1])}; },
      Cmp::Exact);
  reg(
      "index_select_dm1_i32_index",
      [](const Ins& in) -> Outs { return {index_select(in[0], -1, in[1])}; }, Cmp::Exact);
  reg(
      "index_select_0d_index_f32",
      [](const Ins& in) -> Outs { return {index_select(in[0], 1, in[1])}; }, Cmp::Exact);
  reg(
      "indexing_strided_src_f32",
      [](const Ins& in) -> Outs {
        return {index_select(in[0].t(), 1, in[1]), gather(in[0].t(), 0, in[2])};
      },
      Cmp::Exact);
  reg("scatter_add_strided_self_f32", [](const Ins& in) -> Outs {
    Tensor base = in[0].clone();
    base.t().scatter_add_(0, in[1], in[2]);
    return {base};
  });
  reg("index_select_d0_i64", [](const Ins& in) -> Outs { return {index_select(in[0], 0, in[1])}; });
  // The listed ops with no case above: views, copies, fills, indexing.
  reg(
      "view_split_f32",
      [](const Ins& in) -> Outs {
        return {in[0].view({2, 2, 6})};
      },
      Cmp::Exact);
  reg(
      "reshape_transposed_f32",
      [](const Ins& in) -> Outs {
        return {in[0].t().reshape({3, 8})};
      },
      Cmp::Exact);
  reg(
      "select_f32",
      [](const Ins& in) -> Outs {
        return {in[0].select(1, 2), in[0].select(-1, -1)};
      },
      Cmp::Exact);
  reg(
      "unsqueeze_f32",
      [](const Ins& in) -> Outs {
        return {in[0].unsqueeze(0), in[0].unsqueeze(-1)};
      },
      Cmp::Exact);
  reg(
      "squeeze_f32",
      [](const Ins& in) -> Outs {
        return {in[0].squeeze(1), in[0].squeeze()};
      },
      Cmp::Exact);
  reg(
      "unfold_view_f32",
      [](const Ins& in) -> Outs {
        return {in[0].unfold(1, 3, 2), in[0].t().unfold(0, 2, 1), in[0].unfold(-1, 6, 6)};
      },
      Cmp::Exact);
  reg(
      "as_strided_overlapping_f32",
      [](const Ins& in) -> Outs {
        return {in[0].as_strided({4, 3}, {2, 1}, 1)};
      },
      Cmp::Exact);
  reg(
      "copy_broadcast_convert_f64",
      [](const Ins& in) -> Outs {
        Tensor out = in[0].clone();
        out.copy_(in[1]);
        return {out};
      },
      Cmp::Exact);
  reg(
      "clone_f32", [](const Ins& in) -> Outs { return {in[0].t().clone()}; }, Cmp::Exact);
  reg(
      "fill_f32",
      [](const Ins& in) -> Outs {
        return {in[0].clone().fill_(2.5), in[0].clone().zero_()};
      },
      Cmp::Exact);
  reg(
      "argmin_d1_f32",
      [](const Ins& in) -> Outs {
        return {argmin(in[0], 1), argmin(in[0], 0, true)};
      },
      Cmp::Exact);
  reg(
      "index_two_tensors_f32",
      [](const Ins& in) -> Outs {
        return {index(in[0], {in[1], in[2]})};
      },
      Cmp::Exact);
  reg("index_put_accumulate_f32",
      [](const Ins& in) -> Outs { return {index_put(in[0], {in[1]}, in[2], true)}; });
  reg(
      "index_put_f32",
      [](const Ins& in) -> Outs {
        return {index_put(in[0], {in[1], in[2]}, in[3])};
      },
      Cmp::Exact);
  reg(
      "embedding_f32", [](const Ins& in) -> Outs { return {embedding(in[0], in[1])}; }, Cmp::Exact);
  reg(
      "gather_d1_f32", [](const Ins& in) -> Outs { return {gather(in[0], 1, in[1])}; }, Cmp::Exact);
  reg(
      "gather_d0_f32", [](const Ins& in) -> Outs { return {gather(in[0], 0, in[1])}; }, Cmp::Exact);
  reg(
      "gather_3d_dm1_f32", [](const Ins& in) -> Outs { return {gather(in[0], -1, in[1])}; },
      Cmp::Exact);
  reg("scatter_add_d0_f32",
      [](const Ins& in) -> Outs { return {scatter_add(in[0], 0, in[1], in[2])}; });
  reg("scatter_add_d1_f32",
      [](const Ins& in) -> Outs { return {scatter_add(in[0], 1, in[1], in[2])}; });
  reg("scatter_add_d1_i64",
      [](const Ins& in) -> Outs { return {scatter_add(in[0], 1, in[1], in[2])}; });
  reg(
      "cat_d0_f32",
      [](const Ins& in) -> Outs {
        return {cat({in[0], in[1], in[2]}, 0)};
      },
      Cmp::Exact);
  reg(
      "cat_d1_f32",
      [](const Ins& in) -> Outs {
        return {cat({in[0], in[1]}, 1)};
      },
      Cmp::Exact);
  reg(
      "cat_dm1_f32",
      [](const Ins& in) -> Outs {
        return {cat({in[0], in[1]}, -1)};
      },
      Cmp::Exact);
  reg(
      "cat_strided_f32",
      [](const Ins& in) -> Outs {
        const Tensor &a = in[0], &b = in[1];
        return {cat({a.t(), b}, 0),
                cat({b.slice(1, std::nullopt, std::nullopt, 2), b.slice(1, 1, 2)}, 1)};
      },
      Cmp::Exact);
  reg(
      "stack_0d_f32",
      [](const Ins& in) -> Outs {
        return {stack({in[0], in[1]}, 0), stack({in[0], in[1], in[0]}, -1)};
      },
      Cmp::Exact);
  reg(
      "cat_promote_f32_f64",
      [](const Ins& in) -> Outs {
        return {cat({in[0], in[1]}, 0)};
      },
      Cmp::Exact);
  reg(
      "cat_promote_i64_f32",
      [](const Ins& in) -> Outs {
        return {cat({in[0], in[1]}, 1)};
      },
      Cmp::Exact);
  reg("cat_promote_bool_i32", [](const Ins& in) -> Outs { return {cat({in[0], in[1]}, 0)}; });
  for (int64_t d : {0, 1, 2, -1}) {
    reg(
        "stack_" + dim_tag(d) + "_f32",
        [d](const Ins& in) -> Outs {
          return {stack({in[0], in[1], in[2]}, d)};
        },
        Cmp::Exact);
  }

  // ---- views and copies ----
  reg(
      "permute_contiguous_f32",
      [](const Ins& in) -> Outs {
        return {in[0].permute({2, 0, 1}).contiguous()};
      },
      Cmp::Exact);
  reg(
      "slice_step_f32",
      [](const Ins& in) -> Outs {
        const Tensor& x = in[0];
        return {x.slice(0, 1, std::nullopt, 2).slice(1, std::nullopt, std::nullopt, 3).contiguous(),
                x.narrow(1, 2, 4).contiguous()};
      },
      Cmp::Exact);
  reg(
      "expand_contiguous_f32",
      [](const Ins& in) -> Outs {
        return {in[0].expand({2, 3, 4}).contiguous()};
      },
      Cmp::Exact);
  reg(
      "diagonal_f32",
      [](const Ins& in) -> Outs {
        const Tensor& x = in[0];
        return {x.diagonal().contiguous(), x.diagonal(1).contiguous(), x.diagonal(-2).contiguous()};
      },
      Cmp::Exact);
  reg(
      "transpose_reshape_f32",
      [](const Ins& in) -> Outs {
        return {in[0].transpose(0, 2).reshape({4, 6}), in[0].flatten(1)};
      },
      Cmp::Exact);

  // ---- factories ----
  // Tolerance, not exact: PyTorch's vector loop adds lane * step in float32.
  reg("arange_f32", [](const Ins&) -> Outs {
    return {arange(1.0, 1.3, 0.1, kFloat32), arange(-1.0, 1.0, 0.1, kFloat32),
            arange(0.5, 3.0, 1, kFloat32)};
  });
  reg(
      "arange_f64",
      [](const Ins&) -> Outs {
        return {arange(1.0, 1.3, 0.1, kFloat64), arange(0.0, -1.0, -0.3, kFloat64)};
      },
      Cmp::Exact);
  reg("arange_i64", [](const Ins&) -> Outs {
    return {arange(0, 10, 3), arange(7), arange(5, -5, -3)};
  });
  reg(
      "eye_full_f32",
      [](const Ins&) -> Outs {
        return {eye(3),
                eye(3, 5),
                eye(4, 2),
                full({2, 3}, 1.0 / 3.0),
                full({2}, 1.0 / 3.0, kFloat64),
                full({3}, 7, kInt64)};
      },
      Cmp::Exact);

  // ---- a Scalar on the left ----
  reg("rsub_scalar_f32", [](const Ins& in) -> Outs {
    const Tensor& x = in[0];
    return {2.0 - x, 1.5 / x, 3 * x, 0.5 + x};
  });
  reg("rdiv_scalar_i64", [](const Ins& in) -> Outs {
    const Tensor& x = in[0];
    return {1 / x, 10 - x, 2.5 * x};
  });

  // ---- dtype conversions (exact) ----
  reg(
      "to_bf16", [](const Ins& in) -> Outs { return {in[0].to(kBFloat16)}; }, Cmp::Exact);
  reg(
      "to_f16", [](const Ins& in) -> Outs { return {in[0].to(kFloat16)}; }, Cmp::Exact);
  reg(
      "to_bf16_nan", [](const Ins& in) -> Outs { return {in[0].to(kBFloat16)}; }, Cmp::Exact);
  reg(
      "to_f16_nan", [](const Ins& in) -> Outs { return {in[0].to(kFloat16)}; }, Cmp::Exact);
  for (const char* name : {"bf16_to_f32", "f16_to_f32"}) {
    reg(
        name,
        [](const Ins& in) -> Outs {
          return {in[0].to(kFloat32), in[0].to(kFloat64)};
        },
        Cmp::Exact);
  }
  reg(
      "f64_to_f32", [](const Ins& in) -> Outs { return {in[0].to(kFloat32)}; }, Cmp::Exact);
  reg(
      "f64_to_bf16_f16",
      [](const Ins& in) -> Outs {
        return {in[0].to(kBFloat16), in[0].to(kFloat16)};
      },
      Cmp::Exact);
  reg("f32_to_i64", [](const Ins& in) -> Outs { return {in[0].to(kInt64), in[0].to(kInt32)}; });
  reg(
      "int_to_float",
      [](const Ins& in) -> Outs {
        return {in[0].to(kFloat32), in[0].to(kFloat64), in[0].to(kBFloat16)};
      },
      Cmp::Exact);
  reg(
      "bool_conversions",
      [](const Ins& in) -> Outs {
        return {in[0].to(kBool), in[1].to(kFloat32), in[1].to(kInt64)};
      },
      Cmp::Exact);

  // ---- linear algebra (include/stride/linalg.h), float64 ----
  {
    using Fn = std::function<Tensor(const Ins&)>;
    const auto with_grads = [](std::vector<size_t> wrt, Fn fn) -> CaseFn {
      return [wrt, fn](const Ins& in) -> Outs { return testing::value_and_grads(in, wrt, fn); };
    };
    constexpr double inf = std::numeric_limits<double>::infinity();
    auto flat = [](std::vector<Tensor> parts) {
      for (Tensor& p : parts) p = p.reshape({-1});
      return cat(parts);
    };
    reg("linalg_lu_factor_ex_f64", [](const Ins& in) -> Outs {
      auto [LU, pivots, info] = linalg::lu_factor_ex(in[0]);
      return {LU, pivots, info};
    });
    reg("linalg_lu_factor_f64",
        with_grads({0}, [](const Ins& x) { return linalg::lu_factor(x[0]).first; }));
    reg("linalg_lu_f64", [](const Ins& in) -> Outs {
      auto [P, L, U] = linalg::lu(in[0]);
      return {P, L, U};
    });
    reg("lu_unpack_f64", [](const Ins& in) -> Outs {
      auto [P, L, U] = lu_unpack(in[0], in[1]);
      return {P, L, U};
    });
    reg("linalg_lu_solve_f64", [](const Ins& in) -> Outs {
      return {linalg::lu_solve(in[0], in[1], in[2]),
              linalg::lu_solve(in[0], in[1], in[2], true, true),
              linalg::lu_solve(in[0], in[1], in[2].transpose(-2, -1), false)};
    });
    reg("linalg_solve_triangular_f64", with_grads({0, 1}, [](const Ins& x) {
          return linalg::solve_triangular(x[0], x[1], true);
        }));
    reg("linalg_solve_f64",
        with_grads({0, 1}, [](const Ins& x) { return linalg::solve(x[0], x[1]); }));
    reg("linalg_solve_ex_f64", [](const Ins& in) -> Outs {
      auto [x, info] = linalg::solve_ex(in[0], in[1]);
      return {x, info};
    });
    reg("linalg_inv_f64", with_grads({0}, [](const Ins& x) { return linalg::inv(x[0]); }));
    reg("linalg_inv_ex_f64", [](const Ins& in) -> Outs {
      auto [inverse, info] = linalg::inv_ex(in[0]);
      return {inverse, info};
    });
    reg("linalg_det_f64", with_grads({0}, [](const Ins& x) { return linalg::det(x[0]); }));
    reg("linalg_slogdet_f64", [](const Ins& in) -> Outs {
      auto [sign, logabsdet] = linalg::slogdet(in[0]);
      return {sign, logabsdet};
    });
    reg("logdet_f64", [](const Ins& in) -> Outs { return {logdet(in[0])}; });
    reg("linalg_cholesky_ex_f64", [](const Ins& in) -> Outs {
      auto [L, info] = linalg::cholesky_ex(in[0]);
      return {L, info, linalg::cholesky_ex(in[0], true).first};
    });
    reg("linalg_cholesky_f64",
        with_grads({0}, [](const Ins& x) { return linalg::cholesky(x[0]); }));
    reg("cholesky_solve_f64", [](const Ins& in) -> Outs {
      return {cholesky_solve(in[0], in[1]), cholesky_solve(in[0], in[1].transpose(-2, -1), true)};
    });
    reg("cholesky_inverse_f64", [](const Ins& in) -> Outs {
      return {cholesky_inverse(in[0]), cholesky_inverse(in[0].transpose(-2, -1), true)};
    });
    reg("triangular_solve_f64", [](const Ins& in) -> Outs {
      return {triangular_solve(in[0], in[1]).first,
              triangular_solve(in[0], in[1], false, true).first};
    });
    reg("linalg_qr_f64", with_grads({0}, [flat](const Ins& x) {
          auto [Q, R] = linalg::qr(x[0]);
          return flat({Q, R});
        }));
    reg("linalg_eigh_f64", with_grads({0}, [flat](const Ins& x) {
          auto [L, V] = linalg::eigh(x[0]);
          return flat({L, abs(V)});
        }));
    reg("linalg_eigvalsh_f64", [](const Ins& in) -> Outs {
      return {linalg::eigvalsh(in[0]), linalg::eigvalsh(in[0], "U")};
    });
    reg("linalg_svd_f64", with_grads({0}, [flat](const Ins& x) {
          auto [U, S, Vh] = linalg::svd(x[0], false);
          return flat({S, U.matmul(Vh), abs(U)});
        }));
    reg("linalg_svdvals_f64", [](const Ins& in) -> Outs { return {linalg::svdvals(in[0])}; });
    reg("linalg_householder_product_f64",
        with_grads({0, 1}, [](const Ins& x) { return linalg::householder_product(x[0], x[1]); }));
    reg("linalg_vector_norm_f64",
        with_grads({0}, [](const Ins& x) { return linalg::vector_norm(x[0], 2, {1}); }));
    reg("linalg_vector_norm_ords_f64", [](const Ins& in) -> Outs {
      Outs out;
      for (const double ord : {inf, -inf, 0.0, 1.0, 3.0, 0.5}) {
        out.push_back(linalg::vector_norm(in[0], ord, {1}));
      }
      out.push_back(linalg::vector_norm(in[0], 3));
      return out;
    });
    reg("linalg_matrix_norm_f64", [](const Ins& in) -> Outs {
      Outs out{linalg::matrix_norm(in[0]), linalg::matrix_norm(in[0], "nuc")};
      for (const double ord : {1.0, -1.0, inf, -inf, 2.0, -2.0}) {
        out.push_back(linalg::matrix_norm(in[0], ord));
      }
      out.push_back(linalg::matrix_norm(in[0], 1, {0, 2}));
      return out;
    });
    reg("linalg_norm_f64", [](const Ins& in) -> Outs {
      return {linalg::norm(in[0]), linalg::norm(in[0], 2.0), linalg::norm(in[0], "nuc"),
              linalg::norm(in[0], 3.0, {1})};
    });
    reg("linalg_cond_f64", [](const Ins& in) -> Outs {
      return {linalg::cond(in[0]), linalg::cond(in[0], "fro"), linalg::cond(in[0], 1.0),
              linalg::cond(in[0], -2.0)};
    });
    reg("linalg_matrix_rank_f64", [](const Ins& in) -> Outs {
      return {linalg::matrix_rank(in[0]), linalg::matrix_rank(in[0], 1.0, 0.0)};
    });
    reg("linalg_pinv_f64", with_grads({0}, [](const Ins& x) { return linalg::pinv(x[0]); }));
    reg("linalg_matrix_power_f64", [](const Ins& in) -> Outs {
      return {linalg::matrix_power(in[0], 3), linalg::matrix_power(in[0], 0),
              linalg::matrix_power(in[0], -2)};
    });
    reg("linalg_matrix_exp_f64",
        with_grads({0}, [](const Ins& x) { return linalg::matrix_exp(x[0]); }));
    reg("linalg_cross_f64", [](const Ins& in) -> Outs {
      return {linalg::cross(in[0], in[1]),
              linalg::cross(in[0].transpose(0, 1), in[1].transpose(0, 1).expand({3, 4}), 0)};
    });
    reg("linalg_vecdot_f64", [](const Ins& in) -> Outs {
      return {linalg::vecdot(in[0], in[1]), linalg::vecdot(in[0], in[1], 0)};
    });
    reg("linalg_multi_dot_f64", [](const Ins& in) -> Outs {
      return {linalg::multi_dot({in[0], in[1], in[2]})};
    });
    reg("linalg_diagonal_f64", [](const Ins& in) -> Outs {
      return {linalg::diagonal(in[0]), linalg::diagonal(in[0], -1, 0, 2)};
    });
    reg("linalg_vander_f64", [](const Ins& in) -> Outs {
      return {linalg::vander(in[0]), linalg::vander(in[0], 2), linalg::vander(in[1], 4)};
    });
    reg("linalg_tensorinv_f64", [](const Ins& in) -> Outs { return {linalg::tensorinv(in[0])}; });
    reg("linalg_tensorsolve_f64", [](const Ins& in) -> Outs {
      return {linalg::tensorsolve(in[0], in[1]),
              linalg::tensorsolve(in[0].permute({2, 0, 1}), in[1], std::vector<int64_t>{0})};
    });
    reg("linalg_lstsq_f64", [](const Ins& in) -> Outs {
      auto [x, residuals, rank, sv] = linalg::lstsq(in[0], in[1], std::nullopt, "gelsd");
      return {x,
              residuals,
              rank,
              sv,
              std::get<0>(linalg::lstsq(in[0], in[1])),
              std::get<0>(linalg::lstsq(in[0].transpose(-2, -1), in[1].narrow(1, 0, 3)))};
    });
  }

  // A differentiable case's last input is the upstream gradient; its outputs
  // are the result, then the gradients of the inputs at `wrt`.
  using Fn = std::function<Tensor(const Ins&)>;
  const auto value_and_grad = [](std::vector<size_t> wrt, Fn fn) -> CaseFn {
    return [wrt, fn](const Ins& in) -> Outs { return testing::value_and_grads(in, wrt, fn); };
  };

  // ---- torch.masked (src/ops/masked.cpp): a case per op, in[0] the input,
  // the masks after it (tools/gen_goldens.py, MASKED_*) ----
  {
    using std::nullopt;
    // float64: x, a mask m of its shape, a mask mb that broadcasts to it.
    using TwoMaskFn = std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)>;
    const std::vector<std::pair<std::string, TwoMaskFn>> f64_grads = {
        {"sum", [](auto& x, auto& m, auto&) { return masked::sum(x, {1}, false, nullopt, m); }},
        {"prod",
         [](auto& x, auto& m, auto&) {
           return masked::prod(x, {0, 2}, true, nullopt, m);
         }},
        {"amax",
         [](auto& x, auto&, auto& mb) { return masked::amax(x, {-1}, false, nullopt, mb); }},
        {"amin", [](auto& x, auto& m, auto&) { return masked::amin(x, {}, false, nullopt, m); }},
        {"mean",
         [](auto& x, auto& m, auto&) {
           return masked::mean(x, {1, 2}, false, nullopt, m);
         }},
        {"logsumexp",
         [](auto& x, auto& m, auto&) { return masked::logsumexp(x, {1}, false, nullopt, m); }},
        {"norm",
         [](auto& x, auto& m, auto&) { return masked::norm(x, 3.0, {1}, false, nullopt, m); }},
        {"var", [](auto& x, auto& m, auto&) { return masked::var(x, {1}, 1, false, nullopt, m); }},
        {"std_dev",
         [](auto& x, auto&, auto& mb) {
           return masked::std_dev(x, {0, 2}, 0, true, nullopt, mb);
         }},
        {"median", [](auto& x, auto& m, auto&) { return masked::median(x, 1, false, nullopt, m); }},
    };
    for (const auto& [name, f] : f64_grads) {
      reg("masked_" + name + "_f64",
          value_and_grad({0}, [f](const Ins& in) { return f(in[0], in[1], in[2]); }));
    }
    reg("masked_argmax_f64",
        [](const Ins& in) -> Outs { return {masked::argmax(in[0], 2, false, nullopt, in[1])}; });
    reg("masked_argmin_f64",
        [](const Ins& in) -> Outs { return {masked::argmin(in[0], 1, true, nullopt, in[1])}; });
    // float32: x and a mask of its shape.
    using MaskedFn = std::function<Tensor(const Tensor&, const Tensor&)>;
    const std::vector<std::pair<std::string, MaskedFn>> f32_grads = {
        {"cumsum", [](auto& x, auto& m) { return masked::cumsum(x, 1, nullopt, m); }},
        {"cumprod", [](auto& x, auto& m) { return masked::cumprod(x, 0, nullopt, m); }},
        {"softmax", [](auto& x, auto& m) { return masked::softmax(x, 1, nullopt, m); }},
        {"log_softmax", [](auto& x, auto& m) { return masked::log_softmax(x, -1, nullopt, m); }},
        {"softmin", [](auto& x, auto& m) { return masked::softmin(x, 0, nullopt, m); }},
        {"normalize",
         [](auto& x, auto& m) { return masked::normalize(x, 2.0, 1, 1e-12, nullopt, m); }},
    };
    for (const auto& [name, f] : f32_grads) {
      reg("masked_" + name + "_f32",
          value_and_grad({0}, [f](const Ins& in) { return f(in[0], in[1]); }));
    }
    reg("masked_logaddexp_f32", value_and_grad({0, 1}, [](const Ins& in) {
          return masked::logaddexp(in[0], in[1], nullopt, in[2], in[2].select(0, 0));
        }));
    // int64 inputs, no gradients.
    const std::vector<std::pair<std::string, MaskedFn>> i64_values = {
        {"sum", [](auto& x, auto& m) { return masked::sum(x, {1}, false, nullopt, m); }},
        {"cumsum", [](auto& x, auto& m) { return masked::cumsum(x, 0, nullopt, m); }},
        {"amax", [](auto& x, auto& m) { return masked::amax(x, {1}, false, nullopt, m); }},
        {"prod", [](auto& x, auto& m) { return masked::prod(x, {0}, false, nullopt, m); }},
        {"mean", [](auto& x, auto& m) { return masked::mean(x, {1}, false, kFloat64, m); }},
        {"logsumexp",
         [](auto& x, auto& m) { return masked::logsumexp(x, {1}, false, nullopt, m); }},
    };
    for (const auto& [name, f] : i64_values) {
      reg("masked_" + name + "_i64", [f](const Ins& in) -> Outs { return {f(in[0], in[1])}; });
    }
  }

  // ---- nn functional: activations, losses, vectors, padding (src/nn/) ----
  namespace F = nn::functional;
  // ---- complex numbers and torch.fft: real float64 inputs, complex
  // operands from complex(), complex results as view_as_real, then the
  // gradients of every input (tools/gen_goldens.py, COMPLEX_GOLDENS) ----
  {
    const auto c = [](const Tensor& a, const Tensor& b) { return complex(a, b); };
    const auto parts = [](const Tensor& t) { return t.is_complex() ? view_as_real(t) : t; };
    const auto complex_case = [&](const std::string& name, Fn fn, size_t inputs) {
      std::vector<size_t> wrt;
      for (size_t i = 0; i < inputs; ++i) wrt.push_back(i);
      reg(name + "_f64", value_and_grad(wrt, std::move(fn)));
    };
    const auto two = [&](const std::string& name,
                         std::function<Tensor(const Tensor&, const Tensor&)> f) {
      complex_case(
          name, [f](const Ins& x) { return f(x[0], x[1]); }, 2);
    };
    const auto one = [&](const std::string& name, std::function<Tensor(const Tensor&)> f) {
      complex_case(
          name, [f](const Ins& x) { return f(x[0]); }, 1);
    };
    using OptDims = fft::OptionalDims;
    two("view_as_real",
        [=](const Tensor& a, const Tensor& b) { return view_as_real(c(a, b).t()); });
    two("view_as_complex", [=](const Tensor& a, const Tensor& b) {
      return parts(view_as_complex(stack({a, b}, -1)) * c(b, a));
    });
    two("real", [=](const Tensor& a, const Tensor& b) { return real(c(a, b) * c(b, a)); });
    two("imag", [=](const Tensor& a, const Tensor& b) { return imag(c(a, b) * c(b, a)); });
    two("complex", [=](const Tensor& a, const Tensor& b) { return parts(c(a, b)); });
    two("polar", [=](const Tensor& a, const Tensor& b) { return parts(polar(a.abs() + 0.1, b)); });
    two("conj", [=](const Tensor& a, const Tensor& b) { return parts(conj(c(a, b)) * c(b, a)); });
    two("conj_physical",
        [=](const Tensor& a, const Tensor& b) { return parts(conj_physical(c(a, b))); });
    two("resolve_conj",
        [=](const Tensor& a, const Tensor& b) { return parts(resolve_conj(conj(c(a, b)))); });
    two("angle", [=](const Tensor& a, const Tensor& b) { return angle(c(a, b)); });
    two("complex_arithmetic", [=](const Tensor& a, const Tensor& b) {
      const Tensor x = c(a, b), y = c(b, a).flip({1});
      return parts(x * y - x / (y + 3.0) + exp(x) + reciprocal(x + 4.0) + (-x));
    });
    two("complex_abs_sum_mean", [=](const Tensor& a, const Tensor& b) {
      return abs(c(a, b)) + parts(c(a, b).sum({0}) + c(a, b).mean()).sum();
    });
    two("fft_c2c", [=](const Tensor& a, const Tensor& b) {
      return parts(fft::fft(c(a, b), std::nullopt, 0));
    });
    one("fft_fft", [=](const Tensor& a) { return parts(fft::fft(a, 7)); });
    two("fft_ifft",
        [=](const Tensor& a, const Tensor& b) { return parts(fft::ifft(c(a, b), 5, 0, "ortho")); });
    one("fft_rfft",
        [=](const Tensor& a) { return parts(fft::rfft(a, std::nullopt, -1, "forward")); });
    two("fft_irfft", [=](const Tensor& a, const Tensor& b) { return fft::irfft(c(a, b)); });
    two("fft_irfft_odd",
        [=](const Tensor& a, const Tensor& b) { return fft::irfft(c(a, b), 7, 0); });
    two("fft_hfft", [=](const Tensor& a, const Tensor& b) { return fft::hfft(c(a, b), 5); });
    one("fft_ihfft", [=](const Tensor& a) { return parts(fft::ihfft(a)); });
    two("fft_fft2", [=](const Tensor& a, const Tensor& b) { return parts(fft::fft2(c(a, b))); });
    two("fft_ifft2", [=](const Tensor& a, const Tensor& b) {
      return parts(fft::ifft2(c(a, b), OptDims(std::vector<int64_t>{4, 5}), {1, 0}));
    });
    one("fft_rfft2", [=](const Tensor& a) {
      return parts(fft::rfft2(a, std::nullopt, {-2, -1}, "ortho"));
    });
    two("fft_irfft2", [=](const Tensor& a, const Tensor& b) {
      return fft::irfft2(c(a, b), OptDims(std::vector<int64_t>{3, 7}));
    });
    two("fft_hfft2", [=](const Tensor& a, const Tensor& b) { return fft::hfft2(c(a, b)); });
    one("fft_ihfft2", [=](const Tensor& a) { return parts(fft::ihfft2(a)); });
    one("fft_fftn", [=](const Tensor& a) { return parts(fft::fftn(a)); });
    two("fft_ifftn", [=](const Tensor& a, const Tensor& b) {
      return parts(fft::ifftn(c(a, b), std::nullopt, OptDims(std::vector<int64_t>{0})));
    });
    one("fft_rfftn", [=](const Tensor& a) {
      return parts(fft::rfftn(a, OptDims(std::vector<int64_t>{5, 5})));
    });
    two("fft_irfftn", [=](const Tensor& a, const Tensor& b) {
      return fft::irfftn(c(a, b), std::nullopt, std::nullopt, "forward");
    });
    two("fft_hfftn", [=](const Tensor& a, const Tensor& b) { return fft::hfftn(c(a, b)); });
    one("fft_ihfftn", [=](const Tensor& a) { return parts(fft::ihfftn(a)); });
    one("fft_fftshift", [=](const Tensor& a) { return fft::fftshift(a); });
    two("fft_ifftshift", [=](const Tensor& a, const Tensor& b) {
      return parts(fft::ifftshift(c(a, b), OptDims(std::vector<int64_t>{1})));
    });
  }
  reg("isreal_f64", [](const Ins& in) -> Outs {
    return {isreal(complex(in[0], in[1])), isreal(in[0])};
  });
  reg("fft_fftfreq_f32", [](const Ins&) -> Outs {
    return {fft::fftfreq(7), fft::fftfreq(6, 0.5)};
  });
  reg("fft_rfftfreq_f32", [](const Ins&) -> Outs {
    return {fft::rfftfreq(7, 2.0), fft::rfftfreq(6)};
  });
  const auto activation = [&](const std::string& name, Tensor (*f)(const Tensor&)) {
    reg(name + "_f32", value_and_grad({0}, [f](const Ins& x) { return f(x[0]); }));
  };
  activation("leaky_relu", [](const Tensor& x) { return F::leaky_relu(x, 0.2); });
  activation("elu", [](const Tensor& x) { return F::elu(x, 0.7); });
  activation("selu", [](const Tensor& x) { return F::selu(x); });
  activation("celu", [](const Tensor& x) { return F::celu(x, 1.5); });
  activation("softplus", [](const Tensor& x) { return F::softplus(x); });
  activation("softplus_beta", [](const Tensor& x) { return F::softplus(x, 2.0, 5.0); });
  activation("hardtanh", [](const Tensor& x) { return F::hardtanh(x, -0.5, 1.0); });
  activation("relu6", [](const Tensor& x) { return F::relu6(x); });
  activation("hardswish", [](const Tensor& x) { return F::hardswish(x); });
  activation("hardsigmoid", [](const Tensor& x) { return F::hardsigmoid(x); });
  activation("mish", [](const Tensor& x) { return F::mish(x); });
  activation("logsigmoid", [](const Tensor& x) { return F::logsigmoid(x); });
  activation("softsign", [](const Tensor& x) { return F::softsign(x); });
  activation("tanhshrink", [](const Tensor& x) { return F::tanhshrink(x); });
  activation("softshrink", [](const Tensor& x) { return F::softshrink(x); });
  activation("hardshrink", [](const Tensor& x) { return F::hardshrink(x, 0.7); });
  activation("threshold", [](const Tensor& x) { return F::threshold(x, 0.1, -2.0); });
  reg("relu6_i64", [](const Ins& in) -> Outs {
    return {F::relu6(in[0]), F::hardtanh(in[0], -2, 3), F::threshold(in[0], 1, 7)};
  });
  reg("glu_f32", value_and_grad({0}, [](const Ins& x) { return F::glu(x[0], 1); }));
  reg("prelu_f32", value_and_grad({0, 1}, [](const Ins& x) { return F::prelu(x[0], x[1]); }));
  reg("prelu_one_weight_f32",
      value_and_grad({0, 1}, [](const Ins& x) { return F::prelu(x[0], x[1]); }));
  reg("softmin_f32", value_and_grad({0}, [](const Ins& x) { return F::softmin(x[0], 0); }));
  reg("softmin_dtype_f64", [](const Ins& in) -> Outs { return {F::softmin(in[0], 1, kFloat64)}; });
  using F::Reduction;
  const std::pair<const char*, Reduction> reductions[] = {
      {"mean", Reduction::Mean}, {"sum", Reduction::Sum}, {"none", Reduction::None}};
  for (const auto& [name, r] : reductions) {
    reg(std::string("l1_loss_") + name + "_f32",
        value_and_grad({0, 1}, [r](const Ins& x) { return F::l1_loss(x[0], x[1], r); }));
  }
  reg("l1_loss_weighted_f32", value_and_grad({0, 1, 2}, [](const Ins& x) {
        return F::l1_loss(x[0], x[1], Reduction::Mean, x[2]);
      }));
  reg("smooth_l1_loss_f32",
      value_and_grad({0, 1}, [](const Ins& x) { return F::smooth_l1_loss(x[0], x[1]); }));
  reg("smooth_l1_loss_beta_none_f32", value_and_grad({0, 1}, [](const Ins& x) {
        return F::smooth_l1_loss(x[0], x[1], Reduction::None, 0.5);
      }));
  reg("smooth_l1_loss_beta0_f32", value_and_grad({0, 1}, [](const Ins& x) {
        return F::smooth_l1_loss(x[0], x[1], Reduction::Sum, 0.0);
      }));
  reg("huber_loss_f32",
      value_and_grad({0, 1}, [](const Ins& x) { return F::huber_loss(x[0], x[1]); }));
  reg("huber_loss_weighted_none_f32", value_and_grad({0, 1, 2}, [](const Ins& x) {
        return F::huber_loss(x[0], x[1], Reduction::None, 0.5, x[2]);
      }));
  reg("binary_cross_entropy_f32", value_and_grad({0}, [](const Ins& x) {
        return F::binary_cross_entropy(x[0], x[1], x[2], Reduction::None);
      }));
  reg("binary_cross_entropy_mean_f32",
      value_and_grad({0, 1}, [](const Ins& x) { return F::binary_cross_entropy(x[0], x[1]); }));
  reg("binary_cross_entropy_with_logits_f32", value_and_grad({0, 1}, [](const Ins& x) {
        return F::binary_cross_entropy_with_logits(x[0], x[1], x[2], x[3], Reduction::None);
      }));
  reg("binary_cross_entropy_with_logits_mean_f32", value_and_grad({0, 1}, [](const Ins& x) {
        return F::binary_cross_entropy_with_logits(x[0], x[1]);
      }));
  for (const char* r : {"batchmean", "sum", "none", "mean"}) {
    reg(std::string("kl_div_") + r + "_f32",
        value_and_grad({0}, [r](const Ins& x) { return F::kl_div(x[0], x[1], r); }));
  }
  reg("kl_div_log_target_f32",
      value_and_grad({0, 1}, [](const Ins& x) { return F::kl_div(x[0], x[1], "sum", true); }));
  reg("soft_margin_loss_f32", value_and_grad({0}, [](const Ins& x) {
        return F::soft_margin_loss(x[0], x[1], Reduction::None);
      }));
  reg("hinge_embedding_loss_f32", value_and_grad({0}, [](const Ins& x) {
        return F::hinge_embedding_loss(x[0], x[1], 1.0, Reduction::None);
      }));
  reg("hinge_embedding_loss_mean_f32",
      value_and_grad({0}, [](const Ins& x) { return F::hinge_embedding_loss(x[0], x[1], 0.5); }));
  reg("poisson_nll_loss_f32", value_and_grad({0}, [](const Ins& x) {
        return F::poisson_nll_loss(x[0], x[1], true, true, 1e-8, Reduction::None);
      }));
  reg("poisson_nll_loss_no_log_f32",
      value_and_grad({0}, [](const Ins& x) { return F::poisson_nll_loss(x[0], x[1], false); }));
  reg("cosine_embedding_loss_f32", value_and_grad({0, 1}, [](const Ins& x) {
        return F::cosine_embedding_loss(x[0], x[1], x[2], 0.1, Reduction::None);
      }));
  reg("margin_ranking_loss_f32", value_and_grad({0, 1}, [](const Ins& x) {
        return F::margin_ranking_loss(x[0], x[1], x[2], 0.3);
      }));
  reg("multi_margin_loss_f32", value_and_grad({0}, [](const Ins& x) {
        return F::multi_margin_loss(x[0], x[1], 2, 0.7, x[2], Reduction::None);
      }));
  reg("multilabel_margin_loss_f32", value_and_grad({0}, [](const Ins& x) {
        return F::multilabel_margin_loss(x[0], x[1], Reduction::None);
      }));
  reg("multilabel_soft_margin_loss_f32", value_and_grad({0, 1}, [](const Ins& x) {
        return F::multilabel_soft_margin_loss(x[0], x[1], x[2], Reduction::None);
      }));
  reg("triplet_margin_loss_f32", value_and_grad({0, 1, 2}, [](const Ins& x) {
        return F::triplet_margin_loss(x[0], x[1], x[2], 1.5, 3.0, 1e-6, true, Reduction::None);
      }));
  reg("gaussian_nll_loss_f32", value_and_grad({0, 1, 2}, [](const Ins& x) {
        return F::gaussian_nll_loss(x[0], x[1], x[2], true, 1e-6, Reduction::None);
      }));
  reg("cross_entropy_weighted_f32", value_and_grad({0}, [](const Ins& x) {
        return F::cross_entropy(x[0], x[1], x[2], -100, Reduction::Mean, 0.1);
      }));
  reg("cross_entropy_probabilities_f32", value_and_grad({0, 1}, [](const Ins& x) {
        return F::cross_entropy(x[0], x[1], x[2], -100, Reduction::Mean, 0.2);
      }));
  reg("nll_loss_weighted_f32", value_and_grad({0}, [](const Ins& x) {
        return F::nll_loss(x[0], x[1], x[2], 2, Reduction::Sum);
      }));
  reg("bilinear_f32", value_and_grad({0, 1, 2, 3}, [](const Ins& x) {
        return F::bilinear(x[0], x[1], x[2], x[3]);
      }));
  reg("channel_shuffle_f32", [](const Ins& in) -> Outs {
    return {F::channel_shuffle(in[0], 3), F::channel_shuffle(in[0], 2)};
  });
  reg("pdist_f32", value_and_grad({0}, [](const Ins& x) { return F::pdist(x[0], 1.5); }));
  reg("local_response_norm_f32", value_and_grad({0}, [](const Ins& x) {
        return F::local_response_norm(x[0], 4, 0.2, 0.6, 1.5);
      }));
  reg("one_hot_i64", [](const Ins& in) -> Outs {
    return {F::one_hot(in[0], 6), F::one_hot(in[0]), F::one_hot(zeros({0}, kInt64), 3)};
  });
  reg("normalize_f32", value_and_grad({0}, [](const Ins& x) { return F::normalize(x[0]); }));
  reg("normalize_p1_dim0_f32",
      value_and_grad({0}, [](const Ins& x) { return F::normalize(x[0], 1.0, 0); }));
  reg("normalize_p3_f32",
      value_and_grad({0}, [](const Ins& x) { return F::normalize(x[0], 3.0, -1); }));
  reg("cosine_similarity_f32",
      value_and_grad({0, 1}, [](const Ins& x) { return F::cosine_similarity(x[0], x[1]); }));
  reg("cosine_similarity_broadcast_f32",
      value_and_grad({0, 1}, [](const Ins& x) { return F::cosine_similarity(x[0], x[1], -1); }));
  reg("pairwise_distance_f32",
      value_and_grad({0, 1}, [](const Ins& x) { return F::pairwise_distance(x[0], x[1]); }));
  reg("pairwise_distance_p1_keepdim_f32", value_and_grad({0, 1}, [](const Ins& x) {
        return F::pairwise_distance(x[0], x[1], 1.0, 1e-6, true);
      }));
  reg("pad_f32", value_and_grad({0}, [](const Ins& x) {
        return F::pad(x[0], {1, 2, -1, 1, 0, 1}, F::PadMode::Constant, 0.5);
      }));
  reg("pad_crop_i64", [](const Ins& in) -> Outs {
    return {F::pad(in[0], {-2, -3}), F::pad(in[0], {1, -1, 2, 0}, F::PadMode::Constant, 7)};
  });
  reg("pad_reflect_f32", value_and_grad({0}, [](const Ins& x) {
        return F::pad(x[0], {4, -1, -1, 2}, F::PadMode::Reflect);
      }));
  reg("pad_reflect_3d_f32", value_and_grad({0}, [](const Ins& x) {
        return F::pad(x[0], {1, 2, 2, 1, 1, 0}, F::PadMode::Reflect);
      }));
  reg("pad_replicate_f32", value_and_grad({0}, [](const Ins& x) {
        return F::pad(x[0], {3, -1}, F::PadMode::Replicate);
      }));
  reg("pad_circular_f32", value_and_grad({0}, [](const Ins& x) {
        return F::pad(x[0], {4, -1, 2, 3}, F::PadMode::Circular);
      }));

  // ---- convolutions and poolings (src/nn/conv.cpp, pooling.cpp) ----
  reg("unfold_f32", value_and_grad({0}, [](const Ins& x) {
        return F::unfold(x[0], {2, 3}, {1, 2}, {1, 0}, {2, 1});
      }));
  reg("fold_f32", value_and_grad({0}, [](const Ins& x) {
        return F::fold(x[0], {4, 5}, {2, 2}, {1}, {1}, {2});
      }));
  reg("linear_cross_entropy_f32", value_and_grad({0, 1, 3}, [](const Ins& x) {
        F::LinearCrossEntropyOptions o;
        o.linear_bias = x[3];
        o.weight = x[4];
        o.ignore_index = 2;
        o.label_smoothing = 0.1;
        o.batch_chunk_size = 3;
        return F::linear_cross_entropy(x[0], x[1], x[2], o);
      }));
  reg("linear_cross_entropy_probabilities_f64", value_and_grad({0, 1, 2}, [](const Ins& x) {
        F::LinearCrossEntropyOptions o;
        o.reduction = F::Reduction::None;
        o.batch_chunk_size = 2;
        return F::linear_cross_entropy(x[0], x[1], x[2], o);
      }));
  reg("conv1d_f32", value_and_grad({0, 1, 2}, [](const Ins& x) {
        return F::conv1d(x[0], x[1], x[2], with([](auto& o) {
                           o.stride = {2};
                           o.padding = {1};
                           o.groups = 2;
                         }));
      }));
  reg("conv2d_f32", value_and_grad({0, 1, 2}, [](const Ins& x) {
        return F::conv2d(x[0], x[1], x[2], with([](auto& o) {
                           o.padding = {1, 0};
                           o.dilation = {1, 2};
                         }));
      }));
  reg("conv2d_same_f32", value_and_grad({0, 1}, [](const Ins& x) {
        return F::conv2d(x[0], x[1], {},
                         with([](auto& o) { o.padding_mode = F::ConvPadding::Same; }));
      }));
  reg("conv2d_stride_groups_f64", value_and_grad({0, 1, 2}, [](const Ins& x) {
        return F::conv2d(x[0], x[1], x[2], with([](auto& o) {
                           o.stride = {2, 3};
                           o.padding = {2};
                           o.groups = 3;
                         }));
      }));
  reg("conv3d_f64", value_and_grad({0, 1, 2}, [](const Ins& x) {
        return F::conv3d(x[0], x[1], x[2], with([](auto& o) {
                           o.stride = {1, 2, 1};
                           o.padding = {1, 0, 1};
                           o.dilation = {2, 1, 1};
                           o.groups = 2;
                         }));
      }));
  reg("conv_transpose1d_f32", value_and_grad({0, 1, 2}, [](const Ins& x) {
        return F::conv_transpose1d(x[0], x[1], x[2], with([](auto& o) {
                                     o.stride = {2};
                                     o.output_padding = {1};
                                     o.groups = 2;
                                   }));
      }));
  reg("conv_transpose2d_f32", value_and_grad({0, 1, 2}, [](const Ins& x) {
        return F::conv_transpose2d(x[0], x[1], x[2], with([](auto& o) {
                                     o.stride = {2, 1};
                                     o.padding = {1};
                                     o.dilation = {1, 2};
                                   }));
      }));
  reg("conv_transpose3d_f32", value_and_grad({0, 1, 2}, [](const Ins& x) {
        return F::conv_transpose3d(x[0], x[1], x[2], with([](auto& o) {
                                     o.stride = {2, 1, 2};
                                     o.padding = {1, 0, 0};
                                     o.output_padding = {1, 0, 1};
                                     o.dilation = {1, 2, 1};
                                   }));
      }));
  reg("max_pool1d_f32", value_and_grad({0}, [](const Ins& x) {
        return F::max_pool1d(x[0], {3}, with([](auto& o) {
                               o.stride = {2};
                               o.padding = {1};
                               o.ceil_mode = true;
                             }));
      }));
  reg("max_pool2d_f32", value_and_grad({0}, [](const Ins& x) {
        return F::max_pool2d(x[0], {2, 3}, with([](auto& o) {
                               o.padding = {1};
                               o.dilation = {2, 1};
                               o.ceil_mode = true;
                             }));
      }));
  reg("max_pool2d_indices_f32", [](const Ins& in) -> Outs {
    auto [values, indices] = F::max_pool2d_with_indices(in[0], {3}, with([](auto& o) {
                                                          o.stride = {2};
                                                          o.padding = {1};
                                                        }));
    return {values, indices};
  });
  reg("max_pool3d_f32", value_and_grad({0}, [](const Ins& x) {
        return F::max_pool3d(x[0], {2, 2, 3}, with([](auto& o) {
                               o.padding = {1, 0, 1};
                               o.dilation = {1, 2, 1};
                               o.ceil_mode = true;
                             }));
      }));
  reg("max_pool3d_indices_f32", [](const Ins& in) -> Outs {
    auto [values, indices] = F::max_pool3d_with_indices(in[0], {3, 2, 3}, with([](auto& o) {
                                                          o.stride = {2};
                                                          o.padding = {1};
                                                        }));
    return {values, indices};
  });
  reg("avg_pool1d_f32", value_and_grad({0}, [](const Ins& x) {
        return F::avg_pool1d(x[0], {3}, with([](auto& o) {
                               o.stride = {2};
                               o.padding = {1};
                               o.ceil_mode = true;
                             }));
      }));
  reg("avg_pool2d_f32", value_and_grad({0}, [](const Ins& x) {
        return F::avg_pool2d(x[0], {3, 2}, with([](auto& o) {
                               o.padding = {1};
                               o.ceil_mode = true;
                               o.count_include_pad = false;
                             }));
      }));
  reg("avg_pool2d_divisor_f32", value_and_grad({0}, [](const Ins& x) {
        return F::avg_pool2d(x[0], {2}, with([](auto& o) {
                               o.stride = {1};
                               o.divisor_override = 3;
                             }));
      }));
  reg("avg_pool3d_f32", value_and_grad({0}, [](const Ins& x) {
        return F::avg_pool3d(x[0], {2, 3, 2}, with([](auto& o) {
                               o.padding = {1};
                               o.ceil_mode = true;
                               o.count_include_pad = false;
                             }));
      }));
  reg("adaptive_avg_pool1d_f32",
      value_and_grad({0}, [](const Ins& x) { return F::adaptive_avg_pool1d(x[0], {3}); }));
  reg("adaptive_avg_pool2d_f32", value_and_grad({0}, [](const Ins& x) {
        return F::adaptive_avg_pool2d(x[0], {3, 4});
      }));
  reg("adaptive_avg_pool3d_f32", value_and_grad({0}, [](const Ins& x) {
        return F::adaptive_avg_pool3d(x[0], {3, 2, 4});
      }));
  reg("adaptive_max_pool1d_f32", [](const Ins& in) -> Outs {
    auto [values, indices] = F::adaptive_max_pool1d_with_indices(in[0], {3});
    return {values, indices};
  });
  reg("adaptive_max_pool2d_f32", value_and_grad({0}, [](const Ins& x) {
        return F::adaptive_max_pool2d_with_indices(x[0], {3, 4}).first;
      }));
  reg("adaptive_max_pool2d_indices_f32", [](const Ins& in) -> Outs {
    auto [values, indices] = F::adaptive_max_pool2d_with_indices(in[0], {3, 4});
    return {values, indices};
  });
  reg("adaptive_max_pool3d_f32", value_and_grad({0}, [](const Ins& x) {
        return F::adaptive_max_pool3d_with_indices(x[0], {3, 2, 4}).first;
      }));
  reg("adaptive_max_pool3d_indices_f32", [](const Ins& in) -> Outs {
    auto [values, indices] = F::adaptive_max_pool3d_with_indices(in[0], {3, 2, 4});
    return {values, indices};
  });
  // nn ops moved from Python (src/nn/unpool_and_bags.cpp, multi_head_attention.cpp,
  // margin_losses.cpp; nonzero_static in src/ops/advanced_indexing.cpp)
  reg("max_unpool1d_f32", value_and_grad({0}, [](const Ins& x) {
        return F::max_unpool1d(x[0], x[1], {2}, with([](auto& o) { o.output_size = {9}; }));
      }));
  reg("max_unpool2d_f32", value_and_grad({0}, [](const Ins& x) {
        return F::max_unpool2d(x[0], x[1], {2}, with([](auto& o) {
                                 o.output_size = {2, 3, 5, 6};
                               }));
      }));
  reg("max_unpool3d_f32", value_and_grad({0}, [](const Ins& x) {
        return F::max_unpool3d(x[0], x[1], {2}, with([](auto& o) {
                                 o.stride = {2};
                                 o.padding = {1};
                               }));
      }));
  reg("embedding_bag_f32", value_and_grad({1, 3}, [](const Ins& x) {
        return F::embedding_bag(x[0], x[1], with([&](auto& o) {
                                  o.offsets = x[2];
                                  o.mode = F::EmbeddingBagMode::Sum;
                                  o.per_sample_weights = x[3];
                                  o.padding_idx = 2;
                                }));
      }));
  reg("embedding_bag_mean_f32", value_and_grad({1}, [](const Ins& x) {
        return F::embedding_bag(x[0], x[1], with([](auto& o) { o.padding_idx = -1; }));
      }));
  reg("embedding_bag_max_f32", value_and_grad({1}, [](const Ins& x) {
        return F::embedding_bag(x[0], x[1], with([&](auto& o) {
                                  o.offsets = x[2];
                                  o.mode = F::EmbeddingBagMode::Max;
                                  o.include_last_offset = true;
                                }));
      }));
  reg("triplet_margin_with_distance_loss_f32", value_and_grad({0, 1, 2}, [](const Ins& x) {
        const auto cosine_distance = [](const Tensor& a, const Tensor& b) {
          return 1.0 - F::cosine_similarity(a, b);
        };
        return F::triplet_margin_with_distance_loss(x[0], x[1], x[2], cosine_distance, 1.5, true,
                                                    Reduction::None);
      }));
  reg("triplet_margin_with_distance_loss_default_f32", value_and_grad({0, 1, 2}, [](const Ins& x) {
        return F::triplet_margin_with_distance_loss(x[0], x[1], x[2]);
      }));
  reg("multi_head_attention_forward_f32",
      value_and_grad({0, 1, 2, 3, 4, 5, 6, 7, 8}, [](const Ins& x) {
        const Tensor padding = tensor<bool>(
            {false, false, true, false, true, false, false, false, false, false}, {2, 5});
        const auto [out, weights] =
            F::multi_head_attention_forward(x[0], x[1], x[2], 6, 3, x[3], x[4], x[7], x[8], true,
                                            0.0, x[5], x[6], with([&](auto& o) {
                                              o.training = false;
                                              o.key_padding_mask = padding;
                                              o.attn_mask = x[9];
                                              o.average_attn_weights = false;
                                            }));
        return cat({out.reshape({-1}), weights.reshape({-1})});
      }));
  reg("multi_head_attention_forward_separate_f32",
      value_and_grad({0, 1, 3, 4, 6, 7}, [](const Ins& x) {
        const Tensor causal = ones({3, 5}, kBool).triu(1);
        return F::multi_head_attention_forward(x[0], x[1], x[2], 4, 2, Tensor(), Tensor(), Tensor(),
                                               Tensor(), false, 0.0, x[6], Tensor(),
                                               with([&](auto& o) {
                                                 o.need_weights = false;
                                                 o.attn_mask = causal;
                                                 o.use_separate_proj_weight = true;
                                                 o.q_proj_weight = x[3];
                                                 o.k_proj_weight = x[4];
                                                 o.v_proj_weight = x[5];
                                                 o.static_v = x[7];
                                               }))
            .first;
      }));
  reg("nonzero_static_f32", [](const Ins& in) -> Outs {
    return {nonzero_static(in[0], 4), nonzero_static(in[0], 15, -5)};
  });
  reg("interpolate_bilinear_f32", value_and_grad({0}, [](const Ins& x) {
        return F::interpolate(x[0], with([](auto& o) {
                                o.size = {7, 3};
                                o.mode = F::InterpolateMode::Bilinear;
                              }));
      }));
  reg("interpolate_linear_align_f32", value_and_grad({0}, [](const Ins& x) {
        return F::interpolate(x[0], with([](auto& o) {
                                o.scale_factor = {2.5};
                                o.mode = F::InterpolateMode::Linear;
                                o.align_corners = true;
                              }));
      }));
  reg("interpolate_bicubic_f32", value_and_grad({0}, [](const Ins& x) {
        return F::interpolate(x[0], with([](auto& o) {
                                o.scale_factor = {2.0, 0.6};
                                o.mode = F::InterpolateMode::Bicubic;
                              }));
      }));
  reg("interpolate_nearest_f32", value_and_grad({0}, [](const Ins& x) {
        return F::interpolate(x[0], with([](auto& o) { o.scale_factor = {1.7, 0.5}; }));
      }));
  reg("interpolate_nearest_exact_f32", value_and_grad({0}, [](const Ins& x) {
        return F::interpolate(x[0], with([](auto& o) {
                                o.size = {7};
                                o.mode = F::InterpolateMode::NearestExact;
                              }));
      }));
  reg("interpolate_area_f32", value_and_grad({0}, [](const Ins& x) {
        return F::interpolate(x[0], with([](auto& o) {
                                o.size = {3, 2};
                                o.mode = F::InterpolateMode::Area;
                              }));
      }));
  reg("interpolate_trilinear_f32", value_and_grad({0}, [](const Ins& x) {
        return F::interpolate(x[0], with([](auto& o) {
                                o.size = {3, 5, 2};
                                o.mode = F::InterpolateMode::Trilinear;
                              }));
      }));
  reg("pixel_shuffle_f32",
      value_and_grad({0}, [](const Ins& x) { return F::pixel_shuffle(x[0], 2); }));
  reg("pixel_unshuffle_f32",
      value_and_grad({0}, [](const Ins& x) { return F::pixel_unshuffle(x[0], 2); }));
  reg("group_norm_f32",
      value_and_grad({0, 1, 2}, [](const Ins& x) { return F::group_norm(x[0], 3, x[1], x[2]); }));

  // ---- composites ----
  reg("mlp_cross_entropy_f32", [](const Ins& in) -> Outs {
    const Tensor &x = in[0], &w1 = in[1], &b1 = in[2], &w2 = in[3], &b2 = in[4], &t = in[5];
    const Tensor h = relu(matmul(x, w1.t()) + b1);
    const Tensor logits = matmul(h, w2.t()) + b2;
    const Tensor logp = log_softmax(logits, 1);
    const Tensor loss = -logp.gather(1, t.unsqueeze(1)).mean();
    return {logits, logp, loss};
  });
  reg("mlp_gelu_f64", [](const Ins& in) -> Outs {
    const Tensor &x = in[0], &w1 = in[1], &b1 = in[2], &w2 = in[3], &b2 = in[4], &t = in[5];
    const Tensor logits = matmul(gelu(matmul(x, w1) + b1), w2) + b2;
    const Tensor loss = -log_softmax(logits, 1).gather(1, t.unsqueeze(1)).mean();
    return {logits, loss};
  });

  // ---- recurrent layers (src/nn/rnn.cpp): torch's cells and sequence ops ----
  // Gradients with respect to every input; the sequence ops' outputs are
  // flattened into one tensor, as gen_goldens.py's `flat` does.
  const auto every_input = [](size_t n) {
    std::vector<size_t> wrt;
    for (size_t i = 0; i < n; ++i) wrt.push_back(i);
    return wrt;
  };
  const auto flat = [](const std::vector<Tensor>& outputs) {
    std::vector<Tensor> flattened;
    for (const Tensor& o : outputs) flattened.push_back(o.reshape({-1}));
    return cat(flattened, 0);
  };
  const auto from = [](const Ins& x, size_t first) {
    return std::vector<Tensor>(x.begin() + std::ptrdiff_t(first), x.end());
  };
  reg("rnn_tanh_cell_f32", value_and_grad(every_input(6), [](const Ins& x) {
        return F::rnn_tanh_cell(x[0], x[1], x[2], x[3], x[4], x[5]);
      }));
  reg("rnn_relu_cell_f32", value_and_grad(every_input(6), [](const Ins& x) {
        return F::rnn_relu_cell(x[0], x[1], x[2], x[3], x[4], x[5]);
      }));
  reg("lstm_cell_f32", value_and_grad(every_input(7), [=](const Ins& x) {
        const auto [h, c] = F::lstm_cell(x[0], {x[1], x[2]}, x[3], x[4], x[5], x[6]);
        return flat({h, c});
      }));
  reg("gru_cell_f32", value_and_grad(every_input(6), [](const Ins& x) {
        return F::gru_cell(x[0], x[1], x[2], x[3], x[4], x[5]);
      }));
  reg("rnn_tanh_f32", value_and_grad(every_input(18), [=](const Ins& x) {
        const auto [out, h] =
            F::rnn_tanh(x[0], x[1], from(x, 2), {.num_layers = 2, .bidirectional = true});
        return flat({out, h});
      }));
  reg("rnn_relu_f32", value_and_grad(every_input(4), [=](const Ins& x) {
        const auto [out, h] =
            F::rnn_relu(x[0], x[1], from(x, 2), {.has_biases = false, .batch_first = true});
        return flat({out, h});
      }));
  reg("lstm_f32", value_and_grad(every_input(19), [=](const Ins& x) {
        const auto [out, h, c] =
            F::lstm(x[0], {x[1], x[2]}, from(x, 3), {.num_layers = 2, .bidirectional = true});
        return flat({out, h, c});
      }));
  reg("gru_f32", value_and_grad(every_input(18), [=](const Ins& x) {
        const auto [out, h] = F::gru(x[0], x[1], from(x, 2),
                                     {.num_layers = 2, .bidirectional = true, .batch_first = true});
        return flat({out, h});
      }));
  return cases;
}

const std::vector<GoldenCase>& all_cases() {
  static const std::vector<GoldenCase> cases = build_cases();
  return cases;
}

const GoldenCase* find_case(const std::string& name) {
  for (const GoldenCase& c : all_cases()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// ---- the golden file ----
using GoldenData = testing::GoldenFile;
using FileCase = testing::GoldenCaseData;

std::string golden_path() {
  return STRIDE_GOLDEN_DIR "/ops.safetensors";
}

const GoldenData& golden_file() {
  static const GoldenData file = testing::read_golden_file(golden_path());
  return file;
}

// float32 and float64 results within PyTorch's own test tolerances (wider
// for long sums); other dtypes, and Cmp::Exact cases, bit for bit.
std::string compare(const Tensor& got, const Tensor& want, Cmp cmp) {
  const ScalarType t = want.dtype();
  testing::Tolerance tol;
  tol.exact = cmp == Cmp::Exact || (t != kFloat32 && t != kFloat64);
  tol.rtol = cmp == Cmp::Cephes ? 1e-4 : t == kFloat64 ? 1e-12 : 1e-5;
  tol.atol = cmp == Cmp::Cephes ? 1e-7 : t == kFloat64 ? 1e-12 : cmp == Cmp::LongSum ? 1e-5 : 1e-6;
  return testing::golden_mismatch(got, want, tol);
}

// ---- the tests ----
TEST(GoldenFile, LoadsAndRecordsHowItWasMade) {
  const GoldenData& file = golden_file();
  ASSERT_EQ(file.error, "") << golden_path();
  EXPECT_FALSE(file.cases.empty());
  for (const char* key : {"generator", "torch_version"}) {
    auto it = file.metadata.find(key);
    ASSERT_NE(it, file.metadata.end()) << "metadata has no \"" << key << "\"";
    EXPECT_FALSE(it->second.empty()) << key;
  }
  EXPECT_EQ(file.metadata.at("cases"), std::to_string(file.cases.size()));
}

TEST(GoldenFile, EveryFileCaseHasACppCase) {
  const GoldenData& file = golden_file();
  ASSERT_EQ(file.error, "") << golden_path();
  for (const auto& [name, unused] : file.cases) {
    EXPECT_NE(find_case(name), nullptr)
        << "case " << name << " is in " << golden_path()
        << " but not in the table of golden_test.cpp. Hint: add it there (or drop it from "
           "tools/gen_goldens.py and regenerate).";
  }
}

TEST(GoldenFile, EveryCppCaseIsInTheFile) {
  const GoldenData& file = golden_file();
  ASSERT_EQ(file.error, "") << golden_path();
  std::set<std::string> seen;
  for (const GoldenCase& c : all_cases()) {
    EXPECT_TRUE(seen.insert(c.name).second) << "case " << c.name << " is in the table twice";
    EXPECT_TRUE(file.cases.count(c.name))
        << "case " << c.name << " is in golden_test.cpp but not in " << golden_path()
        << ". Hint: add it to tools/gen_goldens.py and run build-venv/bin/python "
           "tools/gen_goldens.py.";
  }
  for (const auto& [name, why] : known_bugs()) {
    EXPECT_NE(find_case(name), nullptr) << "known bug " << name << " names no case";
  }
}

// Every listed op (src/core/op_list.h) has a golden case here or in the nn
// functional goldens (tests/golden/nn_functional.safetensors), except those
// only backward formulas run (checked through their ops' gradients) and the
// random fills, whose streams are stride's own Philox: PyTorch has no values
// to compare them with (tests/core/generator_test.cpp checks their
// distributions and seeds).
TEST(GoldenFile, EveryListedOpHasACase) {
  std::vector<std::string> names;
  for (const GoldenCase& c : all_cases()) names.push_back(c.name);
  for (const auto& [key, unused] :
       io::load_safetensors(STRIDE_GOLDEN_DIR "/nn_functional.safetensors").tensors) {
    names.push_back(key.substr(0, key.find('/')));
  }
  // Random draws: their properties are tested in tests/ops/sampling_test.cpp.
  const std::set<std::string> random_fills = {"uniform", "normal", "random", "bernoulli",
                                              "multinomial"};
  // PyTorch has no packed weights: llama.cpp's own Python package is their
  // oracle (tests/nn/packed_linear_test.cpp, tests/models/gguf_test.cpp).
  const std::set<std::string> llama_cpp_formats = {"pack_weight", "unpack_weight", "linear_packed"};
  const std::vector<std::string> missing =
      testing::ops_without_a_case(names, [&](const detail::OpInfo& op) {
        return !op.internal && !random_fills.count(op.name) && !llama_cpp_formats.count(op.name);
      });
  EXPECT_TRUE(missing.empty()) << "no PyTorch golden for: " << ::testing::PrintToString(missing);
}

class GoldenOps : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenOps, MatchesPyTorch) {
  const std::string& name = GetParam();
  const GoldenData& file = golden_file();
  ASSERT_EQ(file.error, "") << golden_path();
  const GoldenCase* c = find_case(name);
  ASSERT_NE(c, nullptr);
  auto it = file.cases.find(name);
  ASSERT_NE(it, file.cases.end()) << "case " << name << " is not in " << golden_path()
                                  << ". Hint: run build-venv/bin/python tools/gen_goldens.py.";
  const FileCase& expected = it->second;
  Outs got;
  try {
    got = c->fn(expected.inputs);
  } catch (const std::exception& e) {
    FAIL() << "[" << name << "] stride threw: " << e.what();
  }
  ASSERT_EQ(got.size(), expected.outputs.size())
      << "[" << name << "] the C++ case returns " << got.size() << " outputs, the file has "
      << expected.outputs.size();
  for (size_t i = 0; i < got.size(); ++i) {
    const std::string diff = compare(got[i], expected.outputs[i], c->cmp);
    EXPECT_TRUE(diff.empty()) << "[" << name << "] out" << i << ": " << diff;
  }
}

std::vector<std::string> runnable_case_names() {
  std::vector<std::string> names;
  for (const GoldenCase& c : all_cases()) {
    if (!known_bugs().count(c.name)) names.push_back(c.name);
  }
  return names;
}

std::string case_test_name(const ::testing::TestParamInfo<std::string>& param) {
  return param.param;
}

INSTANTIATE_TEST_SUITE_P(Golden,
                         GoldenOps,
                         ::testing::ValuesIn(runnable_case_names()),
                         case_test_name);

}  // namespace
}  // namespace stride
