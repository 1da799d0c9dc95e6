// Helpers shared by the convolutions, poolings and interpolate
// (src/nn/conv.cpp, pooling.cpp, interpolate.cpp): per-dim argument lists,
// batched views and adaptive pooling's windows.
#pragma once

#include <array>
#include <cstdint>
#include <utility>

#include "stride/tensor.h"

namespace stride::nn::functional::detail {

// A size argument for `dims` spatial dims (1 or 2) as (height, width): one
// value for all, or one per dim; ValueError naming the op and the argument
// otherwise, or when a value is below `min`. The 1-d ops run as 2-d ones on
// (N, C, 1, L), so for them the height is `flat` (1 for a kernel, stride or
// dilation, 0 for a padding).
std::array<int64_t, 2> spatial_arg(
    IntArrayRef values, int64_t dims, int64_t min, int64_t flat, const char* op, const char* name);

// x (C, *spatial) as (1, C, *spatial), or x itself when batched (N, C,
// *spatial), both as 2-d (a 1-d op's (N, C, L) as (N, C, 1, L)); ShapeError
// naming the op for any other rank. `batched` says which x was.
Tensor batched_input(const Tensor& x, int64_t dims, const char* op, bool& batched);

// The batched result of an op on batched_input's x, unbatched again when x was.
Tensor unbatched_output(const Tensor& y, bool batched);

// Adaptive pooling's window i of n elements pooled to `out`:
// [floor(i n / out), ceil((i + 1) n / out)).
std::pair<int64_t, int64_t> adaptive_window(int64_t i, int64_t n, int64_t out);
// The (out, n) float64 matrix averaging each window: row i is 1 / its
// length over window i (adaptive_avg_pool, interpolate's 'area').
Tensor averaging_matrix(int64_t n, int64_t out);

}  // namespace stride::nn::functional::detail
