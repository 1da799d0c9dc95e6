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

}  // namespace stride::app
