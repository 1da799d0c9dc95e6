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
// Decoding (at most kConcatDecodeRows float32 rows, or bfloat16 ones under
// autocast, which take the bf16 decode GEMV), each product is a pass
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
// up to depth 352, the FFN's at the article's size) where the GEMM library
// gives a product the same bits in tiles of any shape, as oneDNN's x86-64
// kernels do; its arm64 sgemm does not (docs/design.md, "arm64").
#include <algorithm>
#include <type_traits>
#include <vector>

#include "backends/cpu/blas.h"
#include "backends/cpu/capability.h"
#include "backends/kernels.h"
#include "core/check.h"
#include "stride/factory.h"
#include "stride/parallel.h"

namespace STRIDE_CPU_NAMESPACE {

namespace {

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

// Calls fn(T()) with T the C++ type of x's dtype, float32 or float64: the
// dtypes of cpu::gemm.
template <class Fn>
void with_gemm_type(const Tensor& x, Fn&& fn) {
  if (x.dtype() == kFloat32) {
    fn(float());
  } else {
    fn(double());
  }
}

// Calls product(i, first, rows) for rows [first, first + rows) of each
// weight i, over the threads: decoding, one region split evenly over all
// the weights' rows; else one task per weight (weights_per_task), whose GEMM
// then splits its own tiles.
template <class Product>
void for_weight_rows(const std::vector<Tensor>& weights, bool decoding, const Product& product) {
  const size_t n = weights.size();
  if (!decoding) {
    parallel_for(0, int64_t(n), weights_per_task(n), [&](int64_t begin, int64_t end) {
      for (auto i = size_t(begin); i < size_t(end); ++i) product(i, 0, weights[i].size(0));
    });
    return;
  }
  std::vector<int64_t> offsets{0};  // of each weight's rows among all weights'
  for (const Tensor& w : weights) offsets.push_back(offsets.back() + w.size(0));
  parallel_for(0, offsets.back(), kConcatDecodeGrain, [&](int64_t begin, int64_t end) {
    for (size_t i = 0; i < n; ++i) {
      const int64_t row0 = std::max(begin, offsets[i]), row1 = std::min(end, offsets[i + 1]);
      if (row0 < row1) product(i, row0 - offsets[i], row1 - row0);
    }
  });
}

// x (M, K) of In, weights of In, ys float32 or In: the GEMM of each
// weight's rows into its columns of its group's output. In is float32 or
// float64 (the GEMM of that dtype), or bfloat16 under autocast (the mixed
// GEMM, float32 outputs).
template <class In, class Out>
void linear_groups_forward(const Tensor& x2,
                           const std::vector<Tensor>& weights,
                           const kernels::LinearGroupsLayout& f,
                           std::vector<Tensor>& ys) {
  const int64_t M = x2.size(0), K = x2.size(1);
  const In* x = x2.data_ptr<In>();
  // OpenBLAS's float64 kernels may sum a row differently by where it falls
  // in a split (Note [Linear over concatenated weights]).
  const bool decoding = M <= kConcatDecodeRows && !std::is_same_v<In, double>;
  for_weight_rows(weights, decoding, [&](size_t i, int64_t first, int64_t rows) {
    const Tensor& w = weights[i];
    const GemmArgs<In, Out> g{.trans_b = true,
                              .m = M,
                              .n = rows,
                              .k = K,
                              .a = x,
                              .lda = K,
                              .b = w.data_ptr<In>() + first * w.stride(0),
                              .ldb = w.stride(0),
                              .c = ys[f.group_of[i]].data_ptr<Out>() + f.column[i] + first,
                              .ldc = f.width[f.group_of[i]]};
    if constexpr (std::is_same_v<In, BFloat16>) {
      gemm_batched_bf16(g, {});
    } else {
      gemm(g);
    }
  });
}

// dw_i = dy_i^T @ x, one weight per task, then dx = sum_i dy_i @ w_i by
// blocks of rows (Note [Linear over concatenated weights]).
template <class T>
void linear_groups_backward(const Tensor& xv,
                            const std::vector<Tensor>& w,
                            const std::vector<Tensor>& g2,
                            const kernels::LinearGroupsLayout& plan,
                            const std::vector<size_t>& with_grad,
                            std::vector<Tensor>& grads) {
  const int64_t M = xv.size(0), K = xv.size(1);
  // Weight i's columns of its output's gradient, and that gradient's row length.
  auto grad = [&](size_t i) { return g2[plan.group_of[i]].data_ptr<T>() + plan.column[i]; };
  auto ld = [&](size_t i) { return plan.width[plan.group_of[i]]; };
  parallel_for(0, int64_t(w.size()), weights_per_task(w.size()), [&](int64_t begin, int64_t end) {
    for (auto i = size_t(begin); i < size_t(end); ++i) {
      if (!grads[i + 1].defined()) continue;
      gemm({.trans_a = true,
            .m = w[i].size(0),
            .n = K,
            .k = M,
            .a = grad(i),
            .lda = ld(i),
            .b = xv.data_ptr<T>(),
            .ldb = K,
            .c = grads[i + 1].data_ptr<T>(),
            .ldc = K});
    }
  });
  if (!grads[0].defined()) return;
  T* gx = grads[0].data_ptr<T>();
  const int64_t blocks = (M + kConcatRowBlock - 1) / kConcatRowBlock;
  parallel_for(0, blocks, 1, [&](int64_t begin, int64_t end) {
    // Each later group's sum for a block, then added to it.
    const Tensor part = with_grad.size() > 1 ? empty({kConcatRowBlock, K}, xv.dtype()) : Tensor();
    for (int64_t b = begin; b < end; ++b) {
      const int64_t r0 = b * kConcatRowBlock, rows = std::min(kConcatRowBlock, M - r0);
      T* block = gx + r0 * K;
      for (size_t j = 0; j < with_grad.size(); ++j) {
        T* sum = j == 0 ? block : part.data_ptr<T>();
        for (size_t i = plan.first[with_grad[j]]; i < plan.first[with_grad[j] + 1]; ++i) {
          // The group's first weight starts its sum, the others add to it.
          gemm({.m = rows,
                .n = K,
                .k = w[i].size(0),
                .a = grad(i) + r0 * ld(i),
                .lda = ld(i),
                .b = w[i].data_ptr<T>(),
                .ldb = w[i].stride(0),
                .c = sum,
                .ldc = K,
                .beta = T(i > plan.first[with_grad[j]] ? 1 : 0)});
        }
        if (j > 0) {
          for (int64_t e = 0; e < rows * K; ++e) block[e] += sum[e];
        }
      }
    }
  });
}

void linear_groups_forward_kernel(const Tensor& x2,
                                  const std::vector<Tensor>& weights,
                                  const kernels::LinearGroupsLayout& f,
                                  std::vector<Tensor>& ys) {
  if (x2.dtype() == kBFloat16) {
    STRIDE_ASSERT(x2.size(0) <= kernels::kLinearGroupsBf16Rows &&
                      kernels::kLinearGroupsBf16Rows <= kConcatDecodeRows,
                  "linear_groups multiplies bfloat16 decoding rows only");
    linear_groups_forward<BFloat16, float>(x2, weights, f, ys);
    return;
  }
  with_gemm_type(x2, [&](auto zero) {
    using T = decltype(zero);
    linear_groups_forward<T, T>(x2, weights, f, ys);
  });
}

void linear_groups_backward_kernel(const Tensor& xv,
                                   const std::vector<Tensor>& w,
                                   const std::vector<Tensor>& g2,
                                   const kernels::LinearGroupsLayout& plan,
                                   const std::vector<size_t>& with_grad,
                                   std::vector<Tensor>& grads) {
  with_gemm_type(xv, [&](auto zero) {
    linear_groups_backward<decltype(zero)>(xv, w, g2, plan, with_grad, grads);
  });
}

}  // namespace

STRIDE_REGISTER_CPU_KERNEL(kernels::linear_groups_forward, linear_groups_forward_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::linear_groups_backward, linear_groups_backward_kernel);

}  // namespace STRIDE_CPU_NAMESPACE
