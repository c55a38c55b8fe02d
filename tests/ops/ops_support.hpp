// Shared by the op tests: one client on the default device, and settings that keep tuning short.
#pragma once

#include <string>
#include <tunekit/cl.hpp>
#include <tunekit/tunekit.hpp>

#include "../support.hpp"  // CapturedWarnings

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

/// About the least a tuning can measure: its start points and two more configurations per space,
/// one sample each, no final race.
/// For tests on inputs so large (hundreds of MB on a CPU device) that each run costs a second,
/// which check where a tuning ran, not what it picked.
inline void fewest_measurements() {
  Settings s;
  s.persistent_cache = false;
  s.level = Level::minimal;
  s.search = SearchSettings{SearchStrategy::annealing, 0.0, 2, 1.0};
  BenchmarkSettings bench;
  bench.warmup_runs = 0;
  bench.min_samples = 1;
  bench.max_samples = 1;
  bench.confirm_contenders = 0;
  s.benchmark = bench;
  set_global_settings(s);
}

}  // namespace tunekit::test
