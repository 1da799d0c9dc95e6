// Heatmap grids: the PNGs' geometry, pixel colours and text (read back with
// libpng), the SVG, errors; the PNGs' bitmap font.
#include "stride/plot.h"

#include <gtest/gtest.h>
#include <png.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "plot/bitmap_font.h"
#include "stride/error.h"
#include "support/temp_dir.h"

namespace stride::plot {
namespace {

namespace fs = std::filesystem;

using Rgb = std::array<uint8_t, 3>;
constexpr Rgb kWhite = {255, 255, 255};

using stride::testing::TempDir;

struct Image {
  int64_t width = 0, height = 0;
  std::vector<uint8_t> rgb;
  Rgb at(int64_t x, int64_t y) const {
    const size_t i = size_t(3 * (y * width + x));
    return {rgb[i], rgb[i + 1], rgb[i + 2]};
  }
};

Image read_png(const fs::path& path) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  EXPECT_TRUE(png_image_begin_read_from_file(&image, path.c_str())) << image.message;
  EXPECT_EQ(image.format & PNG_FORMAT_FLAG_COLOR, PNG_FORMAT_FLAG_COLOR);
  EXPECT_EQ(image.format & PNG_FORMAT_FLAG_ALPHA, 0u);
  image.format = PNG_FORMAT_RGB;
  Image out;
  out.width = image.width;
  out.height = image.height;
  out.rgb.resize(PNG_IMAGE_SIZE(image));
  EXPECT_TRUE(png_image_finish_read(&image, nullptr, out.rgb.data(), 0, nullptr)) << image.message;
  return out;
}

Heatmap filled(int64_t rows, int64_t cols, float v) {
  return {std::vector<float>(size_t(rows * cols), v), rows, cols};
}

TEST(Heatmap, GridGeometryAndPixelColours) {
  TempDir dir;
  const fs::path path = dir.path() / "attention.png";
  // 5 maps of (2, 3) in a grid of 3 columns: 2 grid rows, the last cell empty.
  std::vector<Heatmap> maps = {filled(2, 3, 0.0f), filled(2, 3, 1.0f), filled(2, 3, 0.5f),
                               filled(2, 3, 0.25f), filled(2, 3, 0.0f)};
  maps[4].values[5] = 1.0f;  // entry (1, 2)
  HeatmapGridOptions options;
  options.grid_cols = 3;
  options.cell_pixels = 4;
  options.gap_pixels = 2;
  write_heatmap_grid_png(path, maps, options);
  // Written whole: no temporary file is left beside it.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);

  const Image image = read_png(path);
  // G + C * (cols * B + G) by G + R * (rows * B + G).
  ASSERT_EQ(image.width, 2 + 3 * (3 * 4 + 2));
  ASSERT_EQ(image.height, 2 + 2 * (2 * 4 + 2));
  const auto cell_x = [](int64_t c) { return 2 + c * 14; };
  const auto cell_y = [](int64_t r) { return 2 + r * 10; };
  EXPECT_EQ(image.at(cell_x(0), cell_y(0)), colormap(0.0f));
  EXPECT_EQ(image.at(cell_x(0) + 11, cell_y(0) + 7), colormap(0.0f));
  EXPECT_EQ(image.at(cell_x(1), cell_y(0)), colormap(1.0f));
  EXPECT_EQ(image.at(cell_x(2) + 5, cell_y(0) + 5), colormap(0.5f));
  EXPECT_EQ(image.at(cell_x(0), cell_y(1)), colormap(0.25f));
  // Map 4's entry (1, 2) is the block at x + 2 * 4, y + 1 * 4.
  EXPECT_EQ(image.at(cell_x(1) + 8, cell_y(1) + 4), colormap(1.0f));
  EXPECT_EQ(image.at(cell_x(1) + 11, cell_y(1) + 7), colormap(1.0f));
  EXPECT_EQ(image.at(cell_x(1) + 7, cell_y(1) + 4), colormap(0.0f));
  // Border, gaps between cells and the unused sixth cell are white.
  EXPECT_EQ(image.at(0, 0), kWhite);
  EXPECT_EQ(image.at(cell_x(1) - 1, cell_y(0)), kWhite);
  EXPECT_EQ(image.at(cell_x(0), cell_y(1) - 1), kWhite);
  EXPECT_EQ(image.at(cell_x(2) + 3, cell_y(1) + 3), kWhite);
  EXPECT_EQ(image.at(image.width - 1, image.height - 1), kWhite);
}

TEST(Heatmap, DefaultsToASquareGridOfCellsAbout128Pixels) {
  TempDir dir;
  const fs::path path = dir.path() / "grid.png";
  write_heatmap_grid_png(path, std::vector<Heatmap>(5, filled(8, 8, 0.5f)));
  const Image image = read_png(path);
  // ceil(sqrt(5)) = 3 columns, 2 rows; 8 entries x 16 px = 128 px cells, gap 4.
  EXPECT_EQ(image.width, 4 + 3 * (128 + 4));
  EXPECT_EQ(image.height, 4 + 2 * (128 + 4));

  // A map larger than 128 entries still gets 1 px per entry.
  write_heatmap_grid_png(path, {filled(200, 300, 0.5f)});
  const Image big = read_png(path);
  EXPECT_EQ(big.width, 4 + 300 + 4);
  EXPECT_EQ(big.height, 4 + 200 + 4);
}

TEST(Heatmap, ClampsValuesOrNormalizesEachMap) {
  TempDir dir;
  const fs::path path = dir.path() / "clamp.png";
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Heatmap map{{-1.0f, 2.0f, 0.2f, nan}, 2, 2};
  HeatmapGridOptions options;
  options.cell_pixels = 1;
  options.gap_pixels = 0;
  write_heatmap_grid_png(path, {map}, options);
  Image image = read_png(path);
  ASSERT_EQ(image.width, 2);
  EXPECT_EQ(image.at(0, 0), colormap(0.0f));
  EXPECT_EQ(image.at(1, 0), colormap(1.0f));
  EXPECT_EQ(image.at(0, 1), colormap(0.2f));
  EXPECT_EQ(image.at(1, 1), colormap(0.0f));  // NaN

  // Each map is stretched to [0, 1] on its own; a constant map draws as 0.
  options.normalize_each = true;
  const Heatmap low{{0.1f, 0.2f, 0.3f}, 1, 3};
  const Heatmap constant{{0.7f, 0.7f, 0.7f}, 1, 3};
  write_heatmap_grid_png(path, {low, constant}, options);
  image = read_png(path);
  ASSERT_EQ(image.width, 6);
  EXPECT_EQ(image.at(0, 0), colormap(0.0f));
  EXPECT_EQ(image.at(1, 0), colormap(0.5f));
  EXPECT_EQ(image.at(2, 0), colormap(1.0f));
  EXPECT_EQ(image.at(4, 0), colormap(0.0f));
}

TEST(Heatmap, RejectsBadMapsWithValueError) {
  TempDir dir;
  const fs::path path = dir.path() / "bad.png";
  EXPECT_THROW(write_heatmap_grid_png(path, {}), ValueError);
  EXPECT_THROW(write_heatmap_grid_png(path, {filled(2, 2, 0.f), filled(2, 3, 0.f)}), ValueError);
  EXPECT_THROW(write_heatmap_grid_png(path, {Heatmap{{0.f, 0.f, 0.f}, 2, 2}}), ValueError);
  EXPECT_THROW(write_heatmap_grid_png(path, {Heatmap{{}, 0, 0}}), ValueError);
  HeatmapGridOptions negative;
  negative.gap_pixels = -1;
  EXPECT_THROW(write_heatmap_grid_png(path, {filled(2, 2, 0.f)}, negative), ValueError);
  HeatmapGridOptions huge;
  huge.cell_pixels = 2'000'000;
  EXPECT_THROW(write_heatmap_grid_png(path, {filled(2, 2, 0.f)}, huge), ValueError);
  EXPECT_FALSE(fs::exists(path));
}

TEST(Heatmap, UnwritablePathThrowsIOErrorNamingIt) {
  TempDir dir;
  const fs::path path = dir.path() / "no_such_dir" / "attention.png";
  try {
    write_heatmap_grid_png(path, {filled(2, 2, 0.5f)});
    FAIL() << "expected IOError";
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
  HeatmapLabels labels;
  labels.title = "attention";
  try {
    write_heatmap_grid_png(path, {filled(2, 2, 0.5f)}, labels);
    FAIL() << "expected IOError";
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The labelled SVG: every entry a rect of its colour, each map's title, the
// labels of both axes (escaped), and a colour bar.
TEST(HeatmapSvg, LabelsEveryMapAndBothAxes) {
  std::vector<Heatmap> maps = {filled(3, 3, 0.0f), filled(3, 3, 1.0f)};
  HeatmapLabels labels;
  labels.title = "attention <of> \"a & b\"";
  labels.map_titles = {"layer 0, head 0", "layer 0, head 1"};
  labels.row_labels = {"a", "<", "&"};
  labels.col_labels = labels.row_labels;
  const std::string svg = heatmap_grid_svg(maps, labels, {.grid_cols = 2});
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_EQ(count(svg, "<rect"), 1u + 2 * 9 + 20);  // background, entries, colour bar
  EXPECT_EQ(count(svg, "fill=\"#440154\""), 9u);    // map 0's entries: colormap(0)
  EXPECT_EQ(count(svg, "fill=\"#fde725\""), 9u);    // map 1's entries: colormap(1)
  EXPECT_NE(svg.find(">attention &lt;of&gt; &quot;a &amp; b&quot;</text>"), std::string::npos);
  EXPECT_NE(svg.find(">layer 0, head 1</text>"), std::string::npos);
  EXPECT_EQ(count(svg, ">&lt;</text>"), 4u);  // a row and a column label in each map
  EXPECT_EQ(count(svg, ">&amp;</text>"), 4u);
  EXPECT_NE(svg.find(">1</text>"), std::string::npos);  // the colour bar's ends
  EXPECT_NE(svg.find(">0</text>"), std::string::npos);
  EXPECT_THROW(heatmap_grid_svg({}, labels), ValueError);
  TempDir dir;
  write_heatmap_grid_svg(dir.path() / "grid.svg", maps, labels, {.grid_cols = 2});
  EXPECT_TRUE(fs::exists(dir.path() / "grid.svg"));
}

// Text is near black; every colour of the colormap has a channel above 80.
bool is_ink(const Rgb& c) {
  return std::max({c[0], c[1], c[2]}) < 64;
}

// Whether any pixel of [x0, x1) x [y0, y1) is text.
bool has_ink(const Image& image, int64_t x0, int64_t y0, int64_t x1, int64_t y1) {
  for (int64_t y = y0; y < y1; ++y) {
    for (int64_t x = x0; x < x1; ++x) {
      if (is_ink(image.at(x, y))) return true;
    }
  }
  return false;
}

// The first and last columns of [x0, x1) x [y0, y1) that hold text; {-1, -1}
// when none does.
std::pair<int64_t, int64_t> ink_columns(
    const Image& image, int64_t x0, int64_t y0, int64_t x1, int64_t y1) {
  std::pair<int64_t, int64_t> extent{-1, -1};
  for (int64_t x = x0; x < x1; ++x) {
    if (!has_ink(image, x, y0, x + 1, y1)) continue;
    if (extent.first < 0) extent.first = x;
    extent.second = x;
  }
  return extent;
}

int64_t svg_attribute(const std::string& svg, const std::string& name) {
  const size_t at = svg.find(" " + name + "=\"");
  EXPECT_NE(at, std::string::npos) << name;
  return std::stoll(svg.substr(at + name.size() + 3));
}

// Two (kN, kN) maps side by side, wide enough for their titles, and labels
// for all of it.
constexpr int64_t kN = 7;

std::vector<Heatmap> two_maps() {
  return {filled(kN, kN, 0.0f), filled(kN, kN, 1.0f)};
}

HeatmapLabels full_labels() {
  HeatmapLabels labels;
  labels.title = "attention of a, b, c";
  labels.map_titles = {"layer 0, head 0", "layer 0, head 1"};
  labels.row_labels = {"a", "b", "c", "d", "e", "f", "g"};
  labels.col_labels = labels.row_labels;
  return labels;
}

// Where two_maps() go with full_labels() and the default options: 14 px
// entries, 14 px of row and column labels, 18 px map titles, a 28 px
// figure title, 12 px gaps; the colour bar at the right.
constexpr int64_t kBlock = 14, kLabel = 14, kTitle = 18, kTop = 28, kGap = 12;
constexpr int64_t kSide = kN * kBlock, kPanelW = kLabel + kSide;
constexpr int64_t kPanelX[2] = {kGap, kGap + kPanelW + kGap}, kPanelY = kTop + kGap;
constexpr int64_t kCellsX[2] = {kPanelX[0] + kLabel, kPanelX[1] + kLabel};
constexpr int64_t kCellsY = kPanelY + kTitle + kLabel;
constexpr int64_t kBarX = kGap + 2 * (kPanelW + kGap), kBarTop = kTop + kGap + 10;
constexpr int64_t kTickX = kBarX + 16;

Image labelled_png(const fs::path& path,
                   const std::vector<Heatmap>& maps,
                   const HeatmapLabels& labels,
                   const HeatmapGridOptions& options = {.grid_cols = 2}) {
  write_heatmap_grid_png(path, maps, labels, options);
  return read_png(path);
}

// The labelled PNG has the SVG's size and puts each entry where the SVG
// puts its rect.
TEST(HeatmapLabelledPng, HasTheSvgLayout) {
  TempDir dir;
  for (const HeatmapLabels& labels : {full_labels(), HeatmapLabels{}}) {
    const std::string svg = heatmap_grid_svg(two_maps(), labels, {.grid_cols = 2});
    const Image image = labelled_png(dir.path() / "grid.png", two_maps(), labels);
    EXPECT_EQ(image.width, svg_attribute(svg, "width"));
    EXPECT_EQ(image.height, svg_attribute(svg, "height"));
  }
  const std::string svg = heatmap_grid_svg(two_maps(), full_labels(), {.grid_cols = 2});
  const Image image = labelled_png(dir.path() / "grid.png", two_maps(), full_labels());
  for (int k = 0; k < 2; ++k) {
    const int64_t x = kCellsX[k] + 2 * kBlock, y = kCellsY + kBlock;  // entry (1, 2)
    const std::string rect = "<rect x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) +
                             "\" width=\"14\" height=\"14\" fill=\"" +
                             (k == 0 ? "#440154" : "#fde725") + "\"/>";
    EXPECT_NE(svg.find(rect), std::string::npos) << rect;
    EXPECT_EQ(image.at(x, y), colormap(float(k)));
    EXPECT_EQ(image.at(x + kBlock - 1, y + kBlock - 1), colormap(float(k)));
  }
}

TEST(HeatmapLabelledPng, DrawsTextInItsLabelBoxesOnly) {
  TempDir dir;
  const Image image = labelled_png(dir.path() / "grid.png", two_maps(), full_labels());
  EXPECT_TRUE(has_ink(image, kGap, 0, kBarX, kTop));  // the figure's title
  for (int k = 0; k < 2; ++k) {
    EXPECT_TRUE(has_ink(image, kCellsX[k], kPanelY, kCellsX[k] + kSide, kPanelY + kTitle)) << k;
    for (int64_t n = 0; n < kN; ++n) {
      // Column n's label above its column, row n's at the left of its row.
      EXPECT_TRUE(has_ink(image, kCellsX[k] + n * kBlock, kPanelY + kTitle,
                          kCellsX[k] + (n + 1) * kBlock, kCellsY))
          << k << " " << n;
      EXPECT_TRUE(
          has_ink(image, kPanelX[k], kCellsY + n * kBlock, kCellsX[k], kCellsY + (n + 1) * kBlock))
          << k << " " << n;
    }
    EXPECT_FALSE(has_ink(image, kCellsX[k], kCellsY, kCellsX[k] + kSide, kCellsY + kSide));
  }
  EXPECT_FALSE(has_ink(image, 0, kCellsY + kSide, kBarX, image.height));
}

TEST(HeatmapLabelledPng, EmptyLabelsDrawNoText) {
  TempDir dir;
  HeatmapLabels axes_only = full_labels();
  axes_only.title.clear();
  axes_only.map_titles.clear();
  Image image = labelled_png(dir.path() / "grid.png", two_maps(), axes_only);
  // No figure title: the panels move up by its height; their titles' lines
  // stay, empty, above the column labels.
  for (int k = 0; k < 2; ++k) {
    const int64_t col_labels_y = kGap + kTitle;
    EXPECT_FALSE(has_ink(image, kPanelX[k], 0, kPanelX[k] + kPanelW, col_labels_y)) << k;
    EXPECT_TRUE(
        has_ink(image, kPanelX[k], col_labels_y, kPanelX[k] + kPanelW, col_labels_y + kLabel))
        << k;
  }

  // Without labels only the colour bar's "1" and "0" are text.
  image = labelled_png(dir.path() / "grid.png", two_maps(), {});
  const int64_t bar_x = kGap + 2 * (kSide + kGap);
  EXPECT_FALSE(has_ink(image, 0, 0, bar_x, image.height));
  EXPECT_TRUE(has_ink(image, bar_x, 0, image.width, image.height));
}

TEST(HeatmapLabelledPng, ColourBarRunsFromOneAtTheTopToZeroAtTheBottom) {
  TempDir dir;
  HeatmapGridOptions options{.grid_cols = 2};
  const Image image = labelled_png(dir.path() / "grid.png", two_maps(), full_labels(), options);
  EXPECT_EQ(image.at(kBarX, kBarTop), colormap(1.0f));
  EXPECT_EQ(image.at(kBarX + 11, kBarTop + 99), colormap(0.0f));
  EXPECT_EQ(image.at(kBarX + 6, kBarTop + 50), colormap(1.0f - 50.0f / 99.0f));
  EXPECT_EQ(image.at(kBarX, kBarTop - 1), kWhite);
  EXPECT_EQ(image.at(kBarX, kBarTop + 100), kWhite);
  EXPECT_EQ(image.at(kBarX + 12, kBarTop), kWhite);
  // "1" at its top, "0" at its bottom: one glyph wide each.
  EXPECT_TRUE(has_ink(image, kTickX, kBarTop, kTickX + 5, kBarTop + 7));
  EXPECT_TRUE(has_ink(image, kTickX, kBarTop + 93, kTickX + 5, kBarTop + 100));
  EXPECT_FALSE(has_ink(image, kTickX + 5, kTop, image.width, image.height));

  // "max" and "min" for maps scaled each on its own: three glyphs wide.
  options.normalize_each = true;
  const Image scaled = labelled_png(dir.path() / "grid.png", two_maps(), full_labels(), options);
  EXPECT_TRUE(has_ink(scaled, kTickX + 12, kBarTop, kTickX + 17, kBarTop + 7));
  EXPECT_TRUE(has_ink(scaled, kTickX + 12, kBarTop + 93, kTickX + 17, kBarTop + 100));
}

// Subword tokens as labels: the row labels get room as wide as the widest
// ("[MASK]": 6 glyphs of 6 px, less the last blank column, and 6 px of
// margin), and column labels wider than a column are written upwards in
// a band as tall as the widest, in the PNG and (rotated) in the SVG.
TEST(HeatmapLabelledPng, WordLabelsGetRoomAndColumnsTurnUpwards) {
  TempDir dir;
  HeatmapLabels labels;
  labels.row_labels = {"[CLS]", "the", "cap", "##it", "[MASK]", ".", "[SEP]"};
  labels.col_labels = labels.row_labels;
  const Image image = labelled_png(dir.path() / "words.png", two_maps(), labels);
  constexpr int64_t kWordLabel = 6 * 6 - 1 + 6;  // 41 px, both ways
  constexpr int64_t kPanelWWords = kWordLabel + kSide;
  EXPECT_EQ(image.width, kGap + 2 * (kPanelWWords + kGap) + 60);
  const int64_t cells_x = kGap + kWordLabel, cells_y = kGap + kTitle + kWordLabel;
  EXPECT_EQ(image.at(cells_x, cells_y), colormap(0.0f));
  EXPECT_EQ(image.at(cells_x - 1, cells_y - 1), kWhite);
  // "[MASK]" upwards over column 4: ink from 3 px above the cells to 38
  // px above them, within the column's 14 px.
  const int64_t column = cells_x + 4 * kBlock;
  EXPECT_TRUE(has_ink(image, column, cells_y - 9, column + kBlock, cells_y - 3));
  EXPECT_TRUE(has_ink(image, column, cells_y - kWordLabel + 3, column + kBlock, cells_y - 30));
  EXPECT_FALSE(has_ink(image, column, 0, column + kBlock, cells_y - kWordLabel + 2));
  // "." is short: nothing above its first glyph.
  const int64_t dot = cells_x + 5 * kBlock;
  EXPECT_FALSE(has_ink(image, dot, cells_y - kWordLabel, dot + kBlock, cells_y - 10));
  const std::string svg = heatmap_grid_svg(two_maps(), labels, {.grid_cols = 2});
  EXPECT_EQ(svg_attribute(svg, "width"), image.width);
  EXPECT_NE(svg.find("rotate(-90"), std::string::npos);
}

TEST(HeatmapLabelledPng, DrawsOnePlaceholderPerCodePoint) {
  TempDir dir;
  HeatmapLabels labels;
  // 2 + 3 + 4 bytes, three code points; the title's line is the panel's top.
  labels.map_titles = {"\u00e9\u23ce\U0001F600"};
  const Image image = labelled_png(dir.path() / "a.png", {filled(kN, kN, 0.5f)}, labels);
  const int64_t cells_x = kGap, title_y = kGap;
  EXPECT_EQ(ink_columns(image, cells_x, title_y, cells_x + kSide, title_y + kTitle),
            std::make_pair(cells_x, cells_x + 3 * kGlyphAdvance - 2));
  // Drawn as three characters the font lacks are: DEL is not printable.
  labels.map_titles = {"\x7f\x7f\x7f"};
  EXPECT_EQ(labelled_png(dir.path() / "b.png", {filled(kN, kN, 0.5f)}, labels).rgb, image.rgb);
}

TEST(HeatmapLabelledPng, RejectsAnImageOverThePixelLimit) {
  TempDir dir;
  // 11560 x 11560 px unlabelled, just within 2^27 px; the labels and the
  // colour bar take it over.
  const HeatmapGridOptions options{.cell_pixels = 5780, .gap_pixels = 0};
  EXPECT_NO_THROW(heatmap_grid_svg({filled(2, 2, 0.5f)}, full_labels(), options));
  try {
    write_heatmap_grid_png(dir.path() / "big.png", {filled(2, 2, 0.5f)}, full_labels(), options);
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("2^27"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir.path() / "big.png"));
}

TEST(HeatmapBitmapFont, HasADistinctGlyphForEachPrintableCharacter) {
  EXPECT_NE(glyph('l'), glyph('I'));
  EXPECT_NE(glyph('l'), glyph('1'));
  EXPECT_NE(glyph('I'), glyph('1'));
  EXPECT_NE(glyph('0'), glyph('O'));
  EXPECT_NE(glyph('O'), glyph('o'));
  EXPECT_EQ(glyph(' '), Glyph{});
  std::set<Glyph> seen;
  for (char c = ' '; c <= '~'; ++c) {
    EXPECT_TRUE(seen.insert(glyph(c)).second) << "'" << c << "' looks like another character";
    EXPECT_NE(glyph(c), kPlaceholderGlyph) << c;
    for (uint8_t row : glyph(c)) EXPECT_LT(row, 1 << kGlyphWidth) << c;
  }
  for (char c : {'\0', '\t', '\n', '\x7f', '\xc3'}) EXPECT_EQ(glyph(c), kPlaceholderGlyph);
}

TEST(HeatmapBitmapFont, GlyphsOfUtf8AreOnePerCodePoint) {
  const Glyph box = kPlaceholderGlyph;
  EXPECT_EQ(glyphs_of("a\u00e9\u23ce\U0001F600b"),
            (std::vector<Glyph>{glyph('a'), box, box, box, glyph('b')}));
  EXPECT_TRUE(glyphs_of("").empty());
  // Malformed: a stray continuation byte, a sequence cut short by 'x', a
  // byte that begins none.
  EXPECT_EQ(glyphs_of("\x80\xe2\x8fx\xff"), (std::vector<Glyph>{box, box, glyph('x'), box}));
}

TEST(HeatmapColormap, IsViridisWithRisingBrightness) {
  EXPECT_EQ(colormap(0.0f), (Rgb{68, 1, 84}));
  EXPECT_EQ(colormap(0.5f), (Rgb{33, 144, 140}));
  EXPECT_EQ(colormap(1.0f), (Rgb{253, 231, 37}));
  EXPECT_EQ(colormap(-3.0f), colormap(0.0f));
  EXPECT_EQ(colormap(7.0f), colormap(1.0f));
  EXPECT_EQ(colormap(std::numeric_limits<float>::quiet_NaN()), colormap(0.0f));
  EXPECT_EQ(colormap(std::numeric_limits<float>::infinity()), colormap(1.0f));
  double previous = -1.0;
  for (int i = 0; i <= 100; ++i) {
    const Rgb c = colormap(float(i) / 100.0f);
    const double luma = 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
    EXPECT_GT(luma, previous) << i;
    previous = luma;
  }
}

}  // namespace
}  // namespace stride::plot
