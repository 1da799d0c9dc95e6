// printf-style formatting into a std::string for the command line's output
// (GCC 12 has no <format>).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace stride::app {

// At most 127 characters: for numbers and short labels, not free text.
[[gnu::format(printf, 1, 2)]] std::string format(const char* fmt, ...);

// A byte count in KiB, MiB or GiB with two decimals ("50.21 GiB").
std::string bytes_text(uint64_t bytes);

}  // namespace stride::app
