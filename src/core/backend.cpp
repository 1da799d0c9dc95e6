#include "stride/backend.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>

#include "core/check.h"
#include "stride/allocator.h"

namespace stride {

namespace {

// The block's capacity travels in the deleter's context pointer.
void free_cpu_block(void* data, void* capacity) {
  detail::cpu_free(data, reinterpret_cast<uintptr_t>(capacity));
}

class CpuBackend final : public DeviceBackend {
 public:
  DeviceType type() const override { return kCPU; }
  DataPtr allocate(size_t nbytes, Device) override {
    size_t capacity = 0;
    void* data = detail::cpu_allocate(nbytes, &capacity);
    return {data, reinterpret_cast<void*>(uintptr_t(capacity)), free_cpu_block};
  }
  void copy_bytes(void* dst, Device, const void* src, Device, size_t nbytes) override {
    if (nbytes > 0) std::memcpy(dst, src, nbytes);
  }
  Generator& default_generator(Device) override { return stride::default_generator(); }
  void manual_seed(uint64_t seed) override { stride::default_generator().manual_seed(seed); }
};

// Note [Meta memory]: meta storages have no pointer; their sizes are counted
// so that a program run on meta learns the memory it would hold at its peak.
std::atomic<size_t> meta_allocated{0};
std::atomic<size_t> meta_peak{0};

void note_meta_allocated(size_t nbytes) {
  const size_t now = meta_allocated.fetch_add(nbytes, std::memory_order_relaxed) + nbytes;
  size_t peak = meta_peak.load(std::memory_order_relaxed);
  while (now > peak && !meta_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

void free_meta_block(void*, void* nbytes) {
  meta_allocated.fetch_sub(reinterpret_cast<uintptr_t>(nbytes), std::memory_order_relaxed);
}

class MetaBackend final : public DeviceBackend {
 public:
  DeviceType type() const override { return kMeta; }
  DataPtr allocate(size_t nbytes, Device) override {
    note_meta_allocated(nbytes);
    return {nullptr, reinterpret_cast<void*>(uintptr_t(nbytes)), free_meta_block};
  }
  bool has_data() const override { return false; }
  void copy_bytes(void*, Device dst_device, const void*, Device src_device, size_t) override {
    throw DeviceError(detail::str_cat("[copy] cannot copy from ", src_device.str(), " to ",
                                      dst_device.str(), ": meta tensors have no data."));
  }
  Generator& default_generator(Device) override { return generator_; }
  void manual_seed(uint64_t seed) override { generator_.manual_seed(seed); }

 private:
  Generator generator_;
};

// Never destroyed, like the CPU allocator: storages freed during static
// destruction still find their backend.
std::array<DeviceBackend*, kNumDeviceTypes>& backends() {
  static auto* table =
      new std::array<DeviceBackend*, kNumDeviceTypes>{new CpuBackend(), nullptr, new MetaBackend()};
  return *table;
}

}  // namespace

MetaMemoryStats meta_memory_stats() {
  return {meta_allocated.load(std::memory_order_relaxed),
          meta_peak.load(std::memory_order_relaxed)};
}

void reset_meta_peak_memory() {
  meta_peak.store(meta_allocated.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

bool has_device_backend(DeviceType type) {
  return backends()[size_t(type)] != nullptr;
}

DeviceBackend& device_backend(Device device) {
  DeviceBackend* backend = backends()[size_t(device.type())];
  STRIDE_CHECK(
      backend != nullptr, DeviceError, "[device] cannot use ", device.str(),
      ": this build of stride has no ", device_type_name(device.type()),
      " backend. Hint: use the cpu device",
      device.is_cuda() ? ", or build stride with CUDA (a machine with the CUDA toolkit)" : "", ".");
  return *backend;
}

void register_device_backend(DeviceBackend* backend) {
  STRIDE_ASSERT(backend != nullptr, "register_device_backend: null backend");
  backends()[size_t(backend->type())] = backend;
}

void synchronize(Device device) {
  device_backend(device).synchronize(device);
}

Generator& default_generator(Device device) {
  return device_backend(device).default_generator(device);
}

void manual_seed(uint64_t seed) {
  for (DeviceBackend* backend : backends()) {
    if (backend != nullptr) backend->manual_seed(seed);
  }
}

}  // namespace stride
