// PNG heatmap grids: geometry, pixel colours (read back with libpng), errors.
#include "support/heatmap.h"

#include <gtest/gtest.h>
#include <png.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "stride/error.h"
#include "support/temp_dir.h"

namespace stride::app {
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
  EXPECT_FALSE(fs::exists(dir.path() / "attention.png.tmp"));

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
}  // namespace stride::app
