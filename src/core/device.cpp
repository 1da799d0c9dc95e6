#include "stride/device.h"

#include <charconv>

#include "core/check.h"

namespace stride {

Device::Device(std::string_view spec) : type_(DeviceType::CPU), index_(0) {
  auto colon = spec.find(':');
  std::string_view kind = spec.substr(0, colon);
  if (kind == "cpu") {
    type_ = DeviceType::CPU;
  } else if (kind == "cuda") {
    type_ = DeviceType::CUDA;
  } else {
    throw DeviceError(
        detail::str_cat("[Device] expected \"cpu\", \"cuda\" or \"cuda:N\"; got \"", spec, "\"."));
  }
  if (colon != std::string_view::npos) {
    std::string_view num = spec.substr(colon + 1);
    auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), index_);
    STRIDE_CHECK(ec == std::errc() && ptr == num.data() + num.size() && index_ >= 0, DeviceError,
                 "[Device] bad device index in \"", spec, "\".");
    STRIDE_CHECK(type_ == DeviceType::CUDA || index_ == 0, DeviceError,
                 "[Device] the CPU has no index other than 0; got \"", spec, "\".");
  }
}

std::string Device::str() const {
  return type_ == DeviceType::CPU ? "cpu" : "cuda:" + std::to_string(index_);
}

}  // namespace stride
