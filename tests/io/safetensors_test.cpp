// save_safetensors / load_safetensors: tensors through real files. The raw
// header layer has its own tests in safetensors_format_test.cpp.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "io/safetensors_format.h"
#include "io/safetensors_test_util.h"
#include "stride/error.h"
#include "stride/io.h"
#include "stride/ops.h"

namespace stride::io {
namespace {

using test_util::le64;
using test_util::make_file;
using test_util::MalformedCase;
using test_util::read_bytes;
using test_util::ScratchDir;
using test_util::write_bytes;

constexpr ScalarType kAllDtypes[] = {kBool,    kUInt8,    kInt32,   kInt64,
                                     kFloat16, kBFloat16, kFloat32, kFloat64};

// The tensor's elements in row-major order, as raw bytes.
std::string bytes_of(const Tensor& t) {
  const Tensor c = t.contiguous();
  return std::string(static_cast<const char*>(c.data_ptr()), c.nbytes());
}

// Bytes that exercise every bit: arbitrary for numbers (NaN payloads
// included), 0/1 for bool.
std::string pattern(ScalarType dtype, int64_t numel, int seed) {
  std::string bytes(size_t(numel) * element_size(dtype), '\0');
  for (size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = dtype == kBool ? char((i * 7 + size_t(seed)) % 3 == 0)
                              : char(uint8_t(i * 37 + size_t(seed) * 11 + 5));
  }
  return bytes;
}

Tensor patterned(ScalarType dtype, IntArrayRef shape, int seed) {
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  const std::string bytes = pattern(dtype, numel, seed);
  return from_blob(bytes.data(), shape, dtype);
}

void expect_io_error(const std::function<void()>& fn, const std::string& expected) {
  try {
    fn();
    ADD_FAILURE() << "expected IOError containing: " << expected;
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
}

// ---- round trips ----

class SafetensorsRoundTrip : public ScratchDir, public ::testing::WithParamInterface<ScalarType> {};

TEST_P(SafetensorsRoundTrip, PreservesShapeDtypeAndEveryByte) {
  const ScalarType dtype = GetParam();
  const size_t isz = element_size(dtype);
  const Tensor matrix = patterned(dtype, {2, 3}, 1);
  const Tensor scalar = from_blob(pattern(dtype, 1, 2).data(), {}, dtype);
  const Tensor empty_rows = patterned(dtype, {0, 3}, 3);
  const Tensor source = patterned(dtype, {3, 4}, 4);
  const Tensor transposed = source.transpose(0, 1);                      // (4, 3), strides (1, 4)
  const Tensor strided = patterned(dtype, {4, 6}, 5).slice(1, 1, 6, 2);  // (4, 3), offset 1
  ASSERT_FALSE(transposed.is_contiguous());
  ASSERT_FALSE(strided.is_contiguous());
  const NamedTensors tensors = {{"matrix", matrix},
                                {"scalar", scalar},
                                {"empty_rows", empty_rows},
                                {"transposed", transposed},
                                {"strided", strided}};
  save_safetensors(path("t.safetensors"), tensors);
  const SafetensorsContents loaded = load_safetensors(path("t.safetensors"));
  const SafetensorsContents mapped = map_safetensors(path("t.safetensors"));

  for (const SafetensorsContents* contents : {&loaded, &mapped}) {
    ASSERT_EQ(contents->tensors.size(), tensors.size());
    for (size_t i = 0; i < tensors.size(); ++i) {
      const auto& [name, expected] = tensors[i];
      SCOPED_TRACE(name + (contents == &mapped ? " (mapped)" : ""));
      EXPECT_EQ(contents->tensors[i].first, name);
      const Tensor& got = contents->tensors[i].second;
      EXPECT_EQ(got.scalar_type(), dtype);
      EXPECT_EQ(got.sizes(), expected.sizes());
      EXPECT_EQ(bytes_of(got), bytes_of(expected));
    }
  }
  EXPECT_EQ(loaded.at("scalar").dim(), 0);
  EXPECT_EQ(loaded.at("empty_rows").numel(), 0);

  // Row-major order of the transposed view, computed without contiguous().
  const std::string src = pattern(dtype, 12, 4);
  std::string expected;
  for (size_t r = 0; r < 4; ++r) {
    for (size_t c = 0; c < 3; ++c) expected += src.substr((c * 4 + r) * isz, isz);
  }
  const Tensor& t = loaded.at("transposed");
  EXPECT_EQ(std::string(static_cast<const char*>(t.data_ptr()), t.nbytes()), expected);
}

INSTANTIATE_TEST_SUITE_P(Safetensors,
                         SafetensorsRoundTrip,
                         ::testing::ValuesIn(kAllDtypes),
                         [](const auto& param_info) {
                           return std::string(to_string(param_info.param));
                         });

class SafetensorsSave : public ScratchDir {};
class SafetensorsLoad : public ScratchDir {};

TEST_F(SafetensorsSave, WritesKnownBytes) {
  // The same file as SafetensorsFormat.SerializesKnownHeaderBytes, now with
  // its data: 1.0f = 00 00 80 3f, -2.0f = 00 00 00 c0, then the byte 7.
  const std::string header =
      R"({"__metadata__":{"k":"v"},"a":{"data_offsets":[8,9],"dtype":"U8","shape":[]},)"
      R"("b":{"data_offsets":[0,8],"dtype":"F32","shape":[2]}})";
  const std::string expected = std::string("\x88\0\0\0\0\0\0\0", 8) + header + std::string(6, ' ') +
                               std::string("\x00\x00\x80\x3f\x00\x00\x00\xc0\x07", 9);
  ASSERT_EQ(expected.size(), 153u);
  save_safetensors(path("tiny.safetensors"),
                   {{"b", tensor<float>({1.0f, -2.0f})}, {"a", scalar_tensor(7, kUInt8)}},
                   {{"k", "v"}});
  EXPECT_EQ(read_bytes(path("tiny.safetensors")), expected);
}

TEST_F(SafetensorsSave, WritesTransposedViewInRowMajorOrder) {
  const Tensor t = tensor<float>({1, 2, 3, 4, 5, 6}, {2, 3}).transpose(0, 1);
  save_safetensors(path("t.safetensors"), {{"t", t}});
  const std::string file = read_bytes(path("t.safetensors"));
  ASSERT_GE(file.size(), 24u);
  std::vector<float> data(6);
  std::memcpy(data.data(), file.data() + file.size() - 24, 24);
  EXPECT_EQ(data, (std::vector<float>{1, 4, 2, 5, 3, 6}));
  const Tensor loaded = load_safetensors(path("t.safetensors")).at("t");
  EXPECT_EQ(loaded.sizes().vec(), (std::vector<int64_t>{3, 2}));
  EXPECT_TRUE(equal(loaded, t));
}

TEST_F(SafetensorsSave, WritesOnlyTheElementsOfAnOffsetView) {
  const Tensor rows = tensor<int64_t>({1, 2, 3, 4, 5, 6}, {3, 2});
  save_safetensors(path("row.safetensors"), {{"row", rows[1]}});
  const Tensor loaded = load_safetensors(path("row.safetensors")).at("row");
  EXPECT_EQ(loaded.to_vector<int64_t>(), (std::vector<int64_t>{3, 4}));
}

TEST_F(SafetensorsSave, ConvertedDtypesKeepValues) {
  const Tensor values = tensor<float>({0, 1, 2, -3, 4.5f, 6});
  NamedTensors tensors;
  for (ScalarType dtype : {kFloat16, kBFloat16, kFloat32, kFloat64, kInt32, kInt64}) {
    tensors.emplace_back(std::string(to_string(dtype)), values.to(dtype));
  }
  save_safetensors(path("v.safetensors"), tensors);
  const SafetensorsContents loaded = load_safetensors(path("v.safetensors"));
  for (const auto& [name, t] : tensors) {
    EXPECT_TRUE(equal(loaded.at(name), t)) << name;
  }
}

TEST_F(SafetensorsSave, MetadataRoundTrips) {
  const Metadata metadata = {{"config", R"({"dim": 64, "name": "tiny"})"},
                             {"step", "1200"},
                             {"empty", ""},
                             {"\xc3\xbcnicode", "\xe2\x9c\x93 \n\t\"quoted\""}};
  save_safetensors(path("m.safetensors"), {{"w", tensor<float>({1})}}, metadata);
  EXPECT_EQ(load_safetensors(path("m.safetensors")).metadata, metadata);

  save_safetensors(path("none.safetensors"), {{"w", tensor<float>({1})}});
  EXPECT_TRUE(load_safetensors(path("none.safetensors")).metadata.empty());
  EXPECT_EQ(read_bytes(path("none.safetensors")).find("__metadata__"), std::string::npos);
}

TEST_F(SafetensorsSave, MetadataOnlyFileRoundTrips) {
  save_safetensors(path("m.safetensors"), {}, {{"k", "v"}});
  const SafetensorsContents loaded = load_safetensors(path("m.safetensors"));
  EXPECT_TRUE(loaded.tensors.empty());
  EXPECT_EQ(loaded.metadata, (Metadata{{"k", "v"}}));
}

TEST_F(SafetensorsSave, KeepsTheGivenOrderOfData) {
  save_safetensors(
      path("o.safetensors"),
      {{"z", tensor<float>({1})}, {"a", tensor<float>({2})}, {"m", tensor<float>({3})}});
  const SafetensorsContents loaded = load_safetensors(path("o.safetensors"));
  ASSERT_EQ(loaded.tensors.size(), 3u);
  EXPECT_EQ(loaded.tensors[0].first, "z");
  EXPECT_EQ(loaded.tensors[1].first, "a");
  EXPECT_EQ(loaded.tensors[2].first, "m");
  EXPECT_EQ(loaded.at("m").to_vector<float>(), std::vector<float>{3});
}

TEST_F(SafetensorsSave, RejectsBadNamesBeforeWriting) {
  const Tensor t = tensor<float>({1});
  EXPECT_THROW(save_safetensors(path("x"), {{"w", t}, {"w", t}}), ValueError);
  EXPECT_THROW(save_safetensors(path("x"), {{"", t}}), ValueError);
  EXPECT_THROW(save_safetensors(path("x"), {{"__metadata__", t}}), ValueError);
  EXPECT_THROW(save_safetensors(path("x"), {{"w", Tensor()}}), ValueError);
  EXPECT_TRUE(listing().empty());
}

// ---- atomic saves ----

TEST_F(SafetensorsSave, ReplacesAnExistingFileAndLeavesNoTempFile) {
  write_bytes(path("m.safetensors"), "old contents, not even safetensors");
  save_safetensors(path("m.safetensors"), {{"w", tensor<float>({1, 2})}});
  save_safetensors(path("m.safetensors"), {{"w", tensor<float>({3, 4, 5})}});
  EXPECT_EQ(load_safetensors(path("m.safetensors")).at("w").to_vector<float>(),
            (std::vector<float>{3, 4, 5}));
  EXPECT_EQ(listing(), std::vector<std::string>{"m.safetensors"});
}

// kill -9 during a save leaves `path.tmp.<pid>` behind: the next save of the
// same path removes those of dead processes, and only those.
TEST_F(SafetensorsSave, RemovesTheTemporariesOfDeadWriters) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);  // a pid that no longer runs
  const std::string p = path("m.safetensors");
  const std::string dead = p + ".tmp." + std::to_string(child);
  const std::string dead_second = dead + ".2";
  const std::string live = p + ".tmp." + std::to_string(getppid());
  const std::string other = path("other.safetensors.tmp." + std::to_string(child));
  for (const std::string& f : {dead, dead_second, live, other}) write_bytes(f, "partial");
  save_safetensors(p, {{"w", ones({2})}});
  EXPECT_FALSE(std::filesystem::exists(dead));
  EXPECT_FALSE(std::filesystem::exists(dead_second));
  EXPECT_TRUE(std::filesystem::exists(live));   // its writer may still be at work
  EXPECT_TRUE(std::filesystem::exists(other));  // another file's
}

TEST_F(SafetensorsSave, WriteFileAtomicallyReplacesWholeFiles) {
  const std::string p = path("notes.txt");
  write_file_atomically(p, "first");
  write_file_atomically(p, "second, longer");
  std::ifstream in(p);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "second, longer");
  EXPECT_EQ(listing(), std::vector<std::string>{"notes.txt"});
  expect_io_error([&] { write_file_atomically(path("no/such/dir.txt"), "x", "notes"); },
                  "[notes] " + path("no/such/dir.txt") + ": cannot create the temporary file");
}

TEST_F(SafetensorsSave, MissingDirectoryThrowsIOError) {
  expect_io_error(
      [&] {
        save_safetensors(path("missing/m.safetensors"), {{"w", tensor<float>({1})}});
      },
      "[save_safetensors] " + path("missing/m.safetensors"));
  EXPECT_TRUE(listing().empty());
}

TEST_F(SafetensorsSave, FailedSaveKeepsTheOldFile) {
  const std::string target = path("m.safetensors");
  save_safetensors(target, {{"w", tensor<float>({1, 2})}});
  const std::string before = read_bytes(target);
  // A directory where the temporary file must go makes the save fail.
  const std::string blocker = target + ".tmp." + std::to_string(::getpid());
  ASSERT_TRUE(std::filesystem::create_directory(blocker));
  expect_io_error(
      [&] {
        save_safetensors(target, {{"w", tensor<float>({3, 4, 5})}});
      },
      "cannot create the temporary file");
  EXPECT_EQ(read_bytes(target), before);
  EXPECT_TRUE(std::filesystem::is_directory(blocker));
}

TEST_F(SafetensorsSave, FailedRenameRemovesTheTempFile) {
  // rename() cannot replace a non-empty directory with a file.
  ASSERT_TRUE(std::filesystem::create_directory(path("m.safetensors")));
  write_bytes(path("m.safetensors/inside"), "x");
  expect_io_error(
      [&] {
        save_safetensors(path("m.safetensors"), {{"w", tensor<float>({1})}});
      },
      "cannot rename");
  EXPECT_EQ(listing(), std::vector<std::string>{"m.safetensors"});
}

TEST_F(SafetensorsSave, RelativePathInCurrentDirectory) {
  const std::filesystem::path old_cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir_);
  EXPECT_NO_THROW(save_safetensors("rel.safetensors", {{"w", tensor<float>({1})}}));
  std::filesystem::current_path(old_cwd);
  EXPECT_EQ(load_safetensors(path("rel.safetensors")).at("w").to_vector<float>(),
            std::vector<float>{1});
}

// ---- loading ----

TEST_F(SafetensorsLoad, ReadsAReferenceWrittenFile) {
  // As Python's safetensors writes it: keys in insertion order, metadata
  // first, data not in name order, header padded with spaces.
  std::string header = R"({"__metadata__":{"format":"pt"},)"
                       R"("weight":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},)"
                       R"("bias":{"dtype":"I64","shape":[2],"data_offsets":[16,32]},)"
                       R"("mask":{"dtype":"BOOL","shape":[3],"data_offsets":[32,35]}})";
  header.append((8 - header.size() % 8) % 8, ' ');
  const float w[] = {0.5f, -1.0f, 2.0f, 3.25f};
  const int64_t b[] = {-7, 1LL << 40};
  std::string data(reinterpret_cast<const char*>(w), sizeof(w));
  data.append(reinterpret_cast<const char*>(b), sizeof(b));
  data.append(std::string("\x01\x00\x01", 3));
  write_bytes(path("ref.safetensors"), make_file(header, data));

  const SafetensorsContents loaded = load_safetensors(path("ref.safetensors"));
  EXPECT_EQ(loaded.metadata, (Metadata{{"format", "pt"}}));
  ASSERT_EQ(loaded.tensors.size(), 3u);
  EXPECT_EQ(loaded.tensors[0].first, "weight");
  EXPECT_EQ(loaded.tensors[1].first, "bias");
  EXPECT_EQ(loaded.tensors[2].first, "mask");
  EXPECT_TRUE(equal(loaded.at("weight"), tensor<float>({0.5f, -1.0f, 2.0f, 3.25f}, {2, 2})));
  EXPECT_EQ(loaded.at("bias").to_vector<int64_t>(), (std::vector<int64_t>{-7, 1LL << 40}));
  EXPECT_EQ(loaded.at("mask").scalar_type(), kBool);
  EXPECT_EQ(bytes_of(loaded.at("mask")), std::string("\x01\x00\x01", 3));
}

// A mapped tensor is this process's copy-on-write view: writing to it
// changes neither the file nor a later mapping, and it outlives the file's
// name.
TEST_F(SafetensorsLoad, MappedTensorsAreCopyOnWriteViewsOfTheFile) {
  const Tensor weights = arange(0, 4096, 1, kFloat32).reshape({64, 64});
  save_safetensors(path("w.safetensors"), {{"b", tensor<int64_t>({3, 4})}, {"w", weights}});
  SafetensorsContents mapped = map_safetensors(path("w.safetensors"));
  Tensor w = mapped.at("w");
  w.mul_(2.0);
  EXPECT_TRUE(equal(w, weights * 2.0));
  EXPECT_TRUE(equal(map_safetensors(path("w.safetensors")).at("w"), weights));
  EXPECT_TRUE(equal(load_safetensors(path("w.safetensors")).at("w"), weights));
  std::filesystem::remove(path("w.safetensors"));
  mapped = SafetensorsContents();
  EXPECT_TRUE(equal(w, weights * 2.0));  // the view keeps its mapping
}

// Writers pad the header so that data starts aligned; a file that does not
// still maps, its misaligned tensors read into memory.
TEST_F(SafetensorsLoad, MapReadsMisalignedTensorsIntoMemory) {
  const std::string header = R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                             R"("w":{"dtype":"F32","shape":[2],"data_offsets":[1,9]}})";
  ASSERT_NE((8 + header.size() + 1) % 4, 0u);
  const float w[] = {1.5f, -2.0f};
  write_bytes(path("u.safetensors"),
              make_file(header, std::string("\x07", 1) +
                                    std::string(reinterpret_cast<const char*>(w), sizeof(w))));
  const SafetensorsContents mapped = map_safetensors(path("u.safetensors"));
  EXPECT_EQ(mapped.at("a").to_vector<uint8_t>(), (std::vector<uint8_t>{7}));
  EXPECT_EQ(mapped.at("w").to_vector<float>(), (std::vector<float>{1.5f, -2.0f}));
}

TEST_F(SafetensorsLoad, AtNamesTheMissingTensorAndTheOnesPresent) {
  save_safetensors(path("m.safetensors"), {{"a", tensor<float>({1})}, {"b", tensor<float>({2})}});
  const SafetensorsContents loaded = load_safetensors(path("m.safetensors"));
  expect_io_error([&] { loaded.at("c"); },
                  "no tensor named \"c\"; the file has 2 tensors: \"a\", \"b\"");
}

TEST_F(SafetensorsLoad, MissingFileThrowsIOError) {
  expect_io_error([&] { load_safetensors(path("nope.safetensors")); },
                  path("nope.safetensors") + ": cannot open: No such file or directory");
}

TEST_F(SafetensorsLoad, DirectoryThrowsIOError) {
  expect_io_error([&] { load_safetensors(dir_); }, "not a regular file (a directory)");
}

// Opening a FIFO for reading waits for a writer: the load must not.
TEST_F(SafetensorsLoad, FifoThrowsIOErrorWithoutWaiting) {
  const std::string p = path("pipe.safetensors");
  ASSERT_EQ(mkfifo(p.c_str(), 0600), 0);
  expect_io_error([&] { load_safetensors(p); }, "not a regular file (a FIFO)");
}

// A sparse file takes no disk yet holds a terabyte-sized tensor whose
// header is valid: the load refuses it before allocating.
TEST_F(SafetensorsLoad, ATensorLargerThanMemoryThrowsIOError) {
  const std::string p = path("sparse.safetensors");
  const uint64_t numel = uint64_t(1) << 38, nbytes = numel * 4;  // 1 TiB of float32
  const std::string header = R"({"w":{"dtype":"F32","shape":[)" + std::to_string(numel) +
                             R"(],"data_offsets":[0,)" + std::to_string(nbytes) + "]}}";
  write_bytes(p, le64(header.size()) + header);
  std::error_code err;
  std::filesystem::resize_file(p, 8 + header.size() + nbytes, err);
  if (err) GTEST_SKIP() << "this file system cannot hold a 1 TiB sparse file: " << err.message();
  expect_io_error([&] { load_safetensors(p); }, "its tensors hold 1099511627776 bytes");
  expect_io_error([&] { load_safetensors(p); }, "of memory this process can allocate");
}

TEST_F(SafetensorsLoad, BoolBytesOtherThanZeroOrOneThrow) {
  write_bytes(path("b.safetensors"),
              make_file(R"({"m":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}})",
                        std::string("\x01\x02\x00", 3)));
  expect_io_error([&] { load_safetensors(path("b.safetensors")); },
                  "tensor \"m\" has dtype BOOL but element 1 is byte 2");
  expect_io_error([&] { map_safetensors(path("b.safetensors")); },
                  "tensor \"m\" has dtype BOOL but element 1 is byte 2");
}

TEST_F(SafetensorsLoad, HeaderLengthOverCapThrowsEvenWhenTheFileIsThatLarge) {
  // Sparse: the file is over 100 MB long but takes no disk space.
  const std::string p = path("big.safetensors");
  write_bytes(p, le64(detail::kMaxHeaderBytes + 1) + "{}");
  std::filesystem::resize_file(p, detail::kMaxHeaderBytes + 16);
  expect_io_error([&] { load_safetensors(p); }, "exceeds the limit of 100000000 bytes");
}

class SafetensorsLoadMalformed : public ScratchDir,
                                 public ::testing::WithParamInterface<MalformedCase> {};

TEST_P(SafetensorsLoadMalformed, ThrowsIOError) {
  const MalformedCase& c = GetParam();
  const std::string p = path(c.label + ".safetensors");
  write_bytes(p, c.bytes);
  expect_io_error([&] { load_safetensors(p); }, c.expected);
  expect_io_error([&] { load_safetensors(p); }, "[load_safetensors] " + p + ": ");
  expect_io_error([&] { map_safetensors(p); }, c.expected);
}

INSTANTIATE_TEST_SUITE_P(Safetensors,
                         SafetensorsLoadMalformed,
                         ::testing::ValuesIn(test_util::malformed_cases()),
                         [](const auto& param_info) { return param_info.param.label; });

TEST(SafetensorsFormatCore, ItemsizesMatchElementSize) {
  for (ScalarType dtype : kAllDtypes) {
    EXPECT_EQ(detail::safetensors_itemsize(dtype), element_size(dtype)) << to_string(dtype);
  }
}

}  // namespace
}  // namespace stride::io
