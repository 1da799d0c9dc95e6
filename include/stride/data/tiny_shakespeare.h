// TinyShakespeare: where to find it, how to fetch it, and SHA-256.
//
// The corpus (1,115,394 bytes, public domain) is never committed. Lookup
// order: the --data path, then $STRIDE_DATA, then data/tinyshakespeare.txt;
// otherwise it is downloaded from karpathy/char-rnn with `curl` or `wget` (run
// as subprocesses: no network library is linked) and checked against its
// SHA-256 before it is moved into place.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stride/data/text.h"

namespace stride::data {

inline constexpr std::string_view kTinyShakespeareUrl =
    "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt";
inline constexpr std::string_view kTinyShakespeareSha256 =
    "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed";
inline constexpr int64_t kTinyShakespeareBytes = 1115394;

// Every knob of the lookup, injectable so tests need neither the network nor
// the real environment.
struct FindDataOptions {
  // The environment variable holding a path.
  std::string env_var = "STRIDE_DATA";
  // Checked after the environment, and where a download is saved.
  std::filesystem::path default_path = "data/tinyshakespeare.txt";
  std::string url = std::string(kTinyShakespeareUrl);
  std::string sha256 = std::string(kTinyShakespeareSha256);
  // Programs tried in order; a name containing "wget" gets wget's arguments,
  // any other curl's.
  std::vector<std::string> downloaders = {"curl", "wget"};
  // Download when nothing is found (else fail with the hint).
  bool download = true;
  // Silences the progress lines (on stderr) and the downloader's progress bar.
  bool quiet = false;
};

// The path of TinyShakespeare, found in this order:
//   1. `cli_path` (from --data), which must exist;
//   2. $STRIDE_DATA (options.env_var) when set and non-empty, which must exist;
//   3. options.default_path when it exists;
//   4. a download of options.url into options.default_path, checked against
//      options.sha256.
// Throws IOError with a hint (pass --data PATH or set STRIDE_DATA) when a
// given path is missing or the download fails (e.g. offline).
std::filesystem::path find_tinyshakespeare(
    const std::optional<std::string>& cli_path = std::nullopt, const FindDataOptions& options = {});

// find_tinyshakespeare + load_char_corpus.
CharCorpus load_tinyshakespeare(const std::optional<std::string>& cli_path = std::nullopt,
                                const FindDataOptions& options = {});

// Downloads `url` to `dest` with the first downloader that runs, checks the
// SHA-256 (hex, lowercase) of the bytes, then renames them into place (so
// `dest` never holds a partial or corrupt file). Throws IOError.
void download_file(const std::string& url,
                   const std::filesystem::path& dest,
                   const std::string& sha256,
                   const std::vector<std::string>& downloaders = {"curl", "wget"},
                   bool quiet = false);

// SHA-256 (FIPS 180-4) as 64 lowercase hex digits.
std::string sha256_hex(std::string_view bytes);
std::string sha256_file(const std::filesystem::path& path);

}  // namespace stride::data
