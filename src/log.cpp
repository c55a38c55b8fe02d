// The one sink of the library's messages (log.hpp, warnings.hpp).
#include "tunekit/log.hpp"

#include <iostream>
#include <mutex>
#include <set>

#include "warnings.hpp"

namespace tunekit {

namespace {
std::mutex& sink_mutex() {  // keeps lines from threads whole, on both streams
  static std::mutex mutex;
  return mutex;
}
}  // namespace

void warn(const std::string& message) {
  std::lock_guard lock(sink_mutex());
  std::cerr << message << '\n';
}

void inform(const std::string& text) {
  std::lock_guard lock(sink_mutex());
  std::clog << text;
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
