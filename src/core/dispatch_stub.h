// A kernel per device for one op: the seam between an op's definition and
// the backends that run it.
//
// Note [Dispatch stubs]
// ~~~~~~~~~~~~~~~~~~~~~
// An op (src/ops, src/nn, src/optim) computes its outputs' shapes, dtypes and
// strides, allocates them on its operands' device, records autograd, and then
// calls its stub with that device: `rms_norm_forward_stub(x.device(), ...)`.
// Each backend registers its kernel for the stub in its own files
// (STRIDE_REGISTER_KERNEL in src/backends/cpu/*.cpp), so the op never names a
// backend and a new backend adds kernels without touching the op. On meta a
// stub runs nothing: the op's shape rule has already made the outputs, and
// that is the whole op there. A device whose backend did not register a
// kernel is a DeviceError naming the op and the device.
//
// A CPU kernel is registered once per instruction-set level its file was
// compiled for (Note [CPU capabilities] in src/backends/cpu/capability.h):
// the stub keeps the best level at or below cpu_capability(), so a call
// costs what it did with one kernel, and a level above the CPU's never runs.
//
// Stubs are constant-initialised (constexpr constructor, zeroed table), so a
// registration running at load time always finds its stub, in whatever order
// the library's files initialise. In a static libstride, link it whole
// (--whole-archive): a backend file that only registers kernels is otherwise
// dropped by the linker.
#pragma once

#include <array>
#include <type_traits>
#include <utility>

#include "core/check.h"
#include "stride/cpu_capability.h"
#include "stride/device.h"

namespace stride::detail {

template <class Fn>
class DispatchStub;

template <class R, class... Args>
class DispatchStub<R (*)(Args...)> {
 public:
  using Kernel = R (*)(Args...);

  explicit constexpr DispatchStub(const char* name) : name_(name) {}
  DispatchStub(const DispatchStub&) = delete;
  DispatchStub& operator=(const DispatchStub&) = delete;

  void register_kernel(DeviceType type, Kernel kernel) {
    STRIDE_ASSERT(type != DeviceType::CPU, "[", name_,
                  "] CPU kernels register with their level (register_cpu_kernel)");
    kernels_[size_t(type)] = kernel;
  }

  // `kernel`, compiled for `level`, replaces a lower level's and is ignored
  // above the level in use.
  void register_cpu_kernel(CpuCapability level, Kernel kernel) {
    if (level > cpu_capability()) return;
    const size_t cpu = size_t(DeviceType::CPU);
    if (kernels_[cpu] != nullptr && level < cpu_level_) return;
    kernels_[cpu] = kernel;
    cpu_level_ = level;
  }
  bool has_kernel(DeviceType type) const { return kernels_[size_t(type)] != nullptr; }

  template <class... CallArgs>
  R operator()(Device device, CallArgs&&... args) const {
    if (device.is_meta()) {
      if constexpr (std::is_void_v<R>) {
        return;
      } else {
        return R{};
      }
    }
    const Kernel kernel = kernels_[size_t(device.type())];
    STRIDE_CHECK(kernel != nullptr, DeviceError, "[", name_, "] has no kernel for ", device.str(),
                 " in this build of stride. Hint: use the cpu device.");
    return kernel(std::forward<CallArgs>(args)...);
  }

 private:
  const char* name_;
  std::array<Kernel, kNumDeviceTypes> kernels_{};
  CpuCapability cpu_level_ = CpuCapability::Default;
};

}  // namespace stride::detail

// Registers `kernel` as `stub`'s kernel for DeviceType::device when the
// library loads; in a backend's source file, at namespace scope.
#define STRIDE_REGISTER_KERNEL(stub, device, kernel)                                             \
  STRIDE_REGISTER_KERNEL_AS(STRIDE_CONCAT(stride_kernel_registered_, __COUNTER__), stub, device, \
                            kernel)
#define STRIDE_CONCAT(a, b) STRIDE_CONCAT_(a, b)
#define STRIDE_CONCAT_(a, b) a##b
#define STRIDE_REGISTER_KERNEL_AS(flag, stub, device, kernel)   \
  [[maybe_unused]] static const bool flag = [] {                \
    stub.register_kernel(::stride::DeviceType::device, kernel); \
    return true;                                                \
  }()
