// The kernels ops call through their device's backend: one dispatch stub a
// kernel (Note [Dispatch stubs] in core/dispatch_stub.h). This header is the
// whole contract between the ops above and the backends below it: a stub's
// signature says what the op hands over, and each backend (src/backends/cpu,
// later cuda) registers a function of that signature.
//
// A kernel reads its inputs and writes its outputs, which the op has
// allocated on the kernel's device with the shapes, dtypes and layouts given
// beside each stub; it allocates no outputs, records no autograd and calls no
// op, so it does the same on every device.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "backends/attention_args.h"
#include "backends/rope_args.h"
#include "core/dispatch_stub.h"
#include "core/op_list.h"
#include "core/tensor_iter.h"
#include "stride/tensor.h"
#include "stride/weight_format.h"

namespace stride::kernels {

// ---- rms_norm (Note [RMSNorm backward] in src/backends/cpu/rms_norm.cpp) ----
// x (R, D) contiguous, weight (D) contiguous or undefined -> y (R, D),
// rstd (R): y = x * rstd * w, rstd = 1 / sqrt(mean(x^2) + eps) per row.
using RmsNormForwardFn =
    void (*)(const Tensor& x, const Tensor& weight, double eps, Tensor& y, Tensor& rstd);
// g, x (R, D) contiguous, weight (D) or undefined, rstd (R) from the forward
// -> grad_x (R, D) and grad_w (D), each written when defined.
using RmsNormBackwardFn = void (*)(const Tensor& g,
                                   const Tensor& x,
                                   const Tensor& weight,
                                   const Tensor& rstd,
                                   Tensor& grad_x,
                                   Tensor& grad_w);

// ---- swiglu (src/backends/cpu/swiglu.cpp) ----
// gate, up (N elements) contiguous, one dtype; beta one element or undefined
// (beta = 1) -> y (N): y = gate * sigmoid(beta * gate) * up.
using SwigluForwardFn = void (*)(const Tensor& gate,
                                 const Tensor& up,
                                 const Tensor& beta,
                                 Tensor& y);
// dy, gate, up (N) contiguous, beta as the forward's -> dgate, dup (N) and
// dbeta (one element), each written when defined; dbeta sums its blocks of
// elements in a fixed order, so its bits do not depend on the thread count.
using SwigluBackwardFn = void (*)(const Tensor& dy,
                                  const Tensor& gate,
                                  const Tensor& up,
                                  const Tensor& beta,
                                  Tensor& dgate,
                                  Tensor& dup,
                                  Tensor& dbeta);

// ---- cross_entropy (Note [Fused cross-entropy] in src/nn/cross_entropy.cpp) ----
// How a loss reduces its rows: nn's Reduction, which backends do not see.
enum class LossReduction { None, Mean, Sum };
// x (R, C) contiguous logits, targets (R) class indices on the host (rows
// whose target is ignore_index add nothing), count the rows not ignored ->
// lse (R), the log-sum-exp of each row, and out, the loss: (R) per row for
// None, else 0-d, the rows' sum in row order (/ count for Mean). Sets
// looks_like_probabilities when every row looks like a probability
// distribution (values in [0, 1] summing to 1), which the op warns about.
using CrossEntropyForwardFn = void (*)(const Tensor& x,
                                       const std::vector<int64_t>& targets,
                                       int64_t ignore_index,
                                       double smoothing,
                                       LossReduction reduction,
                                       int64_t count,
                                       Tensor& lse,
                                       Tensor& out,
                                       bool& looks_like_probabilities);
// g, the loss's gradient in float64, contiguous: (R) values for None, else
// one; x, lse and the rest as the forward's -> grad_x (R, C).
using CrossEntropyBackwardFn = void (*)(const Tensor& g,
                                        const Tensor& x,
                                        const Tensor& lse,
                                        const std::vector<int64_t>& targets,
                                        int64_t ignore_index,
                                        double smoothing,
                                        LossReduction reduction,
                                        int64_t count,
                                        Tensor& grad_x);

// ---- linear_concat, linear_groups (Note [Linear over concatenated weights] in
// src/backends/cpu/linear.cpp) ----
// Where each weight's product goes: weight i (in group order) gives columns
// [column[i], column[i] + rows of weight i) of output group_of[i], whose rows
// are width[group_of[i]] long; the weights of group g are [first[g],
// first[g + 1]).
struct LinearGroupsLayout {
  std::vector<size_t> group_of, first{0};
  std::vector<int64_t> column, width;  // width: each output's columns
};
// x (M, K) contiguous, float32 or float64, or bfloat16 under autocast with
// M <= kLinearGroupsBf16Rows (decoding); weights w_i (N_i, K) of x's dtype,
// each row contiguous, rows stride(0) >= K apart -> ys[g] (..., width[g])
// contiguous with M rows, of x's dtype (float32 for bfloat16 x), whose
// columns [column[i], column[i] + N_i) are x @ w_i^T for each weight i of
// group g.
inline constexpr int64_t kLinearGroupsBf16Rows = 4;
using LinearGroupsForwardFn = void (*)(const Tensor& x,
                                       const std::vector<Tensor>& weights,
                                       const LinearGroupsLayout& layout,
                                       std::vector<Tensor>& ys);
// x, weights and layout as the forward's; dys[g] (M, width[g]) contiguous,
// defined for the groups in with_grad (those with a gradient, last first: the
// order in which dx adds their sums) -> grads[0] = dx (M, K) and
// grads[i + 1] = dw_i (N_i, K), each written when defined.
using LinearGroupsBackwardFn = void (*)(const Tensor& x,
                                        const std::vector<Tensor>& weights,
                                        const std::vector<Tensor>& dys,
                                        const LinearGroupsLayout& layout,
                                        const std::vector<size_t>& with_grad,
                                        std::vector<Tensor>& grads);

// ---- packed weights (src/backends/cpu/packed_linear.cpp, Note [Weight
// formats]; the layouts of include/stride/weight_format.h) ----
// w (N, K) float32 contiguous, K a multiple of kWeightBlock for a blocked
// format -> out (N, stored_row_size(format, K)) of storage_dtype(format),
// contiguous.
using PackWeightFn = void (*)(const Tensor& w, WeightFormat format, Tensor& out);
// packed as pack_weight's out -> out (N, K) float32 contiguous.
using UnpackWeightFn = void (*)(const Tensor& packed, WeightFormat format, Tensor& out);
// x (M, K) float32 contiguous, packed (N, stored) contiguous -> y (M, N)
// float32 contiguous: x @ unpack(packed)^T.
using LinearPackedFn = void (*)(const Tensor& x,
                                const Tensor& packed,
                                WeightFormat format,
                                Tensor& y);

// ---- scaled_dot_product_attention, rotary_attention (Note [Fused attention]
// in src/backends/cpu/attention.cpp) ----
// With N = the product of the leading (batch) dims, all of one floating
// dtype: q (..., L, E), k (..., S, E), v (..., S, Ev) with a row layout
// (Note [Row layout] in backends/row_layout.h) -> out (..., L, Ev) with a row
// layout, lse (N, L) contiguous, and when defined (the forward keeps them
// for the backward) the probabilities probs (N, L, S) and, with dropout,
// keep (N, L, S) uint8, contiguous.
using AttentionForwardFn = void (*)(const AttentionShape& a,
                                    const Tensor& q,
                                    const Tensor& k,
                                    const Tensor& v,
                                    Tensor& out,
                                    Tensor& lse,
                                    Tensor& probs,
                                    Tensor& keep);
// q, k, v and the forward's lse, probs and keep (read when defined), dout
// (..., L, Ev) with a row layout -> dq, dk, dv of q's, k's, v's shapes, with
// a row layout.
using AttentionBackwardFn = void (*)(const AttentionShape& a,
                                     const Tensor& q,
                                     const Tensor& k,
                                     const Tensor& v,
                                     const Tensor& lse,
                                     const Tensor& probs,
                                     const Tensor& keep,
                                     const Tensor& dout,
                                     Tensor& dq,
                                     Tensor& dk,
                                     Tensor& dv);
// -> mask (..., L, S) contiguous, floating: the dropout multipliers M of
// Note [Fused attention] for a.dropout_p, a.key and a.base.
using AttentionDropoutMaskFn = void (*)(const AttentionShape& a, Tensor& mask);

// ---- rotary_embedding (src/backends/cpu/rope.cpp) ----
// x (..., T, D) float32 or float64 with a row layout, tables (T, D/2) ->
// y (..., T, D) of x's dtype with a row layout: each pair of features of row
// t rotated by +angle (sign = 1) or -angle (sign = -1, the backward) of
// table row t; pairs are interleaved (x[2i], x[2i + 1]), else split in
// halves (x[i], x[i + D/2]).
using RotaryEmbeddingFn =
    void (*)(const Tensor& x, const AngleTables& tables, double sign, bool interleaved, Tensor& y);

}  // namespace stride::kernels

// ---- fused optimizer steps (Note [Multi-tensor steps] in src/optim/fused.cpp) ----

namespace stride {
class TensorIter;
}  // namespace stride

namespace stride::kernels {

// The scalar hyperparameters of one Adam/AdamW update, derived once in double
// (as PyTorch's Python code does) and shared by the fused and op-by-op paths.
struct AdamStepScalars {
  double beta1, beta2, eps, weight_decay;
  double one_minus_beta1, one_minus_beta2;
  double decay;                  // AdamW: 1 - lr * weight_decay, else 1
  double bias_correction2_sqrt;  // sqrt(1 - beta2^step)
  double neg_step_size;          // -lr / (1 - beta1^step)
  bool l2;                       // Adam with weight_decay != 0
  bool decoupled, amsgrad, maximize;
};
// iter over outputs param, exp_avg, exp_avg_sq (and max_exp_avg_sq with
// amsgrad) and input grad, one dtype (float32 or float64), any layout ->
// elements [begin, end) of iter updated in place, rounded exactly as the
// op-by-op path in src/optim/adam.cpp rounds them.
using AdamStepFn = void (*)(const TensorIter& iter,
                            const AdamStepScalars& s,
                            int64_t begin,
                            int64_t end);

struct SGDStepScalars {
  double lr, momentum, dampening, weight_decay;
  bool nesterov, maximize;
};
// The momentum buffer in one SGD update: none (momentum 0), first (only
// written: the gradient after weight decay, as PyTorch clones it), or
// updated.
enum class SGDMomentum { None, First, Update };
// iter over outputs param (and momentum_buffer unless SGDMomentum::None) and
// input grad -> as adam_step, for src/optim/sgd.cpp's op-by-op path.
using SGDStepFn = void (*)(const TensorIter& iter,
                           const SGDStepScalars& s,
                           SGDMomentum momentum,
                           int64_t begin,
                           int64_t end);

// ---- softmax, log_softmax (src/backends/cpu/softmax.cpp) ----
// x (R, D) contiguous, floating -> out (R, D) contiguous: each row's softmax
// (log_softmax when `log`), max-shifted.
using SoftmaxRowsFn = void (*)(const Tensor& x, Tensor& out, bool log);

// ---- autocast (src/backends/cpu/autocast.cpp) ----
// src float32 -> out of its shape and dense layout (the same strides, no
// gaps), each value rounded to bfloat16 (nearest even): out bfloat16, or
// float32 holding the rounded values.
using RoundToBfloat16Fn = void (*)(const Tensor& src, Tensor& out);
// Whether the device's mixed GEMM (BatchedGemmFn's `mixed`) multiplies
// bfloat16 operands when the first factor has `rows` rows; when not, it
// multiplies their roundings on the float32 GEMM, and autocast hands it
// float32 roundings instead (Note [Autocast on the float32 GEMM] in
// src/ops/apply.h).
using AutocastMultipliesBf16Fn = bool (*)(int64_t rows);

// ---- random fills (src/backends/cpu/random_fill.h, Note [Counter-based
// fills]) ----
// Outputs per Philox counter (128 random bits) of each fill: what an op
// reserves from a Generator for a fill of n elements, ceil(n / k) counters.
inline constexpr int64_t kUniformFloatPerCounter = 4;   // 24 bits per value
inline constexpr int64_t kUniformDoublePerCounter = 2;  // 53 bits per value
inline constexpr int64_t kNormalFloatPerCounter = 4;    // Box-Muller: 2 pairs of 32-bit uniforms
inline constexpr int64_t kNormalDoublePerCounter = 2;   // Box-Muller: 1 pair of 53-bit uniforms
inline constexpr int64_t kRandintPerCounter = 2;        // 64 bits per value
// out float32 or float64, contiguous: U[from, to) draws in element order.
using UniformFillFn = void (*)(Tensor& out, double from, double to, Generator& gen);
// out float32 or float64, contiguous: N(mean, std^2) draws in element order.
using NormalFillFn = void (*)(Tensor& out, double mean, double std, Generator& gen);
// out int64 contiguous: integers uniform on [low, high) in element order.
using RandintFillFn = void (*)(Tensor& out, int64_t low, int64_t high, Generator& gen);

// ---- fill_ (src/backends/cpu/fill.cpp) ----
// iter: one output of any dtype and layout (TensorIter) -> every element set
// to `value` converted to the output's dtype.
using FillFn = void (*)(const TensorIter& iter, const Scalar& value);

// ---- matmul, mm, bmm (src/backends/cpu/matmul.cpp) ----
// How a (rows, cols) matrix with strides (s0, s1) is handed to a row-major
// GEMM: transposed or not, with its leading dimension.
struct GemmOperand {
  bool trans = false;
  int64_t ld = 1;
};
// a (B or 1, n, k) and b (B or 1, k, m), each matrix read through its
// GemmOperand, the batch sa and sb elements apart (0: one matrix broadcast)
// -> c (B, n, m) contiguous, a @ b per batch. Not mixed: a, b and c of one
// dtype (op names the op in a dtype error). mixed (autocast): a and b
// float32 or bfloat16, rounded to bfloat16, c float32.
using BatchedGemmFn = void (*)(const Tensor& a,
                               GemmOperand la,
                               int64_t sa,
                               const Tensor& b,
                               GemmOperand lb,
                               int64_t sb,
                               bool mixed,
                               const char* op,
                               Tensor& c);

// ---- sum, amax, amin, max, min, argmax, argmin (Note [Deterministic
// reductions] in src/backends/cpu/reduce.cpp) ----
// iter a reduction TensorIter (is_reduction) over output out (keepdim
// form) and input x, any layouts; x of in_dtype, out of out_dtype (int64 for
// integral and bool x, else x's) -> out = the sum of each output's block,
// bit-identical on any thread count.
using ReduceSumFn = void (*)(const TensorIter& iter, ScalarType in_dtype, ScalarType out_dtype);
// As ReduceSumFn, the product of each block (in double for floating x,
// int64 for integers and bool), for prod.
using ReduceProdFn = void (*)(const TensorIter& iter, ScalarType in_dtype, ScalarType out_dtype);
// iter over output out and input x of one dtype, no block empty -> out = the
// max (is_max) or min of each block; NaN wins. op names the op in a dtype
// error.
using ReduceExtremeFn = void (*)(const TensorIter& iter,
                                 ScalarType dtype,
                                 bool is_max,
                                 const char* op);
// iter over outputs values (x's dtype) and indices (int64) and input x, no
// block empty -> as reduce_extreme, with the index in its block of the first
// extreme element (the first NaN).
using ReduceExtremeIndexFn = void (*)(const TensorIter& iter,
                                      ScalarType dtype,
                                      bool is_max,
                                      const char* op);

// ---- sort, topk, multinomial (src/backends/cpu/sort.cpp) ----
// How sort_rows orders a row: PyTorch's CPU sort and topk place equal
// elements where their algorithms leave them, so each is run as PyTorch
// runs it on the row's (value, position) pairs.
enum class RowOrder : uint8_t {
  Stable,        // equal elements in index order: sort(stable=True)
  Sort,          // std::sort, not stable: sort(stable=False)
  Topk,          // topk's partial_sort (k * 64 <= N) or nth_element and sort
  TopkUnsorted,  // the same without the sort after nth_element (sorted=False)
};
// x (R, N) contiguous, numeric or bool -> values (R, K) of x's dtype and
// indices (R, K) int64, contiguous, K <= N: each row's first K elements in
// ascending (or descending) order, NaN above every number, equal elements in
// the order `order` leaves them. K = N sorts the rows (K < N: a Topk order).
using SortRowsFn =
    void (*)(const Tensor& x, RowOrder order, bool descending, Tensor& values, Tensor& indices);
// x (R, N) contiguous, numeric or bool, N > 0 -> indices (R) int64: the
// position in its row of the mode, PyTorch's CPU choice: the row's (value,
// position) pairs ordered by value with std::sort, and of the first longest
// run of equal values (the smallest most frequent value), its last element.
using ModeRowsFn = void (*)(const Tensor& x, Tensor& indices);
// x (R, N) contiguous, numeric or bool, 0 <= k < N -> indices (R) int64: the
// position in its row of the (k+1)-th smallest element (NaN above every
// number), PyTorch's CPU choice among ties: its quickselect (median of
// three pivots), run on the row's (value, position) pairs.
using KthRowsFn = void (*)(const Tensor& x, int64_t k, Tensor& indices);
// probs (R, N) contiguous float32 or float64, checked by the op (finite, not
// negative, each row a positive sum, enough positive categories without
// replacement); uniforms (R, S) with replacement, else (R, N), float64 in
// [0, 1) -> samples (R, S) int64: category indices drawn from each row.
using MultinomialFn = void (*)(const Tensor& probs,
                               const Tensor& uniforms,
                               bool replacement,
                               Tensor& samples);

// ---- cumsum, cumprod, logcumsumexp, cummax, cummin (src/backends/cpu/scan.cpp) ----
enum class ScanKind : uint8_t { Sum, Prod, LogSumExp };
// x (O, N, I) contiguous, numeric (floating for LogSumExp) -> out (O, N, I)
// contiguous of x's dtype: the running sums (products, log-sum-exps) along
// N, accumulated in double for floating x and int64 for integers.
using ScanFn = void (*)(const Tensor& x, ScanKind kind, Tensor& out);
// x (O, N, I) contiguous, numeric or bool -> values (O, N, I) of x's dtype
// and indices (O, N, I) int64, contiguous: the running max (is_max) or min
// along N and the last index that reached it; NaN wins.
using ScanExtremeFn = void (*)(const Tensor& x, bool is_max, Tensor& values, Tensor& indices);

// ---- searchsorted, bincount, histc, unique (src/backends/cpu/search.cpp) ----
// sorted (S, N) and values (R, M) contiguous, of one numeric dtype, S 1 or
// R -> out (R, M) contiguous, int64 or int32: for each value, the number of
// elements of its row of sorted (row 0 when S is 1) below it (right: not
// above it), NaN above every number; rows run in parallel.
using SearchSortedFn = void (*)(const Tensor& sorted,
                                const Tensor& values,
                                bool right,
                                Tensor& out);
// x (N) contiguous int64, no element negative; weights undefined or (N)
// contiguous float64; out (B) contiguous zeros, int64 without weights, else
// float64, B above every element -> out[v] counts (sums the weights of) the
// elements equal to v.
using BincountFn = void (*)(const Tensor& x, const Tensor& weights, Tensor& out);
// x (N) contiguous, floating; out (bins) contiguous zeros of x's dtype; lo <
// hi -> out[b] = the number of elements in the b-th of bins equal bins of
// [lo, hi] (hi in the last), the others left out.
using HistcFn = void (*)(const Tensor& x, double lo, double hi, Tensor& out);
// x (N, K) contiguous, numeric or bool: N slices of K elements -> group (N)
// int64: the index of the run of equal neighbouring slices each slice is in;
// returns the number of runs.
using ConsecutiveGroupsFn = int64_t (*)(const Tensor& x, Tensor& group);

// ---- the discrete Fourier transform (src/backends/cpu/fft.cpp) ----
// x (O, N, I) contiguous, complex64 or complex128 -> out (O, N, I)
// contiguous of x's dtype: the unscaled transform of every line along N,
// sum_k x[k] e^(-2 pi i jk / N) (+ for `inverse`).
using FftC2cFn = void (*)(const Tensor& x, bool inverse, Tensor& out);

// ---- unfold, fold: im2col and col2im (src/backends/cpu/im2col.cpp) ----
// The sliding blocks of volumes (depth, height, width), dim 0 the depth: a
// plane is a volume of depth 1 and a line one of height 1 too, so the 1-, 2-
// and 3-d convolutions share one kernel. Block (o, p, q) starts at
// (o * stride[0] - pad[0], p * stride[1] - pad[1], q * stride[2] - pad[2])
// and reads kernel[0] x kernel[1] x kernel[2] elements spaced by the
// dilation; out[0] x out[1] x out[2] blocks in all.
struct Im2colGeometry {
  std::array<int64_t, 3> size, kernel, pad, stride, dilation, out;
};
// x (P, depth, height, width) contiguous, numeric or bool (P volumes: batch
// times channels) -> cols (P, kernel elements, blocks) contiguous:
// cols[p, (a, i, j), (o, r, c)] = x[p, o * stride[0] - pad[0] + a *
// dilation[0], r * stride[1] - ..., c * stride[2] - ...], 0 outside.
using Im2colFn = void (*)(const Tensor& x, const Im2colGeometry& g, Tensor& cols);
// The adjoint: cols as above, numeric -> x (P, depth, height, width)
// contiguous, overwritten with the sum of the elements of cols that read
// each position.
using Col2imFn = void (*)(const Tensor& cols, const Im2colGeometry& g, Tensor& x);

// ---- copy_ (src/backends/cpu/copy.cpp) ----
// iter over output dst and input src, any dtypes and layouts, of one shape
// -> dst = src converted to dst's dtype (to bool: != 0).
using CopyFn = void (*)(const TensorIter& iter);

// ---- index_select, gather, embedding, the scatters (src/backends/cpu/indexing.cpp) ----
// iter over output out and inputs src and index (int64 or int32, index_dtype)
// of out's shape, src with stride 0 along dim -> out[...] = src[... with dim
// at index[...]], src's elements dim_bytes apart along dim; an index outside
// [0, src_dim_size) is an IndexError naming op.
using GatherFn = void (*)(const TensorIter& iter,
                          ScalarType index_dtype,
                          int64_t dim,
                          int64_t src_dim_size,
                          int64_t dim_bytes,
                          const char* op);
// How scatter combines an element with an incoming value: None replaces
// it, the others reduce (scatter_reduce's mean is a Sum divided afterwards).
enum class ScatterReduce : uint8_t { None, Sum, Prod, Max, Min };
// iter over output dst (self with stride 0 along dim), inputs src and index
// (int64 or int32, index_dtype) of index's shape, elements of dtype (any);
// no overlap check -> self[... index[...] along dim ...] = reduce(it,
// src[...]), serially in iteration order, as entries may hit one element;
// an index outside [0, size_d) is an IndexError naming op.
using ScatterFn = void (*)(const TensorIter& iter,
                           ScalarType dtype,
                           ScalarType index_dtype,
                           ScatterReduce reduce,
                           int64_t dim,
                           int64_t size_d,
                           int64_t dim_bytes,
                           const char* op);

// ---- index, index_put (advanced indexing; src/backends/cpu/indexing.cpp) ----
// iter over output offsets (int64) and inputs offsets (the same tensor) and
// index (int64 or int32, index_dtype), of one shape -> offsets +=
// index * dim_bytes, a negative index counting from the end; an index
// outside [-size, size) is an IndexError naming it, dim and size.
using IndexOffsetsFn = void (*)(
    const TensorIter& iter, ScalarType index_dtype, int64_t dim, int64_t size, int64_t dim_bytes);
// iter over output out and inputs src (restrided: stride 0 along the indexed
// dims) and byte offsets (int64), of out's shape -> out[...] =
// *(src[...] + offsets[...]).
using IndexGatherFn = void (*)(const TensorIter& iter);
// iter over output dst (self restrided: stride 0 along the indexed dims),
// inputs values (dtype) and byte offsets (int64), no overlap check ->
// *(dst[...] + offsets[...]) = values[...], or += when accumulate, serially
// in iteration order (entries may hit one element).
using IndexPutFn = void (*)(const TensorIter& iter, ScalarType dtype, bool accumulate);

// ---- elementwise ops (src/core/op_list.h, src/backends/elementwise_math.h) ----
// iter: the op's TensorIter (operand 0 the output, any layouts), its inputs
// already of dtype `compute` -> the output, of the dtype iter was built with
// (`compute`, or bool for comparisons). 16-bit floats compute in float: the
// kernel's loop widens each element as it reads it and rounds each result
// as it writes it. A kernel without a loop for `compute` is a DTypeError
// naming the op.
using ElementwiseFn = void (*)(const TensorIter& iter, ScalarType compute);
// ...with the op's scalar: add's and sub's alpha, lerp_'s weight,
// addcmul_'s and addcdiv_'s value, converted to `compute`.
using ElementwiseScalarFn = void (*)(const TensorIter& iter,
                                     ScalarType compute,
                                     const Scalar& scalar);
// clamp: at least one of lo and hi; NaN stays NaN.
using ClampFn = void (*)(const TensorIter& iter,
                         ScalarType compute,
                         const std::optional<Scalar>& lo,
                         const std::optional<Scalar>& hi);
// where: iter over out and inputs cond (bool), a and b (compute) -> cond ? a : b.
// fmod, remainder, div_floor, div_trunc (ElementwiseFn): an integer
// division by zero is an Error naming the op ("ZeroDivisionError").
// frexp: iter over outputs mantissa (x's dtype) and exponent (int32) and
// input x (floating) -> x = mantissa * 2^exponent, |mantissa| in [0.5, 1).
using FrexpFn = void (*)(const TensorIter& iter);

// ---- linear algebra through LAPACK (src/backends/cpu/lapack.cpp) ----
// Every matrix here is a batch (B, ...) contiguous float32 or float64 in
// LAPACK's column-major order: the op passes a batch of m x n matrices as the
// contiguous (B, n, m) buffer of their transposes and reads its results the
// same way. A kernel reports a failing matrix in info (B) int32 (LAPACK's
// info: 0 on success) instead of raising; the op decides.
//
// a (B, n, m): m x n matrices -> overwritten by L and U (L's unit diagonal
// implicit), pivots (B, min(m, n)) int32 1-based row swaps (getrf); info > 0
// where U has an exact zero on its diagonal.
using LuFactorFn = void (*)(Tensor& a, Tensor& pivots, Tensor& info);
// pivots (B, k) int32 of lu_factor -> perm (B, m) int64: row i of L U is row
// perm[i] of the factored matrix.
using LuPermutationFn = void (*)(const Tensor& pivots, Tensor& perm);
// a (B, n, n) triangular (upper or lower, its diagonal taken as ones when
// unit), b (B, k, n): k right-hand sides -> b overwritten by op(a)^-1 b,
// op(a) = a or its transpose. A zero on the diagonal gives inf or NaN, as
// PyTorch's triangular solve (no check).
using TriangularSolveFn =
    void (*)(const Tensor& a, Tensor& b, bool upper, bool transpose, bool unit);
// a (B, n, n) symmetric (its lower triangle read) -> overwritten by the
// lower Cholesky factor L (upper triangle zeroed); info > 0 where a is not
// positive-definite.
using CholeskyFn = void (*)(Tensor& a, Tensor& info);
// a (B, n, m): m x n matrices -> q (B, qcols, m): the first qcols (<= m)
// columns of Q, r (B, n, rrows) with rrows = qcols or min(m, n): R's rows,
// zero below the diagonal (geqrf, orgqr). q may be empty when not wanted.
using QrFn = void (*)(const Tensor& a, Tensor& q, Tensor& r);
// a (B, n, n) symmetric (its lower triangle read, or the upper one when
// upper) -> w (B, n) eigenvalues ascending; when vectors, a overwritten by
// the orthonormal eigenvectors as columns (syevd); info > 0 where the
// iteration did not converge.
using EighFn = void (*)(Tensor& a, Tensor& w, bool upper, bool vectors, Tensor& info);
// a (B, n, m): m x n matrices, destroyed -> s (B, k) singular values
// descending (k = min(m, n)); when u is defined, u (B, ucols, m) and vh
// (B, n, vrows) with ucols = vrows = k, or m and n (full) (gesdd); info > 0
// where it did not converge.
using SvdFn = void (*)(Tensor& a, Tensor& s, Tensor& u, Tensor& vh, Tensor& info);

// ---- every stub, once: X(stub, signature, the op named in errors); and
// M(name, ...) for each op of the lists of core/op_list.h, whose stub is
// named after it and is an ElementwiseFn ----
#define STRIDE_KERNEL_STUBS(X)                                                        \
  X(rms_norm_forward, RmsNormForwardFn, "rms_norm")                                   \
  X(rms_norm_backward, RmsNormBackwardFn, "rms_norm_backward")                        \
  X(swiglu_forward, SwigluForwardFn, "swiglu")                                        \
  X(swiglu_backward, SwigluBackwardFn, "swiglu_backward")                             \
  X(cross_entropy_forward, CrossEntropyForwardFn, "cross_entropy")                    \
  X(cross_entropy_backward, CrossEntropyBackwardFn, "cross_entropy_backward")         \
  X(linear_groups_forward, LinearGroupsForwardFn, "linear_groups")                    \
  X(linear_groups_backward, LinearGroupsBackwardFn, "linear_groups_backward")         \
  X(pack_weight, PackWeightFn, "pack_weight")                                         \
  X(unpack_weight, UnpackWeightFn, "unpack_weight")                                   \
  X(linear_packed, LinearPackedFn, "linear_packed")                                   \
  X(attention_forward, AttentionForwardFn, "scaled_dot_product_attention")            \
  X(attention_backward, AttentionBackwardFn, "scaled_dot_product_attention_backward") \
  X(attention_dropout_mask, AttentionDropoutMaskFn, "scaled_dot_product_attention")   \
  X(rotary_embedding, RotaryEmbeddingFn, "rotary_embedding")                          \
  X(adam_step, AdamStepFn, "adam_step")                                               \
  X(sgd_step, SGDStepFn, "sgd_step")                                                  \
  X(softmax_rows, SoftmaxRowsFn, "softmax")                                           \
  X(round_to_bfloat16, RoundToBfloat16Fn, "autocast_bf16")                            \
  X(autocast_multiplies_bf16, AutocastMultipliesBf16Fn, "autocast")                   \
  X(uniform_fill, UniformFillFn, "uniform_")                                          \
  X(normal_fill, NormalFillFn, "normal_")                                             \
  X(randint_fill, RandintFillFn, "random_")                                           \
  X(fill, FillFn, "fill_")                                                            \
  X(batched_gemm, BatchedGemmFn, "matmul")                                            \
  X(reduce_sum, ReduceSumFn, "sum")                                                   \
  X(reduce_prod, ReduceProdFn, "prod")                                                \
  X(reduce_extreme, ReduceExtremeFn, "amax/amin")                                     \
  X(reduce_extreme_index, ReduceExtremeIndexFn, "max/min")                            \
  X(sort_rows, SortRowsFn, "sort")                                                    \
  X(mode_rows, ModeRowsFn, "mode")                                                    \
  X(kth_rows, KthRowsFn, "kthvalue")                                                  \
  X(multinomial, MultinomialFn, "multinomial")                                        \
  X(scan, ScanFn, "cumsum")                                                           \
  X(lu_factor, LuFactorFn, "linalg.lu_factor")                                        \
  X(lu_permutation, LuPermutationFn, "lu_unpack")                                     \
  X(triangular_solve, TriangularSolveFn, "linalg.solve_triangular")                   \
  X(cholesky, CholeskyFn, "linalg.cholesky")                                          \
  X(qr, QrFn, "linalg.qr")                                                            \
  X(eigh, EighFn, "linalg.eigh")                                                      \
  X(svd, SvdFn, "linalg.svd")                                                         \
  X(fft_c2c, FftC2cFn, "fft")                                                         \
  X(scan_extreme, ScanExtremeFn, "cummax")                                            \
  X(searchsorted, SearchSortedFn, "searchsorted")                                     \
  X(bincount, BincountFn, "bincount")                                                 \
  X(histc, HistcFn, "histc")                                                          \
  X(consecutive_groups, ConsecutiveGroupsFn, "unique_consecutive")                    \
  X(im2col, Im2colFn, "unfold")                                                       \
  X(col2im, Col2imFn, "fold")                                                         \
  X(copy, CopyFn, "copy_")                                                            \
  X(gather, GatherFn, "gather")                                                       \
  X(scatter, ScatterFn, "scatter")                                                    \
  X(index_offsets, IndexOffsetsFn, "index")                                           \
  X(index_gather, IndexGatherFn, "index")                                             \
  X(index_put, IndexPutFn, "index_put_")                                              \
  X(div, ElementwiseFn, "div")                                                        \
  X(pow, ElementwiseFn, "pow")                                                        \
  X(fmod, ElementwiseFn, "fmod")                                                      \
  X(remainder, ElementwiseFn, "remainder")                                            \
  X(div_floor, ElementwiseFn, "div")                                                  \
  X(div_trunc, ElementwiseFn, "div")                                                  \
  X(frexp, FrexpFn, "frexp")                                                          \
  X(where, ElementwiseFn, "where")                                                    \
  X(gelu_backward, ElementwiseFn, "gelu_backward")                                    \
  X(add, ElementwiseScalarFn, "add")                                                  \
  X(sub, ElementwiseScalarFn, "sub")                                                  \
  X(lerp, ElementwiseScalarFn, "lerp_")                                               \
  X(addcmul, ElementwiseScalarFn, "addcmul_")                                         \
  X(addcdiv, ElementwiseScalarFn, "addcdiv_")                                         \
  X(clamp, ClampFn, "clamp")                                                          \
  X(polygamma, ElementwiseScalarFn, "polygamma")
#define STRIDE_LISTED_ELEMENTWISE_OPS(M) \
  STRIDE_FLOAT_UNARY_OPS(M)              \
  STRIDE_SAME_UNARY_OPS(M)               \
  STRIDE_BINARY_OPS(M)                   \
  STRIDE_FLOAT_BINARY_OPS(M)             \
  STRIDE_INTEGER_BINARY_OPS(M)           \
  STRIDE_COMPARISON_OPS(M)
// The special functions, which have CPU kernels only (core/op_list.h).
#define STRIDE_SPECIAL_ELEMENTWISE_OPS(M) \
  STRIDE_SPECIAL_UNARY_OPS(M)             \
  STRIDE_SPECIAL_UNARY_NOGRAD_OPS(M)      \
  STRIDE_SPECIAL_BINARY_OPS(M)            \
  STRIDE_SPECIAL_BINARY_NOGRAD_OPS(M)

#define STRIDE_DECLARE_STUB(stub, Fn, op) extern detail::DispatchStub<Fn> stub;
#define STRIDE_DECLARE_LISTED_STUB(name, ...) STRIDE_DECLARE_STUB(name, ElementwiseFn, #name)
STRIDE_KERNEL_STUBS(STRIDE_DECLARE_STUB)
STRIDE_LISTED_ELEMENTWISE_OPS(STRIDE_DECLARE_LISTED_STUB)
STRIDE_SPECIAL_ELEMENTWISE_OPS(STRIDE_DECLARE_LISTED_STUB)
#undef STRIDE_DECLARE_LISTED_STUB
#undef STRIDE_DECLARE_STUB

}  // namespace stride::kernels
