// Where a tensor's memory lives. Only the CPU has kernels today; CUDA is named
// so that code can say what it wants and get a clear error.
#pragma once

#include <string>
#include <string_view>

namespace stride {

enum class DeviceType : uint8_t { CPU, CUDA };

class Device {
 public:
  Device(DeviceType type = DeviceType::CPU, int index = 0)  // NOLINT: kCPU converts
      : type_(type), index_(type == DeviceType::CPU ? 0 : index) {}
  explicit Device(std::string_view spec);  // "cpu", "cuda", "cuda:1"

  DeviceType type() const { return type_; }
  int index() const { return index_; }
  bool is_cpu() const { return type_ == DeviceType::CPU; }
  bool is_cuda() const { return type_ == DeviceType::CUDA; }
  std::string str() const;

  friend bool operator==(const Device&, const Device&) = default;

 private:
  DeviceType type_;
  int index_;
};

inline constexpr DeviceType kCPU = DeviceType::CPU;
inline constexpr DeviceType kCUDA = DeviceType::CUDA;

}  // namespace stride
