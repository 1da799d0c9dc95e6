#include "io/safetensors_format.h"

#include <algorithm>
#include <limits>
#include <ostream>
#include <unordered_set>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/check.h"

namespace stride::io::detail {
namespace {

using json = nlohmann::json;
using stride::detail::str_cat;

constexpr const char* kCorrupt = ". Hint: the file is corrupt or was not written as safetensors.";

struct DtypeName {
  ScalarType type;
  std::string_view name;
  size_t itemsize;
};
constexpr DtypeName kDtypes[] = {
    {kBool, "BOOL", 1},   {kUInt8, "U8", 1},    {kInt32, "I32", 4},
    {kInt64, "I64", 8},   {kFloat16, "F16", 2}, {kBFloat16, "BF16", 2},
    {kFloat32, "F32", 4}, {kFloat64, "F64", 8}, {kComplex64, "C64", 8},
};

// Prefixes every load error with the op and the file.
struct Where {
  std::string_view file;
  friend std::ostream& operator<<(std::ostream& os, const Where& w) {
    return os << "[load_safetensors] " << w.file << ": ";
  }
};

// Names come from untrusted files: quote and escape them, and cut long ones
// so that a hostile name cannot flood a message.
std::string quote_name(std::string_view s) {
  constexpr size_t kMaxShown = 64;
  std::string shown(s.substr(0, kMaxShown));
  if (s.size() > kMaxShown) shown += "...";
  return json(shown).dump(-1, ' ', false, json::error_handler_t::replace);
}

// "(2, 3)", cut after a few dims for the same reason as quote_name().
std::string shape_text(const std::vector<int64_t>& shape) {
  constexpr size_t kMaxShown = 8;
  std::string out = "(";
  for (size_t i = 0; i < shape.size() && i < kMaxShown; ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() > kMaxShown) out += ", ...";
  return out + ")";
}

std::string range_text(uint64_t begin, uint64_t end) {
  return str_cat("[", begin, ", ", end, "]");
}

// A JSON integer >= 0. nlohmann stores non-negative literals as unsigned,
// except "-0", which is signed.
std::optional<uint64_t> as_u64(const json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer() && v.get<int64_t>() >= 0) return uint64_t(v.get<int64_t>());
  return std::nullopt;
}

// nlohmann keeps the last of two equal keys without a word, so a file could
// hide a tensor behind another of the same name. This SAX pass over the
// (already valid) text sees every key as it is read and catches the repeat.
// It is a pass of its own because nlohmann's DOM parser with a callback
// rescans the enclosing object at the end of each nested one, which is
// quadratic in the number of tensors.
class DuplicateKeyFinder : public nlohmann::json_sax<json> {
 public:
  const std::optional<std::string>& duplicate() const { return duplicate_; }

  bool start_object(std::size_t) override {
    open_objects_.emplace_back();
    return true;
  }
  bool end_object() override {
    open_objects_.pop_back();
    return true;
  }
  bool key(string_t& key) override {
    if (open_objects_.size() == 1) top_key_ = key;
    if (!open_objects_.back().insert(key).second) {
      duplicate_ = open_objects_.size() == 1
                       ? str_cat("tensor name ", quote_name(key), " appears twice")
                       : str_cat("key ", quote_name(key), " appears twice in the entry for ",
                                 quote_name(top_key_));
      return false;  // the first repeat is the one reported
    }
    return true;
  }
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  std::vector<std::unordered_set<std::string>> open_objects_;
  std::string top_key_;  // the tensor (or __metadata__) whose value is being read
  std::optional<std::string> duplicate_;
};

json parse_json(std::string_view text, const Where& where) {
  // nlohmann reads a NUL byte as the end of its input and would ignore what
  // follows; JSON text never holds one (a string escapes it as \u0000).
  const size_t nul = text.find('\0');
  STRIDE_CHECK(nul == std::string_view::npos, IOError, where, "the header holds a NUL byte at ",
               nul, "; JSON text cannot", kCorrupt);
  json root;
  try {
    root = json::parse(text.data(), text.data() + text.size());
  } catch (const json::exception& e) {
    // nlohmann quotes the last token read, which an attacker controls.
    throw IOError(str_cat(where, "the header is not valid JSON: ",
                          stride::detail::printable_excerpt(e.what()), kCorrupt));
  }
  DuplicateKeyFinder finder;
  json::sax_parse(text.data(), text.data() + text.size(), &finder);
  STRIDE_CHECK(!finder.duplicate(), IOError, where, "in the header, ", *finder.duplicate(),
               kCorrupt);
  return root;
}

Metadata parse_metadata(const json& value, const Where& where) {
  STRIDE_CHECK(value.is_object(), IOError, where,
               "\"__metadata__\" must be an object of string to string; got ", value.type_name(),
               kCorrupt);
  Metadata out;
  for (const auto& [key, v] : value.get_ref<const json::object_t&>()) {
    STRIDE_CHECK(v.is_string(), IOError, where, "\"__metadata__\" entry ", quote_name(key),
                 " must be a string; got ", v.type_name(), kCorrupt);
    out.emplace(key, v.get<std::string>());
  }
  return out;
}

TensorEntry parse_entry(const std::string& name,
                        const json& value,
                        uint64_t buffer_size,
                        const Where& where) {
  const std::string tensor = str_cat("tensor ", quote_name(name));
  STRIDE_CHECK(value.is_object(), IOError, where, tensor,
               " must be an object with keys dtype, shape and data_offsets; got ",
               value.type_name(), kCorrupt);
  const auto& fields = value.get_ref<const json::object_t&>();
  for (const auto& [key, v] : fields) {
    STRIDE_CHECK(key == "dtype" || key == "shape" || key == "data_offsets", IOError, where, tensor,
                 " has unexpected key ", quote_name(key),
                 "; expected exactly dtype, shape and data_offsets", kCorrupt);
  }
  for (const char* key : {"dtype", "shape", "data_offsets"}) {
    STRIDE_CHECK(fields.count(key), IOError, where, tensor, " has no \"", key, "\"", kCorrupt);
  }

  TensorEntry entry;
  entry.name = name;

  const json& dtype = fields.at("dtype");
  STRIDE_CHECK(dtype.is_string(), IOError, where, tensor,
               ": dtype must be a string such as \"F32\"; got ", dtype.type_name(), kCorrupt);
  const auto& dtype_name = dtype.get_ref<const std::string&>();
  const std::optional<ScalarType> type = parse_safetensors_dtype(dtype_name);
  STRIDE_CHECK(type, IOError, where, tensor, " has dtype ", quote_name(dtype_name),
               ", which stride does not support (supported: BOOL, U8, I32, I64, F16, BF16, F32, "
               "F64, C64). Hint: convert the tensor to a supported dtype before saving it.");
  entry.dtype = *type;

  const json& shape = fields.at("shape");
  STRIDE_CHECK(shape.is_array(), IOError, where, tensor,
               ": shape must be an array of non-negative integers; got ", shape.type_name(),
               kCorrupt);
  for (size_t i = 0; i < shape.size(); ++i) {
    const std::optional<uint64_t> dim = as_u64(shape[i]);
    STRIDE_CHECK(dim && *dim <= uint64_t(std::numeric_limits<int64_t>::max()), IOError, where,
                 tensor, " has shape entry ", i, " = ",
                 shape[i].is_number() ? shape[i].dump() : std::string(shape[i].type_name()),
                 "; expected a non-negative integer", kCorrupt);
    entry.shape.push_back(int64_t(*dim));
  }
  // The product of the nonzero dims must fit int64 too: that keeps even an
  // empty tensor's strides representable.
  uint64_t nonzero_product = 1;
  bool has_zero = false;
  for (int64_t dim : entry.shape) {
    if (dim == 0) {
      has_zero = true;
      continue;
    }
    const bool overflow = __builtin_mul_overflow(nonzero_product, uint64_t(dim), &nonzero_product);
    STRIDE_CHECK(!overflow && nonzero_product <= uint64_t(std::numeric_limits<int64_t>::max()),
                 IOError, where, tensor, " has shape ", shape_text(entry.shape),
                 " whose element count overflows a 64-bit integer", kCorrupt);
  }
  const uint64_t numel = has_zero ? 0 : nonzero_product;
  const size_t itemsize = safetensors_itemsize(entry.dtype);
  uint64_t nbytes = 0;
  STRIDE_CHECK(!__builtin_mul_overflow(numel, uint64_t(itemsize), &nbytes), IOError, where, tensor,
               " has shape ", shape_text(entry.shape),
               " whose size in bytes overflows a 64-bit integer", kCorrupt);

  const json& offsets = fields.at("data_offsets");
  std::optional<uint64_t> begin, end;
  if (offsets.is_array() && offsets.size() == 2) {
    begin = as_u64(offsets[0]);
    end = as_u64(offsets[1]);
  }
  STRIDE_CHECK(begin && end, IOError, where, tensor,
               " has data_offsets that are not [begin, end] with two non-negative integers",
               kCorrupt);
  entry.begin = *begin;
  entry.end = *end;
  const std::string range = range_text(entry.begin, entry.end);
  STRIDE_CHECK(entry.begin <= entry.end, IOError, where, tensor, " has data_offsets ", range,
               " with begin > end", kCorrupt);
  STRIDE_CHECK(entry.end <= buffer_size, IOError, where, tensor, " has data_offsets ", range,
               " past the end of the ", buffer_size, "-byte data buffer", kCorrupt);
  STRIDE_CHECK(entry.end - entry.begin == nbytes, IOError, where, tensor, " has data_offsets ",
               range, " but shape ", shape_text(entry.shape), " x ", itemsize, " bytes = ", nbytes,
               kCorrupt);
  return entry;
}

// Sorted by offset, the ranges must tile [0, buffer_size) exactly: then no
// two tensors alias the same bytes and no byte goes unaccounted for.
void check_layout(std::vector<TensorEntry>& entries, uint64_t buffer_size, const Where& where) {
  std::stable_sort(entries.begin(), entries.end(), [](const TensorEntry& a, const TensorEntry& b) {
    return std::pair(a.begin, a.end) < std::pair(b.begin, b.end);
  });
  uint64_t covered = 0;
  const TensorEntry* prev = nullptr;
  for (const TensorEntry& e : entries) {
    STRIDE_CHECK(e.begin >= covered, IOError, where, "tensors ", quote_name(prev ? prev->name : ""),
                 " ", range_text(prev ? prev->begin : 0, prev ? prev->end : 0), " and ",
                 quote_name(e.name), " ", range_text(e.begin, e.end), " overlap", kCorrupt);
    STRIDE_CHECK(e.begin == covered, IOError, where, "bytes [", covered, ", ", e.begin,
                 ") of the data buffer belong to no tensor (a hole before tensor ",
                 quote_name(e.name), ")", kCorrupt);
    covered = e.end;
    prev = &e;
  }
  STRIDE_CHECK(!entries.empty() || buffer_size == 0, IOError, where, "the data buffer has ",
               buffer_size, " bytes but the header lists no tensors", kCorrupt);
  STRIDE_CHECK(covered == buffer_size, IOError, where, "the data buffer has ", buffer_size,
               " bytes but the tensors cover only the first ", covered, kCorrupt);
}

// The format names no 128-bit complex type.
[[noreturn]] void no_safetensors_dtype(ScalarType t) {
  throw DTypeError(str_cat("[save_safetensors] the format has no dtype for ", to_string(t),
                           ". Hint: save view_as_real(t), a float64 tensor, and view_as_complex it "
                           "after loading."));
}

}  // namespace

std::string_view safetensors_dtype_name(ScalarType t) {
  for (const DtypeName& d : kDtypes) {
    if (d.type == t) return d.name;
  }
  no_safetensors_dtype(t);
}

std::optional<ScalarType> parse_safetensors_dtype(std::string_view name) {
  for (const DtypeName& d : kDtypes) {
    if (d.name == name) return d.type;
  }
  return std::nullopt;
}

size_t safetensors_itemsize(ScalarType t) {
  for (const DtypeName& d : kDtypes) {
    if (d.type == t) return d.itemsize;
  }
  no_safetensors_dtype(t);
}

uint64_t parse_header_length(const unsigned char* prefix,
                             uint64_t file_size,
                             std::string_view file) {
  const Where where{file};
  STRIDE_CHECK(file_size >= kLengthPrefixBytes, IOError, where, "the file is ", file_size,
               " bytes, too short for the 8-byte header length", kCorrupt);
  uint64_t n = 0;
  for (size_t i = 0; i < kLengthPrefixBytes; ++i) n |= uint64_t(prefix[i]) << (8 * i);
  STRIDE_CHECK(n <= kMaxHeaderBytes, IOError, where, "the header length ", n,
               " exceeds the limit of ", kMaxHeaderBytes, " bytes", kCorrupt);
  STRIDE_CHECK(n <= file_size - kLengthPrefixBytes, IOError, where, "the header length ", n,
               " runs past the end of the file (", file_size, " bytes in all)", kCorrupt);
  return n;
}

Header parse_header(std::string_view header, uint64_t file_size, std::string_view file) {
  const Where where{file};
  STRIDE_CHECK(file_size >= kLengthPrefixBytes && header.size() <= file_size - kLengthPrefixBytes,
               IOError, where, "the header (", header.size(), " bytes) does not fit in the file (",
               file_size, " bytes)", kCorrupt);
  const uint64_t buffer_size = file_size - kLengthPrefixBytes - header.size();
  const json root = parse_json(header, where);
  STRIDE_CHECK(root.is_object(), IOError, where, "the header must be a JSON object; got ",
               root.type_name(), kCorrupt);
  Header out;
  out.data_start = kLengthPrefixBytes + header.size();
  for (const auto& [name, value] : root.get_ref<const json::object_t&>()) {
    if (name == "__metadata__") {
      out.metadata = parse_metadata(value, where);
    } else {
      out.entries.push_back(parse_entry(name, value, buffer_size, where));
    }
  }
  check_layout(out.entries, buffer_size, where);
  return out;
}

void check_bool_data(const unsigned char* data,
                     size_t n,
                     std::string_view tensor_name,
                     std::string_view file) {
  for (size_t i = 0; i < n; ++i) {
    STRIDE_CHECK(data[i] <= 1, IOError, Where{file}, "tensor ", quote_name(tensor_name),
                 " has dtype BOOL but element ", i, " is byte ", int(data[i]),
                 "; booleans must be 0 or 1", kCorrupt);
  }
}

Header parse_file_bytes(std::string_view bytes, std::string_view file) {
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  const uint64_t n = parse_header_length(data, bytes.size(), file);
  return parse_header(bytes.substr(kLengthPrefixBytes, n), bytes.size(), file);
}

std::string serialize_header(std::vector<TensorEntry>& entries, const Metadata& metadata) {
  json root = json::object();
  if (!metadata.empty()) root["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (TensorEntry& e : entries) {
    STRIDE_CHECK(!e.name.empty(), ValueError, "[save_safetensors] tensor names must not be empty");
    STRIDE_CHECK(e.name != "__metadata__", ValueError,
                 "[save_safetensors] \"__metadata__\" is reserved for the metadata and cannot "
                 "name a tensor");
    STRIDE_CHECK(!root.contains(e.name), ValueError, "[save_safetensors] tensor name ",
                 quote_name(e.name), " appears twice; names must be unique");
    uint64_t nbytes = safetensors_itemsize(e.dtype);
    for (int64_t d : e.shape) {
      STRIDE_CHECK(d >= 0 && !__builtin_mul_overflow(nbytes, uint64_t(d), &nbytes), ValueError,
                   "[save_safetensors] tensor ", quote_name(e.name), " has invalid shape ",
                   shape_text(e.shape));
    }
    e.begin = offset;
    e.end = offset + nbytes;
    offset = e.end;
    json entry = json::object();
    entry["dtype"] = safetensors_dtype_name(e.dtype);
    entry["shape"] = e.shape;
    entry["data_offsets"] = json::array({e.begin, e.end});
    root[e.name] = std::move(entry);
  }
  std::string text;
  try {
    text = root.dump();
  } catch (const json::type_error& err) {
    throw ValueError(
        str_cat("[save_safetensors] tensor names and metadata must be valid UTF-8: ", err.what()));
  }
  // Padding keeps the data buffer 8-byte aligned in the file, as the
  // reference writer does, so readers can map tensors in place.
  text.append((kLengthPrefixBytes - text.size() % kLengthPrefixBytes) % kLengthPrefixBytes, ' ');
  std::string out(kLengthPrefixBytes, '\0');
  for (size_t i = 0; i < kLengthPrefixBytes; ++i) {
    out[i] = char((uint64_t(text.size()) >> (8 * i)) & 0xff);
  }
  return out + text;
}

}  // namespace stride::io::detail
