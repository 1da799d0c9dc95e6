// Images of heatmap grids, PNG and SVG, drawn without a plotting library:
// `stride attention` and Python's stride.plot draw one cell per (layer,
// head), each the (T, T) attention probabilities of that head.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace stride::plot {

// One (rows, cols) matrix, row-major: values.size() == rows * cols.
struct Heatmap {
  std::vector<float> values;
  int64_t rows = 0, cols = 0;
};

struct HeatmapGridOptions {
  // Cells per row of the grid (e.g. the number of heads, so a grid row is a
  // layer). 0: ceil(sqrt(number of maps)).
  int64_t grid_cols = 0;
  // Side in pixels of the square block that draws one matrix entry. 0: the
  // largest size that keeps a cell within 128 px (at least 1).
  int64_t cell_pixels = 0;
  // White space between cells and around the grid.
  int64_t gap_pixels = 4;
  // false: values are probabilities, clamped to [0, 1]. true: each map is
  // min-max scaled to [0, 1] on its own (a constant map draws as 0).
  bool normalize_each = false;
};

// The viridis colour (8-bit RGB) of v in [0, 1]: dark purple at 0, yellow at
// 1, brightness rising monotonically. v is clamped; NaN draws as 0.
std::array<uint8_t, 3> colormap(float v);

// Writes the maps as an 8-bit RGB PNG, cells in row-major order, grid_cols
// per row, without labels. With B = cell_pixels (or its default), G =
// gap_pixels, C = grid_cols and R = ceil(maps / C), the image is
//   width  = G + C * (cols * B + G),  height = G + R * (rows * B + G)
// and entry (i, j) of map k fills the B x B block at
//   x = G + (k % C) * (cols * B + G) + j * B,  y = G + (k / C) * (rows * B + G) + i * B.
// Gaps and unused cells are white. The image is drawn and encoded in memory,
// then written with io::write_file_atomically: `path` holds the whole PNG or
// is left as it was.
// Throws ValueError for an empty list, maps of different sizes, a values
// vector that is not rows * cols, a negative option or an image over
// 1,000,000 px a side or 2^27 px in all; IOError naming the path when the
// file cannot be written.
void write_heatmap_grid_png(const std::filesystem::path& path,
                            const std::vector<Heatmap>& maps,
                            const HeatmapGridOptions& options = {});

// What a labelled grid labels: each map's title (e.g. "layer 0, head 3"),
// the labels of its rows and columns (e.g. the prompt's characters, one per
// position), and the figure's title. Empty vectors or strings draw nothing.
struct HeatmapLabels {
  std::string title;
  std::vector<std::string> map_titles;  // one per map, or empty
  std::vector<std::string> row_labels;  // one per row, or empty
  std::vector<std::string> col_labels;  // one per column, or empty
};

// Writes the maps as a PNG laid out as heatmap_grid_svg lays them out (the
// same width, height and positions), its text in a 5 x 7 pixel font
// (src/plot/bitmap_font.h): printable ASCII as itself, any other UTF-8 code point as
// a hollow box. The colour bar runs from colormap(1) in its top row to
// colormap(0) in its bottom one. Written as the unlabelled PNG is, with the
// same checks and errors; the labelled image must fit the same limits.
void write_heatmap_grid_png(const std::filesystem::path& path,
                            const std::vector<Heatmap>& maps,
                            const HeatmapLabels& labels,
                            const HeatmapGridOptions& options = {});

// The maps as an SVG document: the cells in a grid as in the unlabelled PNG
// (cell_pixels defaults to 14 px per entry, less for large maps, and gaps
// are at least 12 px), each map with its title above and its row and column
// labels beside it, and a colour bar of the colormap from 0 to 1 at the
// right. The labels get room as wide as the widest row label (6 px a
// character), and column labels wider than a column are written upwards,
// in a band as tall as the widest (words such as a prompt's tokens).
// Labels are XML-escaped. Same checks and ValueErrors as the PNG.
std::string heatmap_grid_svg(const std::vector<Heatmap>& maps,
                             const HeatmapLabels& labels,
                             const HeatmapGridOptions& options = {});
// Writes heatmap_grid_svg atomically; IOError naming the path.
void write_heatmap_grid_svg(const std::filesystem::path& path,
                            const std::vector<Heatmap>& maps,
                            const HeatmapLabels& labels,
                            const HeatmapGridOptions& options = {});

// Text for SVG/XML: & < > " ' escaped; control characters, which XML 1.0
// forbids even escaped, dropped.
std::string xml_escape(std::string_view s);

}  // namespace stride::plot
