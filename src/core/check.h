// STRIDE_CHECK for user errors, STRIDE_ASSERT for internal invariants (see
// include/stride/error.h). The message arguments are only formatted when the
// check fails, so checks are cheap on the hot path.
#pragma once

#include <sstream>
#include <string>
#include <string_view>

#include "stride/error.h"

namespace stride::detail {

template <class... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

// Text from an untrusted file (a parser's message quotes what it read), made
// safe to print: cut to `max_chars` and every byte outside printable ASCII
// replaced by '?', so a hostile file cannot flood a message or send
// terminal escape sequences.
std::string printable_excerpt(std::string_view text, size_t max_chars = 200);

[[noreturn]] void throw_internal(const char* cond,
                                 const char* file,
                                 int line,
                                 const std::string& msg);

}  // namespace stride::detail

#define STRIDE_CHECK(cond, ErrorType, ...)                     \
  do {                                                         \
    if (!(cond)) [[unlikely]] {                                \
      throw ErrorType(::stride::detail::str_cat(__VA_ARGS__)); \
    }                                                          \
  } while (0)

#define STRIDE_ASSERT(cond, ...)                                                \
  do {                                                                          \
    if (!(cond)) [[unlikely]] {                                                 \
      ::stride::detail::throw_internal(#cond, __FILE__, __LINE__,               \
                                       ::stride::detail::str_cat(__VA_ARGS__)); \
    }                                                                           \
  } while (0)

#ifdef NDEBUG
#define STRIDE_DEBUG_ASSERT(cond, ...) ((void)0)
#else
#define STRIDE_DEBUG_ASSERT(cond, ...) STRIDE_ASSERT(cond, __VA_ARGS__)
#endif
