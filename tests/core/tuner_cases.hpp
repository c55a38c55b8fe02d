// What the tuner's test cases share (test_tuner, test_failures, test_priority, ...): candidates
// that return their own id, a run of one size, and the error a call throws.
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <tunekit/tunekit.hpp>

#include "../support.hpp"

namespace tunekit::test::tuner_cases {

/// A candidate that costs `seconds` per call on the virtual clock and returns its own id.
inline auto costs(double seconds, int id) {
  return [=](VirtualClient& client, int&) {
    client.spend(seconds);
    return id;
  };
}

/// The set's key generator and input generator over one int (support.hpp's).
inline constexpr auto key_of_size = size_key;
inline constexpr auto bench_inputs = size_inputs;

/// One call of `set` on size `n`.
template <class Set>
int run(LocalTuner<SizeKey>& tuner, VirtualClient& client, const Set& set, int n) {
  return tuner.execute(client.id(), client, set, n);
}

/// The message of the AutotuneError `f` throws, checking its kind.
inline std::string reason_of(const std::function<void()>& f, ErrorKind kind) {
  try {
    f();
  } catch (const AutotuneError& e) {
    CHECK(e.kind() == kind);
    return e.what();
  }
  FAIL("expected an AutotuneError");
  return {};
}

}  // namespace tunekit::test::tuner_cases
