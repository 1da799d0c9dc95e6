// Helpers shared by the nn functional files (losses, norms): class-index
// target validation and the (rows, C) view of logits.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "stride/nn/functional.h"

namespace stride::nn::functional::detail {

// Class-index targets flattened to rows, checked against C.
struct Targets {
  std::vector<int64_t> values;  // one per row, ignore_index kept as is
  int64_t count = 0;            // rows whose target is not ignore_index
};

// Reads `target` (int64 or int32), checks that every value is in [0, C) or
// equal to ignore_index (IndexError naming the value, its position and C).
// On meta it reads nothing: no values, every row counted.
Targets read_targets(const Tensor& target, int64_t classes, int64_t ignore_index, const char* op);

// What gather-based losses (nll_loss, cross_entropy_reference) pick with, on
// `device`: which of the `rows` rows count (bool (rows)), and each row's
// target with ignored rows as class 0 (int64 (rows, 1)). Shapes only on meta.
std::pair<Tensor, Tensor> target_masks(const Targets& t,
                                       int64_t rows,
                                       int64_t ignore_index,
                                       Device device);

// Checks that `target` has the shape of `input` without its class dim 1
// ((N, C, d1, ...) -> (N, d1, ...); (C) -> ()), and returns `input` with the
// class dim moved last and flattened to (rows, C), contiguous. The moves are
// recorded ops, so gradients flow back to `input`'s layout.
Tensor class_rows(const Tensor& input, const Tensor& target, const char* op);

// The per-row values `rows` (R) reduced as `reduction` asks: None gives
// `target_shape`, Sum the sum, Mean the sum divided by `count` (NaN when 0,
// as PyTorch).
Tensor reduce_rows(const Tensor& rows,
                   IntArrayRef target_shape,
                   Reduction reduction,
                   int64_t count);

const char* reduction_name(Reduction r);

// An elementwise loss reduced: itself (None), its sum or its mean.
Tensor reduce_loss(const Tensor& loss, Reduction reduction);

}  // namespace stride::nn::functional::detail
