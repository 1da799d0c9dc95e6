#include "core/check.h"

namespace stride::detail {

std::string printable_excerpt(std::string_view text, size_t max_chars) {
  std::string out(text.substr(0, max_chars));
  for (char& ch : out) {
    if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) >= 0x7f) ch = '?';
  }
  if (text.size() > max_chars) out += "...";
  return out;
}

void throw_internal(const char* cond, const char* file, int line, const std::string& msg) {
  throw InternalError(str_cat("internal error: ", cond, " failed at ", file, ":", line,
                              msg.empty() ? "" : " (", msg, msg.empty() ? "" : ")",
                              "; this is a bug in stride, please report it."));
}

}  // namespace stride::detail
