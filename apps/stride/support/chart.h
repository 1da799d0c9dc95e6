// SVG line charts for training curves (`stride train` writes loss.svg: train
// and val loss against step). The output is one standalone SVG document that
// browsers and image viewers open directly; no script, no external fonts.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace stride::app {

// One curve: the points (x[i], y[i]). x and y must have the same length.
// Points with a non-finite coordinate (or y <= 0 on a log axis) are skipped
// and the line joins their neighbours, so a series stays one <polyline>.
// Coordinates beyond +-1e300 count as non-finite, so that axis spans never
// overflow. An empty color takes the next colour of a fixed palette.
struct Series {
  std::string name;
  std::vector<double> x, y;
  std::string color;
};

struct ChartOptions {
  std::string title;
  std::string x_label = "step";
  std::string y_label = "loss";
  int width = 800;  // pixels, at least 200 x 150
  int height = 450;
  bool log_y = false;  // ticks at 1, 2, 5 x 10^k (or decades when the range is wide)
};

// The chart as SVG text: axes with tick labels at 1/2/5 x 10^k, grid lines, a
// legend naming every series (empty ones too), and one <polyline> per series
// that has at least one plottable point (a lone point also gets a <circle>).
// Always a valid chart: no series, no plottable points or a flat series give
// a default or padded range, never NaN. Text is XML-escaped. Throws
// ValueError when a series' x and y differ in length or the size is too small.
std::string line_chart_svg(const std::vector<Series>& series, const ChartOptions& options = {});

// Writes line_chart_svg() to `path` atomically: the text goes to
// `path` + ".tmp", which is then renamed over `path`, so a reader never sees
// a half-written chart. Throws IOError naming the path when it cannot write.
void write_line_chart_svg(const std::filesystem::path& path,
                          const std::vector<Series>& series,
                          const ChartOptions& options = {});

// Tick positions for an axis over [lo, hi]: about `target_count` multiples of
// a step that is 1, 2 or 5 x 10^k, from the largest multiple <= lo to the
// smallest >= hi (the chart widens a linear axis to them). Needs finite
// lo < hi and target_count >= 1.
std::vector<double> nice_ticks(double lo, double hi, int target_count);

}  // namespace stride::app
