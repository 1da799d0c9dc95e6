// The GEMM's planning and the libraries behind it: for each float32 or
// float64 GEMM, which library or kernel runs it (chosen per dtype and shape
// by measurement, Note [GEMM backend choice]) and in which tiles, chunks
// and operand copies (fixed by the shape alone, so that the bits do not
// depend on the thread count: Note [Deterministic GEMM]); and blas.h's
// entry points. The kernels it plans for live apart, each tuned on its own:
// the decode GEMV (gemv.cpp), the small-matrix kernel (small_gemm.cpp),
// oneDNN's cached matmul primitives (onednn_matmul.cpp); the bf16 GEMM,
// with its own library and rules, is gemm_bf16.cpp.
#include "backends/cpu/blas.h"

#include <cblas.h>
#include <dnnl.h>
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <type_traits>

#include "backends/cpu/blas_internal.h"
#include "backends/cpu/capability.h"
#include "backends/cpu/gemv.h"
#include "backends/cpu/onednn_matmul.h"
#include "backends/cpu/onednn_signals.h"
#include "backends/cpu/scratch_buffer.h"
#include "backends/cpu/small_gemm.h"
#include "backends/cpu/transpose.h"
#include "core/check.h"
#include "core/parallel_internal.h"
#include "stride/parallel.h"

// Note [Deterministic GEMM]
// docs/design.md invariant 9 asks for bit-identical results at every thread count.
// The libraries' own threading does not give it: from 8 threads on, oneDNN
// splits the k dimension of e.g. 128x128x4096 across threads and adds the
// parts, which changes the rounding (its sgemm and its matmul primitive
// alike). So every library call here runs on one thread, on a piece of the
// work fixed by the shape alone -- a tile of C, a chunk of a batch -- and
// stride's parallel_for spreads the pieces over its threads. Each element of
// C then comes from the same call whatever the thread count.

// Note [GEMM backend choice]
// Each library runs the GEMMs it is fastest at (measured: bench/RESULTS.md,
// GEMM backends; the mid-size comparison on packing kernels is in
// bench/HISTORY.md):
//  - float32, GEMMs of 2^20 multiply-adds (~100^3) and more: oneDNN's
//    dnnl_sgemm, which outruns OpenBLAS there.
//  - float32, smaller GEMMs: OpenBLAS, since dnnl_sgemm has a fixed cost per
//    call whatever the size, which small GEMMs do not amortise. But where
//    OpenBLAS's kernel packs even small matrices (its Haswell and Zen
//    families, openblas_packs_small_sgemm()), the smallest GEMMs run in
//    stride's own kernel (Note [Small GEMM]) and the rest in oneDNN, which
//    beats those packing kernels on mid-size shapes such as the large
//    Llama's attention blocks (64 x 64 x 64 to 64 x 256 x 64).
//  - float32 batches of small A @ B^T with k < 64 (attention scores): oneDNN's
//    batched matmul primitive, cached by shape; OpenBLAS is slow there.
//  - float64 (gradient checks): OpenBLAS, as oneDNN has no double GEMM.
// Threads (docs/design.md: one pool, no oversubscription): OpenBLAS's pthread pool
// is kept at one thread and oneDNN sees one OpenMP thread during a call; all
// parallelism is stride's parallel_for (Note [Deterministic GEMM]). Not
// OpenBLAS's serial build, though it has no threads: Debian builds it without
// USE_LOCKING, so calls from two threads at once share its buffers, which
// corrupts their results. The pthread build's server thread costs only a
// short spin after the library loads.

namespace STRIDE_CPU_NAMESPACE {

SingleThreadedLibraries::SingleThreadedLibraries() : saved_(omp_get_max_threads()) {
  if (saved_ != 1) omp_set_num_threads(1);
  // The setter must not race with OpenBLAS calls, so only outside regions.
  if (!detail::in_parallel_region() && openblas_get_num_threads() != 1) {
    openblas_set_num_threads(1);
  }
}

SingleThreadedLibraries::~SingleThreadedLibraries() {
  if (saved_ != 1) omp_set_num_threads(saved_);
}

namespace {

// OpenBLAS starts with one thread per core; stride never lets it use them.
[[maybe_unused]] const bool openblas_single_threaded = [] {
  openblas_set_num_threads(1);
  return true;
}();

void sgemm_onednn(const GemmArgs<float>& g) {
  const SignalsDeferred signals_deferred;  // Note [Signals and oneDNN's kernels]
  const dnnl_status_t status = dnnl_sgemm(g.trans_a ? 'T' : 'N', g.trans_b ? 'T' : 'N', g.m, g.n,
                                          g.k, g.alpha, g.a, g.lda, g.b, g.ldb, g.beta, g.c, g.ldc);
  STRIDE_ASSERT(status == dnnl_success, "dnnl_sgemm returned status ", int(status));
}

void gemm_openblas(const GemmArgs<float>& g) {
  cblas_sgemm(CblasRowMajor, g.trans_a ? CblasTrans : CblasNoTrans,
              g.trans_b ? CblasTrans : CblasNoTrans, blasint(g.m), blasint(g.n), blasint(g.k),
              g.alpha, g.a, blasint(g.lda), g.b, blasint(g.ldb), g.beta, g.c, blasint(g.ldc));
}

void gemm_openblas(const GemmArgs<double>& g) {
  cblas_dgemm(CblasRowMajor, g.trans_a ? CblasTrans : CblasNoTrans,
              g.trans_b ? CblasTrans : CblasNoTrans, blasint(g.m), blasint(g.n), blasint(g.k),
              g.alpha, g.a, blasint(g.lda), g.b, blasint(g.ldb), g.beta, g.c, blasint(g.ldc));
}

// Float GEMMs (or tiles) below this many multiply-adds go to OpenBLAS where
// its kernel has a small-matrix path (Note [GEMM backend choice]).
constexpr int64_t kSmallMacs = int64_t(1) << 20;

// One GEMM on the calling thread, by one library call (or none when k == 0
// or alpha == 0, cases where C = beta * C and A, B must not be read).
template <class T>
void gemm_serial(const GemmArgs<T>& g) {
  if (g.m == 0 || g.n == 0) return;
  if (g.k == 0 || g.alpha == T(0)) {
    scale_c(g.m, g.n, g.beta, g.c, g.ldc);
    return;
  }
  if constexpr (std::is_same_v<T, float>) {
    if (g.m <= kDecodeRows && !g.trans_a && g.beta == 0.0f) {
      gemm_decode(g);
      return;
    }
    if (prefers_small_sgemm(g.m, g.n, g.k)) {
      sgemm_small(g);
      return;
    }
    if (macs_of(g.m, g.n, g.k) >= kSmallMacs || openblas_packs_small_sgemm()) {
      sgemm_onednn(g);
      return;
    }
  }
  gemm_openblas(g);
}

// Per-thread buffers for copies of A and B (Notes [Transposed B], [Aliasing
// leading dimensions]). Tiles only read them, so the calling thread's
// buffers serve all of them.
float* copy_of_a_buffer(int64_t elements) {
  thread_local ScratchBuffer buffer;
  return static_cast<float*>(buffer.get(size_t(elements) * sizeof(float), "copy of A"));
}
float* copy_of_b_buffer(int64_t elements) {
  thread_local ScratchBuffer buffer;
  return static_cast<float*>(buffer.get(size_t(elements) * sizeof(float), "copy of B"));
}

// Note [Aliasing leading dimensions]
// oneDNN 2.6's AVX2 sgemm (CPUs without AVX-512) runs far below its speed
// when the leading dimension of B, or of A^T, is a multiple of 512 floats,
// 2 KiB: the rows it reads together then fall in few cache sets. Rows 1024
// floats long cost it most, rows 512 long less but still much; OpenBLAS's
// Zen kernel suffers far less. A not transposed loses little, less than
// copying it costs when it comes from memory (measured: see
// bench/HISTORY.md). The large Llama (d = 384, FFN 1024), the article's
// (1024-wide heads) and any d_model of 512 hit this in every layer. So
// there, a float GEMM whose B, or transposed A, has such a leading dimension
// copies it first into rows 16 floats longer (Note [Transposed B]'s copy of
// B^T too), k*n or m*k copies against m*n*k multiply-adds: only when the
// other side has at least kCopyMinRows.
constexpr int64_t kLdPadding = 16;
constexpr int64_t kCopyMinRows = 32;

bool onednn_is_avx2() {
  static const bool avx2 = [] {
    const auto isa = unsigned(dnnl_get_effective_cpu_isa());
    return (isa & unsigned(dnnl_cpu_isa_avx512_core)) != unsigned(dnnl_cpu_isa_avx512_core);
  }();
  return avx2;
}

bool aliases(int64_t ld) {
  return ld % kAliasingFloats == 0 && onednn_is_avx2();
}

// The leading dimension of a copy whose rows are `cols` floats long.
int64_t copy_ld(int64_t cols) {
  return aliases(cols) ? cols + kLdPadding : cols;
}

// Copies rows x cols floats, ld apart, into rows copy_ld(cols) apart.
const float* copy_rows(const float* src, int64_t ld, int64_t rows, int64_t cols, float* dst) {
  const int64_t dst_ld = copy_ld(cols);
  parallel_for(0, rows, std::max<int64_t>(1, (int64_t(1) << 14) / std::max<int64_t>(cols, 1)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t r = begin; r < end; ++r) {
                   std::memcpy(dst + r * dst_ld, src + r * ld, size_t(cols) * sizeof(float));
                 }
               });
  return dst;
}

// Note [Transposed B]
// Both libraries' sgemm slow down when B is transposed (a linear layer's
// (out, in) weight in x @ W^T) and k is long; at short k the two layouts run
// alike. The tiles of Note [Deterministic GEMM] are small enough for that to
// matter, e.g. for the article Llama's 1024 -> 128 projection. So a float
// GEMM with a transposed B, k >= 256 and at least 32 rows copies B^T once
// into a row-major (k, n) buffer (Note [Transposed copy]) that all its tiles
// share, and runs NN. The copy moves n*k floats against m*n*k multiply-adds,
// which does not pay with fewer rows (measured: see bench/RESULTS.md, GEMM
// backends, and bench/HISTORY.md).
constexpr int64_t kTransposeBMinK = 256;
constexpr int64_t kTransposeBMinRows = 32;

// Whether a float GEMM copies a transposed B first (Note [Transposed B]).
bool transposes_b(bool trans_b, int64_t m, int64_t n, int64_t k) {
  return trans_b && m >= kTransposeBMinRows && k >= kTransposeBMinK &&
         macs_of(m, n, k) >= kSmallMacs;
}

// Note [Split k]
// Tiles of C (Note [Deterministic GEMM]) are at most ~1/64 of the work, so
// when k is long against m x n -- weight gradients, where k counts tokens --
// they come out narrow and each library call packs long, thin panels (the
// large Llama's 384x384x4096 TN as 48 x 48 tiles, 4096 deep). Cutting k into
// chunks of kSplitDepth as well lets each chunk use tiles four times the
// area, which packs less per multiply-add (measured: see bench/HISTORY.md).
// So such a GEMM computes each chunk's product into a buffer of its own and
// then sums the chunks, in order, into C: the chunks and tiles are fixed by
// the shape, so the bits still do not depend on the thread count.
constexpr int64_t kSplitDepth = 1024;

// Whether a float GEMM splits k (Note [Split k]): the 64-tile rule, not the
// tile size cap, sets its tiles, and there are at least two chunks.
bool splits_k(int64_t m, int64_t n, int64_t k) {
  return k >= 2 * kSplitDepth && macs_of(m, n, k) / kMaxTiles > kMaxTileMacs;
}

void sgemm_split_k(const GemmArgs<float>& g) {
  // In locals: the sums' stores into C could otherwise alias g's fields.
  const int64_t m = g.m, n = g.n, k = g.k, ldc = g.ldc;
  const float alpha = g.alpha, beta = g.beta;
  float* const c = g.c;
  const int64_t chunks = (k + kSplitDepth - 1) / kSplitDepth;
  const Tiling t = tiling_for(m, n, kSplitDepth, macs_of(m, n, k) / kMaxTiles);
  const int64_t tiles_m = (m + t.bm - 1) / t.bm, tiles_n = (n + t.bn - 1) / t.bn;
  const int64_t tiles = tiles_m * tiles_n;
  thread_local ScratchBuffer buffer;
  float* const parts = static_cast<float*>(
      buffer.get(size_t(chunks * m * n) * sizeof(float), "GEMM's k-chunk products"));
  parallel_for(0, chunks * tiles, 1, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t chunk = task / tiles, tile = task % tiles;
      const int64_t p0 = chunk * kSplitDepth, depth = std::min(kSplitDepth, k - p0);
      const int64_t i0 = tile / tiles_n * t.bm, j0 = tile % tiles_n * t.bn;
      gemm_serial(GemmArgs<float>{
          .trans_a = g.trans_a,
          .trans_b = g.trans_b,
          .m = std::min(t.bm, m - i0),
          .n = std::min(t.bn, n - j0),
          .k = depth,
          .a = g.trans_a ? g.a + p0 * g.lda + i0 : g.a + i0 * g.lda + p0,
          .lda = g.lda,
          .b = g.trans_b ? g.b + j0 * g.ldb + p0 : g.b + p0 * g.ldb + j0,
          .ldb = g.ldb,
          .c = parts + chunk * m * n + i0 * n + j0,
          .ldc = n,
      });
    }
  });
  parallel_for(0, m, std::max<int64_t>(1, (int64_t(1) << 14) / (n * chunks)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t i = begin; i < end; ++i) {
                   float* ci = c + i * ldc;
                   for (int64_t j = 0; j < n; ++j) {
                     float sum = parts[i * n + j];
                     for (int64_t ch = 1; ch < chunks; ++ch) sum += parts[(ch * m + i) * n + j];
                     ci[j] = beta == 0.0f ? alpha * sum : alpha * sum + beta * ci[j];
                   }
                 }
               });
}

// One GEMM, its tiles spread over stride's threads.
template <class T>
void gemm_tiled(const GemmArgs<T>& g) {
  const bool trans_a = g.trans_a, trans_b = g.trans_b;
  const int64_t m = g.m, n = g.n, k = g.k;
  if (m == 0 || n == 0) return;
  if constexpr (std::is_same_v<T, float>) {
    if (g.alpha != 0.0f && k > 0 && macs_of(m, n, k) >= kSmallMacs) {
      if (transposes_b(trans_b, m, n, k)) {
        float* bt = copy_of_b_buffer(k * copy_ld(n));
        transpose_matrix(g.b, g.ldb, bt, copy_ld(n), n, k);
        GemmArgs<float> nn = g;
        nn.trans_b = false, nn.b = bt, nn.ldb = copy_ld(n);
        gemm_tiled(nn);
        return;
      }
      if (aliases(g.ldb) && m >= kCopyMinRows) {
        const int64_t rows = trans_b ? n : k, cols = trans_b ? k : n;
        GemmArgs<float> copied = g;
        copied.b = copy_rows(g.b, g.ldb, rows, cols, copy_of_b_buffer(rows * copy_ld(cols)));
        copied.ldb = copy_ld(cols);
        gemm_tiled(copied);
        return;
      }
      if (trans_a && aliases(g.lda) && n >= kCopyMinRows) {
        const int64_t rows = trans_a ? k : m, cols = trans_a ? m : k;
        GemmArgs<float> copied = g;
        copied.a = copy_rows(g.a, g.lda, rows, cols, copy_of_a_buffer(rows * copy_ld(cols)));
        copied.lda = copy_ld(cols);
        gemm_tiled(copied);
        return;
      }
      if (splits_k(m, n, k)) {
        sgemm_split_k(g);
        return;
      }
    }
  }
  const Tiling t = tiling_for(m, n, k);
  const int64_t tiles_m = (m + t.bm - 1) / t.bm, tiles_n = (n + t.bn - 1) / t.bn;
  if (tiles_m * tiles_n == 1) {
    gemm_serial(g);
    return;
  }
  parallel_for(0, tiles_m * tiles_n, 1, [&](int64_t begin, int64_t end) {
    for (int64_t tile = begin; tile < end; ++tile) {
      gemm_serial(tile_of(g, t, tile / tiles_n * t.bm, tile % tiles_n * t.bn));
    }
  });
}

// Whether a float batch goes to the matmul primitive (Note [GEMM backend
// choice]): small A @ B^T with a short inner dimension.
bool prefer_matmul_primitive(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k) {
  return !trans_a && trans_b && k < 64 && macs_of(m, n, k) < kSmallMacs;
}

template <class T>
void gemm_batched_impl(const GemmArgs<T>& g, const GemmBatch& batch) {
  check_batch_args("gemm_batched", g, batch);
  if (batch.count == 0 || g.m == 0 || g.n == 0) return;
  SingleThreadedLibraries single;
  const int64_t macs = macs_of(g.m, g.n, g.k);
  if (batch.count == 1 || macs >= kLargeMacs) {
    for (int64_t i = 0; i < batch.count; ++i) gemm_tiled(matrix_of(g, batch, i));
    return;
  }
  const int64_t chunk = chunk_size(macs, batch.count);
  if constexpr (std::is_same_v<T, float>) {
    if (g.k > 0 && g.alpha != 0.0f && batch.stride_a >= 0 && batch.stride_b >= 0 &&
        batch.stride_c > 0 && prefer_matmul_primitive(g.trans_a, g.trans_b, g.m, g.n, g.k) &&
        run_matmul_chunks(g, batch, chunk)) {
      return;
    }
  }
  const int64_t chunks = (batch.count + chunk - 1) / chunk;
  parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin * chunk; i < std::min(batch.count, end * chunk); ++i) {
      gemm_serial(matrix_of(g, batch, i));
    }
  });
}

}  // namespace

void gemm(const GemmArgs<float>& g) {
  check_args("gemm", g);
  // The small kernel's products (Note [Small GEMM]) are one tile and call
  // no library, so they skip the tiling and the libraries' thread settings:
  // at attention's 16 x 16 x 16 heads those cost a quarter of the product.
  if (prefers_small_sgemm(g.m, g.n, g.k)) {
    gemm_serial(g);
    return;
  }
  SingleThreadedLibraries single;
  gemm_tiled(g);
}

void gemm(const GemmArgs<double>& g) {
  check_args("gemm", g);
  SingleThreadedLibraries single;
  gemm_tiled(g);
}

void gemm_batched(const GemmArgs<float>& g, const GemmBatch& batch) {
  gemm_batched_impl(g, batch);
}

void gemm_batched(const GemmArgs<double>& g, const GemmBatch& batch) {
  gemm_batched_impl(g, batch);
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

}  // namespace STRIDE_CPU_NAMESPACE
