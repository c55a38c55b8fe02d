// The progress line (progress.hpp): its text, the terminal's width, and drawing it through the
// log's sink, so that a message never lands in the middle of it.
#include "tunekit/progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
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
  // The counts in words, or, where the line would not fit, in numbers only ("34 in 1.6 s").
  const auto counts_text = [&](bool compact) {
    char text[96];
    if (p.finished) {
      std::snprintf(
          text, sizeof text,
          compact ? ": %zu in %.1f s, winner " : ": done, %zu candidates in %.1f s, winner ",
          p.done, p.elapsed_seconds);
    } else {
      std::snprintf(text, sizeof text,
                    compact ? ": %zu/%zu, %.1f s, best " : ": %zu/%zu candidates, %.1f s, best ",
                    p.done, p.total, p.elapsed_seconds);
    }
    return std::string(text);
  };
  std::string counts = counts_text(false);
  const std::string time = p.best.empty() ? "" : " " + format_seconds(p.best_seconds);
  const std::string_view start = p.finished ? "tuned" : "tuning";
  bool named = true;  // " op [key]" after `start`
  const auto length = [&] {
    return start.size() + (named ? op.size() + 4 + key.size() : 0) + counts.size() + best.size() +
           time.size();
  };
  // Shorten the longer of the key and the best name until the line fits or both are short;
  // then the counts lose their words, the key goes down to one character, the op and the key
  // go (the person started that tuning; the best's name is what they cannot know), and last the
  // name: the counts, the time and the best time are what a person watches.
  const auto fit = [&](std::size_t shortest) {
    while (length() > limit && (key.size() > shortest || best.size() > shortest)) {
      std::string& longer = key.size() >= best.size() ? key : best;
      const std::size_t excess = length() - limit;
      shorten(longer, longer.size() > shortest + excess ? longer.size() - excess : shortest);
    }
  };
  const auto shorten_by_excess = [&](std::string& part) {
    const std::size_t excess = length() > limit ? length() - limit : 0;
    if (excess > 0) shorten(part, part.size() > excess + 1 ? part.size() - excess : 1);
  };
  fit(12);
  if (length() > limit) {
    counts = counts_text(true);
    fit(12);
  }
  shorten_by_excess(key);
  if (length() > limit) named = false;
  shorten_by_excess(best);
  std::string line(start);
  if (named) line += " " + op + " [" + key + "]";
  line += counts + best + time;
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
    draw_status_line(format_progress_line(p, width()), /*in_place=*/false);
    drawn_ = false;
    return;
  }
  if (p.elapsed_seconds < 0.5) return;
  const auto now = std::chrono::steady_clock::now();
  const auto every = terminal_ ? std::chrono::milliseconds(100) : std::chrono::seconds(5);
  if (drawn_ && now - last_ < every) return;
  last_ = now;
  draw_status_line(format_progress_line(p, width()), terminal_);
  drawn_ = true;
}

std::size_t ProgressLine::width() const {
  // A line in a file or a pipe wraps nowhere: whole, up to format_progress_line's own caps.
  return terminal_ ? terminal_columns() : whole_line_width;
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
