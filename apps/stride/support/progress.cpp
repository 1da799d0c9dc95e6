// Training progress lines (progress.h).
#include "support/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "stride/error.h"
#include "support/text.h"

namespace stride::app {

namespace {

constexpr size_t kMaxColumns = 100;
constexpr int64_t kMaxBarWidth = 30;
constexpr int64_t kMinBarWidth = 10;
constexpr int64_t kPlainLinesPerRun = 20;
constexpr double kRedrawInterval = 0.1;  // seconds
constexpr const char* kClearLine = "\r\033[2K";

std::string format_loss(double loss) {
  return std::isfinite(loss) && std::abs(loss) < 1e5 ? format("%.4f", loss) : format("%.4g", loss);
}

std::string format_rate(double per_second) {
  if (!std::isfinite(per_second) || per_second < 0) return "?";
  if (per_second < 1e3) return format("%.0f", per_second);
  if (per_second < 1e6) return format("%.1fk", per_second / 1e3);
  if (per_second < 1e9) return format("%.1fM", per_second / 1e6);
  return format("%.1fG", per_second / 1e9);
}

std::string eta(int64_t step, int64_t total, double elapsed) {
  if (step <= 0) return "?";
  return format_duration(elapsed / double(step) * double(std::max<int64_t>(total - step, 0)));
}

}  // namespace

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0 || seconds >= 1e9) return "?";
  const long long s = std::llround(seconds);
  if (s < 60) return format("%llds", s);
  if (s < 3600) return format("%lldm%02llds", s / 60, s % 60);
  return format("%lldh%02lldm", s / 3600, s % 3600 / 60);
}

Progress::Progress(int64_t total_steps, std::ostream& out, bool interactive, int64_t print_every)
    : total_(total_steps), out_(out), interactive_(interactive), print_every_(print_every) {
  if (total_steps < 0 || print_every < 0) {
    throw ValueError("[Progress] total_steps and print_every must be >= 0; got " +
                     std::to_string(total_steps) + " and " + std::to_string(print_every) + ".");
  }
  if (print_every_ == 0) {
    print_every_ = std::max<int64_t>(1, (total_ + kPlainLinesPerRun - 1) / kPlainLinesPerRun);
  }
}

Progress::~Progress() {
  try {
    finish();
  } catch (...) {  // a stream set to throw must not escape a destructor
  }
}

void Progress::update(int64_t step, double loss, double tokens_per_second, double elapsed_seconds) {
  const int digits = int(std::to_string(total_).size());
  const std::string stats =
      "loss " + format_loss(loss) + "  " + format_rate(tokens_per_second) + " tok/s  ";
  if (!interactive_) {
    if (step < 1 || (step % print_every_ != 0 && step != total_)) return;
    std::string line = format("step %*lld/%lld  ", digits, (long long)step, (long long)total_) +
                       stats + "elapsed " + format_duration(elapsed_seconds) + "  eta " +
                       eta(step, total_, elapsed_seconds);
    if (line.size() > kMaxColumns) line.resize(kMaxColumns);
    out_ << line << '\n' << std::flush;
    return;
  }
  const bool due = !drawn_ || step >= total_ || elapsed_seconds < last_draw_elapsed_ ||
                   elapsed_seconds - last_draw_elapsed_ >= kRedrawInterval;
  if (!due) return;
  const std::string text = format("%*lld/%lld  ", digits, (long long)step, (long long)total_) +
                           stats + "eta " + eta(step, total_, elapsed_seconds);
  // "[" + bar + "] " + text, the bar shrinking (then dropped) to fit.
  const int64_t bar_width =
      std::min<int64_t>(kMaxBarWidth, int64_t(kMaxColumns) - 3 - int64_t(text.size()));
  std::string line;
  if (bar_width >= kMinBarWidth) {
    const double fraction = total_ > 0 ? std::clamp(double(step) / double(total_), 0.0, 1.0) : 1.0;
    const int64_t filled = int64_t(fraction * double(bar_width));
    line.assign(1, '[').append(size_t(filled), '=');
    if (filled < bar_width) line += '>' + std::string(size_t(bar_width - filled - 1), ' ');
    line += "] ";
  }
  line += text;
  if (line.size() > kMaxColumns) line.resize(kMaxColumns);
  bar_line_ = line;
  out_ << kClearLine << bar_line_ << std::flush;
  drawn_ = true;
  last_draw_elapsed_ = elapsed_seconds;
}

void Progress::message(const std::string& line) {
  if (!(interactive_ && drawn_)) {
    out_ << line << '\n' << std::flush;
    return;
  }
  out_ << kClearLine << line << '\n' << bar_line_ << std::flush;
}

void Progress::finish() {
  if (!(interactive_ && drawn_)) return;
  out_ << '\n' << std::flush;
  drawn_ = false;
}

bool stdout_is_terminal() {
  return ::isatty(STDOUT_FILENO) != 0;
}

}  // namespace stride::app
