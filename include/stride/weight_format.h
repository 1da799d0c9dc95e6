// How a linear layer's weight is stored for inference (Note [Weight
// formats] in src/backends/cpu/packed_linear.cpp): float32, bfloat16, or
// blocks of 32 weights quantized to 8 or 4 bits with a float16 scale each,
// byte for byte the blocks of GGUF's Q8_0 and Q4_0, so that a llama.cpp file
// maps onto them without a copy and a stride export is what llama.cpp's own
// quantizer writes.
//
// A weight of `rows` x `cols` (a linear layer's (out, in)) is held as
//   Float32   float32  (rows, cols)
//   BFloat16  bfloat16 (rows, cols)
//   Int8      uint8    (rows, cols / 32 * 34)  each block: half d, 32 x int8 q;  w = d * q
//   Int4      uint8    (rows, cols / 32 * 18)  each block: half d, 16 bytes of
//             4-bit q, low nibbles the first 16 weights, high the last:   w = d * (q - 8)
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "stride/dtype.h"

namespace stride {

enum class WeightFormat : uint8_t { Float32, BFloat16, Int8, Int4 };

// Weights per quantized block, and a block's bytes.
inline constexpr int64_t kWeightBlock = 32;
inline constexpr int64_t kInt8BlockBytes = 34;
inline constexpr int64_t kInt4BlockBytes = 18;

// "float32", "bf16", "int8", "int4": the names of --weights-dtype.
std::string_view to_string(WeightFormat format);
// The format named `name` (one of to_string's, or "fp32"); nullopt for
// any other name.
std::optional<WeightFormat> parse_weight_format(std::string_view name);

// Whether the format stores blocks (Int8, Int4), so that its rows' length
// must be a multiple of kWeightBlock.
bool is_blocked(WeightFormat format);

// The dtype of the tensor that holds a weight in `format`.
ScalarType storage_dtype(WeightFormat format);

// The elements of a stored row of `cols` weights: cols, or the bytes of its
// blocks (cols a multiple of kWeightBlock).
int64_t stored_row_size(WeightFormat format, int64_t cols);

}  // namespace stride
