// Tuner: one device's tuning state for one op, in the order a call meets it: the decisions in
// memory (lookup, dispatch, recovery when a winner fails on real inputs), then on a miss the
// store (persistence.hpp), background tuning (background_tuning.hpp) and tuning: a TuningRun
// (tuning_run.hpp). docs/architecture.md follows one execute() call through them.
#pragma once

#include <atomic>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tunekit/call_report.hpp"
#include "tunekit/detail/call.hpp"
#include "tunekit/detail/insert_only_map.hpp"
#include "tunekit/device_id.hpp"
#include "tunekit/engine/background_tuning.hpp"
#include "tunekit/engine/decision.hpp"
#include "tunekit/engine/op_tuning_lock.hpp"
#include "tunekit/engine/persistence.hpp"
#include "tunekit/engine/retry_backoff.hpp"
#include "tunekit/engine/stored_decision.hpp"
#include "tunekit/engine/tuning_run.hpp"
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

namespace tunekit {

namespace detail {

/// Marks, for its scope, that this thread tunes op `op` on `device` with the tuner at `tuner`
/// (its tuning lock held). The marks of one thread form a chain (op A's candidate may call op B,
/// whose tuning calls A), one for the tuners of every key type.
class TuningOnThisThread {
 public:
  TuningOnThisThread(const void* tuner, const std::string& op, const DeviceId& device)
      : tuner_(tuner), op_(&op), device_(&device), outer_(std::exchange(innermost_, this)) {}
  ~TuningOnThisThread() { innermost_ = outer_; }
  TuningOnThisThread(const TuningOnThisThread&) = delete;
  TuningOnThisThread& operator=(const TuningOnThisThread&) = delete;

  enum class Within { none, same_tuner, same_op };
  /// Whether this thread is within a tuning of `tuner`, or of another tuner of op `op` on
  /// `device` (whose keys' tuning locks in a store are the same).
  static Within within(const void* tuner, const std::string& op, const DeviceId& device) noexcept {
    Within found = Within::none;
    for (const TuningOnThisThread* mark = innermost_; mark != nullptr; mark = mark->outer_) {
      if (mark->tuner_ == tuner) return Within::same_tuner;
      if (*mark->op_ == op && *mark->device_ == device) found = Within::same_op;
    }
    return found;
  }

 private:
  const void* tuner_;
  const std::string* op_;
  const DeviceId* device_;
  const TuningOnThisThread* outer_;
  static inline thread_local const TuningOnThisThread* innermost_ = nullptr;
};

}  // namespace detail

/// Per-device tuning state of one op.
template <AutotuneKey Key>
class Tuner {
 public:
  Tuner(std::string op, DeviceId device, Settings settings, std::shared_ptr<ResultStore> store)
      : op_(std::move(op)),
        device_(std::move(device)),
        settings_(std::move(settings)),
        records_(op_, device_.identity(), settings_.log, std::move(store)),
        background_(settings_.tuning) {}
  /// Stops the background tunings (the running one at its next candidate) and waits for them.
  ~Tuner() { background_.stop(); }
  Tuner(const Tuner&) = delete;
  Tuner& operator=(const Tuner&) = delete;

  /// Runs the winner for `key` on `inputs`, tuning first on a miss. Hot path (winner known):
  /// one lock-free lookup and one indirect call. A miss looks in the persistent store without
  /// waiting for any tuning; only tuning itself is serialised per device (a key that another
  /// thread is tuning waits for that tuning).
  ///
  /// What leaves it: the winner's own result; the AutotuneError that decided the key (every
  /// candidate failed in tuning: thrown again at once on every later call, without tuning again;
  /// for a reason of the moment, only until its back-off has passed: Settings::retry_seconds);
  /// AutotuneError(invalid_key) for a key that cannot identify a tuning (a NaN field); and, when
  /// the winner and every other working candidate fail on the caller's inputs, the winner's own
  /// exception unchanged (the caller's inputs are at fault, not the candidates: the ranking is
  /// kept). Exceptions of the caller's own code (key generator, progress hook) pass unchanged.
  template <TimingClient Client, class Set, class... Inputs>
  execute_result_t<Set, Client, Inputs...> execute(Client& client, const Set& set, const Key& key,
                                                   Inputs&... inputs) {
    if (const Decision* decision = decisions_.find(key)) {
      note(CallPath::dispatched, *decision);
      return serve(*decision, client, set, key, inputs...);
    }
    const Decision* provisional = background_.serving(key);  // tuned in the background
    if (provisional != nullptr && !stranded(client, set, key, inputs...)) {
      note(CallPath::provisional, *provisional);
      return serve(*provisional, client, set, key, inputs...);
    }  // else a key whose background tuning cannot go on is tuned in this thread
    return serve(obtain(client, set, key, /*provisional=*/provisional == nullptr, inputs...),
                 client, set, key, inputs...);
  }

  /// Waits until this tuner's background tunings (Settings::tuning) are done (blocking: at once).
  void wait_for_tunings() { background_.wait_idle(); }

  /// The winner's location for `key`, tuning first on a miss (prepared dispatch: in any mode).
  template <TimingClient Client, class Set, class... Inputs>
  CandidateLocation winner(Client& client, const Set& set, const Key& key, Inputs&... inputs) {
    const Decision* decision = decisions_.find(key);
    if (decision == nullptr) decision = &obtain(client, set, key, /*provisional=*/false, inputs...);
    if (decision->failed()) throw *decision->failure;
    return decision->location;
  }

  /// The report of the tuning (or cache load) that decided `key`, if any.
  std::optional<TuningReport> report(const Key& key) const {
    return records_.report(key_to_string(key));
  }

  /// Every report this tuner holds, by key.
  std::vector<TuningReport> reports() const { return records_.reports(); }

  /// Forgets the in-memory winners and failures (the persistent store keeps its entries).
  void clear_memory() {
    std::lock_guard lock(decisions_mutex_);
    decisions_.clear();
    background_.clear();
    retries_.clear();
  }

  const DeviceId& device() const noexcept { return device_; }
  const std::string& op() const noexcept { return op_; }
  const Settings& settings() const noexcept { return settings_; }

 private:
  using Decision = detail::Decision;

  // Runs `decision`'s winner; on a failure, the rest of its ranking for this call (recover).
  template <class Client, class Set, class... Inputs>
  execute_result_t<Set, Client, Inputs...> serve(const Decision& decision, Client& client,
                                                 const Set& set, const Key& key,
                                                 Inputs&... inputs) {
    if (decision.failed()) {
      note(CallPath::failed, decision);
      throw *decision.failure;
    }
    try {
      return detail::call_unwrapped(decision.location, client, set, inputs...);
    } catch (...) {
      return recover(std::current_exception(), decision, client, set, key, inputs...);
    }
  }

  // The winner failed on the caller's inputs. For this call only, the other working candidates
  // are tried in ranking order. If one serves the call, the winner gets a strike (none where it
  // refused the inputs: unsupported_inputs); after `demote_after_failures` strikes it is
  // demoted, in memory and on disk. If none serves it, the inputs are at fault: the winner's own
  // exception is rethrown and the ranking kept. A winner that failed after changing the call's
  // outputs in place (outputs_changed) fails the call at once: another would start from them.
  template <class Client, class Set, class... Inputs>
  execute_result_t<Set, Client, Inputs...> recover(std::exception_ptr failure,
                                                   const Decision& decision, Client& client,
                                                   const Set& set, const Key& key,
                                                   Inputs&... inputs) {
    using Output = execute_result_t<Set, Client, Inputs...>;
    // Recording the strike never runs the op again nor fails a call that was served.
    const auto served_by = [&](std::uint32_t served) noexcept {
      try {
        strike(failure, decision.index, served, set, key);
      } catch (...) {
      }
      note(CallPath::fell_back, decision, served);
    };
    if (error_from_exception(failure, "").changed_outputs()) {
      note(CallPath::failed, decision);
      std::rethrow_exception(failure);
    }
    for (const std::uint32_t other : decision.ranking) {
      if (other == decision.index) continue;
      try {
        if constexpr (std::is_void_v<Output>) {
          detail::call_unwrapped(set.locate(other), client, set, inputs...);
          return served_by(other);
        } else {
          Output output = detail::call_unwrapped(set.locate(other), client, set, inputs...);
          served_by(other);
          return output;
        }
      } catch (...) {  // this one failed too: the next
      }
    }
    note(CallPath::failed, decision);
    std::rethrow_exception(failure);
  }

  // `failed`, the winner of `key`, failed on inputs that `served` handled.
  template <class Set>
  void strike(std::exception_ptr failure, std::uint32_t failed, std::uint32_t served,
              const Set& set, const Key& key) {
    const AutotuneError error = error_from_exception(failure, set.name(failed));
    if (error.refused_inputs()) return;  // these inputs are past it: no fault of the winner's
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
      demoted = detail::demoted(*current, failed, error);
      if (!demoted) return;  // a newer decision without `served`: keep the winner
      decisions_.insert(key, *demoted = detail::located(set, std::move(*demoted)));
    }
    warn(about(op_, key_to_string(key)) + "winner '" + set.name(failed) +
         "' failed on real inputs " + std::to_string(demote_after_failures) +
         " times that another candidate served (last: " + error.message() + "); demoted, now '" +
         set.name(demoted->index) + "'");
    // As a tuning's decision: an unmeasured or provisional one stays in memory.
    if (records_.store() && detail::worth_storing(*demoted)) {
      records_.persist(entry_id(set, key), *demoted, detail::NamesOf(set));
    }
  }

  // The decision for a key that missed in memory: from the persistent store if it has it (no
  // tuning lock: a cached key never waits for another key's tuning), else by tuning under the
  // device's tuning lock (after which the key may turn out decided by the thread before us).
  // `provisional`: in background mode, a provisional decision may answer (execute).
  template <class Client, class Set, class... Inputs>
  const Decision& obtain(Client& client, const Set& set, const Key& key, bool provisional,
                         Inputs&... inputs) {
    if (auto problem = key_problem(key)) {
      throw AutotuneError(ErrorKind::invalid_key,
                          "a key of '" + op_ + "' cannot identify a tuning: " + *problem);
    }
    if (set.size() == 0) {  // nothing can run, on any call: said at once, never tuned or retried
      throw AutotuneError(ErrorKind::no_valid_candidate,
                          "the tunable set of '" + op_ +
                              "' is empty (every candidate's only_if was false): nothing can run");
    }
    if (set.size() == 1) {  // nothing to choose: no benchmark, nothing stored (as in CubeCL)
      Decision only;
      only.ranking = {0};
      only.source = "the only candidate";
      note(CallPath::dispatched, only);
      return commit(key, detail::located(set, std::move(only)));
    }
    retries_.throw_if_waiting(key_to_string(key));  // a failure of the moment, still recent
    if (records_.store()) {
      if (auto stored = detail::stored_decision(records_, entry_id(set, key), true, op_, device_,
                                                settings_, client, set, key, inputs...)) {
        note(CallPath::loaded, *stored);
        return commit(key, detail::located(set, std::move(*stored)));
      }
    }
    if constexpr ((std::copy_constructible<std::decay_t<Inputs>> && ...)) {
      if (background_.on() && provisional) {
        if (const Decision* serving = tune_in_background(client, set, key, inputs...)) {
          note(CallPath::provisional, *serving);
          return *serving;
        }
      }
    }
    refuse_tuning_within_own_tuning(key);
    // Another process's tuning of the key is waited for first: never under the device's lock.
    const auto key_lock = records_.lock_for_tuning([&] { return entry_id(set, key); });
    // One tuning of this op at a time on the device: fair timings.
    const detail::OpTuningLock tuning(tuning_mutex_, op_);
    const TuningOnThisThread tuning_here(this, op_, device_);
    if (const Decision* decision = decisions_.find(key)) {
      note(CallPath::dispatched, *decision);
      return *decision;
    }
    retries_.throw_if_waiting(key_to_string(key));  // the thread before us failed for the moment
    std::optional<Decision> decided;
    try {
      decided.emplace(decide(client, set, key, nullptr, inputs...));
    } catch (const AutotuneError& e) {
      // The only wrong output a tuning throws: its validation reference is the suspect. Tuned
      // again on every call it would fail the same way at a tuning's cost: it waits its back-off.
      if (e.kind() == ErrorKind::wrong_output) throw retries_.failed(key_to_string(key), e);
      throw;
    }
    if (auto moment = retries_.of_the_moment(key_to_string(key), *decided)) throw *moment;
    return commit(key, std::move(*decided));
  }

  // Queues the tuning of `key` on the background thread, once per key, with copies of the
  // inputs, and returns the provisional decision that serves the calls meanwhile. Nothing when
  // the key was decided meanwhile or the queue is stopped: the caller goes on as if blocking.
  template <class Client, class Set, class... Inputs>
  const Decision* tune_in_background(Client& client, const Set& set, const Key& key,
                                     Inputs&... inputs) {
    if constexpr (detail::BackgroundTuning<Key>::template checks_first<Set>) {
      if (!first_candidate_passes(client, set, key, inputs...)) return nullptr;
    }
    Decision provisional = background_.provisional_for(  // before the lock: it reads the store
        set, key, [&] { return known_winners(set, key); }, settings_.search_settings());
    std::lock_guard lock(decisions_mutex_);
    if (decisions_.find(key) != nullptr) return nullptr;
    if (const Decision* queued = background_.serving(key)) return queued;
    if (!queue_tuning(client, set, key, inputs...)) return nullptr;
    return background_.serve_meanwhile(key, std::move(provisional));
  }

  // Whether candidate 0, which serves a key of a set validated by a host reference while it is
  // tuned, passes that reference on one set of the key's benchmark inputs: one call, here, in
  // the device's measurement turn, as a stored winner from elsewhere is checked (check_one).
  // False: the call tunes the key, as in blocking mode. The caller's errors (input generator,
  // validator) reach the caller, as a tuning's would.
  template <class Client, class Set, class... Inputs>
  bool first_candidate_passes(Client& client, const Set& set, const Key& key, Inputs&... inputs) {
    TuningRun<Key, Client, Set, Inputs...> run(op_, device_.identity(), settings_, client, set, key,
                                               {}, 0, inputs...);
    return !run.check_one(0);
  }

  // Queues `key` again if its last background tuning ended undecided (its client gone, its
  // tuning stopped, a failure of the moment whose back-off has passed), with this call's client:
  // else it would stay provisional for the rest of the process. True when it cannot be queued
  // (stop_background_tunings()): the caller tunes it.
  template <class Client, class Set, class... Inputs>
  bool stranded(Client& client, const Set& set, const Key& key, Inputs&... inputs) {
    if constexpr ((std::copy_constructible<std::decay_t<Inputs>> && ...)) {
      if (retries_.any() && retries_.waiting(key_to_string(key))) return false;
      if (!background_.take_unfinished(key)) return false;
      std::lock_guard lock(decisions_mutex_);
      return decisions_.find(key) == nullptr && !queue_tuning(client, set, key, inputs...);
    }
    return false;
  }

  // Queues the tuning of `key` (the caller holds decisions_mutex_).
  template <class Client, class Set, class... Inputs>
  bool queue_tuning(Client& client, const Set& set, const Key& key, Inputs&... inputs) {
    using Clock = std::chrono::steady_clock;
    return background_.queue(
        key, client,
        [this, &set, key, waiting_since = std::optional<Clock::time_point>()](
            Client& on, auto&... in) mutable noexcept {
          if (!tune_queued(on, set, key, waiting_since, in...)) return detail::QueuedTuning::later;
          return decisions_.find(key) != nullptr ? detail::QueuedTuning::decided
                                                 : detail::QueuedTuning::undecided;
        },
        inputs...);
  }

  // The background tuning of `key` (on the worker thread). What it decides is kept as a blocking
  // tuning's would be; an exception that would have reached execute()'s caller (e.g. from the
  // progress hook) becomes the key's failure in this process; a stop leaves nothing decided.
  // False, with nothing done, while another process or machine tunes the key: the key's lock is
  // tried, not waited for, so that the worker goes on with the other keys meanwhile and a stop
  // need not wait (`waiting_since`: when it was first found busy).
  template <class Client, class Set, class... Inputs>
  bool tune_queued(Client& client, const Set& set, const Key& key,
                   std::optional<std::chrono::steady_clock::time_point>& waiting_since,
                   Inputs&... inputs) noexcept {
    try {
      if (decisions_.find(key) != nullptr) return true;  // decided by a blocking caller
      const auto now = std::chrono::steady_clock::now();
      auto attempt = records_.try_lock_for_tuning([&] { return entry_id(set, key); },
                                                  waiting_since.value_or(now));
      if (attempt.busy) {
        if (!waiting_since) {
          waiting_since = now;
          warn(about(op_, key_to_string(key)) +
               "another holder of the key's tuning lock (a process, a machine, or a blocking call "
               "of this one) is tuning it: its background tuning waits for that result, and the "
               "provisional candidate serves meanwhile");
        }
        return false;
      }
      const auto key_lock = std::move(attempt.lock);
      const detail::OpTuningLock tuning(tuning_mutex_, op_);
      const TuningOnThisThread tuning_here(this, op_, device_);
      if (decisions_.find(key) != nullptr) return true;  // decided under the lock, meanwhile
      Decision decided = decide(client, set, key, &background_.stop_flag(), inputs...);
      if (auto moment = retries_.of_the_moment(key_to_string(key), decided)) {  // stays provisional
        warn(about(op_, key_to_string(key)) + "the background tuning: " + moment->what());
        return true;
      }
      commit(key, std::move(decided));
    } catch (const TuningStopped&) {
      // Stopped (tuner, client or process going): the next call tunes it (stranded()).
      warn(about(op_, key_to_string(key)) +
           "its background tuning stopped before the end; the next call tunes the key again");
    } catch (...) {
      try {
        const AutotuneError error = error_from_exception(std::current_exception(), "");
        if (detail::of_the_moment(error)) {
          // E.g. the input generator out of memory once: the provisional candidate goes on
          // serving, and the key is queued again once its back-off has passed (stranded()).
          const AutotuneError waiting = retries_.failed(key_to_string(key), error);
          warn(about(op_, key_to_string(key)) +
               "the background tuning failed for the moment: " + waiting.message());
          return true;
        }
        Decision failed = detail::failed_with(error);
        warn(about(op_, key_to_string(key)) +
             "the background tuning failed: " + failed.failure->message());
        commit(key, std::move(failed));
      } catch (...) {  // no memory even for that: the calls stay provisional
      }
    }
    return true;
  }

  // With the key's lock (records_.lock_for_tuning) and tuning_mutex_ held: the store's decision,
  // else a tuning's (TuningStopped once `stop`).
  template <class Client, class Set, class... Inputs>
  Decision decide(Client& client, const Set& set, const Key& key, const std::atomic<bool>* stop,
                  Inputs&... inputs) {
    const detail::NamesOf names(set);
    std::optional<EntryId> id;
    if (records_.store()) {  // again: another process may have tuned it since obtain() looked
      id = entry_id(set, key);
      if (auto stored = detail::stored_decision(records_, *id, /*report_mismatch=*/false, op_,
                                                device_, settings_, client, set, key, inputs...)) {
        note(CallPath::loaded, *stored);
        return detail::located(set, std::move(*stored));
      }
    }
    Decision decision =
        records_.from_report(tune(client, set, key, id ? &*id : nullptr, stop, inputs...), names);
    note(CallPath::tuned, decision);  // after the tuning: its candidates may call ops
    if (id && detail::worth_storing(decision)) records_.persist(*id, decision, names);
    return detail::located(set, std::move(decision));
  }

  // Tunes `key` (with tuning_mutex_ held); the records resume it and keep what it measured.
  template <class Client, class Set, class... Inputs>
  TuningReport tune(Client& client, const Set& set, const Key& key, const EntryId* id,
                    const std::atomic<bool>* stop, Inputs&... inputs) {
    const detail::NamesOf names(set);
    const std::string key_text = key_to_string(key);
    TuningRun<Key, Client, Set, Inputs...> tuning(op_, device_.identity(), settings_, client, set,
                                                  key, known_winners(set, key),
                                                  stable_hash(op_ + "|" + key_text), inputs...);
    tuning.built_before(records_.built_in_this_process(names));
    if (stop != nullptr) tuning.stop_when(*stop);
    return records_.run_recorded(tuning, id, names, key_text, [&](TuningReport& report) {
      const std::optional<Work> timed = tuning.timed_work();  // before the table is logged and kept
      add_metrics(set.metrics(), key, report, timed ? &*timed : nullptr);
    });
  }

  using TuningOnThisThread = detail::TuningOnThisThread;

  // A candidate (or an input generator, a validator) of this op that calls the op for a key not
  // decided yet would wait for its own tuning for ever: that call fails instead, naming why
  // (the candidate that made it fails with it). So does a call of another op of the same name
  // (two LocalTuners named alike: their keys' tuning locks in the store are the same ones).
  void refuse_tuning_within_own_tuning(const Key& key) const {
    const auto within = TuningOnThisThread::within(this, op_, device_);
    if (within == TuningOnThisThread::Within::none) return;
    throw AutotuneError(
        ErrorKind::runtime,
        "'" + op_ + "' was called for the new key " + key_to_string(key) +
            (within == TuningOnThisThread::Within::same_tuner
                 ? " from within its own tuning (a candidate, input generator or validator "
                   "calling its own op)"
                 : " from within the tuning of another op of the same name (two LocalTuners "
                   "named '" +
                       op_ + "': op names must be unique)") +
            ": it would wait for itself; tune that key first, or call another implementation");
  }

  // Stores `decision` for `key` unless another thread stored one first; returns the kept one.
  const Decision& commit(const Key& key, Decision decision) {
    std::lock_guard lock(decisions_mutex_);
    if (const Decision* existing = decisions_.find(key)) return *existing;
    if (retries_.any()) retries_.forget(key_to_string(key));  // decided: its back-off starts over
    return *decisions_.insert(key, std::move(decision));
  }

  // The winners of this op's other keys on this device, as indices into `set` (the set's
  // checksum names them in the store: computed only where there is one).
  template <class Set>
  std::vector<std::size_t> known_winners(const Set& set, const Key& key) {
    const std::uint64_t checksum = records_.store() ? entry_id(set, key).checksum : 0;
    return records_.known_winners(key_to_string(key), checksum, detail::NamesOf(set));
  }

  template <class Set>
  EntryId entry_id(const Set& set, const Key& key) {
    std::call_once(checksum_once_, [&] { checksum_ = stable_hash(set.checksum_text()); });
    return EntryId{device_.identity(), op_, key_to_string(key), checksum_};
  }

  void note(CallPath path, const Decision& decision,
            std::optional<std::uint32_t> served = {}) const noexcept {
    detail::note_call(this, op_, path, served.value_or(decision.index), decision.source);
  }

  std::string op_;
  DeviceId device_;
  Settings settings_;
  detail::Persistence records_;  // the reports and the persistent store, by candidate name
  // Keys that failed for the moment, and when they are tuned again.
  detail::RetryBackoff retries_{settings_.retry_seconds, settings_.retry_max_seconds};
  std::once_flag checksum_once_;
  std::uint64_t checksum_ = 0;
  detail::InsertOnlyMap<Key, Decision, KeyHash, KeyEqual> decisions_;
  std::mutex decisions_mutex_;  // serialises writers of decisions_ and background_ (and strikes)
  std::mutex tuning_mutex_;     // held while this device tunes a key
  // Stopped first in ~Tuner, as its jobs use every member above.
  detail::BackgroundTuning<Key> background_;
};

}  // namespace tunekit
