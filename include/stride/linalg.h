// Linear algebra, as torch.linalg: factorizations through LAPACK (LU,
// Cholesky, QR, symmetric eigendecomposition, SVD) and the ops written with
// them. Every op takes a batch of matrices (..., m, n) in float32 or float64
// and is differentiable with PyTorch's formulas, written with ops.
#pragma once

#include <optional>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "stride/tensor.h"

namespace stride::linalg {

// A = P L U with partial pivoting: (LU, pivots (..., min(m, n)) int32 1-based,
// info (...) int32, > 0 where U is singular). check_errors raises on a
// singular matrix instead.
std::tuple<Tensor, Tensor, Tensor> lu_factor_ex(const Tensor& A,
                                                bool pivot = true,
                                                bool check_errors = false);
std::pair<Tensor, Tensor> lu_factor(const Tensor& A, bool pivot = true);
// (P, L, U) with A = P L U.
std::tuple<Tensor, Tensor, Tensor> lu(const Tensor& A, bool pivot = true);
// X with A X = B (left) or X A = B, A given by lu_factor; adjoint solves with A^T.
Tensor lu_solve(const Tensor& LU,
                const Tensor& pivots,
                const Tensor& B,
                bool left = true,
                bool adjoint = false);
Tensor solve(const Tensor& A, const Tensor& B, bool left = true);
std::pair<Tensor, Tensor> solve_ex(const Tensor& A,
                                   const Tensor& B,
                                   bool left = true,
                                   bool check_errors = false);
Tensor inv(const Tensor& A);
std::pair<Tensor, Tensor> inv_ex(const Tensor& A, bool check_errors = false);
Tensor det(const Tensor& A);
// (sign, logabsdet); sign 0 and logabsdet -inf for a singular matrix.
std::pair<Tensor, Tensor> slogdet(const Tensor& A);
Tensor solve_triangular(
    const Tensor& A, const Tensor& B, bool upper, bool left = true, bool unitriangular = false);
std::pair<Tensor, Tensor> cholesky_ex(const Tensor& A,
                                      bool upper = false,
                                      bool check_errors = false);
Tensor cholesky(const Tensor& A, bool upper = false);
// mode: "reduced", "complete" or "r" (Q empty).
std::pair<Tensor, Tensor> qr(const Tensor& A, std::string_view mode = "reduced");
// (eigenvalues ascending, eigenvectors); UPLO: the triangle read, "L" or "U".
std::pair<Tensor, Tensor> eigh(const Tensor& A, std::string_view UPLO = "L");
Tensor eigvalsh(const Tensor& A, std::string_view UPLO = "L");
// (U, S, Vh) with A = U diag(S) Vh.
std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A, bool full_matrices = true);
Tensor svdvals(const Tensor& A);
Tensor householder_product(const Tensor& A, const Tensor& tau);

// ord: inf, -inf, 0 (nonzero count) or p: sum(|x|^p)^(1/p) over dim (every
// dim when empty), in dtype when given.
Tensor vector_norm(const Tensor& x,
                   double ord = 2,
                   IntArrayRef dim = {},
                   bool keepdim = false,
                   std::optional<ScalarType> dtype = std::nullopt);
// ord: 1, -1, inf, -inf (column or row sums), 2, -2 (singular values).
Tensor matrix_norm(const Tensor& A, double ord, IntArrayRef dim = {-2, -1}, bool keepdim = false);
// ord: "fro" or "nuc".
Tensor matrix_norm(const Tensor& A,
                   std::string_view ord = "fro",
                   IntArrayRef dim = {-2, -1},
                   bool keepdim = false);
// A vector norm, or a matrix norm where dim has two dims (or A is 2-d with
// a numeric ord); no ord: the 2-norm of the flattened input or Frobenius.
Tensor norm(const Tensor& A,
            std::optional<double> ord = std::nullopt,
            IntArrayRef dim = {},
            bool keepdim = false);
Tensor norm(const Tensor& A, std::string_view ord, IntArrayRef dim = {}, bool keepdim = false);
// The condition number in the norm p (none: the 2-norm, through singular values).
Tensor cond(const Tensor& A, std::optional<double> p = std::nullopt);
Tensor cond(const Tensor& A, std::string_view p);
// The number of singular values (eigenvalue magnitudes when hermitian) above
// max(atol, rtol * the largest), int64.
Tensor matrix_rank(const Tensor& A,
                   std::optional<double> atol = std::nullopt,
                   std::optional<double> rtol = std::nullopt,
                   bool hermitian = false);
Tensor pinv(const Tensor& A,
            std::optional<double> atol = std::nullopt,
            std::optional<double> rtol = std::nullopt,
            bool hermitian = false);
// ...with tolerances per matrix, broadcasting over the batch.
Tensor matrix_rank(const Tensor& A,
                   const std::optional<Tensor>& atol,
                   const std::optional<Tensor>& rtol,
                   bool hermitian = false);
Tensor pinv(const Tensor& A,
            const std::optional<Tensor>& atol,
            const std::optional<Tensor>& rtol,
            bool hermitian = false);
Tensor matrix_power(const Tensor& A, int64_t n);
Tensor matrix_exp(const Tensor& A);
Tensor cross(const Tensor& a, const Tensor& b, int64_t dim = -1);
Tensor vecdot(const Tensor& x, const Tensor& y, int64_t dim = -1);
Tensor multi_dot(const std::vector<Tensor>& tensors);
Tensor diagonal(const Tensor& A, int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1);
Tensor vander(const Tensor& x, std::optional<int64_t> N = std::nullopt);
Tensor tensorinv(const Tensor& A, int64_t ind = 2);
Tensor tensorsolve(const Tensor& A,
                   const Tensor& B,
                   std::optional<std::vector<int64_t>> dims = std::nullopt);
// (solution, residuals, rank, singular_values), each empty where the driver
// does not compute it, as PyTorch's CPU drivers.
std::tuple<Tensor, Tensor, Tensor, Tensor> lstsq(const Tensor& A,
                                                 const Tensor& B,
                                                 std::optional<double> rcond = std::nullopt,
                                                 std::string_view driver = "gelsy");

}  // namespace stride::linalg

namespace stride {

// torch.lu_unpack: (P, L, U) of lu_factor's (LU, pivots).
std::tuple<Tensor, Tensor, Tensor> lu_unpack(const Tensor& LU, const Tensor& pivots);
// log det A: NaN where the determinant is negative, -inf where it is zero.
Tensor logdet(const Tensor& A);
// X with A X = B, A = L L^T given by its Cholesky factor (U^T U when upper).
Tensor cholesky_solve(const Tensor& B, const Tensor& L, bool upper = false);
Tensor cholesky_inverse(const Tensor& L, bool upper = false);
// torch.triangular_solve: (solution, a copy of A).
std::pair<Tensor, Tensor> triangular_solve(const Tensor& b,
                                           const Tensor& A,
                                           bool upper = true,
                                           bool transpose = false,
                                           bool unitriangular = false);

}  // namespace stride
