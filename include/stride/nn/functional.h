// stride::nn::functional — the stateless layer functions (torch.nn.functional).
// Shapes: B batch, T (L) query length, S key length, C / D features, V classes.
#pragma once

#include <optional>

#include "stride/generator.h"
#include "stride/tensor.h"

namespace stride::nn::functional {

// y = x @ weight^T + bias. x (..., in), weight (out, in), bias (out) or undefined.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = {});

// Rows of weight (V, D) picked by integer ids of any shape -> (..., D).
Tensor embedding(const Tensor& ids, const Tensor& weight);

// Zeroes each element with probability p and scales the rest by 1/(1-p) when
// `training`; the identity otherwise.
Tensor dropout(const Tensor& x, double p, bool training, Generator* gen = nullptr);

Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);
Tensor silu(const Tensor& x);
Tensor gelu(const Tensor& x);
Tensor relu(const Tensor& x);

enum class Reduction { None, Mean, Sum };

// Cross-entropy of logits (N, C) — or (N, C, d1, ...) — against class indices
// (N) — or (N, d1, ...) — as torch.nn.functional.cross_entropy: fused
// log-softmax + NLL with its own backward. Targets equal to ignore_index
// contribute nothing (and are not counted by Mean). label_smoothing mixes the
// one-hot target with the uniform distribution.
//
// It warns once (see logging.h) when the input rows look like probabilities
// (every value in [0, 1], each row summing to 1): cross_entropy takes logits.
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

// Negative log-likelihood of log-probabilities (N, C) against class indices (N).
Tensor nll_loss(const Tensor& log_probs,
                const Tensor& target,
                int64_t ignore_index = -100,
                Reduction reduction = Reduction::Mean);
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);

// x / sqrt(mean(x^2 over the last dim) + eps) * weight, per token; fused with
// its own backward. weight (D) or undefined.
Tensor rms_norm(const Tensor& x, const Tensor& weight, double eps = 1e-6);
Tensor rms_norm_reference(const Tensor& x, const Tensor& weight, double eps = 1e-6);

// (x - mean) / sqrt(var + eps) * weight + bias over the trailing dims of
// `normalized_shape`.
Tensor layer_norm(const Tensor& x,
                  IntArrayRef normalized_shape,
                  const Tensor& weight = {},
                  const Tensor& bias = {},
                  double eps = 1e-5);

// Where a causal mask puts the diagonal when the query length L differs from
// the key length S. PyTorch's is_causal is TopLeft (query i sees keys <= i);
// incremental decoding with a KV cache needs BottomRight (query i sees keys
// <= i + S - L).
enum class CausalAlignment { TopLeft, BottomRight };

// softmax(q k^T * scale + mask) v, as torch.nn.functional.scaled_dot_product_attention.
// q (..., L, E), k (..., S, E), v (..., S, Ev) -> (..., L, Ev). attn_mask: bool
// (true = attend) or float (added), broadcastable to (..., L, S). scale
// defaults to 1/sqrt(E). With is_causal and L != S, `alignment` must be given:
// stride refuses to guess.
Tensor scaled_dot_product_attention(const Tensor& q,
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
// p = position_offset + t, theta_i = base^(-2i/D).
Tensor rotary_embedding(const Tensor& x,
                        int64_t position_offset = 0,
                        double base = 10000.0,
                        RopeConvention convention = RopeConvention::Interleaved);

}  // namespace stride::nn::functional
