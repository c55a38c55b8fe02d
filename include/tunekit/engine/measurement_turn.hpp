// MeasurementTurn: within a process, one tuning at a time measures on a device. Two ops tuned
// at once from two threads (or a background tuning beside a foreground one) would otherwise time
// their candidates while the other's kernels, builds or first calls ran on the same device, and
// each would rank by what the other happened to do at that moment.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace tunekit {

/// How long a tuning waits for another's turn on its device before it measures anyway. A turn
/// is one candidate's validation and samples (at most BenchmarkSettings::max_candidate_seconds
/// of samples) or one final race, so a normal wait is a few seconds. The bound is for a
/// candidate that, while it is measured, waits for a key another thread tunes (that tuning waits
/// for the turn): past it both go on, side by side, instead of waiting for each other forever.
inline constexpr std::chrono::seconds measurement_turn_patience{30};

/// Holds `device`'s turn from construction to destruction, on this thread. Turns are given in
/// the order they were asked for when several tunings wait; a thread that holds the turn may
/// take it again (a candidate that tunes another op while it is measured). Not copyable.
class MeasurementTurn {
 public:
  /// Waits for `device`'s turn, at most `patience`; past that the turn is not held (held()), and
  /// the caller measures beside the other tuning.
  explicit MeasurementTurn(const std::string& device,
                           std::chrono::milliseconds patience = measurement_turn_patience);
  ~MeasurementTurn();
  MeasurementTurn(const MeasurementTurn&) = delete;
  MeasurementTurn& operator=(const MeasurementTurn&) = delete;

  /// Whether this thread holds the device's turn (false: the wait ran out).
  bool held() const noexcept { return gate_ != nullptr; }
  /// How many threads wait for `device`'s turn now (what a test waits for, instead of a sleep).
  static std::size_t waiting(const std::string& device);

  struct Gate;  // one per device id, for the life of the process (measurement_turn.cpp)

 private:
  Gate* gate_ = nullptr;
};

}  // namespace tunekit
