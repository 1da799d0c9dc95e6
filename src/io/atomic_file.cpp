#include "io/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <mutex>
#include <set>

#include "core/check.h"
#include "stride/io.h"

namespace stride::io {
namespace detail {
namespace {

// Temporary names are `path.tmp.<pid>`; a second save of the same path
// running concurrently in this process gets a suffix so that the two never
// write into one file.
class TempNames {
 public:
  static std::string claim(const std::string& path) {
    const std::string base = path + ".tmp." + std::to_string(::getpid());
    std::lock_guard lock(mutex());
    std::string name = base;
    for (int i = 1; in_use().count(name); ++i) name = base + "." + std::to_string(i);
    in_use().insert(name);
    return name;
  }
  static void release(const std::string& name) {
    std::lock_guard lock(mutex());
    in_use().erase(name);
  }

 private:
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static std::set<std::string>& in_use() {
    static std::set<std::string> names;
    return names;
  }
};

// The temporaries of `path` whose writer has died: `path.tmp.<pid>` and
// `path.tmp.<pid>.<n>` for a pid that no longer runs. Errors are ignored:
// cleaning up is a courtesy, never a reason to fail a save.
void remove_stale_temporaries(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  const std::string prefix = target.filename().string() + ".tmp.";
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string rest = name.substr(prefix.size());
    const size_t digits = std::min(rest.find('.'), rest.size());
    if (digits == 0 || digits > 9 ||
        !std::all_of(rest.begin(), rest.begin() + long(digits),
                     [](char c) { return c >= '0' && c <= '9'; })) {
      continue;
    }
    const pid_t pid = pid_t(std::stol(rest.substr(0, digits)));
    if (pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH) {
      std::error_code ignored;
      fs::remove(it->path(), ignored);
    }
  }
}

int open_temporary(const std::string& path, const std::string& tmp) {
  remove_stale_temporaries(path);
  return ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

}  // namespace

AtomicFile::AtomicFile(std::string path, std::string op)
    : path_(std::move(path)),
      op_(std::move(op)),
      tmp_(TempNames::claim(path_)),
      fd_(open_temporary(path_, tmp_)) {
  if (!fd_.ok()) {
    const int err = errno;
    TempNames::release(tmp_);
    fail(err, "cannot create the temporary file " + tmp_);
  }
}

AtomicFile::~AtomicFile() {
  if (!committed_) {
    fd_.close();
    ::unlink(tmp_.c_str());
  }
  TempNames::release(tmp_);
}

void AtomicFile::write(const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  while (n > 0) {
    const ssize_t put = ::write(fd_.get(), p, std::min(n, kMaxChunk));
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) fail(errno, "cannot write " + tmp_);
    p += put;
    n -= size_t(put);
  }
}

void AtomicFile::commit() {
  // Writes go straight to the kernel (no stdio buffer to flush); fsync
  // makes them durable before the rename can expose the file.
  if (::fsync(fd_.get()) != 0) fail(errno, "cannot fsync " + tmp_);
  if (const int err = fd_.close()) fail(err, "cannot close " + tmp_);
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) {
    fail(errno, "cannot rename " + tmp_ + " over the destination");
  }
  committed_ = true;
  sync_directory();
}

// The rename lives in the directory; without this fsync a crash can forget
// it and bring the old file back.
void AtomicFile::sync_directory() const {
  const std::filesystem::path parent = std::filesystem::path(path_).parent_path();
  const std::filesystem::path dir = parent.empty() ? std::filesystem::path(".") : parent;
  FileDescriptor d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!d.ok()) fail(errno, "saved, but cannot open directory " + dir.string() + " to fsync it");
  // EINVAL: this file system cannot sync directories; nothing more to do.
  if (::fsync(d.get()) != 0 && errno != EINVAL) {
    fail(errno, "saved, but cannot fsync directory " + dir.string());
  }
}

void AtomicFile::fail(int err, const std::string& what) const {
  throw IOError(
      ::stride::detail::str_cat("[", op_, "] ", path_, ": ", what, ": ", errno_text(err)));
}

}  // namespace detail

void create_directories(const std::string& path, const std::string& op) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) return;
  // The nearest part of the path that exists must be a directory.
  for (fs::path part = fs::path(path); !part.empty(); part = part.parent_path()) {
    if (!fs::exists(part, ec)) continue;
    if (!fs::is_directory(part, ec)) {
      throw IOError("[" + op + "] " + path + ": " + part.string() +
                    " is a file, not a directory. Hint: choose a directory path.");
    }
    break;
  }
  fs::create_directories(path, ec);
  if (ec || !fs::is_directory(path)) {
    throw IOError("[" + op + "] " + path + ": cannot create the directory (" +
                  (ec ? ec.message() : std::string("not created")) +
                  "). Hint: choose a directory on a writable file system.");
  }
}

void write_file_atomically(const std::string& path, std::string_view bytes, const std::string& op) {
  detail::AtomicFile file(path, op);
  file.write(bytes.data(), bytes.size());
  file.commit();
}

}  // namespace stride::io
