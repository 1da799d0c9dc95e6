// The linear algebra ops written with the factorizations of
// linalg_factorizations.cpp: solves, inverses and determinants through LU,
// Cholesky solves, eigenvalues and singular values alone, and the
// Householder product. They are composites: their gradients come from the
// factorizations' backward formulas and the ops they are written with.
#include <limits>

#include "core/check.h"
#include "ops/apply.h"
#include "ops/linalg_internal.h"

namespace stride {

using detail::Op;
using namespace linalg::detail;

namespace {

// PyTorch's rule for a vector right-hand side: B (n) or B (..., n) where A
// is (..., n, n) with the same batch.
bool is_vector_rhs(const Tensor& A, const Tensor& B) {
  if (B.dim() == 1) return true;
  if (B.dim() != A.dim() - 1) return false;
  return B.sizes() == IntArrayRef(A.sizes().begin(), A.sizes().size() - 1);
}

void check_solve_operands(const Tensor& A, const Tensor& B, bool left, const char* op) {
  check_square(A, op, "A");
  STRIDE_CHECK(A.dtype() == B.dtype(), DTypeError, "[", op,
               "] A and B must have the same dtype; got ", to_string(A.dtype()), " and ",
               to_string(B.dtype()), ".");
  STRIDE_CHECK(B.dim() >= 1, ShapeError, "[", op,
               "] B must have at least 1 dimension; got a 0-d tensor.");
  const int64_t n = A.size(-1);
  const int64_t rows = B.dim() == 1 ? B.size(0) : (left ? B.size(-2) : B.size(-1));
  STRIDE_CHECK(rows == n || is_vector_rhs(A, B), ShapeError, "[", op, "] A (", shape_str(A.sizes()),
               ") and B (", shape_str(B.sizes()), ") do not fit: B must have ", n,
               left ? " rows." : " columns.");
}

void throw_singular(const char* op) {
  throw ValueError(detail::str_cat(
      "[", op,
      "] the solver failed because the input matrix is singular. Hint: check the matrix, or use ",
      op, "_ex to get the info instead of an error."));
}

}  // namespace

namespace linalg {

std::pair<Tensor, Tensor> lu_factor(const Tensor& A, bool pivot) {
  stride::detail::check_dtype_rule(Op::linalg_lu_factor, A);
  auto [LU, pivots, info] = lu_factor_ex(A, pivot);
  STRIDE_CHECK(!any_failed(info), ValueError,
               "[linalg.lu_factor] U has a zero on its diagonal, and using it in lu_solve would "
               "divide by zero. Hint: use linalg.lu or linalg.lu_factor_ex to factor it anyway.");
  return {LU, pivots};
}

std::tuple<Tensor, Tensor, Tensor> lu(const Tensor& A, bool pivot) {
  stride::detail::check_dtype_rule(Op::linalg_lu, A);
  auto [LU, pivots, info] = lu_factor_ex(A, pivot);
  return lu_unpack(LU, pivots);
}

Tensor lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left, bool adjoint) {
  stride::detail::check_dtype_rule(Op::linalg_lu_solve, LU);
  check_square(LU, "linalg.lu_solve", "LU");
  check_matrix(B, "linalg.lu_solve", "B");
  // X A = B is A^T X^T = B^T.
  if (!left) return mT(lu_solve(LU, pivots, mT(B), true, !adjoint));
  STRIDE_CHECK(B.size(-2) == LU.size(-1), ShapeError, "[linalg.lu_solve] LU (",
               shape_str(LU.sizes()), ") and B (", shape_str(B.sizes()),
               ") do not fit: B must have ", LU.size(-1), " rows.");
  const auto [P, L, U] = lu_unpack(LU, pivots);
  if (!adjoint) {
    const Tensor y = solve_triangular(L, mT(P).matmul(B), /*upper=*/false, true, /*unit=*/true);
    return solve_triangular(U, y, /*upper=*/true);
  }
  const Tensor y = solve_triangular(mT(U), B, /*upper=*/false);
  return P.matmul(solve_triangular(mT(L), y, /*upper=*/true, true, /*unit=*/true));
}

std::pair<Tensor, Tensor> solve_ex(const Tensor& A, const Tensor& B, bool left, bool check_errors) {
  stride::detail::check_dtype_rule(Op::linalg_solve_ex, A);
  check_solve_operands(A, B, left, "linalg.solve_ex");
  const bool vector = is_vector_rhs(A, B);
  const Tensor b = vector ? B.unsqueeze(left ? -1 : -2) : B;
  auto [LU, pivots, info] = lu_factor_ex(A);
  if (check_errors && any_failed(info)) throw_singular("linalg.solve_ex");
  const Tensor x = lu_solve(LU, pivots, b, left);
  return {vector ? x.squeeze(left ? -1 : -2) : x, info};
}

Tensor solve(const Tensor& A, const Tensor& B, bool left) {
  stride::detail::check_dtype_rule(Op::linalg_solve, A);
  auto [x, info] = solve_ex(A, B, left);
  if (any_failed(info)) throw_singular("linalg.solve");
  return x;
}

std::pair<Tensor, Tensor> inv_ex(const Tensor& A, bool check_errors) {
  stride::detail::check_dtype_rule(Op::linalg_inv_ex, A);
  check_square(A, "linalg.inv_ex", "A");
  auto [LU, pivots, info] = lu_factor_ex(A);
  if (check_errors && any_failed(info)) throw_singular("linalg.inv_ex");
  const int64_t n = A.size(-1);
  return {lu_solve(LU, pivots, eye(n, n, A.options())), info};
}

Tensor inv(const Tensor& A) {
  stride::detail::check_dtype_rule(Op::linalg_inv, A);
  auto [x, info] = inv_ex(A);
  if (any_failed(info)) throw_singular("linalg.inv");
  return x;
}

// From A = P L U: log|det A| is the sum of log|U_ii|, and the sign is that
// of the permutation (one flip per row swap) times those of U_ii, 0 where
// one is zero.
std::pair<Tensor, Tensor> slogdet(const Tensor& A) {
  stride::detail::check_dtype_rule(Op::linalg_slogdet, A);
  check_square(A, "linalg.slogdet", "A");
  auto [LU, pivots, info] = lu_factor_ex(A);
  const Tensor d = LU.diagonal(0, -2, -1);
  const Tensor logabsdet = log(abs(d)).sum({-1});
  Tensor sign;
  {
    NoGradGuard no_grad;
    const int64_t n = A.size(-1);
    const Tensor unswapped = arange(1, n + 1, 1, kInt32).to(A.device());
    const Tensor flips = (d.lt(0).sum({-1}) + pivots.ne(unswapped).sum({-1})).to(A.dtype());
    const Tensor odd = flips - div(flips, full_like(flips, 2), "floor") * 2;
    const Tensor nonzero = d.ne(0).all({-1}).to(A.dtype());
    sign = (1.0 - odd * 2) * nonzero;
  }
  // The sign has a zero gradient but is an output of the graph, as PyTorch's.
  return {where(sign.eq(sign), sign, logabsdet), logabsdet};
}

Tensor det(const Tensor& A) {
  stride::detail::check_dtype_rule(Op::linalg_det, A);
  auto [sign, logabsdet] = slogdet(A);
  return sign * exp(logabsdet);
}

Tensor cholesky(const Tensor& A, bool upper) {
  stride::detail::check_dtype_rule(Op::linalg_cholesky, A);
  auto [factor, info] = cholesky_ex(A, upper);
  STRIDE_CHECK(!any_failed(info), ValueError,
               "[linalg.cholesky] the factorization could not be completed because the input is "
               "not positive-definite. Hint: use linalg.cholesky_ex to get the info instead.");
  return factor;
}

Tensor eigvalsh(const Tensor& A, std::string_view UPLO) {
  stride::detail::check_dtype_rule(Op::linalg_eigvalsh, A);
  return eigh(A, UPLO).first;
}

Tensor svdvals(const Tensor& A) {
  stride::detail::check_dtype_rule(Op::linalg_svdvals, A);
  return std::get<1>(svd(A, /*full_matrices=*/false));
}

// Q = H_0 H_1 ... H_{k-1} I[:, :n] with H_i = I - tau_i v_i v_i^T, v_i the
// i-th column of A below the diagonal with a unit on it, applied right to
// left as LAPACK's orgqr does.
Tensor householder_product(const Tensor& A, const Tensor& tau) {
  stride::detail::check_dtype_rule(Op::linalg_householder_product, A);
  check_matrix(A, "linalg.householder_product", "A");
  const int64_t m = A.size(-2), n = A.size(-1);
  STRIDE_CHECK(m >= n, ShapeError,
               "[linalg.householder_product] A must have at least as many rows as columns; got "
               "shape ",
               shape_str(A.sizes()), ".");
  STRIDE_CHECK(tau.dim() == A.dim() - 1 && tau.size(-1) <= n, ShapeError,
               "[linalg.householder_product] tau must be (..., k) with k <= ", n,
               " for A of shape ", shape_str(A.sizes()), "; got ", shape_str(tau.sizes()), ".");
  STRIDE_CHECK(tau.dtype() == A.dtype(), DTypeError,
               "[linalg.householder_product] tau must have A's dtype ", to_string(A.dtype()),
               "; got ", to_string(tau.dtype()), ".");
  const Tensor V = A.tril(-1) + eye(m, n, A.options());
  const Tensor identity = eye(m, n, A.options()).expand(A.sizes());
  // No reflectors: the identity, still taken from A (with a zero gradient)
  // so that autograd reaches A, as PyTorch's.
  Tensor Q = tau.size(-1) == 0 ? where(identity.eq(identity), identity, A) : identity;
  for (int64_t i = tau.size(-1) - 1; i >= 0; --i) {
    const Tensor v = V.narrow(-1, i, 1);
    const Tensor t = tau.narrow(-1, i, 1).unsqueeze(-1);
    Q = Q - t * v.matmul(mT(v).matmul(Q));
  }
  return Q;
}

}  // namespace linalg

Tensor logdet(const Tensor& A) {
  detail::check_dtype_rule(Op::logdet, A);
  auto [sign, logabsdet] = linalg::slogdet(A);
  // log of a negative determinant is NaN, of a zero one -inf, as PyTorch's.
  return where(sign.lt(0), full_like(logabsdet, std::numeric_limits<double>::quiet_NaN()),
               logabsdet);
}

Tensor cholesky_solve(const Tensor& B, const Tensor& L, bool upper) {
  detail::check_dtype_rule(Op::cholesky_solve, B);
  check_square(L, "cholesky_solve", "input2");
  check_matrix(B, "cholesky_solve", "input");
  const Tensor lower = upper ? mT(L) : L;
  const Tensor y = linalg::solve_triangular(lower, B, /*upper=*/false);
  return linalg::solve_triangular(mT(lower), y, /*upper=*/true);
}

Tensor cholesky_inverse(const Tensor& L, bool upper) {
  detail::check_dtype_rule(Op::cholesky_inverse, L);
  check_square(L, "cholesky_inverse", "input");
  const int64_t n = L.size(-1);
  return cholesky_solve(eye(n, n, L.options()).expand(L.sizes()), L, upper);
}

std::pair<Tensor, Tensor> triangular_solve(
    const Tensor& b, const Tensor& A, bool upper, bool transpose, bool unitriangular) {
  detail::check_dtype_rule(Op::triangular_solve, b);
  const Tensor a = transpose ? mT(A) : A;
  const Tensor x = linalg::solve_triangular(a, b, transpose ? !upper : upper, true, unitriangular);
  return {x, A.clone()};
}

}  // namespace stride
