// A number passed to an op (`x * 2.0`, `fill_(1)`). Like PyTorch's wrapped
// numbers, a Scalar does not promote a tensor's dtype within its category:
// float32 * 2.0 stays float32, int64 * 2.5 becomes the default float type,
// and a complex number makes a real tensor complex (float32 * 1j: complex64).
#pragma once

#include <complex>
#include <cstdint>
#include <type_traits>

#include "stride/dtype.h"

namespace stride {

class Scalar {
 public:
  enum class Kind : uint8_t { Bool, Int, Float, Complex };

  Scalar() : Scalar(int64_t(0)) {}
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : kind_(Kind::Int), i_(int64_t(v)) {}  // NOLINT
  template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : kind_(Kind::Float), d_(double(v)) {}  // NOLINT
  Scalar(bool v) : kind_(Kind::Bool), i_(v) {}        // NOLINT
  Scalar(BFloat16 v) : Scalar(float(v)) {}            // NOLINT
  Scalar(Half v) : Scalar(float(v)) {}                // NOLINT
  template <class T>
  Scalar(std::complex<T> v)
      : kind_(Kind::Complex), d_(double(v.real())), imag_(double(v.imag())) {}  // NOLINT

  Kind kind() const { return kind_; }
  bool is_floating_point() const { return kind_ == Kind::Float; }
  bool is_integral() const { return kind_ == Kind::Int; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  bool is_complex() const { return kind_ == Kind::Complex; }

  // A complex number's real part, as PyTorch's item() of a real dtype.
  double to_double() const { return holds_double() ? d_ : double(i_); }
  int64_t to_int64() const { return holds_double() ? int64_t(d_) : i_; }
  bool to_bool() const { return holds_double() ? d_ != 0 || imag_ != 0 : i_ != 0; }
  std::complex<double> to_complex() const {
    return {to_double(), kind_ == Kind::Complex ? imag_ : 0.0};
  }
  template <class T>
  T to() const {
    if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>)
      return T(to_complex());
    else if constexpr (std::is_same_v<T, bool>)
      return to_bool();
    else if constexpr (std::is_integral_v<T>)
      return T(to_int64());
    else
      return T(to_double());
  }
  // The dtype a 0-d tensor holding this number would have.
  ScalarType dtype() const {
    switch (kind_) {
      case Kind::Complex:
        return kComplex64;
      case Kind::Float:
        return kFloat32;
      case Kind::Int:
        return kInt64;
      case Kind::Bool:
        return kBool;
    }
    return kBool;
  }

 private:
  bool holds_double() const { return kind_ == Kind::Float || kind_ == Kind::Complex; }

  Kind kind_;
  union {
    int64_t i_;
    double d_;
  };
  double imag_ = 0.0;
};

}  // namespace stride
