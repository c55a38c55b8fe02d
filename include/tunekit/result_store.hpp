// ResultStore: where tuning results outlive the process. The tuner talks to this interface only;
// the file-backed store (cache.hpp) is the one tunekit ships.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/outcome.hpp"
#include "tunekit/stable_hash.hpp"  // was declared here; kept for code that found it here

namespace tunekit {

/// What one persistent entry is about. A result applies only where all four match.
struct EntryId {
  std::string device;      ///< DeviceId::identity()
  std::string op;          ///< the LocalTuner's op name
  std::string key;         ///< key_to_string(key)
  std::uint64_t checksum;  ///< checksum of the tunable set (names, kernel sources, options)
};

/// A stored tuning: the winner, and every candidate's outcome for inspection and fallback.
struct StoredResult {
  std::string winner;          ///< name of the winning candidate; empty: every candidate failed
  std::uint32_t winner_index;  ///< its index in the set
  std::vector<AutotuneOutcome> outcomes;
  /// The names of the outcomes' metrics (AutotuneOutcome::metrics); empty: none.
  std::vector<std::string> metric_names = {};
  /// The bundle it was imported from (its file name), kept with it; empty: tuned here or
  /// fetched from a shared store.
  std::string imported_from = {};
  /// Which store answered a load, set by that store (not kept): "local cache DIR", "shared
  /// store redis://HOST:PORT/DB?prefix=P".
  std::string source = {};
  /// Set by a shared store's load (not kept): the result comes from another machine.
  bool shared = false;

  /// A remembered failure (every candidate failed) holds only where it happened: it is never
  /// sent to or taken from a shared store, nor imported from a bundle, so that a forged or
  /// foreign one cannot switch an op off on another machine (docs/cache.md).
  bool failed() const noexcept { return winner.empty(); }
  /// Whether it comes from elsewhere (a shared store, an imported bundle): its winner serves
  /// only once its output passed the set's validator on this machine (docs/cache.md).
  bool from_elsewhere() const noexcept { return shared || !imported_from.empty(); }
};

/// Held while this process tunes an entry; other processes wait for it. Released on destruction.
class TuningLock {
 public:
  virtual ~TuningLock() = default;
};

/// What ResultStore::try_lock_for_tuning found: the lock (as lock_for_tuning gives it), or
/// `busy`: another process or machine tunes the entry now, and nothing is held.
struct TuningLockAttempt {
  std::unique_ptr<TuningLock> lock;
  bool busy = false;
};

/// Persistent results, shared by threads and processes.
class ResultStore {
 public:
  virtual ~ResultStore() = default;
  /// The stored result for `id`, or nothing (absent, unreadable, or for another checksum).
  virtual std::optional<StoredResult> load(const EntryId& id) = 0;
  /// Stores `result` for `id`, replacing an older one. Failures are reported, not thrown.
  virtual void save(const EntryId& id, const StoredResult& result) = 0;
  /// Waits until no other process is tuning `id`, then holds it until the lock is destroyed.
  virtual std::unique_ptr<TuningLock> lock_for_tuning(const EntryId& id) = 0;
  /// lock_for_tuning without the wait, for a tuning that has other work meanwhile (a background
  /// tuning queues the key again): `busy` while another process tunes `id`. `waiting_since`:
  /// when the caller first found it busy; once the store's own wait limit has passed since then,
  /// it stops waiting as lock_for_tuning does (said; the tuning goes on here as well). Default:
  /// lock_for_tuning (a store that cannot try waits).
  virtual TuningLockAttempt try_lock_for_tuning(
      const EntryId& id, std::chrono::steady_clock::time_point waiting_since) {
    (void)waiting_since;
    return {lock_for_tuning(id), false};
  }
  /// The winners' names of every stored key of `op` on `device` for this set (`checksum`), most
  /// frequent first: where a tuning of a new key starts (neighbouring keys). Never throws.
  virtual std::vector<std::string> winners(const std::string& device, const std::string& op,
                                           std::uint64_t checksum) {
    (void)device, (void)op, (void)checksum;
    return {};
  }

  /// A tuning's progress, persisted as its candidates are measured so that a tuning that was
  /// interrupted (killed, stopped) resumes where it stopped. One record per device, op and key:
  /// saving one for another set checksum replaces it. A store may keep none (the default).
  ///
  /// The outcomes recorded for `id`: empty when there is no record, or one for another set
  /// checksum. Never throws: an unusable record is reported and ignored.
  virtual std::vector<AutotuneOutcome> load_progress(const EntryId& id) {
    (void)id;
    return {};
  }
  /// Replaces the record of `id`'s key with `outcomes`. Never throws (a failure is reported).
  virtual void save_progress(const EntryId& id, const std::vector<AutotuneOutcome>& outcomes) {
    (void)id, (void)outcomes;
  }
  /// Removes the record of `id`'s key: the tuning finished. Never throws.
  virtual void drop_progress(const EntryId& id) { (void)id; }

  /// A result load() took from elsewhere (StoredResult::from_elsewhere) whose winner then
  /// passed validation on this machine: a store that keeps copies of such results keeps this one
  /// (LayeredStore writes the shared store's entry to the local cache). Default: nothing. Never
  /// throws.
  virtual void adopt(const EntryId& id, const StoredResult& result) { (void)id, (void)result; }
};

/// The store `settings` ask for: the file store under settings.resolved_cache_dir(), or null
/// when the persistent cache is off. A directory that cannot be used is reported once and gives
/// null: tuning goes on without persistence.
struct Settings;
std::shared_ptr<ResultStore> make_result_store(const Settings& settings);

}  // namespace tunekit
