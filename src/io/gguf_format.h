// The GGUF format (llama.cpp's model files) without tensors: parse and
// validate a file's header from its bytes. A loader maps the file and reads
// each tensor's bytes from the data section this layer has checked; this
// layer is what a hostile file meets first, so it is small and tested on raw
// bytes (fuzz/gguf_fuzz.cpp).
//
// Layout (little-endian, versions 2 and 3): the magic "GGUF", a u32
// version, a u64 tensor count, a u64 metadata count; the metadata, each a
// string key, a u32 value type and the value; the tensor infos, each a
// string name, a u32 dim count, that many u64 dims (the fastest-varying
// first, ggml's ne), a u32 ggml type and a u64 offset into the data
// section; then padding to the alignment (general.alignment, else 32), and
// the data section. A string is a u64 byte count and the bytes; an array a
// u32 element type, a u64 count and the elements.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

namespace stride::io::detail {

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

// The format's limits that this layer enforces beyond the file's size:
// ggml's dimensions (GGML_MAX_DIMS), and a depth for arrays of arrays, which
// the format allows and no model file uses, so that a hostile file cannot
// recurse without end.
inline constexpr uint32_t kGgufMaxDims = 4;
inline constexpr int kGgufMaxArrayDepth = 4;

// Parses and validates the header of a whole GGUF file held in memory (a
// mapping of it). Checks everything a tensor reader relies on: the magic and
// version; every count, string and array against the bytes left before
// anything is allocated for it; known value types, bools that are 0 or 1;
// unique keys and tensor names; general.alignment a u32 power of two;
// 1 to 4 dims, each >= 0, their product without overflow; known ggml types,
// ne[0] a multiple of the block; and the tensors laid out as llama.cpp
// writes and requires them, in order, each at the previous one's end rounded
// up to the alignment, the last ending inside the file. `file` names the
// file in messages. Throws IOError.
GgufHeader parse_gguf(std::string_view bytes, std::string_view file);

}  // namespace stride::io::detail
