// What a Tuner keeps of its keys, by candidate name: the reports of this process, and the
// persistent store (load, persist, in-progress records, other keys' winners). Compiled once
// (src/persistence.cpp): it sees a set only through its candidates' names (CandidateNames), and
// an outcome recorded earlier counts only while it still names the same candidate
// (names_candidate).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "tunekit/engine/decision.hpp"
#include "tunekit/error.hpp"
#include "tunekit/outcome.hpp"
#include "tunekit/result_store.hpp"
#include "tunekit/settings.hpp"

namespace tunekit::detail {

/// A set's candidates as the name-level code sees them.
class CandidateNames {
 public:
  virtual std::size_t size() const = 0;
  virtual std::string name(std::size_t index) const = 0;

 protected:
  ~CandidateNames() = default;
};

/// CandidateNames of a TunableSet.
template <class Set>
class NamesOf final : public CandidateNames {
 public:
  explicit NamesOf(const Set& set) : set_(set) {}
  std::size_t size() const override { return set_.size(); }
  std::string name(std::size_t index) const override { return set_.name(index); }

 private:
  const Set& set_;
};

/// Whether `outcome`, recorded earlier (by this process, a store or an interrupted tuning),
/// still names the candidate at its index: a set that changed makes it stale.
bool names_candidate(const CandidateNames& names, const AutotuneOutcome& outcome);

/// Whether a tuning in which every candidate failed is worth remembering on disk: not when a
/// failure may come from the moment (memory, resources, device, timer) rather than from the
/// candidates. It is retried when the set changes (its checksum is part of the entry's identity)
/// or the cache is cleared.
bool lasting(const AutotuneError& failure);
/// Whether `failure` may not happen again: of a kind that may pass (memory, resources, the
/// device, the cache, the settings, a measurement), and not the device's limit (device_limit),
/// which every try meets. The rule lasting() applies to each cause.
bool of_the_moment(const AutotuneError& failure);

/// Whether `decision` is stored: decided, or failed for a lasting reason (never unmeasured nor
/// provisional).
bool worth_storing(const Decision& decision);

/// One tuner's reports and store. Thread-safe. Decisions it makes have no location: the tuner
/// sets it from the set.
class Persistence {
 public:
  Persistence(std::string op, std::string device, LogLevel log, std::shared_ptr<ResultStore> store)
      : op_(std::move(op)), device_(std::move(device)), log_(log), store_(std::move(store)) {}

  ResultStore* store() const noexcept { return store_.get(); }
  /// The store's lock on the key `id()` names, waited for (another process or machine may be
  /// tuning it); nothing without a store (`id` is then not called) or when the lock cannot be
  /// taken (said: the tuning goes on without it).
  template <class Id>
  std::unique_ptr<TuningLock> lock_for_tuning(Id id) const {
    return store_ ? lock_for_tuning(id()) : nullptr;
  }
  std::unique_ptr<TuningLock> lock_for_tuning(const EntryId& id) const;
  /// The same without waiting (ResultStore::try_lock_for_tuning): `busy` while another process
  /// or machine tunes the key.
  template <class Id>
  TuningLockAttempt try_lock_for_tuning(Id id,
                                        std::chrono::steady_clock::time_point waiting_since) const {
    return store_ ? try_lock_for_tuning(id(), waiting_since) : TuningLockAttempt{};
  }
  TuningLockAttempt try_lock_for_tuning(const EntryId& id,
                                        std::chrono::steady_clock::time_point waiting_since) const;

  /// The decision stored for `id`, or nothing: none, unreadable (warned), or no longer naming
  /// the set's candidates (warned unless `report_mismatch` is false; re-tuned). A remembered
  /// failure comes back failed. Its report is remembered (never over one of this process).
  std::optional<Decision> load(const EntryId& id, const CandidateNames& names,
                               bool report_mismatch = true);

  /// Once the winner of a decision load() took from elsewhere (Decision::from_elsewhere) passed
  /// validation on this machine: the store keeps its copy (ResultStore::adopt). Never throws.
  void adopt(const EntryId& id);
  /// ... whose winner gave a wrong output here instead: load() passes over that winner for `id`
  /// from now on (not checked nor said again). Never throws.
  void reject(const EntryId& id);

  /// Saves `decision` under `id` with the report of its key (a failed key with no winner;
  /// candidates that failed after tuning as failed). A write failure is warned, not thrown.
  void persist(const EntryId& id, const Decision& decision, const CandidateNames& names);

  /// The decision a tuning's report makes: its working candidates ranked; else, when only the
  /// timer failed, the first of those that ran, unmeasured; else failed with every reason.
  Decision from_report(const TuningReport& report, const CandidateNames& names) const;

  /// The outcomes of an interrupted tuning's record, when each names a candidate once and was
  /// measured; else none (the record's checksum matched, so it was tampered with).
  std::vector<AutotuneOutcome> resumable(std::vector<AutotuneOutcome> recorded,
                                         const CandidateNames& names,
                                         const std::string& key_text) const;

  /// The winners of the other keys of this op on this device (in this process, then in the
  /// store, under set checksum `checksum`), as indices into the set, most frequent first; at
  /// most a few.
  std::vector<std::size_t> known_winners(const std::string& key_text, std::uint64_t checksum,
                                         const CandidateNames& names) const;

  /// The candidates that tunings in this process ran (their programs are built and cached), as
  /// indices into the set: reports read back from a cache (no tuning time) ran nothing here.
  std::vector<std::size_t> built_in_this_process(const CandidateNames& names) const;

  /// Runs `tuning` (a TuningRun of the set `names` names) and returns its report, logged (at
  /// info; whole at debug) and remembered. With a store entry `id`, the tuning resumes from the
  /// key's in-progress record and records each outcome as it is measured; the record goes once
  /// the tuning is done (one that throws, or is stopped, leaves it for the next tuning).
  /// `complete(report)` adds what only the set knows (its derived metrics) before the report
  /// is logged and kept.
  template <class Run, class Complete>
  TuningReport run_recorded(Run& tuning, const EntryId* id, const CandidateNames& names,
                            const std::string& key_text, Complete complete) {
    std::vector<AutotuneOutcome> recorded;
    if (id != nullptr) {
      recorded = resumable(store_->load_progress(*id), names, key_text);
      tuning.resume(recorded);
      tuning.on_measured([&](const AutotuneOutcome& outcome) {
        recorded.push_back(outcome);
        store_->save_progress(*id, recorded);
      });
    }
    TuningReport report = tuning.run();
    if (id != nullptr) store_->drop_progress(*id);
    complete(report);
    report.source = "computed";
    finished(report);
    return report;
  }

  /// Logs a finished tuning's table (at info; whole at debug) and remembers its report.
  void finished(const TuningReport& report);

  /// Keeps `report` as its key's (over an earlier one when `replace`).
  void remember(TuningReport report, bool replace = true);
  std::optional<TuningReport> report(const std::string& key_text) const;
  std::vector<TuningReport> reports() const;

 private:
  // What a stored result's source is called: the store that answered, and the bundle it came in.
  static std::string source_of(const StoredResult& stored);
  // `text` kept for the records' lifetime (a Decision's source points into it); a few per tuner.
  std::string_view intern(const std::string& text);

  std::string op_;
  std::string device_;
  LogLevel log_;
  std::mutex sources_mutex_;
  std::list<std::string> sources_;  // Decision::source's texts; never shrinks
  std::shared_ptr<ResultStore> store_;
  mutable std::mutex reports_mutex_;
  std::map<std::string, TuningReport> reports_;
  // Results load() took from elsewhere, by key and checksum, until adopt() (or a tuning) ends
  // them: at most one per key.
  std::mutex unverified_mutex_;
  std::map<std::pair<std::string, std::uint64_t>, StoredResult> unverified_;
  std::set<std::tuple<std::string, std::uint64_t, std::string>> rejected_;  // key, checksum, winner
};

}  // namespace tunekit::detail
