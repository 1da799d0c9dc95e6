// ggml's tensor encodings decoded to float32, element by element in the
// order ggml stores them: the reference for the quantized weight kernels and
// for reading a GGUF tensor into a float32 one. A row of n elements of a
// block type is n / block blocks (gguf_format.h's traits); each block
// decodes on its own.
//
// The block layouts (ggml-common.h), each scale an IEEE half:
//   q8_0  d, 32 x int8 q:                     x = d * q
//   q4_0  d, 16 bytes of 4-bit q, low nibbles
//         the first 16 elements, high the rest: x = d * (q - 8)
//   q4_K  d, dmin, 12 bytes of 6-bit scales and mins for 8 sub-blocks of
//         32, 128 bytes of 4-bit q (each 32 bytes: low nibbles one
//         sub-block, high the next):            x = d * sc * q - dmin * m
//   q6_K  128 bytes of low 4 bits, 64 of high 2 bits, 16 int8 scales (one
//         per 16 elements), d:                   x = d * sc * (q - 32)
#pragma once

#include <cstdint>

#include "io/gguf_format.h"

namespace stride::io::detail {

// Whether decode_row knows `type`.
bool can_decode(GgmlType type);

// Decodes n elements (whole blocks) of `type` from src into dst.
void decode_row(GgmlType type, const void* src, float* dst, int64_t n);

}  // namespace stride::io::detail
