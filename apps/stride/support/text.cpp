#include "support/text.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

namespace stride::app {

std::string format(const char* fmt, ...) {
  char buf[128];
  va_list args;
  va_start(args, fmt);
  const int n = std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return n < 0 ? std::string() : std::string(buf, std::min(size_t(n), sizeof buf - 1));
}

std::string bytes_text(uint64_t bytes) {
  const double b = double(bytes);
  if (b >= double(1ull << 30)) return format("%.2f GiB", b / double(1ull << 30));
  if (b >= double(1ull << 20)) return format("%.2f MiB", b / double(1ull << 20));
  return format("%.1f KiB", b / 1024.0);
}

std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        if (uint8_t(c) >= 0x20 || c == '\t' || c == '\n' || c == '\r') out += c;
    }
  }
  return out;
}

}  // namespace stride::app
