#include "io/gguf_format.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <ostream>
#include <unordered_set>
#include <utility>

#include "core/check.h"
#include "stride/error.h"

namespace stride::io::detail {
namespace {

using stride::detail::str_cat;

constexpr const char* kCorrupt = ". Hint: the file is corrupt or was not written as GGUF.";

constexpr GgmlTypeTraits kGgmlTypes[] = {
    {GgmlType::F32, "f32", 1, 4},       {GgmlType::F16, "f16", 1, 2},
    {GgmlType::Q4_0, "q4_0", 32, 18},   {GgmlType::Q4_1, "q4_1", 32, 20},
    {GgmlType::Q5_0, "q5_0", 32, 22},   {GgmlType::Q5_1, "q5_1", 32, 24},
    {GgmlType::Q8_0, "q8_0", 32, 34},   {GgmlType::Q8_1, "q8_1", 32, 36},
    {GgmlType::Q2_K, "q2_K", 256, 84},  {GgmlType::Q3_K, "q3_K", 256, 110},
    {GgmlType::Q4_K, "q4_K", 256, 144}, {GgmlType::Q5_K, "q5_K", 256, 176},
    {GgmlType::Q6_K, "q6_K", 256, 210}, {GgmlType::Q8_K, "q8_K", 256, 292},
    {GgmlType::I8, "i8", 1, 1},         {GgmlType::I16, "i16", 1, 2},
    {GgmlType::I32, "i32", 1, 4},       {GgmlType::I64, "i64", 1, 8},
    {GgmlType::F64, "f64", 1, 8},       {GgmlType::BF16, "bf16", 1, 2},
};

// Prefixes every load error with the op and the file.
struct Where {
  std::string_view file;
  friend std::ostream& operator<<(std::ostream& os, const Where& w) {
    return os << "[load_gguf] " << w.file << ": ";
  }
};

// Names come from untrusted files: printable ASCII kept, the rest escaped,
// long ones cut, so that a hostile name cannot flood or garble a message.
std::string quote_name(std::string_view s) {
  constexpr size_t kMaxShown = 64;
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < kMaxShown; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7F && c != '\\' && c != '\'') {
      out += char(c);
    } else {
      constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (s.size() > kMaxShown) out += "...";
  return out + "'";
}

// Fixed-size values' bytes; 0 for strings and arrays, whose size is read.
uint64_t fixed_size(GgufValueType type) {
  switch (type) {
    case GgufValueType::UInt8:
    case GgufValueType::Int8:
    case GgufValueType::Bool:
      return 1;
    case GgufValueType::UInt16:
    case GgufValueType::Int16:
      return 2;
    case GgufValueType::UInt32:
    case GgufValueType::Int32:
    case GgufValueType::Float32:
      return 4;
    case GgufValueType::UInt64:
    case GgufValueType::Int64:
    case GgufValueType::Float64:
      return 8;
    case GgufValueType::String:
    case GgufValueType::Array:
      return 0;
  }
  return 0;
}

// The fewest bytes a value of `type` takes: a count-sized bound on what an
// array of them can claim before its elements are read.
uint64_t min_size(GgufValueType type) {
  if (type == GgufValueType::String) return 8;     // the length
  if (type == GgufValueType::Array) return 4 + 8;  // type, count
  return fixed_size(type);
}

bool known_value_type(uint32_t t) {
  return t <= uint32_t(GgufValueType::Float64);
}

// Reads the header front to back; every read checks the bytes left first.
class Reader {
 public:
  Reader(std::string_view bytes, std::string_view file) : bytes_(bytes), file_(file) {}

  uint64_t position() const { return pos_; }
  uint64_t left() const { return bytes_.size() - pos_; }

  // Throws unless n more bytes are there for `what` (empty: the value of
  // the metadata key being read).
  void need(uint64_t n, std::string_view what) const {
    if (n <= left()) return;
    const std::string where =
        what.empty() ? "the value of metadata " + quote_name(key_) : std::string(what);
    throw IOError(str_cat(Where{file_}, "the file ends at byte ", bytes_.size(), " inside ", where,
                          " (", n, " bytes needed at byte ", pos_, ")", kCorrupt));
  }

  // The key whose value is read next (for messages).
  void set_key(std::string_view key) { key_ = key; }

  template <class T>
  T read(std::string_view what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  std::string read_string(std::string_view what) {
    const auto n = read<uint64_t>(what);
    need(n, what);
    std::string s(bytes_.substr(pos_, n));
    pos_ += n;
    return s;
  }

  GgufValue read_value(GgufValueType type, std::string_view key, int depth) {
    GgufValue v;
    v.type = type;
    switch (type) {
      case GgufValueType::UInt8:
        v.value = uint64_t(read<uint8_t>(""));
        break;
      case GgufValueType::Int8:
        v.value = int64_t(read<int8_t>(""));
        break;
      case GgufValueType::UInt16:
        v.value = uint64_t(read<uint16_t>(""));
        break;
      case GgufValueType::Int16:
        v.value = int64_t(read<int16_t>(""));
        break;
      case GgufValueType::UInt32:
        v.value = uint64_t(read<uint32_t>(""));
        break;
      case GgufValueType::Int32:
        v.value = int64_t(read<int32_t>(""));
        break;
      case GgufValueType::UInt64:
        v.value = read<uint64_t>("");
        break;
      case GgufValueType::Int64:
        v.value = read<int64_t>("");
        break;
      case GgufValueType::Float32:
        v.value = double(read<float>(""));
        break;
      case GgufValueType::Float64:
        v.value = read<double>("");
        break;
      case GgufValueType::Bool: {
        const auto b = read<uint8_t>("");
        STRIDE_CHECK(b <= 1, IOError, Where{file_}, "metadata ", quote_name(key),
                     " holds a bool of byte value ", int(b), " (only 0 and 1 are bools)", kCorrupt);
        v.value = b == 1;
        break;
      }
      case GgufValueType::String:
        v.value = read_string("");
        break;
      case GgufValueType::Array:
        v.value = read_array(v, key, depth);
        break;
    }
    return v;
  }

 private:
  std::vector<GgufValue> read_array(GgufValue& v, std::string_view key, int depth) {
    STRIDE_CHECK(depth < kGgufMaxArrayDepth, IOError, Where{file_}, "metadata ", quote_name(key),
                 " nests arrays more than ", kGgufMaxArrayDepth, " deep", kCorrupt);
    const auto type = read<uint32_t>("");
    STRIDE_CHECK(known_value_type(type), IOError, Where{file_}, "metadata ", quote_name(key),
                 " is an array of unknown value type ", type, kCorrupt);
    v.element_type = GgufValueType(type);
    const auto count = read<uint64_t>("");
    // Every element takes at least min_size bytes: a count the rest of the
    // file cannot hold is refused before anything is reserved for it.
    STRIDE_CHECK(count <= left() / min_size(v.element_type), IOError, Where{file_}, "metadata ",
                 quote_name(key), " claims ", count, " elements of type ",
                 gguf_value_type_name(v.element_type), ", more than the ", left(),
                 " bytes left can hold", kCorrupt);
    std::vector<GgufValue> items;
    items.reserve(size_t(count));
    for (uint64_t i = 0; i < count; ++i)
      items.push_back(read_value(v.element_type, key, depth + 1));
    return items;
  }

  std::string_view bytes_;
  std::string_view file_;
  std::string_view key_;
  uint64_t pos_ = 0;
};

uint64_t read_alignment(const GgufHeader& h, std::string_view file) {
  const GgufValue* v = h.find("general.alignment");
  if (v == nullptr) return 32;
  STRIDE_CHECK(v->type == GgufValueType::UInt32, IOError, Where{file}, "general.alignment is a ",
               gguf_value_type_name(v->type), "; the format makes it a uint32", kCorrupt);
  const uint64_t a = std::get<uint64_t>(v->value);
  STRIDE_CHECK(a != 0 && (a & (a - 1)) == 0, IOError, Where{file}, "general.alignment is ", a,
               ", not a power of two", kCorrupt);
  return a;
}

void read_metadata(Reader& r, uint64_t count, GgufHeader& h, std::string_view file) {
  constexpr uint64_t kMinEntry = 8 + 4 + 1;  // key length, value type, a byte
  STRIDE_CHECK(count <= r.left() / kMinEntry, IOError, Where{file}, "the header claims ", count,
               " metadata entries, more than the ", r.left(), " bytes left can hold", kCorrupt);
  h.metadata.reserve(size_t(count));
  for (uint64_t i = 0; i < count; ++i) {
    std::string key = r.read_string("a metadata key");
    STRIDE_CHECK(!key.empty(), IOError, Where{file}, "metadata entry ", i, " has an empty key",
                 kCorrupt);
    r.set_key(key);
    const auto type = r.read<uint32_t>("");
    STRIDE_CHECK(known_value_type(type), IOError, Where{file}, "metadata ", quote_name(key),
                 " has unknown value type ", type, kCorrupt);
    GgufValue value = r.read_value(GgufValueType(type), key, 0);
    const bool fresh = h.metadata_index.emplace(key, h.metadata.size()).second;
    STRIDE_CHECK(fresh, IOError, Where{file}, "metadata key ", quote_name(key), " appears twice",
                 kCorrupt);
    h.metadata.emplace_back(std::move(key), std::move(value));
  }
}

// ne's product and the bytes it takes in `traits`' blocks, overflow-checked.
// The product of the dims other than 0 is checked too, so that a tensor
// without elements still has a row count (ne[1:]'s product) that fits.
void size_tensor(GgufTensorInfo& t, const GgmlTypeTraits& traits, std::string_view file) {
  int64_t extent = 1;
  for (int64_t d : t.ne) {
    STRIDE_CHECK(d >= 0, IOError, Where{file}, "tensor ", quote_name(t.name),
                 " has a negative dim ", d, kCorrupt);
    STRIDE_CHECK(d == 0 || extent <= std::numeric_limits<int64_t>::max() / d, IOError, Where{file},
                 "tensor ", quote_name(t.name), "'s dims overflow 64 bits", kCorrupt);
    extent *= std::max<int64_t>(d, 1);
  }
  const bool empty = std::find(t.ne.begin(), t.ne.end(), 0) != t.ne.end();
  const int64_t numel = empty ? 0 : extent;
  STRIDE_CHECK(t.ne[0] % traits.block == 0, IOError, Where{file}, "tensor ", quote_name(t.name),
               " is ", traits.name, ", whose blocks hold ", traits.block,
               " elements, but its rows have ", t.ne[0], kCorrupt);
  const int64_t blocks = numel / traits.block;
  STRIDE_CHECK(blocks <= std::numeric_limits<int64_t>::max() / traits.block_bytes, IOError,
               Where{file}, "tensor ", quote_name(t.name), "'s size overflows 64 bits", kCorrupt);
  t.numel = numel;
  t.bytes = uint64_t(blocks * traits.block_bytes);
}

GgufTensorInfo read_tensor_info(Reader& r, std::string_view file) {
  GgufTensorInfo t;
  t.name = r.read_string("a tensor name");
  STRIDE_CHECK(!t.name.empty(), IOError, Where{file}, "a tensor has an empty name", kCorrupt);
  const auto dims = r.read<uint32_t>(t.name);
  STRIDE_CHECK(dims >= 1 && dims <= kGgufMaxDims, IOError, Where{file}, "tensor ",
               quote_name(t.name), " has ", dims, " dims; ggml's tensors have 1 to ", kGgufMaxDims,
               kCorrupt);
  for (uint32_t d = 0; d < dims; ++d) {
    const auto n = r.read<uint64_t>(t.name);
    STRIDE_CHECK(n <= uint64_t(std::numeric_limits<int64_t>::max()), IOError, Where{file},
                 "tensor ", quote_name(t.name), " has a dim of ", n, kCorrupt);
    t.ne.push_back(int64_t(n));
  }
  const auto type = r.read<uint32_t>(t.name);
  const GgmlTypeTraits* traits = ggml_type_traits(type);
  STRIDE_CHECK(traits != nullptr, IOError, Where{file}, "tensor ", quote_name(t.name),
               " has ggml type ", type,
               ", which stride does not read (it reads f32, f16, bf16, f64, the integer types "
               "and the q4/q5/q8 and k-quant blocks)");
  t.type = traits->type;
  t.offset = r.read<uint64_t>(t.name);
  size_tensor(t, *traits, file);
  return t;
}

uint64_t align_up(uint64_t x, uint64_t a) {
  return x + (a - x % a) % a;
}

// The tensors as llama.cpp lays them out and requires them: in order, each
// at the previous one's end rounded up to the alignment; the last ends
// inside the file.
void check_layout(const GgufHeader& h, uint64_t file_size, std::string_view file) {
  uint64_t expected = 0;
  for (const GgufTensorInfo& t : h.tensors) {
    STRIDE_CHECK(t.offset == expected, IOError, Where{file}, "tensor ", quote_name(t.name),
                 " starts at offset ", t.offset,
                 " of the data section, where the tensors before "
                 "it put it at ",
                 expected, " (tensors follow each other, aligned to ", h.alignment, " bytes)",
                 kCorrupt);
    const uint64_t available = file_size - h.data_start;  // parse_gguf checked data_start
    STRIDE_CHECK(t.offset <= available && t.bytes <= available - t.offset, IOError, Where{file},
                 "tensor ", quote_name(t.name), "'s ", t.bytes, " bytes at offset ", t.offset,
                 " run past the end of the file (", file_size, " bytes, data from byte ",
                 h.data_start, ")", kCorrupt);
    expected = align_up(t.offset + t.bytes, h.alignment);
  }
}

}  // namespace
}  // namespace stride::io::detail

namespace stride::io {

using detail::kGgmlTypes;

std::string_view gguf_value_type_name(GgufValueType type) {
  static constexpr std::string_view kNames[] = {"uint8",  "int8",    "uint16", "int16",  "uint32",
                                                "int32",  "float32", "bool",   "string", "array",
                                                "uint64", "int64",   "float64"};
  const auto i = uint32_t(type);
  return i < std::size(kNames) ? kNames[i] : "unknown";
}

const GgmlTypeTraits* ggml_type_traits(uint32_t type) {
  for (const GgmlTypeTraits& t : kGgmlTypes) {
    if (uint32_t(t.type) == type) return &t;
  }
  return nullptr;
}

const GgmlTypeTraits& ggml_type_traits(GgmlType type) {
  return *ggml_type_traits(uint32_t(type));
}

const GgufValue* GgufHeader::find(std::string_view key) const {
  const auto it = metadata_index.find(std::string(key));
  return it == metadata_index.end() ? nullptr : &metadata[it->second].second;
}

}  // namespace stride::io

namespace stride::io::detail {

GgufHeader parse_gguf(std::string_view bytes, std::string_view file) {
  Reader r(bytes, file);
  r.need(4, "the magic number");
  STRIDE_CHECK(bytes.substr(0, 4) == "GGUF", IOError, Where{file},
               "the file does not start with GGUF's magic number 'GGUF'", kCorrupt);
  r.read<uint32_t>("the magic number");
  GgufHeader h;
  h.version = r.read<uint32_t>("the version");
  STRIDE_CHECK(h.version != 0x02000000u && h.version != 0x03000000u, IOError, Where{file},
               "the file is big-endian GGUF; stride reads the little-endian files that "
               "llama.cpp writes on x86-64 and arm64");
  STRIDE_CHECK(h.version == 2 || h.version == 3, IOError, Where{file}, "GGUF version ", h.version,
               " is not supported (stride reads versions 2 and 3; convert a version 1 file "
               "again with llama.cpp's convert_hf_to_gguf.py)");
  const auto tensor_count = r.read<uint64_t>("the tensor count");
  const auto metadata_count = r.read<uint64_t>("the metadata count");
  read_metadata(r, metadata_count, h, file);
  h.alignment = read_alignment(h, file);

  // name length, one dim count and dim, type, offset
  constexpr uint64_t kMinTensorInfo = 8 + 4 + 8 + 4 + 8;
  STRIDE_CHECK(tensor_count <= r.left() / kMinTensorInfo, IOError, Where{file},
               "the header claims ", tensor_count, " tensors, more than the ", r.left(),
               " bytes left can describe", kCorrupt);
  h.tensors.reserve(size_t(tensor_count));
  for (uint64_t i = 0; i < tensor_count; ++i) {
    h.tensors.push_back(read_tensor_info(r, file));
  }
  std::unordered_set<std::string_view> names;
  for (const GgufTensorInfo& t : h.tensors) {
    STRIDE_CHECK(names.insert(t.name).second, IOError, Where{file}, "tensor name ",
                 quote_name(t.name), " appears twice", kCorrupt);
  }
  h.data_start = align_up(r.position(), h.alignment);
  STRIDE_CHECK(h.tensors.empty() || h.data_start <= bytes.size(), IOError, Where{file},
               "the data section would start at byte ", h.data_start, ", past the end of the ",
               bytes.size(), "-byte file", kCorrupt);
  check_layout(h, bytes.size(), file);
  return h;
}

}  // namespace stride::io::detail
