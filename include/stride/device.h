// Where a tensor's memory lives: the CPU, a CUDA GPU, or `meta`, a device
// with no memory at all (as PyTorch's): a meta tensor has a shape, a dtype
// and strides, and every op on it computes its outputs' shapes, dtypes and
// strides and nothing else. Each device type has a backend (backend.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace stride {

enum class DeviceType : uint8_t { CPU, CUDA, Meta };
inline constexpr int kNumDeviceTypes = 3;

class Device {
 public:
  Device(DeviceType type = DeviceType::CPU, int index = 0)  // NOLINT: kCPU converts
      : type_(type), index_(type == DeviceType::CUDA ? index : 0) {}
  explicit Device(std::string_view spec);  // "cpu", "cuda", "cuda:1", "meta"

  DeviceType type() const { return type_; }
  int index() const { return index_; }
  bool is_cpu() const { return type_ == DeviceType::CPU; }
  bool is_cuda() const { return type_ == DeviceType::CUDA; }
  bool is_meta() const { return type_ == DeviceType::Meta; }
  std::string str() const;

  friend bool operator==(const Device&, const Device&) = default;

 private:
  DeviceType type_;
  int index_;
};

inline constexpr DeviceType kCPU = DeviceType::CPU;
inline constexpr DeviceType kCUDA = DeviceType::CUDA;
inline constexpr DeviceType kMeta = DeviceType::Meta;

// "cpu", "cuda", "meta"
const char* device_type_name(DeviceType type);

// The device factories use when not given one (TensorOptions' default), per
// thread: the CPU unless set (torch.set_default_device). Building a model
// under DefaultDeviceGuard guard(kMeta) makes every parameter a meta tensor.
Device default_device();
void set_default_device(Device device);

class DefaultDeviceGuard {
 public:
  explicit DefaultDeviceGuard(Device device) : previous_(default_device()) {
    set_default_device(device);
  }
  ~DefaultDeviceGuard() { set_default_device(previous_); }
  DefaultDeviceGuard(const DefaultDeviceGuard&) = delete;
  DefaultDeviceGuard& operator=(const DefaultDeviceGuard&) = delete;

 private:
  Device previous_;
};

}  // namespace stride
