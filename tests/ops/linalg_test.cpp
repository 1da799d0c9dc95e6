// Properties of the linear algebra ops (include/stride/linalg.h) that hold
// whatever LAPACK's conventions: inverses invert, factors multiply back to
// their matrix and are orthonormal or triangular where they should be, and
// singular inputs behave as PyTorch's (an error naming the op, a zero
// determinant, info from the _ex forms).
#include <gtest/gtest.h>

#include <limits>

#include <stride/stride.h>

#include "support/error_message.h"
#include "support/linalg_inputs.h"

namespace stride {
namespace {

using testing::message_of;

void expect_contains(const std::string& msg, std::initializer_list<const char*> parts) {
  for (const char* p : parts) {
    EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
  }
}

Tensor random_matrices(IntArrayRef shape, uint64_t seed) {
  Generator gen(seed);
  return randn(shape, kFloat64, &gen);
}

Tensor identity_like(const Tensor& a) {
  return eye(a.size(-1), a.size(-1), a.options()).expand(a.sizes());
}

TEST(Linalg, InverseTimesMatrixIsTheIdentity) {
  const Tensor a = random_matrices({3, 5, 5}, 1);
  EXPECT_TRUE(allclose(a.matmul(linalg::inv(a)), identity_like(a), 1e-9, 1e-9));
  EXPECT_TRUE(allclose(linalg::inv(a).matmul(a), identity_like(a), 1e-9, 1e-9));
}

TEST(Linalg, SolveSatisfiesTheSystemOnEitherSide) {
  const Tensor a = random_matrices({2, 4, 4}, 2), b = random_matrices({2, 4, 3}, 3);
  EXPECT_TRUE(allclose(a.matmul(linalg::solve(a, b)), b, 1e-9, 1e-9));
  const Tensor bt = b.transpose(-2, -1);
  EXPECT_TRUE(allclose(linalg::solve(a, bt, /*left=*/false).matmul(a), bt, 1e-9, 1e-9));
}

TEST(Linalg, LuFactorsMultiplyBackToTheMatrix) {
  for (const auto& shape : {std::vector<int64_t>{4, 4}, {5, 3}, {3, 5}}) {
    const Tensor a = random_matrices(shape, 4);
    auto [P, L, U] = linalg::lu(a);
    EXPECT_TRUE(allclose(P.matmul(L).matmul(U), a, 1e-12, 1e-12));
    EXPECT_TRUE(equal(L, L.tril()));
    EXPECT_TRUE(equal(U, U.triu()));
  }
}

TEST(Linalg, QrIsOrthonormalTimesUpperTriangular) {
  for (const auto& shape : {std::vector<int64_t>{2, 6, 4}, {4, 6}}) {
    const Tensor a = random_matrices(shape, 5);
    for (const char* mode : {"reduced", "complete"}) {
      auto [Q, R] = linalg::qr(a, mode);
      const Tensor QtQ = Q.transpose(-2, -1).matmul(Q);
      EXPECT_TRUE(allclose(QtQ, identity_like(QtQ), 1e-12, 1e-12)) << mode;
      EXPECT_TRUE(allclose(Q.matmul(R), a, 1e-12, 1e-12)) << mode;
      EXPECT_TRUE(equal(R, R.triu())) << mode;
    }
  }
}

TEST(Linalg, EighReconstructsTheSymmetricMatrix) {
  const Tensor a = testing::symmetric(random_matrices({3, 5, 5}, 6));
  auto [values, vectors] = linalg::eigh(a);
  const Tensor rebuilt = (vectors * values.unsqueeze(-2)).matmul(vectors.transpose(-2, -1));
  EXPECT_TRUE(allclose(rebuilt, a, 1e-12, 1e-12));
  EXPECT_TRUE(values.narrow(-1, 1, 4).ge(values.narrow(-1, 0, 4)).all().item<bool>());
}

TEST(Linalg, SvdReconstructsTheMatrixWithDescendingValues) {
  const Tensor a = random_matrices({2, 4, 6}, 7);
  for (const bool full : {true, false}) {
    auto [U, S, Vh] = linalg::svd(a, full);
    const Tensor k_columns = U.narrow(-1, 0, 4) * S.unsqueeze(-2);
    EXPECT_TRUE(allclose(k_columns.matmul(Vh.narrow(-2, 0, 4)), a, 1e-12, 1e-12)) << full;
    EXPECT_TRUE(S.narrow(-1, 0, 3).ge(S.narrow(-1, 1, 3)).all().item<bool>());
  }
}

TEST(Linalg, CholeskyFactorTimesItsTransposeIsTheMatrix) {
  const Tensor a = testing::positive_definite(random_matrices({2, 4, 4}, 8));
  const Tensor L = linalg::cholesky(a);
  EXPECT_TRUE(allclose(L.matmul(L.transpose(-2, -1)), a, 1e-12, 1e-12));
  EXPECT_TRUE(equal(linalg::cholesky(a, /*upper=*/true), L.transpose(-2, -1)));
}

TEST(Linalg, SingularInputsBehaveAsPytorchs) {
  const Tensor singular = tensor<double>({1, 2, 2, 4}, {2, 2});
  expect_contains(message_of<ValueError>([&] { linalg::inv(singular); }),
                  {"[linalg.inv]", "singular"});
  expect_contains(message_of<ValueError>([&] { linalg::solve(singular, singular); }),
                  {"[linalg.solve]", "singular"});
  EXPECT_EQ(linalg::det(singular).item<double>(), 0.0);
  auto [sign, logabsdet] = linalg::slogdet(singular);
  EXPECT_EQ(sign.item<double>(), 0.0);
  EXPECT_EQ(logabsdet.item<double>(), -std::numeric_limits<double>::infinity());
  EXPECT_GT(linalg::inv_ex(singular).second.item<int32_t>(), 0);
  EXPECT_GT(linalg::cholesky_ex(-identity_like(singular)).second.item<int32_t>(), 0);
  expect_contains(message_of<ValueError>([&] { linalg::cholesky(-identity_like(singular)); }),
                  {"[linalg.cholesky]", "positive-definite"});
}

TEST(Linalg, NonSquareInputsAreShapeErrorsNamingTheOp) {
  expect_contains(message_of<ShapeError>([] {
                    linalg::inv(zeros({2, 3}, kFloat64));
                  }),
                  {"[linalg.inv_ex]", "square", "2 by 3"});
}

}  // namespace
}  // namespace stride
