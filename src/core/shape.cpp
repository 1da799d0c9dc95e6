#include "stride/shape.h"

#include <algorithm>
#include <ostream>

#include "core/check.h"

namespace stride {

std::string shape_str(IntArrayRef shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  s += ")";
  return s;
}

std::ostream& operator<<(std::ostream& os, IntArrayRef shape) {
  return os << shape_str(shape);
}

int64_t numel_of(IntArrayRef shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

int64_t checked_numel(IntArrayRef shape, const char* op, size_t element_size) {
  // The strides of a contiguous layout multiply the sizes too, and with a
  // size 0 among them the element count stays 0 while a stride may not fit:
  // the product of the non-zero sizes, in bytes, bounds both.
  int64_t span = int64_t(element_size);
  bool overflow = false;
  for (int64_t s : shape)
    overflow = overflow || __builtin_mul_overflow(span, std::max<int64_t>(s, 1), &span);
  STRIDE_CHECK(!overflow, ShapeError, "[", op, "] a tensor of shape ", shape_str(shape),
               " has more elements, bytes or stride steps than int64 can count.");
  return numel_of(shape);
}

DimVector contiguous_strides(IntArrayRef shape) {
  DimVector strides(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= std::max<int64_t>(shape[i], 1);
  }
  return strides;
}

DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op) {
  const size_t n = std::max(a.size(), b.size());
  DimVector out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    STRIDE_CHECK(da == db || da == 1 || db == 1, ShapeError, "[", op, "] shapes ", shape_str(a),
                 " and ", shape_str(b), " cannot be broadcast: dim ", i, " is ", da, " vs ", db,
                 ". Hint: sizes must match or be 1, aligned from the last dim.");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  const int64_t n = std::max<int64_t>(ndim, 1);  // a 0-d tensor accepts dim 0 and -1
  STRIDE_CHECK(dim >= -n && dim < n, IndexError, "[", op, "] dim ", dim,
               " is out of range for a tensor with ", ndim, " dims (expected in [", -n, ", ", n - 1,
               "]).");
  return dim < 0 ? dim + n : dim;
}

}  // namespace stride
