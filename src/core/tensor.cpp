#include "stride/tensor.h"

#include "core/check.h"
#include "core/tensor_impl_utils.h"
#include "stride/backend.h"

namespace stride {

namespace {

bool compute_contiguous(IntArrayRef sizes, IntArrayRef strides) {
  int64_t expected = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 0) return true;
    if (sizes[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= sizes[i];
  }
  return true;
}

}  // namespace

TensorImpl::TensorImpl(Storage storage,
                       ScalarType dtype,
                       IntArrayRef sizes,
                       IntArrayRef strides,
                       int64_t storage_offset)
    : storage_(std::move(storage)),
      sizes_(sizes.begin(), sizes.end()),
      strides_(strides.begin(), strides.end()),
      storage_offset_(storage_offset),
      numel_(numel_of(sizes)),
      dtype_(dtype),
      is_contiguous_(compute_contiguous(sizes, strides)) {
  STRIDE_ASSERT(sizes.size() == strides.size(), "sizes and strides differ in length");
}

void TensorImpl::set_geometry(Storage storage,
                              IntArrayRef sizes,
                              IntArrayRef strides,
                              int64_t storage_offset) {
  STRIDE_ASSERT(sizes.size() == strides.size(), "sizes and strides differ in length");
  storage_ = std::move(storage);
  sizes_ = DimVector(sizes.begin(), sizes.end());
  strides_ = DimVector(strides.begin(), strides.end());
  storage_offset_ = storage_offset;
  numel_ = numel_of(sizes);
  is_contiguous_ = compute_contiguous(sizes, strides);
}

void TensorImpl::set_data(const TensorImpl& src) {
  set_geometry(src.storage_, src.sizes_, src.strides_, src.storage_offset_);
  dtype_ = src.dtype_;
  is_view_ = false;
}

int64_t Tensor::size(int64_t d) const {
  return sizes()[size_t(wrap_dim(d, dim(), "size"))];
}

int64_t Tensor::stride(int64_t d) const {
  return strides()[size_t(wrap_dim(d, dim(), "stride"))];
}

void Tensor::check_dtype(ScalarType expected, const char* op) const {
  STRIDE_CHECK(dtype() == expected, DTypeError, "[", op, "] the tensor is ", to_string(dtype()),
               " but ", to_string(expected), " was requested. Hint: convert with .to(",
               to_string(expected), ") first.");
}

Scalar Tensor::item() const {
  STRIDE_CHECK(defined(), ValueError, "[item] the tensor is undefined.");
  STRIDE_CHECK(numel() == 1, ShapeError, "[item] expected a tensor with one element; got shape ",
               shape_str(sizes()), " with ", numel(), " elements.");
  STRIDE_CHECK(device_backend(device()).has_data(), DeviceError, "[item] a ", device().str(),
               " tensor has no value to read. Hint: compute on the cpu device.");
  // The element's bytes, brought to the host first from a device's memory.
  alignas(8) unsigned char host[8];
  const void* p = data_ptr();
  if (!device().is_cpu()) {
    device_backend(device()).copy_bytes(host, Device(kCPU), p, device(), element_size());
    p = host;
  }
  switch (dtype()) {
    case kBool:
      return Scalar(*static_cast<const bool*>(p));
    case kUInt8:
      return Scalar(int64_t(*static_cast<const uint8_t*>(p)));
    case kInt32:
      return Scalar(int64_t(*static_cast<const int32_t*>(p)));
    case kInt64:
      return Scalar(*static_cast<const int64_t*>(p));
    case kFloat16:
      return Scalar(double(float(*static_cast<const Half*>(p))));
    case kBFloat16:
      return Scalar(double(float(*static_cast<const BFloat16*>(p))));
    case kFloat32:
      return Scalar(double(*static_cast<const float*>(p)));
    case kFloat64:
      return Scalar(*static_cast<const double*>(p));
    case kComplex64:
      return Scalar(*static_cast<const std::complex<float>*>(p));
    case kComplex128:
      return Scalar(*static_cast<const std::complex<double>*>(p));
  }
  STRIDE_ASSERT(false, "unknown dtype");
}

}  // namespace stride
