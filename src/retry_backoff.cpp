// The back-off of keys whose tuning failed for a reason of the moment (engine/retry_backoff.hpp).
#include "tunekit/engine/retry_backoff.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "tunekit/engine/persistence.hpp"  // lasting()

namespace tunekit::detail {

namespace {

using Clock = RetryBackoff::Clock;

Clock::duration from_seconds(double seconds) {
  // Settings::validate() keeps them finite and not negative; a day bounds what a clock can add.
  seconds = std::clamp(std::isfinite(seconds) ? seconds : 0.0, 0.0, 86400.0);
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// "250 ms", "1.5 s", "3600 s" (rounded up: the key is never tuned before the time said).
std::string spoken(Clock::duration span) {
  const auto milliseconds = std::chrono::ceil<std::chrono::milliseconds>(span).count();
  if (milliseconds < 1000) return std::to_string(milliseconds) + " ms";
  if (milliseconds >= 10000) return std::to_string((milliseconds + 999) / 1000) + " s";
  char text[32];
  std::snprintf(text, sizeof text, "%.3g s", static_cast<double>(milliseconds) / 1000);
  return text;
}

}  // namespace

RetryBackoff::RetryBackoff(double first_seconds, double most_seconds)
    : RetryBackoff(from_seconds(first_seconds), from_seconds(most_seconds)) {}

AutotuneError RetryBackoff::saying_when(const Waiting& waiting, Clock::time_point now) {
  const AutotuneError& failure = waiting.failure;
  return AutotuneError(failure.kind(),
                       failure.message() +
                           " (a failure of the moment, not remembered: the key is tuned again by "
                           "its first call after " +
                           spoken(waiting.retry_at - now) + ")",
                       failure.tunable(), failure.causes());
}

std::optional<AutotuneError> RetryBackoff::waiting(const std::string& key,
                                                   Clock::time_point now) const {
  if (!any()) return std::nullopt;
  std::lock_guard lock(mutex_);
  const auto at = keys_.find(key);
  if (at == keys_.end() || now >= at->second.retry_at) return std::nullopt;
  return saying_when(at->second, now);
}

void RetryBackoff::throw_if_waiting(const std::string& key, Clock::time_point now) const {
  if (auto failure = waiting(key, now)) throw std::move(*failure);
}

AutotuneError RetryBackoff::failed(const std::string& key, const AutotuneError& failure,
                                   Clock::time_point now) {
  std::lock_guard lock(mutex_);
  const auto at = keys_.find(key);
  // A failure in a row (the key was tried again after its back-off) doubles the wait.
  const Clock::duration delay = at == keys_.end() ? first_ : std::min(at->second.delay * 2, most_);
  Waiting waiting{failure, now + delay, delay};
  AutotuneError thrown = saying_when(waiting, now);
  keys_.insert_or_assign(key, std::move(waiting));
  any_.store(true, std::memory_order_relaxed);
  return thrown;
}

std::optional<AutotuneError> RetryBackoff::of_the_moment(const std::string& key,
                                                         const Decision& decided) {
  if (!decided.failed() || lasting(*decided.failure)) return std::nullopt;
  return failed(key, *decided.failure);
}

Clock::duration RetryBackoff::delay(const std::string& key) const {
  std::lock_guard lock(mutex_);
  const auto at = keys_.find(key);
  return at == keys_.end() ? Clock::duration::zero() : at->second.delay;
}

void RetryBackoff::forget(const std::string& key) {
  if (!any()) return;
  std::lock_guard lock(mutex_);
  keys_.erase(key);
  any_.store(!keys_.empty(), std::memory_order_relaxed);
}

void RetryBackoff::clear() {
  std::lock_guard lock(mutex_);
  keys_.clear();
  any_.store(false, std::memory_order_relaxed);
}

}  // namespace tunekit::detail
