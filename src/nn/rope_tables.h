// The cos and sin tables that rotary_embedding (rope.cpp) takes from its
// callers, checked and brought into the form its kernel rotates by
// (kernels::AngleTables).
#pragma once

#include <memory>

#include "backends/rope_args.h"
#include "stride/tensor.h"

namespace stride::nn::functional::detail {

// Shared by a rotation and the backward that rotates back.
using SharedTables = std::shared_ptr<const kernels::AngleTables>;

// The float64 tables of cos and sin tensors (T, D/2) for x (..., T, D);
// throws a ShapeError naming `op` when they do not fit x.
SharedTables checked_tables(const char* op, const Tensor& x, const Tensor& cos, const Tensor& sin);

}  // namespace stride::nn::functional::detail
