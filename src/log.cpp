// The one sink of the library's messages (log.hpp, warnings.hpp).
#include "tunekit/log.hpp"

#include <cstdlib>
#include <iostream>
#include <mutex>
#include <set>

#include "tunekit/outcome.hpp"
#include "warnings.hpp"

namespace tunekit {

namespace {
std::mutex& sink_mutex() {  // keeps lines from threads whole, on both streams
  static std::mutex mutex;
  return mutex;
}

bool status_line_drawn = false;  // a line drawn in place is on stderr (under sink_mutex)

// With the sink's lock held: the terminal's current line cleared, if a status line is there.
void clear_status_line_locked() {
  if (!status_line_drawn) return;
  std::cerr << "\r\033[K" << std::flush;
  status_line_drawn = false;
}
}  // namespace

void draw_status_line(const std::string& line, bool in_place) {
  static std::once_flag at_exit;
  std::lock_guard lock(sink_mutex());
  if (in_place) {
    std::call_once(at_exit, [] { std::atexit(clear_status_line); });
    std::cerr << "\r\033[K" << line << std::flush;
    status_line_drawn = true;
  } else {
    std::cerr << line << '\n' << std::flush;
  }
}

void clear_status_line() {
  std::lock_guard lock(sink_mutex());
  clear_status_line_locked();
}

// Every line goes out through printable (newlines kept, nothing cut): a name, key or message
// that came from a cache file, a bundle or a build log cannot drive the terminal, even where a
// caller forgot to escape it.
constexpr std::size_t no_limit = std::string::npos;

void warn(const std::string& message) {
  const std::string safe = printable(message, no_limit, /*lines=*/true);
  std::lock_guard lock(sink_mutex());
  clear_status_line_locked();
  std::cerr << safe << '\n';
}

void inform(const std::string& text) {
  const std::string safe = printable(text, no_limit, /*lines=*/true);
  std::lock_guard lock(sink_mutex());
  clear_status_line_locked();
  std::clog << safe;
}

std::string about(std::string_view op, std::string_view key) {
  std::string prefix = "tunekit: ";
  prefix.append(op).append(" [").append(key).append("]: ");
  return prefix;
}

void warn_once(const std::string& message) {
  static std::mutex mutex;
  static std::set<std::string> told;
  {
    std::lock_guard lock(mutex);
    if (!told.insert(message).second) return;
  }
  warn(message);
}

}  // namespace tunekit
