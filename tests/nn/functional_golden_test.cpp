// nn functional ops against PyTorch (docs/design.md invariant 7):
// tools/gen_nn_goldens.py writes inputs, PyTorch's outputs and input
// gradients into tests/golden/nn_functional.safetensors; the table below
// recomputes every case with stride. A differentiable case's last input is
// the upstream gradient; its outputs are the forward result, then the
// gradients of the inputs the case lists. The two tables must name the same
// cases. Run: stride_tests --gtest_filter='FunctionalGolden*'.
//
// Comparison: dtype and shape exactly; float32 to rtol 1e-5 (1e-4 for cases
// that accumulate long sums) with atol 1e-6, float64 to rtol 1e-10 with atol
// 1e-12; NaN must match NaN.
#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "stride/autograd.h"
#include "stride/io.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"
#include "support/golden_file.h"

namespace stride {
namespace {

namespace F = nn::functional;
using F::Reduction;
using Ins = std::vector<Tensor>;
using Outs = std::vector<Tensor>;
using CaseFn = std::function<Outs(const Ins&)>;
using Fn = std::function<Tensor(const Ins&)>;

struct NnCase {
  std::string name;
  CaseFn fn;
  double rtol_f32 = 1e-5;
};

using testing::value_and_grads;

CaseFn ce(Reduction r, double smoothing = 0.0, int64_t ignore_index = -100) {
  return [=](const Ins& in) {
    return value_and_grads(in, {0}, [=](const Ins& x) {
      return F::cross_entropy(x[0], x[1], ignore_index, r, smoothing);
    });
  };
}

CaseFn nll(Reduction r) {
  return [=](const Ins& in) {
    return value_and_grads(in, {0}, [=](const Ins& x) { return F::nll_loss(x[0], x[1], -100, r); });
  };
}

CaseFn mse(Reduction r) {
  return [=](const Ins& in) {
    return value_and_grads(in, {0, 1}, [=](const Ins& x) { return F::mse_loss(x[0], x[1], r); });
  };
}

CaseFn rms(double eps, bool weight) {
  return [=](const Ins& in) {
    if (!weight) {
      return value_and_grads(in, {0},
                             [=](const Ins& x) { return F::rms_norm(x[0], Tensor(), eps); });
    }
    return value_and_grads(in, {0, 1}, [=](const Ins& x) { return F::rms_norm(x[0], x[1], eps); });
  };
}

CaseFn ln(std::vector<int64_t> shape, bool affine, double eps) {
  return [=](const Ins& in) {
    if (!affine) {
      return value_and_grads(in, {0}, [=](const Ins& x) {
        return F::layer_norm(x[0], shape, Tensor(), Tensor(), eps);
      });
    }
    return value_and_grads(
        in, {0, 1, 2}, [=](const Ins& x) { return F::layer_norm(x[0], shape, x[1], x[2], eps); });
  };
}

CaseFn sdpa(bool masked,
            bool causal = false,
            std::optional<double> scale = std::nullopt,
            std::optional<F::CausalAlignment> alignment = std::nullopt,
            std::vector<size_t> wrt = {0, 1, 2}) {
  return [=](const Ins& in) {
    return value_and_grads(in, wrt, [=](const Ins& x) {
      return F::scaled_dot_product_attention(x[0], x[1], x[2], masked ? x[3] : Tensor(), 0.0,
                                             causal, scale, alignment);
    });
  };
}

CaseFn rope(F::RopeConvention conv, int64_t offset, double base = 10000.0) {
  return [=](const Ins& in) {
    return value_and_grads(
        in, {0}, [=](const Ins& x) { return F::rotary_embedding(x[0], offset, base, conv); });
  };
}

const std::vector<NnCase>& all_cases() {
  using enum Reduction;
  using F::RopeConvention;
  static const std::vector<NnCase> cases = {
      {"cross_entropy_2d_mean_f32", ce(Mean)},
      {"cross_entropy_2d_sum_f64", ce(Sum)},
      {"cross_entropy_2d_none_f32", ce(None)},
      {"cross_entropy_smooth_mean_f32", ce(Mean, 0.1)},
      {"cross_entropy_smooth_sum_f32", ce(Sum, 0.2)},
      {"cross_entropy_smooth_none_f64", ce(None, 0.25)},
      {"cross_entropy_3d_mean_f32", ce(Mean, 0.1)},
      {"cross_entropy_3d_none_f64", ce(None)},
      {"cross_entropy_3d_sum_f32", ce(Sum)},
      {"cross_entropy_ignore_class_f32", ce(Mean, 0.1, 2)},
      {"cross_entropy_int32_targets_f32", ce(Mean)},
      {"cross_entropy_1d_f32", ce(Mean)},
      {"cross_entropy_large_f32", ce(Mean, 0.05), 1e-4},
      {"cross_entropy_all_ignored_f32", ce(Mean)},
      {"nll_2d_mean_f32", nll(Mean)},
      {"nll_2d_sum_f64", nll(Sum)},
      {"nll_3d_none_f32", nll(None)},
      {"mse_mean_f32", mse(Mean)},
      {"mse_sum_f64", mse(Sum)},
      {"mse_none_f32", mse(None)},
      {"rms_norm_f32", rms(1e-6, true)},
      {"rms_norm_f64", rms(1e-6, true)},
      {"rms_norm_noweight_f64", rms(1e-6, false)},
      {"rms_norm_eps_f32", rms(1e-2, true)},
      {"rms_norm_wide_f32", rms(1e-6, true), 1e-4},
      {"layer_norm_f32", ln({10}, true, 1e-5)},
      {"layer_norm_2d_shape_f64", ln({4, 5}, true, 1e-5)},
      {"layer_norm_noaffine_f32", ln({7}, false, 1e-3)},
      {"linear_f32",
       [](const Ins& in) {
         return value_and_grads(in, {0, 1, 2},
                                [](const Ins& x) { return F::linear(x[0], x[1], x[2]); });
       }},
      {"linear_nobias_f64",
       [](const Ins& in) {
         return value_and_grads(in, {0, 1}, [](const Ins& x) { return F::linear(x[0], x[1]); });
       }},
      {"linear_1d_f32",
       [](const Ins& in) {
         return value_and_grads(in, {0, 1, 2},
                                [](const Ins& x) { return F::linear(x[0], x[1], x[2]); });
       }},
      {"scaled_dot_product_attention_f32", sdpa(false)},
      {"scaled_dot_product_attention_cross_f64", sdpa(false)},
      {"scaled_dot_product_attention_causal_f32", sdpa(false, true)},
      {"scaled_dot_product_attention_causal_bottom_right_f32",
       sdpa(false, true, std::nullopt, F::CausalAlignment::BottomRight)},
      {"scaled_dot_product_attention_causal_top_left_f64",
       sdpa(false, true, std::nullopt, F::CausalAlignment::TopLeft)},
      {"scaled_dot_product_attention_bool_mask_f32", sdpa(true)},
      {"scaled_dot_product_attention_float_mask_f64", sdpa(true)},
      {"scaled_dot_product_attention_scale_f32", sdpa(false, false, 0.3)},
      {"scaled_dot_product_attention_fully_masked_row_f32",
       sdpa(true, false, std::nullopt, std::nullopt, {0})},
      {"rotary_embedding_interleaved_f32", rope(RopeConvention::Interleaved, 0)},
      {"rotary_embedding_halfsplit_f32", rope(RopeConvention::HalfSplit, 5)},
      {"rotary_embedding_interleaved_offset_f64", rope(RopeConvention::Interleaved, 100, 500000.0)},
      {"rotary_embedding_halfsplit_large_pos_f32", rope(RopeConvention::HalfSplit, 4000)},
      {"rotary_embedding_interleaved_large_pos_f64", rope(RopeConvention::Interleaved, 70000)},
      // The fused ops stride adds, against their PyTorch compositions.
      {"swiglu_f32",
       [](const Ins& in) {
         return value_and_grads(in, {0, 1}, [](const Ins& x) { return F::swiglu(x[0], x[1]); });
       }},
      {"swiglu_beta_f64",
       [](const Ins& in) {
         return value_and_grads(in, {0, 1, 2},
                                [](const Ins& x) { return F::swiglu(x[0], x[1], x[2]); });
       }},
      {"linear_concat_f32",
       [](const Ins& in) {
         return value_and_grads(in, {0, 1, 2}, [](const Ins& x) {
           return F::linear_concat(x[0], {x[1], x[2]});
         });
       }},
      {"linear_groups_f64",
       [](const Ins& in) {
         return value_and_grads(in, {0, 1, 2, 3}, [](const Ins& x) {
           return cat(F::linear_groups(x[0], {{x[1]}, {x[2], x[3]}}), -1);
         });
       }},
      {"rotary_attention_f32",
       [](const Ins& in) {
         return value_and_grads(in, {0, 1, 2}, [](const Ins& x) {
           const auto [cos, sin] = F::rotary_tables(x[0].size(-2), x[0].size(-1), 0, 10000.0);
           return F::rotary_attention(x[0], x[1], x[2], cos, sin, F::RopeConvention::Interleaved,
                                      0.0, true);
         });
       }},
  };
  return cases;
}

const NnCase* find_case(const std::string& name) {
  for (const NnCase& c : all_cases()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// ---- the file ----
using GoldenData = testing::GoldenFile;

std::string golden_path() {
  return STRIDE_GOLDEN_DIR "/nn_functional.safetensors";
}

const GoldenData& golden_file() {
  static const GoldenData file = testing::read_golden_file(golden_path());
  return file;
}

std::string compare(const Tensor& got, const Tensor& want, double rtol_f32) {
  const bool f64 = want.dtype() == kFloat64;
  return testing::golden_mismatch(got, want,
                                  {.rtol = f64 ? 1e-10 : rtol_f32, .atol = f64 ? 1e-12 : 1e-6});
}

TEST(FunctionalGoldenFile, LoadsAndRecordsHowItWasMade) {
  const GoldenData& file = golden_file();
  ASSERT_EQ(file.error, "") << golden_path();
  for (const char* key : {"generator", "torch_version"}) {
    ASSERT_TRUE(file.metadata.count(key)) << "metadata has no \"" << key << "\"";
  }
  EXPECT_EQ(file.metadata.at("cases"), std::to_string(file.cases.size()));
}

TEST(FunctionalGoldenFile, TablesNameTheSameCases) {
  const GoldenData& file = golden_file();
  ASSERT_EQ(file.error, "") << golden_path();
  for (const auto& [name, unused] : file.cases) {
    EXPECT_NE(find_case(name), nullptr)
        << "case " << name << " is in " << golden_path()
        << " but not in functional_golden_test.cpp. Hint: add it to the table.";
  }
  std::set<std::string> seen;
  for (const NnCase& c : all_cases()) {
    EXPECT_TRUE(seen.insert(c.name).second) << "case " << c.name << " is in the table twice";
    EXPECT_TRUE(file.cases.count(c.name))
        << "case " << c.name << " is not in " << golden_path()
        << ". Hint: add it to tools/gen_nn_goldens.py and run /usr/bin/python3 "
           "tools/gen_nn_goldens.py.";
  }
}

class FunctionalGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(FunctionalGolden, MatchesPyTorch) {
  const std::string& name = GetParam();
  const GoldenData& file = golden_file();
  ASSERT_EQ(file.error, "") << golden_path();
  const NnCase* c = find_case(name);
  ASSERT_NE(c, nullptr);
  auto it = file.cases.find(name);
  ASSERT_NE(it, file.cases.end()) << "case " << name << " is not in " << golden_path();
  Outs got;
  try {
    got = c->fn(it->second.inputs);
  } catch (const std::exception& e) {
    FAIL() << "[" << name << "] stride threw: " << e.what();
  }
  const Outs& want = it->second.outputs;
  ASSERT_EQ(got.size(), want.size()) << "[" << name << "] output count";
  for (size_t i = 0; i < got.size(); ++i) {
    const std::string diff = compare(got[i], want[i], c->rtol_f32);
    EXPECT_TRUE(diff.empty()) << "[" << name << "] out" << i << (i == 0 ? " (forward)" : " (grad)")
                              << ": " << diff;
  }
}

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const NnCase& c : all_cases()) names.push_back(c.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(FunctionalNn,
                         FunctionalGolden,
                         ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

}  // namespace
}  // namespace stride
