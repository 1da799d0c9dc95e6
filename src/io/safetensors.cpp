// load_safetensors / save_safetensors: files and tensors around the raw
// format layer (safetensors_format.h), which validates every header before
// any tensor is allocated or any data byte is read.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <new>
#include <string>
#include <utility>

#include "core/check.h"
#include "core/tensor_impl_utils.h"
#include "io/atomic_file.h"
#include "io/safetensors_format.h"
#include "stride/allocator.h"
#include "stride/io.h"
#include "stride/ops.h"

namespace stride::io {
namespace {

using detail::errno_text;
using detail::FileDescriptor;
using detail::kMaxChunk;

// Reads exactly n bytes at `offset`. The header was validated against the
// size fstat reported; a file that shrinks meanwhile ends the read early and
// is reported, not read past.
void read_exact(int fd, void* dst, uint64_t n, uint64_t offset, const std::string& path) {
  auto* p = static_cast<unsigned char*>(dst);
  while (n > 0) {
    const ssize_t got = ::pread(fd, p, size_t(std::min<uint64_t>(n, kMaxChunk)), off_t(offset));
    if (got < 0 && errno == EINTR) continue;
    STRIDE_CHECK(got >= 0, IOError, "[load_safetensors] ", path,
                 ": cannot read: ", errno_text(errno));
    STRIDE_CHECK(got > 0, IOError, "[load_safetensors] ", path, ": the file ended at byte ", offset,
                 " while reading. Hint: was it truncated or rewritten while being loaded?");
    p += got;
    n -= uint64_t(got);
    offset += uint64_t(got);
  }
}

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a plain file";
}

std::string gib_text(uint64_t bytes) {
  return ::stride::detail::str_cat(double(bytes) / double(uint64_t(1) << 30), " GiB");
}

[[noreturn]] void too_large(uint64_t data_bytes, size_t available, const std::string& path) {
  throw IOError(::stride::detail::str_cat(
      "[load_safetensors] ", path, ": its tensors hold ", data_bytes, " bytes (",
      gib_text(data_bytes), "), more than the ", available, " bytes (", gib_text(available),
      ") of memory this process can allocate. Hint: the file is too large for this machine, or "
      "its header is corrupt."));
}

// Every tensor's bytes are read into memory: a file whose tensors cannot fit
// is refused before the first allocation (a sparse file can claim a terabyte
// in a few bytes of disk).
void check_fits_in_memory(uint64_t data_bytes, const std::string& path) {
  const size_t available = available_cpu_memory();
  if (data_bytes > available) too_large(data_bytes, available, path);
}

Tensor allocate_for(const detail::TensorEntry& e, uint64_t data_bytes, const std::string& path) {
  try {
    return empty(e.shape, TensorOptions(e.dtype));
  } catch (const std::bad_alloc&) {
    too_large(data_bytes, available_cpu_memory(), path);
  }
}

}  // namespace

const Tensor& SafetensorsContents::at(const std::string& name) const {
  for (const auto& [n, t] : tensors) {
    if (n == name) return t;
  }
  std::string names;
  constexpr size_t kMaxListed = 20;
  for (size_t i = 0; i < tensors.size() && i < kMaxListed; ++i) {
    names += (i ? ", \"" : "\"") + tensors[i].first + "\"";
  }
  if (tensors.size() > kMaxListed) names += ", ...";
  throw IOError(::stride::detail::str_cat("[safetensors] no tensor named \"", name,
                                          "\"; the file has ", tensors.size(), " tensors",
                                          tensors.empty() ? "" : ": ", names));
}

namespace {

// A safetensors file opened and its header validated, before any data byte
// is touched.
struct OpenedFile {
  explicit OpenedFile(const std::string& path);
  FileDescriptor fd;
  uint64_t file_size = 0;
  detail::Header header;
  uint64_t data_bytes() const { return file_size - header.data_start; }
};

OpenedFile::OpenedFile(const std::string& path)
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
    // writer forever; the file is refused below unless it is a regular one,
    // on which the flag changes nothing.
    : fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)) {
  const int open_error = errno;
  STRIDE_CHECK(fd.ok(), IOError, "[load_safetensors] ", path,
               ": cannot open: ", errno_text(open_error));
  struct stat st {};
  STRIDE_CHECK(::fstat(fd.get(), &st) == 0, IOError, "[load_safetensors] ", path,
               ": cannot stat: ", errno_text(errno));
  STRIDE_CHECK(S_ISREG(st.st_mode), IOError, "[load_safetensors] ", path, ": not a regular file (",
               file_kind(st.st_mode), "). Hint: pass the path of a .safetensors file.");
  file_size = uint64_t(st.st_size);
  unsigned char prefix[detail::kLengthPrefixBytes] = {};
  if (file_size >= sizeof(prefix)) read_exact(fd.get(), prefix, sizeof(prefix), 0, path);
  const uint64_t header_size = detail::parse_header_length(prefix, file_size, path);
  std::string header_text(header_size, '\0');
  read_exact(fd.get(), header_text.data(), header_size, sizeof(prefix), path);
  header = detail::parse_header(header_text, file_size, path);
}

// Tensor `e` read into memory of its own.
Tensor read_tensor(const OpenedFile& file, const detail::TensorEntry& e, const std::string& path) {
  Tensor t = allocate_for(e, file.data_bytes(), path);
  const uint64_t nbytes = e.end - e.begin;
  STRIDE_ASSERT(t.is_contiguous() && t.nbytes() == nbytes, "[load_safetensors] tensor \"", e.name,
                "\" allocated ", t.nbytes(), " bytes for a ", nbytes, "-byte range");
  if (nbytes > 0)
    read_exact(file.fd.get(), t.data_ptr(), nbytes, file.header.data_start + e.begin, path);
  return t;
}

// Tensor `e` as a view of its own private mapping of the file, or read into
// memory when its bytes are empty or misaligned for its dtype.
Tensor map_tensor(const OpenedFile& file, const detail::TensorEntry& e, const std::string& path) {
  const uint64_t offset = file.header.data_start + e.begin, nbytes = e.end - e.begin;
  if (nbytes == 0 || offset % element_size(e.dtype) != 0) return read_tensor(file, e, path);
  static const auto page = uint64_t(::sysconf(_SC_PAGESIZE));
  const uint64_t start = offset / page * page, length = offset + nbytes - start;
  void* base = ::mmap(nullptr, size_t(length), PROT_READ | PROT_WRITE, MAP_PRIVATE, file.fd.get(),
                      off_t(start));
  STRIDE_CHECK(base != MAP_FAILED, IOError, "[map_safetensors] ", path, ": cannot map tensor \"",
               e.name, "\": ", errno_text(errno));
  struct Mapping {
    void* base;
    size_t length;
  };
  auto storage = std::make_shared<StorageImpl>(
      static_cast<char*>(base) + (offset - start), size_t(nbytes), Device(kCPU),
      [](void*, void* ctx) {
        const auto* m = static_cast<Mapping*>(ctx);
        ::munmap(m->base, m->length);
        delete m;
      },
      new Mapping{base, size_t(length)});
  DimVector shape(e.shape.begin(), e.shape.end());
  return ::stride::detail::make_tensor(std::move(storage), e.dtype, shape,
                                       contiguous_strides(shape), 0);
}

template <class GetTensor>
SafetensorsContents read_contents(OpenedFile& file, const std::string& path, GetTensor get) {
  SafetensorsContents out;
  out.metadata = std::move(file.header.metadata);
  out.tensors.reserve(file.header.entries.size());
  for (detail::TensorEntry& e : file.header.entries) {
    Tensor t = get(file, e, path);
    if (e.dtype == kBool) {
      detail::check_bool_data(static_cast<const unsigned char*>(t.data_ptr()), t.nbytes(), e.name,
                              path);
    }
    out.tensors.emplace_back(std::move(e.name), std::move(t));
  }
  return out;
}

}  // namespace

SafetensorsContents load_safetensors(const std::string& path) {
  OpenedFile file(path);
  check_fits_in_memory(file.data_bytes(), path);
  return read_contents(file, path, read_tensor);
}

SafetensorsContents map_safetensors(const std::string& path) {
  OpenedFile file(path);
  return read_contents(file, path, map_tensor);
}

void save_safetensors(const std::string& path,
                      const NamedTensors& tensors,
                      const Metadata& metadata) {
  std::vector<detail::TensorEntry> entries;
  entries.reserve(tensors.size());
  for (const auto& [name, t] : tensors) {
    STRIDE_CHECK(t.defined(), ValueError, "[save_safetensors] tensor \"", name, "\" is undefined");
    detail::TensorEntry e;
    e.name = name;
    e.dtype = t.scalar_type();
    e.shape = t.sizes().vec();
    entries.push_back(std::move(e));
  }
  // Validates names and metadata before anything touches the disk.
  const std::string prefix = detail::serialize_header(entries, metadata);

  detail::AtomicFile file(path, "save_safetensors");
  file.write(prefix.data(), prefix.size());
  // One contiguous copy at a time: a view is written in row-major order
  // without holding a second copy of the whole model.
  for (size_t i = 0; i < tensors.size(); ++i) {
    Tensor t = tensors[i].second;
    if (!t.device().is_cpu()) t = t.to(Device(kCPU));
    t = t.contiguous();
    STRIDE_ASSERT(t.nbytes() == entries[i].end - entries[i].begin, "[save_safetensors] tensor \"",
                  entries[i].name, "\" has ", t.nbytes(), " bytes but the header reserved ",
                  entries[i].end - entries[i].begin);
    if (t.nbytes() > 0) file.write(t.data_ptr(), t.nbytes());
  }
  file.commit();
}

}  // namespace stride::io
