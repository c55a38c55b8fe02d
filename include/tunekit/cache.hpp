// FileStore: the persistent cache. Human-readable JSON under a versioned folder, shared safely by
// the threads and processes of one user on one machine: per op an index (<dir>/v2/<op>.json, one
// small record per entry) and one file per entry holding its whole outcome table
// (<dir>/v2/<op>.tables/<hash>.json), read only when that entry is looked up.
//
//  - An entry is (device identity, op, key, set checksum) -> winner, plus every candidate's
//    outcome. It applies only where all four match.
//  - Each file carries a format version; each entry a checksum of its own content. A truncated,
//    garbage, foreign-version or hand-edited file or entry is reported once and ignored; a bad
//    file is moved aside (<op>.json.corrupt-<time>-<pid>) on the next write, never overwritten.
//  - Writes: lock file per op (flock), re-read, merge, temp file, fsync, rename; the entry's
//    table before the index that names it. Entries of older set checksums of a key are pruned.
//  - lock_for_tuning: one lock file per entry (flock): another process waits for the result;
//    the kernel releases the lock of a process that dies.
//  - Indexes are parsed lazily, once, and re-read only when they changed on disk or a lookup
//    misses; a table is read when its entry is looked up.
//  - The directory must be the user's own and not writable by others (see docs/cache.md).
// See docs/cache.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "tunekit/result_store.hpp"

namespace tunekit {

/// One persistent entry: what it is about, and what it says.
struct CacheEntry {
  EntryId id;
  StoredResult result;
};

/// What import_from does with an entry the cache already has.
enum class ImportMode {
  replace,        ///< the imported entry wins
  keep_existing,  ///< the local entry wins
};

/// The persistent cache in a directory. Thread-safe; any number of FileStores (in this process
/// or in others) may share one directory.
class FileStore : public ResultStore {
 public:
  /// The format version this build reads and writes; files live in <dir>/v<format_version>.
  /// Version 1 (one file per op with every outcome table) is not read: its keys are re-tuned
  /// (or its results moved with an older tunekit's `cache export` and this one's import).
  static constexpr int format_version = 2;
  /// The most bytes an entry's key, device identity or op name may have (a matmul key is ~40):
  /// a longer one is refused on write and on import, naming the limit, so that imports cannot
  /// push an op's index past Options::max_index_bytes.
  static constexpr std::size_t max_key_bytes = 64 * 1024;

  struct Options {
    /// How long lock_for_tuning waits for another process's tuning before tuning anyway.
    std::chrono::milliseconds tuning_lock_timeout = std::chrono::minutes(10);
    /// How long a write waits for the op's file lock before giving up (the result stays in
    /// memory). The lock is only held for the short read-merge-write of one file.
    std::chrono::milliseconds write_lock_timeout = std::chrono::seconds(30);
    /// The largest index a write makes and a read reads (parsing costs several times a file's
    /// size in memory): a write that would make it larger is refused and the index stays as it
    /// was, readable; a larger one is not read (its keys are re-tuned, said once).
    std::size_t max_index_bytes = std::size_t{256} << 20;
  };

  /// Uses (and creates) `directory`. Throws AutotuneError(cache) when it cannot be created or
  /// written to.
  explicit FileStore(std::filesystem::path directory);
  FileStore(std::filesystem::path directory, Options options);
  ~FileStore() override;
  FileStore(const FileStore&) = delete;
  FileStore& operator=(const FileStore&) = delete;

  // ResultStore
  std::optional<StoredResult> load(const EntryId& id) override;
  /// Never throws: a failure is reported once on stderr and the result stays in memory only.
  void save(const EntryId& id, const StoredResult& result) override;
  std::unique_ptr<TuningLock> lock_for_tuning(const EntryId& id) override;
  /// One try of the entry's lock file (busy while another process, or thread, holds it); past
  /// Options::tuning_lock_timeout since `waiting_since`, nothing held and not busy (said).
  TuningLockAttempt try_lock_for_tuning(
      const EntryId& id, std::chrono::steady_clock::time_point waiting_since) override;
  std::vector<std::string> winners(const std::string& device, const std::string& op,
                                   std::uint64_t checksum) override;
  /// In-progress records: <dir>/v2/<op>.progress/<hash of device and key>.json, in the format
  /// of an outcome table (checksummed, validated like one) with no winner. Written without
  /// fsync: losing one to a crash only costs measuring its candidates again.
  std::vector<AutotuneOutcome> load_progress(const EntryId& id) override;
  void save_progress(const EntryId& id, const std::vector<AutotuneOutcome>& outcomes) override;
  void drop_progress(const EntryId& id) override;

  /// Stores many entries at once (one read-merge-write per op file). Returns how many were
  /// written. Throws AutotuneError(cache) when a file cannot be written. A merge adds and never
  /// prunes: only a tuning's save() pushes a key's oldest build out (a bundle of older builds,
  /// whose tables would count as the newest, would otherwise push out the builds in use).
  std::size_t save_entries(const std::vector<CacheEntry>& entries,
                           ImportMode mode = ImportMode::replace);

  /// Removes every op's results and in-progress records (and leftover temporary files and
  /// moved-aside corrupt files).
  void clear();
  /// Removes the results and in-progress records of `op` only.
  void clear(std::string_view op);

  /// Every valid entry on disk, of every op and device, sorted by op, device, key.
  std::vector<CacheEntry> entries() const;
  /// Every valid entry of `op`.
  std::vector<CacheEntry> entries(std::string_view op) const;
  /// The ops that have a cache file.
  std::vector<std::string> ops() const;
  /// The identities of `op`'s valid index records: what entries(op) lists, without reading a
  /// single outcome table (cheap however large the tables).
  std::vector<EntryId> ids(std::string_view op) const;
  /// Every valid in-progress record (tunings interrupted before they finished), sorted like
  /// entries(): the outcomes measured so far, and no winner.
  std::vector<CacheEntry> progress() const;

  /// Writes every valid entry (all ops, all devices) to one JSON bundle at `file` (atomically).
  /// Returns the number of entries. Throws AutotuneError(cache) on failure.
  std::size_t export_to(const std::filesystem::path& file) const;
  /// Merges a bundle written by export_to. Entries for other devices are kept (and used only on
  /// that device). Returns the number of entries written. Throws AutotuneError(cache) when the
  /// bundle is unreadable; a single bad entry in it is reported and skipped.
  std::size_t import_from(const std::filesystem::path& file, ImportMode mode = ImportMode::replace);

  /// The cache directory as given, and the versioned folder holding the files.
  const std::filesystem::path& root() const noexcept { return root_; }
  const std::filesystem::path& directory() const noexcept { return dir_; }
  /// What a result this store serves names as its source (StoredResult::source): "local cache
  /// ROOT".
  std::string source() const { return "local cache " + root_.string(); }
  /// The index file of `op`'s results.
  std::filesystem::path file_of(std::string_view op) const;
  /// The folder of `op`'s outcome tables, and the file of one entry's table.
  std::filesystem::path tables_of(std::string_view op) const;
  std::filesystem::path table_of(const EntryId& id) const;
  /// The folder of `op`'s in-progress records, and the record of `id`'s key.
  std::filesystem::path progress_of(std::string_view op) const;
  std::filesystem::path progress_record_of(const EntryId& id) const;

 private:
  enum class Pruning { none, older_builds };
  std::size_t write_entries(const std::vector<CacheEntry>& entries, ImportMode mode,
                            Pruning pruning);
  struct OpState;
  OpState& state_of(const std::string& op) const;

  std::filesystem::path root_;
  std::filesystem::path dir_;
  Options options_;
  mutable std::mutex states_mutex_;
  mutable std::map<std::string, std::unique_ptr<OpState>, std::less<>> states_;
};

namespace detail {

/// What a cache file holds once parsed: the op it is for and its valid entries, plus one line
/// per entry that was rejected (bad checksum, missing field, unknown status, ...).
struct ParsedFile {
  std::string op;
  std::vector<CacheEntry> entries;
  std::vector<std::string> problems;
};

/// Parses the bytes of an outcome-table file (whole entries of one op; FileStore writes one
/// entry per file). Throws AutotuneError(cache) when they are not such a file of this format
/// version (truncated, garbage, foreign version, too deeply nested); never anything else, never
/// crashes. An entry whose content does not match its checksum, that has a number out of range,
/// or that is malformed, is left out and named in `problems`.
ParsedFile parse_cache_file(std::string_view bytes);
/// The JSON text of an outcome-table file (what parse_cache_file reads).
std::string write_cache_file(std::string_view op, const std::vector<CacheEntry>& entries);

/// A bundle (export_to / import_from): several ops' entries in one file.
std::vector<ParsedFile> parse_cache_bundle(std::string_view bytes);
std::string write_cache_bundle(const std::vector<ParsedFile>& ops);

/// The checksum of an entry's content, as stored with it.
std::uint64_t entry_checksum(const CacheEntry& entry);

/// The file name (without directory) used for `op`: safe characters kept, others %XX-escaped.
std::string op_file_name(std::string_view op);

}  // namespace detail
}  // namespace tunekit
