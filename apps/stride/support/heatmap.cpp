// PNG heatmap grids (heatmap.h).
#include "support/heatmap.h"

#include <png.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <string>
#include <system_error>

#include "stride/error.h"
#include "stride/io.h"
#include "support/text.h"

namespace stride::app {

namespace {

// viridis (matplotlib's default map) sampled at i / 8; linear interpolation
// between these stays within a few levels of the full 256-entry table.
constexpr uint8_t kViridis[9][3] = {
    {68, 1, 84},    {71, 45, 123}, {59, 82, 139},  {44, 114, 142}, {33, 144, 140},
    {39, 173, 129}, {93, 200, 99}, {170, 220, 50}, {253, 231, 37},
};

constexpr int64_t kMaxSide = 1'000'000;  // libpng's default read limit per side
constexpr int64_t kMaxPixels = int64_t(1) << 30;

std::string errno_text(int err) {
  return err ? std::strerror(err) : "unknown error";
}

// What fill_row needs to draw one image row; see the geometry in heatmap.h.
struct Grid {
  const std::vector<Heatmap>* maps = nullptr;
  std::vector<double> offset, scale;  // per map: drawn value = (v - offset) * scale
  int64_t rows = 0, cols = 0, block = 0, gap = 0, grid_cols = 0, grid_rows = 0;
  int64_t width = 0, height = 0;
};

void fill_row(int64_t y, uint8_t* row, const Grid& g) {
  std::memset(row, 255, size_t(g.width) * 3);
  const int64_t pitch_y = g.rows * g.block + g.gap;
  if (y < g.gap) return;
  const int64_t r = (y - g.gap) / pitch_y, within = (y - g.gap) % pitch_y;
  if (within >= g.rows * g.block) return;
  const int64_t i = within / g.block;
  const int64_t pitch_x = g.cols * g.block + g.gap;
  for (int64_t c = 0; c < g.grid_cols; ++c) {
    const size_t k = size_t(r * g.grid_cols + c);
    if (k >= g.maps->size()) break;
    const float* values = (*g.maps)[k].values.data() + i * g.cols;
    uint8_t* out = row + 3 * (g.gap + c * pitch_x);
    for (int64_t j = 0; j < g.cols; ++j) {
      const auto rgb = colormap(float((double(values[j]) - g.offset[k]) * g.scale[k]));
      for (int64_t p = 0; p < g.block; ++p, out += 3) std::memcpy(out, rgb.data(), 3);
    }
  }
}

struct PngError {
  char message[256] = "unknown libpng error";
};

void on_png_error(png_structp png, png_const_charp message) {
  auto* error = static_cast<PngError*>(png_get_error_ptr(png));
  std::snprintf(error->message, sizeof error->message, "%s", message);
  png_longjmp(png, 1);
}

void on_png_warning(png_structp, png_const_charp) {}

// Writes an 8-bit RGB image row by row; false with `error` set when libpng
// fails. libpng reports errors by longjmp back to the setjmp below, which
// skips destructors, so no object with one may live in this frame, and `row`
// (width * 3 bytes) comes from the caller.
bool write_png_rgb(FILE* file, const Grid& grid, uint8_t* row, PngError* error) {
  png_structp png =
      png_create_write_struct(PNG_LIBPNG_VER_STRING, error, on_png_error, on_png_warning);
  if (!png) {
    std::snprintf(error->message, sizeof error->message, "libpng could not start (out of memory)");
    return false;
  }
  png_infop info = png_create_info_struct(png);
  if (!info) {
    png_destroy_write_struct(&png, nullptr);
    std::snprintf(error->message, sizeof error->message, "libpng could not start (out of memory)");
    return false;
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return false;
  }
  png_init_io(png, file);
  png_set_IHDR(png, info, png_uint_32(grid.width), png_uint_32(grid.height), 8, PNG_COLOR_TYPE_RGB,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int64_t y = 0; y < grid.height; ++y) {
    fill_row(y, row, grid);
    png_write_row(png, row);
  }
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return true;
}

Grid make_grid(const std::vector<Heatmap>& maps,
               const HeatmapGridOptions& options,
               const char* op) {
  const auto fail = [op](const std::string& what) {
    throw ValueError("[" + std::string(op) + "] " + what);
  };
  if (maps.empty()) fail("expected at least one heatmap; got none.");
  for (size_t k = 0; k < maps.size(); ++k) {
    const Heatmap& m = maps[k];
    const std::string shape =
        std::string("(") + std::to_string(m.rows) + ", " + std::to_string(m.cols) + ")";
    if (m.rows < 1 || m.cols < 1) {
      fail("heatmap " + std::to_string(k) + " has shape " + shape + "; both sides must be >= 1.");
    }
    const size_t n = m.values.size();
    if (n % size_t(m.rows) != 0 || n / size_t(m.rows) != size_t(m.cols)) {
      fail("heatmap " + std::to_string(k) + " has shape " + shape + " but " + std::to_string(n) +
           " values; expected rows * cols.");
    }
    if (m.rows != maps[0].rows || m.cols != maps[0].cols) {
      fail("heatmap " + std::to_string(k) + " has shape " + shape + " but heatmap 0 has (" +
           std::to_string(maps[0].rows) + ", " + std::to_string(maps[0].cols) +
           "); all cells of a grid must have one shape.");
    }
  }
  if (options.grid_cols < 0 || options.cell_pixels < 0 || options.gap_pixels < 0) {
    fail("grid_cols, cell_pixels and gap_pixels must be >= 0; got " +
         std::to_string(options.grid_cols) + ", " + std::to_string(options.cell_pixels) + ", " +
         std::to_string(options.gap_pixels) + ".");
  }

  Grid g;
  g.maps = &maps;
  g.rows = maps[0].rows;
  g.cols = maps[0].cols;
  const int64_t n = int64_t(maps.size());
  g.grid_cols = options.grid_cols > 0 ? std::min(options.grid_cols, n)
                                      : int64_t(std::ceil(std::sqrt(double(n)) - 1e-9));
  g.grid_rows = (n + g.grid_cols - 1) / g.grid_cols;
  g.block = options.cell_pixels > 0 ? options.cell_pixels
                                    : std::max<int64_t>(1, 128 / std::max(g.rows, g.cols));
  g.gap = options.gap_pixels;
  // In doubles first: the exact products below could overflow int64.
  const double width =
      double(g.gap) + double(g.grid_cols) * (double(g.cols) * double(g.block) + double(g.gap));
  const double height =
      double(g.gap) + double(g.grid_rows) * (double(g.rows) * double(g.block) + double(g.gap));
  if (width > double(kMaxSide) || height > double(kMaxSide) ||
      width * height > double(kMaxPixels)) {
    fail("the image would be " + std::to_string(int64_t(std::min(width, 9e18))) + " x " +
         std::to_string(int64_t(std::min(height, 9e18))) +
         " pixels; the limit is 1000000 per side and 2^30 in all. Hint: lower cell_pixels or "
         "draw fewer or smaller maps.");
  }
  g.width = int64_t(width);
  g.height = int64_t(height);

  g.offset.assign(maps.size(), 0.0);
  g.scale.assign(maps.size(), 1.0);
  if (options.normalize_each) {
    for (size_t k = 0; k < maps.size(); ++k) {
      double lo = INFINITY, hi = -INFINITY;
      for (float v : maps[k].values) {
        if (!std::isfinite(v)) continue;
        lo = std::min(lo, double(v));
        hi = std::max(hi, double(v));
      }
      g.offset[k] = lo < hi ? lo : 0.0;
      g.scale[k] = lo < hi ? 1.0 / (hi - lo) : 0.0;
    }
  }
  return g;
}

}  // namespace

std::array<uint8_t, 3> colormap(float v) {
  const float t = std::isnan(v) ? 0.0f : std::clamp(v, 0.0f, 1.0f) * 8.0f;
  const int i = std::min(int(t), 7);
  const float f = t - float(i);
  std::array<uint8_t, 3> rgb{};
  for (int c = 0; c < 3; ++c) {
    const float a = kViridis[i][c], b = kViridis[i + 1][c];
    rgb[size_t(c)] = uint8_t(std::lround(a + (b - a) * f));
  }
  return rgb;
}

void write_heatmap_grid_png(const std::filesystem::path& path,
                            const std::vector<Heatmap>& maps,
                            const HeatmapGridOptions& options) {
  const Grid grid = make_grid(maps, options, "write_heatmap_grid_png");
  std::vector<uint8_t> row(size_t(grid.width) * 3);
  std::filesystem::path tmp = path;
  tmp += ".tmp";
  const auto fail = [&](const std::string& what) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw IOError("[write_heatmap_grid_png] " + path.string() + ": " + what);
  };

  FILE* file = std::fopen(tmp.c_str(), "wb");
  if (!file) fail("cannot open " + tmp.string() + " for writing: " + errno_text(errno));
  PngError error;
  errno = 0;
  bool ok = write_png_rgb(file, grid, row.data(), &error);
  const int write_errno = errno;  // libpng's "Write Error" does not say why
  std::string what;
  if (!ok) {
    what = "cannot write " + tmp.string() + ": " + error.message;
    if (write_errno) what += std::string(" (") + std::strerror(write_errno) + ")";
  }
  // Write errors may surface only when buffered bytes reach the disk.
  if (ok && std::fflush(file) != 0) {
    ok = false;
    what = "cannot write " + tmp.string() + ": " + errno_text(errno);
  }
  if (std::fclose(file) != 0 && ok) {
    ok = false;
    what = "cannot close " + tmp.string() + ": " + errno_text(errno);
  }
  if (!ok) fail(what);
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) fail("cannot rename " + tmp.string() + " over it: " + ec.message());
}

namespace {

std::string hex_color(float v) {
  const auto rgb = colormap(v);
  return format("#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

// The SVG layout: each map is a panel of a title line, a row of column
// labels, then its cells with the row labels at their left.
struct SvgLayout {
  int64_t block = 0;   // pixels per entry
  int64_t label = 0;   // width of a row label, height of a column label
  int64_t title = 18;  // height of a map title
  int64_t top = 0;     // height of the figure's title
  int64_t gap = 0;
  int64_t panel_w = 0, panel_h = 0;
  int64_t bar_x = 0;  // the colour bar's left edge
  int64_t width = 0, height = 0;
};

SvgLayout svg_layout(const Grid& g, const HeatmapLabels& labels, const HeatmapGridOptions& o) {
  SvgLayout l;
  l.block = o.cell_pixels > 0 ? o.cell_pixels
                              : std::clamp<int64_t>(448 / std::max(g.rows, g.cols), 2, 14);
  l.label = labels.row_labels.empty() && labels.col_labels.empty() ? 0 : 14;
  l.gap = std::max<int64_t>(g.gap, 12);
  l.panel_w = l.label + g.cols * l.block;
  l.panel_h = l.title + l.label + g.rows * l.block;
  l.top = labels.title.empty() ? 0 : 28;
  l.bar_x = l.gap + g.grid_cols * (l.panel_w + l.gap);
  l.width = l.bar_x + 60;
  l.height = std::max<int64_t>(l.top + l.gap + g.grid_rows * (l.panel_h + l.gap), l.top + 140);
  return l;
}

void svg_text(std::string& out, double x, double y, const std::string& text, const char* extra) {
  out += format("<text x=\"%.1f\" y=\"%.1f\" %s>", x, y, extra) + xml_escape(text) + "</text>\n";
}

}  // namespace

std::string heatmap_grid_svg(const std::vector<Heatmap>& maps,
                             const HeatmapLabels& labels,
                             const HeatmapGridOptions& options) {
  const Grid g = make_grid(maps, options, "heatmap_grid_svg");
  const SvgLayout l = svg_layout(g, labels, options);
  std::string out = format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%lld\" height=\"%lld\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n",
      static_cast<long long>(l.width), static_cast<long long>(l.height));
  out += format("<rect width=\"%lld\" height=\"%lld\" fill=\"white\"/>\n",
                static_cast<long long>(l.width), static_cast<long long>(l.height));
  if (!labels.title.empty()) svg_text(out, double(l.gap), 18, labels.title, "font-size=\"14\"");
  for (size_t k = 0; k < maps.size(); ++k) {
    const int64_t px = l.gap + int64_t(k) % g.grid_cols * (l.panel_w + l.gap);
    const int64_t py = l.top + l.gap + int64_t(k) / g.grid_cols * (l.panel_h + l.gap);
    const int64_t cx = px + l.label, cy = py + l.title + l.label;
    if (k < labels.map_titles.size()) {
      svg_text(out, double(cx), double(py + 12), labels.map_titles[k], "");
    }
    for (int64_t j = 0; j < g.cols && size_t(j) < labels.col_labels.size(); ++j) {
      svg_text(out, double(cx) + (double(j) + 0.5) * double(l.block), double(cy - 3),
               labels.col_labels[size_t(j)], "text-anchor=\"middle\" font-family=\"monospace\"");
    }
    for (int64_t i = 0; i < g.rows && size_t(i) < labels.row_labels.size(); ++i) {
      svg_text(out, double(cx - 3), double(cy) + (double(i) + 0.8) * double(l.block),
               labels.row_labels[size_t(i)], "text-anchor=\"end\" font-family=\"monospace\"");
    }
    const std::vector<float>& values = maps[k].values;
    for (int64_t i = 0; i < g.rows; ++i) {
      for (int64_t j = 0; j < g.cols; ++j) {
        const float v = float((double(values[size_t(i * g.cols + j)]) - g.offset[k]) * g.scale[k]);
        out += format("<rect x=\"%lld\" y=\"%lld\" width=\"%lld\" height=\"%lld\" fill=\"",
                      static_cast<long long>(cx + j * l.block),
                      static_cast<long long>(cy + i * l.block), static_cast<long long>(l.block),
                      static_cast<long long>(l.block)) +
               hex_color(v) + "\"/>\n";
      }
    }
  }
  // The colour bar: 0 at the bottom, 1 at the top.
  constexpr int kSteps = 20;
  const int64_t bar_top = l.top + l.gap + 10, step_h = 5;
  for (int s = 0; s < kSteps; ++s) {
    out += format("<rect x=\"%lld\" y=\"%lld\" width=\"12\" height=\"%lld\" fill=\"",
                  static_cast<long long>(l.bar_x), static_cast<long long>(bar_top + s * step_h),
                  static_cast<long long>(step_h)) +
           hex_color(1.0f - (float(s) + 0.5f) / kSteps) + "\"/>\n";
  }
  const bool probabilities = !options.normalize_each;
  svg_text(out, double(l.bar_x + 16), double(bar_top + 8), probabilities ? "1" : "max", "");
  svg_text(out, double(l.bar_x + 16), double(bar_top + kSteps * step_h),
           probabilities ? "0" : "min", "");
  return out + "</svg>\n";
}

void write_heatmap_grid_svg(const std::filesystem::path& path,
                            const std::vector<Heatmap>& maps,
                            const HeatmapLabels& labels,
                            const HeatmapGridOptions& options) {
  io::write_file_atomically(path.string(), heatmap_grid_svg(maps, labels, options),
                            "write_heatmap_grid_svg");
}

}  // namespace stride::app
