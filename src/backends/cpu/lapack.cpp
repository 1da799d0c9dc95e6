// The CPU kernels of the linear algebra ops (backends/kernels.h): LAPACK
// through OpenBLAS, which carries it (Debian's libopenblas), one matrix of the
// batch after another. LAPACK has no C header in Debian's OpenBLAS packages,
// so its Fortran entry points are declared here; each takes its character
// arguments' hidden lengths last (gfortran's convention), which the routines
// OpenBLAS writes in C ignore.
#include <cblas.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "backends/cpu/capability.h"
#include "backends/kernels.h"
#include "core/dispatch.h"

extern "C" {
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info, size_t);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t);
void sgeqrf_(const int* m,
             const int* n,
             float* a,
             const int* lda,
             float* tau,
             float* work,
             const int* lwork,
             int* info);
void dgeqrf_(const int* m,
             const int* n,
             double* a,
             const int* lda,
             double* tau,
             double* work,
             const int* lwork,
             int* info);
void sorgqr_(const int* m,
             const int* n,
             const int* k,
             float* a,
             const int* lda,
             const float* tau,
             float* work,
             const int* lwork,
             int* info);
void dorgqr_(const int* m,
             const int* n,
             const int* k,
             double* a,
             const int* lda,
             const double* tau,
             double* work,
             const int* lwork,
             int* info);
void ssyevd_(const char* jobz,
             const char* uplo,
             const int* n,
             float* a,
             const int* lda,
             float* w,
             float* work,
             const int* lwork,
             int* iwork,
             const int* liwork,
             int* info,
             size_t,
             size_t);
void dsyevd_(const char* jobz,
             const char* uplo,
             const int* n,
             double* a,
             const int* lda,
             double* w,
             double* work,
             const int* lwork,
             int* iwork,
             const int* liwork,
             int* info,
             size_t,
             size_t);
void sgesdd_(const char* jobz,
             const int* m,
             const int* n,
             float* a,
             const int* lda,
             float* s,
             float* u,
             const int* ldu,
             float* vt,
             const int* ldvt,
             float* work,
             const int* lwork,
             int* iwork,
             int* info,
             size_t);
void dgesdd_(const char* jobz,
             const int* m,
             const int* n,
             double* a,
             const int* lda,
             double* s,
             double* u,
             const int* ldu,
             double* vt,
             const int* ldvt,
             double* work,
             const int* lwork,
             int* iwork,
             int* info,
             size_t);
}

namespace STRIDE_CPU_NAMESPACE {

namespace {

// One overload set per routine, so the kernels below are written once for
// float and double.
void getrf(int m, int n, float* a, int lda, int* ipiv, int* info) {
  sgetrf_(&m, &n, a, &lda, ipiv, info);
}
void getrf(int m, int n, double* a, int lda, int* ipiv, int* info) {
  dgetrf_(&m, &n, a, &lda, ipiv, info);
}
void potrf(int n, float* a, int lda, int* info) {
  spotrf_("L", &n, a, &lda, info, 1);
}
void potrf(int n, double* a, int lda, int* info) {
  dpotrf_("L", &n, a, &lda, info, 1);
}
void geqrf(int m, int n, float* a, int lda, float* tau, float* work, int lwork, int* info) {
  sgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info);
}
void geqrf(int m, int n, double* a, int lda, double* tau, double* work, int lwork, int* info) {
  dgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info);
}
void orgqr(
    int m, int n, int k, float* a, int lda, const float* tau, float* work, int lwork, int* info) {
  sorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}
void orgqr(int m,
           int n,
           int k,
           double* a,
           int lda,
           const double* tau,
           double* work,
           int lwork,
           int* info) {
  dorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}
void syevd(char jobz,
           char uplo,
           int n,
           float* a,
           int lda,
           float* w,
           float* work,
           int lwork,
           int* iwork,
           int liwork,
           int* info) {
  ssyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1);
}
void syevd(char jobz,
           char uplo,
           int n,
           double* a,
           int lda,
           double* w,
           double* work,
           int lwork,
           int* iwork,
           int liwork,
           int* info) {
  dsyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1);
}
void gesdd(char jobz,
           int m,
           int n,
           float* a,
           int lda,
           float* s,
           float* u,
           int ldu,
           float* vt,
           int ldvt,
           float* work,
           int lwork,
           int* iwork,
           int* info) {
  sgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);
}
void gesdd(char jobz,
           int m,
           int n,
           double* a,
           int lda,
           double* s,
           double* u,
           int ldu,
           double* vt,
           int ldvt,
           double* work,
           int lwork,
           int* iwork,
           int* info) {
  dgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);
}
void trsm(CBLAS_UPLO uplo,
          CBLAS_TRANSPOSE trans,
          CBLAS_DIAG diag,
          int n,
          int k,
          const float* a,
          float* b) {
  cblas_strsm(CblasColMajor, CblasLeft, uplo, trans, diag, n, k, 1.0f, a, std::max(1, n), b,
              std::max(1, n));
}
void trsm(CBLAS_UPLO uplo,
          CBLAS_TRANSPOSE trans,
          CBLAS_DIAG diag,
          int n,
          int k,
          const double* a,
          double* b) {
  cblas_dtrsm(CblasColMajor, CblasLeft, uplo, trans, diag, n, k, 1.0, a, std::max(1, n), b,
              std::max(1, n));
}

// The work size a routine asks for in its query call (lwork = -1).
template <class T>
int work_size(T query) {
  return std::max(1, int(query));
}

int rows_of(const Tensor& colmajor) {
  return int(colmajor.size(2));
}
int cols_of(const Tensor& colmajor) {
  return int(colmajor.size(1));
}

// Writes the identity into each m x m column-major matrix of t (B, m, m).
template <class T>
void fill_identity(Tensor& t) {
  T* p = t.data_ptr<T>();
  const int64_t m = t.size(2);
  std::fill(p, p + t.numel(), T(0));
  for (int64_t b = 0; b < t.size(0); ++b) {
    for (int64_t i = 0; i < m; ++i) p[b * m * m + i * m + i] = T(1);
  }
}

void lu_factor_kernel(Tensor& a, Tensor& pivots, Tensor& info) {
  const int m = rows_of(a), n = cols_of(a), k = std::min(m, n);
  int32_t* piv = pivots.data_ptr<int32_t>();
  int32_t* inf = info.data_ptr<int32_t>();
  detail::dispatch_floating(a.dtype(), "linalg.lu_factor", [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t b = 0; b < a.size(0); ++b) {
      inf[b] = 0;
      if (k == 0) continue;
      getrf(m, n, a.data_ptr<T>() + b * m * n, std::max(1, m), piv + b * k, &inf[b]);
    }
  });
}

void lu_permutation_kernel(const Tensor& pivots, Tensor& perm) {
  const int64_t k = pivots.size(1), m = perm.size(1);
  const int32_t* piv = pivots.data_ptr<int32_t>();
  int64_t* out = perm.data_ptr<int64_t>();
  for (int64_t b = 0; b < perm.size(0); ++b) {
    int64_t* p = out + b * m;
    for (int64_t i = 0; i < m; ++i) p[i] = i;
    for (int64_t i = 0; i < k; ++i) std::swap(p[i], p[piv[b * k + i] - 1]);
  }
}

void triangular_solve_kernel(const Tensor& a, Tensor& b, bool upper, bool transpose, bool unit) {
  const int n = rows_of(a), k = cols_of(b);
  if (n == 0 || k == 0) return;
  detail::dispatch_floating(a.dtype(), "linalg.solve_triangular", [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t i = 0; i < a.size(0); ++i) {
      trsm(upper ? CblasUpper : CblasLower, transpose ? CblasTrans : CblasNoTrans,
           unit ? CblasUnit : CblasNonUnit, n, k, a.data_ptr<T>() + i * n * n,
           b.data_ptr<T>() + i * n * k);
    }
  });
}

void cholesky_kernel(Tensor& a, Tensor& info) {
  const int n = rows_of(a);
  int32_t* inf = info.data_ptr<int32_t>();
  detail::dispatch_floating(a.dtype(), "linalg.cholesky", [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t b = 0; b < a.size(0); ++b) {
      inf[b] = 0;
      if (n == 0) continue;
      T* p = a.data_ptr<T>() + b * n * n;
      potrf(n, p, n, &inf[b]);
      for (int j = 1; j < n; ++j) std::fill(p + j * n, p + j * n + j, T(0));
    }
  });
}

// One m x n matrix's QR: geqrf in a copy, R read off its upper triangle,
// then orgqr on Q's first qcols columns.
template <class T>
void qr_one(const T* a, int m, int n, T* q, int qcols, T* r, int rrows) {
  const int k = std::min(m, n), lda = std::max(1, m);
  const int width = std::max(n, qcols);
  std::vector<T> buf(size_t(lda) * size_t(std::max(1, width)), T(0));
  std::copy(a, a + size_t(m) * size_t(n), buf.begin());
  std::vector<T> tau(size_t(std::max(1, k)));
  int info = 0;
  T query{};
  geqrf(m, n, buf.data(), lda, tau.data(), &query, -1, &info);
  std::vector<T> work(size_t(work_size(query)));
  geqrf(m, n, buf.data(), lda, tau.data(), work.data(), int(work.size()), &info);
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < rrows; ++i) r[j * rrows + i] = i <= j ? buf[size_t(j * lda + i)] : T(0);
  }
  if (q == nullptr || m == 0) return;
  orgqr(m, qcols, k, buf.data(), lda, tau.data(), &query, -1, &info);
  work.resize(size_t(work_size(query)));
  orgqr(m, qcols, k, buf.data(), lda, tau.data(), work.data(), int(work.size()), &info);
  std::copy(buf.begin(), buf.begin() + size_t(m) * size_t(qcols), q);
}

void qr_kernel(const Tensor& a, Tensor& q, Tensor& r) {
  const int m = rows_of(a), n = cols_of(a);
  const int qcols = q.numel() ? int(q.size(1)) : 0, rrows = int(r.size(2));
  detail::dispatch_floating(a.dtype(), "linalg.qr", [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t b = 0; b < a.size(0); ++b) {
      qr_one(a.data_ptr<T>() + b * m * n, m, n, qcols ? q.data_ptr<T>() + b * m * qcols : nullptr,
             qcols, r.data_ptr<T>() + b * n * rrows, rrows);
    }
  });
}

void eigh_kernel(Tensor& a, Tensor& w, bool upper, bool vectors, Tensor& info) {
  const int n = rows_of(a);
  int32_t* inf = info.data_ptr<int32_t>();
  detail::dispatch_floating(a.dtype(), "linalg.eigh", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const char jobz = vectors ? 'V' : 'N', uplo = upper ? 'U' : 'L';
    for (int64_t b = 0; b < a.size(0); ++b) {
      inf[b] = 0;
      if (n == 0) continue;
      T* p = a.data_ptr<T>() + b * n * n;
      T* wp = w.data_ptr<T>() + b * n;
      T query{};
      int iquery = 0;
      syevd(jobz, uplo, n, p, n, wp, &query, -1, &iquery, -1, &inf[b]);
      std::vector<T> work(size_t(work_size(query)));
      std::vector<int> iwork(size_t(std::max(1, iquery)));
      syevd(jobz, uplo, n, p, n, wp, work.data(), int(work.size()), iwork.data(), int(iwork.size()),
            &inf[b]);
    }
  });
}

// gesdd's job: no vectors, k of each ('S') or all ('A').
char svd_job(const Tensor& u, const Tensor& vh, int k) {
  if (!u.defined()) return 'N';
  return u.size(1) == k && vh.size(2) == k ? 'S' : 'A';
}

void svd_kernel(Tensor& a, Tensor& s, Tensor& u, Tensor& vh, Tensor& info) {
  const int m = rows_of(a), n = cols_of(a), k = std::min(m, n);
  const char job = svd_job(u, vh, k);
  int32_t* inf = info.data_ptr<int32_t>();
  detail::dispatch_floating(a.dtype(), "linalg.svd", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (k == 0) {
      // No singular values; the complete bases of an empty matrix are the
      // identities, as PyTorch's.
      if (job == 'A') {
        fill_identity<T>(u);
        fill_identity<T>(vh);
      }
      std::fill(inf, inf + a.size(0), 0);
      return;
    }
    const int ucols = job == 'N' ? 1 : int(u.size(1)), vrows = job == 'N' ? 1 : int(vh.size(2));
    std::vector<T> no_vectors(1);
    std::vector<int> iwork(size_t(8 * k));
    for (int64_t b = 0; b < a.size(0); ++b) {
      T* p = a.data_ptr<T>() + b * m * n;
      T* up = job == 'N' ? no_vectors.data() : u.data_ptr<T>() + b * m * ucols;
      T* vp = job == 'N' ? no_vectors.data() : vh.data_ptr<T>() + b * n * vrows;
      const int ldu = job == 'N' ? 1 : m, ldvt = vrows;
      T query{};
      gesdd(job, m, n, p, m, s.data_ptr<T>() + b * k, up, ldu, vp, ldvt, &query, -1, iwork.data(),
            &inf[b]);
      std::vector<T> work(size_t(work_size(query)));
      gesdd(job, m, n, p, m, s.data_ptr<T>() + b * k, up, ldu, vp, ldvt, work.data(),
            int(work.size()), iwork.data(), &inf[b]);
    }
  });
}

}  // namespace

STRIDE_REGISTER_CPU_KERNEL(kernels::lu_factor, lu_factor_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::lu_permutation, lu_permutation_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::triangular_solve, triangular_solve_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::cholesky, cholesky_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::qr, qr_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::eigh, eigh_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::svd, svd_kernel);

}  // namespace STRIDE_CPU_NAMESPACE
