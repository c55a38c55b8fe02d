// A tuner's reports and store, by candidate name (engine/persistence.hpp).
#include "tunekit/engine/persistence.hpp"

#include <algorithm>
#include <exception>
#include <utility>

#include "tunekit/log.hpp"

namespace tunekit::detail {

bool names_candidate(const CandidateNames& names, const AutotuneOutcome& outcome) {
  return outcome.index < names.size() && names.name(outcome.index) == outcome.name;
}

namespace {
// The kinds of failure that may pass (of_the_moment's first half): the one list of them.
bool kind_may_pass(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::allocation:
    case ErrorKind::out_of_resources:  // NVIDIA reports memory held by others as this too
    case ErrorKind::device:
    case ErrorKind::cache:
    case ErrorKind::settings:
    case ErrorKind::invalid_measurement:
      return true;
    default:
      return false;
  }
}

}  // namespace

bool of_the_moment(const AutotuneError& failure) {
  return !failure.beyond_device_limits() && kind_may_pass(failure.kind());
}

bool lasting(const AutotuneError& failure) {
  if (failure.causes().empty()) return false;
  return std::none_of(failure.causes().begin(), failure.causes().end(),
                      [](const AutotuneError& cause) { return of_the_moment(cause); });
}

bool worth_storing(const Decision& decision) {
  return decision.state == DecisionState::decided ||
         (decision.failed() && lasting(*decision.failure));
}

namespace {
// A store's lock that fails is no reason not to tune: said, then tuned without it.
void warn_tuning_without_lock(const std::exception& e) {
  warn(std::string("tunekit: could not take the tuning lock, tuning anyway: ") + e.what());
}
}  // namespace

std::unique_ptr<TuningLock> Persistence::lock_for_tuning(const EntryId& id) const {
  try {
    return store_->lock_for_tuning(id);
  } catch (const std::exception& e) {
    warn_tuning_without_lock(e);
    return nullptr;
  }
}

TuningLockAttempt Persistence::try_lock_for_tuning(
    const EntryId& id, std::chrono::steady_clock::time_point waiting_since) const {
  try {
    return store_->try_lock_for_tuning(id, waiting_since);
  } catch (const std::exception& e) {
    warn_tuning_without_lock(e);
    return {};
  }
}

std::string Persistence::source_of(const StoredResult& stored) {
  std::string source = stored.source.empty() ? "persistent cache" : stored.source;
  if (!stored.imported_from.empty()) {
    source = "bundle " + printable(stored.imported_from, 255) + ", in the " + source;
  }
  return source;
}

std::string_view Persistence::intern(const std::string& text) {
  std::lock_guard lock(sources_mutex_);
  for (const auto& known : sources_) {
    if (known == text) return known;
  }
  return sources_.emplace_back(text);
}

std::optional<Decision> Persistence::load(const EntryId& id, const CandidateNames& names,
                                          bool report_mismatch) {
  std::optional<StoredResult> stored;
  try {
    stored = store_->load(id);
  } catch (const std::exception& e) {
    warn(std::string("tunekit: cache read failed, tuning instead: ") + e.what());
  }
  if (!stored) return std::nullopt;
  const auto mismatch = [&]() -> std::optional<Decision> {
    if (report_mismatch) {
      warn("tunekit: cache entry for " + op_ + " [" + id.key +
           "] does not match its set; re-tuning");
    }
    return std::nullopt;
  };
  TuningReport report{op_, id.key, device_, 0, stored->outcomes};
  rank(report.outcomes);
  report.metric_names = stored->metric_names;
  report.source = source_of(*stored);
  if (stored->winner.empty()) {  // a remembered failure: every candidate failed
    const bool same_set =
        report.outcomes.size() == names.size() &&
        std::all_of(report.outcomes.begin(), report.outcomes.end(), [&](const auto& outcome) {
          return !outcome.ok() && names_candidate(names, outcome);
        });
    if (!same_set) return mismatch();
    Decision failed = from_report(report, names);
    failed.source = intern(report.source);
    warn(about(op_, id.key) +
         "every candidate failed in an earlier tuning "
         "(remembered in the persistent cache until the set changes: its candidates' names, "
         "kernels or version; `tunekit cache clear " +
         op_ + "` tries again)");
    remember(std::move(report), /*replace=*/false);
    return failed;
  }
  Decision decision;
  for (const auto& outcome : report.outcomes) {
    // An outcome that no longer names the same candidate is stale: ignore it.
    if (outcome.ok() && names_candidate(names, outcome)) {
      decision.ranking.push_back(static_cast<std::uint32_t>(outcome.index));
    }
  }
  if (decision.ranking.empty() || decision.ranking.front() != stored->winner_index ||
      names.name(stored->winner_index) != stored->winner) {
    return mismatch();
  }
  decision.index = decision.ranking.front();
  decision.source = intern(report.source);
  if (stored->from_elsewhere()) {
    decision.from_elsewhere = true;
    std::lock_guard lock(unverified_mutex_);
    if (rejected_.count({id.key, id.checksum, stored->winner}) != 0) return std::nullopt;
    unverified_.insert_or_assign({id.key, id.checksum}, *stored);
  }
  if (log_ >= LogLevel::debug) {
    inform(about(op_, id.key) + "'" + stored->winner + "' from the " + report.source + "\n");
  }
  // Not over the report of this process's own tuning, which another thread may have just
  // saved and kept (lookups run beside tunings).
  remember(std::move(report), /*replace=*/false);
  return decision;
}

void Persistence::adopt(const EntryId& id) {
  std::optional<StoredResult> result;
  {
    std::lock_guard lock(unverified_mutex_);
    const auto found = unverified_.find({id.key, id.checksum});
    if (found == unverified_.end()) return;
    result = std::move(found->second);
    unverified_.erase(found);
  }
  if (store_ && result->shared) store_->adopt(id, *result);  // a bundle's is on disk already
}

void Persistence::reject(const EntryId& id) {
  try {
    std::lock_guard lock(unverified_mutex_);
    const auto found = unverified_.find({id.key, id.checksum});
    if (found == unverified_.end()) return;
    rejected_.emplace(id.key, id.checksum, found->second.winner);
    unverified_.erase(found);
  } catch (const std::exception&) {  // no memory to remember it: it is checked again next time
  }
}

void Persistence::persist(const EntryId& id, const Decision& decision,
                          const CandidateNames& names) {
  if (!store_) return;
  // A failed key is stored with no winner: every outcome failed (see load()).
  StoredResult result{
      decision.failed() ? std::string() : names.name(decision.index), decision.index, {}};
  if (auto known = report(id.key)) {
    result.outcomes = known->outcomes;
    result.metric_names = known->metric_names;
  }
  // Candidates that failed after tuning are stored as failed, so a reload ranks them out.
  for (const auto& failure : decision.failures) {
    for (auto& outcome : result.outcomes) {
      if (outcome.name == failure.tunable() && outcome.ok()) {
        outcome.status = OutcomeStatus::failed;
        outcome.error = failure;
      }
    }
  }
  try {
    store_->save(id, result);
  } catch (const std::exception& e) {
    warn(std::string("tunekit: cache write failed, result kept in memory only: ") + e.what());
  }
}

Decision Persistence::from_report(const TuningReport& report, const CandidateNames& names) const {
  Decision decision;
  std::vector<AutotuneError> reasons;
  for (const auto& outcome : report.outcomes) {
    if (outcome.ok()) {
      decision.ranking.push_back(static_cast<std::uint32_t>(outcome.index));
    } else if (outcome.error) {
      reasons.push_back(*outcome.error);
    }
  }
  if (decision.ranking.empty()) {
    // As CubeCL: when the timer failed, those candidates ran; serve the first of them (in set
    // order), unmeasured, for this process only.
    for (const auto& outcome : report.outcomes) {
      if (outcome.error && outcome.error->kind() == ErrorKind::invalid_measurement) {
        decision.ranking.push_back(static_cast<std::uint32_t>(outcome.index));
      }
    }
    std::sort(decision.ranking.begin(), decision.ranking.end());
    if (!decision.ranking.empty()) {
      decision.state = DecisionState::unmeasured;
      warn("tunekit: " + op_ + " [" + report.key +
           "]: the timer failed for every candidate "
           "that ran; using '" +
           names.name(decision.ranking.front()) + "' unmeasured (not saved to disk)");
    }
  }
  if (decision.ranking.empty()) {
    // Remembered: every later call throws the same error at once instead of tuning again.
    decision.state = DecisionState::failed;
    decision.failure = std::make_shared<const AutotuneError>(
        names.size() == 0 ? AutotuneError(ErrorKind::no_valid_candidate,
                                          "the tunable set of '" + op_ + "' is empty")
                          : AutotuneError(ErrorKind::no_valid_candidate,
                                          "no candidate of '" + op_ + "' works for " + report.key,
                                          {}, std::move(reasons)));
    return decision;
  }
  decision.index = decision.ranking.front();
  return decision;
}

std::vector<AutotuneOutcome> Persistence::resumable(std::vector<AutotuneOutcome> recorded,
                                                    const CandidateNames& names,
                                                    const std::string& key_text) const {
  std::vector<bool> seen(names.size());
  for (const auto& outcome : recorded) {
    if (!names_candidate(names, outcome) || seen[outcome.index] ||
        outcome.status == OutcomeStatus::skipped) {
      warn(about(op_, key_text) +
           "the in-progress record does not match the tunable set; the tuning starts over");
      return {};
    }
    seen[outcome.index] = true;
  }
  if (!recorded.empty() && log_ >= LogLevel::info) {
    inform(about(op_, key_text) + "resuming an interrupted tuning: " +
           std::to_string(recorded.size()) + " candidates were measured before\n");
  }
  return recorded;
}

std::vector<std::size_t> Persistence::known_winners(const std::string& key_text,
                                                    std::uint64_t checksum,
                                                    const CandidateNames& names) const {
  constexpr std::size_t most = 4;
  std::vector<std::string> winners;
  {
    std::lock_guard lock(reports_mutex_);
    for (const auto& [other, report] : reports_) {
      if (other == key_text) continue;
      if (const AutotuneOutcome* winner = report.winner()) winners.push_back(winner->name);
    }
  }
  if (store_) {
    for (auto& name : store_->winners(device_, op_, checksum)) winners.push_back(std::move(name));
  }
  std::vector<std::size_t> indices;
  for (const auto& winner : winners) {
    std::optional<std::size_t> index;
    for (std::size_t i = 0; i < names.size() && !index; ++i) {
      if (names.name(i) == winner) index = i;
    }
    if (index && std::find(indices.begin(), indices.end(), *index) == indices.end()) {
      indices.push_back(*index);
    }
    if (indices.size() == most) break;
  }
  return indices;
}

std::vector<std::size_t> Persistence::built_in_this_process(const CandidateNames& names) const {
  std::vector<std::size_t> indices;
  std::lock_guard lock(reports_mutex_);
  for (const auto& [key_text, report] : reports_) {
    if (!(report.tuning_seconds > 0)) continue;
    for (const auto& outcome : report.outcomes) {
      if (outcome.ok() && names_candidate(names, outcome)) indices.push_back(outcome.index);
    }
  }
  return indices;
}

void Persistence::finished(const TuningReport& report) {
  if (log_ >= LogLevel::info) {
    inform(format_report(report,
                         log_ >= LogLevel::debug ? ReportDetail::full : ReportDetail::summary));
  }
  remember(report);
}

void Persistence::remember(TuningReport report, bool replace) {
  std::lock_guard lock(reports_mutex_);
  if (replace) {
    reports_.insert_or_assign(report.key, std::move(report));
  } else {
    reports_.try_emplace(report.key, std::move(report));
  }
}

std::optional<TuningReport> Persistence::report(const std::string& key_text) const {
  std::lock_guard lock(reports_mutex_);
  auto it = reports_.find(key_text);
  if (it == reports_.end()) return std::nullopt;
  return it->second;
}

std::vector<TuningReport> Persistence::reports() const {
  std::lock_guard lock(reports_mutex_);
  std::vector<TuningReport> all;
  for (const auto& [key, report] : reports_) all.push_back(report);
  return all;
}

}  // namespace tunekit::detail
