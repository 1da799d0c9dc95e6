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
#include "stride/nn/functional.h"
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
enum class Cmp { Auto, Exact, LongSum };

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
  reg(
      "sort_ties_nan_f32",
      [](const Ins& in) -> Outs {
        auto [av, ai] = sort(in[0], 1);
        auto [dv, di] = sort(in[0], 1, true);
        auto [v0, i0] = sort(in[0], 0);
        return {av, ai, dv, di, v0, i0};
      },
      Cmp::Exact);
  reg("sort_i64", [](const Ins& in) -> Outs {
    auto [av, ai] = sort(in[0], 1);
    auto [dv, di] = sort(in[0], 0, true);
    return {av, ai, dv, di};
  });
  reg("argsort_f32", [](const Ins& in) -> Outs {
    return {argsort(in[0]), argsort(in[0], 0, true)};
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

  // ---- nn functional: activations, losses, vectors, padding (src/nn/) ----
  // A differentiable case's last input is the upstream gradient; its outputs
  // are the result, then the gradients of the inputs at `wrt`.
  namespace F = nn::functional;
  using Fn = std::function<Tensor(const Ins&)>;
  const auto value_and_grad = [](std::vector<size_t> wrt, Fn fn) -> CaseFn {
    return [wrt, fn](const Ins& in) -> Outs { return testing::value_and_grads(in, wrt, fn); };
  };
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
  reg("adaptive_avg_pool1d_f32",
      value_and_grad({0}, [](const Ins& x) { return F::adaptive_avg_pool1d(x[0], {3}); }));
  reg("adaptive_avg_pool2d_f32", value_and_grad({0}, [](const Ins& x) {
        return F::adaptive_avg_pool2d(x[0], {3, 4});
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
  tol.rtol = t == kFloat64 ? 1e-12 : 1e-5;
  tol.atol = t == kFloat64 ? 1e-12 : cmp == Cmp::LongSum ? 1e-5 : 1e-6;
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
  const std::vector<std::string> missing = testing::ops_without_a_case(
      names,
      [&](const detail::OpInfo& op) { return !op.internal && !random_fills.count(op.name); });
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
