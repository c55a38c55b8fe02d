// RetryBackoff: the keys of a Tuner whose last tuning failed for a reason of the moment (every
// candidate failed, one of them for memory, resources or the device: not detail::lasting), and
// when each may be tuned again. Such a failure is never stored nor kept as the key's decision;
// until its back-off has passed, the key's calls throw it at once instead of tuning again. The
// Tuner asks it on a miss only (the hot path never sees it). Compiled once (src/retry_backoff.cpp).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "tunekit/engine/decision.hpp"
#include "tunekit/error.hpp"

namespace tunekit::detail {

/// Per key (its printed form): the failure of the moment and when it may be tuned again. The
/// first back-off is `first`; each failure in a row doubles it, up to `most` (or `first`, if
/// more); a decision resets it (forget). Thread-safe.
class RetryBackoff {
 public:
  using Clock = std::chrono::steady_clock;

  RetryBackoff(Clock::duration first, Clock::duration most)
      : first_(first), most_(std::max(first, most)) {}
  /// From Settings::retry_seconds and retry_max_seconds.
  RetryBackoff(double first_seconds, double most_seconds);

  /// Whether any key waits (one relaxed load: cheap enough for the provisional path).
  bool any() const noexcept { return any_.load(std::memory_order_relaxed); }

  /// The failure to throw for `key` at `now` while its back-off has not passed (of its kind, its
  /// message saying when the key is tuned again); nothing once it has, or for a key not waiting.
  std::optional<AutotuneError> waiting(const std::string& key,
                                       Clock::time_point now = Clock::now()) const;
  /// Throws waiting(key, now) if there is one.
  void throw_if_waiting(const std::string& key, Clock::time_point now = Clock::now()) const;

  /// When `decided` failed for a reason of the moment (not detail::lasting): failed(key, its
  /// failure), what the tuning's caller throws; else nothing.
  std::optional<AutotuneError> of_the_moment(const std::string& key, const Decision& decided);

  /// Records that `key`'s tuning failed with `failure` at `now`, and returns what the call that
  /// tuned throws: `failure`, saying when the key is tuned again.
  AutotuneError failed(const std::string& key, const AutotuneError& failure,
                       Clock::time_point now = Clock::now());

  /// The back-off `key` waits after its last failure (zero when not waiting): for tests and
  /// messages.
  Clock::duration delay(const std::string& key) const;

  /// Forgets `key` (it is decided): its next failure of the moment waits `first` again.
  void forget(const std::string& key);
  /// Forgets every key (Tuner::clear_memory).
  void clear();

 private:
  struct Waiting {
    AutotuneError failure;
    Clock::time_point retry_at;
    Clock::duration delay;
  };
  static AutotuneError saying_when(const Waiting& waiting, Clock::time_point now);

  Clock::duration first_, most_;
  mutable std::mutex mutex_;
  std::map<std::string, Waiting> keys_;
  std::atomic<bool> any_{false};
};

}  // namespace tunekit::detail
