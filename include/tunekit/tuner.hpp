// Tuner: one device's tuning state for one op: the in-memory cache of winners (lookup and
// dispatch), the persistent store (load and persist), and recovery when a winner fails on real
// inputs. Tuning itself is a TuningRun (tuning_run.hpp) following a TuningPlan (tuning_plan.hpp);
// docs/architecture.md follows one execute() call through them.
#pragma once

#include <algorithm>
#include <atomic>
#include <concepts>
#include <cstdint>
#include <exception>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tunekit/background.hpp"
#include "tunekit/benchmark.hpp"
#include "tunekit/call_report.hpp"
#include "tunekit/detail/insert_only_map.hpp"
#include "tunekit/device_id.hpp"
#include "tunekit/dispatch.hpp"
#include "tunekit/error.hpp"
#include "tunekit/key.hpp"
#include "tunekit/log.hpp"
#include "tunekit/metric.hpp"
#include "tunekit/outcome.hpp"
#include "tunekit/result_store.hpp"
#include "tunekit/settings.hpp"
#include "tunekit/stable_hash.hpp"
#include "tunekit/timing_client.hpp"
#include "tunekit/tunable_set.hpp"
#include "tunekit/tuning_plan.hpp"
#include "tunekit/tuning_run.hpp"

namespace tunekit {

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
        store_(std::move(store)) {
    if (settings_.tuning == TuningMode::background) background_ = detail::make_background_queue();
  }
  /// Stops the background tunings (the running one at its next candidate) and waits for them.
  ~Tuner() {
    if (background_) background_->stop();
  }
  Tuner(const Tuner&) = delete;
  Tuner& operator=(const Tuner&) = delete;

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
      note(CallPath::dispatched, decision->index, decision->source);
      return serve(*decision, client, set, key, inputs...);
    }
    if (const Decision* provisional = provisional_.find(key)) {  // being tuned in the background
      if (unfinished_->any.load(std::memory_order_relaxed)) {
        requeue_if_unfinished(client, set, key, inputs...);
      }
      note(CallPath::provisional, provisional->index, provisional->source);
      return serve(*provisional, client, set, key, inputs...);
    }
    return serve(obtain(client, set, key, /*provisional=*/true, inputs...), client, set, key,
                 inputs...);
  }

  /// Waits until this tuner's background tunings (Settings::tuning) are done; at once in
  /// blocking mode.
  void wait_for_tunings() {
    if (background_) background_->wait_idle();
  }

  /// The winner's location for `key`, tuning first on a miss (for prepared dispatch: in
  /// background mode too, as what it binds to is kept by the caller).
  template <TimingClient Client, class Set, class... Inputs>
  CandidateLocation winner(Client& client, const Set& set, const Key& key, Inputs&... inputs) {
    const Decision* decision = decisions_.find(key);
    if (decision == nullptr) decision = &obtain(client, set, key, /*provisional=*/false, inputs...);
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
    provisional_.clear();
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
    // Where the result came from (CallReport::source): a literal or one of sources_.
    std::string_view source = "computed";
    // Failures of the winner on calls that another candidate then served; guarded by
    // decisions_mutex_ (readers of the lock-free map never touch it).
    mutable unsigned strikes = 0;
  };

  template <class Client, class Set, class... Inputs>
  static execute_result_t<Set, Client, Inputs...> run(const Decision& decision, Client& client,
                                                      const Set& set, Inputs&... inputs) {
    return detail::call_unwrapped(decision.location, client, set, inputs...);
  }

  // Runs `decision`'s winner; on a failure, the rest of its ranking for this call (recover).
  template <class Client, class Set, class... Inputs>
  execute_result_t<Set, Client, Inputs...> serve(const Decision& decision, Client& client,
                                                 const Set& set, const Key& key,
                                                 Inputs&... inputs) {
    if (decision.failed) {
      note(CallPath::failed, decision.index, decision.source);
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
  // `provisional`: in background mode, a provisional decision may answer (execute).
  const Decision& obtain(Client& client, const Set& set, const Key& key, bool provisional,
                         Inputs&... inputs) {
    if (auto problem = key_problem(key)) {
      throw AutotuneError(ErrorKind::invalid_key,
                          "a key of '" + op_ + "' cannot identify a tuning: " + *problem);
    }
    if (set.size() == 1) {  // nothing to choose: no benchmark, nothing stored (as in CubeCL)
      Decision only;
      only.location = set.locate(0);
      only.ranking = {0};
      only.source = "the only candidate";
      note(CallPath::dispatched, 0, only.source);
      return keep(key, std::move(only));
    }
    if (store_) {
      if (auto stored = load(set, entry_id(set, key))) {
        note(CallPath::loaded, stored->index, stored->source);
        return keep(key, std::move(*stored));
      }
    }
    if constexpr ((std::copy_constructible<std::decay_t<Inputs>> && ...)) {
      if (background_ && provisional) {
        if (const Decision* serving = tune_in_background(client, set, key, inputs...)) {
          note(CallPath::provisional, serving->index, serving->source);
          return *serving;
        }
      }
    }
    std::lock_guard tuning(tuning_mutex_);  // one tuning at a time per device: fair timings
    if (const Decision* decision = decisions_.find(key)) {
      note(CallPath::dispatched, decision->index, decision->source);
      return *decision;
    }
    Decision decided = decide(client, set, key, nullptr, inputs...);
    // A failure of the moment (memory, resources, the device) is not remembered in memory
    // either: the next call tunes again, as a fresh tuner would.
    if (decided.failed && !lasting(*decided.failed)) throw *decided.failed;
    return keep(key, std::move(decided));
  }

  // Queues the tuning of `key` on the background thread, once per key, with copies of the
  // inputs, and returns the provisional decision that serves the calls meanwhile. Nothing when
  // the key was decided meanwhile or the queue is stopped: the caller goes on as if blocking.
  template <class Client, class Set, class... Inputs>
  const Decision* tune_in_background(Client& client, const Set& set, const Key& key,
                                     Inputs&... inputs) {
    if (set.size() == 0) return nullptr;               // the blocking path says why
    Decision provisional = provisional_for(set, key);  // before the lock: it reads the store
    std::lock_guard lock(decisions_mutex_);
    if (decisions_.find(key) != nullptr) return nullptr;
    if (const Decision* queued = provisional_.find(key)) return queued;
    if (!queue_tuning(client, set, key, inputs...)) return nullptr;
    return provisional_.insert(key, std::move(provisional));
  }

  // Keys whose background tuning ended undecided. Shared with the queued jobs, which may be
  // destroyed on another thread (stop_background_tunings_using) after this tuner is gone.
  struct Unfinished {
    std::mutex mutex;
    std::vector<Key> keys;
    std::atomic<bool> any{false};
    void mark(const Key& key) noexcept {
      try {
        std::lock_guard lock(mutex);
        const auto same = [&](const Key& k) { return KeyEqual{}(k, key); };
        if (std::none_of(keys.begin(), keys.end(), same)) keys.push_back(key);
        any.store(true, std::memory_order_relaxed);
      } catch (...) {  // no memory: the key stays provisional
      }
    }
    bool take(const Key& key) {
      std::lock_guard lock(mutex);
      const auto it =
          std::find_if(keys.begin(), keys.end(), [&](const Key& k) { return KeyEqual{}(k, key); });
      if (it == keys.end()) return false;
      keys.erase(it);
      any.store(!keys.empty(), std::memory_order_relaxed);
      return true;
    }
  };
  // Marks a queued tuning's key unfinished when its job is destroyed without having decided it
  // (dropped with its client, or stopped while it ran for that client).
  struct UnfinishedGuard {
    std::shared_ptr<Unfinished> unfinished;
    Key key;
    bool decided = false;
    ~UnfinishedGuard() {
      if (!decided) unfinished->mark(key);
    }
  };

  // Queues the tuning of `key` on the background thread with copies of the inputs (the caller
  // holds decisions_mutex_). A key whose job ends undecided is queued again by its next call
  // (requeue_if_unfinished), through the client of that call: else it would stay on its
  // provisional candidate for the rest of the process once the client that queued it is gone.
  template <class Client, class Set, class... Inputs>
  bool queue_tuning(Client& client, const Set& set, const Key& key, Inputs&... inputs) {
    auto guard = std::make_shared<UnfinishedGuard>(UnfinishedGuard{unfinished_, key});
    auto job = [this, &client, &set, key, guard,
                copies = std::tuple<std::decay_t<Inputs>...>(inputs...)]() mutable noexcept {
      std::apply([&](auto&... in) { tune_queued(client, set, key, in...); }, copies);
      guard->decided = decisions_.find(key) != nullptr;
    };
    return background_->push(std::move(job), &client);
  }

  // Queues `key` again if its last tuning ended undecided (see queue_tuning).
  template <class Client, class Set, class... Inputs>
  void requeue_if_unfinished(Client& client, const Set& set, const Key& key, Inputs&... inputs) {
    if constexpr ((std::copy_constructible<std::decay_t<Inputs>> && ...)) {
      if (!unfinished_->take(key)) return;
      std::lock_guard lock(decisions_mutex_);
      if (decisions_.find(key) == nullptr) (void)queue_tuning(client, set, key, inputs...);
    }
  }

  // What serves the calls of `key` while it is tuned in the background: the winners of
  // neighbouring keys (known_winners), then the candidates the plan measures first (single
  // tunables, the spaces' start points), level by level; the first of them runs, the others
  // serve a call it fails.
  // A set that validates serves its reference first (candidate 0: the first that runs): a
  // neighbour's winner was validated on its own key's inputs, never on this key's.
  template <class Set>
  Decision provisional_for(const Set& set, const Key& key) {
    std::vector<std::size_t> order;
    if constexpr (Set::validates) {
      order.push_back(0);
    } else {
      order = known_winners(set, key, key_to_string(key));
    }
    std::vector<std::optional<CandidatePriority>> priorities(set.size());
    for (std::size_t i = 0; i < set.size(); ++i) {
      try {
        priorities[i] = set.priority(i, key);
      } catch (...) {  // the tuning reports it; here the candidate is just not first
      }
    }
    const TuningPlan plan(plan_entries(set), priorities, settings_.search_settings());
    for (const PlannedLevel& level : plan.levels()) {
      order.insert(order.end(), level.singles.begin(), level.singles.end());
      for (const PlannedSpace& space : level.spaces) {
        const auto firsts = space.whole ? plan.starts(space.entry, {}) : space.members;
        order.insert(order.end(), firsts.begin(), firsts.end());
      }
    }
    if (order.empty()) order.push_back(0);  // no priority could be computed: set order
    Decision provisional;
    for (std::size_t i : order) {
      const auto index = static_cast<std::uint32_t>(i);
      if (std::find(provisional.ranking.begin(), provisional.ranking.end(), index) ==
          provisional.ranking.end()) {
        provisional.ranking.push_back(index);
      }
    }
    provisional.index = provisional.ranking.front();
    provisional.location = set.locate(provisional.index);
    provisional.source = "provisional";
    return provisional;
  }

  // The background tuning of `key` (on the worker thread). What it decides is kept as a blocking
  // tuning's would be; an exception that would have reached execute()'s caller (e.g. from the
  // progress hook) becomes the key's failure in this process; a stop leaves nothing decided.
  template <class Client, class Set, class... Inputs>
  void tune_queued(Client& client, const Set& set, const Key& key, Inputs&... inputs) noexcept {
    try {
      std::lock_guard tuning(tuning_mutex_);
      if (decisions_.find(key) != nullptr) return;  // decided meanwhile (a blocking caller)
      keep(key, decide(client, set, key, &background_->stop_flag(), inputs...));
    } catch (const TuningStopped&) {
      // The tuner is stopping: the calls stay provisional; the in-progress record stays.
    } catch (...) {
      try {
        Decision failed;
        failed.failed = std::make_shared<const AutotuneError>(
            error_from_exception(std::current_exception(), ""));
        warn(about(op_, key_to_string(key)) +
             "the background tuning failed: " + failed.failed->message());
        keep(key, std::move(failed));
      } catch (...) {  // no memory even for that: the calls stay provisional
      }
    }
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
          detail::call_unwrapped(set.locate(other), client, set, inputs...);
        } catch (...) {
          continue;
        }
        record_strike(other);
        note(CallPath::fell_back, other, decision.source);
        return;
      } else {
        std::optional<Output> output;
        try {
          output.emplace(detail::call_unwrapped(set.locate(other), client, set, inputs...));
        } catch (...) {
          continue;
        }
        record_strike(other);
        note(CallPath::fell_back, other, decision.source);
        return std::move(*output);
      }
    }
    note(CallPath::failed, decision.index, decision.source);
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
          warn(about(op_, key_to_string(key)) + "winner '" + set.name(failed) +
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
    warn(about(op_, key_to_string(key)) + "winner '" + set.name(failed) +
         "' failed on real inputs " + std::to_string(demote_after_failures) +
         " times that another candidate served (last: " + error.message() + "); demoted, now '" +
         set.name(demoted->index) + "'");
    persist(set, key, *demoted);
  }

  template <class Set>
  EntryId entry_id(const Set& set, const Key& key) {
    std::call_once(checksum_once_, [&] { checksum_ = stable_hash(set.checksum_text()); });
    return EntryId{device_.identity(), op_, key_to_string(key), checksum_};
  }

  // Called with tuning_mutex_ held: from the store if it has the key, else by tuning (until
  // `stop`, when given, is raised: TuningStopped).
  template <class Client, class Set, class... Inputs>
  Decision decide(Client& client, const Set& set, const Key& key, const std::atomic<bool>* stop,
                  Inputs&... inputs) {
    if (!store_) {
      Decision decision = from_report(set, tune(client, set, key, nullptr, stop, inputs...));
      note(CallPath::tuned, decision.index,
           decision.source);  // after the tuning: its candidates may call ops
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
      note(CallPath::loaded, stored->index, stored->source);
      return *stored;
    }
    Decision decision = from_report(set, tune(client, set, key, &id, stop, inputs...));
    note(CallPath::tuned, decision.index, decision.source);
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
    const auto mismatch = [&]() -> std::optional<Decision> {
      if (report_mismatch) {
        warn("tunekit: cache entry for " + op_ + " [" + id.key +
             "] does not match its set; re-tuning");
      }
      return std::nullopt;
    };
    TuningReport report{op_, id.key, device_.identity(), 0, stored->outcomes};
    rank(report.outcomes);
    report.metric_names = stored->metric_names;
    report.source = source_of(*stored);
    if (stored->winner.empty()) {  // a remembered failure: every candidate failed
      const bool same_set =
          report.outcomes.size() == set.size() &&
          std::all_of(report.outcomes.begin(), report.outcomes.end(), [&](const auto& outcome) {
            return !outcome.ok() && outcome.index < set.size() &&
                   set.name(outcome.index) == outcome.name;
          });
      if (!same_set) return mismatch();
      Decision failed = from_report(set, report);
      failed.source = intern(report.source);
      warn(about(op_, id.key) +
           "every candidate failed in an earlier tuning "
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
      return mismatch();
    }
    decision.index = decision.ranking.front();
    decision.location = set.locate(decision.index);
    decision.source = intern(report.source);
    if (settings_.log >= LogLevel::debug) {
      inform(about(op_, id.key) + "'" + stored->winner + "' from the " + report.source + "\n");
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
    StoredResult result{
        decision.failed ? std::string() : set.name(decision.index), decision.index, {}};
    if (auto known = report(key)) {
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
        warn("tunekit: " + op_ + " [" + report.key +
             "]: the timer failed for every candidate "
             "that ran; using '" +
             set.name(decision.ranking.front()) + "' unmeasured (not saved to disk)");
      }
    }
    if (decision.ranking.empty()) {
      // Remembered: every later call throws the same error at once instead of tuning again.
      decision.failed = std::make_shared<const AutotuneError>(
          set.size() == 0 ? AutotuneError(ErrorKind::no_valid_candidate,
                                          "the tunable set of '" + op_ + "' is empty")
                          : AutotuneError(ErrorKind::no_valid_candidate,
                                          "no candidate of '" + op_ + "' works for " + report.key,
                                          {}, std::move(reasons)));
      return decision;
    }
    decision.index = decision.ranking.front();
    decision.location = set.locate(decision.index);
    return decision;
  }

  // Tunes `key` (called with tuning_mutex_ held): the run measures, this tuner logs and keeps
  // the report. With a store (`id`), the tuning resumes from the key's in-progress record and
  // records each outcome as it is measured; the record goes once the tuning is done (one that
  // throws, or is stopped, leaves it for the next tuning of the key).
  template <class Client, class Set, class... Inputs>
  TuningReport tune(Client& client, const Set& set, const Key& key, const EntryId* id,
                    const std::atomic<bool>* stop, Inputs&... inputs) {
    const std::string key_text = key_to_string(key);
    TuningRun<Key, Client, Set, Inputs...> tuning(op_, device_.identity(), settings_, client, set,
                                                  key, known_winners(set, key, key_text),
                                                  stable_hash(op_ + "|" + key_text), inputs...);
    tuning.built_before(built_in_this_process(set));
    std::vector<AutotuneOutcome> recorded;
    if (id != nullptr) {
      recorded = resumable(set, store_->load_progress(*id), key_text);
      tuning.resume(recorded);
      tuning.on_measured([&](const AutotuneOutcome& outcome) {
        recorded.push_back(outcome);
        store_->save_progress(*id, recorded);
      });
    }
    if (stop != nullptr) tuning.stop_when(*stop);
    TuningReport report = tuning.run();
    if (id != nullptr) store_->drop_progress(*id);
    add_metrics(set.metrics(), key, report);
    report.source = "computed";
    if (settings_.log >= LogLevel::info) {
      inform(format_report(
          report, settings_.log >= LogLevel::debug ? ReportDetail::full : ReportDetail::summary));
    }
    remember(report);
    return report;
  }

  // The outcomes of an interrupted tuning's record, when each names a candidate of `set` once
  // and was measured; else none (the record's checksum matched, so it was tampered with).
  template <class Set>
  std::vector<AutotuneOutcome> resumable(const Set& set, std::vector<AutotuneOutcome> recorded,
                                         const std::string& key_text) const {
    std::vector<bool> seen(set.size());
    for (const auto& outcome : recorded) {
      if (outcome.index >= set.size() || seen[outcome.index] ||
          set.name(outcome.index) != outcome.name || outcome.status == OutcomeStatus::skipped) {
        warn(about(op_, key_text) +
             "the in-progress record does not match the tunable set; the tuning starts over");
        return {};
      }
      seen[outcome.index] = true;
    }
    if (!recorded.empty() && settings_.log >= LogLevel::info) {
      inform(about(op_, key_text) + "resuming an interrupted tuning: " +
             std::to_string(recorded.size()) + " candidates were measured before\n");
    }
    return recorded;
  }

  // The candidates that tunings in this process ran (their programs are built and cached), as
  // indices into `set`: reports read back from a cache (no tuning time) ran nothing here.
  template <class Set>
  std::vector<std::size_t> built_in_this_process(const Set& set) const {
    std::vector<std::size_t> indices;
    std::lock_guard lock(reports_mutex_);
    for (const auto& [key_text, report] : reports_) {
      if (!(report.tuning_seconds > 0)) continue;
      for (const auto& outcome : report.outcomes) {
        if (outcome.ok() && outcome.index < set.size() && set.name(outcome.index) == outcome.name) {
          indices.push_back(outcome.index);
        }
      }
    }
    return indices;
  }

  // The winners of the other keys of this op tuned on this device (in this process, then in the
  // persistent store), as indices into `set`, most frequent first; at most a few.
  template <class Set>
  std::vector<std::size_t> known_winners(const Set& set, const Key& key,
                                         const std::string& key_text) {
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

  void note(CallPath path, std::uint32_t candidate, std::string_view source) const noexcept {
    detail::note_call(this, op_, path, candidate, source);
  }

  // What a stored result's source is called: the store that answered, and the bundle it came in.
  static std::string source_of(const StoredResult& stored) {
    std::string source = stored.source.empty() ? "persistent cache" : stored.source;
    if (!stored.imported_from.empty()) {
      source = "bundle " + printable(stored.imported_from, 255) + ", in the " + source;
    }
    return source;
  }

  // `text` kept for the tuner's lifetime (a call's report points into it); a few per tuner.
  std::string_view intern(const std::string& text) {
    std::lock_guard lock(sources_mutex_);
    for (const auto& known : sources_) {
      if (known == text) return known;
    }
    return sources_.emplace_back(text);
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
  // What serves the keys being tuned in the background (never failed, never stored).
  detail::InsertOnlyMap<Key, Decision, KeyHash, KeyEqual> provisional_;
  std::mutex decisions_mutex_;  // serialises writers of decisions_ and provisional_ (and strikes)
  std::mutex tuning_mutex_;     // held while this device tunes a key
  mutable std::mutex reports_mutex_;
  std::map<std::string, TuningReport> reports_;
  std::mutex sources_mutex_;
  std::list<std::string> sources_;  // Decision::source's texts; never shrinks
  // Keys whose background tuning ended undecided (queue_tuning, requeue_if_unfinished).
  std::shared_ptr<Unfinished> unfinished_ = std::make_shared<Unfinished>();
  // The background tunings (Settings::tuning); null when blocking. Stopped first in ~Tuner, as
  // its jobs use every member above.
  std::shared_ptr<detail::BackgroundQueue> background_;
};

}  // namespace tunekit
