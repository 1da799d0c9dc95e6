// Reductions that other ops and the backward engine build on.
#pragma once

#include "stride/tensor.h"

namespace stride::detail {

// Sums `grad` down to `shape` (the reverse of broadcasting).
Tensor sum_to(const Tensor& grad, IntArrayRef shape);

}  // namespace stride::detail
