// map_gguf and gguf_to_float32 (stride/gguf.h): a GGUF file mapped once,
// privately, and its tensors as views of that mapping.
#include "stride/gguf.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <memory>
#include <string>
#include <utility>

#include "core/check.h"
#include "core/tensor_impl_utils.h"
#include "io/atomic_file.h"
#include "io/gguf_blocks.h"
#include "io/gguf_format.h"
#include "stride/factory.h"

namespace stride::io {

namespace {

using detail::errno_text;
using ::stride::detail::str_cat;

struct Mapping {
  void* base;
  size_t length;
};

// The whole file mapped copy-on-write (a weight changed in place changes
// the process's copy, never the file), owned by one storage.
std::shared_ptr<StorageImpl> map_file(const std::string& path) {
  // O_NONBLOCK: a FIFO would otherwise wait for a writer; it is refused below.
  detail::FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  STRIDE_CHECK(fd.ok(), IOError, "[load_gguf] ", path, ": cannot open: ", errno_text(errno));
  struct stat st {};
  STRIDE_CHECK(::fstat(fd.get(), &st) == 0, IOError, "[load_gguf] ", path,
               ": cannot stat: ", errno_text(errno));
  STRIDE_CHECK(S_ISREG(st.st_mode), IOError, "[load_gguf] ", path,
               ": not a regular file. Hint: pass the path of a .gguf file.");
  const auto length = size_t(st.st_size);
  STRIDE_CHECK(length > 0, IOError, "[load_gguf] ", path,
               ": the file is empty; a GGUF file starts with the magic number 'GGUF'.");
  void* base = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd.get(), 0);
  STRIDE_CHECK(base != MAP_FAILED, IOError, "[load_gguf] ", path,
               ": cannot map the file: ", errno_text(errno));
  return std::make_shared<StorageImpl>(
      base, length, Device(kCPU),
      [](void*, void* ctx) {
        const auto* m = static_cast<Mapping*>(ctx);
        ::munmap(m->base, m->length);
        delete m;
      },
      new Mapping{base, length});
}

// The dtype a tensor of `type` is mapped as: its own for the float types,
// bytes for the block types.
ScalarType mapped_dtype(GgmlType type) {
  switch (type) {
    case GgmlType::F32:
      return kFloat32;
    case GgmlType::F16:
      return kFloat16;
    case GgmlType::BF16:
      return kBFloat16;
    default:
      return kUInt8;
  }
}

GgufTensor view_of(const std::shared_ptr<StorageImpl>& storage,
                   const GgufHeader& header,
                   const GgufTensorInfo& info) {
  GgufTensor t;
  t.name = info.name;
  t.type = info.type;
  t.shape.assign(info.ne.rbegin(), info.ne.rend());
  const ScalarType dtype = mapped_dtype(info.type);
  const uint64_t offset = header.data_start + info.offset;
  DimVector shape;
  if (dtype == kUInt8) {
    // Rows of whole blocks (parse_gguf checked that blocks divide ne[0]);
    // counted from ne[1:], since a row may have no elements.
    const GgmlTypeTraits& traits = ggml_type_traits(info.type);
    int64_t rows = 1;
    for (size_t d = 1; d < info.ne.size(); ++d) rows *= info.ne[d];
    shape = {rows, info.ne[0] / traits.block * traits.block_bytes};
  } else {
    shape.assign(t.shape.begin(), t.shape.end());
  }
  // The data section is aligned (general.alignment, a power of two of at
  // least 1), and each tensor within it; a float tensor at an offset that
  // its element does not divide is refused rather than read unaligned.
  STRIDE_CHECK(offset % element_size(dtype) == 0, IOError, "[load_gguf] tensor '", info.name,
               "' starts at byte ", offset, ", which is not a multiple of its ",
               element_size(dtype), "-byte elements. Hint: the file is corrupt.");
  t.data = ::stride::detail::make_tensor(storage, dtype, shape, contiguous_strides(shape),
                                         int64_t(offset / element_size(dtype)));
  return t;
}

}  // namespace

GgufContents map_gguf(const std::string& path) {
  const std::shared_ptr<StorageImpl> storage = map_file(path);
  GgufContents out;
  out.header = detail::parse_gguf(
      std::string_view(static_cast<const char*>(storage->data()), storage->nbytes()), path);
  out.tensors.reserve(out.header.tensors.size());
  for (const GgufTensorInfo& info : out.header.tensors) {
    out.tensors.push_back(view_of(storage, out.header, info));
  }
  return out;
}

Tensor gguf_to_float32(const GgufTensor& t) {
  STRIDE_CHECK(detail::can_decode(t.type), IOError, "[load_gguf] tensor '", t.name,
               "' is stored as ", ggml_type_traits(t.type).name,
               ", which stride does not decode (it reads f32, f16, bf16, q8_0, q4_0, q4_K and "
               "q6_K). Hint: convert the model again with one of those types.");
  DimVector shape(t.shape.begin(), t.shape.end());
  Tensor out = empty(shape, TensorOptions(kFloat32));
  const Tensor src = t.data.contiguous();
  const int64_t row = t.shape.empty() ? 1 : t.shape.back();
  const int64_t rows = row > 0 ? out.numel() / row : 0;
  const auto* bytes = static_cast<const uint8_t*>(src.data_ptr());
  const int64_t row_bytes = rows > 0 ? int64_t(src.nbytes()) / rows : 0;
  for (int64_t r = 0; r < rows; ++r) {
    detail::decode_row(t.type, bytes + r * row_bytes, out.data_ptr<float>() + r * row, row);
  }
  return out;
}

}  // namespace stride::io
