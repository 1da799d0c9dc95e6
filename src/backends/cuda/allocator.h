// The CUDA backend's caching allocator (Note [The CUDA caching allocator] in
// allocator.cpp).
#pragma once

#include <cstddef>

#include "stride/backend.h"

namespace stride::cuda_detail {

struct DeviceMemoryStats {
  size_t allocated = 0;            // bytes of live blocks
  size_t peak_allocated = 0;       // the most `allocated` has been since the last reset
  size_t reserved = 0;             // bytes held from the driver: live and cached blocks
  int64_t driver_allocations = 0;  // cudaMalloc calls that succeeded
};

DataPtr cuda_allocate(size_t nbytes, int device);
DeviceMemoryStats cuda_memory_stats(int device);
void cuda_reset_peak(int device);
void cuda_empty_cache();

}  // namespace stride::cuda_detail
