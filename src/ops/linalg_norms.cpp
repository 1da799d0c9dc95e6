// Norms, ranks, pseudo-inverses, powers and exponentials of matrices, and the
// small products of torch.linalg (cross, vecdot, multi_dot, vander), written
// with ops and the factorizations (composites: their gradients come from the
// ops they use).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/check.h"
#include "ops/apply.h"
#include "ops/linalg_internal.h"

namespace stride {

using detail::Op;
using namespace linalg::detail;

namespace {

DimVector all_dims(const Tensor& x) {
  DimVector dims(size_t(x.dim()));
  std::iota(dims.begin(), dims.end(), int64_t(0));
  return dims;
}

// sqrt(s) with a zero gradient where s is 0 (PyTorch's subgradient of the
// 2-norm at zero) instead of the NaN of sqrt's derivative there.
Tensor sqrt_zero_safe(const Tensor& s) {
  const Tensor zero = s.eq(0);
  return where(zero, zeros_like(s), sqrt(where(zero, ones_like(s), s)));
}

// The two matrix dims of a matrix norm, wrapped; a ShapeError unless two
// different dims.
std::pair<int64_t, int64_t> matrix_dims(const Tensor& A, IntArrayRef dim, const char* op) {
  STRIDE_CHECK(dim.size() == 2, ShapeError, "[", op, "] dim must be 2 dims; got ", dim.size(), ".");
  const int64_t d0 = wrap_dim(dim[0], A.dim(), op), d1 = wrap_dim(dim[1], A.dim(), op);
  STRIDE_CHECK(d0 != d1, ShapeError, "[", op, "] dims must be different; got (", dim[0], ", ",
               dim[1], ").");
  return {d0, d1};
}

// A with dims d0, d1 moved last (in that order).
Tensor matrices_last(const Tensor& A, int64_t d0, int64_t d1) {
  std::vector<int64_t> order;
  for (int64_t i = 0; i < A.dim(); ++i) {
    if (i != d0 && i != d1) order.push_back(i);
  }
  order.push_back(d0);
  order.push_back(d1);
  return A.permute(order);
}

// A reduction over the two matrix dims kept as size-1 dims where keepdim.
Tensor keep_matrix_dims(const Tensor& r, int64_t d0, int64_t d1, bool keepdim) {
  if (!keepdim) return r;
  return r.unsqueeze(std::min(d0, d1)).unsqueeze(std::max(d0, d1));
}

Tensor singular_value_norm(const Tensor& A, double ord, int64_t d0, int64_t d1, bool keepdim) {
  const Tensor s = linalg::svdvals(matrices_last(A, d0, d1));
  Tensor r;
  if (std::isnan(ord)) {
    r = s.sum({-1});
  } else {
    r = ord > 0 ? amax(s, {-1}) : amin(s, {-1});
  }
  return keep_matrix_dims(r, d0, d1, keepdim);
}

// A's singular values, or its eigenvalues' magnitudes when hermitian.
Tensor spectrum(const Tensor& A, bool hermitian) {
  return hermitian ? abs(linalg::eigvalsh(A)) : linalg::svdvals(A);
}

// PyTorch's tolerance, per matrix (..., 1): max(atol, rtol * its largest
// singular value), atol and rtol broadcasting over the batch, rtol
// defaulting to eps * max(m, n) where atol is not given or not positive.
Tensor rank_tolerance(const Tensor& A,
                      const Tensor& s,
                      const std::optional<Tensor>& atol,
                      const std::optional<Tensor>& rtol) {
  const double eps = A.dtype() == kFloat64 ? std::numeric_limits<double>::epsilon()
                                           : double(std::numeric_limits<float>::epsilon());
  const Tensor largest = s.numel() ? amax(s, {-1}, true) : zeros_like(s).sum({-1}, true);
  const Tensor zero = zeros_like(largest);
  const Tensor a = atol ? atol->to(s.dtype()).unsqueeze(-1) : zero;
  Tensor r = full_like(largest, eps * double(std::max(A.size(-2), A.size(-1))));
  if (rtol) {
    r = rtol->to(s.dtype()).unsqueeze(-1);
  } else if (atol) {
    r = where(a.gt(0), zero, r);
  }
  return maximum(largest * r, a);
}

std::optional<Tensor> as_tensor(std::optional<double> value) {
  if (!value) return std::nullopt;
  return scalar_tensor(*value, kFloat64);
}

}  // namespace

namespace linalg {

Tensor vector_norm(
    const Tensor& x, double ord, IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  stride::detail::check_dtype_rule(Op::linalg_vector_norm, x);
  const Tensor v = dtype ? x.to(*dtype) : x;
  const DimVector dims = dim.empty() ? all_dims(v) : dim.dims();
  if (std::isinf(ord)) {
    STRIDE_CHECK(v.numel() > 0 || ord < 0 || !dim.empty(), ValueError,
                 "[linalg.vector_norm] the inf norm of an empty tensor is not defined. Hint: "
                 "pass a non-empty input.");
    return ord > 0 ? amax(abs(v), dims, keepdim) : amin(abs(v), dims, keepdim);
  }
  if (ord == 0) {
    // The count of nonzeros, with a zero gradient that still reaches x, as
    // PyTorch's.
    const Tensor count = sum(v.ne(Scalar(0)).to(v.dtype()), dims, keepdim);
    return where(count.eq(count), count, sum(v, dims, keepdim));
  }
  if (ord == 1) return sum(abs(v), dims, keepdim);
  if (ord == 2) return sqrt_zero_safe(sum(v * v, dims, keepdim));
  const Tensor s = sum(abs(v).pow(Scalar(ord)), dims, keepdim);
  const Tensor zero = s.eq(0);
  return where(zero, zeros_like(s), where(zero, ones_like(s), s).pow(Scalar(1.0 / ord)));
}

Tensor matrix_norm(const Tensor& A, double ord, IntArrayRef dim, bool keepdim) {
  stride::detail::check_dtype_rule(Op::linalg_matrix_norm, A);
  STRIDE_CHECK(A.dim() >= 2, ShapeError,
               "[linalg.matrix_norm] A must have at least 2 dimensions; got shape ",
               shape_str(A.sizes()), ".");
  const auto [d0, d1] = matrix_dims(A, dim, "linalg.matrix_norm");
  if (ord == 2 || ord == -2) return singular_value_norm(A, ord, d0, d1, keepdim);
  STRIDE_CHECK(ord == 1 || ord == -1 || std::isinf(ord), ValueError,
               "[linalg.matrix_norm] ord must be 'fro', 'nuc', inf, -inf, 1, -1, 2 or -2; got ",
               ord, ".");
  // 1: the largest column sum (sum over rows, then the max over columns);
  // inf: the largest row sum.
  const bool columns = std::abs(ord) == 1;
  const int64_t summed = columns ? d0 : d1, extreme = columns ? d1 : d0;
  const Tensor sums = sum(abs(A), {summed}, true);
  Tensor r;
  if (sums.size(extreme) == 0) {
    r = sum(sums, {extreme}, true);  // an empty matrix's norm is 0, as PyTorch's
  } else {
    r = ord > 0 ? amax(sums, {extreme}, true) : amin(sums, {extreme}, true);
  }
  return keepdim ? r : r.squeeze(std::max(d0, d1)).squeeze(std::min(d0, d1));
}

Tensor matrix_norm(const Tensor& A, std::string_view ord, IntArrayRef dim, bool keepdim) {
  stride::detail::check_dtype_rule(Op::linalg_matrix_norm, A);
  STRIDE_CHECK(ord == "fro" || ord == "nuc", ValueError,
               "[linalg.matrix_norm] ord must be 'fro', 'nuc' or a number; got '", ord, "'.");
  STRIDE_CHECK(A.dim() >= 2, ShapeError,
               "[linalg.matrix_norm] A must have at least 2 dimensions; got shape ",
               shape_str(A.sizes()), ".");
  const auto [d0, d1] = matrix_dims(A, dim, "linalg.matrix_norm");
  if (ord == "nuc") {
    return singular_value_norm(A, std::numeric_limits<double>::quiet_NaN(), d0, d1, keepdim);
  }
  return vector_norm(A, 2, {d0, d1}, keepdim);
}

Tensor norm(const Tensor& A, std::optional<double> ord, IntArrayRef dim, bool keepdim) {
  stride::detail::check_dtype_rule(Op::linalg_norm, A);
  const bool matrix = dim.size() == 2 || (dim.empty() && ord && A.dim() == 2);
  if (!ord) {
    return matrix && !dim.empty() ? matrix_norm(A, "fro", dim, keepdim)
                                  : vector_norm(A, 2, dim, keepdim);
  }
  if (matrix) return matrix_norm(A, *ord, dim.empty() ? IntArrayRef({-2, -1}) : dim, keepdim);
  STRIDE_CHECK(dim.size() <= 1 && (!dim.empty() || A.dim() == 1), ShapeError,
               "[linalg.norm] with a numeric ord, the input must be 1-d or 2-d unless dim is "
               "given; got shape ",
               shape_str(A.sizes()), ". Hint: use linalg.vector_norm.");
  return vector_norm(A, *ord, dim, keepdim);
}

Tensor norm(const Tensor& A, std::string_view ord, IntArrayRef dim, bool keepdim) {
  stride::detail::check_dtype_rule(Op::linalg_norm, A);
  STRIDE_CHECK(A.dim() == 2 || dim.size() == 2, ShapeError, "[linalg.norm] ord='", ord,
               "' needs a 2-d input or two dims; got shape ", shape_str(A.sizes()), ".");
  return matrix_norm(A, ord, dim.empty() ? IntArrayRef({-2, -1}) : dim, keepdim);
}

Tensor cond(const Tensor& A, std::optional<double> p) {
  stride::detail::check_dtype_rule(Op::linalg_cond, A);
  check_matrix(A, "linalg.cond", "A");
  if (!p || *p == 2 || *p == -2) {
    const Tensor s = svdvals(A);
    const bool largest_over_smallest = !p || *p == 2;
    return largest_over_smallest ? amax(s, {-1}) / amin(s, {-1}) : amin(s, {-1}) / amax(s, {-1});
  }
  check_square(A, "linalg.cond", "A");
  return matrix_norm(A, *p) * matrix_norm(inv(A), *p);
}

Tensor cond(const Tensor& A, std::string_view p) {
  stride::detail::check_dtype_rule(Op::linalg_cond, A);
  check_square(A, "linalg.cond", "A");
  return matrix_norm(A, p) * matrix_norm(inv(A), p);
}

Tensor matrix_rank(const Tensor& A,
                   std::optional<double> atol,
                   std::optional<double> rtol,
                   bool hermitian) {
  return matrix_rank(A, as_tensor(atol), as_tensor(rtol), hermitian);
}

Tensor matrix_rank(const Tensor& A,
                   const std::optional<Tensor>& atol,
                   const std::optional<Tensor>& rtol,
                   bool hermitian) {
  stride::detail::check_dtype_rule(Op::linalg_matrix_rank, A);
  check_matrix(A, "linalg.matrix_rank", "A");
  NoGradGuard no_grad;
  const Tensor s = spectrum(A, hermitian);
  return s.gt(rank_tolerance(A, s, atol, rtol)).sum({-1});
}

Tensor pinv(const Tensor& A,
            std::optional<double> atol,
            std::optional<double> rtol,
            bool hermitian) {
  return pinv(A, as_tensor(atol), as_tensor(rtol), hermitian);
}

Tensor pinv(const Tensor& A,
            const std::optional<Tensor>& atol,
            const std::optional<Tensor>& rtol,
            bool hermitian) {
  stride::detail::check_dtype_rule(Op::linalg_pinv, A);
  check_matrix(A, "linalg.pinv", "A");
  if (hermitian) {
    check_square(A, "linalg.pinv", "A");
    const auto [L, V] = eigh(A);
    const Tensor kept = abs(L).gt(rank_tolerance(A, abs(L), atol, rtol));
    const Tensor inverse = where(kept, 1.0 / where(kept, L, ones_like(L)), zeros_like(L));
    return V.matmul(inverse.unsqueeze(-1) * mT(V));
  }
  const auto [U, S, Vh] = svd(A, /*full_matrices=*/false);
  const Tensor kept = S.gt(rank_tolerance(A, S, atol, rtol));
  const Tensor inverse = where(kept, 1.0 / where(kept, S, ones_like(S)), zeros_like(S));
  return mT(Vh).matmul(inverse.unsqueeze(-1) * mT(U));
}

Tensor matrix_power(const Tensor& A, int64_t n) {
  stride::detail::check_dtype_rule(Op::linalg_matrix_power, A);
  STRIDE_CHECK(A.dim() >= 2 && A.size(-1) == A.size(-2), ShapeError,
               "[linalg.matrix_power] A must be batches of square matrices; got shape ",
               shape_str(A.sizes()), ".");
  if (n == 0) {
    // The identity, still taken from A (with a zero gradient) so that
    // autograd reaches A, as PyTorch's.
    const Tensor identity = eye(A.size(-1), A.size(-1), A.options()).expand(A.sizes());
    return where(identity.eq(identity), identity, A);
  }
  Tensor base = n < 0 ? inv(A) : A;
  // Binary powering: base^(2^i) for each set bit of |n|.
  Tensor result;
  for (uint64_t e = uint64_t(n < 0 ? -n : n);; e >>= 1) {
    if (e & 1) result = result.defined() ? result.matmul(base) : base;
    if (e <= 1) break;
    base = base.matmul(base);
  }
  return result;
}

// Scaling and squaring: exp(A) = exp(A / 2^s)^(2^s), with s making the
// scaled 1-norm at most 1/2, where the Taylor series to degree 18 is exact
// to float64's precision. Lower precisions compute in float64 (the
// squarings would multiply their rounding) and round the result once.
Tensor matrix_exp(const Tensor& A) {
  stride::detail::check_dtype_rule(Op::linalg_matrix_exp, A);
  const Tensor a = A.to(kFloat64);
  check_square(a, "linalg.matrix_exp", "A");
  const int64_t n = a.size(-1);
  int64_t squarings = 0;
  if (!a.device().is_meta() && a.numel() > 0) {
    NoGradGuard no_grad;
    const double norm1 = amax(sum(abs(a), {-2}), {}).item<double>();
    if (std::isfinite(norm1) && norm1 > 0.5) squarings = int64_t(std::ceil(std::log2(norm1 / 0.5)));
  }
  const Tensor X = a / std::ldexp(1.0, int(squarings));
  const Tensor identity = eye(n, n, a.options());
  Tensor E = identity.expand(a.sizes());
  for (int k = 18; k >= 1; --k) E = identity + X.matmul(E) / double(k);
  for (int64_t i = 0; i < squarings; ++i) E = E.matmul(E);
  return E.to(A.dtype());
}

Tensor cross(const Tensor& a, const Tensor& b, int64_t dim) {
  stride::detail::check_dtype_rule(Op::linalg_cross, a);
  STRIDE_CHECK(a.dim() == b.dim(), ShapeError,
               "[linalg.cross] the inputs must have the same number of dimensions; got shapes ",
               shape_str(a.sizes()), " and ", shape_str(b.sizes()), ".");
  const DimVector shape = broadcast_shapes(a.sizes(), b.sizes(), "linalg.cross");
  const int64_t d = wrap_dim(dim, int64_t(shape.size()), "linalg.cross");
  STRIDE_CHECK(shape[size_t(d)] == 3, ShapeError,
               "[linalg.cross] the inputs must have 3 "
               "elements along dim ",
               dim, "; got shapes ", shape_str(a.sizes()), " and ", shape_str(b.sizes()), ".");
  const Tensor x = a.expand(shape), y = b.expand(shape);
  auto at = [d](const Tensor& t, int64_t i) { return t.narrow(d, i, 1); };
  return cat({at(x, 1) * at(y, 2) - at(x, 2) * at(y, 1), at(x, 2) * at(y, 0) - at(x, 0) * at(y, 2),
              at(x, 0) * at(y, 1) - at(x, 1) * at(y, 0)},
             d);
}

Tensor vecdot(const Tensor& x, const Tensor& y, int64_t dim) {
  stride::detail::check_dtype_rule(Op::linalg_vecdot, x);
  return sum(x * y, {dim});
}

Tensor multi_dot(const std::vector<Tensor>& tensors) {
  STRIDE_CHECK(tensors.size() >= 2, ValueError,
               "[linalg.multi_dot] expected at least 2 tensors; got ", tensors.size(), ".");
  stride::detail::check_dtype_rule(Op::linalg_multi_dot, tensors[0]);
  const bool row = tensors.front().dim() == 1, column = tensors.back().dim() == 1;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const bool end = i == 0 || i + 1 == tensors.size();
    STRIDE_CHECK(tensors[i].dim() == 2 || (end && tensors[i].dim() == 1), ShapeError,
                 "[linalg.multi_dot] tensor ", i, " must be 2-d",
                 end ? " (or 1-d, as the first or last)" : "", "; got shape ",
                 shape_str(tensors[i].sizes()), ".");
  }
  Tensor r = row ? tensors.front().unsqueeze(0) : tensors.front();
  for (size_t i = 1; i < tensors.size(); ++i) {
    const bool last = i + 1 == tensors.size();
    r = r.matmul(last && column ? tensors[i].unsqueeze(-1) : tensors[i]);
  }
  if (column) r = r.squeeze(-1);
  return row ? r.squeeze(0) : r;
}

Tensor diagonal(const Tensor& A, int64_t offset, int64_t dim1, int64_t dim2) {
  stride::detail::check_dtype_rule(Op::linalg_diagonal, A);
  return A.diagonal(offset, dim1, dim2);
}

// Columns x^0, x^1, ..., x^(N-1): the running products of [1, x, x, ...].
Tensor vander(const Tensor& x, std::optional<int64_t> N) {
  stride::detail::check_dtype_rule(Op::linalg_vander, x);
  // A 0-d x is one point, as PyTorch's.
  const Tensor points = x.dim() == 0 ? x.reshape({1}) : x;
  const int64_t columns = N ? *N : points.size(-1);
  STRIDE_CHECK(columns > 1, ValueError, "[linalg.vander] N must be greater than 1; got ", columns,
               ".");
  DimVector shape(points.sizes().begin(), points.sizes().end());
  shape.push_back(columns - 1);
  const Tensor powers = points.unsqueeze(-1).expand(shape);
  shape.back() = 1;
  return cat({ones(shape, points.options()), powers}, -1).cumprod(-1, points.dtype());
}

Tensor tensorinv(const Tensor& A, int64_t ind) {
  stride::detail::check_dtype_rule(Op::linalg_tensorinv, A);
  STRIDE_CHECK(ind > 0 && ind <= A.dim(), ValueError,
               "[linalg.tensorinv] ind must be positive and at most A's dims (", A.dim(), "); got ",
               ind, ".");
  const DimVector out_shape = [&] {
    DimVector s(A.sizes().begin() + ind, A.sizes().end());
    for (int64_t i = 0; i < ind; ++i) s.push_back(A.size(i));
    return s;
  }();
  const int64_t rows =
      std::accumulate(A.sizes().begin(), A.sizes().begin() + ind, int64_t(1), std::multiplies<>());
  const int64_t cols =
      std::accumulate(A.sizes().begin() + ind, A.sizes().end(), int64_t(1), std::multiplies<>());
  STRIDE_CHECK(rows == cols, ShapeError, "[linalg.tensorinv] the product of A's first ", ind,
               " dims (", rows, ") must equal that of the rest (", cols, "); got shape ",
               shape_str(A.sizes()), ".");
  return inv(A.reshape({rows, cols})).reshape(out_shape);
}

Tensor tensorsolve(const Tensor& A, const Tensor& B, std::optional<std::vector<int64_t>> dims) {
  stride::detail::check_dtype_rule(Op::linalg_tensorsolve, A);
  Tensor a = A;
  if (dims) {
    std::vector<int64_t> order, moved;
    for (const int64_t d : *dims) moved.push_back(wrap_dim(d, A.dim(), "linalg.tensorsolve"));
    for (int64_t i = 0; i < A.dim(); ++i) {
      if (std::find(moved.begin(), moved.end(), i) == moved.end()) order.push_back(i);
    }
    order.insert(order.end(), moved.begin(), moved.end());
    a = A.permute(order);
  }
  STRIDE_CHECK(B.dim() <= a.dim(), ShapeError, "[linalg.tensorsolve] B (", shape_str(B.sizes()),
               ") must have at most A's dims (", shape_str(A.sizes()), ").");
  const DimVector x_shape(a.sizes().begin() + B.dim(), a.sizes().end());
  const int64_t rows = B.numel();
  const int64_t cols =
      std::accumulate(x_shape.begin(), x_shape.end(), int64_t(1), std::multiplies<>());
  STRIDE_CHECK(rows == cols, ShapeError, "[linalg.tensorsolve] A's leading dims (",
               shape_str(A.sizes()), ") must hold as many elements as B (", shape_str(B.sizes()),
               ") and as its trailing ones.");
  return solve(a.reshape({rows, cols}), B.reshape({rows})).reshape(x_shape);
}

// Through the pseudo-inverse with LAPACK's rcond rule: every driver's
// solution of a full-rank problem, and gelsy's and gelsd's minimum-norm one
// of a rank-deficient problem.
std::tuple<Tensor, Tensor, Tensor, Tensor> lstsq(const Tensor& A,
                                                 const Tensor& B,
                                                 std::optional<double> rcond,
                                                 std::string_view driver) {
  stride::detail::check_dtype_rule(Op::linalg_lstsq, A);
  check_matrix(A, "linalg.lstsq", "A");
  STRIDE_CHECK(driver == "gelsy" || driver == "gelsd" || driver == "gelss" || driver == "gels",
               ValueError,
               "[linalg.lstsq] driver must be 'gels', 'gelsy', 'gelsd' or 'gelss' on "
               "the CPU; got '",
               driver, "'.");
  const bool vector = B.dim() == A.dim() - 1;
  const Tensor b = vector ? B.unsqueeze(-1) : B;
  STRIDE_CHECK(b.dim() >= 2 && b.size(-2) == A.size(-2), ShapeError, "[linalg.lstsq] A (",
               shape_str(A.sizes()), ") and B (", shape_str(B.sizes()),
               ") must have the same number of rows.");
  const int64_t m = A.size(-2), n = A.size(-1);
  const double eps = A.dtype() == kFloat64 ? std::numeric_limits<double>::epsilon()
                                           : double(std::numeric_limits<float>::epsilon());
  const double rtol = rcond && *rcond > 0 ? *rcond : eps * double(std::max(m, n));
  // float32 problems are solved in float64: the pseudo-inverse's rounding
  // would otherwise exceed LAPACK's (an orthogonal factorization) by far.
  const ScalarType wide = A.dtype() == kFloat32 ? kFloat64 : A.dtype();
  Tensor x = pinv(A.to(wide), std::nullopt, rtol).matmul(b.to(wide)).to(A.dtype());
  // An output the driver does not compute is empty, but still a part of the
  // graph (an empty view of the solution), as PyTorch's.
  const Tensor none = x.reshape({-1}).narrow(0, 0, 0);
  Tensor rank = empty({0}, A.options().dtype(kInt64)), singular_values = none, residuals = none;
  if (driver != "gels") {
    const Tensor s = svdvals(A);
    NoGradGuard no_grad;
    rank = s.gt(rank_tolerance(A, s, std::nullopt, as_tensor(rtol))).sum({-1});
    if (driver != "gelsy") singular_values = s;
  }
  const bool full_rank = driver == "gels" || A.device().is_meta() ||
                         (rank.numel() > 0 && rank.eq(n).all().item<bool>());
  if (m > n && driver != "gelsy" && full_rank) residuals = sum(square(A.matmul(x) - b), {-2});
  if (vector) {
    x = x.squeeze(-1);
    if (residuals.numel()) residuals = residuals.squeeze(-1);
  }
  return {x, residuals, rank, singular_values};
}

}  // namespace linalg

}  // namespace stride
