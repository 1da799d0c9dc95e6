// A 5 x 7 pixel font for printable ASCII, with one row below the baseline
// for the tails of g, j, p, q, y, ',' and ';': text drawn into raster images
// (the labels of a PNG heatmap grid) where no font library is at hand.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace stride::plot {

inline constexpr int kGlyphWidth = 5;
inline constexpr int kGlyphHeight = 7;   // rows from the top down to the baseline
inline constexpr int kGlyphDescent = 1;  // rows below the baseline
// From one glyph's left edge to the next's: a blank column between glyphs.
inline constexpr int kGlyphAdvance = kGlyphWidth + 1;

// A glyph's rows of pixels, top row first; bit 4 of a row is its leftmost
// pixel, bit 0 its rightmost.
using Glyph = std::array<uint8_t, kGlyphHeight + kGlyphDescent>;

// What text the font has no glyph for draws as: a hollow box, so that a
// missing character still shows, and shows as missing.
inline constexpr Glyph kPlaceholderGlyph = {0x1F, 0x11, 0x11, 0x11, 0x11, 0x11, 0x1F, 0x00};

// The glyph of c: its own for printable ASCII (' ' to '~'), the placeholder
// for anything else.
const Glyph& glyph(char c);

// The glyphs of UTF-8 text, one per code point: printable ASCII its own,
// any other code point the placeholder. A byte that begins no well-formed
// sequence counts as a code point of its own, so malformed text still draws.
std::vector<Glyph> glyphs_of(std::string_view utf8);

}  // namespace stride::plot
