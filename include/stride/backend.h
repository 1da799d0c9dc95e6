// What core needs from a device: memory, copies, a generator, and a way to
// wait for queued work. One DeviceBackend per device type.
//
// Note [Device backends]
// ~~~~~~~~~~~~~~~~~~~~~~
// Storage allocates through its device's backend, Tensor::to(Device) copies
// through it, and manual_seed() seeds every backend's generators. The CPU
// backend (the caching allocator of allocator.h, memcpy, the process's
// default generator, a synchronise that has nothing to wait for) and the meta
// backend (no memory: an allocation returns no pointer and only counts its
// bytes, so that a model built on meta reports what it would need) are part
// of core and always present. A backend built as a separate part of the
// library (CUDA) registers itself with register_device_backend when the
// library loads; asking for a device whose backend is missing is a
// DeviceError that says so. Kernels are not reached through this interface:
// each op dispatches on its operands' device (docs/design.md).
#pragma once

#include <cstddef>

#include "stride/device.h"
#include "stride/generator.h"

namespace stride {

// Memory owned by a backend: `deleter(data, ctx)` gives it back.
struct DataPtr {
  void* data = nullptr;
  void* ctx = nullptr;
  void (*deleter)(void* data, void* ctx) = nullptr;
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  virtual DeviceType type() const = 0;

  // Uninitialised memory of at least `nbytes` on `device`.
  virtual DataPtr allocate(size_t nbytes, Device device) = 0;
  // False for meta, whose tensors have no data to read or write.
  virtual bool has_data() const { return true; }
  // Copies `nbytes` contiguous bytes; one side is on this backend's device
  // type, the other on it or on the CPU.
  virtual void copy_bytes(
      void* dst, Device dst_device, const void* src, Device src_device, size_t nbytes) = 0;
  // Waits until the work queued on `device` has finished. The CPU's kernels
  // finish before they return, so there it does nothing.
  virtual void synchronize(Device device) { (void)device; }
  // The generator random ops on `device` use when given none.
  virtual Generator& default_generator(Device device) = 0;
  // Restarts every generator of this backend from `seed` (manual_seed).
  virtual void manual_seed(uint64_t seed) = 0;
};

// The backend of `device`'s type; throws DeviceError naming the device when
// this build of stride has none.
DeviceBackend& device_backend(Device device);
bool has_device_backend(DeviceType type);
// For backends outside core; the object must outlive every tensor on it.
void register_device_backend(DeviceBackend* backend);

// Waits for the work queued on `device` (a no-op on the CPU and on meta).
void synchronize(Device device = Device(kCPU));
// The default generator of a device: default_generator() for the CPU.
Generator& default_generator(Device device);

}  // namespace stride
