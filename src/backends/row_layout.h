// Strided batches of row-major matrices, so that the fused kernels (rope,
// attention) read and write the heads view (B, T, H, Dh).transpose(1, 2) of
// a projection, or a narrowed KV cache, where it lies instead of copying it.
// Ops bring their operands into this layout (nn/row_layout.h); kernels read
// them here, with no op.
//
// Note [Row layout]
// ~~~~~~~~~~~~~~~~~
// A tensor (..., R, C) has a row layout when its last dim has unit stride
// (or size <= 1) and its rows do not overlap (stride(-2) >= C, or R <= 1):
// each matrix is then one GEMM operand with leading dimension ld, wherever
// the leading dims put it. stride has no negative strides (as_strided
// refuses them), so offsets are never negative.
#pragma once

#include <cstdint>
#include <type_traits>

#include "stride/tensor.h"

namespace stride::detail {

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

}  // namespace stride::detail
