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

}  // namespace stride::app
