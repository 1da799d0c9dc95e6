// PNG and SVG heatmap grids (include/stride/plot.h).
#include "stride/plot.h"

#include <png.h>

#include <algorithm>
#include <cmath>
#include <csetjmp>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <string_view>

#include "plot/bitmap_font.h"
#include "stride/error.h"
#include "stride/io.h"

namespace stride::plot {

namespace {

using Rgb = std::array<uint8_t, 3>;

// viridis (matplotlib's default map) sampled at i / 8; linear interpolation
// between these stays within a few levels of the full 256-entry table.
constexpr uint8_t kViridis[9][3] = {
    {68, 1, 84},    {71, 45, 123}, {59, 82, 139},  {44, 114, 142}, {33, 144, 140},
    {39, 173, 129}, {93, 200, 99}, {170, 220, 50}, {253, 231, 37},
};

constexpr int64_t kMaxSide = 1'000'000;  // libpng's default read limit per side
// A PNG is drawn whole in memory before it is encoded: at most 384 MiB of
// RGB, and the encoded bytes beside it.
constexpr int64_t kMaxPixels = int64_t(1) << 27;

// Text in a PNG: near black, darker than every colour of the colormap.
constexpr Rgb kInk = {24, 24, 24};

// The maps, checked, and what drawing them needs beyond a layout.
struct Grid {
  const std::vector<Heatmap>* maps = nullptr;
  std::vector<double> offset, scale;  // per map: drawn value = (v - offset) * scale
  int64_t rows = 0, cols = 0, grid_cols = 0, grid_rows = 0;
  int64_t block = 0, gap = 0;  // of the unlabelled PNG; see stride/plot.h
};

// Sides in doubles: callers check sizes whose exact products may overflow.
void check_image_size(double width, double height, const char* op) {
  if (width > double(kMaxSide) || height > double(kMaxSide) ||
      width * height > double(kMaxPixels)) {
    throw ValueError("[" + std::string(op) + "] the image would be " +
                     std::to_string(int64_t(std::min(width, 9e18))) + " x " +
                     std::to_string(int64_t(std::min(height, 9e18))) +
                     " pixels; the limit is 1000000 per side and 2^27 in all. Hint: lower "
                     "cell_pixels or draw fewer or smaller maps.");
  }
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
    // Appended piece by piece: GCC 12 misreads a chain of + here as an
    // overlapping copy (-Wrestrict).
    std::string shape = "(";
    shape.append(std::to_string(m.rows)).append(", ").append(std::to_string(m.cols)).append(")");
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
  // The unlabelled image's size, in doubles: the exact products could
  // overflow int64. Within the limits, every layout's arithmetic fits.
  check_image_size(
      double(g.gap) + double(g.grid_cols) * (double(g.cols) * double(g.block) + double(g.gap)),
      double(g.gap) + double(g.grid_rows) * (double(g.rows) * double(g.block) + double(g.gap)), op);

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

// The colormap's input for entry (i, j) of map k.
float drawn_value(const Grid& g, size_t k, int64_t i, int64_t j) {
  const double v = (*g.maps)[k].values[size_t(i * g.cols + j)];
  return float((v - g.offset[k]) * g.scale[k]);
}

// Where a grid image puts everything, for the PNGs and the SVG alike: each
// map is a panel of a title line, a row of column labels, then its cells
// with the row labels at their left; the colour bar is at the right. The
// unlabelled PNG is the case with none of these, only cells and gaps.
struct Layout {
  int64_t block = 0;              // pixels per entry
  int64_t row_label = 0;          // width of the row labels
  int64_t column_label = 0;       // height of the column labels
  bool vertical_columns = false;  // column labels written upwards, as they are wider than a column
  int64_t title = 0;              // height of a map title
  int64_t top = 0;                // height of the figure's title
  int64_t gap = 0;
  int64_t grid_cols = 1;
  int64_t panel_w = 0, panel_h = 0;
  int64_t bar_x = 0, bar_top = 0;  // the colour bar's top left corner
  static constexpr int64_t kBarWidth = 12, kBarHeight = 100;
  int64_t width = 0, height = 0;

  int64_t panel_x(size_t k) const { return gap + int64_t(k) % grid_cols * (panel_w + gap); }
  int64_t panel_y(size_t k) const { return top + gap + int64_t(k) / grid_cols * (panel_h + gap); }
  int64_t cells_x(size_t k) const { return panel_x(k) + row_label; }
  int64_t cells_y(size_t k) const { return panel_y(k) + title + column_label; }
  // The left edge of the colour bar's "0" and "1".
  int64_t tick_x() const { return bar_x + kBarWidth + 4; }
};

// write_heatmap_grid_png(path, maps, options)'s geometry (stride/plot.h).
Layout unlabelled_layout(const Grid& g) {
  Layout l;
  l.block = g.block;
  l.gap = g.gap;
  l.grid_cols = g.grid_cols;
  l.panel_w = g.cols * l.block;
  l.panel_h = g.rows * l.block;
  l.width = l.gap + g.grid_cols * (l.panel_w + l.gap);
  l.height = l.gap + g.grid_rows * (l.panel_h + l.gap);
  return l;
}

// From the left edge of the first glyph to the right edge of the last.
int64_t text_width(std::string_view text, int scale) {
  const size_t glyphs = glyphs_of(text).size();
  return glyphs == 0 ? 0 : (int64_t(glyphs) * kGlyphAdvance - 1) * scale;
}

int64_t widest(const std::vector<std::string>& texts) {
  int64_t most = 0;
  for (const std::string& t : texts) most = std::max(most, text_width(t, 1));
  return most;
}

// The labelled geometry: entries of 14 px (less for large maps) unless
// cell_pixels says otherwise, room for labels only where there are some,
// as wide as the widest row label and, where a column label is wider than
// its column, as tall as the widest column label written upwards.
Layout labelled_layout(const Grid& g, const HeatmapLabels& labels, const HeatmapGridOptions& o) {
  Layout l;
  l.block = o.cell_pixels > 0 ? o.cell_pixels
                              : std::clamp<int64_t>(448 / std::max(g.rows, g.cols), 2, 14);
  if (!labels.row_labels.empty() || !labels.col_labels.empty()) {
    constexpr int64_t kLabelRoom = 14;  // one glyph and its margins
    l.row_label = std::max(kLabelRoom, widest(labels.row_labels) + 6);
    const int64_t column_width = widest(labels.col_labels);
    l.vertical_columns = column_width > l.block;
    l.column_label = l.vertical_columns ? std::max(kLabelRoom, column_width + 6) : kLabelRoom;
  }
  l.title = 18;
  l.top = labels.title.empty() ? 0 : 28;
  l.gap = std::max<int64_t>(g.gap, 12);
  l.grid_cols = g.grid_cols;
  l.panel_w = l.row_label + g.cols * l.block;
  l.panel_h = l.title + l.column_label + g.rows * l.block;
  l.bar_x = l.gap + g.grid_cols * (l.panel_w + l.gap);
  l.bar_top = l.top + l.gap + 10;
  l.width = l.bar_x + 60;
  l.height = std::max<int64_t>(l.top + l.gap + g.grid_rows * (l.panel_h + l.gap), l.top + 140);
  return l;
}

const char* bar_top_tick(const HeatmapGridOptions& options) {
  return options.normalize_each ? "max" : "1";
}
const char* bar_bottom_tick(const HeatmapGridOptions& options) {
  return options.normalize_each ? "min" : "0";
}

// ---- PNG ----

// An 8-bit RGB image in memory, white until drawn on. Drawing outside it is
// clipped, so labels may run past the edge as they do in the SVG.
class Raster {
 public:
  Raster(int64_t width, int64_t height)
      : width_(width), height_(height), rgb_(size_t(width * height) * 3, 255) {}

  int64_t width() const { return width_; }
  int64_t height() const { return height_; }
  const uint8_t* row(int64_t y) const { return rgb_.data() + size_t(y * width_) * 3; }

  void fill(int64_t x, int64_t y, int64_t w, int64_t h, const Rgb& colour) {
    const int64_t x0 = std::max<int64_t>(x, 0), x1 = std::min(x + w, width_);
    const int64_t y0 = std::max<int64_t>(y, 0), y1 = std::min(y + h, height_);
    for (int64_t yy = y0; yy < y1; ++yy) {
      uint8_t* out = rgb_.data() + size_t(yy * width_ + x0) * 3;
      for (int64_t xx = x0; xx < x1; ++xx, out += 3) std::memcpy(out, colour.data(), 3);
    }
  }

 private:
  int64_t width_, height_;
  std::vector<uint8_t> rgb_;
};

void draw_cells(Raster& raster, const Grid& g, const Layout& l) {
  for (size_t k = 0; k < g.maps->size(); ++k) {
    for (int64_t i = 0; i < g.rows; ++i) {
      for (int64_t j = 0; j < g.cols; ++j) {
        raster.fill(l.cells_x(k) + j * l.block, l.cells_y(k) + i * l.block, l.block, l.block,
                    colormap(drawn_value(g, k, i, j)));
      }
    }
  }
}

// Draws text with its top left corner at (x, y), each font pixel a
// scale x scale square; the baseline is kGlyphHeight * scale below y.
void draw_text(Raster& raster, int64_t x, int64_t y, std::string_view text, int scale) {
  for (const Glyph& glyph : glyphs_of(text)) {
    for (size_t r = 0; r < glyph.size(); ++r) {
      for (int c = 0; c < kGlyphWidth; ++c) {
        if (glyph[r] >> (kGlyphWidth - 1 - c) & 1) {
          raster.fill(x + c * scale, y + int64_t(r) * scale, scale, scale, kInk);
        }
      }
    }
    x += kGlyphAdvance * scale;
  }
}

// Draws text upwards (turned a quarter left), its first glyph's bottom left
// corner at (x, y): what was a glyph's top row is its left column.
void draw_text_upwards(Raster& raster, int64_t x, int64_t y, std::string_view text) {
  for (const Glyph& glyph : glyphs_of(text)) {
    for (size_t r = 0; r < glyph.size(); ++r) {
      for (int c = 0; c < kGlyphWidth; ++c) {
        if (glyph[r] >> (kGlyphWidth - 1 - c) & 1)
          raster.fill(x + int64_t(r), y - c - 1, 1, 1, kInk);
      }
    }
    y -= kGlyphAdvance;
  }
}

// The figure's title at twice the size of the other text where it fits
// within the image's margins.
void draw_figure_title(Raster& raster, const Layout& l, const std::string& title) {
  const int scale = text_width(title, 2) <= l.width - 2 * l.gap ? 2 : 1;
  draw_text(raster, l.gap, (l.top - kGlyphHeight * scale) / 2, title, scale);
}

// Each map's title over its cells, the column labels centred over their
// columns just above the cells, and the row labels ending 3 px left of the
// cells, centred on their rows: where the SVG puts them.
void draw_panel_labels(
    Raster& raster, const Grid& g, const Layout& l, const HeatmapLabels& labels, size_t k) {
  const int64_t cx = l.cells_x(k), cy = l.cells_y(k);
  if (k < labels.map_titles.size()) {
    draw_text(raster, cx, l.panel_y(k) + (l.title - kGlyphHeight) / 2, labels.map_titles[k], 1);
  }
  for (int64_t j = 0; j < g.cols && size_t(j) < labels.col_labels.size(); ++j) {
    const std::string& text = labels.col_labels[size_t(j)];
    if (l.vertical_columns) {
      draw_text_upwards(raster, cx + j * l.block + (l.block - kGlyphHeight) / 2, cy - 3, text);
    } else {
      draw_text(raster, cx + j * l.block + (l.block - text_width(text, 1)) / 2,
                cy - 3 - kGlyphHeight, text, 1);
    }
  }
  for (int64_t i = 0; i < g.rows && size_t(i) < labels.row_labels.size(); ++i) {
    const std::string& text = labels.row_labels[size_t(i)];
    draw_text(raster, cx - 3 - text_width(text, 1), cy + i * l.block + (l.block - kGlyphHeight) / 2,
              text, 1);
  }
}

// The colormap from 1 at the top row to 0 at the bottom one, its ends
// marked at its right.
void draw_colour_bar(Raster& raster, const Layout& l, const HeatmapGridOptions& options) {
  for (int64_t y = 0; y < Layout::kBarHeight; ++y) {
    raster.fill(l.bar_x, l.bar_top + y, Layout::kBarWidth, 1,
                colormap(1.0f - float(y) / float(Layout::kBarHeight - 1)));
  }
  draw_text(raster, l.tick_x(), l.bar_top, bar_top_tick(options), 1);
  draw_text(raster, l.tick_x(), l.bar_top + Layout::kBarHeight - kGlyphHeight,
            bar_bottom_tick(options), 1);
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

// libpng's write callback: appends to the std::string behind the io pointer.
void append_png_bytes(png_structp png, png_bytep data, size_t n) {
  bool appended = false;
  try {
    static_cast<std::string*>(png_get_io_ptr(png))->append(reinterpret_cast<char*>(data), n);
    appended = true;
  } catch (const std::bad_alloc&) {
    // png_error longjmps; leaving a catch block that way would never free
    // the exception, so it is called after the block.
  }
  if (!appended) png_error(png, "out of memory for the encoded image");
}

void flush_nothing(png_structp) {}

// Encodes the raster as an 8-bit RGB PNG into `out`; false with `error` set
// when libpng fails. libpng reports errors by longjmp back to the setjmp
// below, which skips destructors, so no object with one may live in this
// frame: `out` belongs to the caller.
bool encode_png(const Raster& raster, std::string* out, PngError* error) {
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
  png_set_write_fn(png, out, append_png_bytes, flush_nothing);
  png_set_IHDR(png, info, png_uint_32(raster.width()), png_uint_32(raster.height()), 8,
               PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int64_t y = 0; y < raster.height(); ++y) png_write_row(png, raster.row(y));
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return true;
}

void write_png(const std::filesystem::path& path, const Raster& raster) {
  constexpr const char* kOp = "write_heatmap_grid_png";
  std::string bytes;
  PngError error;
  if (!encode_png(raster, &bytes, &error)) {
    throw IOError(std::string("[") + kOp + "] " + path.string() +
                  ": cannot encode the image as PNG: " + error.message);
  }
  io::write_file_atomically(path.string(), bytes, kOp);
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
  const Layout layout = unlabelled_layout(grid);
  Raster raster(layout.width, layout.height);
  draw_cells(raster, grid, layout);
  write_png(path, raster);
}

void write_heatmap_grid_png(const std::filesystem::path& path,
                            const std::vector<Heatmap>& maps,
                            const HeatmapLabels& labels,
                            const HeatmapGridOptions& options) {
  constexpr const char* kOp = "write_heatmap_grid_png";
  const Grid grid = make_grid(maps, options, kOp);
  const Layout layout = labelled_layout(grid, labels, options);
  check_image_size(double(layout.width), double(layout.height), kOp);
  Raster raster(layout.width, layout.height);
  draw_cells(raster, grid, layout);
  if (!labels.title.empty()) draw_figure_title(raster, layout, labels.title);
  for (size_t k = 0; k < maps.size(); ++k) draw_panel_labels(raster, grid, layout, labels, k);
  draw_colour_bar(raster, layout, options);
  write_png(path, raster);
}

namespace {

// printf into a string, for SVG's numbers and short elements (never longer
// than the buffer).
[[gnu::format(printf, 1, 2)]] std::string svg_printf(const char* fmt, ...) {
  char buf[256];
  va_list args;
  va_start(args, fmt);
  const int n = std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return std::string(buf, size_t(std::clamp(n, 0, int(sizeof buf) - 1)));
}

std::string hex_color(float v) {
  const auto rgb = colormap(v);
  return svg_printf("#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

void svg_text(std::string& out, double x, double y, const std::string& text, const char* extra) {
  out +=
      svg_printf("<text x=\"%.1f\" y=\"%.1f\" %s>", x, y, extra) + xml_escape(text) + "</text>\n";
}

}  // namespace

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

std::string heatmap_grid_svg(const std::vector<Heatmap>& maps,
                             const HeatmapLabels& labels,
                             const HeatmapGridOptions& options) {
  const Grid g = make_grid(maps, options, "heatmap_grid_svg");
  const Layout l = labelled_layout(g, labels, options);
  std::string out = svg_printf(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%lld\" height=\"%lld\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n",
      static_cast<long long>(l.width), static_cast<long long>(l.height));
  out += svg_printf("<rect width=\"%lld\" height=\"%lld\" fill=\"white\"/>\n",
                    static_cast<long long>(l.width), static_cast<long long>(l.height));
  if (!labels.title.empty()) svg_text(out, double(l.gap), 18, labels.title, "font-size=\"14\"");
  for (size_t k = 0; k < maps.size(); ++k) {
    const int64_t cx = l.cells_x(k), cy = l.cells_y(k);
    if (k < labels.map_titles.size()) {
      svg_text(out, double(cx), double(l.panel_y(k) + 12), labels.map_titles[k], "");
    }
    for (int64_t j = 0; j < g.cols && size_t(j) < labels.col_labels.size(); ++j) {
      const double x = double(cx) + (double(j) + 0.5) * double(l.block);
      if (l.vertical_columns) {
        const std::string turn = svg_printf(
            "font-family=\"monospace\" transform=\"rotate(-90 %.1f %.1f)\"", x + 4, double(cy - 3));
        svg_text(out, x + 4, double(cy - 3), labels.col_labels[size_t(j)], turn.c_str());
      } else {
        svg_text(out, x, double(cy - 3), labels.col_labels[size_t(j)],
                 "text-anchor=\"middle\" font-family=\"monospace\"");
      }
    }
    for (int64_t i = 0; i < g.rows && size_t(i) < labels.row_labels.size(); ++i) {
      svg_text(out, double(cx - 3), double(cy) + (double(i) + 0.8) * double(l.block),
               labels.row_labels[size_t(i)], "text-anchor=\"end\" font-family=\"monospace\"");
    }
    for (int64_t i = 0; i < g.rows; ++i) {
      for (int64_t j = 0; j < g.cols; ++j) {
        out += svg_printf("<rect x=\"%lld\" y=\"%lld\" width=\"%lld\" height=\"%lld\" fill=\"",
                          static_cast<long long>(cx + j * l.block),
                          static_cast<long long>(cy + i * l.block), static_cast<long long>(l.block),
                          static_cast<long long>(l.block)) +
               hex_color(drawn_value(g, k, i, j)) + "\"/>\n";
      }
    }
  }
  // The colour bar: 1 at the top, 0 at the bottom, in steps.
  constexpr int kSteps = 20;
  constexpr int64_t kStepHeight = Layout::kBarHeight / kSteps;
  for (int s = 0; s < kSteps; ++s) {
    out += svg_printf(
               "<rect x=\"%lld\" y=\"%lld\" width=\"%lld\" height=\"%lld\" fill=\"",
               static_cast<long long>(l.bar_x), static_cast<long long>(l.bar_top + s * kStepHeight),
               static_cast<long long>(Layout::kBarWidth), static_cast<long long>(kStepHeight)) +
           hex_color(1.0f - (float(s) + 0.5f) / kSteps) + "\"/>\n";
  }
  svg_text(out, double(l.tick_x()), double(l.bar_top + 8), bar_top_tick(options), "");
  svg_text(out, double(l.tick_x()), double(l.bar_top + Layout::kBarHeight),
           bar_bottom_tick(options), "");
  return out + "</svg>\n";
}

void write_heatmap_grid_svg(const std::filesystem::path& path,
                            const std::vector<Heatmap>& maps,
                            const HeatmapLabels& labels,
                            const HeatmapGridOptions& options) {
  io::write_file_atomically(path.string(), heatmap_grid_svg(maps, labels, options),
                            "write_heatmap_grid_svg");
}

}  // namespace stride::plot
