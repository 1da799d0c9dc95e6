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

// Writes atomically: a temporary file beside `path`, fsync, rename, then an
// fsync of the directory, so a crash leaves either the old file or the new.
void save_safetensors(const std::string& path,
                      const NamedTensors& tensors,
                      const Metadata& metadata = {});
SafetensorsContents load_safetensors(const std::string& path);

}  // namespace stride::io
