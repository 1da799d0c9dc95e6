// NVIDIA GPUs: what torch.cuda answers. Tensors live on Device("cuda:N")
// (device.h) and move there with Tensor::to / Module::to; the memory is the
// CUDA backend's caching allocator's (Note [The CUDA caching allocator] in
// src/backends/cuda/allocator.cpp).
//
// A build without the CUDA backend (no nvcc when it was configured), or a
// machine without a GPU or driver, has no CUDA device: is_available() is
// false, device_count() 0, and a tensor asked for on cuda is a DeviceError
// that says why.
#pragma once

#include <cstddef>
#include <string>

namespace stride::cuda {

bool is_available();
int device_count();
// Why there is no CUDA device (the build, or the driver's error); empty when
// there is one.
std::string unavailable_reason();

// Waits for the work queued on `device` (-1: the current device).
void synchronize(int device = -1);

// Memory statistics of the caching allocator on `device`, as torch.cuda's:
// bytes in live tensors, their peak since the start or the last reset, and
// bytes held from the driver (live and cached).
size_t memory_allocated(int device = 0);
size_t max_memory_allocated(int device = 0);
size_t memory_reserved(int device = 0);
void reset_peak_memory_stats(int device = 0);
// Returns the cached (free) blocks of every device to the driver.
void empty_cache();

}  // namespace stride::cuda
