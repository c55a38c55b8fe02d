// Shared by the op tests: one client on the default device, and settings that keep tuning short.
#pragma once

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

}  // namespace tunekit::test
