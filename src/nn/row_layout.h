// Strided batches of row-major matrices, so that the fused kernels (rope,
// attention) read and write the heads view (B, T, H, Dh).transpose(1, 2) of
// a projection, or a narrowed KV cache, where it lies instead of copying it.
//
// Note [Row layout]
// ~~~~~~~~~~~~~~~~~
// A tensor (..., R, C) has a row layout when its last dim has unit stride
// (or size <= 1) and its rows do not overlap (stride(-2) >= C, or R <= 1):
// each matrix is then one GEMM operand with leading dimension ld, wherever
// the leading dims put it. stride has no negative strides (as_strided
// refuses them), so offsets are never negative.
// Outputs follow their input's memory order when it is non-overlapping and
// dense (PyTorch's empty_like with preserve_format), so heads views stay
// heads views: the gradients reach the projection's (B, T, D) buffer as free
// views, and y.transpose(1, 2).reshape({B, T, D}) after attention is free.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <type_traits>

#include "core/layout.h"
#include "stride/ops.h"

namespace stride::nn::functional::detail {

// Whether t (at least 2-d) has a row layout.
inline bool has_row_layout(const Tensor& t) {
  const int64_t C = t.size(-1), R = t.size(-2);
  return (t.stride(-1) == 1 || C <= 1) && (t.stride(-2) >= C || R <= 1);
}

// The matrices (R, C) of a tensor (..., R, C) with a row layout, numbered
// row-major over the leading dims.
class RowLayout {
 public:
  explicit RowLayout(const Tensor& t)
      : sizes_(t.sizes().begin(), t.sizes().end() - 2),
        strides_(t.strides().begin(), t.strides().end() - 2),
        ld_(t.size(-2) <= 1 ? t.size(-1) : t.stride(-2)) {}

  // Elements from t.data_ptr() to matrix n's first element.
  int64_t offset(int64_t n) const {
    int64_t off = 0;
    for (size_t d = sizes_.size(); d-- > 0;) {
      off += n % sizes_[d] * strides_[d];
      n /= sizes_[d];
    }
    return off;
  }
  // Elements between consecutive rows of a matrix.
  int64_t ld() const { return ld_; }

 private:
  DimVector sizes_, strides_;
  int64_t ld_;
};

// t's matrices as pointers; T is const for tensors that are only read.
template <class T>
struct RowMatrices {
  explicit RowMatrices(const Tensor& t) : data(t.data_ptr<std::remove_const_t<T>>()), layout(t) {}
  T* operator[](int64_t n) const { return data + layout.offset(n); }
  int64_t ld() const { return layout.ld(); }

  T* data;
  RowLayout layout;
};

// t itself when it has a row layout, else a contiguous copy.
inline Tensor with_row_layout(const Tensor& t) {
  return has_row_layout(t) ? t : t.contiguous();
}

// A new uninitialised tensor of t's shape, with the last dim resized to
// `cols`, and t's dtype. When t has a row layout and is non-overlapping and
// dense, its leading dims keep t's memory order (ties, which only size-1
// dims make, in dim order) and its rows stay innermost; else it is row-major.
inline Tensor empty_preserving_layout(const Tensor& t, int64_t cols) {
  DimVector sizes = t.sizes().dims();
  sizes.back() = cols;
  if (t.is_contiguous() || !has_row_layout(t) ||
      !::stride::detail::is_non_overlapping_and_dense(t)) {
    return empty(sizes, t.options());
  }
  DimVector order(sizes.size() - 1);
  std::iota(order.begin(), order.end(), int64_t(0));
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return t.stride(a) > t.stride(b); });
  DimVector strides(sizes.size());
  strides.back() = 1;
  int64_t inner = cols;
  for (size_t i = order.size(); i-- > 0;) {
    strides[size_t(order[i])] = inner;
    inner *= sizes[size_t(order[i])];
  }
  return empty_strided(sizes, strides, t.options());
}

}  // namespace stride::nn::functional::detail
