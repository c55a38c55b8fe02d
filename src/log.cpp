// The one sink of the library's messages (log.hpp, warnings.hpp).
#include "tunekit/log.hpp"

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
}  // namespace

// Every line goes out through printable (newlines kept, nothing cut): a name, key or message
// that came from a cache file, a bundle or a build log cannot drive the terminal, even where a
// caller forgot to escape it.
constexpr std::size_t no_limit = std::string::npos;

void warn(const std::string& message) {
  const std::string safe = printable(message, no_limit, /*lines=*/true);
  std::lock_guard lock(sink_mutex());
  std::cerr << safe << '\n';
}

void inform(const std::string& text) {
  const std::string safe = printable(text, no_limit, /*lines=*/true);
  std::lock_guard lock(sink_mutex());
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
