// The mixed-precision GEMM of autocast: bfloat16 A and B, float32 C, on
// oneDNN's bf16 kernels (the cached matmul primitives of onednn_matmul.cpp)
// and, for decoding, the decode GEMV. Apart from the float32 GEMM's planning
// (blas.cpp) because it has its own library, its own rules for when it pays
// (prefers_bf16_gemm) and its own operand conversion (round_to_bf16); it
// tiles and chunks by blas.cpp's rules (blas_internal.h), so it is as
// deterministic.
#include <algorithm>
#include <cstdint>
#include <memory>

#include "backends/cpu/blas.h"
#include "backends/cpu/blas_internal.h"
#include "backends/cpu/capability.h"
#include "backends/cpu/gemv.h"
#include "backends/cpu/onednn_matmul.h"
#include "core/check.h"
#include "stride/parallel.h"

namespace STRIDE_CPU_NAMESPACE {
namespace {

using Bf16Gemm = GemmArgs<BFloat16, float>;

// One bf16 GEMM (or tile) on the calling thread, as a matmul primitive.
void gemm_bf16_serial(const Bf16Gemm& g) {
  if (g.m <= kDecodeRows && !g.trans_a) {
    gemm_decode(g);
    return;
  }
  // Batch strides of 0 for A and B mean a batch of one; C needs a real one.
  const std::shared_ptr<const Matmul> mm = get_matmul(matmul_key(g, {.stride_c = g.m * g.ldc}));
  STRIDE_ASSERT(mm != nullptr, "no bf16 matmul kernel for ", g.m, "x", g.n, "x", g.k,
                " (callers check has_bf16_gemm() first)");
  run_matmul(*mm, g.a, g.b, g.c);
}

// Each GEMM of the batch in tiles of C spread over the threads, as the
// float32 GEMM's (Note [Deterministic GEMM]).
void gemm_bf16_tiled(const Bf16Gemm& g, const GemmBatch& batch) {
  // Tiles 4x larger than float32's: the bf16 kernels get through a tile
  // faster, so per-call costs weigh more on small tiles (measured: see
  // bench/RESULTS.md, "Mixed precision").
  const Tiling t = tiling_for(g.m, g.n, g.k, int64_t(1) << 24);
  const int64_t tiles_m = (g.m + t.bm - 1) / t.bm, tiles_n = (g.n + t.bn - 1) / t.bn;
  for (int64_t i = 0; i < batch.count; ++i) {
    const Bf16Gemm one = matrix_of(g, batch, i);
    parallel_for(0, tiles_m * tiles_n, 1, [&](int64_t begin, int64_t end) {
      for (int64_t tile = begin; tile < end; ++tile) {
        gemm_bf16_serial(tile_of(one, t, tile / tiles_n * t.bm, tile % tiles_n * t.bn));
      }
    });
  }
}

}  // namespace

bool has_bf16_gemm() {
  static const bool available = [] {
    SingleThreadedLibraries single;
    const Bf16Gemm probe{.m = 64, .n = 64, .k = 64, .lda = 64, .ldb = 64, .ldc = 64};
    return get_matmul(matmul_key(probe, {.stride_c = 64 * 64})) != nullptr;
  }();
  return available;
}

bool prefers_bf16_gemm(int64_t batch, bool trans_a, int64_t m, int64_t n, int64_t k) {
  // Below ~2^19 multiply-adds oneDNN's per-call cost makes bf16 slower than
  // float32 (measured: bench/RESULTS.md, "Mixed precision").
  constexpr double kMinMacs = double(int64_t(1) << 19);
  // Decoding runs the decode GEMV on the bf16 operands whether or not the
  // CPU has bf16 instructions: it reads half the bytes of float32 weights,
  // and widening them in the kernel costs less than the float32 GEMM's
  // copy of each weight widened (measured: bench/RESULTS.md, "Mixed
  // precision").
  if (m <= kDecodeRows && !trans_a) return true;
  if (!has_bf16_gemm()) return false;
  return double(batch) * double(m) * double(n) * double(k) >= kMinMacs;
}

void round_to_bf16(const float* src, BFloat16* dst, int64_t n) {
  // BFloat16's own rounding, written once: it is branch-free, so this loop
  // vectorises and runs as fast as the same formula written out inline
  // (measured at 4K to 4M floats).
  for (int64_t i = 0; i < n; ++i) dst[i] = BFloat16(src[i]);
}

void gemm_batched_bf16(const Bf16Gemm& g, const GemmBatch& batch) {
  check_batch_args("gemm_batched_bf16", g, batch);
  STRIDE_CHECK(g.alpha == 1.0f && g.beta == 0.0f, ValueError,
               "[gemm_batched_bf16] expected alpha = 1 and beta = 0; got alpha=", g.alpha,
               ", beta=", g.beta, ".");
  if (batch.count == 0 || g.m == 0 || g.n == 0) return;
  if (g.k == 0) {
    for (int64_t i = 0; i < batch.count; ++i) {
      scale_c(g.m, g.n, 0.0f, g.c + i * batch.stride_c, g.ldc);
    }
    return;
  }
  SingleThreadedLibraries single;
  // Decoding rows take the decode GEMV, matrix by matrix, which needs no
  // bf16 instructions (prefers_bf16_gemm chooses it on any CPU).
  const bool decoding = g.m <= kDecodeRows && !g.trans_a;
  if (batch.count == 1 || decoding || macs_of(g.m, g.n, g.k) >= kLargeMacs) {
    gemm_bf16_tiled(g, batch);
  } else {
    // Small matrices: chunks of the batch, one primitive per chunk.
    const bool ran = run_matmul_chunks(g, batch, chunk_size(macs_of(g.m, g.n, g.k), batch.count));
    STRIDE_ASSERT(ran, "no bf16 batched matmul kernel for ", g.m, "x", g.n, "x", g.k);
  }
}

}  // namespace STRIDE_CPU_NAMESPACE
