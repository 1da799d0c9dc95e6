// printf-style formatting into a std::string for the command line's output
// (GCC 12 has no <format>).
#pragma once

#include <string>

namespace stride::app {

// At most 127 characters: for numbers and short labels, not free text.
[[gnu::format(printf, 1, 2)]] std::string format(const char* fmt, ...);

}  // namespace stride::app
