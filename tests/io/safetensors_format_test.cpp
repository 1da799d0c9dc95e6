// The raw safetensors layer on bytes in memory: no tensors, no files.
#include "io/safetensors_format.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "io/safetensors_test_util.h"
#include "stride/error.h"

namespace stride::io {
namespace {

using detail::Header;
using detail::parse_file_bytes;
using detail::serialize_header;
using detail::TensorEntry;
using test_util::f32_entry;
using test_util::header_of;
using test_util::le64;
using test_util::make_file;
using test_util::MalformedCase;
using test_util::zeros;

TEST(SafetensorsFormat, DtypeNamesRoundTrip) {
  const std::vector<std::pair<ScalarType, std::string>> expected = {
      {kBool, "BOOL"},   {kUInt8, "U8"},    {kInt32, "I32"},
      {kInt64, "I64"},   {kFloat16, "F16"}, {kBFloat16, "BF16"},
      {kFloat32, "F32"}, {kFloat64, "F64"}, {kComplex64, "C64"},
  };
  // Every dtype but complex128, which the format cannot name.
  ASSERT_EQ(expected.size(), size_t(kNumScalarTypes) - 1);
  EXPECT_THROW(detail::safetensors_dtype_name(kComplex128), DTypeError);
  for (const auto& [type, name] : expected) {
    EXPECT_EQ(detail::safetensors_dtype_name(type), name);
    EXPECT_EQ(detail::parse_safetensors_dtype(name), type);
  }
  EXPECT_EQ(detail::parse_safetensors_dtype("I8"), std::nullopt);
  EXPECT_EQ(detail::parse_safetensors_dtype("f32"), std::nullopt);
  EXPECT_EQ(detail::parse_safetensors_dtype(""), std::nullopt);
}

// Written as the Python writer does: keys in insertion order, tensors not in
// name order, metadata first, header padded with spaces.
TEST(SafetensorsFormat, ParsesReferenceStyleHeader) {
  const std::string header = R"({"__metadata__":{"format":"pt"},)"
                             R"("z":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                             R"("a":{"dtype":"I64","shape":[],"data_offsets":[8,16]},)"
                             R"("e":{"dtype":"BF16","shape":[0,3],"data_offsets":[16,16]}}    )";
  const std::string file = make_file(header, zeros(16));
  const Header h = parse_file_bytes(file, "ref.safetensors");
  EXPECT_EQ(h.data_start, 8 + header.size());
  EXPECT_EQ(h.metadata, (detail::Metadata{{"format", "pt"}}));
  ASSERT_EQ(h.entries.size(), 3u);
  // Sorted by data offset, not by name.
  EXPECT_EQ(h.entries[0].name, "z");
  EXPECT_EQ(h.entries[0].dtype, kFloat32);
  EXPECT_EQ(h.entries[0].shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(h.entries[1].name, "a");
  EXPECT_EQ(h.entries[1].dtype, kInt64);
  EXPECT_TRUE(h.entries[1].shape.empty());
  EXPECT_EQ(h.entries[1].begin, 8u);
  EXPECT_EQ(h.entries[1].end, 16u);
  EXPECT_EQ(h.entries[2].name, "e");
  EXPECT_EQ(h.entries[2].dtype, kBFloat16);
  EXPECT_EQ(h.entries[2].shape, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(h.entries[2].begin, 16u);
  EXPECT_EQ(h.entries[2].end, 16u);
}

TEST(SafetensorsFormat, AcceptsEmptyHeaderAndZeroSizeTensorsAnywhere) {
  EXPECT_TRUE(parse_file_bytes(make_file("{}"), "f").entries.empty());
  // Zero-size ranges at the start, in the middle and at the end of the buffer.
  const std::string header = header_of({f32_entry("a", "[0]", 0, 0), f32_entry("b", "[1]", 0, 4),
                                        f32_entry("c", "[0,5]", 4, 4), f32_entry("d", "[1]", 4, 8),
                                        f32_entry("e", "[2,0]", 8, 8)});
  const Header h = parse_file_bytes(make_file(header, zeros(8)), "f");
  std::vector<std::string> names;
  for (const TensorEntry& e : h.entries) names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c", "d", "e"}));
}

TEST(SafetensorsFormat, HeaderLengthCapIsInclusive) {
  const uint64_t cap = detail::kMaxHeaderBytes;
  const std::string at_cap = le64(cap);
  const auto* p = reinterpret_cast<const unsigned char*>(at_cap.data());
  EXPECT_EQ(detail::parse_header_length(p, cap + 8, "f"), cap);
  EXPECT_THROW(detail::parse_header_length(p, cap + 7, "f"), IOError);
  const std::string over_cap = le64(cap + 1);
  EXPECT_THROW(detail::parse_header_length(reinterpret_cast<const unsigned char*>(over_cap.data()),
                                           cap + 9, "f"),
               IOError);
}

TEST(SafetensorsFormat, AcceptsWhitespaceAroundTheHeader) {
  const std::string header = " \n{}\t   ";
  const Header h = parse_file_bytes(make_file(header), "f");
  EXPECT_TRUE(h.entries.empty());
  EXPECT_EQ(h.data_start, 8u + header.size());
}

TEST(SafetensorsFormat, ErrorNamesFileAndTensor) {
  const std::string file = make_file(header_of({f32_entry("w", "[2,3]", 0, 12)}), zeros(12));
  try {
    parse_file_bytes(file, "model.safetensors");
    FAIL() << "expected IOError";
  } catch (const IOError& e) {
    EXPECT_STREQ(e.what(),
                 "[load_safetensors] model.safetensors: tensor \"w\" has data_offsets [0, 12] but "
                 "shape (2, 3) x 4 bytes = 24. Hint: the file is corrupt or was not written as "
                 "safetensors.");
  }
}

TEST(SafetensorsFormat, ErrorQuotesAndCutsHostileNames) {
  const std::string name(1000, 'n');
  const std::string file =
      make_file("{\"" + name + "\\n\":{\"dtype\":\"X\",\"shape\":[],\"data_offsets\":[0,0]}}");
  try {
    parse_file_bytes(file, "f");
    FAIL() << "expected IOError";
  } catch (const IOError& e) {
    const std::string what = e.what();
    EXPECT_LT(what.size(), 400u) << what;
    EXPECT_NE(what.find("\"nnnn"), std::string::npos) << what;
    EXPECT_NE(what.find("...\""), std::string::npos) << what;
  }
}

TEST(SafetensorsFormat, BoolDataMustBeZeroOrOne) {
  const unsigned char good[] = {0, 1, 1, 0};
  EXPECT_NO_THROW(detail::check_bool_data(good, 4, "m", "f"));
  const unsigned char bad[] = {0, 1, 255, 0};
  try {
    detail::check_bool_data(bad, 4, "m", "f");
    FAIL() << "expected IOError";
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find("tensor \"m\" has dtype BOOL but element 2 is byte 255"),
              std::string::npos)
        << e.what();
  }
}

// Hand-computed: {"__metadata__":{"k":"v"}, 25 chars; ,"a":{"data_offsets":[8,9],
// "dtype":"U8","shape":[]} 51 more = 76; ,"b":{"data_offsets":[0,8],"dtype":"F32",
// "shape":[2]} 53 more = 129; the closing brace makes 130, padded with 6
// spaces to 136 = 0x88.
const char kTinyHeader[] =
    R"({"__metadata__":{"k":"v"},"a":{"data_offsets":[8,9],"dtype":"U8","shape":[]},)"
    R"("b":{"data_offsets":[0,8],"dtype":"F32","shape":[2]}})";

TEST(SafetensorsFormat, SerializesKnownHeaderBytes) {
  std::vector<TensorEntry> entries(2);
  entries[0].name = "b";
  entries[0].dtype = kFloat32;
  entries[0].shape = {2};
  entries[1].name = "a";
  entries[1].dtype = kUInt8;
  entries[1].shape = {};
  const std::string prefix = serialize_header(entries, {{"k", "v"}});
  ASSERT_EQ(sizeof(kTinyHeader) - 1, 130u);
  const std::string expected =
      std::string("\x88\0\0\0\0\0\0\0", 8) + kTinyHeader + std::string(6, ' ');
  EXPECT_EQ(prefix, expected);
  // Offsets follow the given order, not the name order.
  EXPECT_EQ(entries[0].begin, 0u);
  EXPECT_EQ(entries[0].end, 8u);
  EXPECT_EQ(entries[1].begin, 8u);
  EXPECT_EQ(entries[1].end, 9u);
}

TEST(SafetensorsFormat, SerializePadsHeaderToMultipleOf8) {
  for (size_t len = 1; len <= 16; ++len) {
    std::vector<TensorEntry> entries(1);
    entries[0].name = std::string(len, 'x');
    entries[0].shape = {1};
    const std::string prefix = serialize_header(entries, {});
    EXPECT_EQ(prefix.size() % 8, 0u);
    uint64_t n = 0;
    for (int i = 0; i < 8; ++i) n |= uint64_t(uint8_t(prefix[size_t(i)])) << (8 * i);
    EXPECT_EQ(n, prefix.size() - 8);
    EXPECT_EQ(prefix.find("__metadata__"), std::string::npos);
    EXPECT_NE(prefix.back(), '\0');
  }
}

TEST(SafetensorsFormat, SerializedHeaderParsesBack) {
  std::vector<TensorEntry> entries(3);
  entries[0] = {"layers.0.weight", kBFloat16, {4, 3}, 0, 0};
  entries[1] = {"step", kInt64, {}, 0, 0};
  entries[2] = {"empty", kFloat64, {0, 7}, 0, 0};
  const detail::Metadata metadata = {{"config", R"({"dim": 64})"}, {"\xc3\xbc", "\xe2\x9c\x93"}};
  const std::string prefix = serialize_header(entries, metadata);
  const Header h = parse_file_bytes(prefix + zeros(4 * 3 * 2 + 8), "f");
  EXPECT_EQ(h.metadata, metadata);
  ASSERT_EQ(h.entries.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(h.entries[i].name, entries[i].name);
    EXPECT_EQ(h.entries[i].dtype, entries[i].dtype);
    EXPECT_EQ(h.entries[i].shape, entries[i].shape);
    EXPECT_EQ(h.entries[i].begin, entries[i].begin);
    EXPECT_EQ(h.entries[i].end, entries[i].end);
  }
}

TEST(SafetensorsFormat, SerializeRejectsBadNames) {
  auto one = [](std::string name) {
    std::vector<TensorEntry> entries(1);
    entries[0].name = std::move(name);
    return entries;
  };
  auto e = one("");
  EXPECT_THROW(serialize_header(e, {}), ValueError);
  e = one("__metadata__");
  EXPECT_THROW(serialize_header(e, {}), ValueError);
  e = one("\xff");
  EXPECT_THROW(serialize_header(e, {}), ValueError);
  e = one("ok");
  EXPECT_THROW(serialize_header(e, {{"k", "\xff"}}), ValueError);
  std::vector<TensorEntry> twice(2);
  twice[0].name = twice[1].name = "w";
  EXPECT_THROW(serialize_header(twice, {}), ValueError);
  e = one("neg");
  e[0].shape = {2, -1};
  EXPECT_THROW(serialize_header(e, {}), ValueError);
}

// nlohmann's callback parser rescanned the whole header at the end of every
// entry: 200,000 entries took longer than any test could wait.
TEST(SafetensorsFormat, ParsesAHugeHeaderInLinearTime) {
  constexpr int kEntries = 200'000;
  std::string header = "{";
  for (int i = 0; i < kEntries; ++i) {
    if (i > 0) header += ',';
    header += f32_entry("w" + std::to_string(i), "[0]", 0, 0);
  }
  header += '}';
  const auto start = std::chrono::steady_clock::now();
  const Header h = parse_file_bytes(make_file(header), "huge.safetensors");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(h.entries.size(), size_t(kEntries));
  // About a second in a Release build; the quadratic parser took over 20 minutes.
  EXPECT_LT(seconds, 60.0) << "a " << header.size() << "-byte header";
}

TEST(SafetensorsFormat, DuplicateNamesAreFoundInAHugeHeader) {
  std::string header = "{";
  for (int i = 0; i < 50'000; ++i) header += f32_entry("w" + std::to_string(i), "[0]", 0, 0) + ",";
  header += f32_entry("w17", "[0]", 0, 0) + "}";
  try {
    parse_file_bytes(make_file(header), "dup.safetensors");
    FAIL() << "accepted a duplicate name";
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find("tensor name \"w17\" appears twice"), std::string::npos)
        << e.what();
  }
}

// The inputs that once got past the parser (fuzz/regressions), and the seed
// corpus, which parses.
TEST(SafetensorsFormat, FuzzRegressionsAreRefusedAndSeedsParse) {
  const auto bytes_of = [](const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string fuzz = STRIDE_SOURCE_DIR "/fuzz/";
  for (const auto& e :
       std::filesystem::directory_iterator(fuzz + "regressions/safetensors_header")) {
    EXPECT_THROW(parse_file_bytes(bytes_of(e.path()), "regression"), IOError) << e.path();
  }
  for (const auto& e : std::filesystem::directory_iterator(fuzz + "corpus/safetensors_header")) {
    EXPECT_NO_THROW(parse_file_bytes(bytes_of(e.path()), "seed")) << e.path();
  }
}

class SafetensorsFormatMalformed : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(SafetensorsFormatMalformed, ThrowsIOError) {
  const MalformedCase& c = GetParam();
  try {
    parse_file_bytes(c.bytes, "bad.safetensors");
    FAIL() << "accepted a malformed file";
  } catch (const IOError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(c.expected), std::string::npos) << what;
    EXPECT_EQ(what.rfind("[load_safetensors] bad.safetensors: ", 0), 0u) << what;
  }
}

INSTANTIATE_TEST_SUITE_P(Safetensors,
                         SafetensorsFormatMalformed,
                         ::testing::ValuesIn(test_util::malformed_cases()),
                         [](const auto& param_info) { return param_info.param.label; });

}  // namespace
}  // namespace stride::io
