// Element types. bfloat16 and float16 are storage types: kernels convert them
// to float32 to compute and round back (round-to-nearest-even) on store.
// complex64 and complex128 are std::complex<float> and std::complex<double>
// (a real and an imaginary part side by side, as PyTorch and NumPy store them).
#pragma once

#include <complex>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace stride {

enum class ScalarType : uint8_t {
  Bool,
  UInt8,
  Int32,
  Int64,
  Float16,
  BFloat16,
  Float32,
  Float64,
  Complex64,
  Complex128
};
using Dtype = ScalarType;

inline constexpr ScalarType kBool = ScalarType::Bool;
inline constexpr ScalarType kUInt8 = ScalarType::UInt8;
inline constexpr ScalarType kInt32 = ScalarType::Int32;
inline constexpr ScalarType kInt64 = ScalarType::Int64;
inline constexpr ScalarType kFloat16 = ScalarType::Float16;
inline constexpr ScalarType kBFloat16 = ScalarType::BFloat16;
inline constexpr ScalarType kFloat32 = ScalarType::Float32;
inline constexpr ScalarType kFloat64 = ScalarType::Float64;
inline constexpr ScalarType kComplex64 = ScalarType::Complex64;
inline constexpr ScalarType kComplex128 = ScalarType::Complex128;
inline constexpr ScalarType kFloat = kFloat32;
inline constexpr ScalarType kDouble = kFloat64;
inline constexpr ScalarType kLong = kInt64;
inline constexpr ScalarType kInt = kInt32;
inline constexpr ScalarType kHalf = kFloat16;
inline constexpr ScalarType kComplexFloat = kComplex64;
inline constexpr ScalarType kComplexDouble = kComplex128;

inline constexpr int kNumScalarTypes = 10;

struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  BFloat16(float f) : bits(round(f)) {}  // NOLINT: implicit like a builtin float
  operator float() const {               // NOLINT
    uint32_t u = uint32_t(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  // Nearest even; a NaN stays a NaN, made quiet. Branch-free, so that loops
  // of conversions vectorise.
  static uint16_t round(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
    const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    return uint16_t(nan ? (u >> 16) | 0x40u : rounded);
  }
};

struct Half {
  uint16_t bits = 0;
  Half() = default;
  Half(float f) : bits(from_float(f)) {}             // NOLINT
  operator float() const { return to_float(bits); }  // NOLINT
  static uint16_t from_float(float f);
  static float to_float(uint16_t h);
};

size_t element_size(ScalarType t);
std::string_view to_string(ScalarType t);  // "float32", "int64", ...
bool is_floating_point(ScalarType t);
bool is_integral(ScalarType t, bool include_bool = false);
bool is_complex(ScalarType t);
// complex64 -> float32, complex128 -> float64 (the dtype of real() and
// abs()); any other dtype is its own.
ScalarType to_real_dtype(ScalarType t);
// The complex dtype with parts of t's precision: float64 -> complex128,
// any other -> complex64 (PyTorch's default complex dtype), complex -> itself.
ScalarType to_complex_dtype(ScalarType t);

// PyTorch's promotion lattice for two tensor operands:
// bool < uint8 < int32 < int64 < {float16, bfloat16} < float32 < float64
// < complex64 < complex128, with float16 + bfloat16 -> float32 and a
// complex with a wider real one widening its parts (float64 + complex64 ->
// complex128).
ScalarType promote_types(ScalarType a, ScalarType b);

template <class T>
struct CppTypeToScalarType;
template <>
struct CppTypeToScalarType<bool> {
  static constexpr ScalarType value = kBool;
};
template <>
struct CppTypeToScalarType<uint8_t> {
  static constexpr ScalarType value = kUInt8;
};
template <>
struct CppTypeToScalarType<int32_t> {
  static constexpr ScalarType value = kInt32;
};
template <>
struct CppTypeToScalarType<int64_t> {
  static constexpr ScalarType value = kInt64;
};
template <>
struct CppTypeToScalarType<Half> {
  static constexpr ScalarType value = kFloat16;
};
template <>
struct CppTypeToScalarType<BFloat16> {
  static constexpr ScalarType value = kBFloat16;
};
template <>
struct CppTypeToScalarType<float> {
  static constexpr ScalarType value = kFloat32;
};
template <>
struct CppTypeToScalarType<double> {
  static constexpr ScalarType value = kFloat64;
};
template <>
struct CppTypeToScalarType<std::complex<float>> {
  static constexpr ScalarType value = kComplex64;
};
template <>
struct CppTypeToScalarType<std::complex<double>> {
  static constexpr ScalarType value = kComplex128;
};
template <class T>
inline constexpr ScalarType scalar_type_of = CppTypeToScalarType<T>::value;

}  // namespace stride
