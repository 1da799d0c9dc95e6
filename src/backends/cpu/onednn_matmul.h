// oneDNN's matmul primitive, planned once per shape and cached
// (onednn_matmul.cpp): what the float32 GEMM runs batches of small A @ B^T
// on (Note [GEMM backend choice] in blas.cpp) and the bf16 GEMM runs on
// (gemm_bf16.cpp). Internal to those files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "backends/cpu/blas.h"
#include "backends/cpu/capability.h"

namespace STRIDE_CPU_NAMESPACE {

// What a primitive is planned for: all of a batch's layout, none of its
// data.
struct MatmulKey {
  int64_t batch, m, n, k, lda, ldb, ldc, stride_a, stride_b, stride_c;
  bool trans_a, trans_b;
  float alpha, beta;
  bool bf16 = false;  // bfloat16 A and B (C stays float32)
  bool operator==(const MatmulKey&) const = default;
};

// The key of `batch.count` of g's GEMMs as a batch lays them out.
template <class In>
MatmulKey matmul_key(const GemmArgs<In, float>& g, const GemmBatch& batch) {
  return {.batch = batch.count,
          .m = g.m,
          .n = g.n,
          .k = g.k,
          .lda = g.lda,
          .ldb = g.ldb,
          .ldc = g.ldc,
          .stride_a = batch.stride_a,
          .stride_b = batch.stride_b,
          .stride_c = batch.stride_c,
          .trans_a = g.trans_a,
          .trans_b = g.trans_b,
          .alpha = g.alpha,
          .beta = g.beta,
          .bf16 = std::is_same_v<In, BFloat16>};
}

// A planned primitive (defined in onednn_matmul.cpp).
struct Matmul;

// The primitive for `key`, planned for one thread on the first call and
// cached; null when oneDNN offers only its gemm-based or reference
// implementation for that layout (no faster than a loop of GEMMs). Call it
// while oneDNN sees one OpenMP thread (SingleThreadedLibraries).
std::shared_ptr<const Matmul> get_matmul(const MatmulKey& key);

// Runs the primitive's batch on the calling thread: A, B and C are the
// first matrices of the batch.
void run_matmul(const Matmul& mm, const void* a, const void* b, float* c);

// Runs a batch of g's GEMMs as primitives of `chunk` matrices each (the last
// one shorter), the chunks spread over stride's threads; false, having run
// nothing, when oneDNN offers no primitive for them.
bool run_matmul_chunks(const GemmArgs<float>& g, const GemmBatch& batch, int64_t chunk);
bool run_matmul_chunks(const GemmArgs<BFloat16, float>& g, const GemmBatch& batch, int64_t chunk);

}  // namespace STRIDE_CPU_NAMESPACE
