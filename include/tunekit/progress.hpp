// The progress line of a tuning: one line on stderr that fits the terminal, redrawn in place
// (the `tunekit` tool's, and any program's through Settings::progress / TUNEKIT_PROGRESS).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

#include "tunekit/settings.hpp"

namespace tunekit {

/// "tuning OP [KEY]: DONE/TOTAL candidates, ELAPSED s, best NAME TIME", at most `width - 1`
/// bytes (the last column makes some terminals wrap): the key and the best candidate's name
/// are shortened first (ending in '~'), then the line. Control characters are escaped.
std::string format_progress_line(const TuningProgress& progress, std::size_t width);

/// The width to fit: COLUMNS when it is a number from 20 to 1000, else the terminal's
/// (TIOCGWINSZ on stderr), else 80.
std::size_t terminal_columns();

/// Whether stderr is a terminal.
bool stderr_is_terminal();

/// Draws format_progress_line on stderr: on a terminal, redrawn in place at most every 100 ms
/// and as wide as terminal_columns(); elsewhere one whole line every 5 s (no width to fit). Nothing
/// for a tuning that ends within half a second. A message of the library (warn(), the info table)
/// first clears a line drawn in place, and so does finish() and the process's exit.
class ProgressLine {
 public:
  explicit ProgressLine(bool terminal = stderr_is_terminal()) : terminal_(terminal) {}
  void operator()(const TuningProgress& progress);
  /// Clears the line drawn in place, if any: call it when the tuning has ended.
  void finish();

 private:
  /// The width of a line that is not on a terminal: beyond any line format_progress_line makes.
  static constexpr std::size_t whole_line_width = 4096;
  std::size_t width() const;
  bool terminal_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_;
};

/// What a LocalTuner puts in Settings::on_progress when it is empty: a ProgressLine when `mode`
/// is on, or automatic and stderr is a terminal; else nothing.
std::function<void(const TuningProgress&)> progress_line_for(ProgressMode mode);

}  // namespace tunekit
