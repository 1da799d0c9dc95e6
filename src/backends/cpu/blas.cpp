#include "backends/cpu/blas.h"

#include <cblas.h>
#include <dnnl.h>
#include <omp.h>

#include <algorithm>
#include <mutex>

#include "core/check.h"
#include "stride/parallel.h"

namespace stride::cpu {
namespace {

void check_args(const char* op,
                bool trans_a,
                bool trans_b,
                int64_t m,
                int64_t n,
                int64_t k,
                int64_t lda,
                int64_t ldb,
                int64_t ldc) {
  STRIDE_CHECK(m >= 0 && n >= 0 && k >= 0, ValueError, "[", op,
               "] expected non-negative sizes; got m=", m, ", n=", n, ", k=", k, ".");
  if (m == 0 || n == 0) return;
  STRIDE_CHECK(ldc >= n, ValueError, "[", op, "] expected ldc >= n; got ldc=", ldc, ", n=", n, ".");
  if (k == 0) return;
  const int64_t min_lda = trans_a ? m : k;
  const int64_t min_ldb = trans_b ? k : n;
  STRIDE_CHECK(lda >= min_lda, ValueError, "[", op, "] expected lda >= ", (trans_a ? "m" : "k"),
               " (", min_lda, ") for ", (trans_a ? "a transposed" : "a"), "; got lda=", lda, ".");
  STRIDE_CHECK(ldb >= min_ldb, ValueError, "[", op, "] expected ldb >= ", (trans_b ? "k" : "n"),
               " (", min_ldb, ") for ", (trans_b ? "b transposed" : "b"), "; got ldb=", ldb, ".");
}

// C = beta * C, with beta == 0 writing exact zeros (C may hold NaN).
template <class T>
void scale_c(int64_t m, int64_t n, T beta, T* c, int64_t ldc) {
  if (beta == T(1)) return;
  for (int64_t i = 0; i < m; ++i) {
    T* row = c + i * ldc;
    if (beta == T(0)) {
      std::fill(row, row + n, T(0));
    } else {
      for (int64_t j = 0; j < n; ++j) row[j] *= beta;
    }
  }
}

// oneDNN's GEMM threads with omp_get_max_threads(), a per-thread OpenMP
// setting; make the calling thread's match stride's count.
void sync_omp_threads() {
  if (!omp_in_parallel() && omp_get_max_threads() != get_num_threads()) {
    omp_set_num_threads(get_num_threads());
  }
}

// OpenBLAS runs single-threaded, always: its own pthread pool would compete
// with stride's OpenMP threads for the cores. Parallelism comes from
// parallel_for around it.
void init_openblas() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

void sgemm_onednn(bool trans_a,
                  bool trans_b,
                  int64_t m,
                  int64_t n,
                  int64_t k,
                  float alpha,
                  const float* a,
                  int64_t lda,
                  const float* b,
                  int64_t ldb,
                  float beta,
                  float* c,
                  int64_t ldc) {
  const dnnl_status_t status = dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha,
                                          a, lda, b, ldb, beta, c, ldc);
  STRIDE_ASSERT(status == dnnl_success, "dnnl_sgemm returned status ", int(status));
}

void dgemm_openblas(bool trans_a,
                    bool trans_b,
                    int64_t m,
                    int64_t n,
                    int64_t k,
                    double alpha,
                    const double* a,
                    int64_t lda,
                    const double* b,
                    int64_t ldb,
                    double beta,
                    double* c,
                    int64_t ldc) {
  cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, blasint(m), blasint(n), blasint(k), alpha, a,
              blasint(lda), b, blasint(ldb), beta, c, blasint(ldc));
}

// Below this many multiply-adds per thread, splitting a GEMM costs more than
// it saves.
constexpr int64_t kMinMacsPerThread = int64_t(1) << 15;

// Splits C into row blocks (or column blocks when m is too short) and runs
// single-threaded OpenBLAS on each block in parallel.
void dgemm_split(bool trans_a,
                 bool trans_b,
                 int64_t m,
                 int64_t n,
                 int64_t k,
                 double alpha,
                 const double* a,
                 int64_t lda,
                 const double* b,
                 int64_t ldb,
                 double beta,
                 double* c,
                 int64_t ldc) {
  init_openblas();
  const int64_t macs = m * n * k;
  if (m >= n) {
    const int64_t grain = std::max<int64_t>(1, kMinMacsPerThread / std::max<int64_t>(1, n * k));
    parallel_for(0, m, grain, [&](int64_t i0, int64_t i1) {
      const double* a0 = trans_a ? a + i0 : a + i0 * lda;
      dgemm_openblas(trans_a, trans_b, i1 - i0, n, k, alpha, a0, lda, b, ldb, beta, c + i0 * ldc,
                     ldc);
    });
  } else {
    const int64_t grain = std::max<int64_t>(1, kMinMacsPerThread / std::max<int64_t>(1, m * k));
    parallel_for(0, n, grain, [&](int64_t j0, int64_t j1) {
      const double* b0 = trans_b ? b + j0 * ldb : b + j0;
      dgemm_openblas(trans_a, trans_b, m, j1 - j0, k, alpha, a, lda, b0, ldb, beta, c + j0, ldc);
    });
  }
  (void)macs;
}

template <class T>
void gemm_impl(bool trans_a,
               bool trans_b,
               int64_t m,
               int64_t n,
               int64_t k,
               T alpha,
               const T* a,
               int64_t lda,
               const T* b,
               int64_t ldb,
               T beta,
               T* c,
               int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0 || alpha == T(0)) {
    scale_c(m, n, beta, c, ldc);
    return;
  }
  if constexpr (std::is_same_v<T, float>) {
    sync_omp_threads();
    sgemm_onednn(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else {
    dgemm_split(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
}

template <class T>
void gemm_batched_impl(int64_t batch,
                       bool trans_a,
                       bool trans_b,
                       int64_t m,
                       int64_t n,
                       int64_t k,
                       T alpha,
                       const T* a,
                       int64_t lda,
                       int64_t stride_a,
                       const T* b,
                       int64_t ldb,
                       int64_t stride_b,
                       T beta,
                       T* c,
                       int64_t ldc,
                       int64_t stride_c) {
  STRIDE_CHECK(batch >= 0, ValueError, "[gemm_batched] expected batch >= 0; got ", batch, ".");
  check_args("gemm_batched", trans_a, trans_b, m, n, k, lda, ldb, ldc);
  if (batch == 0 || m == 0 || n == 0) return;
  STRIDE_CHECK(batch == 1 || stride_c != 0, ValueError,
               "[gemm_batched] expected stride_c != 0 for batch > 1 (the outputs would alias); got "
               "batch=",
               batch, ".");
  const int64_t macs = m * n * k;
  const int64_t grain = std::max<int64_t>(1, kMinMacsPerThread / std::max<int64_t>(1, macs));
  parallel_for(0, batch, grain, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      gemm_impl(trans_a, trans_b, m, n, k, alpha, a + i * stride_a, lda, b + i * stride_b, ldb,
                beta, c + i * stride_c, ldc);
    }
  });
}

}  // namespace

void gemm(bool trans_a,
          bool trans_b,
          int64_t m,
          int64_t n,
          int64_t k,
          float alpha,
          const float* a,
          int64_t lda,
          const float* b,
          int64_t ldb,
          float beta,
          float* c,
          int64_t ldc) {
  check_args("gemm", trans_a, trans_b, m, n, k, lda, ldb, ldc);
  gemm_impl(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void gemm(bool trans_a,
          bool trans_b,
          int64_t m,
          int64_t n,
          int64_t k,
          double alpha,
          const double* a,
          int64_t lda,
          const double* b,
          int64_t ldb,
          double beta,
          double* c,
          int64_t ldc) {
  check_args("gemm", trans_a, trans_b, m, n, k, lda, ldb, ldc);
  gemm_impl(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void gemm_batched(int64_t batch,
                  bool trans_a,
                  bool trans_b,
                  int64_t m,
                  int64_t n,
                  int64_t k,
                  float alpha,
                  const float* a,
                  int64_t lda,
                  int64_t stride_a,
                  const float* b,
                  int64_t ldb,
                  int64_t stride_b,
                  float beta,
                  float* c,
                  int64_t ldc,
                  int64_t stride_c) {
  gemm_batched_impl(batch, trans_a, trans_b, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b,
                    beta, c, ldc, stride_c);
}

void gemm_batched(int64_t batch,
                  bool trans_a,
                  bool trans_b,
                  int64_t m,
                  int64_t n,
                  int64_t k,
                  double alpha,
                  const double* a,
                  int64_t lda,
                  int64_t stride_a,
                  const double* b,
                  int64_t ldb,
                  int64_t stride_b,
                  double beta,
                  double* c,
                  int64_t ldc,
                  int64_t stride_c) {
  gemm_batched_impl(batch, trans_a, trans_b, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b,
                    beta, c, ldc, stride_c);
}

const char* gemm_backend(ScalarType t) {
  switch (t) {
    case ScalarType::Float32:
      return "onednn";
    case ScalarType::Float64:
      return "openblas";
    default:
      return "none";
  }
}

}  // namespace stride::cpu
