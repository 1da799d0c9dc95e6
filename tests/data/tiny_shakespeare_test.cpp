// SHA-256 known answers; TinyShakespeare's lookup order; the download path
// through file:// URLs and a missing downloader (no network needed).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "stride/data.h"
#include "support/temp_dir.h"

namespace stride::data {
namespace {

namespace fs = std::filesystem;

using stride::testing::TempDir;

// Sets an environment variable for the scope of a test.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const std::string& value) : name_(std::move(name)) {
    ::setenv(name_.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() { ::unsetenv(name_.c_str()); }

 private:
  std::string name_;
};

bool have_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  std::string p = path;
  size_t start = 0;
  while (start <= p.size()) {
    const size_t end = std::min(p.find(':', start), p.size());
    if (::access((fs::path(p.substr(start, end - start)) / name).c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

// Options that touch nothing outside a temp dir.
FindDataOptions isolated(const TempDir& dir) {
  FindDataOptions o;
  o.env_var = "STRIDE_DATA_LOCATION_TEST";
  o.default_path = dir.path() / "data" / "tinyshakespeare.txt";
  o.downloaders = {"/nonexistent/stride-test-curl"};
  o.quiet = true;
  return o;
}

// ---- SHA-256 (FIPS 180-2 appendix B and NIST CAVP vectors) ----

TEST(Sha256, KnownAnswers) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // 55, 56 and 64 bytes: the padding edge cases.
  EXPECT_EQ(sha256_hex(std::string(55, 'a')),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(sha256_hex(std::string(56, 'a')),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(sha256_hex(std::string(64, 'a')),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

TEST(Sha256, FileMatchesString) {
  TempDir dir;
  std::string big;
  for (int i = 0; i < 200000; ++i) big += char('a' + i % 26);
  EXPECT_EQ(sha256_file(dir.write("big.txt", big)), sha256_hex(big));
  EXPECT_THROW(sha256_file(dir.path() / "missing"), IOError);
}

TEST(Sha256, RealCorpusMatchesTheCanonicalChecksum) {
  const char* env = std::getenv("STRIDE_DATA");
  if (!env || !*env) GTEST_SKIP() << "STRIDE_DATA is unset";
  EXPECT_EQ(sha256_file(env), kTinyShakespeareSha256);
}

// ---- lookup order ----

TEST(TinyShakespeare, LocationOrderIsFlagThenEnvThenDefault) {
  TempDir dir;
  FindDataOptions o = isolated(dir);
  const fs::path flag = dir.write("flag.txt", "flag");
  const fs::path env = dir.write("env.txt", "env");
  fs::create_directories(o.default_path.parent_path());
  std::ofstream(o.default_path) << "default";

  {
    ScopedEnv set(o.env_var, env.string());
    EXPECT_EQ(find_tinyshakespeare(flag.string(), o), flag);
    EXPECT_EQ(find_tinyshakespeare(std::nullopt, o), env);
  }
  EXPECT_EQ(find_tinyshakespeare(std::nullopt, o), o.default_path);
  {
    ScopedEnv empty(o.env_var, "");  // set but empty: ignored
    EXPECT_EQ(find_tinyshakespeare(std::nullopt, o), o.default_path);
  }
}

TEST(TinyShakespeare, MissingGivenPathsFailInsteadOfFallingThrough) {
  TempDir dir;
  FindDataOptions o = isolated(dir);
  fs::create_directories(o.default_path.parent_path());
  std::ofstream(o.default_path) << "default";
  try {
    find_tinyshakespeare((dir.path() / "nope.txt").string(), o);
    FAIL() << "expected IOError";
  } catch (const IOError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("--data"), std::string::npos) << msg;
    EXPECT_NE(msg.find("nope.txt"), std::string::npos) << msg;
  }
  ScopedEnv set(o.env_var, (dir.path() / "gone.txt").string());
  try {
    find_tinyshakespeare(std::nullopt, o);
    FAIL() << "expected IOError";
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find("$STRIDE_DATA_LOCATION_TEST"), std::string::npos)
        << e.what();
  }
}

// ---- offline and download ----

TEST(TinyShakespeare, OfflineMessageTellsHowToProvideTheFile) {
  TempDir dir;
  const FindDataOptions o = isolated(dir);  // the downloader does not exist
  try {
    find_tinyshakespeare(std::nullopt, o);
    FAIL() << "expected IOError";
  } catch (const IOError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("could not download"), std::string::npos) << msg;
    EXPECT_NE(msg.find("offline"), std::string::npos) << msg;
    EXPECT_NE(msg.find("/nonexistent/stride-test-curl: not found"), std::string::npos) << msg;
    EXPECT_NE(msg.find("--data PATH"), std::string::npos) << msg;
    EXPECT_NE(msg.find("STRIDE_DATA"), std::string::npos) << msg;
  }
  EXPECT_FALSE(fs::exists(o.default_path));

  FindDataOptions no_download = o;
  no_download.download = false;
  try {
    find_tinyshakespeare(std::nullopt, no_download);
    FAIL() << "expected IOError";
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find("--data PATH"), std::string::npos) << e.what();
  }
}

TEST(TinyShakespeare, FailedDownloaderRunNamesItsExitCode) {
  if (!have_program("curl")) GTEST_SKIP() << "curl is not installed";
  TempDir dir;
  FindDataOptions o = isolated(dir);
  o.downloaders = {"curl"};
  o.url = "file://" + (dir.path() / "no-such-file.txt").string();
  try {
    find_tinyshakespeare(std::nullopt, o);
    FAIL() << "expected IOError";
  } catch (const IOError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("curl: exited with 37"), std::string::npos) << msg;
    EXPECT_NE(msg.find("STRIDE_DATA"), std::string::npos) << msg;
  }
  EXPECT_FALSE(fs::exists(o.default_path));
}

TEST(TinyShakespeare, DownloadChecksTheSha256BeforeMovingIntoPlace) {
  if (!have_program("curl")) GTEST_SKIP() << "curl is not installed";
  TempDir dir;
  const std::string text = "First Citizen:\nBefore we proceed any further, hear me speak.\n";
  const fs::path source = dir.write("source.txt", text);
  FindDataOptions o = isolated(dir);
  // A missing downloader first: the next one is tried.
  o.downloaders = {"/nonexistent/stride-test-curl", "curl"};
  o.url = "file://" + source.string();

  o.sha256 = sha256_hex("something else");
  try {
    find_tinyshakespeare(std::nullopt, o);
    FAIL() << "expected IOError";
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find("SHA-256 " + sha256_hex(text)), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(o.default_path));
  EXPECT_FALSE(fs::exists(o.default_path.string() + ".part"));

  o.sha256 = sha256_hex(text);
  EXPECT_EQ(find_tinyshakespeare(std::nullopt, o), o.default_path);
  EXPECT_EQ(read_text_file(o.default_path), text);
  // Found locally the next time: no download.
  o.downloaders = {};
  EXPECT_EQ(find_tinyshakespeare(std::nullopt, o), o.default_path);
}

TEST(TinyShakespeare, LoadsTheRealCorpus) {
  const char* env = std::getenv("STRIDE_DATA");
  if (!env || !*env) GTEST_SKIP() << "STRIDE_DATA is unset";
  FindDataOptions o;
  o.download = false;
  const CharCorpus corpus = load_tinyshakespeare(std::nullopt, o);
  EXPECT_EQ(int64_t(corpus.text.size()), kTinyShakespeareBytes);
  EXPECT_EQ(corpus.tokenizer.vocab_size(), 65);
  EXPECT_EQ(corpus.text.substr(0, 14), "First Citizen:");
}

}  // namespace
}  // namespace stride::data
