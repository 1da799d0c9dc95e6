#include "stride/device.h"

#include <charconv>

#include "core/check.h"

namespace stride {

namespace {

DeviceType parse_device_type(std::string_view kind, std::string_view spec) {
  if (kind == "cpu") return DeviceType::CPU;
  if (kind == "cuda") return DeviceType::CUDA;
  if (kind == "meta") return DeviceType::Meta;
  throw DeviceError(detail::str_cat(
      "[Device] expected \"cpu\", \"cuda\", \"cuda:N\" or \"meta\"; got \"", spec, "\"."));
}

thread_local Device thread_default_device(DeviceType::CPU);

}  // namespace

Device default_device() {
  return thread_default_device;
}

void set_default_device(Device device) {
  thread_default_device = device;
}

const char* device_type_name(DeviceType type) {
  switch (type) {
    case DeviceType::CPU:
      return "cpu";
    case DeviceType::CUDA:
      return "cuda";
    case DeviceType::Meta:
      return "meta";
  }
  return "unknown";
}

Device::Device(std::string_view spec) : type_(DeviceType::CPU), index_(0) {
  const auto colon = spec.find(':');
  type_ = parse_device_type(spec.substr(0, colon), spec);
  if (colon != std::string_view::npos) {
    std::string_view num = spec.substr(colon + 1);
    auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), index_);
    STRIDE_CHECK(ec == std::errc() && ptr == num.data() + num.size() && index_ >= 0, DeviceError,
                 "[Device] bad device index in \"", spec, "\".");
    STRIDE_CHECK(type_ == DeviceType::CUDA || index_ == 0, DeviceError, "[Device] the ",
                 device_type_name(type_), " device has no index other than 0; got \"", spec, "\".");
  }
}

std::string Device::str() const {
  if (type_ == DeviceType::CUDA) return "cuda:" + std::to_string(index_);
  return device_type_name(type_);
}

}  // namespace stride
