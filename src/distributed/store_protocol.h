// The rendezvous store's messages (Note [The rendezvous store] in
// tcp_store.h), apart from any socket so that they can be fuzzed:
// 'S' key value (set) and 'G' key (get) from a client, and a value (a field)
// or one byte (a set's acknowledgement) from the server. A field is
// [4-byte length, little endian][bytes].
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace stride::distributed::detail {

inline constexpr size_t kMaxStoreKey = size_t(1) << 12;
inline constexpr size_t kMaxStoreValue = size_t(1) << 20;

struct StoreRequest {
  enum class Op : char { Set = 'S', Get = 'G' };
  Op op = Op::Get;
  std::string key;
  std::string value;  // a set's
};

enum class ParseStatus {
  Complete,    // `request` holds the first request; `consumed` bytes were it
  Incomplete,  // a prefix of a request: wait for more bytes
  Malformed,   // not a request (an unknown op, a length over the limits)
};

// The request at the start of `bytes`.
ParseStatus parse_store_request(std::string_view bytes, StoreRequest& request, size_t& consumed);

std::string encode_set(std::string_view key, std::string_view value);
std::string encode_get(std::string_view key);
// The server's answer to a get.
std::string encode_field(std::string_view bytes);
// The length at the start of 4 bytes.
uint32_t decode_length(const char* p);

}  // namespace stride::distributed::detail
