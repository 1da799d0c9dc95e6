// Dtype dispatch: calls f(TypeTag<T>{}) with the C++ type of a ScalarType, or
// throws DTypeError naming the op when the op has no kernel for it.
#pragma once

#include "core/check.h"
#include "stride/dtype.h"

namespace stride::detail {

template <class T>
struct TypeTag {
  using type = T;
};

#define STRIDE_DISPATCH_CASE(enum_value, cpp_type) \
  case enum_value:                                 \
    return f(::stride::detail::TypeTag<cpp_type>{});

[[noreturn]] inline void unsupported_dtype(ScalarType t, const char* op, const char* supported) {
  throw DTypeError(str_cat("[", op, "] has no kernel for dtype ", to_string(t),
                           " (supported: ", supported, ")."));
}

// float32, float64
template <class F>
decltype(auto) dispatch_floating(ScalarType t, const char* op, F&& f) {
  switch (t) {
    STRIDE_DISPATCH_CASE(kFloat32, float)
    STRIDE_DISPATCH_CASE(kFloat64, double)
    default:
      unsupported_dtype(t, op, "float32, float64");
  }
}

// float32, float64, int32, int64, uint8
template <class F>
decltype(auto) dispatch_numeric(ScalarType t, const char* op, F&& f) {
  switch (t) {
    STRIDE_DISPATCH_CASE(kFloat32, float)
    STRIDE_DISPATCH_CASE(kFloat64, double)
    STRIDE_DISPATCH_CASE(kInt32, int32_t)
    STRIDE_DISPATCH_CASE(kInt64, int64_t)
    STRIDE_DISPATCH_CASE(kUInt8, uint8_t)
    default:
      unsupported_dtype(t, op, "float32, float64, int32, int64, uint8");
  }
}

// numeric + bool
template <class F>
decltype(auto) dispatch_numeric_and_bool(ScalarType t, const char* op, F&& f) {
  if (t == kBool) return f(TypeTag<bool>{});
  return dispatch_numeric(t, op, std::forward<F>(f));
}

// uint8, int32, int64
template <class F>
decltype(auto) dispatch_integral(ScalarType t, const char* op, F&& f) {
  switch (t) {
    STRIDE_DISPATCH_CASE(kInt32, int32_t)
    STRIDE_DISPATCH_CASE(kInt64, int64_t)
    STRIDE_DISPATCH_CASE(kUInt8, uint8_t)
    default:
      unsupported_dtype(t, op, "int32, int64, uint8");
  }
}

// integral + bool
template <class F>
decltype(auto) dispatch_integral_and_bool(ScalarType t, const char* op, F&& f) {
  if (t == kBool) return f(TypeTag<bool>{});
  return dispatch_integral(t, op, std::forward<F>(f));
}

// every dtype, 16-bit floats included (copies and conversions)
template <class F>
decltype(auto) dispatch_all(ScalarType t, const char* op, F&& f) {
  switch (t) {
    STRIDE_DISPATCH_CASE(kFloat16, Half)
    STRIDE_DISPATCH_CASE(kBFloat16, BFloat16)
    default:
      return dispatch_numeric_and_bool(t, op, std::forward<F>(f));
  }
}

// complex64, complex128
template <class F>
decltype(auto) dispatch_complex(ScalarType t, const char* op, F&& f) {
  switch (t) {
    STRIDE_DISPATCH_CASE(kComplex64, std::complex<float>)
    STRIDE_DISPATCH_CASE(kComplex128, std::complex<double>)
    default:
      unsupported_dtype(t, op, "complex64, complex128");
  }
}

// float32, float64, complex64, complex128
template <class F>
decltype(auto) dispatch_floating_and_complex(ScalarType t, const char* op, F&& f) {
  if (is_complex(t)) return dispatch_complex(t, op, std::forward<F>(f));
  return dispatch_floating(t, op, std::forward<F>(f));
}

// every dtype, complex included: the CPU's copies and fills (the CUDA
// backend keeps complex out of its kernels, so they take dispatch_all).
template <class F>
decltype(auto) dispatch_all_and_complex(ScalarType t, const char* op, F&& f) {
  if (is_complex(t)) return dispatch_complex(t, op, std::forward<F>(f));
  return dispatch_all(t, op, std::forward<F>(f));
}

}  // namespace stride::detail

namespace stride::detail {

// The dispatchers as objects, for passing to helpers that take a dispatcher.
struct DispatchFloating {
  static constexpr bool kTakesFloats = true;
  template <class F>
  decltype(auto) operator()(ScalarType t, const char* op, F&& f) const {
    return dispatch_floating(t, op, std::forward<F>(f));
  }
};
struct DispatchNumeric {
  static constexpr bool kTakesFloats = true;
  template <class F>
  decltype(auto) operator()(ScalarType t, const char* op, F&& f) const {
    return dispatch_numeric(t, op, std::forward<F>(f));
  }
};
struct DispatchNumericAndBool {
  static constexpr bool kTakesFloats = true;
  template <class F>
  decltype(auto) operator()(ScalarType t, const char* op, F&& f) const {
    return dispatch_numeric_and_bool(t, op, std::forward<F>(f));
  }
};
struct DispatchIntegral {
  static constexpr bool kTakesFloats = false;
  template <class F>
  decltype(auto) operator()(ScalarType t, const char* op, F&& f) const {
    return dispatch_integral(t, op, std::forward<F>(f));
  }
};
struct DispatchIntegralAndBool {
  static constexpr bool kTakesFloats = false;
  template <class F>
  decltype(auto) operator()(ScalarType t, const char* op, F&& f) const {
    return dispatch_integral_and_bool(t, op, std::forward<F>(f));
  }
};

// An elementwise kernel's dispatch: calls f(TypeTag<T>{}, TypeTag<S>{}) with
// T the C++ type the op computes in and S the type its floating operands are
// stored as. S is T, except for 16-bit floats, which compute in float
// (S = Half or BFloat16) whatever dtypes `Dispatch` names: the kernel's loop
// converts each element as it reads and writes it.
template <class Dispatch, class F>
void dispatch_computing(ScalarType t, const char* op, F&& f) {
  // (the integer dispatchers take no float, so they refuse 16-bit floats too)
  if constexpr (Dispatch::kTakesFloats) {
    if (t == kBFloat16) return f(TypeTag<float>{}, TypeTag<BFloat16>{});
    if (t == kFloat16) return f(TypeTag<float>{}, TypeTag<Half>{});
  }
  Dispatch{}(t, op, [&](auto tag) { f(tag, tag); });
}

}  // namespace stride::detail
