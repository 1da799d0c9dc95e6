// Reading and writing tensors as safetensors files
// (https://huggingface.co/docs/safetensors): an 8-byte little-endian header
// length, a JSON header {name: {dtype, shape, data_offsets}, "__metadata__":
// {str: str}}, then the raw little-endian bytes. Files written here load in
// PyTorch's and Hugging Face's safetensors tooling.
//
// Loading validates the whole header before touching data: the header size is
// capped, every byte range lies inside the file, ranges neither overlap nor
// leave holes, shape x itemsize equals the range, names are unique, dtypes are
// known. A malformed or hostile file throws IOError; it never corrupts memory.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "stride/tensor.h"

namespace stride::io {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;
using Metadata = std::map<std::string, std::string>;

struct SafetensorsContents {
  NamedTensors tensors;  // in the order of their data in the file
  Metadata metadata;
  // The tensor called `name`; throws IOError listing the names when absent.
  const Tensor& at(const std::string& name) const;
};

// Writes `tensors` in the given order (each view's elements in row-major
// order, whatever its strides) with `metadata` in "__metadata__" (omitted
// when empty). Writes atomically: a temporary file `path.tmp.<pid>` beside
// `path`, fsync, rename, then an fsync of the directory, so a crash leaves
// either the old file or the new. Throws ValueError for an empty, repeated or
// reserved ("__metadata__") name or an undefined tensor, before touching the
// disk; IOError when the file cannot be written (the temporary file is
// removed and an existing file at `path` is left as it was).
void save_safetensors(const std::string& path,
                      const NamedTensors& tensors,
                      const Metadata& metadata = {});
// Reads every tensor into a new contiguous CPU tensor of its own. Throws
// IOError naming the file (and the tensor) when it cannot be read or is
// malformed; BOOL data must hold only bytes 0 and 1.
SafetensorsContents load_safetensors(const std::string& path);
// The same tensors, validated alike, as views of the file mapped into memory
// instead of copies: nothing is read until used, and a multi-gigabyte file
// costs no memory of its own beyond the pages touched. Each tensor maps its
// own range and unmaps it when its last view is gone, so a loader that drops
// each tensor once copied never holds the whole file. The mappings are
// private, copy-on-write: writing to a tensor changes this process's copy,
// never the file. A tensor whose bytes are not aligned to its dtype's size
// in the file (no writer of the format does this) is read into memory
// instead. Throws as load_safetensors; a file truncated or rewritten while
// mapped is the caller's to avoid (as with any mapping, reading pages past
// its new end raises SIGBUS).
SafetensorsContents map_safetensors(const std::string& path);

// Writes `bytes` to `path` as save_safetensors writes its files: whole or not
// at all (a temporary file beside it, fsync, rename, fsync of the directory),
// after removing the temporaries of `path` that writers killed mid-write
// left behind. IOError beginning "[op] path: " when it cannot.
void write_file_atomically(const std::string& path,
                           std::string_view bytes,
                           const std::string& op = "write_file_atomically");

// Creates the directory `path` and its missing parents, as
// std::filesystem::create_directories does, but an IOError beginning
// "[op] path: " says why it cannot (a file in its way, a read-only or
// pseudo file system such as /proc) instead of a raw filesystem_error.
void create_directories(const std::string& path, const std::string& op);

}  // namespace stride::io
