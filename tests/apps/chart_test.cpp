// SVG line charts: structure, escaping, nice ticks, degenerate data, atomic writes.
#include "support/chart.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "stride/error.h"
#include "support/temp_dir.h"

namespace stride::app {
namespace {

namespace fs = std::filesystem;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(uint8_t(c)));
  return s;
}

// d > 0 is 1, 2 or 5 x 10^k.
bool is_nice(double d) {
  const double m = d / std::pow(10.0, std::floor(std::log10(d)));
  for (double nice : {1.0, 2.0, 5.0, 10.0}) {
    if (std::abs(m - nice) < 1e-6) return true;
  }
  return false;
}

// The numbers in <text class="tick AXIS" ...>label</text>, in order.
std::vector<double> tick_labels(const std::string& svg, const std::string& axis) {
  std::vector<double> labels;
  const std::string open = "class=\"tick " + axis + "\"";
  for (size_t at = svg.find(open); at != std::string::npos; at = svg.find(open, at + 1)) {
    const size_t begin = svg.find('>', at) + 1;
    labels.push_back(std::stod(svg.substr(begin, svg.find('<', begin) - begin)));
  }
  return labels;
}

void expect_evenly_spaced_nice(const std::vector<double>& ticks) {
  ASSERT_GE(ticks.size(), 2u);
  const double step = ticks[1] - ticks[0];
  EXPECT_TRUE(is_nice(step)) << step;
  for (size_t i = 0; i < ticks.size(); ++i) {
    EXPECT_NEAR(ticks[i] / step, std::round(ticks[i] / step), 1e-6) << ticks[i];
    if (i > 0) {
      EXPECT_NEAR(ticks[i] - ticks[i - 1], step, step * 1e-6);
    }
  }
}

Series series(std::string name, std::vector<double> x, std::vector<double> y) {
  return {std::move(name), std::move(x), std::move(y), ""};
}

using stride::testing::TempDir;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(LineChart, IsAStandaloneSvgDocument) {
  ChartOptions options;
  options.width = 640;
  options.height = 360;
  const std::string svg = line_chart_svg({series("train", {1, 2, 3}, {3.0, 2.5, 2.1})}, options);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_NE(svg.find("viewBox=\"0 0 640 360\""), std::string::npos);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  EXPECT_EQ(count(svg, "<text"), count(svg, "</text>"));
  EXPECT_EQ(count(svg, "<g"), count(svg, "</g>"));
  EXPECT_NE(svg.find(">step</text>"), std::string::npos);
  EXPECT_NE(svg.find(">loss</text>"), std::string::npos);
}

TEST(LineChart, DrawsOnePolylinePerNonEmptySeriesAndNamesAllInTheLegend) {
  const std::vector<Series> data = {
      series("train", {1, 2, 3, 4}, {4.2, 3.1, 2.6, 2.2}),
      series("val", {2, 4}, {3.3, 2.4}),
      series("empty", {}, {}),
      series("all_nan", {1, 2}, {kNaN, kNaN}),
  };
  const std::string svg = line_chart_svg(data);
  EXPECT_EQ(count(svg, "<polyline"), 2u);
  for (const char* name : {">train<", ">val<", ">empty<", ">all_nan<"}) {
    EXPECT_NE(svg.find(name), std::string::npos) << name;
  }
  // Default colours differ between series; a given colour is used as is.
  EXPECT_NE(svg.find("stroke=\"#1f77b4\""), std::string::npos);
  EXPECT_NE(svg.find("stroke=\"#ff7f0e\""), std::string::npos);
  const std::string red = line_chart_svg({{"x", {1, 2}, {1, 2}, "red"}});
  EXPECT_NE(red.find("<polyline fill=\"none\" stroke=\"red\""), std::string::npos);
}

TEST(LineChart, EscapesText) {
  ChartOptions options;
  options.title = "loss <train> & \"val\" 'it'";
  options.y_label = "a<b";
  const std::string svg = line_chart_svg({series("x&y", {1, 2}, {1, 2})}, options);
  EXPECT_NE(svg.find("loss &lt;train&gt; &amp; &quot;val&quot; &apos;it&apos;"), std::string::npos);
  EXPECT_NE(svg.find(">a&lt;b</text>"), std::string::npos);
  EXPECT_NE(svg.find(">x&amp;y</text>"), std::string::npos);
  EXPECT_EQ(svg.find("<train>"), std::string::npos);
  EXPECT_EQ(svg.find("x&y"), std::string::npos);
}

TEST(LineChart, DegenerateInputsGiveAFiniteChart) {
  ChartOptions log;
  log.log_y = true;
  const std::vector<std::pair<std::vector<Series>, ChartOptions>> cases = {
      {{}, {}},
      {{series("empty", {}, {})}, {}},
      {{series("one", {5}, {2.5})}, {}},
      {{series("flat", {1, 2, 3}, {2, 2, 2})}, {}},
      {{series("zero", {0, 0}, {0, 0})}, {}},
      {{series("skipped", {kNaN, 1, kInf}, {1, kNaN, 2})}, {}},
      {{series("huge", {-1e300, 1e300}, {-1e300, 1e300})}, {}},
      {{series("tiny", {0, 1}, {1e-310, 2e-310})}, {}},
      {{series("flat", {1, 2, 3}, {2, 2, 2})}, log},
      {{series("nonpositive", {1, 2, 3}, {0, -1, 3})}, log},
      {{series("empty", {}, {})}, log},
  };
  for (const auto& [data, options] : cases) {
    const std::string svg = line_chart_svg(data, options);
    const std::string name = data.empty() ? "(none)" : data[0].name;
    const std::string text = lower(svg);
    EXPECT_EQ(text.find("nan"), std::string::npos) << name << "\n" << svg;
    EXPECT_EQ(text.find("inf"), std::string::npos) << name << "\n" << svg;
    EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n") << name;
    EXPECT_GE(count(svg, "class=\"tick x\""), 2u) << name;
    EXPECT_GE(count(svg, "class=\"tick y\""), 1u) << name;
  }
  const std::string one = line_chart_svg({series("one", {5}, {2.5})});
  EXPECT_EQ(count(one, "<polyline"), 1u);
  EXPECT_EQ(count(one, "<circle"), 1u);  // a one-point polyline is invisible
}

TEST(LineChart, SkipsNonFinitePointsWithinOnePolyline) {
  const std::string svg =
      line_chart_svg({series("s", {1, 2, 3, 4, kNaN}, {1.0, kNaN, 3.0, kInf, 5.0})});
  ASSERT_EQ(count(svg, "<polyline"), 1u);
  const size_t at = svg.find("points=\"") + 8;
  const std::string points = svg.substr(at, svg.find('"', at) - at);
  EXPECT_EQ(count(points, ","), 2u) << points;  // (1, 1) and (3, 3)
}

TEST(LineChart, TickLabelsAreEvenlySpacedNiceNumbers) {
  const std::string svg =
      line_chart_svg({series("train", {1, 250, 500, 1000, 1337}, {4.17, 2.9, 2.31, 1.95, 1.83})});
  const std::vector<double> x = tick_labels(svg, "x"), y = tick_labels(svg, "y");
  expect_evenly_spaced_nice(x);
  expect_evenly_spaced_nice(y);
  EXPECT_LE(x.front(), 1.0);
  EXPECT_GE(x.back(), 1337.0);
  EXPECT_LE(y.front(), 1.83);
  EXPECT_GE(y.back(), 4.17);
}

TEST(LineChart, LogAxisTicksAreOneTwoFiveTimesAPowerOfTen) {
  ChartOptions options;
  options.log_y = true;
  const std::string svg = line_chart_svg({series("s", {0, 1, 2}, {0.01, 1.0, 80.0})}, options);
  const std::vector<double> y = tick_labels(svg, "y");
  ASSERT_GE(y.size(), 3u);
  for (double v : y) EXPECT_TRUE(is_nice(v)) << v;
  EXPECT_TRUE(std::is_sorted(y.begin(), y.end()));
}

TEST(LineChart, NiceTicksCoverTheRangeWithANiceStep) {
  EXPECT_EQ(nice_ticks(0.0, 4.2, 5), (std::vector<double>{0, 1, 2, 3, 4, 5}));
  const std::vector<std::pair<double, double>> ranges = {
      {0.3, 0.7}, {1.83, 4.17}, {-3.5, 12.0}, {1e-7, 3e-7}, {0.0, 123456.0}, {1000.0, 1000.5}};
  for (const auto& [lo, hi] : ranges) {
    for (int target : {2, 5, 8}) {
      const std::vector<double> ticks = nice_ticks(lo, hi, target);
      expect_evenly_spaced_nice(ticks);
      EXPECT_LE(ticks.front(), lo + 1e-12 * std::abs(lo));
      EXPECT_GE(ticks.back(), hi - 1e-12 * std::abs(hi));
      EXPECT_LE(ticks.size(), size_t(target) + 3) << lo << " " << hi << " " << target;
    }
  }
  // 0.3 / 0.1 is 2.9999999999999996 in doubles: no extra tick below 0.3.
  EXPECT_NEAR(nice_ticks(0.3, 0.7, 4).front(), 0.3, 1e-12);
  EXPECT_THROW(nice_ticks(1.0, 1.0, 5), ValueError);
  EXPECT_THROW(nice_ticks(0.0, kNaN, 5), ValueError);
  EXPECT_THROW(nice_ticks(0.0, 1.0, 0), ValueError);
}

TEST(LineChart, RejectsMismatchedSeriesAndTinyCharts) {
  EXPECT_THROW(line_chart_svg({series("bad", {1, 2, 3}, {1, 2})}), ValueError);
  ChartOptions narrow;
  narrow.width = 100;
  EXPECT_THROW(line_chart_svg({}, narrow), ValueError);
}

TEST(LineChart, WritesTheFileAtomically) {
  TempDir dir;
  const fs::path path = dir.path() / "loss.svg";
  const std::vector<Series> data = {series("train", {1, 2}, {2.0, 1.5})};
  write_line_chart_svg(path, {series("old", {1, 2}, {1, 1})});
  write_line_chart_svg(path, data);  // replaces the old chart
  EXPECT_EQ(read_file(path), line_chart_svg(data));
  EXPECT_FALSE(fs::exists(dir.path() / "loss.svg.tmp"));

  const fs::path missing = dir.path() / "no_such_dir" / "loss.svg";
  try {
    write_line_chart_svg(missing, data);
    FAIL() << "expected IOError";
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find(missing.string()), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace stride::app
