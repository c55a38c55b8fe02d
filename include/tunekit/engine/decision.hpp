// Decision: what a Tuner knows of one key, and which of four states it is in. The Tuner serves
// calls from it (tuner.hpp); the name-level code makes it from reports and stored results
// (persistence.hpp); a background tuning serves a provisional one (background_tuning.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "tunekit/detail/call.hpp"
#include "tunekit/error.hpp"

namespace tunekit {

/// How many times a winner must fail on calls that another candidate then served before it is
/// demoted (in memory and in the persistent store). One failure never demotes: it may be a busy
/// device or an input that only this call has.
inline constexpr unsigned demote_after_failures = 3;

}  // namespace tunekit

namespace tunekit::detail {

/// The states of a decision.
enum class DecisionState : std::uint8_t {
  /// Tuned or loaded: the winner, and the working candidates behind it fastest first.
  decided,
  /// Every candidate failed: its error is thrown again at once on every call.
  failed,
  /// Only the timer failed: the first candidate that ran serves, for this process only (never
  /// stored).
  unmeasured,
  /// The key is being tuned in the background: the candidates the plan measures first serve
  /// meanwhile (never failed, never stored).
  provisional,
};

/// The winner of one key and the working candidates behind it; or, when every candidate failed,
/// the error that says so.
struct Decision {
  DecisionState state = DecisionState::decided;
  std::uint32_t index = 0;
  CandidateLocation location;  // set by the tuner, which knows the set
  std::vector<std::uint32_t> ranking;
  std::vector<AutotuneError> failures;           // of candidates demoted after tuning
  std::shared_ptr<const AutotuneError> failure;  // state failed
  // Where the result came from (CallReport::source): a literal, or text the tuner's records keep
  // for their lifetime (Persistence::intern).
  std::string_view source = "computed";
  // Loaded from a shared store or an imported bundle: its winner serves once its output passed
  // the set's validator on this machine (stored_decision.hpp).
  bool from_elsewhere = false;
  // Failures of the winner on calls that another candidate then served; guarded by the tuner's
  // decisions mutex (readers of its lock-free map never touch it).
  mutable unsigned strikes = 0;

  bool failed() const noexcept { return state == DecisionState::failed; }
};

/// `decision` with its winner's location in `set` (a failed one has none).
template <class Set>
Decision located(const Set& set, Decision decision) {
  if (!decision.failed()) decision.location = set.locate(decision.index);
  return decision;
}

/// A decision failed with `failure`.
Decision failed_with(AutotuneError failure);

/// What replaces `current` once its winner `failed` is demoted for `failure`: the rest of its
/// ranking, with no location yet; nothing when no other candidate is left.
std::optional<Decision> demoted(const Decision& current, std::uint32_t failed,
                                AutotuneError failure);

}  // namespace tunekit::detail
