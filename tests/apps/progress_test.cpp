// Training progress: plain line counts, the in-place bar, messages, widths.
#include "support/progress.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "stride/error.h"

namespace stride::app {
namespace {

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// What a terminal would show line by line: split on '\r' and '\n', with the
// clear-line code removed.
std::vector<std::string> screen_lines(std::string text) {
  for (size_t at = text.find("\033[2K"); at != std::string::npos; at = text.find("\033[2K"))
    text.erase(at, 4);
  std::vector<std::string> lines(1);
  for (char c : text) {
    if (c == '\r' || c == '\n') {
      lines.emplace_back();
    } else {
      lines.back() += c;
    }
  }
  return lines;
}

size_t plain_lines(int64_t total, int64_t print_every) {
  std::ostringstream out;
  Progress progress(total, out, /*interactive=*/false, print_every);
  for (int64_t step = 1; step <= total; ++step) progress.update(step, 2.0, 1000.0, double(step));
  progress.finish();
  return count(out.str(), "\n");
}

TEST(ProgressFormatDuration, RoundsToSecondsMinutesOrHours) {
  EXPECT_EQ(format_duration(0.0), "0s");
  EXPECT_EQ(format_duration(0.4), "0s");
  EXPECT_EQ(format_duration(42.0), "42s");
  EXPECT_EQ(format_duration(59.6), "1m00s");
  EXPECT_EQ(format_duration(185.0), "3m05s");
  EXPECT_EQ(format_duration(3599.0), "59m59s");
  EXPECT_EQ(format_duration(3720.0), "1h02m");
  EXPECT_EQ(format_duration(97200.0), "27h00m");
  EXPECT_EQ(format_duration(-1.0), "?");
  EXPECT_EQ(format_duration(std::numeric_limits<double>::quiet_NaN()), "?");
  EXPECT_EQ(format_duration(std::numeric_limits<double>::infinity()), "?");
  EXPECT_EQ(format_duration(1e300), "?");
}

TEST(Progress, PlainModePrintsEveryNStepsAndTheLastStep) {
  EXPECT_EQ(plain_lines(10, 3), 4u);  // 3 6 9 10
  EXPECT_EQ(plain_lines(9, 3), 3u);   // 3 6 9
  EXPECT_EQ(plain_lines(1, 5), 1u);
  EXPECT_EQ(plain_lines(0, 5), 0u);

  std::ostringstream out;
  Progress progress(10, out, /*interactive=*/false, 4);
  for (int64_t step = 1; step <= 10; ++step) progress.update(step, 1.5, 2500.0, double(step));
  const std::vector<std::string> lines = screen_lines(out.str());
  ASSERT_EQ(lines.size(), 4u);  // 4 8 10, then the empty rest after the last '\n'
  EXPECT_EQ(lines[0], "step  4/10  loss 1.5000  2.5k tok/s  elapsed 4s  eta 6s");
  EXPECT_EQ(lines[2], "step 10/10  loss 1.5000  2.5k tok/s  elapsed 10s  eta 0s");
  EXPECT_EQ(out.str().find('\r'), std::string::npos);
  EXPECT_EQ(out.str().find('\033'), std::string::npos);
}

TEST(Progress, PlainModeDefaultsToAboutTwentyLines) {
  EXPECT_EQ(plain_lines(1000, 0), 20u);
  EXPECT_EQ(plain_lines(1005, 0), 20u);  // every 51 steps: 19 lines, then the last
  EXPECT_EQ(plain_lines(7, 0), 7u);
}

TEST(Progress, InteractiveRedrawsOneLineInPlaceWithTheEta) {
  std::ostringstream out;
  Progress progress(100, out, /*interactive=*/true);
  for (int64_t step = 1; step <= 10; ++step) progress.update(step, 2.25, 12345.0, double(step));
  const std::string drawn = out.str();
  EXPECT_EQ(count(drawn, "\r\033[2K"), 10u);
  EXPECT_EQ(drawn.find('\n'), std::string::npos);
  const std::string last = drawn.substr(drawn.rfind("\r\033[2K") + 5);
  // 10 s for 10 steps, 90 to go: eta 90 s.
  EXPECT_EQ(last,
            "[===>" + std::string(26, ' ') + "]  10/100  loss 2.2500  12.3k tok/s  eta 1m30s");
  progress.finish();
  EXPECT_EQ(out.str().back(), '\n');
  progress.finish();  // idempotent
  EXPECT_EQ(count(out.str(), "\n"), 1u);
}

TEST(Progress, InteractiveSkipsRedrawsWithinATenthOfASecondExceptTheLast) {
  std::ostringstream out;
  Progress progress(50, out, /*interactive=*/true);
  for (int64_t step = 1; step <= 50; ++step) progress.update(step, 1.0, 1.0, 0.001 * double(step));
  EXPECT_EQ(count(out.str(), "\r"), 2u);  // the first step and the last
  EXPECT_NE(out.str().find("[==============================] 50/50  loss"), std::string::npos);
}

TEST(Progress, MessageClearsTheBarPrintsTheLineAndRedraws) {
  std::ostringstream out;
  Progress progress(20, out, /*interactive=*/true);
  progress.update(5, 3.0, 100.0, 5.0);
  const std::string bar = out.str().substr(5);
  progress.message("step 5: val loss 2.9876");
  EXPECT_EQ(out.str(), "\r\033[2K" + bar + "\r\033[2Kstep 5: val loss 2.9876\n" + bar);

  std::ostringstream plain;
  Progress quiet(20, plain, /*interactive=*/false);
  quiet.message("val loss 2.9876");
  EXPECT_EQ(plain.str(), "val loss 2.9876\n");
}

TEST(Progress, LinesFitInOneHundredColumns) {
  const int64_t total = std::numeric_limits<int64_t>::max() / 2;
  for (bool interactive : {true, false}) {
    std::ostringstream out;
    Progress progress(total, out, interactive, 1);
    progress.update(1, 1e300, 1e20, 1e8);
    progress.update(total - 1, -std::numeric_limits<double>::infinity(), -1.0, 2e8);
    progress.update(total, std::numeric_limits<double>::quiet_NaN(), 5e5, 3e8);
    progress.finish();
    for (const std::string& line : screen_lines(out.str())) {
      EXPECT_LE(line.size(), 100u) << line;
    }
  }
}

TEST(Progress, RejectsNegativeCounts) {
  std::ostringstream out;
  EXPECT_THROW(Progress(-1, out, false), ValueError);
  EXPECT_THROW(Progress(10, out, false, -2), ValueError);
}

}  // namespace
}  // namespace stride::app
