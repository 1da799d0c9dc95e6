#include "io/gguf_blocks.h"

#include <cstring>

#include "core/check.h"
#include "stride/dtype.h"

namespace stride::io::detail {
namespace {

constexpr int64_t kQK = 32;    // elements of a q8_0 or q4_0 block
constexpr int64_t kQKK = 256;  // elements of a k-quant super-block

float half_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return Half::to_float(h);
}

void decode_q8_0(const uint8_t* b, float* y, int64_t blocks) {
  for (int64_t i = 0; i < blocks; ++i, b += 34, y += kQK) {
    const float d = half_at(b);
    for (int64_t j = 0; j < kQK; ++j) y[j] = d * float(int8_t(b[2 + j]));
  }
}

void decode_q4_0(const uint8_t* b, float* y, int64_t blocks) {
  for (int64_t i = 0; i < blocks; ++i, b += 18, y += kQK) {
    const float d = half_at(b);
    for (int64_t j = 0; j < kQK / 2; ++j) {
      y[j] = d * float(int(b[2 + j] & 0x0F) - 8);
      y[j + kQK / 2] = d * float(int(b[2 + j] >> 4) - 8);
    }
  }
}

// The 6-bit scale and min of sub-block j of a q4_K super-block: the first
// four in the low 6 bits of bytes 0-3 (scales) and 4-7 (mins), the last
// four split between the low and high nibbles of bytes 8-11 and the top 2
// bits of bytes 0-7.
void scale_min_k4(int j, const uint8_t* q, uint8_t& scale, uint8_t& min) {
  if (j < 4) {
    scale = q[j] & 63;
    min = q[j + 4] & 63;
  } else {
    scale = uint8_t((q[j + 4] & 0x0F) | ((q[j - 4] >> 6) << 4));
    min = uint8_t((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

void decode_q4_k(const uint8_t* b, float* y, int64_t blocks) {
  for (int64_t i = 0; i < blocks; ++i, b += 144) {
    const float d = half_at(b), dmin = half_at(b + 2);
    const uint8_t* scales = b + 4;
    const uint8_t* q = b + 16;
    for (int j = 0; j < 8; j += 2, q += 32) {
      uint8_t sc = 0, m = 0;
      scale_min_k4(j, scales, sc, m);
      const float d1 = d * float(sc), m1 = dmin * float(m);
      scale_min_k4(j + 1, scales, sc, m);
      const float d2 = d * float(sc), m2 = dmin * float(m);
      for (int l = 0; l < 32; ++l) *y++ = d1 * float(q[l] & 0x0F) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * float(q[l] >> 4) - m2;
    }
  }
}

void decode_q6_k(const uint8_t* b, float* y, int64_t blocks) {
  for (int64_t i = 0; i < blocks; ++i, b += 210) {
    const uint8_t* ql = b;
    const uint8_t* qh = b + 128;
    const auto* sc = reinterpret_cast<const int8_t*>(b + 192);
    const float d = half_at(b + 208);
    for (int n = 0; n < kQKK; n += 128, y += 128, ql += 64, qh += 32, sc += 8) {
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = int((ql[l] & 0x0F) | ((qh[l] & 3) << 4)) - 32;
        const int q2 = int((ql[l + 32] & 0x0F) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = int((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = int((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y[l] = d * float(sc[is]) * float(q1);
        y[l + 32] = d * float(sc[is + 2]) * float(q2);
        y[l + 64] = d * float(sc[is + 4]) * float(q3);
        y[l + 96] = d * float(sc[is + 6]) * float(q4);
      }
    }
  }
}

}  // namespace

bool can_decode(GgmlType type) {
  switch (type) {
    case GgmlType::F32:
    case GgmlType::F16:
    case GgmlType::BF16:
    case GgmlType::Q8_0:
    case GgmlType::Q4_0:
    case GgmlType::Q4_K:
    case GgmlType::Q6_K:
      return true;
    default:
      return false;
  }
}

void decode_row(GgmlType type, const void* src, float* dst, int64_t n) {
  const auto* b = static_cast<const uint8_t*>(src);
  const GgmlTypeTraits& traits = ggml_type_traits(type);
  STRIDE_ASSERT(n % traits.block == 0, "decode_row: ", n, " elements are not whole ", traits.name,
                " blocks");
  const int64_t blocks = n / traits.block;
  switch (type) {
    case GgmlType::F32:
      std::memcpy(dst, b, size_t(n) * sizeof(float));
      return;
    case GgmlType::F16:
      for (int64_t i = 0; i < n; ++i) dst[i] = half_at(b + 2 * i);
      return;
    case GgmlType::BF16:
      for (int64_t i = 0; i < n; ++i) {
        const uint32_t bits = uint32_t(b[2 * i]) | uint32_t(b[2 * i + 1]) << 8;
        const uint32_t wide = bits << 16;
        std::memcpy(dst + i, &wide, 4);
      }
      return;
    case GgmlType::Q8_0:
      return decode_q8_0(b, dst, blocks);
    case GgmlType::Q4_0:
      return decode_q4_0(b, dst, blocks);
    case GgmlType::Q4_K:
      return decode_q4_k(b, dst, blocks);
    case GgmlType::Q6_K:
      return decode_q6_k(b, dst, blocks);
    default:
      STRIDE_ASSERT(false, "decode_row: ", traits.name, " has no decoder (check can_decode)");
  }
}

}  // namespace stride::io::detail
