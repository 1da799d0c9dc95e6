#include "stride/dtype.h"

#include "core/check.h"

namespace stride {

// Half <-> float by bit manipulation (IEEE 754 binary16), round to nearest even.
uint16_t Half::from_float(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  if (x > 0x7f800000u) return uint16_t(sign | 0x7e00u);   // NaN
  if (x >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // overflow (incl. rounding) -> inf
  if (x < 0x38800000u) {                                  // subnormal half or zero
    if (x < 0x33000000u) return uint16_t(sign);           // below half the smallest subnormal
    const uint32_t exp = x >> 23;
    const uint32_t mant = (x & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - exp;  // 14 + (112 - exp) ... places the value at 2^-24 units
    uint32_t h = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1u))) ++h;
    return uint16_t(sign | h);
  }
  uint32_t h = ((x >> 13) - (112u << 10));  // rebias exponent 127 -> 15
  const uint32_t rem = x & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return uint16_t(sign | h);
}

float Half::to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t x;
  if (exp == 0x1f) {
    x = sign | 0x7f800000u | (mant << 13);
  } else if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {  // normalise the subnormal
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while (!(mant & 0x400u));
      x = sign | ((112u - uint32_t(e)) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else {
    x = sign | ((exp + 112u) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

size_t element_size(ScalarType t) {
  switch (t) {
    case kBool:
    case kUInt8:
      return 1;
    case kFloat16:
    case kBFloat16:
      return 2;
    case kInt32:
    case kFloat32:
      return 4;
    case kInt64:
    case kFloat64:
    case kComplex64:
      return 8;
    case kComplex128:
      return 16;
  }
  STRIDE_ASSERT(false, "unknown dtype ", int(t));
}

std::string_view to_string(ScalarType t) {
  switch (t) {
    case kBool:
      return "bool";
    case kUInt8:
      return "uint8";
    case kInt32:
      return "int32";
    case kInt64:
      return "int64";
    case kFloat16:
      return "float16";
    case kBFloat16:
      return "bfloat16";
    case kFloat32:
      return "float32";
    case kFloat64:
      return "float64";
    case kComplex64:
      return "complex64";
    case kComplex128:
      return "complex128";
  }
  STRIDE_ASSERT(false, "unknown dtype ", int(t));
}

bool is_floating_point(ScalarType t) {
  return t == kFloat16 || t == kBFloat16 || t == kFloat32 || t == kFloat64;
}

bool is_integral(ScalarType t, bool include_bool) {
  return t == kUInt8 || t == kInt32 || t == kInt64 || (include_bool && t == kBool);
}

bool is_complex(ScalarType t) {
  return t == kComplex64 || t == kComplex128;
}

ScalarType to_real_dtype(ScalarType t) {
  if (t == kComplex64) return kFloat32;
  if (t == kComplex128) return kFloat64;
  return t;
}

ScalarType to_complex_dtype(ScalarType t) {
  if (is_complex(t)) return t;
  return t == kFloat64 ? kComplex128 : kComplex64;
}

ScalarType promote_types(ScalarType a, ScalarType b) {
  if (a == b) return a;
  if (is_complex(a) || is_complex(b)) {
    const ScalarType parts = promote_types(to_real_dtype(a), to_real_dtype(b));
    return parts == kFloat64 ? kComplex128 : kComplex64;
  }
  if ((a == kFloat16 && b == kBFloat16) || (a == kBFloat16 && b == kFloat16)) return kFloat32;
  // Rank in the lattice; the enum is declared in promotion order.
  return int(a) > int(b) ? a : b;
}

}  // namespace stride
