// Uninitialised tensors: the factories that only allocate. They live in core
// because core itself needs them (TensorIter allocates outputs); every other
// factory fills memory with a kernel and lives in ops.h, which includes this.
#pragma once

#include <vector>

#include "stride/tensor.h"

namespace stride {

Tensor empty(IntArrayRef shape, TensorOptions options = {});
Tensor empty_strided(IntArrayRef shape, IntArrayRef strides, TensorOptions options = {});
// Uninitialised contiguous tensors of the given shapes carved out of one
// allocation, in order, each 64-byte aligned. Each has a storage of its own
// (so its own version counter, as from empty()); the allocation lives until
// the last of them is gone. One allocation of 2 MiB or more is backed by
// huge pages (Note [Huge pages] in src/core/allocator.cpp), which tensors
// allocated one by one under that size never are: for weights streamed
// whole (Module::pack_parameters).
std::vector<Tensor> empty_packed(const std::vector<DimVector>& shapes, TensorOptions options = {});
Tensor empty_like(const Tensor& t);

}  // namespace stride
