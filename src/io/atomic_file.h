// Files written whole or not at all, and the file descriptors behind them:
// what save_safetensors and io::write_file_atomically share.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <string>
#include <system_error>

namespace stride::io::detail {

// POSIX calls move at most ~2 GiB at once; larger buffers go in chunks.
inline constexpr size_t kMaxChunk = size_t(1) << 30;

inline std::string errno_text(int err) {
  return std::error_code(err, std::generic_category()).message();
}

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() { close(); }
  int get() const { return fd_; }
  bool ok() const { return fd_ >= 0; }
  // Returns 0 or the errno of close(), which can be the first report of a
  // failed write.
  int close() {
    if (fd_ < 0) return 0;
    const int rc = ::close(fd_);
    fd_ = -1;
    return rc == 0 ? 0 : errno;
  }

 private:
  int fd_;
};

// Writes into a temporary file `path.tmp.<pid>` beside `path` and renames
// it over `path` on commit(), with an fsync of the file before and of the
// directory after, so a crash or error leaves either the old file or the new
// one. Until commit() succeeds, the destructor removes the temporary file.
// Opening one first removes the temporaries of `path` left by processes that
// died mid-write (kill -9), which no one else would ever remove. Errors are
// IOErrors that begin with "[op] path: ".
class AtomicFile {
 public:
  AtomicFile(std::string path, std::string op);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  void write(const void* data, size_t n);
  void commit();

 private:
  void sync_directory() const;
  [[noreturn]] void fail(int err, const std::string& what) const;

  std::string path_;
  std::string op_;
  std::string tmp_;
  FileDescriptor fd_;
  bool committed_ = false;
};

}  // namespace stride::io::detail
