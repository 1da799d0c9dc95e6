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
#include <string_view>

#include "stride/gguf.h"

namespace stride::io::detail {

// The format's types, public in stride/gguf.h.
using io::ggml_type_traits;
using io::GgmlType;
using io::GgmlTypeTraits;
using io::gguf_value_type_name;
using io::GgufHeader;
using io::GgufTensorInfo;
using io::GgufValue;
using io::GgufValueType;

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
