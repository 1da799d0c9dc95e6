// SVG line charts (chart.h).
#include "support/chart.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <string_view>

#include "stride/error.h"
#include "stride/io.h"
#include "stride/plot.h"
#include "support/text.h"

namespace stride::app {

namespace {

constexpr double kMaxMagnitude = 1e300;
constexpr std::string_view kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                         "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
constexpr double kCharWidth = 7.0;  // a rough width of one 12px sans-serif character

std::string coord(double v) {
  return format("%.2f", v);
}

bool plottable(double v) {
  return std::isfinite(v) && std::abs(v) <= kMaxMagnitude;
}

// The smallest of 1, 2, 5 x 10^k that is >= raw (raw > 0).
double nice_step(double raw) {
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / magnitude;
  const double m = f <= 1.0 + 1e-9 ? 1.0 : f <= 2.0 + 1e-9 ? 2.0 : f <= 5.0 + 1e-9 ? 5.0 : 10.0;
  return m * magnitude;
}

// Fixed-point with just enough decimals for `step`; exponent form where fixed
// would be too long.
std::string tick_label(double v, double step) {
  if (std::abs(v) < step * 1e-6) v = 0.0;  // no "-0.0" from rounding
  const double mag = std::max(std::abs(v), step);
  if (step >= 1e-6 && mag < 1e9) {
    const int decimals = std::max(0, -int(std::floor(std::log10(step) + 1e-9)));
    return format("%.*f", decimals, v);
  }
  const int digits = std::clamp(
      int(std::floor(std::log10(mag))) - int(std::floor(std::log10(step) + 1e-9)), 0, 16);
  return format("%.*e", digits, v);
}

// Widens [lo, hi] when it is empty or too narrow to tell apart in doubles,
// so that every later division is by a positive span.
void widen_degenerate(double& lo, double& hi) {
  const double mag = std::max(std::abs(lo), std::abs(hi));
  if (hi - lo > mag * 1e-9 && hi - lo > 1e-200) return;
  const double pad = mag > 1e-200 ? mag * 0.1 : 1.0;
  lo -= pad;
  hi += pad;
}

struct Tick {
  double value;  // in data units
  std::string label;
};

// One axis: [lo, hi] in axis units (log10 of the data when log).
struct Axis {
  double lo = 0.0, hi = 1.0;
  bool log = false;
  std::vector<Tick> ticks;

  double fraction(double v) const { return ((log ? std::log10(v) : v) - lo) / (hi - lo); }
};

Axis linear_axis(double lo, double hi, int target) {
  widen_degenerate(lo, hi);
  Axis axis;
  const std::vector<double> values = nice_ticks(lo, hi, target);
  const double step = values[1] - values[0];
  for (double v : values) axis.ticks.push_back({v, tick_label(v, step)});
  axis.lo = values.front();
  axis.hi = values.back();
  return axis;
}

// Ticks at 1, 2, 5 x 10^k inside the range; only decades (thinned) when that
// gives too many, and linear nice ticks when the range is under a factor of 2
// and holds fewer than two of them.
Axis log_axis(double lo_value, double hi_value, int target) {
  Axis axis;
  axis.log = true;
  double lo = std::log10(lo_value), hi = std::log10(hi_value);
  if (hi - lo < 1e-6) {
    lo -= 0.1;
    hi += 0.1;
  }
  const double pad = (hi - lo) * 0.03;
  axis.lo = lo - pad;
  axis.hi = hi + pad;
  const auto inside = [&](double v) {
    const double l = std::log10(v);
    return l >= axis.lo - 1e-12 && l <= axis.hi + 1e-12;
  };
  std::vector<double> values;
  const int first = int(std::floor(axis.lo)), last = int(std::ceil(axis.hi));
  for (int e = first; e <= last; ++e) {
    for (double m : {1.0, 2.0, 5.0}) {
      const double v = m * std::pow(10.0, e);
      if (inside(v)) values.push_back(v);
    }
  }
  if (int(values.size()) > 2 * target) {
    const int every = std::max(1, (last - first + target - 1) / target);
    values.clear();
    for (int e = first; e <= last; ++e) {
      if (e % every == 0 && inside(std::pow(10.0, e))) values.push_back(std::pow(10.0, e));
    }
  }
  if (values.size() >= 2) {
    for (double v : values) axis.ticks.push_back({v, format("%g", v)});
    return axis;
  }
  const double lo_linear = std::pow(10.0, axis.lo), hi_linear = std::pow(10.0, axis.hi);
  const std::vector<double> linear = nice_ticks(lo_linear, hi_linear, std::max(target, 4));
  const double step = linear[1] - linear[0];
  for (double v : linear) {
    if (v > 0 && inside(v)) axis.ticks.push_back({v, tick_label(v, step)});
  }
  return axis;
}

}  // namespace

std::vector<double> nice_ticks(double lo, double hi, int target_count) {
  if (!(std::isfinite(lo) && std::isfinite(hi) && lo < hi && std::isfinite(hi - lo)) ||
      target_count < 1) {
    throw ValueError(
        format("[nice_ticks] expected finite lo < hi and target_count >= 1; got lo "
               "%g, hi %g, target_count %d.",
               lo, hi, target_count));
  }
  const double step = nice_step((hi - lo) / target_count);
  // The tolerance keeps 0.3 / 0.1 = 2.9999999999999996 from adding a tick below 0.3.
  const double first = std::floor(lo / step + 1e-9);
  const double last = std::ceil(hi / step - 1e-9);
  std::vector<double> ticks;
  for (double k = first; k <= last; k += 1.0) ticks.push_back(k * step);
  if (ticks.size() < 2) ticks.push_back((last + 1.0) * step);
  return ticks;
}

namespace {

void check_chart_args(const std::vector<Series>& series, const ChartOptions& options) {
  if (options.width < 200 || options.height < 150) {
    throw ValueError(
        format("[line_chart_svg] the chart must be at least 200 x 150 pixels; got "
               "%d x %d.",
               options.width, options.height));
  }
  for (const Series& s : series) {
    if (s.x.size() != s.y.size()) {
      throw ValueError("[line_chart_svg] series \"" + s.name + "\" has " +
                       std::to_string(s.x.size()) + " x values but " + std::to_string(s.y.size()) +
                       " y values; they must pair up.");
    }
  }
}

// Whether a point is drawn: finite, and positive on a log y axis.
bool drawable(double x, double y, const ChartOptions& options) {
  return plottable(x) && plottable(y) && (!options.log_y || y > 0.0);
}

struct DataRange {
  double x_lo = INFINITY, x_hi = -INFINITY, y_lo = INFINITY, y_hi = -INFINITY;
};

DataRange data_range(const std::vector<Series>& series, const ChartOptions& options) {
  DataRange r;
  for (const Series& s : series) {
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (!drawable(s.x[i], s.y[i], options)) continue;
      r.x_lo = std::min(r.x_lo, s.x[i]);
      r.x_hi = std::max(r.x_hi, s.x[i]);
      r.y_lo = std::min(r.y_lo, s.y[i]);
      r.y_hi = std::max(r.y_hi, s.y[i]);
    }
  }
  if (r.x_lo > r.x_hi) {  // nothing to plot: an empty chart over a default range
    r = {0.0, 1.0, options.log_y ? 1.0 : 0.0, options.log_y ? 10.0 : 1.0};
  }
  return r;
}

// The plot area inside the margins, its axes, and data -> pixel mappings.
struct Frame {
  double width, height, left, top, plot_w, plot_h;
  Axis x_axis, y_axis;
  double px(double x) const { return left + plot_w * x_axis.fraction(x); }
  double py(double y) const { return top + plot_h * (1.0 - y_axis.fraction(y)); }
};

Frame layout_frame(const DataRange& r, const ChartOptions& options) {
  Frame f;
  f.width = options.width;
  f.height = options.height;
  f.top = options.title.empty() ? 16.0 : 40.0;
  const double bottom = 48.0, right = 16.0;
  f.plot_h = f.height - f.top - bottom;
  const int y_ticks = std::max(2, int(f.plot_h / 50));
  f.y_axis =
      options.log_y ? log_axis(r.y_lo, r.y_hi, y_ticks) : linear_axis(r.y_lo, r.y_hi, y_ticks);
  // The left margin fits the longest y tick label.
  size_t label_chars = 1;
  for (const Tick& t : f.y_axis.ticks) label_chars = std::max(label_chars, t.label.size());
  f.left = std::clamp(36.0 + kCharWidth * double(label_chars), 56.0, f.width / 3.0);
  f.plot_w = f.width - f.left - right;
  f.x_axis = linear_axis(r.x_lo, r.x_hi, std::max(2, int(f.plot_w / 90)));
  return f;
}

std::string svg_header(const ChartOptions& options, const Frame& f) {
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                    std::to_string(options.width) + "\" height=\"" +
                    std::to_string(options.height) + "\" viewBox=\"0 0 " +
                    std::to_string(options.width) + " " + std::to_string(options.height) +
                    "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  if (!options.title.empty()) {
    svg += "<text x=\"" + coord(f.width / 2) +
           "\" y=\"24\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">" +
           plot::xml_escape(options.title) + "</text>\n";
  }
  return svg;
}

// Grid lines at the ticks and the plot's border.
std::string svg_grid(const Frame& f) {
  std::string svg = "<g stroke=\"#e6e6e6\" stroke-width=\"1\">\n";
  for (const Tick& t : f.x_axis.ticks) {
    const std::string x = coord(f.px(t.value));
    svg += "<line x1=\"" + x + "\" y1=\"" + coord(f.top) + "\" x2=\"" + x + "\" y2=\"" +
           coord(f.top + f.plot_h) + "\"/>\n";
  }
  for (const Tick& t : f.y_axis.ticks) {
    const std::string y = coord(f.py(t.value));
    svg += "<line x1=\"" + coord(f.left) + "\" y1=\"" + y + "\" x2=\"" + coord(f.left + f.plot_w) +
           "\" y2=\"" + y + "\"/>\n";
  }
  svg += "</g>\n";
  svg += "<rect x=\"" + coord(f.left) + "\" y=\"" + coord(f.top) + "\" width=\"" + coord(f.plot_w) +
         "\" height=\"" + coord(f.plot_h) + "\" fill=\"none\" stroke=\"#333\"/>\n";
  return svg;
}

// Tick labels and the two axis labels.
std::string svg_axis_labels(const ChartOptions& options, const Frame& f) {
  std::string svg = "<g font-size=\"11\" fill=\"#333\" text-anchor=\"middle\">\n";
  for (const Tick& t : f.x_axis.ticks) {
    svg += "<text class=\"tick x\" x=\"" + coord(f.px(t.value)) + "\" y=\"" +
           coord(f.top + f.plot_h + 16) + "\">" + plot::xml_escape(t.label) + "</text>\n";
  }
  svg += "</g>\n<g font-size=\"11\" fill=\"#333\" text-anchor=\"end\">\n";
  for (const Tick& t : f.y_axis.ticks) {
    svg += "<text class=\"tick y\" x=\"" + coord(f.left - 6) + "\" y=\"" +
           coord(f.py(t.value) + 4) + "\">" + plot::xml_escape(t.label) + "</text>\n";
  }
  svg += "</g>\n";
  svg += "<text x=\"" + coord(f.left + f.plot_w / 2) + "\" y=\"" + coord(f.height - 10) +
         "\" text-anchor=\"middle\">" + plot::xml_escape(options.x_label) + "</text>\n";
  const std::string y_label_x = "16", y_label_y = coord(f.top + f.plot_h / 2);
  svg += "<text x=\"" + y_label_x + "\" y=\"" + y_label_y + "\" text-anchor=\"middle\" " +
         "transform=\"rotate(-90 " + y_label_x + " " + y_label_y + ")\">" +
         plot::xml_escape(options.y_label) + "</text>\n";
  return svg;
}

std::string series_color(const Series& s, size_t i) {
  return plot::xml_escape(s.color.empty() ? kPalette[i % std::size(kPalette)] : s.color);
}

// One polyline a series (a dot for a series of one point).
std::string svg_lines(const std::vector<Series>& series,
                      const ChartOptions& options,
                      const Frame& f) {
  std::string svg;
  for (size_t i = 0; i < series.size(); ++i) {
    const Series& s = series[i];
    const std::string color = series_color(s, i);
    std::string points;
    size_t count = 0;
    for (size_t j = 0; j < s.x.size(); ++j) {
      if (!drawable(s.x[j], s.y[j], options)) continue;
      if (count++) points += ' ';
      points += coord(f.px(s.x[j])) + "," + coord(f.py(s.y[j]));
    }
    if (count == 0) continue;
    svg += "<polyline fill=\"none\" stroke=\"" + color +
           "\" stroke-width=\"1.5\" stroke-linejoin=\"round\" points=\"" + points + "\"/>\n";
    if (count == 1) {  // a polyline of one point draws nothing
      const size_t comma = points.find(',');
      svg += "<circle cx=\"" + points.substr(0, comma) + "\" cy=\"" + points.substr(comma + 1) +
             "\" r=\"3\" fill=\"" + color + "\"/>\n";
    }
  }
  return svg;
}

// The legend box in the plot's top right corner.
std::string svg_legend(const std::vector<Series>& series, const Frame& f) {
  if (series.empty()) return {};
  size_t name_chars = 1;
  for (const Series& s : series) name_chars = std::max(name_chars, s.name.size());
  const double box_w = 42.0 + kCharWidth * double(name_chars);
  const double box_h = 8.0 + 18.0 * double(series.size());
  const double bx = f.left + f.plot_w - box_w - 8.0, by = f.top + 8.0;
  std::string svg = "<g class=\"legend\">\n<rect x=\"" + coord(bx) + "\" y=\"" + coord(by) +
                    "\" width=\"" + coord(box_w) + "\" height=\"" + coord(box_h) +
                    "\" fill=\"white\" fill-opacity=\"0.85\" stroke=\"#ccc\"/>\n";
  for (size_t i = 0; i < series.size(); ++i) {
    const std::string color = series_color(series[i], i);
    const double cy = by + 13.0 + 18.0 * double(i);
    svg += "<line x1=\"" + coord(bx + 8) + "\" y1=\"" + coord(cy) + "\" x2=\"" + coord(bx + 30) +
           "\" y2=\"" + coord(cy) + "\" stroke=\"" + color + "\" stroke-width=\"2\"/>\n";
    svg += "<text x=\"" + coord(bx + 36) + "\" y=\"" + coord(cy + 4) + "\">" +
           plot::xml_escape(series[i].name) + "</text>\n";
  }
  return svg + "</g>\n";
}

}  // namespace

std::string line_chart_svg(const std::vector<Series>& series, const ChartOptions& options) {
  check_chart_args(series, options);
  const Frame f = layout_frame(data_range(series, options), options);
  return svg_header(options, f) + svg_grid(f) + svg_axis_labels(options, f) +
         svg_lines(series, options, f) + svg_legend(series, f) + "</svg>\n";
}

void write_line_chart_svg(const std::filesystem::path& path,
                          const std::vector<Series>& series,
                          const ChartOptions& options) {
  io::write_file_atomically(path.string(), line_chart_svg(series, options), "write_line_chart_svg");
}

}  // namespace stride::app
