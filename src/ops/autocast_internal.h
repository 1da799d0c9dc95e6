// Autocast internals shared by the matmul-class ops (include/stride/autocast.h).
#pragma once

#include "stride/tensor.h"

namespace stride::detail {

// A float32 parameter's cast for a matmul under autocast (dtype bfloat16,
// or float32 holding the roundings: Note [Autocast on the float32 GEMM] in
// ops/apply.h): cached for the outermost AutocastGuard when t is a leaf that
// requires grad, converted afresh otherwise. Returned as autocast_round
// returns it.
Tensor autocast_weight(const Tensor& t, ScalarType dtype);

// t (float32) rounded to bfloat16 in a new tensor of `dtype` (bfloat16, or
// float32 holding the rounded values), outside the graph: in t's layout when
// it is dense, with t's broadcast (stride 0) dims, contiguous otherwise.
Tensor autocast_round(const Tensor& t, ScalarType dtype);

}  // namespace stride::detail
