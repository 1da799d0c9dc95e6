// The factorizations of stride::linalg (include/stride/linalg.h): LU,
// triangular solve, Cholesky, QR, the symmetric eigendecomposition and the
// SVD, each one apply() call whose kernel is LAPACK's (src/backends/cpu/
// lapack.cpp), with PyTorch's backward formulas written with ops (so they
// are differentiable again). The ops built on them are in linalg_solvers.cpp.
//
// LAPACK reads matrices column-major: an op hands a batch of (..., m, n)
// matrices to its kernel as the contiguous (B, n, m) buffer of their
// transposes (to_lapack) and views the kernel's buffers back the same way
// (from_lapack), so results are column-major views, as PyTorch's.
#include "ops/linalg_internal.h"

#include "backends/kernels.h"
#include "core/check.h"
#include "ops/apply.h"

namespace stride {

using autograd::Grads;
using autograd::SavedTensor;
using detail::Op;

namespace linalg::detail {

Tensor mT(const Tensor& x) {
  return x.transpose(-2, -1);
}

Tensor diag_matrix(const Tensor& v) {
  const int64_t n = v.size(-1);
  return v.unsqueeze(-1) * eye(n, n, v.options());
}

DimVector batch_shape(const Tensor& a) {
  return DimVector(a.sizes().begin(), a.sizes().end() - 2);
}

int64_t batch_count(const Tensor& a) {
  int64_t count = 1;
  for (int64_t i = 0; i + 2 < a.dim(); ++i) count *= a.size(i);
  return count;
}

void check_matrix(const Tensor& a, const char* op, const char* arg) {
  STRIDE_CHECK(a.dim() >= 2, ShapeError, "[", op, "] ", arg,
               " must have at least 2 dimensions (a batch of matrices); got shape ",
               shape_str(a.sizes()), ".");
  STRIDE_CHECK(a.dtype() == kFloat32 || a.dtype() == kFloat64, DTypeError, "[", op, "] ", arg,
               " must be float32 or float64; got ", to_string(a.dtype()),
               ". Hint: convert it with .to(float32).");
}

void check_square(const Tensor& a, const char* op, const char* arg) {
  check_matrix(a, op, arg);
  STRIDE_CHECK(a.size(-1) == a.size(-2), ShapeError, "[", op, "] ", arg,
               " must be batches of square matrices, but they are ", a.size(-2), " by ", a.size(-1),
               " matrices.");
}

bool any_failed(const Tensor& info) {
  return !info.device().is_meta() && info.numel() > 0 && info.gt(0).any().item<bool>();
}

std::pair<Tensor, Tensor> broadcast_batches(const Tensor& a, const Tensor& b, const char* op) {
  const DimVector batch = broadcast_shapes(batch_shape(a), batch_shape(b), op);
  auto expanded = [&](const Tensor& t) {
    DimVector shape = batch;
    shape.push_back(t.size(-2));
    shape.push_back(t.size(-1));
    return t.expand(shape);
  };
  return {expanded(a), expanded(b)};
}

}  // namespace linalg::detail

namespace {

using namespace linalg::detail;

// (..., m, n) -> a new (B, n, m) contiguous buffer: each matrix
// column-major. Always a copy, as the kernels overwrite it: contiguous()
// would hand back a column-major input itself (a factor of an earlier op).
Tensor to_lapack(const Tensor& a) {
  const Tensor matrices = a.reshape({batch_count(a), a.size(-2), a.size(-1)}).transpose(1, 2);
  Tensor buffer = empty(matrices.sizes(), matrices.options());
  buffer.copy_(matrices);
  return buffer;
}

// A kernel's (B, c, r) buffer as the batch of r x c matrices it holds.
Tensor from_lapack(const Tensor& buffer, const DimVector& batch) {
  DimVector shape = batch;
  shape.push_back(buffer.size(2));
  shape.push_back(buffer.size(1));
  return buffer.transpose(1, 2).reshape(shape);
}

Tensor with_batch(const Tensor& t, const DimVector& batch, std::initializer_list<int64_t> tail) {
  DimVector shape = batch;
  for (const int64_t d : tail) shape.push_back(d);
  return t.reshape(shape);
}

Tensor new_info(const Tensor& a) {
  return empty({batch_count(a)}, a.options().dtype(kInt32));
}

// PyTorch's linalg_lu_backward for A = P L U, L (m, k), U (k, n): the
// square, wide (m < n) and tall (m > n) cases.
Tensor lu_backward(
    const Tensor& gL, const Tensor& gU, const Tensor& P, const Tensor& L, const Tensor& U) {
  const int64_t m = L.size(-2), n = U.size(-1);
  Tensor gA;
  if (m == n) {
    gA = mT(L).matmul(gL).tril(-1) + gU.matmul(mT(U)).triu();
    gA = linalg::solve_triangular(mT(U), gA, /*upper=*/false, /*left=*/false);
    gA = linalg::solve_triangular(mT(L), gA, /*upper=*/true, /*left=*/true, /*unit=*/true);
  } else if (m < n) {
    const Tensor U1 = U.narrow(-1, 0, m);
    gA = mT(L).matmul(gL) - gU.triu().matmul(mT(U));
    gA = linalg::solve_triangular(mT(U1), gA.tril(-1), /*upper=*/false, /*left=*/false);
    gA = cat({gA + gU.narrow(-1, 0, m).triu(), gU.narrow(-1, m, n - m)}, -1);
    gA = linalg::solve_triangular(mT(L), gA, /*upper=*/true, /*left=*/true, /*unit=*/true);
  } else {
    const Tensor L1 = L.narrow(-2, 0, n);
    gA = gU.matmul(mT(U)) - mT(L).matmul(gL);
    gA = linalg::solve_triangular(mT(L1), gA.triu(), /*upper=*/true, /*left=*/true,
                                  /*unit=*/true);
    gA = cat({gA + gL.narrow(-2, 0, n).tril(-1), gL.narrow(-2, n, m - n)}, -2);
    gA = linalg::solve_triangular(mT(U), gA, /*upper=*/false, /*left=*/false);
  }
  return P.matmul(gA);
}

// PyTorch's cholesky_backward: gA = L^-T Phi(L^T gL) L^-1, Phi taking the
// lower triangle with half the diagonal, symmetrized.
Tensor cholesky_backward(const Tensor& gL, const Tensor& L) {
  Tensor gA = mT(L).matmul(gL).tril();
  gA = (gA + mT(gA.tril(-1))) * 0.5;
  gA = linalg::solve_triangular(mT(L), gA, /*upper=*/true, /*left=*/true);
  return linalg::solve_triangular(L, gA, /*upper=*/false, /*left=*/false);
}

// PyTorch's linalg_qr_backward for m >= n (reduced) or square:
// gA = [Q syminvadj(triu(gR R^T - Q^T gQ)) + gQ] R^-T, where syminvadj(X)
// = X + X^T with X's own diagonal.
Tensor qr_backward_tall(const Tensor& gQ, const Tensor& gR, const Tensor& Q, const Tensor& R) {
  Tensor gA;
  if (gQ.defined() && gR.defined()) {
    gA = gR.matmul(mT(R)) - mT(Q).matmul(gQ);
  } else if (gQ.defined()) {
    gA = -mT(Q).matmul(gQ);
  } else {
    gA = gR.matmul(mT(R));
  }
  gA = Q.matmul(gA.triu() + mT(gA.triu(1)));
  if (gQ.defined()) gA = gA + gQ;
  return linalg::solve_triangular(mT(R), gA, /*upper=*/false, /*left=*/false);
}

// m < n: A = [X | Y] with X = Q R1 square and Y = Q R2, so gY = Q gR2 and X
// takes gQ + Y gR2^T.
Tensor qr_backward(const Tensor& gQ, const Tensor& gR, const Tensor& Q, const Tensor& R) {
  const int64_t m = Q.size(-2), n = R.size(-1);
  if (m >= n) return qr_backward_tall(gQ, gR, Q, R);
  const Tensor R1 = R.narrow(-1, 0, m), R2 = R.narrow(-1, m, n - m);
  const Tensor gR2 = gR.defined() ? gR.narrow(-1, m, n - m) : zeros_like(R2);
  Tensor gQx = Q.matmul(R2).matmul(mT(gR2));
  if (gQ.defined()) gQx = gQx + gQ;
  const Tensor gX = qr_backward_tall(gQx, gR.defined() ? gR.narrow(-1, 0, m) : Tensor(), Q, R1);
  return cat({gX, Q.matmul(gR2)}, -1);
}

// PyTorch's linalg_eig_backward for symmetric input: gA = V (diag(gL) +
// skew(V^T gV) / E) V^T with E_ij = L_j - L_i.
Tensor eigh_backward(const Tensor& gL, const Tensor& gV, const Tensor& L, const Tensor& V) {
  const int64_t n = L.size(-1);
  Tensor inner = gL.defined() ? diag_matrix(gL) : zeros_like(V);
  if (gV.defined()) {
    const Tensor identity = eye(n, n, V.options());
    const Tensor E = L.unsqueeze(-2) - L.unsqueeze(-1) + identity;
    const Tensor VtgV = mT(V).matmul(gV);
    inner = inner + ((VtgV - mT(VtgV)) * 0.5) / E;
  }
  return V.matmul(inner).matmul(mT(V));
}

// PyTorch's svd_backward (real case), for the reduced U (m, k), S (k),
// Vh (k, n).
Tensor svd_backward(const Tensor& gU,
                    const Tensor& gS,
                    const Tensor& gVh,
                    const Tensor& U,
                    const Tensor& S,
                    const Tensor& Vh) {
  const int64_t m = U.size(-2), n = Vh.size(-1), k = S.size(-1);
  if (!gU.defined() && !gVh.defined()) {
    return m >= n ? U.matmul(gS.unsqueeze(-1) * Vh) : (U * gS.unsqueeze(-2)).matmul(Vh);
  }
  auto skew = [](const Tensor& a) { return a - mT(a); };
  const Tensor S2 = S * S;
  const Tensor E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + eye(k, k, S.options());
  Tensor gA;
  if (gU.defined() && gVh.defined()) {
    gA =
        (skew(mT(U).matmul(gU)) * S.unsqueeze(-2) + S.unsqueeze(-1) * skew(Vh.matmul(mT(gVh)))) / E;
  } else if (gU.defined()) {
    gA = skew(mT(U).matmul(gU)) * (S.unsqueeze(-2) / E);
  } else {
    gA = S.unsqueeze(-1) * (skew(Vh.matmul(mT(gVh))) / E);
  }
  if (gS.defined()) gA = gA + diag_matrix(gS);
  if (m > n && gU.defined()) {
    gA = U.matmul(gA);
    const Tensor gUSinv = gU / S.unsqueeze(-2);
    gA = gA + gUSinv - U.matmul(mT(U).matmul(gUSinv));
    return gA.matmul(Vh);
  }
  if (m < n && gVh.defined()) {
    gA = gA.matmul(Vh);
    const Tensor SinvgVh = gVh / S.unsqueeze(-1);
    gA = gA + SinvgVh - SinvgVh.matmul(mT(Vh)).matmul(Vh);
    return U.matmul(gA);
  }
  return U.matmul(gA).matmul(Vh);
}

void check_uplo(std::string_view uplo, const char* op) {
  STRIDE_CHECK(uplo == "L" || uplo == "U" || uplo == "l" || uplo == "u", ValueError, "[", op,
               "] UPLO must be 'L' or 'U'; got '", uplo, "'.");
}

}  // namespace

namespace linalg {

std::tuple<Tensor, Tensor, Tensor> lu_factor_ex(const Tensor& A, bool pivot, bool check_errors) {
  stride::detail::check_dtype_rule(Op::linalg_lu_factor_ex, A);
  check_matrix(A, "linalg.lu_factor_ex", "A");
  STRIDE_CHECK(pivot, NotImplementedError,
               "[linalg.lu_factor_ex] LU without pivoting is not implemented on the CPU. Hint: "
               "pass pivot=True.");
  const DimVector batch = batch_shape(A);
  const int64_t k = std::min(A.size(-2), A.size(-1));
  // The pivots and info are integers without a gradient: the forward hands
  // them out beside the one differentiable output.
  Tensor pivots = empty({batch_count(A), k}, A.options().dtype(kInt32));
  Tensor info = new_info(A);
  const Tensor LU = stride::detail::apply(
      Op::linalg_lu_factor_ex, {&A},
      [&] {
        Tensor buffer = to_lapack(A);
        kernels::lu_factor(A.device(), buffer, pivots, info);
        return from_lapack(buffer, batch);
      },
      [&](const Tensor& out) {
        return [sLU = SavedTensor::output(out),
                piv = with_batch(pivots, batch, {k})](const Grads& gs) {
          const Tensor lu = sLU.get();
          const auto [P, L, U] = lu_unpack(lu, piv);
          const int64_t kk = std::min(lu.size(-2), lu.size(-1));
          const Tensor gL = gs[0].narrow(-1, 0, kk).tril(-1);
          const Tensor gU = gs[0].narrow(-2, 0, kk).triu();
          return Grads{lu_backward(gL, gU, P, L, U)};
        };
      });
  STRIDE_CHECK(!check_errors || !any_failed(info), ValueError,
               "[linalg.lu_factor_ex] the matrix is singular: U has a zero on its diagonal, and "
               "solving with it would divide by zero.");
  return {LU, with_batch(pivots, batch, {k}), with_batch(info, batch, {})};
}

Tensor solve_triangular(
    const Tensor& A, const Tensor& B, bool upper, bool left, bool unitriangular) {
  stride::detail::check_dtype_rule(Op::linalg_solve_triangular, A);
  check_square(A, "linalg.solve_triangular", "A");
  check_matrix(B, "linalg.solve_triangular", "B");
  STRIDE_CHECK(A.dtype() == B.dtype(), DTypeError,
               "[linalg.solve_triangular] A and B must have the same dtype; got ",
               to_string(A.dtype()), " and ", to_string(B.dtype()), ".");
  const int64_t n = A.size(-1);
  STRIDE_CHECK((left ? B.size(-2) : B.size(-1)) == n, ShapeError, "[linalg.solve_triangular] A (",
               shape_str(A.sizes()), ") and B (", shape_str(B.sizes()),
               ") do not fit: B must have ", n,
               left ? " rows (left=True)." : " columns (left=False).");
  const std::pair<Tensor, Tensor> operands = broadcast_batches(A, B, "linalg.solve_triangular");
  const Tensor& a = operands.first;
  const Tensor& b = operands.second;
  return stride::detail::apply(
      Op::linalg_solve_triangular, {&a, &b},
      [&] {
        const Tensor a_buffer = to_lapack(a);
        Tensor b_buffer = to_lapack(left ? b : mT(b));
        kernels::triangular_solve(a.device(), a_buffer, b_buffer, upper, !left, unitriangular);
        const Tensor x = from_lapack(b_buffer, batch_shape(b));
        return left ? x : mT(x);
      },
      [&](const Tensor& x) {
        return [sa = SavedTensor::input(a), sx = SavedTensor::output(x), upper, left,
                unitriangular](const Grads& gs) {
          const Tensor av = sa.get(), xv = sx.get();
          const Tensor gb = solve_triangular(mT(av), gs[0], !upper, left, unitriangular);
          Tensor ga = left ? -gb.matmul(mT(xv)) : -mT(xv).matmul(gb);
          const int64_t skip = unitriangular ? 1 : 0;
          ga = upper ? ga.triu(skip) : ga.tril(-skip);
          return Grads{ga, gb};
        };
      });
}

std::pair<Tensor, Tensor> cholesky_ex(const Tensor& A, bool upper, bool check_errors) {
  stride::detail::check_dtype_rule(Op::linalg_cholesky_ex, A);
  check_square(A, "linalg.cholesky_ex", "A");
  const DimVector batch = batch_shape(A);
  Tensor info = new_info(A);
  const Tensor factor = stride::detail::apply(
      Op::linalg_cholesky_ex, {&A},
      [&] {
        Tensor buffer = to_lapack(A);
        kernels::cholesky(A.device(), buffer, info);
        const Tensor L = from_lapack(buffer, batch);
        return upper ? mT(L) : L;
      },
      [&](const Tensor& out) {
        return [sl = SavedTensor::output(out), upper](const Grads& gs) {
          const Tensor f = sl.get();
          const Tensor L = upper ? mT(f) : f;
          return Grads{cholesky_backward(upper ? mT(gs[0]) : gs[0], L)};
        };
      });
  STRIDE_CHECK(!check_errors || !any_failed(info), ValueError,
               "[linalg.cholesky_ex] the input is not positive-definite, so the factorization "
               "could not be completed.");
  return {factor, with_batch(info, batch, {})};
}

std::pair<Tensor, Tensor> qr(const Tensor& A, std::string_view mode) {
  stride::detail::check_dtype_rule(Op::linalg_qr, A);
  check_matrix(A, "linalg.qr", "A");
  STRIDE_CHECK(mode == "reduced" || mode == "complete" || mode == "r", ValueError,
               "[linalg.qr] mode must be 'reduced', 'complete' or 'r'; got '", mode, "'.");
  const DimVector batch = batch_shape(A);
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  const bool complete = mode == "complete", want_q = mode != "r";
  const int64_t qcols = complete ? m : k, rrows = complete ? m : k;
  std::vector<Tensor> r = stride::detail::apply(
      Op::linalg_qr, {&A},
      [&] {
        const Tensor buffer = to_lapack(A);
        Tensor q =
            want_q ? empty({batch_count(A), qcols, m}, A.options()) : empty({0}, A.options());
        Tensor rb = empty({batch_count(A), n, rrows}, A.options());
        kernels::qr(A.device(), buffer, q, rb);
        return std::vector<Tensor>{want_q ? from_lapack(q, batch) : q, from_lapack(rb, batch)};
      },
      [&](const std::vector<Tensor>& out) {
        return [sq = SavedTensor::output(out[0]), sr = SavedTensor::output(out[1]), want_q,
                complete, m, n](const Grads& gs) {
          STRIDE_CHECK(want_q, NotImplementedError,
                       "[linalg.qr] the derivative of linalg.qr depends on Q, which is not "
                       "computed when mode='r'. Hint: use mode='reduced' to differentiate.");
          STRIDE_CHECK(!(complete && m > n), NotImplementedError,
                       "[linalg.qr] the QR decomposition is not differentiable when "
                       "mode='complete' and nrows > ncols. Hint: use mode='reduced'.");
          return Grads{qr_backward(gs[0], gs[1], sq.get(), sr.get())};
        };
      });
  return {r[0], r[1]};
}

std::pair<Tensor, Tensor> eigh(const Tensor& A, std::string_view UPLO) {
  stride::detail::check_dtype_rule(Op::linalg_eigh, A);
  check_square(A, "linalg.eigh", "A");
  check_uplo(UPLO, "linalg.eigh");
  const DimVector batch = batch_shape(A);
  const int64_t n = A.size(-1);
  const bool upper = UPLO == "U" || UPLO == "u";
  std::vector<Tensor> r = stride::detail::apply(
      Op::linalg_eigh, {&A},
      [&] {
        Tensor buffer = to_lapack(A);
        Tensor w = empty({batch_count(A), n}, A.options());
        Tensor info = new_info(A);
        kernels::eigh(A.device(), buffer, w, upper, /*vectors=*/true, info);
        STRIDE_CHECK(!any_failed(info), ValueError,
                     "[linalg.eigh] the algorithm failed to converge because the input matrix "
                     "is ill-conditioned or has too many repeated eigenvalues.");
        return std::vector<Tensor>{with_batch(w, batch, {n}), from_lapack(buffer, batch)};
      },
      [&](const std::vector<Tensor>& out) {
        return
            [sl = SavedTensor::output(out[0]), sv = SavedTensor::output(out[1])](const Grads& gs) {
              return Grads{eigh_backward(gs[0], gs[1], sl.get(), sv.get())};
            };
      });
  return {r[0], r[1]};
}

std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A, bool full_matrices) {
  stride::detail::check_dtype_rule(Op::linalg_svd, A);
  check_matrix(A, "linalg.svd", "A");
  const DimVector batch = batch_shape(A);
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  const int64_t ucols = full_matrices ? m : k, vrows = full_matrices ? n : k;
  std::vector<Tensor> r = stride::detail::apply(
      Op::linalg_svd, {&A},
      [&] {
        Tensor buffer = to_lapack(A);
        Tensor s = empty({batch_count(A), k}, A.options());
        Tensor u = empty({batch_count(A), ucols, m}, A.options());
        Tensor vh = empty({batch_count(A), n, vrows}, A.options());
        Tensor info = new_info(A);
        kernels::svd(A.device(), buffer, s, u, vh, info);
        STRIDE_CHECK(!any_failed(info), ValueError,
                     "[linalg.svd] the algorithm failed to converge because the input matrix "
                     "is ill-conditioned or has too many repeated singular values.");
        return std::vector<Tensor>{from_lapack(u, batch), with_batch(s, batch, {k}),
                                   from_lapack(vh, batch)};
      },
      [&](const std::vector<Tensor>& out) {
        return [su = SavedTensor::output(out[0]), ss = SavedTensor::output(out[1]),
                sv = SavedTensor::output(out[2]), k](const Grads& gs) {
          // The complete bases' extra columns are not determined by A: only
          // their first k enter the gradient, as PyTorch's.
          auto first_k = [k](const Tensor& t, int64_t dim) {
            return t.defined() ? t.narrow(dim, 0, k) : t;
          };
          return Grads{svd_backward(first_k(gs[0], -1), gs[1], first_k(gs[2], -2),
                                    first_k(su.get(), -1), ss.get(), first_k(sv.get(), -2))};
        };
      });
  return {r[0], r[1], r[2]};
}

}  // namespace linalg

std::tuple<Tensor, Tensor, Tensor> lu_unpack(const Tensor& LU, const Tensor& pivots) {
  using namespace linalg::detail;
  stride::detail::check_dtype_rule(Op::lu_unpack, LU);
  check_matrix(LU, "lu_unpack", "LU_data");
  const int64_t m = LU.size(-2), n = LU.size(-1), k = std::min(m, n);
  STRIDE_CHECK(pivots.dtype() == kInt32 && pivots.numel() == batch_count(LU) * k, DTypeError,
               "[lu_unpack] LU_pivots must be int32 of shape (..., ", k,
               "), as linalg.lu_factor returns; got ", to_string(pivots.dtype()), " of shape ",
               shape_str(pivots.sizes()), ".");
  const Tensor L = LU.narrow(-1, 0, k).tril(-1) + eye(m, k, LU.options());
  const Tensor U = LU.narrow(-2, 0, k).triu();
  Tensor perm = empty({batch_count(LU), m}, pivots.options().dtype(kInt64));
  kernels::lu_permutation(LU.device(), pivots.reshape({perm.size(0), k}).contiguous(), perm);
  DimVector shape = batch_shape(LU);
  shape.push_back(m);
  const Tensor rows = arange(m, kInt64).to(LU.device()).unsqueeze(-1);
  const Tensor P = perm.reshape(shape).unsqueeze(-2).eq(rows).to(LU.dtype());
  return {P, L, U};
}

}  // namespace stride
