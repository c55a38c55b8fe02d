// Shared by the op tests: one client on the default device, and settings that keep tuning short.
#pragma once

#include <iostream>
#include <sstream>
#include <string>
#include <tunekit/cl.hpp>
#include <tunekit/tunekit.hpp>

namespace tunekit::test {

inline cl::Client& default_client() {
  static cl::Client client;
  return client;
}

/// No persistence, few samples, small search budgets: tests check results, not speed.
inline void quick_tuning() {
  Settings s;
  s.persistent_cache = false;
  s.level = Level::minimal;
  s.search = SearchSettings{SearchStrategy::annealing, 0.0, 4, 30};
  set_global_settings(s);
}

/// What the library warns (tunekit::warn writes to std::cerr) while this lives.
class CapturedWarnings {
 public:
  CapturedWarnings() : previous_(std::cerr.rdbuf(text_.rdbuf())) {}
  ~CapturedWarnings() { std::cerr.rdbuf(previous_); }
  CapturedWarnings(const CapturedWarnings&) = delete;
  CapturedWarnings& operator=(const CapturedWarnings&) = delete;
  std::string text() const { return text_.str(); }

 private:
  std::ostringstream text_;
  std::streambuf* previous_;
};

}  // namespace tunekit::test
