// The GGUF format layer (src/io/gguf_format.h) on bytes built here: what a
// well-formed file gives, and that every malformed one is refused with an
// IOError that names the problem, before anything is allocated for it.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "io/gguf_format.h"
#include "stride/error.h"
#include "stride/gguf.h"

namespace stride::io::detail {
namespace {

using V = GgufValueType;

// Writes GGUF bytes field by field, so that a test can also write them wrong.
class Bytes {
 public:
  template <class T>
  Bytes& put(T v) {
    char raw[sizeof(T)];
    std::memcpy(raw, &v, sizeof(T));
    out_.append(raw, sizeof(T));
    return *this;
  }
  Bytes& str(std::string_view s) {
    put<uint64_t>(s.size());
    out_.append(s);
    return *this;
  }
  Bytes& header(uint64_t tensors, uint64_t metadata, uint32_t version = 3) {
    out_.append("GGUF");
    return put<uint32_t>(version).put<uint64_t>(tensors).put<uint64_t>(metadata);
  }
  Bytes& key(std::string_view k, V type) { return str(k).put<uint32_t>(uint32_t(type)); }
  Bytes& tensor(std::string_view name, std::vector<uint64_t> ne, GgmlType type, uint64_t offset) {
    str(name).put<uint32_t>(uint32_t(ne.size()));
    for (uint64_t d : ne) put<uint64_t>(d);
    return put<uint32_t>(uint32_t(type)).put<uint64_t>(offset);
  }
  Bytes& pad_to(uint64_t alignment) {
    while (out_.size() % alignment != 0) out_.push_back('\0');
    return *this;
  }
  Bytes& zeros(uint64_t n) {
    out_.append(n, '\0');
    return *this;
  }
  const std::string& bytes() const { return out_; }

 private:
  std::string out_;
};

// Three tensors (f32 4 x 3, q8_0 64 x 2, q4_K 256 x 1) and one metadata
// entry of each kind.
std::string well_formed() {
  Bytes b;
  b.header(3, 6);
  b.key("general.architecture", V::String).str("llama");
  b.key("llama.block_count", V::UInt32).put<uint32_t>(2);
  b.key("llama.rope.freq_base", V::Float32).put<float>(10000.0f);
  b.key("tokenizer.ggml.add_bos_token", V::Bool).put<uint8_t>(1);
  b.key("tokenizer.ggml.tokens", V::Array).put<uint32_t>(uint32_t(V::String)).put<uint64_t>(3);
  b.str("<s>").str("a").str("b");
  b.key("tokenizer.ggml.token_type", V::Array).put<uint32_t>(uint32_t(V::Int32));
  b.put<uint64_t>(3).put<int32_t>(3).put<int32_t>(1).put<int32_t>(-1);
  // f32 48 bytes (padded to 64), q8_0 2 rows x 2 blocks x 34 = 136 (padded
  // to 160), q4_K 144.
  b.tensor("token_embd.weight", {4, 3}, GgmlType::F32, 0);
  b.tensor("blk.0.attn_q.weight", {64, 2}, GgmlType::Q8_0, 64);
  b.tensor("output.weight", {256, 1}, GgmlType::Q4_K, 224);
  b.pad_to(32).zeros(224 + 144);
  return b.bytes();
}

template <class T>
T scalar(const GgufHeader& h, std::string_view key) {
  const GgufValue* v = h.find(key);
  EXPECT_NE(v, nullptr) << key;
  return v == nullptr ? T() : std::get<T>(v->value);
}

// The IOError's message, or "" when parsing succeeds.
std::string refusal(const std::string& bytes) {
  try {
    parse_gguf(bytes, "model.gguf");
  } catch (const IOError& e) {
    return e.what();
  }
  return "";
}

TEST(GgufFormat, ReadsTheMetadataAndTheTensorsOfAWellFormedFile) {
  const std::string bytes = well_formed();
  const GgufHeader h = parse_gguf(bytes, "model.gguf");
  EXPECT_EQ(h.version, 3u);
  ASSERT_EQ(h.metadata.size(), 6u);
  EXPECT_EQ(h.metadata[0].first, "general.architecture");
  EXPECT_EQ(scalar<std::string>(h, "general.architecture"), "llama");
  EXPECT_EQ(scalar<uint64_t>(h, "llama.block_count"), 2u);
  EXPECT_EQ(scalar<double>(h, "llama.rope.freq_base"), 10000.0);
  EXPECT_TRUE(scalar<bool>(h, "tokenizer.ggml.add_bos_token"));
  const GgufValue* tokens = h.find("tokenizer.ggml.tokens");
  ASSERT_NE(tokens, nullptr);
  EXPECT_EQ(tokens->element_type, V::String);
  const auto& items = std::get<std::vector<GgufValue>>(tokens->value);
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(std::get<std::string>(items[2].value), "b");
  const auto& types = std::get<std::vector<GgufValue>>(h.find("tokenizer.ggml.token_type")->value);
  EXPECT_EQ(std::get<int64_t>(types[2].value), -1);
  EXPECT_EQ(h.find("general.name"), nullptr);

  EXPECT_EQ(h.alignment, 32u);
  EXPECT_EQ(h.data_start % 32, 0u);
  EXPECT_EQ(h.data_start + 224 + 144, bytes.size());
  ASSERT_EQ(h.tensors.size(), 3u);
  EXPECT_EQ(h.tensors[0].ne, (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(h.tensors[0].numel, 12);
  EXPECT_EQ(h.tensors[0].bytes, 48u);
  EXPECT_EQ(h.tensors[1].type, GgmlType::Q8_0);
  EXPECT_EQ(h.tensors[1].bytes, 136u);
  EXPECT_EQ(h.tensors[1].offset, 64u);
  EXPECT_EQ(h.tensors[2].type, GgmlType::Q4_K);
  EXPECT_EQ(h.tensors[2].bytes, 144u);
}

TEST(GgufFormat, GeneralAlignmentSetsWhereTheDataAndEachTensorStart) {
  Bytes b;
  b.header(2, 1);
  b.key("general.alignment", V::UInt32).put<uint32_t>(256);
  b.tensor("a", {3}, GgmlType::F32, 0);
  b.tensor("b", {2}, GgmlType::BF16, 256);
  b.pad_to(256).zeros(256 + 4);
  const GgufHeader h = parse_gguf(b.bytes(), "model.gguf");
  EXPECT_EQ(h.alignment, 256u);
  EXPECT_EQ(h.data_start % 256, 0u);
  EXPECT_EQ(h.tensors[1].bytes, 4u);
}

TEST(GgufFormat, VersionTwoAndAFileWithoutTensorsParse) {
  Bytes b;
  b.header(0, 1, 2);
  b.key("general.name", V::String).str("empty");
  const GgufHeader h = parse_gguf(b.bytes(), "model.gguf");
  EXPECT_EQ(h.version, 2u);
  EXPECT_TRUE(h.tensors.empty());
}

TEST(GgufFormat, EveryTruncationIsRefused) {
  const std::string bytes = well_formed();
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_NE(refusal(bytes.substr(0, n)), "") << "the first " << n << " bytes parsed";
  }
}

struct Hostile {
  const char* what;
  std::string bytes;
  const char* message;  // a part of the IOError's message
};

std::vector<Hostile> hostile_files() {
  std::vector<Hostile> cases;
  auto add = [&](const char* what, const Bytes& b, const char* message) {
    cases.push_back({what, b.bytes(), message});
  };
  {
    Bytes b;
    b.put<uint32_t>(0x46554747u + 1).put<uint32_t>(3).put<uint64_t>(0).put<uint64_t>(0);
    add("bad magic", b, "magic number");
  }
  add("version 1", Bytes().header(0, 0, 1), "version 1 is not supported");
  add("big-endian", Bytes().header(0, 0, 0x03000000u), "big-endian");
  add("a tensor count no file could hold", Bytes().header(uint64_t(1) << 60, 0), "tensors");
  add("a metadata count no file could hold", Bytes().header(0, uint64_t(1) << 62),
      "metadata entries");
  {
    Bytes b;
    b.header(0, 1).key("tokenizer.ggml.tokens", V::Array).put<uint32_t>(uint32_t(V::String));
    b.put<uint64_t>(uint64_t(1) << 40);
    add("an array count past the file", b, "claims 1099511627776 elements");
  }
  {
    Bytes b;
    b.header(0, 1).key("k", V::String).put<uint64_t>(uint64_t(-1));
    add("a string length past the file", b, "the file ends");
  }
  {
    Bytes b;
    b.header(0, 1).str("k").put<uint32_t>(13).put<uint32_t>(0);
    add("an unknown value type", b, "unknown value type 13");
  }
  {
    Bytes b;
    b.header(0, 1).key("k", V::Array).put<uint32_t>(99).put<uint64_t>(0);
    add("an array of an unknown type", b, "array of unknown value type 99");
  }
  {
    Bytes b;
    b.header(0, 1).key("k", V::Bool).put<uint8_t>(2);
    add("a bool of 2", b, "byte value 2");
  }
  {
    Bytes b;
    b.header(0, 2).key("k", V::UInt8).put<uint8_t>(1).key("k", V::UInt8).put<uint8_t>(2);
    add("a key twice", b, "appears twice");
  }
  {
    Bytes b;
    b.header(0, 1).key("", V::UInt8).put<uint8_t>(1);
    add("an empty key", b, "empty key");
  }
  {
    Bytes b;
    b.header(0, 1).key("k", V::Array);
    for (int depth = 0; depth < kGgufMaxArrayDepth; ++depth) {
      b.put<uint32_t>(uint32_t(V::Array)).put<uint64_t>(1);
    }
    b.put<uint32_t>(uint32_t(V::UInt8)).put<uint64_t>(1).put<uint8_t>(0);
    add("arrays nested too deep", b, "nests arrays");
  }
  {
    Bytes b;
    b.header(0, 1).key("general.alignment", V::UInt32).put<uint32_t>(48);
    add("an alignment that is no power of two", b, "not a power of two");
  }
  {
    Bytes b;
    b.header(0, 1).key("general.alignment", V::UInt64).put<uint64_t>(64);
    add("an alignment of the wrong type", b, "makes it a uint32");
  }
  {
    Bytes b;
    b.header(1, 0).str("t").put<uint32_t>(0).put<uint32_t>(0).put<uint64_t>(0).zeros(8);
    add("a tensor of no dims", b, "has 0 dims");
  }
  {
    Bytes b;
    b.header(1, 0).tensor("t", {1, 1, 1, 1, 1}, GgmlType::F32, 0).pad_to(32).zeros(32);
    add("a tensor of five dims", b, "has 5 dims");
  }
  {
    Bytes b;
    b.header(1, 0).tensor("t", {uint64_t(1) << 63}, GgmlType::F32, 0).pad_to(32);
    add("a dim past int64", b, "has a dim of");
  }
  {
    Bytes b;
    b.header(1, 0).tensor("t", {uint64_t(1) << 32, uint64_t(1) << 32}, GgmlType::F32, 0);
    add("dims whose product overflows", b, "overflow 64 bits");
  }
  {
    Bytes b;
    b.header(1, 0).tensor("t", {0, uint64_t(1) << 32, uint64_t(1) << 32}, GgmlType::Q8_0, 0);
    add("no elements, but rows whose count overflows", b, "overflow 64 bits");
  }
  {
    Bytes b;
    b.header(1, 0).tensor("t", {uint64_t(1) << 62}, GgmlType::F32, 0);
    add("a size that overflows", b, "size overflows 64 bits");
  }
  {
    Bytes b;
    b.header(1, 0).str("t").put<uint32_t>(1).put<uint64_t>(256).put<uint32_t>(16);
    b.put<uint64_t>(0);
    add("an unknown ggml type", b, "ggml type 16");
  }
  {
    Bytes b;
    b.header(1, 0).tensor("t", {33, 2}, GgmlType::Q8_0, 0).pad_to(32).zeros(128);
    add("rows that are not whole blocks", b, "blocks hold 32 elements");
  }
  {
    Bytes b;
    b.header(2, 0).tensor("t", {4}, GgmlType::F32, 0).tensor("t", {4}, GgmlType::F32, 32);
    b.pad_to(32).zeros(48);
    add("a tensor name twice", b, "appears twice");
  }
  {
    Bytes b;
    b.header(2, 0).tensor("a", {4}, GgmlType::F32, 0).tensor("b", {4}, GgmlType::F32, 8);
    b.pad_to(32).zeros(64);
    add("overlapping tensors", b, "starts at offset 8");
  }
  {
    Bytes b;
    b.header(2, 0).tensor("a", {4}, GgmlType::F32, 0).tensor("b", {4}, GgmlType::F32, 64);
    b.pad_to(32).zeros(128);
    add("a gap between tensors", b, "starts at offset 64");
  }
  {
    Bytes b;
    b.header(1, 0).tensor("a", {4}, GgmlType::F32, 32).pad_to(32).zeros(64);
    add("a first tensor away from the start", b, "starts at offset 32");
  }
  {
    Bytes b;
    b.header(1, 0).tensor("a", {1024}, GgmlType::F32, 0).pad_to(32).zeros(100);
    add("a tensor past the end", b, "run past the end");
  }
  {
    Bytes b;
    b.header(1, 0).tensor("a", {4}, GgmlType::F32, 0);
    add("no data section", b, "past the end");
  }
  return cases;
}

TEST(GgufFormat, RefusesHostileFilesWithAMessageNamingTheProblem) {
  for (const Hostile& c : hostile_files()) {
    const std::string message = refusal(c.bytes);
    EXPECT_NE(message.find(c.message), std::string::npos)
        << c.what << ": the message was \"" << message << "\"";
    EXPECT_NE(message.find("[load_gguf] model.gguf: "), std::string::npos) << c.what;
  }
}

// A name from the file reaches a message escaped and cut: a hostile name
// can neither flood the message nor put control bytes in it.
TEST(GgufFormat, MessagesEscapeAndCutNamesFromTheFile) {
  const std::string name = "evil\n\x1b[2J" + std::string(10000, 'x');
  Bytes b;
  b.header(1, 0).str(name).put<uint32_t>(9).pad_to(32);
  const std::string message = refusal(b.bytes());
  EXPECT_NE(message.find("evil\\x0a\\x1b[2J"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);
  EXPECT_LT(message.size(), 400u);
}

// Tensors without elements, in a block type or not: a row of zero blocks
// once divided by zero in map_gguf (found by fuzz_gguf_model).
TEST(GgufFormat, MapsTensorsWithoutElements) {
  Bytes b;
  b.header(3, 0);
  b.tensor("no_columns", {0, 3}, GgmlType::Q8_0, 0);
  b.tensor("no_rows", {64, 0}, GgmlType::Q4_0, 0);
  b.tensor("empty_f32", {0, 2}, GgmlType::F32, 0);
  b.pad_to(32);
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     ("stride_gguf_empty_" + std::to_string(::getpid()) + ".gguf");
  std::ofstream(path, std::ios::binary) << b.bytes();
  const GgufContents contents = map_gguf(path.string());
  std::filesystem::remove(path);
  ASSERT_EQ(contents.tensors.size(), 3u);
  EXPECT_EQ(contents.tensors[0].shape, (std::vector<int64_t>{3, 0}));
  EXPECT_EQ(contents.tensors[0].data.sizes(), IntArrayRef({3, 0}));
  // A row of 64 q4_0 elements is two 18-byte blocks, even with no rows.
  EXPECT_EQ(contents.tensors[1].data.sizes(), IntArrayRef({0, 36}));
  EXPECT_EQ(contents.tensors[2].data.sizes(), IntArrayRef({2, 0}));
  EXPECT_EQ(gguf_to_float32(contents.tensors[0]).sizes(), IntArrayRef({3, 0}));
  EXPECT_EQ(gguf_to_float32(contents.tensors[1]).sizes(), IntArrayRef({0, 64}));
}

TEST(GgufFormat, KnowsTheBlockLayoutsOfGgmlTypes) {
  EXPECT_EQ(ggml_type_traits(GgmlType::Q4_0).block_bytes, 18);
  EXPECT_EQ(ggml_type_traits(GgmlType::Q8_0).block_bytes, 34);
  EXPECT_EQ(ggml_type_traits(GgmlType::Q4_K).block, 256);
  EXPECT_EQ(ggml_type_traits(GgmlType::Q4_K).block_bytes, 144);
  EXPECT_EQ(ggml_type_traits(GgmlType::Q6_K).block_bytes, 210);
  EXPECT_EQ(ggml_type_traits(GgmlType::BF16).name, "bf16");
  EXPECT_EQ(ggml_type_traits(16u), nullptr);  // IQ2_XXS
}

}  // namespace
}  // namespace stride::io::detail
