// Finding and downloading TinyShakespeare, and SHA-256 (tiny_shakespeare.h).
#include "stride/data/tiny_shakespeare.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <system_error>

#include "core/check.h"

extern char** environ;

namespace stride::data {

using stride::detail::str_cat;

namespace {

// ---- SHA-256, FIPS 180-4 ----

constexpr std::array<uint32_t, 64> kRoundConstants = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

class Sha256 {
 public:
  void update(const uint8_t* data, size_t n) {
    total_ += n;
    while (n > 0) {
      const size_t take = std::min(n, size_t(64) - buffered_);
      std::memcpy(buffer_.data() + buffered_, data, take);
      buffered_ += take;
      data += take;
      n -= take;
      if (buffered_ == 64) {
        compress(buffer_.data());
        buffered_ = 0;
      }
    }
  }

  std::string hex_digest() {
    const uint64_t bits = total_ * 8;
    const uint8_t one = 0x80, zero = 0;
    update(&one, 1);
    while (buffered_ != 56) update(&zero, 1);
    std::array<uint8_t, 8> length;
    for (int i = 0; i < 8; ++i) length[size_t(i)] = uint8_t(bits >> (56 - 8 * i));
    update(length.data(), 8);
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    for (uint32_t word : h_) {
      for (int shift = 28; shift >= 0; shift -= 4) out.push_back(kHex[(word >> shift) & 0xf]);
    }
    return out;
  }

 private:
  static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

  void compress(const uint8_t* block) {
    std::array<uint32_t, 64> w;
    for (int i = 0; i < 16; ++i) {
      w[size_t(i)] = uint32_t(block[4 * i]) << 24 | uint32_t(block[4 * i + 1]) << 16 |
                     uint32_t(block[4 * i + 2]) << 8 | uint32_t(block[4 * i + 3]);
    }
    for (size_t i = 16; i < 64; ++i) {
      const uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
    for (size_t i = 0; i < 64; ++i) {
      const uint32_t s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
      const uint32_t ch = (e & f) ^ (~e & g);
      const uint32_t t1 = h + s1 + ch + kRoundConstants[i] + w[i];
      const uint32_t s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
      const uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
      const uint32_t t2 = s0 + maj;
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    h_[0] += a;
    h_[1] += b;
    h_[2] += c;
    h_[3] += d;
    h_[4] += e;
    h_[5] += f;
    h_[6] += g;
    h_[7] += h;
  }

  std::array<uint32_t, 8> h_ = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t total_ = 0;
};

// ---- subprocess ----

constexpr const char* kHint =
    "Hint: pass --data PATH to a copy of tinyshakespeare.txt, or set STRIDE_DATA=PATH "
    "(the file is "
    "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/"
    "tinyshakespeare/input.txt).";

struct RunResult {
  bool started = false;
  int spawn_errno = 0;
  int exit_code = -1;  // -1 when killed by a signal
};

// Runs argv[0] (looked up in PATH) and waits for it. stdout goes to /dev/null,
// and so does stderr when `quiet`.
RunResult run_program(const std::vector<std::string>& args, bool quiet) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  if (quiet) posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  RunResult result;
  const int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    result.spawn_errno = rc;
    return result;
  }
  result.started = true;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      result.exit_code = -1;
      return result;
    }
  }
  // posix_spawnp may report a missing program as exit code 127 from the child.
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (result.exit_code == 127) {
    result.started = false;
    result.spawn_errno = ENOENT;
  }
  return result;
}

std::vector<std::string> downloader_args(const std::string& program,
                                         const std::string& url,
                                         const std::string& out,
                                         bool quiet) {
  if (program.find("wget") != std::string::npos) {
    std::vector<std::string> a = {program, "--tries=2", "--timeout=30", "-O", out};
    if (quiet) {
      a.push_back("-q");
    } else {
      a.push_back("-q");
      a.push_back("--show-progress");
    }
    a.push_back(url);
    return a;
  }
  std::vector<std::string> a = {program, "--fail",   "--location", "--connect-timeout",
                                "30",    "--output", out};
  a.push_back(quiet ? "--silent" : "--progress-bar");
  a.push_back(url);
  return a;
}

std::string curl_reason(int code) {
  switch (code) {
    case 6:
      return " (could not resolve the host: offline?)";
    case 7:
      return " (could not connect: offline?)";
    case 22:
      return " (the server returned an HTTP error)";
    case 28:
      return " (timed out)";
    case 37:
      return " (could not read the file)";
    default:
      return "";
  }
}

void require_file(const std::filesystem::path& path, const char* source) {
  std::error_code ec;
  STRIDE_CHECK(std::filesystem::is_regular_file(path, ec), IOError, "[find_tinyshakespeare] ",
               source, " points to ", path, ", which is not a readable file. ", kHint);
}

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  Sha256 h;
  h.update(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return h.hex_digest();
}

std::string sha256_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  STRIDE_CHECK(in.good(), IOError, "[sha256_file] cannot open ", path, " for reading.");
  Sha256 h;
  std::array<char, 1 << 16> buf;
  while (in) {
    in.read(buf.data(), std::streamsize(buf.size()));
    h.update(reinterpret_cast<const uint8_t*>(buf.data()), size_t(in.gcount()));
  }
  STRIDE_CHECK(!in.bad(), IOError, "[sha256_file] failed reading ", path, ".");
  return h.hex_digest();
}

void download_file(const std::string& url,
                   const std::filesystem::path& dest,
                   const std::string& sha256,
                   const std::vector<std::string>& downloaders,
                   bool quiet) {
  std::error_code ec;
  if (dest.has_parent_path()) std::filesystem::create_directories(dest.parent_path(), ec);
  const std::filesystem::path part = dest.string() + ".part";
  std::string failures;
  for (const std::string& program : downloaders) {
    std::filesystem::remove(part, ec);
    if (!quiet)
      std::cerr << "stride: downloading " << url << " to " << dest << " with " << program
                << std::endl;
    const RunResult r = run_program(downloader_args(program, url, part.string(), quiet), quiet);
    if (!r.started) {
      failures += str_cat(" ", program, ": not found (", std::strerror(r.spawn_errno), ");");
      continue;
    }
    if (r.exit_code != 0) {
      const bool curl = program.find("wget") == std::string::npos;
      failures += str_cat(" ", program, ": exited with ", r.exit_code,
                          curl ? curl_reason(r.exit_code) : std::string(), ";");
      std::filesystem::remove(part, ec);
      continue;
    }
    const std::string got = sha256_file(part);
    if (got != sha256) {
      std::filesystem::remove(part, ec);
      throw IOError(str_cat("[download_file] the file downloaded from ", url, " has SHA-256 ", got,
                            " but ", sha256, " was expected; it was deleted. ", kHint));
    }
    std::filesystem::rename(part, dest, ec);
    STRIDE_CHECK(!ec, IOError, "[download_file] cannot move the download into ", dest, ": ",
                 ec.message(), ".");
    if (!quiet) std::cerr << "stride: saved " << dest << " (SHA-256 verified)" << std::endl;
    return;
  }
  if (downloaders.empty()) failures = " no downloader was given;";
  failures.pop_back();
  throw IOError(str_cat("[download_file] could not download ", url,
                        " (you may be offline):", failures, ". ", kHint));
}

std::filesystem::path find_tinyshakespeare(const std::optional<std::string>& cli_path,
                                           const FindDataOptions& options) {
  if (cli_path) {
    require_file(*cli_path, "--data");
    return *cli_path;
  }
  if (!options.env_var.empty()) {
    if (const char* env = std::getenv(options.env_var.c_str()); env && *env) {
      const std::string source = "$" + options.env_var;
      require_file(env, source.c_str());
      return env;
    }
  }
  std::error_code ec;
  if (std::filesystem::is_regular_file(options.default_path, ec)) return options.default_path;
  STRIDE_CHECK(options.download, IOError,
               "[find_tinyshakespeare] TinyShakespeare was not found (no --data, $",
               options.env_var, " is unset and ", options.default_path,
               " does not exist) and downloading is disabled. ", kHint);
  download_file(options.url, options.default_path, options.sha256, options.downloaders,
                options.quiet);
  return options.default_path;
}

CharCorpus load_tinyshakespeare(const std::optional<std::string>& cli_path,
                                const FindDataOptions& options) {
  return load_char_corpus(find_tinyshakespeare(cli_path, options));
}

}  // namespace stride::data
