// The factories that only allocate (factory.h).
#include "stride/factory.h"

#include "core/check.h"
#include "core/tensor_impl_utils.h"

namespace stride {

namespace {

void check_shape(IntArrayRef shape, const char* op, ScalarType dtype) {
  for (int64_t s : shape) {
    STRIDE_CHECK(s >= 0, ShapeError, "[", op, "] sizes must be non-negative; got ",
                 shape_str(shape), ".");
  }
  checked_numel(shape, op, element_size(dtype));
}

}  // namespace

Tensor empty(IntArrayRef shape, TensorOptions options) {
  check_shape(shape, "empty", options.dtype());
  const size_t nbytes = size_t(numel_of(shape)) * element_size(options.dtype());
  auto storage = std::make_shared<StorageImpl>(nbytes, options.device());
  return detail::make_tensor(std::move(storage), options.dtype(), shape, contiguous_strides(shape),
                             0);
}

std::vector<Tensor> empty_packed(const std::vector<DimVector>& shapes, TensorOptions options) {
  auto aligned = [](size_t n) { return (n + kCpuAlignment - 1) / kCpuAlignment * kCpuAlignment; };
  size_t total = 0;
  for (const DimVector& shape : shapes) {
    check_shape(shape, "empty_packed", options.dtype());
    total += aligned(size_t(numel_of(shape)) * element_size(options.dtype()));
  }
  const Storage block = std::make_shared<StorageImpl>(total, options.device());
  std::vector<Tensor> out;
  size_t offset = 0;
  for (const DimVector& shape : shapes) {
    const size_t nbytes = size_t(numel_of(shape)) * element_size(options.dtype());
    // The tensor's own storage over its part of the block holds the block.
    char* const base = static_cast<char*>(block->data());  // null on meta
    auto storage = std::make_shared<StorageImpl>(
        base == nullptr ? nullptr : base + offset, nbytes, options.device(),
        [](void*, void* ctx) { delete static_cast<Storage*>(ctx); }, new Storage(block));
    out.push_back(detail::make_tensor(std::move(storage), options.dtype(), shape,
                                      contiguous_strides(shape), 0));
    offset += aligned(nbytes);
  }
  return out;
}

Tensor empty_strided(IntArrayRef shape, IntArrayRef strides, TensorOptions options) {
  check_shape(shape, "empty_strided", options.dtype());
  STRIDE_CHECK(shape.size() == strides.size(), ShapeError, "[empty_strided] sizes ",
               shape_str(shape), " and strides ", shape_str(strides), " differ in length.");
  int64_t extent = numel_of(shape) == 0 ? 0 : 1;
  for (size_t i = 0; i < shape.size() && extent > 0; ++i) {
    STRIDE_CHECK(strides[i] >= 0, ValueError, "[empty_strided] negative stride in ",
                 shape_str(strides), ".");
    int64_t span = 0;
    STRIDE_CHECK(!__builtin_mul_overflow(shape[i] - 1, strides[i], &span) &&
                     !__builtin_add_overflow(extent, span, &extent),
                 ShapeError, "[empty_strided] sizes ", shape_str(shape), " with strides ",
                 shape_str(strides), " span more elements than int64 can count.");
  }
  checked_numel({extent}, "empty_strided", element_size(options.dtype()));
  auto storage = std::make_shared<StorageImpl>(size_t(extent) * element_size(options.dtype()),
                                               options.device());
  return detail::make_tensor(std::move(storage), options.dtype(), shape, strides, 0);
}

Tensor empty_like(const Tensor& t) {
  return empty(t.sizes(), t.options());
}

}  // namespace stride
