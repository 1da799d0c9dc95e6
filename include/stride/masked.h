// Masked reductions and normalizations, as torch.masked on strided tensors.
// Every op takes an optional bool mask that broadcasts to the input (no more
// dims than it; std::nullopt: every element is in) and reads the masked-out
// elements as the identity of its reduction (0 for sum, 1 for prod, -inf for
// amax and softmax, ...), so that they do not change the result. A slice with
// every element masked out gives that identity, or NaN where the op has none
// (mean, median, var, std). The ops are composites of where and stride's
// reductions: their gradients come from those ops, and are zero at the
// masked-out elements. dim empty reduces over every dim; dtype: the result's
// dtype, else the input's (int64 for the integer sum and prod).
#pragma once

#include <optional>

#include "stride/tensor.h"

namespace stride::masked {

using Mask = std::optional<Tensor>;

Tensor sum(const Tensor& input,
           IntArrayRef dim = {},
           bool keepdim = false,
           std::optional<ScalarType> dtype = std::nullopt,
           const Mask& mask = std::nullopt);
Tensor prod(const Tensor& input,
            IntArrayRef dim = {},
            bool keepdim = false,
            std::optional<ScalarType> dtype = std::nullopt,
            const Mask& mask = std::nullopt);
Tensor amax(const Tensor& input,
            IntArrayRef dim = {},
            bool keepdim = false,
            std::optional<ScalarType> dtype = std::nullopt,
            const Mask& mask = std::nullopt);
Tensor amin(const Tensor& input,
            IntArrayRef dim = {},
            bool keepdim = false,
            std::optional<ScalarType> dtype = std::nullopt,
            const Mask& mask = std::nullopt);
// The index of the largest (smallest) masked-in element along dim (of the
// flattened input without dim), in dtype, else the input's dtype (as
// torch.masked.argmax); a fully masked-out slice gives index 0.
Tensor argmax(const Tensor& input,
              std::optional<int64_t> dim = std::nullopt,
              bool keepdim = false,
              std::optional<ScalarType> dtype = std::nullopt,
              const Mask& mask = std::nullopt);
Tensor argmin(const Tensor& input,
              std::optional<int64_t> dim = std::nullopt,
              bool keepdim = false,
              std::optional<ScalarType> dtype = std::nullopt,
              const Mask& mask = std::nullopt);
// The mean of the masked-in elements; dtype (else the input's) must be floating.
Tensor mean(const Tensor& input,
            IntArrayRef dim = {},
            bool keepdim = false,
            std::optional<ScalarType> dtype = std::nullopt,
            const Mask& mask = std::nullopt);
// The lower median of the masked-in elements along dim; integer inputs are
// computed in float32 and must have no fully masked-out slice.
Tensor median(const Tensor& input,
              int64_t dim = -1,
              bool keepdim = false,
              std::optional<ScalarType> dtype = std::nullopt,
              const Mask& mask = std::nullopt);
Tensor logsumexp(const Tensor& input,
                 IntArrayRef dim = {},
                 bool keepdim = false,
                 std::optional<ScalarType> dtype = std::nullopt,
                 const Mask& mask = std::nullopt);
// The vector norm of order ord (as linalg::vector_norm) of the masked-in elements.
Tensor norm(const Tensor& input,
            double ord = 2,
            IntArrayRef dim = {},
            bool keepdim = false,
            std::optional<ScalarType> dtype = std::nullopt,
            const Mask& mask = std::nullopt);
// The variance (standard deviation) of the masked-in elements with divisor
// count - correction, clamped at 0; integer inputs give float32.
Tensor var(const Tensor& input,
           IntArrayRef dim = {},
           double correction = 1,
           bool keepdim = false,
           std::optional<ScalarType> dtype = std::nullopt,
           const Mask& mask = std::nullopt);
Tensor std_dev(const Tensor& input,
               IntArrayRef dim = {},
               double correction = 1,
               bool keepdim = false,
               std::optional<ScalarType> dtype = std::nullopt,
               const Mask& mask = std::nullopt);

// Running sums (products) along dim with masked-out elements read as 0 (1).
Tensor cumsum(const Tensor& input,
              int64_t dim,
              std::optional<ScalarType> dtype = std::nullopt,
              const Mask& mask = std::nullopt);
Tensor cumprod(const Tensor& input,
               int64_t dim,
               std::optional<ScalarType> dtype = std::nullopt,
               const Mask& mask = std::nullopt);
// softmax (log_softmax, softmin) along dim over the masked-in elements: a
// masked-out element gets 0 (-inf), a fully masked-out slice NaN.
Tensor softmax(const Tensor& input,
               int64_t dim,
               std::optional<ScalarType> dtype = std::nullopt,
               const Mask& mask = std::nullopt);
Tensor log_softmax(const Tensor& input,
                   int64_t dim,
                   std::optional<ScalarType> dtype = std::nullopt,
                   const Mask& mask = std::nullopt);
Tensor softmin(const Tensor& input,
               int64_t dim,
               std::optional<ScalarType> dtype = std::nullopt,
               const Mask& mask = std::nullopt);
// input divided by its masked norm of order ord along dim (at least eps);
// masked-out elements give 0.
Tensor normalize(const Tensor& input,
                 double ord,
                 int64_t dim,
                 double eps = 1e-12,
                 std::optional<ScalarType> dtype = std::nullopt,
                 const Mask& mask = std::nullopt);
// logaddexp of the two inputs with masked-out elements read as -inf.
Tensor logaddexp(const Tensor& input,
                 const Tensor& other,
                 std::optional<ScalarType> dtype = std::nullopt,
                 const Mask& input_mask = std::nullopt,
                 const Mask& other_mask = std::nullopt);

}  // namespace stride::masked
