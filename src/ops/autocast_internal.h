// Autocast internals shared by the matmul-class ops (include/stride/autocast.h).
#pragma once

#include "stride/tensor.h"

namespace stride::detail {

// The bfloat16 copy of a float32 parameter for a matmul under autocast:
// cached for the outermost AutocastGuard when t is a leaf that requires grad,
// converted afresh otherwise. Returned as autocast_bf16 returns it.
Tensor autocast_bf16_weight(const Tensor& t);

// t (float32) rounded to a new bfloat16 tensor, outside the graph: in t's
// layout when it is dense, with t's broadcast (stride 0) dims, contiguous
// otherwise.
Tensor autocast_bf16(const Tensor& t);

}  // namespace stride::detail
