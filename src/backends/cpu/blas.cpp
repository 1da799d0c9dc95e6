#include "backends/cpu/blas.h"

#include <cblas.h>
#include <dnnl.h>
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <dnnl.hpp>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>

#include "core/check.h"
#include "stride/parallel.h"

// Note [GEMM backend choice]
// Chosen by measurement on a 2-core AVX-512 machine (bench/gemm_bench.cpp,
// medians). GFLOP/s at 1/2 threads:
//  - float32, one GEMM of at least ~64^3 multiply-adds: oneDNN's dnnl_sgemm,
//    threaded on OpenMP (stride's pool). 512x128x128: oneDNN 113/210,
//    OpenBLAS 96/64-134 (its 2-thread results are low and erratic).
//  - float32, smaller GEMMs: OpenBLAS on one thread. dnnl_sgemm has ~0.3 us
//    of fixed cost per call: 16^3 runs at 22 vs 84, 32^3 at 72 vs 105.
//  - float32 batches of small matrices (attention): the batch spread over
//    stride's threads, one single-threaded OpenBLAS call per matrix (256 x
//    16^3: 73/125, vs 22/32 for dnnl_sgemm per matrix) -- except A @ B^T with
//    a short inner dimension, where OpenBLAS 0.3.21 drops to 35/20 and
//    oneDNN's batched matmul primitive does 50/88. Batches of medium matrices
//    also use the primitive (32 x 128x128x64: 101/192, vs 97/178 for
//    dnnl_sgemm per matrix). Primitives are cached by shape.
//  - float64 (gradient checks): OpenBLAS, which oneDNN lacks, split over
//    stride's threads (512x128x128: 45/85, vs 44/35 with OpenBLAS's threads).
// Threads (DESIGN.md: one pool, no oversubscription): OpenBLAS's own pthread
// pool stays at one thread, always; stride splits work over the OpenMP pool
// with parallel_for. oneDNN uses omp_get_max_threads(), kept in step with
// get_num_threads(), and runs single-threaded inside a parallel region.

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
  // OpenBLAS takes 32-bit sizes.
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  STRIDE_CHECK(m <= kMax && n <= kMax && k <= kMax && lda <= kMax && ldb <= kMax && ldc <= kMax,
               ValueError, "[", op,
               "] sizes and leading dimensions above 2^31 - 1 are not supported; got m=", m,
               ", n=", n, ", k=", k, ", lda=", lda, ", ldb=", ldb, ", ldc=", ldc, ".");
  // Leading dimensions matter only for matrices that are touched.
  if (m == 0 || n == 0) return;
  STRIDE_CHECK(ldc >= n, ValueError, "[", op, "] expected ldc >= n; got ldc=", ldc, ", n=", n, ".");
  if (k == 0) return;
  const int64_t min_lda = trans_a ? m : k;
  const int64_t min_ldb = trans_b ? k : n;
  STRIDE_CHECK(lda >= min_lda, ValueError, "[", op, "] expected lda >= ", (trans_a ? "m" : "k"),
               " (a is ", (trans_a ? "transposed" : "not transposed"), "); got lda=", lda, ", ",
               (trans_a ? "m" : "k"), "=", min_lda, ".");
  STRIDE_CHECK(ldb >= min_ldb, ValueError, "[", op, "] expected ldb >= ", (trans_b ? "k" : "n"),
               " (b is ", (trans_b ? "transposed" : "not transposed"), "); got ldb=", ldb, ", ",
               (trans_b ? "k" : "n"), "=", min_ldb, ".");
}

// m * n * k, saturating: each size fits 31 bits, their product may not.
int64_t macs_of(int64_t m, int64_t n, int64_t k) {
  const double macs = double(m) * double(n) * double(k);
  return macs >= 9e18 ? std::numeric_limits<int64_t>::max() : int64_t(macs);
}

// C = beta * C, writing exact zeros when beta == 0 (C may hold NaN).
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

// oneDNN threads with omp_get_max_threads(), an OpenMP setting of the
// calling thread; make it match stride's count. Call outside parallel regions.
void sync_omp_threads() {
  if (!omp_in_parallel() && omp_get_max_threads() != get_num_threads()) {
    omp_set_num_threads(get_num_threads());
  }
}

// OpenBLAS's own pool would compete with stride's OpenMP threads for the
// cores, so it stays at one thread. Call outside parallel regions (the setter
// is not meant to race with OpenBLAS calls).
void ensure_openblas_serial() {
  if (openblas_get_num_threads() != 1) openblas_set_num_threads(1);
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

void gemm_openblas(bool trans_a,
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
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, blasint(m), blasint(n), blasint(k), alpha, a,
              blasint(lda), b, blasint(ldb), beta, c, blasint(ldc));
}

void gemm_openblas(bool trans_a,
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

// Below this many multiply-adds per thread, a GEMM is not worth splitting.
constexpr int64_t kMinMacsPerThread = int64_t(1) << 15;
// Float GEMMs below this many multiply-adds go to single-threaded OpenBLAS,
// when stride may use several threads / when it runs on one.
constexpr int64_t kSmallMacsThreaded = int64_t(1) << 17;
constexpr int64_t kSmallMacsSerial = int64_t(1) << 18;

// One double GEMM: C split into row blocks (column blocks when C is wide)
// over stride's threads, single-threaded OpenBLAS on each block.
void dgemm(bool trans_a,
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
  if (omp_in_parallel() || get_num_threads() == 1 || macs_of(m, n, k) < 2 * kMinMacsPerThread) {
    gemm_openblas(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else if (m >= n) {
    const int64_t grain = std::max<int64_t>(1, kMinMacsPerThread / (n * k));
    parallel_for(0, m, grain, [&](int64_t i0, int64_t i1) {
      const double* a0 = trans_a ? a + i0 : a + i0 * lda;
      gemm_openblas(trans_a, trans_b, i1 - i0, n, k, alpha, a0, lda, b, ldb, beta, c + i0 * ldc,
                    ldc);
    });
  } else {
    const int64_t grain = std::max<int64_t>(1, kMinMacsPerThread / (m * k));
    parallel_for(0, n, grain, [&](int64_t j0, int64_t j1) {
      const double* b0 = trans_b ? b + j0 * ldb : b + j0;
      gemm_openblas(trans_a, trans_b, m, j1 - j0, k, alpha, a, lda, b0, ldb, beta, c + j0, ldc);
    });
  }
}

// One GEMM with the sizes checked and OpenMP/OpenBLAS threads set up: handles
// the cases the libraries must not see (k == 0, alpha == 0), then dispatches.
template <class T>
void gemm_one(bool trans_a,
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
    const bool serial = omp_in_parallel() || get_num_threads() == 1;
    if (macs_of(m, n, k) < (serial ? kSmallMacsSerial : kSmallMacsThreaded)) {
      gemm_openblas(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    } else {
      sgemm_onednn(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    }
  } else {
    dgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
}

// ---- oneDNN matmul primitive for batches of float matrices ----

struct MatmulKey {
  int64_t batch, m, n, k, lda, ldb, ldc, stride_a, stride_b, stride_c;
  bool trans_a, trans_b;
  float alpha, beta;
  int threads;
  bool operator==(const MatmulKey&) const = default;
};

struct MatmulKeyHash {
  size_t operator()(const MatmulKey& key) const {
    size_t h = 0;
    auto mix = [&h](auto v) {
      h ^= std::hash<decltype(v)>()(v) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    };
    for (int64_t v : {key.batch, key.m, key.n, key.k, key.lda, key.ldb, key.ldc, key.stride_a,
                      key.stride_b, key.stride_c}) {
      mix(v);
    }
    mix(key.trans_a);
    mix(key.trans_b);
    mix(key.alpha);
    mix(key.beta);
    mix(key.threads);
    return h;
  }
};

// A matmul primitive for one key, or none when oneDNN offers only its
// gemm-based or reference implementation for that layout (no faster than a
// loop of GEMMs).
struct Matmul {
  dnnl::matmul primitive;
  dnnl::memory::desc a, b, c, scratchpad;
  bool usable = false;
};

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

std::shared_ptr<const Matmul> make_matmul(const MatmulKey& key) {
  using dims = dnnl::memory::dims;
  const auto f32 = dnnl::memory::data_type::f32;
  auto result = std::make_shared<Matmul>();
  // Stride 0 broadcasts: a batch dimension of 1.
  const int64_t batch_a = key.stride_a == 0 ? 1 : key.batch;
  const int64_t batch_b = key.stride_b == 0 ? 1 : key.batch;
  const int64_t sa = key.stride_a == 0 ? key.m * key.k : key.stride_a;
  const int64_t sb = key.stride_b == 0 ? key.k * key.n : key.stride_b;
  try {
    result->a = {dims{batch_a, key.m, key.k}, f32,
                 key.trans_a ? dims{sa, 1, key.lda} : dims{sa, key.lda, 1}};
    result->b = {dims{batch_b, key.k, key.n}, f32,
                 key.trans_b ? dims{sb, 1, key.ldb} : dims{sb, key.ldb, 1}};
    result->c = {dims{key.batch, key.m, key.n}, f32, dims{key.stride_c, key.ldc, 1}};
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    if (key.alpha != 1.0f) attr.set_output_scales(0, {key.alpha});
    if (key.beta != 0.0f) {
      dnnl::post_ops ops;
      ops.append_sum(key.beta);
      attr.set_post_ops(ops);
    }
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(result->a, result->b, result->c), attr,
                                          cpu_engine());
    const std::string impl = pd.impl_info_str();
    if (impl.rfind("brg", 0) != 0) return result;  // not a brgemm kernel
    result->scratchpad = pd.scratchpad_desc();
    result->primitive = dnnl::matmul(pd);
    result->usable = true;
  } catch (const dnnl::error&) {
    result->usable = false;
  }
  return result;
}

std::shared_ptr<const Matmul> get_matmul(const MatmulKey& key) {
  // Models use a handful of shapes; the cap only bounds pathological callers.
  constexpr size_t kMaxEntries = 256;
  static std::mutex mutex;
  static std::unordered_map<MatmulKey, std::shared_ptr<const Matmul>, MatmulKeyHash> cache;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  auto made = make_matmul(key);  // outside the lock: creation takes ~100 us
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() >= kMaxEntries) cache.clear();
  return cache.emplace(key, std::move(made)).first->second;
}

// Per-thread scratchpad for matmul primitives, 64-byte aligned.
void* scratchpad(size_t bytes) {
  struct Buffer {
    void* data = nullptr;
    size_t size = 0;
    ~Buffer() { std::free(data); }
  };
  thread_local Buffer buffer;
  if (bytes > buffer.size) {
    std::free(buffer.data);
    buffer.size = (bytes + 63) / 64 * 64;
    buffer.data = std::aligned_alloc(64, buffer.size);
    STRIDE_ASSERT(buffer.data != nullptr, "out of memory for a ", bytes, "-byte GEMM scratchpad");
  }
  return buffer.data;
}

// Runs the batch as one matmul primitive; false when no fast one exists.
bool sgemm_batched_matmul(const MatmulKey& key, const float* a, const float* b, float* c) {
  const std::shared_ptr<const Matmul> mm = get_matmul(key);
  if (!mm->usable) return false;
  dnnl::engine& engine = cpu_engine();
  thread_local dnnl::stream stream(engine);
  try {
    dnnl::memory am(mm->a, engine, const_cast<float*>(a));
    dnnl::memory bm(mm->b, engine, const_cast<float*>(b));
    dnnl::memory cm(mm->c, engine, c);
    dnnl::memory sm(mm->scratchpad, engine, scratchpad(mm->scratchpad.get_size()));
    mm->primitive.execute(stream, {{DNNL_ARG_SRC, am},
                                   {DNNL_ARG_WEIGHTS, bm},
                                   {DNNL_ARG_DST, cm},
                                   {DNNL_ARG_SCRATCHPAD, sm}});
    stream.wait();
  } catch (const dnnl::error& e) {
    STRIDE_ASSERT(false, "oneDNN matmul failed: ", e.what());
  }
  return true;
}

// Per-matrix multiply-adds from which the batch is run one matrix after the
// other, each GEMM threaded, instead of spreading the batch over threads.
constexpr int64_t kSequentialMinMacs = int64_t(1) << 22;

// Whether a float batch goes to the matmul primitive (Note [GEMM backend
// choice]): medium matrices, or A @ B^T with a short inner dimension.
bool prefer_matmul_primitive(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k) {
  return macs_of(m, n, k) >= kSmallMacsSerial || (!trans_a && trans_b && k < 64);
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
               "[gemm_batched] expected stride_c != 0 when batch > 1 (the outputs would alias); "
               "got batch=",
               batch, ".");
  const bool nested = omp_in_parallel();
  if (!nested) {
    sync_omp_threads();
    ensure_openblas_serial();
  }
  auto one = [&](int64_t i) {
    gemm_one(trans_a, trans_b, m, n, k, alpha, a + i * stride_a, lda, b + i * stride_b, ldb, beta,
             c + i * stride_c, ldc);
  };
  const int64_t macs = macs_of(m, n, k);
  if (batch == 1 || nested || macs >= kSequentialMinMacs) {
    for (int64_t i = 0; i < batch; ++i) one(i);
    return;
  }
  if constexpr (std::is_same_v<T, float>) {
    if (k > 0 && alpha != 0.0f && stride_a >= 0 && stride_b >= 0 && stride_c > 0 &&
        prefer_matmul_primitive(trans_a, trans_b, m, n, k)) {
      const MatmulKey key{batch,   m,       n,        k,        lda,
                          ldb,     ldc,     stride_a, stride_b, stride_c,
                          trans_a, trans_b, alpha,    beta,     get_num_threads()};
      if (sgemm_batched_matmul(key, a, b, c)) return;
    }
  }
  const int64_t grain = std::max<int64_t>(1, kMinMacsPerThread / std::max<int64_t>(1, macs));
  parallel_for(0, batch, grain, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) one(i);
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
  if (!omp_in_parallel()) {
    sync_omp_threads();
    ensure_openblas_serial();
  }
  gemm_one(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
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
  if (!omp_in_parallel()) ensure_openblas_serial();
  gemm_one(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
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
      return "onednn+openblas";  // OpenBLAS for small GEMMs, see the Note above
    case ScalarType::Float64:
      return "openblas";
    default:
      return "none";
  }
}

}  // namespace stride::cpu
