// The progress line (progress.hpp): its text, the terminal's width, and drawing it through the
// log's sink, so that a message never lands in the middle of it.
#include "tunekit/progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string_view>

#include "tunekit/outcome.hpp"
#include "warnings.hpp"

namespace tunekit {

namespace {

void shorten(std::string& text, std::size_t to) {
  if (text.size() > to) text = text.substr(0, to > 0 ? to - 1 : 0) + "~";
}

}  // namespace

std::string format_progress_line(const TuningProgress& p, std::size_t width) {
  const std::size_t limit = (width < 20 ? 20 : width) - 1;
  std::string op = printable(p.op, 200);
  std::string key = printable(p.key, 1000);
  // A finished tuning without a best found no working candidate: "none", not "none yet".
  std::string best = !p.best.empty() ? printable(p.best, 1000)
                     : p.finished    ? std::string("none")
                                     : std::string("none yet");
  char counts[96];
  if (p.finished) {
    std::snprintf(counts, sizeof counts, "]: done, %zu candidates in %.1f s, winner ", p.done,
                  p.elapsed_seconds);
  } else {
    std::snprintf(counts, sizeof counts, "]: %zu/%zu candidates, %.1f s, best ", p.done, p.total,
                  p.elapsed_seconds);
  }
  const std::string time = p.best.empty() ? "" : " " + format_seconds(p.best_seconds);
  const auto length = [&] {
    return 7 + op.size() + 2 + key.size() + std::string_view(counts).size() + best.size() +
           time.size();
  };
  // Shorten the longer of the key and the best name until the line fits or both are short.
  constexpr std::size_t shortest = 12;
  while (length() > limit && (key.size() > shortest || best.size() > shortest)) {
    std::string& longer = key.size() >= best.size() ? key : best;
    const std::size_t excess = length() - limit;
    shorten(longer, longer.size() > shortest + excess ? longer.size() - excess : shortest);
  }
  std::string line = (p.finished ? "tuned " : "tuning ") + op + " [" + key + counts + best + time;
  shorten(line, limit);
  return line;
}

std::size_t terminal_columns() {
  if (const char* columns = std::getenv("COLUMNS"); columns && *columns) {
    const std::string_view text(columns);
    std::size_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error == std::errc{} && end == text.data() + text.size() && value >= 20 && value <= 1000) {
      return value;
    }
  }
  winsize size{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col >= 20) return size.ws_col;
  return 80;
}

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

void ProgressLine::operator()(const TuningProgress& p) {
  if (p.finished) {
    // The end replaces the last state drawn and stays: "tuned ...: done, N candidates in ...".
    if (!drawn_) return;  // a tuning too short to have drawn anything says nothing at its end
    if (terminal_) clear_status_line();
    draw_status_line(format_progress_line(p, terminal_columns()), /*in_place=*/false);
    drawn_ = false;
    return;
  }
  if (p.elapsed_seconds < 0.5) return;
  const auto now = std::chrono::steady_clock::now();
  const auto every = terminal_ ? std::chrono::milliseconds(100) : std::chrono::seconds(5);
  if (drawn_ && now - last_ < every) return;
  last_ = now;
  draw_status_line(format_progress_line(p, terminal_columns()), terminal_);
  drawn_ = true;
}

void ProgressLine::finish() {
  if (drawn_ && terminal_) clear_status_line();
  drawn_ = false;
}

std::function<void(const TuningProgress&)> progress_line_for(ProgressMode mode) {
  const bool terminal = stderr_is_terminal();
  if (mode == ProgressMode::off || (mode == ProgressMode::automatic && !terminal)) return {};
  auto line = std::make_shared<ProgressLine>(terminal);
  return [line](const TuningProgress& p) { (*line)(p); };
}

}  // namespace tunekit
