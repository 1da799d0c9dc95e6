// Dense layouts that new memory can reproduce (PyTorch's preserve_format).
#pragma once

#include "stride/tensor.h"

namespace stride::detail {

// True when t's elements tile one block of memory exactly, in some order of
// its dims (contiguous, transposed, permuted, at any offset); false for an
// empty t.
bool is_non_overlapping_and_dense(const Tensor& t);

// A new uninitialised tensor of t's shape with `options`: with t's strides
// when t is non-overlapping and dense, so that t and it are walked in one
// pass together; else row-major.
Tensor empty_preserving_strides(const Tensor& t, TensorOptions options);

}  // namespace stride::detail
