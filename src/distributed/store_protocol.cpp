#include "distributed/store_protocol.h"

namespace stride::distributed::detail {

namespace {

// The field at `at` of `bytes`, when whole: its value and where it ends.
ParseStatus read_field(
    std::string_view bytes, size_t at, size_t limit, std::string& value, size_t& end) {
  if (bytes.size() < at + 4) return ParseStatus::Incomplete;
  const size_t n = decode_length(bytes.data() + at);
  if (n > limit) return ParseStatus::Malformed;
  if (bytes.size() - at - 4 < n) return ParseStatus::Incomplete;
  value.assign(bytes.substr(at + 4, n));
  end = at + 4 + n;
  return ParseStatus::Complete;
}

}  // namespace

uint32_t decode_length(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t(uint8_t(p[i])) << (8 * i);
  return v;
}

std::string encode_field(std::string_view bytes) {
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i) out[size_t(i)] = char((bytes.size() >> (8 * i)) & 0xff);
  out.append(bytes);
  return out;
}

std::string encode_set(std::string_view key, std::string_view value) {
  std::string out(1, char(StoreRequest::Op::Set));
  out += encode_field(key);
  out += encode_field(value);
  return out;
}

std::string encode_get(std::string_view key) {
  std::string out(1, char(StoreRequest::Op::Get));
  out += encode_field(key);
  return out;
}

ParseStatus parse_store_request(std::string_view bytes, StoreRequest& request, size_t& consumed) {
  if (bytes.empty()) return ParseStatus::Incomplete;
  const char op = bytes[0];
  if (op != char(StoreRequest::Op::Set) && op != char(StoreRequest::Op::Get)) {
    return ParseStatus::Malformed;
  }
  request.op = StoreRequest::Op(op);
  size_t end = 0;
  if (const ParseStatus s = read_field(bytes, 1, kMaxStoreKey, request.key, end);
      s != ParseStatus::Complete) {
    return s;
  }
  if (request.op == StoreRequest::Op::Set) {
    if (const ParseStatus s = read_field(bytes, end, kMaxStoreValue, request.value, end);
        s != ParseStatus::Complete) {
      return s;
    }
  }
  consumed = end;
  return ParseStatus::Complete;
}

}  // namespace stride::distributed::detail
