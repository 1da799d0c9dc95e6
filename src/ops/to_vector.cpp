// Tensor::to_vector: reading a tensor's values converts and packs them, which
// takes the copy kernels of ops, so it lives here rather than in core.
#include "core/check.h"
#include "stride/backend.h"
#include "stride/ops.h"

namespace stride {

template <class T>
std::vector<T> Tensor::to_vector() const {
  STRIDE_CHECK(device_backend(device()).has_data(), DeviceError, "[to_vector] a ", device().str(),
               " tensor has no values to read. Hint: compute on the cpu device.");
  Tensor c = to(Device(kCPU)).to(scalar_type_of<T>).contiguous();
  const T* p = static_cast<const T*>(c.data_ptr());
  return std::vector<T>(p, p + c.numel());
}

template std::vector<bool> Tensor::to_vector<bool>() const;
template std::vector<uint8_t> Tensor::to_vector<uint8_t>() const;
template std::vector<int32_t> Tensor::to_vector<int32_t>() const;
template std::vector<int64_t> Tensor::to_vector<int64_t>() const;
template std::vector<float> Tensor::to_vector<float>() const;
template std::vector<double> Tensor::to_vector<double>() const;
template std::vector<Half> Tensor::to_vector<Half>() const;
template std::vector<BFloat16> Tensor::to_vector<BFloat16>() const;
template std::vector<std::complex<float>> Tensor::to_vector<std::complex<float>>() const;
template std::vector<std::complex<double>> Tensor::to_vector<std::complex<double>>() const;

}  // namespace stride
