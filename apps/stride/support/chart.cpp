// SVG line charts (chart.h).
#include "support/chart.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string_view>
#include <system_error>

#include "stride/error.h"
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

// XML 1.0 forbids most control characters even when escaped; they are dropped.
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

std::string errno_text(int err) {
  return err ? std::strerror(err) : "unknown error";
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

std::string line_chart_svg(const std::vector<Series>& series, const ChartOptions& options) {
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
  const auto keep = [&](double x, double y) {
    return plottable(x) && plottable(y) && (!options.log_y || y > 0.0);
  };

  double x_lo = INFINITY, x_hi = -INFINITY, y_lo = INFINITY, y_hi = -INFINITY;
  for (const Series& s : series) {
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (!keep(s.x[i], s.y[i])) continue;
      x_lo = std::min(x_lo, s.x[i]);
      x_hi = std::max(x_hi, s.x[i]);
      y_lo = std::min(y_lo, s.y[i]);
      y_hi = std::max(y_hi, s.y[i]);
    }
  }
  if (x_lo > x_hi) {  // nothing to plot: an empty chart over a default range
    x_lo = 0.0;
    x_hi = 1.0;
    y_lo = options.log_y ? 1.0 : 0.0;
    y_hi = options.log_y ? 10.0 : 1.0;
  }

  const double width = options.width, height = options.height;
  const double top = options.title.empty() ? 16.0 : 40.0;
  const double bottom = 48.0, right = 16.0;
  const double plot_h = height - top - bottom;
  const Axis y_axis = options.log_y ? log_axis(y_lo, y_hi, std::max(2, int(plot_h / 50)))
                                    : linear_axis(y_lo, y_hi, std::max(2, int(plot_h / 50)));
  size_t label_chars = 1;
  for (const Tick& t : y_axis.ticks) label_chars = std::max(label_chars, t.label.size());
  const double left = std::clamp(36.0 + kCharWidth * double(label_chars), 56.0, width / 3.0);
  const double plot_w = width - left - right;
  const Axis x_axis = linear_axis(x_lo, x_hi, std::max(2, int(plot_w / 90)));

  const auto px = [&](double x) { return left + plot_w * x_axis.fraction(x); };
  const auto py = [&](double y) { return top + plot_h * (1.0 - y_axis.fraction(y)); };

  std::string svg;
  svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(options.width) +
         "\" height=\"" + std::to_string(options.height) + "\" viewBox=\"0 0 " +
         std::to_string(options.width) + " " + std::to_string(options.height) +
         "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  if (!options.title.empty()) {
    svg += "<text x=\"" + coord(width / 2) +
           "\" y=\"24\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">" +
           xml_escape(options.title) + "</text>\n";
  }

  svg += "<g stroke=\"#e6e6e6\" stroke-width=\"1\">\n";
  for (const Tick& t : x_axis.ticks) {
    const std::string x = coord(px(t.value));
    svg += "<line x1=\"" + x + "\" y1=\"" + coord(top) + "\" x2=\"" + x + "\" y2=\"" +
           coord(top + plot_h) + "\"/>\n";
  }
  for (const Tick& t : y_axis.ticks) {
    const std::string y = coord(py(t.value));
    svg += "<line x1=\"" + coord(left) + "\" y1=\"" + y + "\" x2=\"" + coord(left + plot_w) +
           "\" y2=\"" + y + "\"/>\n";
  }
  svg += "</g>\n";
  svg += "<rect x=\"" + coord(left) + "\" y=\"" + coord(top) + "\" width=\"" + coord(plot_w) +
         "\" height=\"" + coord(plot_h) + "\" fill=\"none\" stroke=\"#333\"/>\n";

  svg += "<g font-size=\"11\" fill=\"#333\" text-anchor=\"middle\">\n";
  for (const Tick& t : x_axis.ticks) {
    svg += "<text class=\"tick x\" x=\"" + coord(px(t.value)) + "\" y=\"" +
           coord(top + plot_h + 16) + "\">" + xml_escape(t.label) + "</text>\n";
  }
  svg += "</g>\n<g font-size=\"11\" fill=\"#333\" text-anchor=\"end\">\n";
  for (const Tick& t : y_axis.ticks) {
    svg += "<text class=\"tick y\" x=\"" + coord(left - 6) + "\" y=\"" + coord(py(t.value) + 4) +
           "\">" + xml_escape(t.label) + "</text>\n";
  }
  svg += "</g>\n";
  svg += "<text x=\"" + coord(left + plot_w / 2) + "\" y=\"" + coord(height - 10) +
         "\" text-anchor=\"middle\">" + xml_escape(options.x_label) + "</text>\n";
  const std::string y_label_x = "16", y_label_y = coord(top + plot_h / 2);
  svg += "<text x=\"" + y_label_x + "\" y=\"" + y_label_y + "\" text-anchor=\"middle\" " +
         "transform=\"rotate(-90 " + y_label_x + " " + y_label_y + ")\">" +
         xml_escape(options.y_label) + "</text>\n";

  for (size_t i = 0; i < series.size(); ++i) {
    const Series& s = series[i];
    const std::string color =
        xml_escape(s.color.empty() ? kPalette[i % std::size(kPalette)] : s.color);
    std::string points;
    size_t count = 0;
    for (size_t j = 0; j < s.x.size(); ++j) {
      if (!keep(s.x[j], s.y[j])) continue;
      if (count++) points += ' ';
      points += coord(px(s.x[j])) + "," + coord(py(s.y[j]));
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

  if (!series.empty()) {
    size_t name_chars = 1;
    for (const Series& s : series) name_chars = std::max(name_chars, s.name.size());
    const double box_w = 42.0 + kCharWidth * double(name_chars);
    const double box_h = 8.0 + 18.0 * double(series.size());
    const double bx = left + plot_w - box_w - 8.0, by = top + 8.0;
    svg += "<g class=\"legend\">\n<rect x=\"" + coord(bx) + "\" y=\"" + coord(by) + "\" width=\"" +
           coord(box_w) + "\" height=\"" + coord(box_h) +
           "\" fill=\"white\" fill-opacity=\"0.85\" stroke=\"#ccc\"/>\n";
    for (size_t i = 0; i < series.size(); ++i) {
      const Series& s = series[i];
      const std::string color =
          xml_escape(s.color.empty() ? kPalette[i % std::size(kPalette)] : s.color);
      const double cy = by + 13.0 + 18.0 * double(i);
      svg += "<line x1=\"" + coord(bx + 8) + "\" y1=\"" + coord(cy) + "\" x2=\"" + coord(bx + 30) +
             "\" y2=\"" + coord(cy) + "\" stroke=\"" + color + "\" stroke-width=\"2\"/>\n";
      svg += "<text x=\"" + coord(bx + 36) + "\" y=\"" + coord(cy + 4) + "\">" +
             xml_escape(s.name) + "</text>\n";
    }
    svg += "</g>\n";
  }
  svg += "</svg>\n";
  return svg;
}

void write_line_chart_svg(const std::filesystem::path& path,
                          const std::vector<Series>& series,
                          const ChartOptions& options) {
  const std::string svg = line_chart_svg(series, options);
  std::filesystem::path tmp = path;
  tmp += ".tmp";
  const auto fail = [&](const std::string& what) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw IOError("[write_line_chart_svg] " + path.string() + ": " + what);
  };
  {
    errno = 0;
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail("cannot open " + tmp.string() + " for writing: " + errno_text(errno));
    errno = 0;
    out.write(svg.data(), std::streamsize(svg.size()));
    out.close();
    if (!out) fail("cannot write " + tmp.string() + ": " + errno_text(errno));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) fail("cannot rename " + tmp.string() + " over it: " + ec.message());
}

}  // namespace stride::app
