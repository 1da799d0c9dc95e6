// The CPU kernels of linear_concat and linear_groups (backends/kernels.h):
// a GEMM per weight (backends/cpu/blas.h), written into its columns of its
// group's output.
//
// Note [Linear over concatenated weights]
// The weights' products are independent GEMMs, so when there are enough of
// them they are spread over the threads one weight per task (each GEMM's own
// tiles then run on that thread), not split inside each GEMM: small GEMMs
// halved between threads one after another pay a hand-off each and run
// slower than the single GEMM over the concatenated weight (measured:
// bench/HISTORY.md). The weights' gradients are spread alike, and the
// input's gradient, a sum over the weights, by fixed blocks of rows.
// Decoding (at most kConcatDecodeRows float32 rows), each product is a pass
// over its weight bound by reading it (Note [Decoding GEMM]), so one
// parallel region splits the rows of all the weights evenly over the
// threads instead of a region per weight. Each output is its weight row's
// dot product with x whichever thread computes it, so the bits are those of
// separate linear() calls at any thread count. (OpenBLAS's float64 kernels
// may sum a row differently by where it falls in a split, so float64 keeps
// one GEMM per weight.)
//
// linear_groups is the same op with one output per group of weights. Its
// x's gradient is summed by blocks of rows too: each group's sum as
// linear_concat's, and the groups' sums added into the block last group
// first, as autograd adds the gradients of separate layers (the node recorded
// last runs first). The sums stay in cache and autograd's adds of whole
// gradients are saved, and where the rows are whole blocks (a multiple of
// kConcatRowBlock, as the models' 512 and 4096) the bits are those of
// separate layers: grouping them changes no result (tested against linear()
// up to depth 352, the FFN's at the article's size).
#include <algorithm>
#include <vector>

#include "backends/cpu/blas.h"
#include "backends/kernels.h"
#include "stride/factory.h"
#include "stride/parallel.h"

namespace stride::cpu {

namespace {

// C (m, n) = op(A) @ op(B) into a float32 or float64 buffer (cpu::gemm).
void gemm(const Tensor& like,
          bool ta,
          bool tb,
          int64_t m,
          int64_t n,
          int64_t k,
          const void* a,
          int64_t lda,
          const void* b,
          int64_t ldb,
          bool accumulate,
          void* c,
          int64_t ldc) {
  if (like.dtype() == kFloat32) {
    cpu::gemm(ta, tb, m, n, k, 1.0f, static_cast<const float*>(a), lda,
              static_cast<const float*>(b), ldb, accumulate ? 1.0f : 0.0f, static_cast<float*>(c),
              ldc);
  } else {
    cpu::gemm(ta, tb, m, n, k, 1.0, static_cast<const double*>(a), lda,
              static_cast<const double*>(b), ldb, accumulate ? 1.0 : 0.0, static_cast<double*>(c),
              ldc);
  }
}

// Weights per task of linear_concat's loops over its weights: one when
// there are at least two per thread, else all of them in one task, each GEMM
// then splitting its own tiles over the threads (three weights on two
// threads would leave one thread idle a third of the time). Either way each
// GEMM computes the same bits (Note [Deterministic GEMM]).
int64_t weights_per_task(size_t weights) {
  return int64_t(weights) >= 2 * int64_t(get_num_threads()) ? 1 : int64_t(weights);
}

// Rows of the input gradient per task of linear_concat's backward. Fixed by
// the shape alone, as the GEMM calls that sum into a row (Note
// [Deterministic GEMM]), so the sums do not depend on the thread count.
constexpr int64_t kConcatRowBlock = 64;

// Decoding rows (Note [Linear over concatenated weights]).
constexpr int64_t kConcatDecodeRows = 4;
constexpr int64_t kConcatDecodeGrain = 64;  // weight rows per task at least

// dst[0, n) += src[0, n) in x's dtype (float32 or float64).
void add_into(const Tensor& like, void* dst, const void* src, int64_t n) {
  auto add = [n](auto* d, const auto* a) {
    for (int64_t i = 0; i < n; ++i) d[i] += a[i];
  };
  if (like.dtype() == kFloat32) {
    add(static_cast<float*>(dst), static_cast<const float*>(src));
  } else {
    add(static_cast<double*>(dst), static_cast<const double*>(src));
  }
}

void linear_groups_forward_kernel(const Tensor& x2,
                                  const std::vector<Tensor>& weights,
                                  const kernels::LinearGroupsLayout& f,
                                  std::vector<Tensor>& ys) {
  const int64_t M = x2.size(0), K = x2.size(1);
  const size_t elem = x2.element_size(), n = weights.size();
  // Weight i's first output column in x's dtype, and its output's row length.
  auto out = [&](size_t i) {
    return static_cast<char*>(ys[f.group_of[i]].data_ptr()) + size_t(f.column[i]) * elem;
  };
  auto ldc = [&](size_t i) { return f.width[f.group_of[i]]; };
  if (M <= kConcatDecodeRows && x2.dtype() == kFloat32) {
    std::vector<int64_t> offsets{0};  // of each weight's rows among all weights'
    for (const Tensor& w : weights) offsets.push_back(offsets.back() + w.size(0));
    parallel_for(0, offsets.back(), kConcatDecodeGrain, [&](int64_t begin, int64_t end) {
      for (size_t i = 0; i < n; ++i) {
        const int64_t row0 = std::max(begin, offsets[i]), row1 = std::min(end, offsets[i + 1]);
        if (row0 >= row1) continue;
        const Tensor& w = weights[i];
        gemm(x2, false, true, M, row1 - row0, K, x2.data_ptr(), K,
             static_cast<const char*>(w.data_ptr()) +
                 size_t((row0 - offsets[i]) * w.stride(0)) * elem,
             w.stride(0), false, out(i) + size_t(row0 - offsets[i]) * elem, ldc(i));
      }
    });
  } else {
    parallel_for(0, int64_t(n), weights_per_task(n), [&](int64_t begin, int64_t end) {
      for (auto i = size_t(begin); i < size_t(end); ++i) {
        const Tensor& w = weights[i];
        gemm(x2, false, true, M, w.size(0), K, x2.data_ptr(), K, w.data_ptr(), w.stride(0), false,
             out(i), ldc(i));
      }
    });
  }
}

// dw_i = dy_i^T @ x, one weight per task, then dx = sum_i dy_i @ w_i by
// blocks of rows (Note [Linear over concatenated weights]).
void linear_groups_backward_kernel(const Tensor& xv,
                                   const std::vector<Tensor>& w,
                                   const std::vector<Tensor>& g2,
                                   const kernels::LinearGroupsLayout& plan,
                                   const std::vector<size_t>& with_grad,
                                   std::vector<Tensor>& grads) {
  const int64_t M = xv.size(0), K = xv.size(1);
  const size_t size = xv.element_size();
  // Weight i's columns of its output's gradient, and that gradient's row length.
  auto grad = [&](size_t i) {
    return static_cast<const char*>(g2[plan.group_of[i]].data_ptr()) +
           size_t(plan.column[i]) * size;
  };
  auto ld = [&](size_t i) { return plan.width[plan.group_of[i]]; };
  parallel_for(0, int64_t(w.size()), weights_per_task(w.size()), [&](int64_t begin, int64_t end) {
    for (auto i = size_t(begin); i < size_t(end); ++i) {
      if (!grads[i + 1].defined()) continue;
      gemm(xv, true, false, w[i].size(0), K, M, grad(i), ld(i), xv.data_ptr(), K, false,
           grads[i + 1].data_ptr(), K);
    }
  });
  if (!grads[0].defined()) return;
  char* gx = static_cast<char*>(grads[0].data_ptr());
  const int64_t blocks = (M + kConcatRowBlock - 1) / kConcatRowBlock;
  parallel_for(0, blocks, 1, [&](int64_t begin, int64_t end) {
    // Each later group's sum for a block, then added to it.
    const Tensor part = with_grad.size() > 1 ? empty({kConcatRowBlock, K}, xv.dtype()) : Tensor();
    for (int64_t b = begin; b < end; ++b) {
      const int64_t r0 = b * kConcatRowBlock, rows = std::min(kConcatRowBlock, M - r0);
      char* block = gx + size_t(r0 * K) * size;
      for (size_t j = 0; j < with_grad.size(); ++j) {
        void* sum = j == 0 ? block : part.data_ptr();
        for (size_t i = plan.first[with_grad[j]]; i < plan.first[with_grad[j] + 1]; ++i) {
          gemm(xv, false, false, rows, K, w[i].size(0), grad(i) + size_t(r0 * ld(i)) * size, ld(i),
               w[i].data_ptr(), w[i].stride(0), i > plan.first[with_grad[j]], sum, K);
        }
        if (j > 0) add_into(xv, block, sum, rows * K);
      }
    }
  });
}

}  // namespace

STRIDE_REGISTER_KERNEL(kernels::linear_groups_forward, CPU, linear_groups_forward_kernel);
STRIDE_REGISTER_KERNEL(kernels::linear_groups_backward, CPU, linear_groups_backward_kernel);

}  // namespace stride::cpu
