// Errors name the op, the shapes and the fix (docs/design.md invariant 4).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include <stride/stride.h>

#include "core/check.h"
#include "support/error_message.h"
#include "support/op_coverage.h"
#include "support/options.h"

namespace stride {
namespace {

using testing::message_of;

void expect_contains(const std::string& msg, std::initializer_list<const char*> parts) {
  for (const char* p : parts)
    EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
}

TEST(Errors, BroadcastMismatchNamesOpAndShapes) {
  auto msg = message_of<ShapeError>([] { (void)add(ones({2, 3}), ones({4})); });
  expect_contains(msg, {"[add]", "(2, 3)", "(4)"});
}

// An integer divisor of 0 raises PyTorch's ZeroDivisionError naming the op;
// a floating one gives NaN (fmod) or inf (floor division).
TEST(Errors, IntegerDivisionByZeroNamesTheOp) {
  const Tensor a = tensor<int64_t>({4, 5}), b = tensor<int64_t>({1, 0});
  expect_contains(message_of<Error>([&] { (void)fmod(a, b); }), {"[fmod]", "ZeroDivisionError"});
  expect_contains(message_of<Error>([&] { (void)a.clone().remainder_(b); }),
                  {"[remainder]", "ZeroDivisionError"});
  expect_contains(message_of<Error>([&] { (void)div(a, b, "floor"); }),
                  {"[div]", "ZeroDivisionError"});
  EXPECT_TRUE(std::isnan(fmod(a.to(kFloat32), b).select(0, 1).item<float>()));
  EXPECT_TRUE(std::isinf(div(a.to(kFloat32), b, "floor").select(0, 1).item<float>()));
}

TEST(Errors, MatmulInnerDimMismatch) {
  auto msg = message_of<ShapeError>([] { (void)matmul(ones({32, 16, 128}), ones({64, 65})); });
  expect_contains(msg, {"[matmul]", "(32, 16, 128)", "(64, 65)", "128 and 64"});
  EXPECT_NE(message_of<ShapeError>([] {
              (void)mm(ones({2, 3, 4}), ones({4, 2}));
            }),
            "no exception");
}

TEST(Errors, ViewOnIncompatibleStrides) {
  auto msg = message_of<ShapeError>([] { (void)ones({3, 4}).t().view({12}); });
  expect_contains(msg, {"[view]", "(4, 3)", "reshape"});
}

TEST(Errors, OutOfWrongShapeOrDtype) {
  Tensor out = empty({2, 2});
  auto msg = message_of<ShapeError>([&] { add_out(out, ones({2, 3}), ones({2, 3})); });
  expect_contains(msg, {"[add]", "(2, 2)", "(2, 3)"});
  Tensor iout = empty({2, 3}, kInt64);
  msg = message_of<DTypeError>([&] { add_out(iout, ones({2, 3}), ones({2, 3})); });
  expect_contains(msg, {"[add]", "int64", "float32"});
  // In-place ops cannot broadcast their self.
  Tensor self = ones({1, 3});
  msg = message_of<ShapeError>([&] { self.add_(ones({2, 3})); });
  expect_contains(msg, {"(1, 3)", "(2, 3)"});
  // An empty out is resized, as in PyTorch.
  Tensor fresh = empty({0});
  add_out(fresh, ones({2, 3}), ones({2, 3}));
  EXPECT_EQ(fresh.sizes(), IntArrayRef({2, 3}));
  EXPECT_EQ(fresh.sum().item<double>(), 12.0);
}

TEST(Errors, PartialOverlapSuggestsClone) {
  Tensor x = arange(10).to(kFloat32);
  Tensor a = x.narrow(0, 0, 6), b = x.narrow(0, 2, 6);
  auto msg = message_of<OverlapError>([&] { a.add_(b); });
  expect_contains(msg, {"[add]", "overlap", "clone()"});
  Tensor m = ones({3, 3});
  EXPECT_THROW(m.add_(m.t()), OverlapError);
  // The same view in and out is fine: that is what in-place means.
  EXPECT_NO_THROW(m.add_(m));
  EXPECT_EQ(m.sum().item<double>(), 18.0);
}

TEST(Errors, WriteThroughExpandedView) {
  Tensor e = zeros({1, 4}).expand({3, 4});
  auto msg = message_of<OverlapError>([&] { e.mul_(2); });
  expect_contains(msg, {"[mul]", "clone()"});
  EXPECT_THROW(e.copy_(ones({3, 4})), OverlapError);
}

TEST(Errors, IndexOutOfRange) {
  Tensor x = ones({5, 3});
  auto msg = message_of<IndexError>([&] { (void)x.index_select(0, tensor<int64_t>({1, 7})); });
  expect_contains(msg, {"[index_select]", "7", "size 5"});
  msg = message_of<IndexError>([&] { (void)x.gather(1, tensor<int64_t>({0, 3}, {1, 2})); });
  expect_contains(msg, {"[gather]", "3", "size 3"});
  msg = message_of<IndexError>([&] { (void)embedding(ones({65, 8}), tensor<int64_t>({3, 70})); });
  expect_contains(msg, {"[embedding]", "70", "65"});
  msg = message_of<IndexError>([&] { (void)x.select(0, 5); });
  expect_contains(msg, {"[select]", "5"});
  msg = message_of<IndexError>([&] { (void)x.sum({2}); });
  expect_contains(msg, {"[sum]", "dim 2"});
}

TEST(Errors, DtypeAndDeviceMismatch) {
  auto msg = message_of<DTypeError>([] { (void)matmul(ones({2, 2}), ones({2, 2}, kFloat64)); });
  expect_contains(msg, {"[matmul]", "float32", "float64"});
  msg = message_of<DTypeError>([] { (void)where(ones({2}), ones({2}), ones({2})); });
  expect_contains(msg, {"[where]", "bool"});
  msg = message_of<DTypeError>([] { (void)softmax(ones({2}, kInt64), 0); });
  expect_contains(msg, {"[softmax]", "int64"});
  msg = message_of<DTypeError>([] { (void)mean(ones({2}, kInt64)); });
  expect_contains(msg, {"[mean]", "int64"});
  EXPECT_THROW((void)ones({2}, Device(kCUDA)), DeviceError);
}

TEST(Errors, InternalAssertSaysBugInStride) {
  // A broken invariant reads differently from a user error.
  auto msg = message_of<InternalError>([] { STRIDE_ASSERT(1 + 1 == 3, "arithmetic"); });
  expect_contains(msg, {"1 + 1 == 3", "errors_test.cpp", "bug in stride"});
}

// The list's dtype rule (src/core/op_list.h) is enforced by the apply path for
// every op that has it: an integer input fails with a DTypeError naming the
// op, on every device, before any kernel runs.
TEST(Errors, EveryFloatingOpRefusesAnIntegerInputNamingIt) {
  namespace F = nn::functional;
  const Tensor i = arange(24).view({2, 3, 4});  // int64
  const Tensor f = zeros({2, 3, 4});
  const Tensor tables = zeros({3, 2});
  const Tensor images = arange(48).view({1, 3, 4, 4});
  const std::vector<std::pair<std::string, std::function<void()>>> cases = {
      {"softmax", [&] { i.softmax(-1); }},
      {"log_softmax", [&] { i.log_softmax(-1); }},
      {"mean", [&] { i.mean(); }},
      {"var", [&] { i.var(); }},
      {"std_dev", [&] { std_dev(i); }},
      {"var_mean", [&] { var_mean(i); }},
      {"std_mean", [&] { std_mean(i); }},
      {"nanmean", [&] { nanmean(i); }},
      {"quantile", [&] { quantile(i, full({}, 0.5)); }},
      {"nanquantile", [&] { nanquantile(i, full({}, 0.5)); }},
      {"logcumsumexp", [&] { logcumsumexp(i, 0); }},
      {"frexp", [&] { frexp(i); }},
      {"norm", [&] { i.norm(); }},
      {"multinomial", [&] { i.multinomial(1); }},
      {"uniform", [&] { i.clone().uniform_(); }},
      {"normal", [&] { i.clone().normal_(); }},
      {"rms_norm", [&] { F::rms_norm(i, Tensor()); }},
      {"rotary_embedding", [&] { F::rotary_embedding(i); }},
      {"cross_entropy",
       [&] {
         F::cross_entropy(i.view({6, 4}), zeros({6}, kInt64));
       }},
      {"linear_cross_entropy",
       [&] {
         F::linear_cross_entropy(i.view({6, 4}), i.view({6, 4}), zeros({6}, kInt64));
       }},
      {"swiglu", [&] { F::swiglu(i, i); }},
      {"scaled_dot_product_attention", [&] { F::scaled_dot_product_attention(i, i, i); }},
      {"rotary_attention", [&] { F::rotary_attention(i, i, i, tables, tables); }},
      {"leaky_relu", [&] { F::leaky_relu(i); }},
      {"elu", [&] { F::elu(i); }},
      {"selu", [&] { F::selu(i); }},
      {"celu", [&] { F::celu(i); }},
      {"softplus", [&] { F::softplus(i); }},
      {"hardswish", [&] { F::hardswish(i); }},
      {"hardsigmoid", [&] { F::hardsigmoid(i); }},
      {"mish", [&] { F::mish(i); }},
      {"logsigmoid", [&] { F::logsigmoid(i); }},
      {"softshrink", [&] { F::softshrink(i); }},
      {"hardshrink", [&] { F::hardshrink(i); }},
      {"glu", [&] { F::glu(i, 1); }},
      {"prelu", [&] { F::prelu(i, tensor<int64_t>({1})); }},
      {"softmin", [&] { F::softmin(i, -1); }},
      {"l1_loss", [&] { F::l1_loss(i, i); }},
      {"smooth_l1_loss", [&] { F::smooth_l1_loss(i, i); }},
      {"huber_loss", [&] { F::huber_loss(i, i); }},
      {"binary_cross_entropy", [&] { F::binary_cross_entropy(i, i); }},
      {"binary_cross_entropy_with_logits", [&] { F::binary_cross_entropy_with_logits(i, i); }},
      {"kl_div", [&] { F::kl_div(i, i); }},
      {"soft_margin_loss", [&] { F::soft_margin_loss(i, i); }},
      {"hinge_embedding_loss", [&] { F::hinge_embedding_loss(i, i); }},
      {"multi_margin_loss", [&] { F::multi_margin_loss(i, i); }},
      {"multilabel_margin_loss", [&] { F::multilabel_margin_loss(i, i); }},
      {"multilabel_soft_margin_loss", [&] { F::multilabel_soft_margin_loss(i, i); }},
      {"gaussian_nll_loss", [&] { F::gaussian_nll_loss(i, i, i); }},
      {"normalize", [&] { F::normalize(i); }},
      {"cosine_similarity", [&] { F::cosine_similarity(i, f); }},
      {"linalg_lu_factor_ex", [&] { linalg::lu_factor_ex(i); }},
      {"linalg_lu_factor", [&] { linalg::lu_factor(i); }},
      {"linalg_lu", [&] { linalg::lu(i); }},
      {"lu_unpack", [&] { lu_unpack(i, i); }},
      {"linalg_lu_solve", [&] { linalg::lu_solve(i, i, i); }},
      {"linalg_solve_triangular", [&] { linalg::solve_triangular(i, i, true); }},
      {"linalg_solve", [&] { linalg::solve(i, i); }},
      {"linalg_solve_ex", [&] { linalg::solve_ex(i, i); }},
      {"linalg_inv", [&] { linalg::inv(i); }},
      {"linalg_inv_ex", [&] { linalg::inv_ex(i); }},
      {"linalg_det", [&] { linalg::det(i); }},
      {"linalg_slogdet", [&] { linalg::slogdet(i); }},
      {"logdet", [&] { logdet(i); }},
      {"linalg_cholesky_ex", [&] { linalg::cholesky_ex(i); }},
      {"linalg_cholesky", [&] { linalg::cholesky(i); }},
      {"cholesky_solve", [&] { cholesky_solve(i, i); }},
      {"cholesky_inverse", [&] { cholesky_inverse(i); }},
      {"triangular_solve", [&] { triangular_solve(i, i); }},
      {"linalg_qr", [&] { linalg::qr(i); }},
      {"linalg_eigh", [&] { linalg::eigh(i); }},
      {"linalg_eigvalsh", [&] { linalg::eigvalsh(i); }},
      {"linalg_svd", [&] { linalg::svd(i); }},
      {"linalg_svdvals", [&] { linalg::svdvals(i); }},
      {"linalg_householder_product", [&] { linalg::householder_product(i, i); }},
      {"linalg_vector_norm", [&] { linalg::vector_norm(i); }},
      {"linalg_matrix_norm", [&] { linalg::matrix_norm(i); }},
      {"linalg_norm", [&] { linalg::norm(i); }},
      {"linalg_cond", [&] { linalg::cond(i); }},
      {"linalg_matrix_rank", [&] { linalg::matrix_rank(i); }},
      {"linalg_pinv", [&] { linalg::pinv(i); }},
      {"linalg_matrix_exp", [&] { linalg::matrix_exp(i); }},
      {"linalg_tensorinv", [&] { linalg::tensorinv(i); }},
      {"linalg_tensorsolve", [&] { linalg::tensorsolve(i, i); }},
      {"linalg_lstsq", [&] { linalg::lstsq(i, i); }},
      {"complex", [&] { complex(i, i); }},
      {"polar", [&] { polar(i, i); }},
      {"adaptive_avg_pool1d", [&] { F::adaptive_avg_pool1d(i, {2}); }},
      {"adaptive_avg_pool2d", [&] { F::adaptive_avg_pool2d(images, {2}); }},
      {"adaptive_max_pool1d", [&] { F::adaptive_max_pool1d_with_indices(i, {2}); }},
      {"adaptive_max_pool2d", [&] { F::adaptive_max_pool2d_with_indices(images, {2}); }},
      {"adaptive_avg_pool3d", [&] { F::adaptive_avg_pool3d(images.unsqueeze(0), {2}); }},
      {"adaptive_max_pool3d",
       [&] { F::adaptive_max_pool3d_with_indices(images.unsqueeze(0), {2}); }},
      {"interpolate", [&] { F::interpolate(i, testing::with([](auto& o) { o.size = {2}; })); }},
      {"group_norm", [&] { F::group_norm(i, 1); }},
      // recurrent layers (src/nn/rnn.cpp)
      {"rnn_tanh_cell", [&] { F::rnn_tanh_cell(i, i, i, i); }},
      {"rnn_relu_cell", [&] { F::rnn_relu_cell(i, i, i, i); }},
      {"lstm_cell",
       [&] {
         F::lstm_cell(i, {i, i}, i, i);
       }},
      {"gru_cell", [&] { F::gru_cell(i, i, i, i); }},
      {"rnn_tanh", [&] { F::rnn_tanh(i, i, {}); }},
      {"rnn_relu", [&] { F::rnn_relu(i, i, {}); }},
      {"lstm",
       [&] {
         F::lstm(i, {i, i}, {});
       }},
      {"gru", [&] { F::gru(i, i, {}); }},
      // products and numeric compositions (src/ops/linalg.cpp, numeric_composites.cpp)
      {"cdist", [&] { cdist(i, i); }},
      {"dist", [&] { dist(i, i); }},
      {"renorm", [&] { renorm(i, 2, 0, 1.0); }},
      {"histogram", [&] { histogram(i, 4); }},
      {"histogramdd",
       [&] {
         histogramdd(i, {2, 2, 2, 2});
       }},
      // packed weights (src/nn/packed_linear.cpp)
      {"pack_weight",
       [&] {
         F::pack_weight(arange(64).view({2, 32}), WeightFormat::Int8);
       }},
      {"linear_packed",
       [&] {
         F::linear_packed(arange(64).view({2, 32}),
                          F::pack_weight(zeros({3, 32}), WeightFormat::Int8), WeightFormat::Int8,
                          32);
       }},
      // nn ops moved from Python (src/nn/multi_head_attention.cpp)
      {"multi_head_attention_forward",
       [&] {
         F::multi_head_attention_forward(i, i, i, 4, 1, Tensor(), Tensor(), Tensor(), Tensor(),
                                         false, 0.0, Tensor(), Tensor());
       }},
  };
  std::vector<std::string> names;
  for (const auto& [name, call] : cases) {
    names.push_back(name);
    expect_contains(message_of<DTypeError>(call), {("[" + name).c_str(), "floating-point"});
  }
  EXPECT_EQ(
      testing::ops_without_a_case(
          names, [](const detail::OpInfo& op) { return op.dtypes == detail::DtypeRule::Floating; }),
      std::vector<std::string>{});
  // Floating inputs pass the rule.
  EXPECT_NO_THROW(f.softmax(-1));
}

}  // namespace
}  // namespace stride
