// RedisStore: tuning results shared by a fleet through a Redis server, behind the local file
// store (LayeredStore). Chosen by Settings::store / TUNEKIT_STORE=redis://host:port/db; built
// where hiredis is (CMake option TUNEKIT_WITH_REDIS). See docs/cache.md, "fleet".
//
//  - An entry is the file store's outcome-table text (detail::write_cache_file): the same format,
//    device identity, set checksum and entry checksum. Whatever the server returns is parsed as
//    hostile input; a bad or foreign entry is reported once and ignored.
//  - One tuning per key across the fleet: lock_for_tuning takes a lease (SET NX PX) that a
//    thread renews while the tuning runs; others poll for the result, at most Options::lease_wait,
//    then tune themselves. A crashed tuner's lease expires after Options::lease_ttl.
//  - The server down or lost mid-run: the first failure is reported once, every call then
//    answers at once (a miss, or nothing written) and the server is asked again no sooner than
//    Options::retry_interval later; results saved meanwhile are queued in memory and written on
//    the first call that finds the server back.
//  - Every command has one deadline over its connect, send and whole reply, and no reply is
//    read past a cap (checked on its header, before it is buffered): nothing waits forever.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "tunekit/cache.hpp"
#include "tunekit/result_store.hpp"

namespace tunekit {

/// Where a Redis store is: what redis://[USER@]HOST[:PORT][/DB][?prefix=PREFIX] names.
struct StoreAddress {
  std::string host;  ///< a DNS name, an IPv4 address or a bracketed IPv6 one's inside
  std::uint16_t port = 6379;
  unsigned db = 0;   ///< the logical database (SELECT)
  std::string user;  ///< the ACL user to AUTH as (with Options::password); empty: "default"
  /// Put before every key tunekit writes or reads: several applications (or versions) share one
  /// database without seeing each other's results.
  std::string prefix;
  /// The URL again, in canonical form: redis://[USER@]HOST:PORT/DB[?prefix=PREFIX]. It never
  /// holds a password: it is what messages print.
  std::string url() const;
  bool operator==(const StoreAddress&) const = default;
};

/// The longest key prefix, and the longest user name, a store URL may have.
inline constexpr std::size_t max_store_prefix = 64;
inline constexpr std::size_t max_store_user = 64;

/// Parses a store URL: redis://[USER@]HOST[:PORT][/DB][?prefix=PREFIX]. HOST: a DNS name
/// (letters, digits, '-', '.'), an IPv4 address or [IPv6]; PORT 1-65535 (default 6379); DB
/// 0-65535 (default 0); USER and PREFIX: letters, digits and - _ . : (1 to 64). No password (it
/// would show in logs and process listings: Settings::store_password, TUNEKIT_STORE_PASSWORD),
/// no other query, no fragment, spaces or control characters; at most 255 characters. Throws
/// AutotuneError(settings) naming `source` and what is wrong.
StoreAddress parse_store_url(std::string_view text, std::string_view source = "TUNEKIT_STORE");

/// Whether this build has the Redis store (hiredis was found: TUNEKIT_WITH_REDIS).
bool redis_store_built() noexcept;

/// Results in a Redis database. Thread-safe (one connection, one command at a time).
class RedisStore : public ResultStore {
 public:
  struct Options {
    /// The most a connection may take, resolving the host name included (within the command's
    /// deadline).
    std::chrono::milliseconds connect_timeout{500};
    /// The deadline of one command: connect, send and the whole reply.
    std::chrono::milliseconds command_timeout{2000};
    /// The deadline of one listing (`cache ls`, `export`, `report`, `clear`, ...): its SCAN
    /// rounds and every key's read or delete after them. A server whose cursor never ends, or
    /// that answers each command just within command_timeout, does not hold us.
    std::chrono::milliseconds listing_timeout = std::chrono::minutes(2);
    /// A lease not renewed for this long expires: how long a crashed tuner holds a key up.
    /// It is renewed every third of it while the tuning runs.
    std::chrono::milliseconds lease_ttl{15000};
    /// How long lock_for_tuning waits for another machine's tuning before tuning anyway.
    std::chrono::milliseconds lease_wait = std::chrono::minutes(10);
    /// After a failure the server is not asked again for this long.
    std::chrono::milliseconds retry_interval{10000};
    /// Results saved while the server is away, kept to be written when it is back.
    std::size_t max_pending = 4096;
    /// Sent with AUTH on each connection (as StoreAddress::user when it names one); empty:
    /// no AUTH. A refused one is said as such: "the server refused the password ...".
    std::string password = {};
  };

  /// Connects on first use, not here. Throws AutotuneError(settings) where this build has no
  /// Redis store.
  explicit RedisStore(StoreAddress address);
  RedisStore(StoreAddress address, Options options);
  ~RedisStore() override;
  RedisStore(const RedisStore&) = delete;
  RedisStore& operator=(const RedisStore&) = delete;

  // ResultStore. Never throw: the server away is a miss, a result kept for later, no lease.
  std::optional<StoredResult> load(const EntryId& id) override;
  void save(const EntryId& id, const StoredResult& result) override;
  std::unique_ptr<TuningLock> lock_for_tuning(const EntryId& id) override;
  /// One try of the lease (SET NX PX): busy while another machine holds it and its result is
  /// not there; past Options::lease_wait since `waiting_since`, nothing held and not busy (said).
  TuningLockAttempt try_lock_for_tuning(
      const EntryId& id, std::chrono::steady_clock::time_point waiting_since) override;

  // For `tunekit cache`: these throw AutotuneError(cache) naming the reason when the server
  // cannot be used (unreachable, a refused password, an error reply), and warn nothing.
  /// Every valid entry, sorted by op, device, key; bad ones are reported and left out.
  std::vector<CacheEntry> entries() const;
  std::vector<CacheEntry> entries(std::string_view op) const;
  std::vector<std::string> ops() const;
  /// Writes `entries` (keep_existing: not over an entry the server has). Returns how many.
  std::size_t save_entries(const std::vector<CacheEntry>& entries,
                           ImportMode mode = ImportMode::replace);
  /// Writes every valid entry to a bundle at `file`, as FileStore::export_to does; reads one
  /// as FileStore::import_from does (a bundle with one bad entry is refused whole).
  std::size_t export_to(const std::filesystem::path& file) const;
  std::size_t import_from(const std::filesystem::path& file, ImportMode mode = ImportMode::replace);
  /// Removes every op's entries (and leases), or one op's. Returns how many entries.
  std::size_t clear();
  std::size_t clear(std::string_view op);

  /// Whether the server answered the last command (false before the first, and while away).
  bool reachable() const;
  /// Results saved while the server was away and not written yet.
  std::size_t pending() const;
  const StoreAddress& address() const noexcept;

  struct Impl;  // in the .cpp only

 private:
  std::unique_ptr<TuningLock> try_lease(const EntryId& id, const std::string& key,
                                        const std::string& value, long long& bad_length);
  std::unique_ptr<TuningLock> stopped_waiting(const EntryId& id) const;

  std::shared_ptr<Impl> impl_;  // shared with the leases it gave
};

/// A local store in front of a remote one: a lookup asks the remote store only on a local miss
/// (and keeps what it finds locally, written by a thread); a result goes to both; a tuning holds
/// the local lock, then the remote lease. Either may be null.
class LayeredStore : public ResultStore {
 public:
  LayeredStore(std::shared_ptr<ResultStore> local, std::shared_ptr<ResultStore> remote);
  /// Waits until what was fetched from the remote store is written locally.
  ~LayeredStore() override;
  LayeredStore(const LayeredStore&) = delete;
  LayeredStore& operator=(const LayeredStore&) = delete;
  std::optional<StoredResult> load(const EntryId& id) override;
  void save(const EntryId& id, const StoredResult& result) override;
  std::unique_ptr<TuningLock> lock_for_tuning(const EntryId& id) override;
  /// The local lock, then the remote lease, each tried once: busy (nothing held) while either is
  /// another's.
  TuningLockAttempt try_lock_for_tuning(
      const EntryId& id, std::chrono::steady_clock::time_point waiting_since) override;
  std::vector<std::string> winners(const std::string& device, const std::string& op,
                                   std::uint64_t checksum) override;
  /// A tuning's progress is the machine's own: the local store's.
  std::vector<AutotuneOutcome> load_progress(const EntryId& id) override;
  void save_progress(const EntryId& id, const std::vector<AutotuneOutcome>& outcomes) override;
  void drop_progress(const EntryId& id) override;
  /// A shared store's entry, validated here: written to the local store (by a thread).
  void adopt(const EntryId& id, const StoredResult& result) override;
  const std::shared_ptr<ResultStore>& local() const noexcept { return local_; }
  const std::shared_ptr<ResultStore>& remote() const noexcept { return remote_; }

  /// Waits until what was fetched from the remote store is written locally (the write in
  /// progress included).
  void flush();
  /// flush() of every layered store of the process: before a program says what its local
  /// cache holds (`tunekit tune --store` says "kept" only of what is on disk).
  static void flush_all();

 private:
  void keep_locally(const EntryId& id, const StoredResult& result);

  std::shared_ptr<ResultStore> local_;
  std::shared_ptr<ResultStore> remote_;
  // Entries fetched from the remote store, written locally by a thread (off the caller's path).
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<CacheEntry> to_keep_;
  bool writing_ = false;  // the keeper is writing an entry it took from to_keep_
  std::condition_variable idle_;
  bool stopping_ = false;
  std::thread keeper_;
};

}  // namespace tunekit
