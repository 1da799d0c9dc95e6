// The cos and sin tables that rotary_embedding (rope.cpp) and rotary_attention
// (attention.cpp) take from their callers, checked and brought into the form
// their kernels rotate by (kernels::AngleTables). Two steps, as
// rotary_attention checks its tables before it knows whether its fused
// kernel, the only one of its paths that reads the values, runs.
#pragma once

#include <memory>

#include "backends/rope_args.h"
#include "stride/tensor.h"

namespace stride::nn::functional::detail {

// Shared by a rotation and the backward that rotates back.
using SharedTables = std::shared_ptr<const kernels::AngleTables>;

// Throws a ShapeError naming `op` when cos and sin are not floating tables
// (T, D/2) for x (..., T, D), and a DeviceError when they are not on x's
// device.
void check_tables(const char* op, const Tensor& x, const Tensor& cos, const Tensor& sin);

// The values of tables that passed check_tables, in float64 (none on meta,
// where nothing is rotated).
SharedTables float64_tables(const Tensor& cos, const Tensor& sin);

}  // namespace stride::nn::functional::detail
