// The CUDA device backend (Note [Device backends] in include/stride/backend.h)
// and stride::cuda's queries (include/stride/cuda.h).
#include <cuda_runtime.h>

#include <deque>
#include <mutex>
#include <string>

#include "backends/cuda/allocator.h"
#include "backends/cuda/runtime.h"
#include "stride/backend.h"
#include "stride/cuda.h"

namespace stride {

namespace cuda_detail {

namespace {

// The device count, or why there is none, asked of the driver once.
struct Devices {
  int count = 0;
  std::string reason;
};

const Devices& devices() {
  static const Devices d = [] {
    Devices r;
    const cudaError_t e = cudaGetDeviceCount(&r.count);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      r.count = 0;
      r.reason = std::string("the CUDA driver reports no usable device: ") + cudaGetErrorString(e);
    } else if (r.count == 0) {
      r.reason = "this machine has no CUDA device";
    }
    return r;
  }();
  return d;
}

void check_device(Device device, const char* op) {
  STRIDE_CHECK(devices().count > 0, DeviceError, "[", op, "] cannot use ", device.str(), ": ",
               devices().reason, ".");
  STRIDE_CHECK(device.index() < devices().count, DeviceError, "[", op, "] no device ", device.str(),
               ": this machine has ", devices().count, " CUDA device(s).");
}

class CudaBackend final : public DeviceBackend {
 public:
  DeviceType type() const override { return kCUDA; }

  DataPtr allocate(size_t nbytes, Device device) override {
    check_device(device, "cuda allocate");
    return cuda_allocate(nbytes, device.index());
  }

  void copy_bytes(
      void* dst, Device dst_device, const void* src, Device src_device, size_t nbytes) override {
    if (nbytes == 0) return;
    const Device gpu = dst_device.is_cuda() ? dst_device : src_device;
    check_device(gpu, "copy");
    DeviceGuard guard(gpu.index());
    // Synchronous for the host: the bytes are in place when it returns
    // (pinned buffers and non_blocking copies are the next step).
    STRIDE_CUDA_CHECK(cudaMemcpy(dst, src, nbytes, cudaMemcpyDefault), "copy");
  }

  void synchronize(Device device) override {
    check_device(device, "synchronize");
    DeviceGuard guard(device.index());
    STRIDE_CUDA_CHECK(cudaDeviceSynchronize(), "synchronize");
  }

  Generator& default_generator(Device device) override {
    check_device(device, "generator");
    std::lock_guard lock(mutex_);
    while (generators_.size() <= size_t(device.index())) generators_.emplace_back(seed_);
    return generators_[size_t(device.index())];
  }

  void manual_seed(uint64_t seed) override {
    std::lock_guard lock(mutex_);
    seed_ = seed;
    for (Generator& g : generators_) g.manual_seed(seed);
  }

 private:
  std::mutex mutex_;
  std::deque<Generator> generators_;  // one per device used; a deque keeps them in place
  uint64_t seed_ = 0x5eed;
};

// Registered when the library loads; never destroyed (tensors on the GPU may
// be freed during exit).
[[maybe_unused]] const bool registered = [] {
  register_device_backend(new CudaBackend);
  return true;
}();

}  // namespace

}  // namespace cuda_detail

namespace cuda {

bool is_available() {
  return cuda_detail::devices().count > 0;
}

int device_count() {
  return cuda_detail::devices().count;
}

std::string unavailable_reason() {
  return cuda_detail::devices().reason;
}

void synchronize(int device) {
  if (!is_available()) return;
  if (device < 0) STRIDE_CUDA_CHECK(cudaGetDevice(&device), "synchronize");
  stride::synchronize(Device(kCUDA, device));
}

namespace {

int checked(int device) {
  STRIDE_CHECK(device >= 0 && device < std::max(device_count(), 1), DeviceError,
               "[cuda] no device cuda:", device, ".");
  return device;
}

}  // namespace

size_t memory_allocated(int device) {
  return cuda_detail::cuda_memory_stats(checked(device)).allocated;
}
size_t max_memory_allocated(int device) {
  return cuda_detail::cuda_memory_stats(checked(device)).peak_allocated;
}
size_t memory_reserved(int device) {
  return cuda_detail::cuda_memory_stats(checked(device)).reserved;
}
void reset_peak_memory_stats(int device) {
  cuda_detail::cuda_reset_peak(checked(device));
}
void empty_cache() {
  if (is_available()) cuda_detail::cuda_empty_cache();
}

}  // namespace cuda
}  // namespace stride
