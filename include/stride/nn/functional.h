// stride::nn::functional — the stateless layer functions (torch.nn.functional).
// Shapes: B batch, T (L) query length, S key length, C / D features, V classes.
#pragma once

#include <functional>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "stride/generator.h"
#include "stride/tensor.h"
#include "stride/weight_format.h"

namespace stride::nn::functional {

// y = x @ weight^T + bias. x (..., in), weight (out, in), bias (out) or undefined.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = {});
// linear(x, cat(weights, 0)), i.e. torch.cat([linear(x, w) for w in weights],
// -1): several linear maps of one input, e.g. attention heads kept as
// separate parameters (the "Llama from scratch" article's). Each weight's
// product goes straight into its columns of the output and each weight's
// gradient comes out of a GEMM of its own, so neither the concatenated
// weight nor views of one gradient buffer (which .grad would copy) are made.
// weights (out_i, in) of x's dtype; x (..., in). Differentiable to any order.
Tensor linear_concat(const Tensor& x, const std::vector<Tensor>& weights);
// linear_concat(x, groups[g]) for each group g, as one op: several
// projections of one input (attention's q, k and v; an FFN's w1 and w3).
// x's gradient, a sum over every weight, is summed inside the op by blocks of
// rows, in the order autograd adds separate layers' gradients (so with the
// same bits), instead of autograd adding one whole gradient per output. An
// output without a gradient gives its weights none. Differentiable to any
// order.
std::vector<Tensor> linear_groups(const Tensor& x, const std::vector<std::vector<Tensor>>& groups);

// ---- packed weights (include/stride/weight_format.h) ----
// weight (out, in) of a floating dtype -> its stored form in `format`
// (rounded to bfloat16, or quantized by blocks of 32 as llama.cpp's Q8_0 and
// Q4_0). No gradient.
Tensor pack_weight(const Tensor& weight, WeightFormat format);
// The float32 weight (out, in_features) that a stored one stands for.
Tensor unpack_weight(const Tensor& packed, WeightFormat format, int64_t in_features);
// x (..., in_features) @ unpack_weight(packed)^T -> (..., out), computed
// without unpacking the whole weight (Note [Weight formats]). In x's dtype;
// differentiable in x (not in the stored weight), to any order.
Tensor linear_packed(const Tensor& x,
                     const Tensor& packed,
                     WeightFormat format,
                     int64_t in_features);

// Rows of weight (V, D) picked by integer ids of any shape -> (..., D).
Tensor embedding(const Tensor& ids, const Tensor& weight);

// Zeroes each element with probability p and scales the rest by 1/(1-p) when
// `training` (the mask draws from `gen`, or the default generator); returns x
// itself otherwise, or when p == 0. p == 1 gives zeros.
Tensor dropout(const Tensor& x, double p, bool training, Generator* gen = nullptr);

Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);
Tensor silu(const Tensor& x);
Tensor gelu(const Tensor& x);
// approximate "none" (the exact erf form) or "tanh": 0.5 x (1 + tanh(sqrt(2/pi)
// (x + 0.044715 x^3))), GPT-2's.
Tensor gelu(const Tensor& x, std::string_view approximate);
Tensor relu(const Tensor& x);

// silu(gate) * up, Llama's SwiGLU nonlinearity (the FFN is
// w2(swiglu(w1 x, w3 x))), fused with its own backward. gate and up have one
// shape and dtype, any layout. With beta, gate * sigmoid(beta * gate) * up:
// the Swish-beta form of the SwiGLU paper, with beta a one-element tensor of
// gate's dtype that may be learnable (the "Llama from scratch" article's);
// swiglu(gate, up) is beta = 1.
Tensor swiglu(const Tensor& gate, const Tensor& up);
Tensor swiglu(const Tensor& gate, const Tensor& up, const Tensor& beta);
Tensor swiglu_reference(const Tensor& gate, const Tensor& up);
Tensor swiglu_reference(const Tensor& gate, const Tensor& up, const Tensor& beta);

enum class Reduction { None, Mean, Sum };

// Cross-entropy of logits (N, C) — or (N, C, d1, ...), or (C) with a 0-d
// target — against class indices (N) — or (N, d1, ...) — of dtype int64 or
// int32, as torch.nn.functional.cross_entropy: fused log-softmax + NLL with
// its own backward. Targets equal to ignore_index contribute nothing (and are
// not counted by Mean; Mean over no counted target is NaN, as in PyTorch).
// label_smoothing = e mixes the one-hot target with the uniform distribution:
// loss = (1 - e) * nll + e * mean over classes of -log p. Reduction None
// returns the target's shape (0 for ignored targets), Mean and Sum a 0-d
// tensor, all of the logits' dtype. A target outside [0, C) that is not
// ignore_index throws IndexError naming it and C.
//
// It warns once (stride/logging.h, key "cross_entropy_probabilities") when
// the input rows look like probabilities (every value in [0, 1], each row
// summing to 1): cross_entropy takes logits, and softmax output fed to it
// trains to nothing.
Tensor cross_entropy(const Tensor& logits,
                     const Tensor& target,
                     int64_t ignore_index = -100,
                     Reduction reduction = Reduction::Mean,
                     double label_smoothing = 0.0);
// The same loss composed from basic ops: the reference the fused op is tested against.
Tensor cross_entropy_reference(const Tensor& logits,
                               const Tensor& target,
                               int64_t ignore_index = -100,
                               Reduction reduction = Reduction::Mean,
                               double label_smoothing = 0.0);

// cross_entropy of the logits input @ linear_weight^T + linear_bias without
// holding them whole (torch.nn.functional.linear_cross_entropy with
// options): input (N, in) or (in), linear_weight (C, in), target class
// indices (N) or () of dtype int64, or class probabilities (N, C) or (C) of
// the input's dtype. The rows are taken batch_chunk_size at a time (0: all at
// once): the forward keeps each row's loss and log-sum-exp, and the backward
// recomputes each chunk's logits from them, so no more than (batch_chunk_size,
// C) logits exist at once. weight (C) rescales each class, ignore_index,
// label_smoothing and the reductions are cross_entropy's (PyTorch's weighted
// Mean divides by the summed weights of the counted targets).
struct LinearCrossEntropyOptions {
  Tensor linear_bias;  // (C) or undefined
  Tensor weight;       // (C) or undefined
  Reduction reduction = Reduction::Mean;
  int64_t ignore_index = -100;
  double label_smoothing = 0.0;
  int64_t batch_chunk_size = 0;
};
Tensor linear_cross_entropy(const Tensor& input,
                            const Tensor& linear_weight,
                            const Tensor& target,
                            const LinearCrossEntropyOptions& options = {});

// Negative log-likelihood of log-probabilities (N, C) — or (N, C, d1, ...) —
// against class indices (N) — or (N, d1, ...); ignore_index and reductions as
// cross_entropy.
Tensor nll_loss(const Tensor& log_probs,
                const Tensor& target,
                int64_t ignore_index = -100,
                Reduction reduction = Reduction::Mean);
// (input - target)^2, reduced. Shapes should be equal; a target that merely
// broadcasts (e.g. (N, 1) against (N)) works as in PyTorch but warns once
// (key "mse_loss_broadcast"), since it is almost always a bug.
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);

// ---- Activations (torch.nn.functional's; src/nn/activations.cpp) ----
// Composed of ops, so autograd (to any order) is automatic; the value and the
// gradient at every kink are PyTorch's (e.g. hardtanh passes no gradient at
// its bounds, leaky_relu passes negative_slope at 0). NaN stays NaN.

// x > 0 ? x : negative_slope * x.
Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01);
// x > 0 ? x : alpha * (exp(x) - 1).
Tensor elu(const Tensor& x, double alpha = 1.0);
// scale * elu(x, alpha) with SELU's fixed alpha ~ 1.6733 and scale ~ 1.0507.
Tensor selu(const Tensor& x);
// max(0, x) + min(0, alpha * (exp(x / alpha) - 1)); alpha != 0.
Tensor celu(const Tensor& x, double alpha = 1.0);
// log(1 + exp(beta x)) / beta, and x itself where beta x > threshold.
Tensor softplus(const Tensor& x, double beta = 1.0, double threshold = 20.0);
// x clamped into [min_val, max_val], with no gradient at or beyond the bounds.
Tensor hardtanh(const Tensor& x, const Scalar& min_val = -1.0, const Scalar& max_val = 1.0);
// hardtanh(x, 0, 6).
Tensor relu6(const Tensor& x);
// x * relu6(x + 3) / 6.
Tensor hardswish(const Tensor& x);
// relu6(x + 3) / 6.
Tensor hardsigmoid(const Tensor& x);
// x * tanh(softplus(x)).
Tensor mish(const Tensor& x);
// log(sigmoid(x)), computed stably: min(x, 0) - log(1 + exp(-|x|)).
Tensor logsigmoid(const Tensor& x);
// x / (1 + |x|).
Tensor softsign(const Tensor& x);
// x - tanh(x).
Tensor tanhshrink(const Tensor& x);
// x - lambd above lambd, x + lambd below -lambd, 0 between; lambd >= 0.
Tensor softshrink(const Tensor& x, double lambd = 0.5);
// 0 where -lambd <= x <= lambd, x elsewhere (all of x for a negative lambd).
Tensor hardshrink(const Tensor& x, double lambd = 0.5);
// x > threshold ? x : value.
Tensor threshold(const Tensor& x, const Scalar& threshold, const Scalar& value);
// a * sigmoid(b), with a and b the two halves of x along dim (of even size).
Tensor glu(const Tensor& x, int64_t dim = -1);
// x > 0 ? x : weight * x, weight one value or one per channel (dim 1 of x).
Tensor prelu(const Tensor& x, const Tensor& weight);
// softmax(-x, dim), x first cast to dtype when given.
Tensor softmin(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);

// ---- Losses (src/nn/losses.cpp) ----
// Elementwise losses of input against a target, reduced by `reduction`. As
// in PyTorch, the binary cross-entropies take a target of input's shape
// only; the others broadcast it, and l1, smooth_l1 and huber warn once when
// the shapes differ (as mse_loss). A weight, where taken, multiplies each
// element's loss before the reduction (and l1_loss's Mean then divides by
// the weights' sum, as PyTorch).

// |input - target|.
Tensor l1_loss(const Tensor& input,
               const Tensor& target,
               Reduction reduction = Reduction::Mean,
               const Tensor& weight = {});
// 0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere (d = input -
// target); beta = 0 is l1_loss, beta < 0 a ValueError.
Tensor smooth_l1_loss(const Tensor& input,
                      const Tensor& target,
                      Reduction reduction = Reduction::Mean,
                      double beta = 1.0);
// 0.5 d^2 where |d| < delta, delta (|d| - 0.5 delta) elsewhere; delta > 0.
Tensor huber_loss(const Tensor& input,
                  const Tensor& target,
                  Reduction reduction = Reduction::Mean,
                  double delta = 1.0,
                  const Tensor& weight = {});
// -weight (t log(x) + (1 - t) log(1 - x)) of probabilities x in [0, 1] (a
// value outside is a ValueError), each log clamped at -100 as PyTorch does,
// so that x = 0 or 1 gives a finite loss; the gradient there is PyTorch's
// (x - t) / 1e-12 too. target has input's shape; weight broadcasts to it.
Tensor binary_cross_entropy(const Tensor& input,
                            const Tensor& target,
                            const Tensor& weight = {},
                            Reduction reduction = Reduction::Mean);
// binary_cross_entropy(sigmoid(input), target) computed stably from logits:
// (1 - t) x - (1 + (pos_weight - 1) t) logsigmoid(x), times weight.
// pos_weight (broadcast along the last dim, one per class) weighs the
// positive term.
Tensor binary_cross_entropy_with_logits(const Tensor& input,
                                        const Tensor& target,
                                        const Tensor& weight = {},
                                        const Tensor& pos_weight = {},
                                        Reduction reduction = Reduction::Mean);
// KL divergence of target from the distribution input holds as
// log-probabilities: target (log target - input), or with log_target
// exp(target) (target - input); 0 where target is 0. reduction is "none",
// "sum", "mean" (over every element) or "batchmean" (sum / batch size, the
// KL divergence proper): a string, as KL adds batchmean to Reduction's three.
Tensor kl_div(const Tensor& input,
              const Tensor& target,
              std::string_view reduction = "mean",
              bool log_target = false);
// log(1 + exp(-target input)) for targets of +-1.
Tensor soft_margin_loss(const Tensor& input,
                        const Tensor& target,
                        Reduction reduction = Reduction::Mean);
// input where target is 1, max(0, margin - input) where it is -1.
Tensor hinge_embedding_loss(const Tensor& input,
                            const Tensor& target,
                            double margin = 1.0,
                            Reduction reduction = Reduction::Mean);
// Poisson negative log-likelihood: exp(input) - target input with
// log_input, input - target log(input + eps) otherwise; `full` adds
// Stirling's approximation of log(target!) where target > 1.
Tensor poisson_nll_loss(const Tensor& input,
                        const Tensor& target,
                        bool log_input = true,
                        bool full = false,
                        double eps = 1e-8,
                        Reduction reduction = Reduction::Mean);

// ---- Margin, ranking, triplet and Gaussian losses, class weights and
// probability targets (src/nn/margin_losses.cpp) ----
// Composed of ops as PyTorch's (CompositeImplicitAutograd) ones, so their
// gradients to any order are PyTorch's.

// nll_loss with a class weight (C): each target's loss times weight[target];
// Mean divides by the kept targets' total weight. An undefined weight is the
// fused nll_loss above.
Tensor nll_loss(const Tensor& log_probs,
                const Tensor& target,
                const Tensor& weight,
                int64_t ignore_index = -100,
                Reduction reduction = Reduction::Mean);
// cross_entropy with a class weight (C) and/or class-probability targets (a
// floating target of the logits' shape): -sum_c w_c t_c log softmax(x)_c,
// label smoothing mixing in the uniform target; Mean divides probability
// targets' loss by the number of samples and index targets' by their total
// weight. Integer targets without a weight run the fused cross_entropy.
Tensor cross_entropy(const Tensor& logits,
                     const Tensor& target,
                     const Tensor& weight,
                     int64_t ignore_index = -100,
                     Reduction reduction = Reduction::Mean,
                     double label_smoothing = 0.0);
// 1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it
// is -1; x1 and x2 (N, D) or (D).
Tensor cosine_embedding_loss(const Tensor& input1,
                             const Tensor& input2,
                             const Tensor& target,
                             double margin = 0.0,
                             Reduction reduction = Reduction::Mean);
// max(0, -target (input1 - input2) + margin).
Tensor margin_ranking_loss(const Tensor& input1,
                           const Tensor& input2,
                           const Tensor& target,
                           double margin = 0.0,
                           Reduction reduction = Reduction::Mean);
// Per sample, the sum over classes j != y of max(0, margin - x[y] + x[j])^p
// / C, times weight[y]; input (N, C) or (C), p 1 or 2.
Tensor multi_margin_loss(const Tensor& input,
                         const Tensor& target,
                         int64_t p = 1,
                         double margin = 1.0,
                         const Tensor& weight = {},
                         Reduction reduction = Reduction::Mean);
// Per sample, the sum over its target classes j and other classes k of
// max(0, 1 - (x[j] - x[k])) / C; a row's targets are the indices before its
// first -1 (target of the input's shape, (N, C) or (C)).
Tensor multilabel_margin_loss(const Tensor& input,
                              const Tensor& target,
                              Reduction reduction = Reduction::Mean);
// The mean over classes (the last dim) of the binary cross-entropy of
// sigmoid(input) against target, times weight.
Tensor multilabel_soft_margin_loss(const Tensor& input,
                                   const Tensor& target,
                                   const Tensor& weight = {},
                                   Reduction reduction = Reduction::Mean);
// max(0, margin + d(anchor, positive) - d(anchor, negative)) with d the
// p-norm pairwise_distance; swap takes d(positive, negative) when smaller.
Tensor triplet_margin_loss(const Tensor& anchor,
                           const Tensor& positive,
                           const Tensor& negative,
                           double margin = 1.0,
                           double p = 2.0,
                           double eps = 1e-6,
                           bool swap = false,
                           Reduction reduction = Reduction::Mean);
// 0.5 (log(var) + (input - target)^2 / var), var clamped below at eps with
// the gradient of the unclamped var (as PyTorch); full adds 0.5 log(2 pi).
// var has the input's shape, or that with the last dim 1 or dropped; a
// negative var is a ValueError.
Tensor gaussian_nll_loss(const Tensor& input,
                         const Tensor& target,
                         const Tensor& var,
                         bool full = false,
                         double eps = 1e-6,
                         Reduction reduction = Reduction::Mean);
// max(0, margin + d(anchor, positive) - d(anchor, negative)) with d the
// given distance function (pairwise_distance when empty), as
// torch.nn.functional.triplet_margin_with_distance_loss; swap takes
// d(positive, negative) when smaller. margin must be positive.
using DistanceFunction = std::function<Tensor(const Tensor&, const Tensor&)>;
Tensor triplet_margin_with_distance_loss(const Tensor& anchor,
                                         const Tensor& positive,
                                         const Tensor& negative,
                                         const DistanceFunction& distance_function = {},
                                         double margin = 1.0,
                                         bool swap = false,
                                         Reduction reduction = Reduction::Mean);

// ---- Composed layers (src/nn/composed_layers.cpp) ----

// Channel-wise dropout: whole channels of (N, C, *spatial) — or of an
// unbatched (C, *spatial) — zeroed with probability p, the rest scaled by
// 1 / (1 - p); 1, 2 or 3 spatial dims.
Tensor dropout1d(const Tensor& x, double p = 0.5, bool training = true, Generator* gen = nullptr);
Tensor dropout2d(const Tensor& x, double p = 0.5, bool training = true, Generator* gen = nullptr);
Tensor dropout3d(const Tensor& x, double p = 0.5, bool training = true, Generator* gen = nullptr);
// Dropout that keeps a SELU network's mean and variance: dropped elements
// take SELU's negative saturation, then an affine correction; the feature
// form drops whole channels of (N, C, *).
Tensor alpha_dropout(const Tensor& x,
                     double p = 0.5,
                     bool training = false,
                     Generator* gen = nullptr);
Tensor feature_alpha_dropout(const Tensor& x,
                             double p = 0.5,
                             bool training = false,
                             Generator* gen = nullptr);
// x where x >= 0, else x * a: a drawn uniformly from [lower, upper] per
// element in training, (lower + upper) / 2 in eval.
Tensor rrelu(const Tensor& x,
             double lower = 1.0 / 8,
             double upper = 1.0 / 3,
             bool training = false,
             Generator* gen = nullptr);
// y_o = x1^T W_o x2 + b_o: x1 (..., in1), x2 (..., in2), weight
// (out, in1, in2) -> (..., out).
Tensor bilinear(const Tensor& x1, const Tensor& x2, const Tensor& weight, const Tensor& bias = {});
// (N, C, *) with its channels regrouped: channel g * (C / groups) + i moves
// to i * groups + g.
Tensor channel_shuffle(const Tensor& x, int64_t groups);
// The p-norm distance between each pair of rows i < j of x (N, M), in
// row-major order of the pairs: N (N - 1) / 2 values.
Tensor pdist(const Tensor& x, double p = 2.0);
// x / (k + alpha * mean of x^2 over `size` neighbouring channels)^beta, the
// window zero-padded at the edges; x (N, C, *).
Tensor local_response_norm(
    const Tensor& x, int64_t size, double alpha = 1e-4, double beta = 0.75, double k = 1.0);

// ---- Vectors, classes and padding (src/nn/vectors.cpp, pad.cpp) ----

// int64 indices of any shape -> (..., num_classes) int64 with a 1 at each
// index. num_classes = -1 takes the largest index + 1 (read from the values:
// not on meta). An index outside [0, num_classes) is a ValueError.
Tensor one_hot(const Tensor& indices, int64_t num_classes = -1);
// x / max(||x||_p along dim, eps).
Tensor normalize(const Tensor& x, double p = 2.0, int64_t dim = 1, double eps = 1e-12);
// sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps)) along dim (PyTorch's
// current formula: each norm clamped, the clamp invisible to the gradient);
// x1 and x2 broadcast.
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim = 1, double eps = 1e-8);
// ||x1 - x2 + eps||_p along the last dim.
Tensor pairwise_distance(
    const Tensor& x1, const Tensor& x2, double p = 2.0, double eps = 1e-6, bool keepdim = false);
// Padding modes of pad.
enum class PadMode { Constant, Reflect, Replicate, Circular };
// x padded by `pad` = (left of the last dim, right of the last dim, left of
// the one before, ...), as torch.nn.functional.pad: Constant fills with
// `value` and pads any number of dims; Reflect (mirroring without repeating
// the edge), Replicate (repeating the edge) and Circular (wrapping around)
// pad the last 1, 2 or 3 dims of a 2-3, 3-4 or 4-5-d input. A negative pad
// crops.
Tensor pad(const Tensor& x,
           IntArrayRef pad,
           PadMode mode = PadMode::Constant,
           const Scalar& value = 0.0);

// x / sqrt(mean(x^2 over the last dim) + eps) * weight, per token; fused with
// its own backward. x (..., D) in any layout, weight (D) of x's dtype or
// undefined. The sum of squares accumulates in float64.
Tensor rms_norm(const Tensor& x, const Tensor& weight, double eps = 1e-6);
Tensor rms_norm_reference(const Tensor& x, const Tensor& weight, double eps = 1e-6);

// (x - mean) / sqrt(var + eps) * weight + bias over the trailing dims of
// `normalized_shape` (biased variance, as PyTorch). weight and bias have
// shape normalized_shape, or are undefined.
Tensor layer_norm(const Tensor& x,
                  IntArrayRef normalized_shape,
                  const Tensor& weight = {},
                  const Tensor& bias = {},
                  double eps = 1e-5);

// Batch normalisation over dim 1 (channels C) of x (N, C, *), as
// torch.nn.functional.batch_norm. With `training`, normalises with the batch's
// mean and biased variance over N and the spatial dims and, when running_mean
// and running_var are given, updates them in place:
//   running = (1 - momentum) * running + momentum * batch statistic
// (the variance's batch statistic unbiased, n / (n - 1)). Without `training`
// it normalises with running_mean and running_var, which must then be given.
// weight and bias (C) are optional; every given tensor has x's dtype. An
// input without elements (any rank) gives a copy of it, as PyTorch's.
Tensor batch_norm(const Tensor& x,
                  const Tensor& running_mean,
                  const Tensor& running_var,
                  const Tensor& weight = {},
                  const Tensor& bias = {},
                  bool training = false,
                  double momentum = 0.1,
                  double eps = 1e-5);

// Where a causal mask puts the diagonal when the query length L differs from
// the key length S. PyTorch's is_causal is TopLeft (query i sees keys <= i);
// incremental decoding with a KV cache needs BottomRight (query i sees keys
// <= i + S - L).
enum class CausalAlignment { TopLeft, BottomRight };

// softmax(q k^T * scale + mask) v, as torch.nn.functional.scaled_dot_product_attention.
// Without attn_mask (causal or not, with dropout_p < 1), and with q, k, v of
// one batch shape, a fused kernel runs (its own backward, memory O(L S) per
// thread rather than per batch and head; it drops exactly the elements the
// composed path drops for the same generator state); otherwise, and always for
// scaled_dot_product_attention_reference, the computation is composed from
// ops.
// q (..., L, E), k (..., S, E), v (..., S, Ev) -> (..., L, Ev); batch dims
// broadcast. attn_mask: bool (true = attend) or float (added), broadcastable
// to (..., L, S); it may not be combined with is_causal (as PyTorch). scale
// defaults to 1/sqrt(E). With is_causal and L != S, `alignment` must be given:
// stride refuses to guess (see CausalAlignment). A query row whose keys are
// all masked gives NaN, as PyTorch's math path. dropout_p > 0 drops
// attention probabilities (always: pass 0 in eval) with `gen`.
Tensor scaled_dot_product_attention(const Tensor& q,
                                    const Tensor& k,
                                    const Tensor& v,
                                    const Tensor& attn_mask = {},
                                    double dropout_p = 0.0,
                                    bool is_causal = false,
                                    std::optional<double> scale = std::nullopt,
                                    std::optional<CausalAlignment> alignment = std::nullopt,
                                    Generator* gen = nullptr);
Tensor scaled_dot_product_attention_reference(
    const Tensor& q,
    const Tensor& k,
    const Tensor& v,
    const Tensor& attn_mask = {},
    double dropout_p = 0.0,
    bool is_causal = false,
    std::optional<double> scale = std::nullopt,
    std::optional<CausalAlignment> alignment = std::nullopt,
    Generator* gen = nullptr);

// Rotary position embedding. Interleaved rotates adjacent pairs (x[2i],
// x[2i+1]) as Meta's original Llama code does; HalfSplit rotates (x[i],
// x[i + d/2]) as Hugging Face's Llama does. Default: Interleaved.
enum class RopeConvention { Interleaved, HalfSplit };

// x (..., T, D) with D even, rotated by angle p * theta_i at position
// p = position_offset + t, theta_i = base^(-2i/D). The rotation is by +angle:
// a pair (a, b) becomes (a cos - b sin, a sin + b cos), i.e. a + ib is
// multiplied by e^{i p theta_i} (Meta's complex multiply; HF's rotate_half
// computes the same). Hence q_rot(p) . k_rot(p') depends only on p - p'.
// position_offset is the position of x's first row: the length of the KV
// cache when decoding. The two conventions agree up to a permutation of the
// last dim (interleaved pair i <-> half-split features (i, i + D/2)), so
// weights trained with one need their q/k projections permuted to use the
// other. Angles, cos and sin are computed in float64 (and rounded once to
// float32 for a float32 x, whose rotation then runs in float32 vector lanes).
// Returns a new tensor; differentiable (its backward is the rotation by
// -angle).
Tensor rotary_embedding(const Tensor& x,
                        int64_t position_offset = 0,
                        double base = 10000.0,
                        RopeConvention convention = RopeConvention::Interleaved);
// x (..., T, D) rotated by angles given as tables cos and sin, (T, D/2) each:
// pair i of row t becomes (a c - b s, a s + b c) with c = cos[t][i],
// s = sin[t][i] (read in float64; rounded to float32 for a float32 x). For
// rotations whose angles are not p * base^(-2i/D), e.g. the "Llama from
// scratch" article's; a rotation by -angle passes -sin. Differentiable with
// respect to x.
Tensor rotary_embedding(const Tensor& x,
                        const Tensor& cos,
                        const Tensor& sin,
                        RopeConvention convention = RopeConvention::Interleaved);
// scaled_dot_product_attention(rotary_embedding(q, cos, sin, convention),
// rotary_embedding(k, cos, sin, convention), v, {}, dropout_p, is_causal,
// scale, std::nullopt, gen) for self-attention: q and k (..., T, E) of one
// length T, E even, cos and sin (T, E/2). Where the fused attention kernel
// applies, it rotates q and k inside it, so the rotated copies are never
// written to memory; otherwise it is that composition. Differentiable to any
// order. With a KV cache (keys longer than queries), use the two ops.
Tensor rotary_attention(const Tensor& q,
                        const Tensor& k,
                        const Tensor& v,
                        const Tensor& cos,
                        const Tensor& sin,
                        RopeConvention convention = RopeConvention::Interleaved,
                        double dropout_p = 0.0,
                        bool is_causal = false,
                        std::optional<double> scale = std::nullopt,
                        Generator* gen = nullptr);
// How RoPE's frequencies theta_i = base^(-2i/D) are rescaled for contexts
// longer than pretraining's (Hugging Face's rope_type):
//  - Default: unchanged.
//  - Linear: every frequency divided by `factor` (position interpolation).
//  - Llama3 (Llama 3.1-3.3): with wavelengths 2 pi / theta_i, those shorter
//    than original_context / high_freq_factor are kept, those longer than
//    original_context / low_freq_factor divided by `factor`, and those
//    between interpolated: (1 - s) theta_i / factor + s theta_i with
//    s = (original_context / wavelength - low_freq_factor) /
//        (high_freq_factor - low_freq_factor).
struct RopeScaling {
  enum class Type { Default, Linear, Llama3 };
  Type type = Type::Default;
  double factor = 1.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_context = 8192;
};
// The D/2 frequencies of rows of width D (even), scaled; ValueError for a
// base, factor or frequency band that is not positive and ordered.
std::vector<double> rope_frequencies(int64_t D, double base, const RopeScaling& scaling = {});
// The tables rotary_embedding(x, position_offset, base) rotates by, for
// rows (T, D): cos and sin of (position_offset + t) * theta_i, float64
// (T, D/2) each; rotary_embedding(x, cos, sin) with them gives the same bits.
// With `scaling`, the frequencies are rope_frequencies(D, base, scaling).
std::pair<Tensor, Tensor> rotary_tables(int64_t T,
                                        int64_t D,
                                        int64_t position_offset = 0,
                                        double base = 10000.0,
                                        const RopeScaling& scaling = {});
// The same rotation composed from basic ops: the reference the fused op is
// tested against.
Tensor rotary_embedding_reference(const Tensor& x,
                                  int64_t position_offset = 0,
                                  double base = 10000.0,
                                  RopeConvention convention = RopeConvention::Interleaved);

// ---- convolutions and pooling (src/nn/conv.cpp, src/nn/pooling.cpp) ----
// Sizes of the spatial dims: one value for every dim, or one per dim.
// Inputs are batched (N, C, *spatial) or unbatched (C, *spatial), as
// PyTorch's; every tensor has the input's dtype. unfold, fold, the
// convolutions and the max and average pools take integers too (an integer
// average truncates, as PyTorch's); the rest take floating point.

// The sliding blocks of x (N, C, H, W) as columns (torch.nn.functional.unfold,
// im2col): (N, C * kh * kw, L) with L the number of blocks. dilation, padding
// (zeros) and stride as a convolution's.
Tensor unfold(const Tensor& x,
              IntArrayRef kernel_size,
              IntArrayRef dilation = {1},
              IntArrayRef padding = {0},
              IntArrayRef stride = {1});
// The adjoint of unfold (torch.nn.functional.fold, col2im): blocks
// (N, C * kh * kw, L) summed into (N, C, *output_size).
Tensor fold(const Tensor& cols,
            IntArrayRef output_size,
            IntArrayRef kernel_size,
            IntArrayRef dilation = {1},
            IntArrayRef padding = {0},
            IntArrayRef stride = {1});

// Convolutions as torch.nn.functional.conv1d / conv2d / conv3d: x (N, C_in, *spatial),
// weight (C_out, C_in / groups, *kernel), bias (C_out) or undefined.
// padding is zeros on both sides of each dim; ConvPadding::Same pads so that
// the output has the input's size (stride 1 only; the odd element goes
// right, as PyTorch's), Valid pads nothing.
enum class ConvPadding { Same, Valid };
struct ConvOptions {
  std::vector<int64_t> stride{1};
  std::vector<int64_t> padding{0};
  std::optional<ConvPadding> padding_mode;  // overrides padding when given
  std::vector<int64_t> dilation{1};
  int64_t groups = 1;
};
Tensor conv1d(const Tensor& x,
              const Tensor& weight,
              const Tensor& bias = {},
              const ConvOptions& options = {});
Tensor conv2d(const Tensor& x,
              const Tensor& weight,
              const Tensor& bias = {},
              const ConvOptions& options = {});
Tensor conv3d(const Tensor& x,
              const Tensor& weight,
              const Tensor& bias = {},
              const ConvOptions& options = {});
// Transposed convolutions (the gradients of conv1d / 2d / 3d with respect to
// their input), as torch.nn.functional.conv_transpose1d / 2d / 3d: x (N, C_in,
// *spatial), weight (C_in, C_out / groups, *kernel); output_padding (smaller
// than the stride) adds to one side of each output dim.
struct ConvTransposeOptions {
  std::vector<int64_t> stride{1};
  std::vector<int64_t> padding{0};
  std::vector<int64_t> output_padding{0};
  int64_t groups = 1;
  std::vector<int64_t> dilation{1};
};
Tensor conv_transpose1d(const Tensor& x,
                        const Tensor& weight,
                        const Tensor& bias = {},
                        const ConvTransposeOptions& options = {});
Tensor conv_transpose2d(const Tensor& x,
                        const Tensor& weight,
                        const Tensor& bias = {},
                        const ConvTransposeOptions& options = {});
Tensor conv_transpose3d(const Tensor& x,
                        const Tensor& weight,
                        const Tensor& bias = {},
                        const ConvTransposeOptions& options = {});

// Max and average pooling as torch.nn.functional's: stride empty means the
// kernel size; padding at most half the kernel; ceil_mode rounds the output
// size up (a window starting in the right padding is dropped).
struct PoolOptions {
  std::vector<int64_t> stride{};
  std::vector<int64_t> padding{0};
  std::vector<int64_t> dilation{1};  // max pooling only
  bool ceil_mode = false;
  bool count_include_pad = true;            // average pooling only
  std::optional<int64_t> divisor_override;  // average pooling only
};
Tensor max_pool1d(const Tensor& x, IntArrayRef kernel_size, const PoolOptions& options = {});
Tensor max_pool2d(const Tensor& x, IntArrayRef kernel_size, const PoolOptions& options = {});
Tensor max_pool3d(const Tensor& x, IntArrayRef kernel_size, const PoolOptions& options = {});
// (values, indices): each index is the maximum's position in its input plane
// (h * W + w; d * H * W + h * W + w for 3-d), int64, as return_indices=True
// gives.
std::pair<Tensor, Tensor> max_pool1d_with_indices(const Tensor& x,
                                                  IntArrayRef kernel_size,
                                                  const PoolOptions& options = {});
std::pair<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x,
                                                  IntArrayRef kernel_size,
                                                  const PoolOptions& options = {});
std::pair<Tensor, Tensor> max_pool3d_with_indices(const Tensor& x,
                                                  IntArrayRef kernel_size,
                                                  const PoolOptions& options = {});
Tensor avg_pool1d(const Tensor& x, IntArrayRef kernel_size, const PoolOptions& options = {});
Tensor avg_pool2d(const Tensor& x, IntArrayRef kernel_size, const PoolOptions& options = {});
Tensor avg_pool3d(const Tensor& x, IntArrayRef kernel_size, const PoolOptions& options = {});
// Adaptive pooling: output_size[d] windows over dim d, window i covering
// [floor(i * n / out), ceil((i + 1) * n / out)); an output size of nullopt
// keeps the input's.
using AdaptiveSize = std::vector<std::optional<int64_t>>;
Tensor adaptive_avg_pool1d(const Tensor& x, const AdaptiveSize& output_size);
Tensor adaptive_avg_pool2d(const Tensor& x, const AdaptiveSize& output_size);
Tensor adaptive_avg_pool3d(const Tensor& x, const AdaptiveSize& output_size);
std::pair<Tensor, Tensor> adaptive_max_pool1d_with_indices(const Tensor& x,
                                                           const AdaptiveSize& output_size);
std::pair<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& x,
                                                           const AdaptiveSize& output_size);
std::pair<Tensor, Tensor> adaptive_max_pool3d_with_indices(const Tensor& x,
                                                           const AdaptiveSize& output_size);

// ---- Unpooling and bags of embeddings (src/nn/unpool_and_bags.cpp) ----

// The partial inverse of max_pool, as torch.nn.functional.max_unpool1d / 2d /
// 3d: each value of x (N, C, *spatial) or (C, *spatial) written at its index
// (max_pool's flat position in the output plane) of a zero output. stride
// empty means the kernel size; output_size empty means the inverse of
// max_pool's size formula, (in - 1) * stride - 2 * padding + kernel, else
// the spatial sizes, with or without the leading dims.
struct UnpoolOptions {
  std::vector<int64_t> stride{};
  std::vector<int64_t> padding{0};
  std::vector<int64_t> output_size{};
};
Tensor max_unpool1d(const Tensor& x,
                    const Tensor& indices,
                    IntArrayRef kernel_size,
                    const UnpoolOptions& options = {});
Tensor max_unpool2d(const Tensor& x,
                    const Tensor& indices,
                    IntArrayRef kernel_size,
                    const UnpoolOptions& options = {});
Tensor max_unpool3d(const Tensor& x,
                    const Tensor& indices,
                    IntArrayRef kernel_size,
                    const UnpoolOptions& options = {});

// The sum, mean or max of each bag's rows of weight (V, D) -> (bags, D), as
// torch.nn.functional.embedding_bag: bags are the rows of a 2-d input, or a
// 1-d input cut at offsets (with include_last_offset, offsets' last entry
// closes the last bag). Ids equal to padding_idx are left out, and an empty
// bag gives zeros; per_sample_weights (input's shape) scale each row in Sum
// mode. max_norm first rescales, in place and untracked, each looked-up row
// whose norm_type-norm exceeds it; scale_grad_by_freq divides each row's
// gradient by how often the input looks it up. stride has no sparse
// tensors, so PyTorch's sparse flag has no counterpart.
enum class EmbeddingBagMode { Sum, Mean, Max };
struct EmbeddingBagOptions {
  Tensor offsets;  // undefined for a 2-d input
  std::optional<double> max_norm;
  double norm_type = 2.0;
  bool scale_grad_by_freq = false;
  EmbeddingBagMode mode = EmbeddingBagMode::Mean;
  Tensor per_sample_weights;
  bool include_last_offset = false;
  std::optional<int64_t> padding_idx;
};
Tensor embedding_bag(const Tensor& input,
                     const Tensor& weight,
                     const EmbeddingBagOptions& options = {});

// ---- Multi-head attention (src/nn/multi_head_attention.cpp) ----

// torch.nn.functional.multi_head_attention_forward: query (L, N, E), key and
// value (S, N, E) ((L, E), (S, E) unbatched) projected by in_proj_weight
// (3E, E) or by q/k/v_proj_weight (use_separate_proj_weight), with bias_k
// and bias_v (1, 1, E) appended as one more key and value, and add_zero_attn
// a zero one; static_k / static_v (N * heads, S, E / heads) replace the
// projected keys / values. attn_mask is bool (true: may not attend) or
// float (added), (L, S) or (N * heads, L, S); key_padding_mask (N, S) the
// same. is_causal is a hint that attn_mask is causal (it must be given).
// Returns (output (L, N, E), weights): weights (N, L, S) averaged over heads,
// (N, heads, L, S) otherwise, undefined without need_weights; unbatched
// inputs drop N from both.
struct MultiHeadAttentionOptions {
  bool training = true;
  Tensor key_padding_mask;
  bool need_weights = true;
  Tensor attn_mask;
  bool use_separate_proj_weight = false;
  Tensor q_proj_weight;
  Tensor k_proj_weight;
  Tensor v_proj_weight;
  Tensor static_k;
  Tensor static_v;
  bool average_attn_weights = true;
  bool is_causal = false;
  Generator* gen = nullptr;  // draws the dropout mask; the default generator when null
};
std::pair<Tensor, Tensor> multi_head_attention_forward(
    const Tensor& query,
    const Tensor& key,
    const Tensor& value,
    int64_t embed_dim_to_check,
    int64_t num_heads,
    const Tensor& in_proj_weight,
    const Tensor& in_proj_bias,
    const Tensor& bias_k,
    const Tensor& bias_v,
    bool add_zero_attn,
    double dropout_p,
    const Tensor& out_proj_weight,
    const Tensor& out_proj_bias,
    const MultiHeadAttentionOptions& options = {});

// ---- resampling and normalisation of images (src/nn/interpolate.cpp,
// src/nn/group_norm.cpp) ----
// Resizes the spatial dims of x (N, C, *spatial), 1 to 3 of them, as
// torch.nn.functional.interpolate: to `size` (one value or one per dim), or
// by `scale_factor` (floor(in * scale)); exactly one of them is given.
// Nearest and NearestExact pick one input element per output element, Linear
// (1-d), Bilinear (2-d), Trilinear (3-d) and Bicubic (2-d, PyTorch's
// A = -0.75 and clamped borders) weigh neighbours, Area averages as
// adaptive_avg_pool. align_corners is for the interpolating modes only
// (nullopt: false); unless recompute_scale_factor, a given scale_factor maps
// output to input coordinates instead of in / out.
enum class InterpolateMode { Nearest, NearestExact, Linear, Bilinear, Bicubic, Trilinear, Area };
struct InterpolateOptions {
  std::vector<int64_t> size;
  std::vector<double> scale_factor;
  InterpolateMode mode = InterpolateMode::Nearest;
  std::optional<bool> align_corners;
  std::optional<bool> recompute_scale_factor;
};
Tensor interpolate(const Tensor& x, const InterpolateOptions& options);

// (N, C * r^2, H, W) -> (N, C, H * r, W * r) and back, as
// torch.nn.functional.pixel_shuffle / pixel_unshuffle: views and one copy.
Tensor pixel_shuffle(const Tensor& x, int64_t upscale_factor);
Tensor pixel_unshuffle(const Tensor& x, int64_t downscale_factor);

// (x - mean) / sqrt(var + eps) * weight + bias with the mean and biased
// variance of each of num_groups groups of channels of each sample, as
// torch.nn.functional.group_norm: x (N, C, *), weight and bias (C) or
// undefined.
Tensor group_norm(const Tensor& x,
                  int64_t num_groups,
                  const Tensor& weight = {},
                  const Tensor& bias = {},
                  double eps = 1e-5);

}  // namespace stride::nn::functional
