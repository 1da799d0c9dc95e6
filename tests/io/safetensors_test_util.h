// Shared by the safetensors tests: byte builders, a scratch directory, and
// the table of malformed files that both the raw format layer and
// load_safetensors must reject with IOError.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace stride::io::test_util {

// The 8-byte little-endian length prefix.
inline std::string le64(uint64_t n) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[size_t(i)] = char((n >> (8 * i)) & 0xff);
  return out;
}

// A file: length prefix, header, data (no padding: the format does not need it).
inline std::string make_file(std::string_view header, std::string_view data = {}) {
  return le64(header.size()) + std::string(header) + std::string(data);
}

// n bytes of data whose content does not matter to the test.
inline std::string zeros(size_t n) {
  return std::string(n, '\0');
}

inline void write_bytes(const std::string& path, std::string_view bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), std::streamsize(bytes.size()));
  ASSERT_TRUE(f.good()) << "cannot write " << path;
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// A fresh directory per test, removed afterwards.
class ScratchDir : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = ::testing::TempDir() + "stride_safetensors_XXXXXX";
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    dir_ = templ;
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir_)) {
      names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  std::string dir_;
};

struct MalformedCase {
  std::string label;     // the test name suffix
  std::string bytes;     // the whole file
  std::string expected;  // a substring of the IOError message
};

inline std::ostream& operator<<(std::ostream& os, const MalformedCase& c) {
  return os << c.label;
}

// A well-formed entry for tensor `name`: F32 of `shape_json` at [begin, end].
inline std::string f32_entry(const std::string& name,
                             const std::string& shape_json,
                             uint64_t begin,
                             uint64_t end) {
  std::string out = "\"";
  out += name;
  out += "\":{\"dtype\":\"F32\",\"shape\":" + shape_json + ",\"data_offsets\":[";
  out += std::to_string(begin) + "," + std::to_string(end) + "]}";
  return out;
}

// "{e1,e2,...}": a header from entries.
inline std::string header_of(std::initializer_list<std::string> entries) {
  std::string out = "{";
  for (const std::string& e : entries) {
    if (out.size() > 1) out += ",";
    out += e;
  }
  return out + "}";
}

inline std::vector<MalformedCase> malformed_cases() {
  const std::string w24 = header_of({f32_entry("w", "[2,3]", 0, 24)});
  std::vector<MalformedCase> c;
  // ---- truncation and the length prefix ----
  c.push_back({"EmptyFile", "", "too short for the 8-byte header length"});
  c.push_back({"SevenBytes", std::string(7, '\x01'), "too short for the 8-byte header length"});
  c.push_back({"HeaderCutShort", make_file(w24, zeros(24)).substr(0, 30), "runs past the end"});
  c.push_back(
      {"DataCutShort", make_file(w24, zeros(20)), "past the end of the 20-byte data buffer"});
  c.push_back({"HeaderLength2Pow63", le64(uint64_t(1) << 63) + w24, "exceeds the limit"});
  c.push_back({"HeaderLengthAllOnes", le64(~uint64_t(0)) + w24, "exceeds the limit"});
  c.push_back({"HeaderLengthOverCap", le64(100'000'001) + w24, "exceeds the limit of 100000000"});
  c.push_back({"HeaderLengthPastFile", le64(1000) + w24 + zeros(24), "runs past the end"});
  // ---- JSON ----
  c.push_back({"EmptyHeader", make_file(""), "not valid JSON"});
  c.push_back({"InvalidJson", make_file("{\"w\":"), "not valid JSON"});
  c.push_back({"TrailingGarbage", make_file("{} x"), "not valid JSON"});
  c.push_back({"NulThenGarbage", make_file(std::string("{}\0 x", 5)), "holds a NUL byte at 2"});
  c.push_back({"InvalidUtf8", make_file("{\"\xff\":1}"), "ill-formed UTF-8"});
  c.push_back({"NumberOverflow", make_file("{\"w\":1e999}"), "not valid JSON"});
  c.push_back({"ArrayHeader", make_file("[]"), "must be a JSON object; got array"});
  c.push_back({"NullHeader", make_file("null"), "must be a JSON object; got null"});
  c.push_back({"StringHeader", make_file("\"x\""), "must be a JSON object; got string"});
  // Deep nesting must neither overflow the stack nor be accepted.
  c.push_back({"DeeplyNested", make_file(std::string(100'000, '[') + std::string(100'000, ']')),
               "must be a JSON object; got array"});
  // ---- entry structure ----
  c.push_back({"EntryNotObject", make_file("{\"w\":5}"), "tensor \"w\" must be an object"});
  c.push_back({"MissingDtype",
               make_file("{\"w\":{\"shape\":[1],\"data_offsets\":[0,4]}}", zeros(4)),
               "tensor \"w\" has no \"dtype\""});
  c.push_back({"MissingOffsets", make_file("{\"w\":{\"dtype\":\"F32\",\"shape\":[1]}}", zeros(4)),
               "has no \"data_offsets\""});
  c.push_back({"ExtraKey",
               make_file("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"x\":1}}",
                         zeros(4)),
               "unexpected key \"x\""});
  c.push_back({"DtypeNotString",
               make_file("{\"w\":{\"dtype\":4,\"shape\":[1],\"data_offsets\":[0,4]}}", zeros(4)),
               "tensor \"w\": dtype must be a string such as \"F32\"; got number"});
  c.push_back(
      {"ShapeNotArray",
       make_file("{\"w\":{\"dtype\":\"F32\",\"shape\":4,\"data_offsets\":[0,4]}}", zeros(4)),
       "tensor \"w\": shape must be an array of non-negative integers; got number"});
  c.push_back(
      {"OffsetsOneNumber",
       make_file("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4]}}", zeros(4)),
       "not [begin, end]"});
  c.push_back(
      {"OffsetsThreeNumbers",
       make_file("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4,4]}}", zeros(4)),
       "not [begin, end]"});
  c.push_back({"OffsetsStrings",
               make_file("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[\"0\",\"4\"]}}",
                         zeros(4)),
               "not [begin, end]"});
  c.push_back(
      {"OffsetNegative",
       make_file("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[-4,0]}}", zeros(4)),
       "not [begin, end]"});
  // ---- dtypes and shapes ----
  c.push_back(
      {"UnknownDtype",
       make_file("{\"w\":{\"dtype\":\"I8\",\"shape\":[4],\"data_offsets\":[0,4]}}", zeros(4)),
       "dtype \"I8\", which stride does not support"});
  c.push_back(
      {"LowercaseDtype",
       make_file("{\"w\":{\"dtype\":\"f32\",\"shape\":[1],\"data_offsets\":[0,4]}}", zeros(4)),
       "dtype \"f32\", which stride does not support"});
  c.push_back({"ShapeTimesItemsizeMismatch",
               make_file(header_of({f32_entry("w", "[2,3]", 0, 12)}), zeros(12)),
               "tensor \"w\" has data_offsets [0, 12] but shape (2, 3) x 4 bytes = 24"});
  c.push_back({"NegativeDim", make_file(header_of({f32_entry("w", "[2,-3]", 0, 24)}), zeros(24)),
               "shape entry 1 = -3; expected a non-negative integer"});
  c.push_back({"FractionalDim", make_file(header_of({f32_entry("w", "[2.5]", 0, 8)}), zeros(8)),
               "shape entry 0 = 2.5; expected a non-negative integer"});
  c.push_back({"StringDim", make_file(header_of({f32_entry("w", "[\"2\"]", 0, 8)}), zeros(8)),
               "shape entry 0 = string"});
  c.push_back({"NestedDim", make_file(header_of({f32_entry("w", "[[2]]", 0, 8)}), zeros(8)),
               "shape entry 0 = array"});
  c.push_back({"DimAboveInt64",
               make_file(header_of({f32_entry("w", "[0,9223372036854775808]", 0, 0)})),
               "shape entry 1 = 9223372036854775808"});
  c.push_back({"ElementCountOverflows",
               make_file(header_of({f32_entry("w", "[4294967296,4294967296]", 0, 0)})),
               "element count overflows"});
  // Zero elements, but the strides of such a shape are not representable.
  c.push_back({"EmptyShapeWithOverflowingStrides",
               make_file(header_of({f32_entry("w", "[0,4611686018427387904,4]", 0, 0)})),
               "element count overflows"});
  c.push_back({"ByteCountOverflows",
               make_file(header_of({f32_entry("w", "[4611686018427387904]", 0, 0)})),
               "size in bytes overflows"});
  // ---- byte ranges ----
  c.push_back({"BeginAfterEnd", make_file(header_of({f32_entry("w", "[2,3]", 24, 0)}), zeros(24)),
               "data_offsets [24, 0] with begin > end"});
  c.push_back({"OffsetsOutOfBounds",
               make_file(header_of({f32_entry("w", "[2,3]", 8, 32)}), zeros(24)),
               "data_offsets [8, 32] past the end of the 24-byte data buffer"});
  c.push_back({"OffsetsNearUint64Max",
               make_file(header_of({f32_entry("w", "[1]", 18446744073709551611ull,
                                              18446744073709551615ull)}),
                         zeros(4)),
               "past the end of the 4-byte data buffer"});
  c.push_back({"OverlappingRanges",
               make_file(header_of({f32_entry("a", "[4]", 0, 16), f32_entry("b", "[4]", 8, 24)}),
                         zeros(24)),
               "tensors \"a\" [0, 16] and \"b\" [8, 24] overlap"});
  c.push_back(
      {"SameRangeTwice",
       make_file(header_of({f32_entry("a", "[2]", 0, 8), f32_entry("b", "[2]", 0, 8)}), zeros(8)),
       "overlap"});
  c.push_back({"HoleBetweenRanges",
               make_file(header_of({f32_entry("a", "[2]", 0, 8), f32_entry("b", "[2]", 12, 20)}),
                         zeros(20)),
               "bytes [8, 12) of the data buffer belong to no tensor"});
  c.push_back({"HoleAtStart", make_file(header_of({f32_entry("a", "[2]", 4, 12)}), zeros(12)),
               "bytes [0, 4) of the data buffer belong to no tensor"});
  c.push_back({"TrailingBytes", make_file(header_of({f32_entry("a", "[2]", 0, 8)}), zeros(12)),
               "the data buffer has 12 bytes but the tensors cover only the first 8"});
  c.push_back({"DataWithoutTensors", make_file("{}", zeros(4)),
               "the data buffer has 4 bytes but the header lists no tensors"});
  // ---- names and metadata ----
  c.push_back(
      {"DuplicateName",
       make_file(header_of({f32_entry("w", "[2]", 0, 8), f32_entry("w", "[2]", 8, 16)}), zeros(16)),
       "tensor name \"w\" appears twice"});
  c.push_back(
      {"DuplicateKeyInEntry",
       make_file(
           "{\"w\":{\"dtype\":\"F32\",\"dtype\":\"I32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
           zeros(4)),
       "key \"dtype\" appears twice in the entry for \"w\""});
  c.push_back({"DuplicateMetadata",
               make_file("{\"__metadata__\":{\"a\":\"1\"},\"__metadata__\":{\"a\":\"2\"}}"),
               "tensor name \"__metadata__\" appears twice"});
  c.push_back({"DuplicateMetadataKey", make_file("{\"__metadata__\":{\"a\":\"1\",\"a\":\"2\"}}"),
               "key \"a\" appears twice in the entry for \"__metadata__\""});
  c.push_back({"MetadataNotObject", make_file("{\"__metadata__\":[\"a\"]}"),
               "\"__metadata__\" must be an object of string to string; got array"});
  c.push_back({"MetadataNull", make_file("{\"__metadata__\":null}"),
               "\"__metadata__\" must be an object of string to string; got null"});
  c.push_back({"MetadataNumberValue", make_file("{\"__metadata__\":{\"step\":100}}"),
               "\"__metadata__\" entry \"step\" must be a string; got number"});
  c.push_back({"MetadataObjectValue", make_file("{\"__metadata__\":{\"cfg\":{\"dim\":\"64\"}}}"),
               "\"__metadata__\" entry \"cfg\" must be a string; got object"});
  return c;
}

}  // namespace stride::io::test_util
