// stride._stride._linalg: the linear algebra ops of include/stride/linalg.h
// with positional arguments. python/stride/linalg.py gives them PyTorch's
// signatures, keyword names and named-tuple results (stride.linalg and the
// torch.* functions such as stride.det).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"

namespace stride::python {

namespace {

void bind_factorizations(nb::module_& l) {
  l.def("lu_factor_ex", &linalg::lu_factor_ex, "LU with partial pivoting: (LU, pivots, info).");
  l.def("lu", &linalg::lu, "(P, L, U) with A = P L U.");
  l.def("lu_unpack", &lu_unpack, "(P, L, U) of lu_factor's (LU, pivots).");
  l.def("lu_solve", &linalg::lu_solve, "X with A X = B, A given by lu_factor.");
  l.def("solve_ex", &linalg::solve_ex, "(X, info) with A X = B.");
  l.def("inv_ex", &linalg::inv_ex, "(inverse, info).");
  l.def("slogdet", &linalg::slogdet, "(sign, logabsdet) of the determinant.");
  l.def("det", &linalg::det, "The determinant.");
  l.def("logdet", &logdet, "log det A.");
  l.def("cholesky_ex", &linalg::cholesky_ex, "(L, info): the Cholesky factor.");
  l.def("cholesky_solve", &cholesky_solve, "X with A X = B from A's Cholesky factor.");
  l.def("cholesky_inverse", &cholesky_inverse, "A^-1 from A's Cholesky factor.");
  l.def("solve_triangular", &linalg::solve_triangular, "X with A X = B, A triangular.");
  l.def("triangular_solve", &triangular_solve, "(X, A) with A X = b, A triangular.");
  l.def("qr", &linalg::qr, "(Q, R) with A = Q R.");
  l.def("eigh", &linalg::eigh, "(eigenvalues, eigenvectors) of a symmetric matrix.");
  l.def("svd", &linalg::svd, "(U, S, Vh) with A = U diag(S) Vh.");
  l.def("householder_product", &linalg::householder_product,
        "The product of Householder reflectors (orgqr).");
}

void bind_norms(nb::module_& l) {
  l.def(
      "vector_norm",
      [](const Tensor& x, double ord, nb::handle dim, bool keepdim, nb::handle dtype) {
        return linalg::vector_norm(x, ord, dims_arg(dim), keepdim, optional_dtype(dtype));
      },
      nb::arg("x"), nb::arg("ord"), nb::arg("dim").none(), nb::arg("keepdim"),
      nb::arg("dtype").none(), "A vector norm over dim.");
  l.def(
      "matrix_norm",
      [](const Tensor& A, double ord, nb::handle dim, bool keepdim) {
        return linalg::matrix_norm(A, ord, dims_arg(dim), keepdim);
      },
      nb::arg("A"), nb::arg("ord"), nb::arg("dim"), nb::arg("keepdim"),
      "A matrix norm of numeric ord.");
  l.def(
      "matrix_norm",
      [](const Tensor& A, std::string_view ord, nb::handle dim, bool keepdim) {
        return linalg::matrix_norm(A, ord, dims_arg(dim), keepdim);
      },
      nb::arg("A"), nb::arg("ord"), nb::arg("dim"), nb::arg("keepdim"),
      "A matrix norm of ord 'fro' or 'nuc'.");
  l.def("cond", nb::overload_cast<const Tensor&, std::optional<double>>(&linalg::cond),
        "The condition number.");
  l.def("cond", nb::overload_cast<const Tensor&, std::string_view>(&linalg::cond),
        "The condition number.");
  using Tolerance = const std::optional<Tensor>&;
  l.def("matrix_rank",
        nb::overload_cast<const Tensor&, Tolerance, Tolerance, bool>(&linalg::matrix_rank),
        "The numerical rank.");
  l.def("pinv", nb::overload_cast<const Tensor&, Tolerance, Tolerance, bool>(&linalg::pinv),
        "The pseudo-inverse.");
  l.def("matrix_power", &linalg::matrix_power, "A to an integer power.");
  l.def("matrix_exp", &linalg::matrix_exp, "The matrix exponential.");
  l.def("cross", &linalg::cross, "The cross product along dim.");
  l.def("vecdot", &linalg::vecdot, "The dot product along dim.");
  l.def("multi_dot", &linalg::multi_dot, "The product of a chain of matrices.");
  l.def("diagonal", &linalg::diagonal, "The diagonals of a batch of matrices (a view).");
  l.def("vander", &linalg::vander, "The Vandermonde matrix of x.");
  l.def("tensorinv", &linalg::tensorinv, "The inverse of a tensor as a linear map.");
  l.def("tensorsolve", &linalg::tensorsolve, "X with tensordot(A, X) = B.");
  l.def("lstsq", &linalg::lstsq, "(solution, residuals, rank, singular_values).");
}

}  // namespace

void bind_linalg(nb::module_& m) {
  nb::module_ l = m.def_submodule("_linalg", "The linear algebra ops (stride.linalg).");
  bind_factorizations(l);
  bind_norms(l);
}

}  // namespace stride::python
