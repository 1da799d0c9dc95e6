// The safetensors format without tensors: parse and validate a header from
// bytes, and serialize one. load_safetensors/save_safetensors (io.h) add the
// file handling and the tensors; this layer is what a hostile file meets
// first, so it is small and tested on raw bytes.
//
// Layout: an 8-byte little-endian u64 N, N bytes of JSON header, then the
// data buffer. The header maps each name to {"dtype", "shape",
// "data_offsets": [begin, end]} (offsets relative to the buffer), plus an
// optional "__metadata__" object of string to string.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stride/dtype.h"

namespace stride::io::detail {

// The reference implementation's cap (safetensors MAX_HEADER_SIZE): it bounds
// the memory a hostile header can make the JSON parser allocate.
inline constexpr uint64_t kMaxHeaderBytes = 100'000'000;
inline constexpr uint64_t kLengthPrefixBytes = 8;

using Metadata = std::map<std::string, std::string>;

struct TensorEntry {
  std::string name;
  ScalarType dtype = kFloat32;
  std::vector<int64_t> shape;
  uint64_t begin = 0;  // byte range [begin, end) of the data buffer
  uint64_t end = 0;
};

struct Header {
  std::vector<TensorEntry> entries;  // sorted by data offset
  Metadata metadata;
  uint64_t data_start = 0;  // file offset of the data buffer: 8 + N
};

// The safetensors dtype string ("F32") for a stride dtype, and back; nullopt
// for strings stride has no dtype for ("I8", "F8_E4M3", ...).
std::string_view safetensors_dtype_name(ScalarType t);
std::optional<ScalarType> parse_safetensors_dtype(std::string_view name);
// Bytes per element as the format defines them.
size_t safetensors_itemsize(ScalarType t);

// Decodes the length prefix (the first 8 bytes of the file) and checks it
// against the cap and the file size. `file` names the file in messages.
// Throws IOError.
uint64_t parse_header_length(const unsigned char* prefix,
                             uint64_t file_size,
                             std::string_view file);

// Validates the N header bytes that follow the prefix of a file of
// `file_size` bytes and returns its entries. Checks everything the data
// buffer's reader relies on: the JSON, each entry's keys and types, known
// dtypes, shape x itemsize == end - begin without overflow, ranges that tile
// the buffer exactly, unique names, string-to-string metadata. Throws IOError.
Header parse_header(std::string_view header, uint64_t file_size, std::string_view file);

// Bool data must be bytes 0 and 1: reading any other byte as a C++ bool is
// undefined behaviour. Throws IOError naming the tensor.
void check_bool_data(const unsigned char* data,
                     size_t n,
                     std::string_view tensor_name,
                     std::string_view file);

// parse_header_length + parse_header on a whole file held in memory.
Header parse_file_bytes(std::string_view bytes, std::string_view file);

// Lays the entries' data out back to back in the given order (setting each
// begin/end) and returns the file prefix: the 8-byte length, then the compact
// JSON header (keys sorted) padded with spaces to a multiple of 8 bytes, as
// the reference does. Empty metadata writes no "__metadata__". Throws
// ValueError for empty, duplicate or non-UTF-8 names, a tensor called
// "__metadata__", non-UTF-8 metadata, or a negative dim.
std::string serialize_header(std::vector<TensorEntry>& entries, const Metadata& metadata);

}  // namespace stride::io::detail
