// Internal constructors of tensors and views.
#pragma once

#include <memory>

#include "stride/tensor.h"

namespace stride::detail {

inline Tensor make_tensor(
    Storage storage, ScalarType dtype, IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  return Tensor(std::make_shared<TensorImpl>(std::move(storage), dtype, sizes, strides, offset));
}

// A view of `base`'s storage with new geometry (no copy).
inline Tensor make_view(const Tensor& base,
                        IntArrayRef sizes,
                        IntArrayRef strides,
                        int64_t offset) {
  return make_tensor(base.storage(), base.dtype(), sizes, strides, offset);
}

}  // namespace stride::detail
