// llama.cpp's model files (GGUF): a file's metadata and its tensors, mapped
// from the file without a copy (map_gguf), and any tensor's values as
// float32 (gguf_to_float32). Every count, size and offset of the header is
// checked against the file before anything is allocated for it
// (src/io/gguf_format.h), and the parser is fuzzed (fuzz/gguf_fuzz.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "stride/tensor.h"

namespace stride::io {

// The metadata value types of the format, by their numbers in the file.
enum class GgufValueType : uint32_t {
  UInt8 = 0,
  Int8 = 1,
  UInt16 = 2,
  Int16 = 3,
  UInt32 = 4,
  Int32 = 5,
  Float32 = 6,
  Bool = 7,
  String = 8,
  Array = 9,
  UInt64 = 10,
  Int64 = 11,
  Float64 = 12,
};

std::string_view gguf_value_type_name(GgufValueType type);

// A metadata value: an integer of any width (kept as int64_t or uint64_t
// by its signedness), a float of either width, a bool, a string, or an
// array of values of one type.
struct GgufValue {
  GgufValueType type = GgufValueType::UInt8;
  GgufValueType element_type = GgufValueType::UInt8;  // arrays only
  std::variant<uint64_t, int64_t, double, bool, std::string, std::vector<GgufValue>> value;
};

// The tensor types of ggml whose block layout this layer knows: a tensor of
// such a type is ne[0] / block blocks per row of block_bytes each. Others
// (the IQ types, ...) are refused with their number.
enum class GgmlType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  BF16 = 30,
};

struct GgmlTypeTraits {
  GgmlType type;
  std::string_view name;  // as llama.cpp prints it: "q4_K"
  int64_t block;          // elements per block
  int64_t block_bytes;
};

// The traits of a ggml type number, or nullptr for one this layer does not
// know.
const GgmlTypeTraits* ggml_type_traits(uint32_t type);
const GgmlTypeTraits& ggml_type_traits(GgmlType type);

struct GgufTensorInfo {
  std::string name;
  GgmlType type = GgmlType::F32;
  std::vector<int64_t> ne;  // dims, the fastest-varying first (ggml's order)
  int64_t numel = 0;
  uint64_t offset = 0;  // into the data section
  uint64_t bytes = 0;
};

struct GgufHeader {
  uint32_t version = 0;
  std::vector<std::pair<std::string, GgufValue>> metadata;  // in file order
  std::unordered_map<std::string, size_t> metadata_index;   // key -> position
  std::vector<GgufTensorInfo> tensors;                      // in file order
  uint64_t alignment = 32;
  uint64_t data_start = 0;  // file offset of the data section

  // The value of `key`, or nullptr.
  const GgufValue* find(std::string_view key) const;
};

// A tensor of a GGUF file, its bytes mapped from the file.
struct GgufTensor {
  std::string name;
  GgmlType type = GgmlType::F32;
  // Row-major (the outermost dim first): ggml's ne reversed, so a linear
  // layer's weight, ne = [in, out], is (out, in) as a Linear holds it.
  std::vector<int64_t> shape;
  // float32, float16 or bfloat16 of `shape` for F32, F16 and BF16; for a
  // block type, uint8 (rows, a row's bytes), rows the product of the outer
  // dims. A private, copy-on-write mapping of the file.
  Tensor data;
};

struct GgufContents {
  GgufHeader header;
  std::vector<GgufTensor> tensors;  // in file order
};

// Maps the GGUF file at `path` and checks its header (IOError naming the
// file and what is wrong: not GGUF, truncated, corrupt, an unknown type).
GgufContents map_gguf(const std::string& path);

// The values of `t` as float32 of its shape, decoded block by block (F32,
// F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K); IOError naming the tensor and its
// type for another.
Tensor gguf_to_float32(const GgufTensor& t);

}  // namespace stride::io
