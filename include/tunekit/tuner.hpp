// Tuner: one device's tuning state for one op: the in-memory cache of winners, the persistent
// store, and the procedure that measures candidates and picks the winner.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <chrono>
#include <cstdint>
#include <exception>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tunekit/benchmark.hpp"
#include "tunekit/build_pool.hpp"
#include "tunekit/call_report.hpp"
#include "tunekit/detail/insert_only_map.hpp"
#include "tunekit/device_id.hpp"
#include "tunekit/error.hpp"
#include "tunekit/key.hpp"
#include "tunekit/outcome.hpp"
#include "tunekit/result.hpp"
#include "tunekit/result_store.hpp"
#include "tunekit/search.hpp"
#include "tunekit/space.hpp"
#include "tunekit/settings.hpp"
#include "tunekit/timing_client.hpp"
#include "tunekit/tunable_set.hpp"

namespace tunekit {

/// What a call through `set` returns once a tunekit::Result is unwrapped.
template <class Set, class Client, class... Inputs>
using execute_result_t = unwrapped_result_t<decltype(std::declval<const Set&>().call(
    CandidateLocation{}, std::declval<Client&>(), std::declval<Inputs&>()...))>;

/// Writes a warning line to stderr; the library's single place for it.
void warn(const std::string& message);

/// The AutotuneError an exception_ptr stands for (see error_from_current_exception).
AutotuneError error_from_exception(std::exception_ptr failure, const std::string& tunable);

/// How many times a winner must fail on calls that another candidate then served before it is
/// demoted (in memory and in the persistent store). One failure never demotes: it may be a busy
/// device or an input that only this call has.
inline constexpr unsigned demote_after_failures = 3;

/// Per-device tuning state of one op.
template <AutotuneKey Key>
class Tuner {
 public:
  Tuner(std::string op, DeviceId device, Settings settings, std::shared_ptr<ResultStore> store)
      : op_(std::move(op)),
        device_(std::move(device)),
        settings_(std::move(settings)),
        store_(std::move(store)) {}

  /// Runs the winner for `key` on `inputs`, tuning first on a miss. Hot path (winner known):
  /// one lock-free lookup and one indirect call. A miss looks in the persistent store without
  /// waiting for any tuning; only tuning itself is serialised per device (a key that another
  /// thread is tuning waits for that tuning).
  ///
  /// What leaves it: the winner's own result; the AutotuneError that decided the key (every
  /// candidate failed in tuning: thrown again at once on every later call, without tuning again);
  /// AutotuneError(invalid_key) for a key that cannot identify a tuning (a NaN field); and, when
  /// the winner and every other working candidate fail on the caller's inputs, the winner's own
  /// exception unchanged (the caller's inputs are at fault, not the candidates: the ranking is
  /// kept). Exceptions of the caller's own code (key generator, progress hook) pass unchanged.
  template <TimingClient Client, class Set, class... Inputs>
  execute_result_t<Set, Client, Inputs...> execute(Client& client, const Set& set, const Key& key,
                                                   Inputs&... inputs) {
    if (const Decision* decision = decisions_.find(key)) {
      note(CallPath::dispatched, decision->index);
      return serve(*decision, client, set, key, inputs...);
    }
    return serve(obtain(client, set, key, inputs...), client, set, key, inputs...);
  }

  /// The winner's location for `key`, tuning first on a miss (for prepared dispatch).
  template <TimingClient Client, class Set, class... Inputs>
  CandidateLocation winner(Client& client, const Set& set, const Key& key, Inputs&... inputs) {
    const Decision* decision = decisions_.find(key);
    if (decision == nullptr) decision = &obtain(client, set, key, inputs...);
    if (decision->failed) throw *decision->failed;
    return decision->location;
  }

  /// The report of the tuning (or cache load) that decided `key`, if any.
  std::optional<TuningReport> report(const Key& key) const {
    std::lock_guard lock(reports_mutex_);
    auto it = reports_.find(key_to_string(key));
    if (it == reports_.end()) return std::nullopt;
    return it->second;
  }

  /// Every report this tuner holds, by key.
  std::vector<TuningReport> reports() const {
    std::lock_guard lock(reports_mutex_);
    std::vector<TuningReport> all;
    for (const auto& [key, report] : reports_) all.push_back(report);
    return all;
  }

  /// Forgets the in-memory winners and remembered failures (the persistent store keeps its
  /// entries).
  void clear_memory() {
    std::lock_guard lock(decisions_mutex_);
    decisions_.clear();
  }

  const DeviceId& device() const noexcept { return device_; }
  const std::string& op() const noexcept { return op_; }
  const Settings& settings() const noexcept { return settings_; }

 private:
  /// The winner of one key and the working candidates behind it, fastest first; or, when every
  /// candidate failed, the error that says so (thrown again at once on every call).
  struct Decision {
    std::uint32_t index = 0;
    CandidateLocation location;
    std::vector<std::uint32_t> ranking;
    std::vector<AutotuneError> failures;  // of candidates demoted after tuning
    std::shared_ptr<const AutotuneError> failed;
    bool unmeasured = false;  // only the timer failed: served, never stored (from_report)
    // Failures of the winner on calls that another candidate then served; guarded by
    // decisions_mutex_ (readers of the lock-free map never touch it).
    mutable unsigned strikes = 0;
  };

  template <class Client, class Set, class... Inputs>
  static execute_result_t<Set, Client, Inputs...> run(const Decision& decision, Client& client,
                                                      const Set& set, Inputs&... inputs) {
    return call_unwrapped(decision.location, client, set, inputs...);
  }

  template <class Client, class Set, class... Args>
  static execute_result_t<Set, Client, Args...> call_unwrapped(CandidateLocation where,
                                                               Client& client, const Set& set,
                                                               Args&... args) {
    using Raw = decltype(set.call(where, client, args...));
    if constexpr (is_result_v<Raw>) {
      Raw result = set.call(where, client, args...);
      if (!result) throw result.error();
      if constexpr (!std::is_void_v<typename Raw::value_type>) return std::move(result).value();
    } else {
      return set.call(where, client, args...);
    }
  }

  // Runs `decision`'s winner; on a failure, the rest of its ranking for this call (recover).
  template <class Client, class Set, class... Inputs>
  execute_result_t<Set, Client, Inputs...> serve(const Decision& decision, Client& client,
                                                 const Set& set, const Key& key,
                                                 Inputs&... inputs) {
    if (decision.failed) {
      note(CallPath::failed, decision.index);
      throw *decision.failed;
    }
    try {
      return run(decision, client, set, inputs...);
    } catch (...) {
      return recover(std::current_exception(), decision, client, set, key, inputs...);
    }
  }

  // The decision for a key that missed in memory: from the persistent store if it has it (no
  // tuning lock: a cached key never waits for another key's tuning), else by tuning under the
  // device's tuning lock (after which the key may turn out decided by the thread before us).
  template <class Client, class Set, class... Inputs>
  const Decision& obtain(Client& client, const Set& set, const Key& key, Inputs&... inputs) {
    if (auto problem = key_problem(key)) {
      throw AutotuneError(ErrorKind::invalid_key,
                          "a key of '" + op_ + "' cannot identify a tuning: " + *problem);
    }
    if (set.size() == 1) {  // nothing to choose: no benchmark, nothing stored (as in CubeCL)
      Decision only;
      only.location = set.locate(0);
      only.ranking = {0};
      note(CallPath::dispatched, 0);
      return keep(key, std::move(only));
    }
    if (store_) {
      if (auto stored = load(set, entry_id(set, key))) {
        note(CallPath::loaded, stored->index);
        return keep(key, std::move(*stored));
      }
    }
    std::lock_guard tuning(tuning_mutex_);  // one tuning at a time per device: fair timings
    if (const Decision* decision = decisions_.find(key)) {
      note(CallPath::dispatched, decision->index);
      return *decision;
    }
    return keep(key, decide(client, set, key, inputs...));
  }

  // Stores `decision` for `key` unless another thread stored one first; returns the kept one.
  const Decision& keep(const Key& key, Decision decision) {
    std::lock_guard lock(decisions_mutex_);
    if (const Decision* existing = decisions_.find(key)) return *existing;
    return *decisions_.insert(key, std::move(decision));
  }

  // The winner failed on the caller's inputs. For this call only, the other working candidates
  // are tried in ranking order. If one serves the call, the winner gets a strike; after
  // `demote_after_failures` strikes it is demoted, in memory and on disk. If none serves it,
  // the inputs are at fault: the winner's own exception is rethrown and the ranking kept.
  template <class Client, class Set, class... Inputs>
  execute_result_t<Set, Client, Inputs...> recover(std::exception_ptr failure,
                                                   const Decision& decision, Client& client,
                                                   const Set& set, const Key& key,
                                                   Inputs&... inputs) {
    using Output = execute_result_t<Set, Client, Inputs...>;
    // Recording the strike never runs the op again nor fails a call that was served.
    const auto record_strike = [&](std::uint32_t served) noexcept {
      try {
        strike(failure, decision.index, served, set, key);
      } catch (...) {
      }
    };
    for (const std::uint32_t other : decision.ranking) {
      if (other == decision.index) continue;
      if constexpr (std::is_void_v<Output>) {
        try {
          call_unwrapped(set.locate(other), client, set, inputs...);
        } catch (...) {
          continue;
        }
        record_strike(other);
        note(CallPath::fell_back, other);
        return;
      } else {
        std::optional<Output> output;
        try {
          output.emplace(call_unwrapped(set.locate(other), client, set, inputs...));
        } catch (...) {
          continue;
        }
        record_strike(other);
        note(CallPath::fell_back, other);
        return std::move(*output);
      }
    }
    note(CallPath::failed, decision.index);
    std::rethrow_exception(failure);
  }

  // `failed`, the winner of `key`, failed on inputs that `served` handled.
  template <class Set>
  void strike(std::exception_ptr failure, std::uint32_t failed, std::uint32_t served,
              const Set& set, const Key& key) {
    const AutotuneError error = error_from_exception(failure, set.name(failed));
    std::optional<Decision> demoted;
    {
      std::lock_guard lock(decisions_mutex_);
      const Decision* current = decisions_.find(key);
      if (current == nullptr || current->index != failed) return;  // already moved on
      if (++current->strikes < demote_after_failures) {
        if (settings_.log >= LogLevel::info) {
          warn("tunekit: " + op_ + " [" + key_to_string(key) + "]: winner '" + set.name(failed) +
               "' failed on this call (" + error.message() + "); '" + set.name(served) +
               "' served it instead");
        }
        return;
      }
      Decision moved = *current;
      moved.strikes = 0;
      moved.failures.push_back(error);
      std::erase(moved.ranking, failed);
      if (moved.ranking.empty()) return;  // a newer decision without `served`: keep the winner
      moved.index = moved.ranking.front();
      moved.location = set.locate(moved.index);
      decisions_.insert(key, moved);
      demoted = std::move(moved);
    }
    warn("tunekit: " + op_ + " [" + key_to_string(key) + "]: winner '" + set.name(failed) +
         "' failed on real inputs " + std::to_string(demote_after_failures) +
         " times that another candidate served (last: " + error.message() +
         "); demoted, now '" + set.name(demoted->index) + "'");
    persist(set, key, *demoted);
  }

  template <class Set>
  EntryId entry_id(const Set& set, const Key& key) {
    std::call_once(checksum_once_, [&] { checksum_ = stable_hash(set.checksum_text()); });
    return EntryId{device_.identity(), op_, key_to_string(key), checksum_};
  }

  // Called with tuning_mutex_ held: from the store if it has the key, else by tuning.
  template <class Client, class Set, class... Inputs>
  Decision decide(Client& client, const Set& set, const Key& key, Inputs&... inputs) {
    if (!store_) {
      Decision decision = from_report(set, tune(client, set, key, inputs...));
      note(CallPath::tuned, decision.index);  // after the tuning: its candidates may call ops
      return decision;
    }
    const EntryId id = entry_id(set, key);  // obtain() looked in the store just before
    std::unique_ptr<TuningLock> process_lock;
    try {
      process_lock = store_->lock_for_tuning(id);  // another process may be tuning this key
    } catch (const std::exception& e) {
      warn(std::string("tunekit: could not take the tuning lock, tuning anyway: ") + e.what());
    }
    // Again: another process may have tuned it meanwhile (a mismatch was reported just before).
    if (auto stored = load(set, id, /*report_mismatch=*/false)) {
      note(CallPath::loaded, stored->index);
      return *stored;
    }
    Decision decision = from_report(set, tune(client, set, key, inputs...));
    note(CallPath::tuned, decision.index);
    if (!decision.unmeasured && (!decision.failed || lasting(*decision.failed))) {
      persist(set, key, decision);
    }
    return decision;
  }

  template <class Set>
  std::optional<Decision> load(const Set& set, const EntryId& id, bool report_mismatch = true) {
    std::optional<StoredResult> stored;
    try {
      stored = store_->load(id);
    } catch (const std::exception& e) {
      warn(std::string("tunekit: cache read failed, tuning instead: ") + e.what());
    }
    if (!stored) return std::nullopt;
    TuningReport report{op_, id.key, device_.identity(), 0, stored->outcomes};
    rank(report.outcomes);
    if (stored->winner.empty()) {  // a remembered failure: every candidate failed
      const bool same_set =
          report.outcomes.size() == set.size() &&
          std::all_of(report.outcomes.begin(), report.outcomes.end(), [&](const auto& outcome) {
            return !outcome.ok() && outcome.index < set.size() &&
                   set.name(outcome.index) == outcome.name;
          });
      if (!same_set) {
        if (report_mismatch) {
          warn("tunekit: cache entry for " + op_ + " [" + id.key + "] does not match its set; re-tuning");
        }
        return std::nullopt;
      }
      Decision failed = from_report(set, report);
      warn("tunekit: " + op_ + " [" + id.key + "]: every candidate failed in an earlier tuning "
           "(remembered in the persistent cache until the set changes; `tunekit cache clear " +
           op_ + "` tries again)");
      remember(std::move(report), /*replace=*/false);
      return failed;
    }
    Decision decision;
    for (const auto& outcome : report.outcomes) {
      // An outcome that no longer names the same candidate is stale: ignore it.
      if (outcome.ok() && outcome.index < set.size() && set.name(outcome.index) == outcome.name) {
        decision.ranking.push_back(static_cast<std::uint32_t>(outcome.index));
      }
    }
    if (decision.ranking.empty() || decision.ranking.front() != stored->winner_index ||
        set.name(stored->winner_index) != stored->winner) {
      if (report_mismatch) {
        warn("tunekit: cache entry for " + op_ + " [" + id.key + "] does not match its set; re-tuning");
      }
      return std::nullopt;
    }
    decision.index = decision.ranking.front();
    decision.location = set.locate(decision.index);
    if (settings_.log >= LogLevel::debug) {
      std::clog << "tunekit: " << op_ << " [" << id.key << "]: '" << stored->winner
                << "' from the persistent cache\n";
    }
    // Not over the report of this process's own tuning, which another thread may have just
    // saved and kept (lookups run beside tunings).
    remember(std::move(report), /*replace=*/false);
    return decision;
  }

  // Whether a tuning in which every candidate failed is worth remembering on disk: not when a
  // failure may come from the moment (memory, resources, device, timer) rather than from the
  // candidates.
  // It is retried when the set changes (its checksum is part of the entry's identity) or the
  // cache is cleared.
  static bool lasting(const AutotuneError& failure) {
    if (failure.causes().empty()) return false;
    return std::none_of(failure.causes().begin(), failure.causes().end(), [](const auto& cause) {
      switch (cause.kind()) {
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
    });
  }

  template <class Set>
  void persist(const Set& set, const Key& key, const Decision& decision) {
    if (!store_) return;
    // A failed key is stored with no winner: every outcome failed (see load()).
    StoredResult result{decision.failed ? std::string() : set.name(decision.index),
                        decision.index, {}};
    if (auto known = report(key)) result.outcomes = known->outcomes;
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
      store_->save(entry_id(set, key), result);
    } catch (const std::exception& e) {
      warn(std::string("tunekit: cache write failed, result kept in memory only: ") + e.what());
    }
  }

  template <class Set>
  Decision from_report(const Set& set, const TuningReport& report) {
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
      decision.unmeasured = !decision.ranking.empty();
      if (decision.unmeasured) {
        warn("tunekit: " + op_ + " [" + report.key + "]: the timer failed for every candidate "
             "that ran; using '" + set.name(decision.ranking.front()) +
             "' unmeasured (not saved to disk)");
      }
    }
    if (decision.ranking.empty()) {
      // Remembered: every later call throws the same error at once instead of tuning again.
      decision.failed = std::make_shared<const AutotuneError>(
          set.size() == 0
              ? AutotuneError(ErrorKind::no_valid_candidate,
                              "the tunable set of '" + op_ + "' is empty")
              : AutotuneError(ErrorKind::no_valid_candidate,
                              "no candidate of '" + op_ + "' works for " + report.key, {},
                              std::move(reasons)));
      return decision;
    }
    decision.index = decision.ranking.front();
    decision.location = set.locate(decision.index);
    return decision;
  }

  // Candidates grouped into priority levels, best first; a level is only measured when every
  // candidate of the levels before it failed. Negatively prioritised ones come last of all.
  template <class Set>
  std::vector<std::vector<std::size_t>> plan(const Set& set, const Key& key,
                                             std::vector<AutotuneOutcome>& outcomes) {
    struct Planned {
      std::size_t index;
      CandidatePriority priority;
    };
    std::vector<Planned> eligible, skipped;
    for (std::size_t i = 0; i < set.size(); ++i) {
      try {
        const CandidatePriority p = set.priority(i, key);
        (p.skipped() ? skipped : eligible).push_back({i, p});
      } catch (...) {
        outcomes[i].status = OutcomeStatus::failed;
        outcomes[i].error = error_from_exception(std::current_exception(), outcomes[i].name);
      }
    }
    const auto by_priority = [](const Planned& a, const Planned& b) {
      return std::tie(b.priority.group, b.priority.own) < std::tie(a.priority.group, a.priority.own);
    };
    std::stable_sort(eligible.begin(), eligible.end(), by_priority);
    std::vector<std::vector<std::size_t>> levels;
    for (std::size_t i = 0; i < eligible.size(); ++i) {
      if (i == 0 || by_priority(eligible[i - 1], eligible[i])) levels.emplace_back();
      levels.back().push_back(eligible[i].index);
    }
    if (!skipped.empty()) {
      levels.emplace_back();
      for (const auto& s : skipped) levels.back().push_back(s.index);
    }
    return levels;
  }

  template <class Client, class Set, class... Inputs>
  TuningReport tune(Client& client, const Set& set, const Key& key, Inputs&... inputs) {
    const auto started = std::chrono::steady_clock::now();
    TuningReport report{op_, key_to_string(key), device_.identity(), 0, {}};
    std::vector<AutotuneOutcome> outcomes(set.size());
    for (std::size_t i = 0; i < set.size(); ++i) {
      outcomes[i].name = set.name(i);
      outcomes[i].index = i;
    }
    const auto levels = plan(set, key, outcomes);
    const BenchmarkSettings bench = settings_.benchmark_settings();
    TuningState<Client, Set, Inputs...> state;
    double leader = std::numeric_limits<double>::infinity();
    std::size_t leader_index = 0;
    TuningProgress progress;
    progress.op = op_;
    progress.key = report.key;
    // The candidates about to be measured are built ahead on other threads (build_pool.hpp).
    std::optional<BuildAhead> ahead;
    if constexpr (Set::template preparable<Client, Inputs...>) {
      bool quiet = false;
      if constexpr (requires { client.measures_on_host_cores(); }) {
        quiet = client.measures_on_host_cores();
      }
      ahead.emplace(settings_.build_thread_count(), quiet, [&](std::size_t i) {
        if constexpr (HasDeviceLimits<Client>) {
          if (set.exceeds(i, client.limits())) return;  // measure_one skips it
        }
        set.prepare(i, client, std::as_const(inputs)...);
      });
    }
    auto measure_one = [&](std::size_t i) {
      if (ahead) ahead->before_measuring(i);
      [&] {
        if constexpr (HasDeviceLimits<Client>) {
          std::optional<std::string> reason;
          try {
            reason = set.exceeds(i, client.limits());
          } catch (...) {  // the set's own limits rule threw (e.g. it names no such parameter)
            const auto cause = error_from_exception(std::current_exception(), outcomes[i].name);
            outcomes[i].status = OutcomeStatus::failed;
            outcomes[i].error = AutotuneError(
                cause.kind(), "the limits rule failed: " + cause.message(), outcomes[i].name);
            return;
          }
          if (reason) {
            outcomes[i].status = OutcomeStatus::failed;
            outcomes[i].error =
                AutotuneError(ErrorKind::out_of_resources, *reason, outcomes[i].name);
            return;
          }
        }
        outcomes[i] = measure(i, client, set, key, bench, leader, state, inputs...);
        if (outcomes[i].ok() && outcomes[i].median < leader) {
          leader = outcomes[i].median;
          leader_index = i;
        }
      }();
      if (settings_.on_progress) {
        progress.total = std::max(progress.total, ++progress.done);
        progress.elapsed_seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        if (std::isfinite(leader)) {
          progress.best = outcomes[leader_index].name;
          progress.best_seconds = leader;
        }
        settings_.on_progress(std::as_const(progress));
      }
    };
    // Where other keys of this op on this device ended: their winners are measured first.
    const std::vector<std::size_t> known = known_winners(set, key, report.key);
    for (std::size_t i : known) report.neighbour_starts.push_back(outcomes[i].name);
    const auto is_measured = [&](std::size_t i) {
      return outcomes[i].status != OutcomeStatus::skipped;
    };
    bool found = false;
    for (const auto& level : levels) {
      if (settings_.on_progress) progress.total += planned_measurements(set, level);
      // Single tunables first: their times make racing inside the spaces effective.
      std::map<std::size_t, std::vector<std::size_t>> space_members;  // entry -> candidates
      std::vector<std::size_t> singles;
      for (std::size_t i : level) {
        const auto entry = set.locate(i).entry;
        if (set.space_of_entry(entry) != nullptr) {
          space_members[entry].push_back(i);
        } else {
          singles.push_back(i);
        }
      }
      if (ahead) ahead->plan(singles);
      for (std::size_t i : singles) measure_one(i);
      // Then every space's start points (its own and the neighbours' winners), so that the
      // spaces are searched best first: a family whose best is far behind the leader is then
      // abandoned early (SearchBudget::abandon_after) instead of being searched in full.
      std::vector<std::pair<double, std::size_t>> order;  // (best start time, entry)
      for (const auto& [entry, members] : space_members) {
        double best = std::numeric_limits<double>::infinity();
        if (members.size() == set.space_of_entry(entry)->size()) {
          const auto starts = starts_of(set, entry, known);
          if (ahead) ahead->plan(starts);
          for (std::size_t i : starts) {
            if (!is_measured(i)) measure_one(i);
            if (outcomes[i].ok()) best = std::min(best, outcomes[i].median);
          }
        }
        order.emplace_back(best, entry);
      }
      std::stable_sort(order.begin(), order.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      for (const auto& [best, entry] : order) {
        search_space(set, entry, space_members[entry], report.key, measure_one, outcomes, known,
                     leader, ahead ? &*ahead : nullptr);
      }
      found = found || std::isfinite(leader);
      if (found) break;
    }
    for (auto& outcome : outcomes) {
      if (outcome.status == OutcomeStatus::skipped && !outcome.error) {
        outcome.error = AutotuneError(ErrorKind::skipped,
                                      !found ? "skipped by priority"
                                      : outcome.index < set.size() &&
                                              set.space_of_entry(set.locate(outcome.index).entry)
                                          ? "not reached by the search"
                                          : "a candidate of higher priority works",
                                      outcome.name);
      }
    }
    rank(outcomes);
    if (!outcomes.empty() && outcomes.front().ok()) {
      try {  // the winner's build is worth keeping (e.g. as a program binary)
        set.keep(outcomes.front().index, client, std::as_const(inputs)...);
      } catch (...) {
      }
    }
    report.outcomes = std::move(outcomes);
    report.tuning_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (settings_.log >= LogLevel::info) std::clog << format_report(report);
    remember(report);
    return report;
  }

  // How many of `level`'s candidates a tuning expects to measure: a whole space counts its
  // search budget (for progress reports only).
  template <class Set>
  std::size_t planned_measurements(const Set& set, const std::vector<std::size_t>& level) const {
    std::size_t count = 0;
    std::map<std::size_t, std::size_t> space_members;  // entry -> candidates in this level
    for (std::size_t i : level) {
      const auto entry = set.locate(i).entry;
      if (set.space_of_entry(entry) != nullptr) {
        ++space_members[entry];
      } else {
        ++count;
      }
    }
    for (const auto& [entry, members] : space_members) {
      const std::size_t size = set.space_of_entry(entry)->size();
      count += members == size
                   ? std::min(size, settings_.search_settings().budget_for(size).max_evaluations)
                   : members;
    }
    return count;
  }

  // Searches the candidates `members` of space entry `entry` with the configured strategy,
  // measuring each configuration the strategy asks for (those measured already, such as the
  // start points, count with their outcome). `known`: the neighbours' winners (set indices);
  // `leader`: the best time of the whole tuning so far, which the search compares with;
  // `ahead` (if any) builds what the strategy says comes next.
  template <class Set, class MeasureOne>
  void search_space(const Set& set, std::size_t entry, const std::vector<std::size_t>& members,
                    const std::string& key_text, MeasureOne& measure_one,
                    std::vector<AutotuneOutcome>& outcomes, const std::vector<std::size_t>& known,
                    const double& leader, BuildAhead* ahead) {
    const ExpandedSpace& space = *set.space_of_entry(entry);
    const std::size_t first = set.entry_range(entry).first;
    const SearchSettings search_settings = settings_.search_settings();
    if (members.size() != space.size()) {
      if (ahead) ahead->plan(members);
      for (std::size_t i : members) {
        if (outcomes[i].status == OutcomeStatus::skipped) measure_one(i);  // too few to search
      }
      return;
    }
    struct LiveEvaluator final : SearchEvaluator {
      std::size_t first;
      MeasureOne* measure;
      std::vector<AutotuneOutcome>* outcomes;
      const double* leader;
      BuildAhead* ahead;
      void prefetch(const std::vector<std::size_t>& configs, bool likely) override {
        if (ahead == nullptr) return;
        std::vector<std::size_t> candidates(configs);
        for (auto& c : candidates) c += first;
        ahead->plan(candidates, likely);
      }
      std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
      std::optional<double> evaluate(std::size_t config) override {
        if ((*outcomes)[first + config].status == OutcomeStatus::skipped) (*measure)(first + config);
        const auto& outcome = (*outcomes)[first + config];
        if (!outcome.ok()) return std::nullopt;
        return outcome.median;
      }
      double spent_seconds() const override {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      }
      double leader_time() const override { return *leader; }
    } evaluator;
    evaluator.first = first;
    evaluator.measure = &measure_one;
    evaluator.outcomes = &outcomes;
    evaluator.leader = &leader;
    evaluator.ahead = ahead;
    std::vector<std::size_t> extra_starts;
    for (std::size_t i : known) {
      if (set.locate(i).entry == entry) extra_starts.push_back(i - first);
    }
    // Seeded by the key, so that a tuning can be reproduced.
    search(search_settings.strategy, space, evaluator,
           search_settings.budget_for(space.size(), !extra_starts.empty()),
           stable_hash(op_ + "|" + key_text), extra_starts);
  }

  // The set indices of the start points of space entry `entry`: its own, then those of `known`
  // in it.
  template <class Set>
  static std::vector<std::size_t> starts_of(const Set& set, std::size_t entry,
                                            const std::vector<std::size_t>& known) {
    const std::size_t first = set.entry_range(entry).first;
    std::vector<std::size_t> starts;
    for (std::size_t config : set.space_of_entry(entry)->starts()) starts.push_back(first + config);
    for (std::size_t i : known) {
      if (set.locate(i).entry == entry) starts.push_back(i);
    }
    return starts;
  }

  // The winners of the other keys of this op tuned on this device (in this process, then in the
  // persistent store), as indices into `set`, most frequent first; at most a few.
  template <class Set>
  std::vector<std::size_t> known_winners(const Set& set, const Key& key, const std::string& key_text) {
    constexpr std::size_t most = 4;
    std::vector<std::string> names;
    {
      std::lock_guard lock(reports_mutex_);
      for (const auto& [other, report] : reports_) {
        if (other == key_text) continue;
        if (const AutotuneOutcome* winner = report.winner()) names.push_back(winner->name);
      }
    }
    if (store_) {
      for (auto& name : store_->winners(device_.identity(), op_, entry_id(set, key).checksum)) {
        names.push_back(std::move(name));
      }
    }
    std::vector<std::size_t> indices;
    for (const auto& name : names) {
      const auto index = set.index_of(name);
      if (index && std::find(indices.begin(), indices.end(), *index) == indices.end()) {
        indices.push_back(*index);
      }
      if (indices.size() == most) break;
    }
    return indices;
  }

  // State of one tuning shared across its candidates: the benchmark inputs, and the reference
  // output for validation (the first candidate that runs, computed once).
  template <class Client, class Set, class... Inputs>
  struct TuningState {
    using Output = execute_result_t<Set, Client, Inputs...>;
    using Bench = decltype(std::declval<const Set&>().make_inputs(
        std::declval<Client&>(), std::declval<const Key&>(), std::declval<const Inputs&>()...));
    using Compared = std::conditional_t<std::is_void_v<Output>, Bench, Output>;
    std::optional<Compared> reference;
    std::string reference_name;
    bool tried = false;
    std::optional<Bench> shared_inputs;  // benchmark inputs (kept across candidates if shared)
  };

  template <class Client, class Set, class Bench>
  static auto output_of(CandidateLocation where, Client& client, const Set& set, Bench& bench) {
    return std::apply(
        [&](auto&... args) {
          using Output = decltype(call_unwrapped(where, client, set, args...));
          if constexpr (std::is_void_v<Output>) {
            call_unwrapped(where, client, set, args...);
            return bench;
          } else {
            return call_unwrapped(where, client, set, args...);
          }
        },
        bench);
  }

  template <class Client, class Set, class... Inputs>
  AutotuneOutcome measure(std::size_t index, Client& client, const Set& set, const Key& key,
                          const BenchmarkSettings& bench_settings, double leader,
                          TuningState<Client, Set, Inputs...>& state, Inputs&... inputs) {
    const std::string name = set.name(index);
    const CandidateLocation where = set.locate(index);
    AutotuneOutcome failed;
    failed.name = name;
    failed.index = index;
    failed.status = OutcomeStatus::failed;
    using Bench = typename TuningState<Client, Set, Inputs...>::Bench;
    // Fresh benchmark inputs for each candidate, unless the set shares one set of them across
    // the tuning (TunableSet::share_inputs).
    std::optional<Bench>& bench = state.shared_inputs;
    try {
      if (!bench || !set.shares_inputs()) bench.emplace(set.make_inputs(client, key, inputs...));
    } catch (...) {
      bench.reset();
      const auto cause = error_from_exception(std::current_exception(), name);
      failed.error = AutotuneError(cause.kind(), "the input generator failed: " + cause.message(),
                                   name);
      return failed;
    }
    if constexpr (Set::validates) {
      if (!state.tried) {
        state.tried = true;
        for (std::size_t r = 0; r < set.size() && !state.reference; ++r) {
          try {
            auto reference_inputs = set.make_inputs(client, key, inputs...);
            state.reference.emplace(output_of(set.locate(r), client, set, reference_inputs));
            wait_for(client);
            state.reference_name = set.name(r);
          } catch (...) {
          }
        }
      }
      if (state.reference) {
        try {
          const auto output = output_of(where, client, set, *bench);
          wait_for(client);
          const auto verdict = detail::invoke_maybe_client(
              set.validator(), client, std::as_const(*state.reference), std::as_const(output));
          std::optional<std::string> problem;
          if constexpr (std::is_same_v<std::remove_cvref_t<decltype(verdict)>, bool>) {
            if (!verdict) problem = "output differs from the reference";
          } else {
            if (verdict && !verdict->empty()) problem = *verdict;
          }
          if (problem) {
            failed.error = AutotuneError(ErrorKind::wrong_output,
                                         *problem + " (reference: '" + state.reference_name +
                                             "')",
                                         name);
            return failed;
          }
        } catch (...) {
          failed.error = error_from_exception(std::current_exception(), name);
          return failed;
        }
      }
    }
    auto run_once = [&] {
      std::apply([&](auto&... args) { (void)call_unwrapped(where, client, set, args...); }, *bench);
    };
    return measure_candidate(client, FunctionRef<void()>(run_once), bench_settings, leader, name,
                             index);
  }

  void note(CallPath path, std::uint32_t candidate) const noexcept {
    detail::note_call(this, op_, path, candidate);
  }

  void remember(TuningReport report, bool replace = true) {
    std::lock_guard lock(reports_mutex_);
    if (replace) {
      reports_.insert_or_assign(report.key, std::move(report));
    } else {
      reports_.try_emplace(report.key, std::move(report));
    }
  }

  std::string op_;
  DeviceId device_;
  Settings settings_;
  std::shared_ptr<ResultStore> store_;
  std::once_flag checksum_once_;
  std::uint64_t checksum_ = 0;
  detail::InsertOnlyMap<Key, Decision, KeyHash, KeyEqual> decisions_;
  std::mutex decisions_mutex_;  // serialises writers of decisions_ (and strikes)
  std::mutex tuning_mutex_;     // held while this device tunes a key
  mutable std::mutex reports_mutex_;
  std::map<std::string, TuningReport> reports_;
};

}  // namespace tunekit
