// Training progress lines for `stride train`: a bar redrawn in place on a
// terminal, plain periodic lines when the output goes to a file or a pipe
// (where "\r" redraws would pile up as garbage).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace stride::app {

// A short duration, rounded to the second: "0s", "42s", "3m05s", "1h02m"
// (hours keep counting: "27h00m"). "?" for a negative, non-finite or
// absurd (>= 10^9 s) value, e.g. an ETA that cannot be known yet.
std::string format_duration(double seconds);

// Writes to `out` only from the calling thread; not thread-safe.
class Progress {
 public:
  // interactive: one line redrawn in place ("\r" and the ANSI clear-line
  // code) with a bar, step/total, loss, tokens/s and ETA; meant for a
  // terminal (see stdout_is_terminal). Otherwise a plain line every
  // `print_every` steps and at the last step; print_every 0 picks
  // ceil(total_steps / 20), about 20 lines per run. Throws ValueError for a
  // negative total_steps or print_every.
  Progress(int64_t total_steps, std::ostream& out, bool interactive, int64_t print_every = 0);
  ~Progress();  // finish()
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Call after every step. `step` counts the steps done (1-based); the ETA is
  // elapsed / step * (total - step). Interactive redraws are skipped while
  // less than 0.1 s of `elapsed_seconds` has passed since the last one,
  // except at the first and the last step, so fast steps do not flood the
  // terminal. Lines are at most 100 columns.
  void update(int64_t step, double loss, double tokens_per_second, double elapsed_seconds);

  // Prints `line` as a permanent line (an evaluation result, a checkpoint
  // note): interactive mode clears the bar, prints it and redraws the bar.
  void message(const std::string& line);

  // Ends the bar line (interactive), so later output starts on a fresh line.
  // Idempotent; an update() after it starts a new bar.
  void finish();

 private:
  int64_t total_;
  std::ostream& out_;
  bool interactive_;
  int64_t print_every_;
  bool drawn_ = false;  // a bar is on the current line
  double last_draw_elapsed_ = 0.0;
  std::string bar_line_;  // the bar as last drawn, for message() to restore
};

// isatty(STDOUT_FILENO): whether Progress should be interactive.
bool stdout_is_terminal();

}  // namespace stride::app
