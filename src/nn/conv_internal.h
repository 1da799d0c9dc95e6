// Helpers shared by the convolutions, poolings and interpolate
// (src/nn/conv.cpp, pooling.cpp, interpolate.cpp): per-dim argument lists,
// batched views and adaptive pooling's windows.
#pragma once

#include <array>
#include <cstdint>
#include <utility>

#include "stride/tensor.h"

namespace stride::nn::functional::detail {

// The spatial dims (depth, height, width) every convolution and pooling
// runs on: a 2-d op runs as a 3-d one of depth 1, a 1-d op of height 1 too.
using Triple = std::array<int64_t, 3>;

// A size argument for `dims` spatial dims (1 to 3) as (depth, height,
// width): one value for all, or one per dim; ValueError naming the op and the
// argument otherwise, or when a value is below `min`. The dims a 1- or 2-d op
// does not have are `flat` (1 for a kernel, stride or dilation, 0 for a
// padding).
Triple spatial_arg(
    IntArrayRef values, int64_t dims, int64_t min, int64_t flat, const char* op, const char* name);

// x (C, *spatial) as (1, C, *spatial), or x itself when batched (N, C,
// *spatial), both viewed as 3-d (N, C, D, H, W) (a 2-d op's (N, C, H, W) as
// (N, C, 1, H, W)); ShapeError naming the op for any other rank. `batched`
// says which x was.
Tensor batched_input(const Tensor& x, int64_t dims, const char* op, bool& batched);

// The batched 3-d result of a `dims`-d op on batched_input's x, with the
// input's rank again.
Tensor unbatched_output(const Tensor& y, int64_t dims, bool batched);

// The blocks of a batched 3-d x (N, C, D, H, W), unpadded, as (N, C *
// kernel elements, blocks) (unfold generalised to volumes, through the
// apply path as Op::unfold); ShapeError naming the op when there are none.
Tensor volume_blocks(const Tensor& x,
                     const Triple& kernel,
                     const Triple& dilation,
                     const Triple& stride,
                     int64_t dims,
                     const char* op);

// Adaptive pooling's window i of n elements pooled to `out`:
// [floor(i n / out), ceil((i + 1) n / out)).
std::pair<int64_t, int64_t> adaptive_window(int64_t i, int64_t n, int64_t out);
// The (out, n) float64 matrix averaging each window: row i is 1 / its
// length over window i (adaptive_avg_pool, interpolate's 'area').
Tensor averaging_matrix(int64_t n, int64_t out);

}  // namespace stride::nn::functional::detail
