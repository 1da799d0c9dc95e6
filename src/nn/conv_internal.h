// Helpers shared by the convolutions and poolings (src/nn/conv.cpp,
// src/nn/pooling.cpp): per-dim argument lists and batched views.
#pragma once

#include <array>
#include <cstdint>

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

}  // namespace stride::nn::functional::detail
