// A number passed to an op (`x * 2.0`, `fill_(1)`). Like PyTorch's wrapped
// numbers, a Scalar does not promote a tensor's dtype within its category:
// float32 * 2.0 stays float32, int64 * 2.5 becomes the default float type.
#pragma once

#include <cstdint>
#include <type_traits>

#include "stride/dtype.h"

namespace stride {

class Scalar {
 public:
  enum class Kind : uint8_t { Bool, Int, Float };

  Scalar() : Scalar(int64_t(0)) {}
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : kind_(Kind::Int), i_(int64_t(v)) {}  // NOLINT
  template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : kind_(Kind::Float), d_(double(v)) {}  // NOLINT
  Scalar(bool v) : kind_(Kind::Bool), i_(v) {}        // NOLINT
  Scalar(BFloat16 v) : Scalar(float(v)) {}            // NOLINT
  Scalar(Half v) : Scalar(float(v)) {}                // NOLINT

  Kind kind() const { return kind_; }
  bool is_floating_point() const { return kind_ == Kind::Float; }
  bool is_integral() const { return kind_ == Kind::Int; }
  bool is_bool() const { return kind_ == Kind::Bool; }

  double to_double() const { return kind_ == Kind::Float ? d_ : double(i_); }
  int64_t to_int64() const { return kind_ == Kind::Float ? int64_t(d_) : i_; }
  bool to_bool() const { return kind_ == Kind::Float ? d_ != 0 : i_ != 0; }
  template <class T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>)
      return to_bool();
    else if constexpr (std::is_integral_v<T>)
      return T(to_int64());
    else
      return T(to_double());
  }
  // The dtype a 0-d tensor holding this number would have.
  ScalarType dtype() const {
    return kind_ == Kind::Float ? kFloat32 : kind_ == Kind::Int ? kInt64 : kBool;
  }

 private:
  Kind kind_;
  union {
    int64_t i_;
    double d_;
  };
};

}  // namespace stride
