// FileStore: the persistent cache on disk (POSIX: open/flock/fsync/rename).
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <system_error>
#include <thread>
#include <utility>

#include "../warnings.hpp"
#include "format_internal.hpp"
#include "indexed_file.hpp"
#include "private_files.hpp"
#include "shared_store.hpp"
#include "tunekit/cache.hpp"
#include "tunekit/error.hpp"
#include "tunekit/outcome.hpp"
#include "tunekit/settings.hpp"

namespace tunekit {

using namespace detail;  // the file helpers of private_files.hpp

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

/// What lock_for_tuning gives when it stopped waiting: nothing held.
class NoLock final : public TuningLock {};

using EntryKey = std::tuple<std::string, std::string, std::uint64_t>;  // device, key, checksum

EntryKey key_of(const EntryId& id) { return {id.device, id.key, id.checksum}; }

bool is_cache_file_name(const std::string& name) {
  return name.size() > 5 && name.ends_with(".json") && name.front() != '.';
}

}  // namespace

/// What this store knows of one op's file: parsed once, entries converted when looked up.
struct FileStore::OpState {
  std::mutex mutex;
  bool loaded = false;
  bool racy = false;
  Stamp stamp;
  std::unique_ptr<detail::IndexedFile> file;  // null: absent or unusable
};

FileStore::FileStore(std::filesystem::path directory)
    : FileStore(std::move(directory), Options{}) {}

FileStore::FileStore(std::filesystem::path directory, Options options)
    : root_(std::move(directory)),
      dir_(root_ / ("v" + std::to_string(format_version))),
      options_(options) {
  prepare_private_directory(root_, Links::follow);
  prepare_private_directory(dir_, Links::refuse);
  // Permission bits do not tell (root, read-only mounts): try it.
  const fs::path probe = dir_ / (".probe." + unique_suffix());
  Fd fd(::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) {
    throw AutotuneError(ErrorKind::cache, "the cache directory " + quoted(dir_) +
                                              " is not writable: " + errno_text(errno));
  }
  fd.reset();
  ::unlink(probe.c_str());
}

FileStore::~FileStore() = default;

std::filesystem::path FileStore::file_of(std::string_view op) const {
  return dir_ / detail::op_file_name(op);
}

std::filesystem::path FileStore::tables_of(std::string_view op) const {
  std::string name = detail::op_file_name(op);
  name.resize(name.size() - 5);  // ".json"
  return dir_ / (name + ".tables");
}

namespace {
/// The hash that names an entry's files (its outcome table, its tuning lock).
std::string entry_hash(const EntryId& id) {
  return detail::hex64(stable_hash(id.device + '\0' + id.key + '\0' + detail::hex64(id.checksum)));
}
}  // namespace

std::filesystem::path FileStore::table_of(const EntryId& id) const {
  return tables_of(id.op) / (entry_hash(id) + ".json");
}

std::filesystem::path FileStore::progress_of(std::string_view op) const {
  std::string name = detail::op_file_name(op);
  name.resize(name.size() - 5);  // ".json"
  return dir_ / (name + ".progress");
}

std::filesystem::path FileStore::progress_record_of(const EntryId& id) const {
  // Not named by the set checksum: a tuning of another build of the set replaces the record.
  return progress_of(id.op) / (detail::hex64(stable_hash(id.device + '\0' + id.key)) + ".json");
}

FileStore::OpState& FileStore::state_of(const std::string& op) const {
  std::lock_guard lock(states_mutex_);
  auto it = states_.find(op);
  if (it == states_.end()) it = states_.emplace(op, std::make_unique<OpState>()).first;
  return *it->second;
}

namespace {

std::string entry_warning(const fs::path& path, const std::string& problem) {
  return "tunekit: cache file " + quoted(path) + ": ignoring " + problem + " (it will be re-tuned)";
}

std::string file_warning(const fs::path& path, const AutotuneError& e) {
  return "tunekit: ignoring unusable cache file " + quoted(path) + " (" + e.message() +
         "); its results will be re-tuned, and it is kept aside on the next write";
}

/// Tells what is wrong with a file that is not there as a readable regular file.
void warn_unreadable(const FileRead& read, const fs::path& path, std::string_view op) {
  if (read.kind == FileRead::directory) {
    warn_once("tunekit: cache file " + quoted(path) +
              " is a directory, not a file; ignoring it "
              "(the results of '" +
              std::string(op) + "' are not cached until it is removed)");
  } else if (read.kind == FileRead::unreadable) {
    warn_once("tunekit: cannot read cache file " + quoted(path) + ": " + read.error +
              "; ignoring it");
  }
}

/// An op's index, read only up to the largest index a store writes (Options::max_index_bytes):
/// parsing costs several times a file's size in memory, and no writer makes a larger one.
FileRead read_index(const fs::path& path, std::size_t limit) {
  return read_file(path, Links::refuse,
                   static_cast<off_t>(std::min<std::size_t>(limit, max_file_size)));
}

/// The parsed index, checked to hold `op`; throws AutotuneError(cache) when unusable.
std::unique_ptr<detail::IndexedFile> parse_for(std::string bytes, std::string_view op) {
  auto file = detail::IndexedFile::parse(std::move(bytes));
  if (file->op() != op) {
    throw AutotuneError(ErrorKind::cache, "it holds the op '" + printable(file->op(), 100) +
                                              "', not '" + printable(op, 100) + "'");
  }
  return file;
}

/// Parses the index that read_file found for `op`, telling each problem once. Records of a file
/// that is not usable as a whole are not returned; `bad` says whether anything was wrong.
std::vector<detail::IndexRecord> records_in(const FileRead& read, const fs::path& path,
                                            std::string_view op, bool* bad = nullptr) {
  if (bad) *bad = false;
  if (read.kind != FileRead::ok) {
    warn_unreadable(read, path, op);
    return {};
  }
  try {
    auto parsed = parse_for(read.bytes, op)->all();
    for (const auto& problem : parsed.problems) warn_once(entry_warning(path, problem));
    if (bad) *bad = !parsed.problems.empty();
    return std::move(parsed.records);
  } catch (const AutotuneError& e) {
    warn_once(file_warning(path, e));
    if (bad) *bad = true;
    return {};
  }
}

/// The whole entry in the outcome table `path`, checked against its index record; nothing
/// (and `problem` set) when the table is missing, unusable or not the one the index names.
std::optional<CacheEntry> read_table(const fs::path& path, const detail::IndexRecord& record,
                                     std::string& problem) {
  const std::string what =
      "the outcome table of [" + printable(record.id.key, 200) + "] (" + quoted(path) + ")";
  if (auto wrong = private_folder_problem(path.parent_path())) {
    problem = what + ": " + *wrong;
    return std::nullopt;
  }
  const FileRead read = read_file(path);
  if (read.kind != FileRead::ok) {
    problem = what + (read.kind == FileRead::absent      ? ": missing"
                      : read.kind == FileRead::directory ? ": a directory"
                                                         : ": " + read.error);
    return std::nullopt;
  }
  try {
    auto parsed = detail::parse_cache_file(read.bytes);
    if (!parsed.problems.empty()) {
      problem = what + ": " + parsed.problems.front();
      return std::nullopt;
    }
    const auto agrees = [&](const CacheEntry& entry) {
      return key_of(entry.id) == key_of(record.id) && entry.result.winner == record.winner &&
             entry.result.winner_index == record.winner_index;
    };
    if (parsed.op != record.id.op || parsed.entries.size() != 1 ||
        !agrees(parsed.entries.front())) {
      problem = what + ": it does not hold the entry its index names";
      return std::nullopt;
    }
    return std::move(parsed.entries.front());
  } catch (const AutotuneError& e) {
    problem = what + ": " + e.message();
    return std::nullopt;
  }
}

/// Keeps an outcome table that is there but unusable, before it is replaced.
void keep_aside_if_unusable(const fs::path& table) {
  const FileRead read = read_file(table);
  if (read.kind == FileRead::absent || read.kind == FileRead::directory) return;
  try {
    if (read.kind == FileRead::ok && detail::parse_cache_file(read.bytes).problems.empty()) return;
  } catch (const AutotuneError&) {
  }
  move_aside(table, "had unusable content");
}

/// How many set checksums (builds of a program's kernels) one key keeps per device: older
/// builds' entries are pruned on write, so that an op's files do not grow without bound.
constexpr std::size_t max_builds_per_key = 3;

/// Prunes the entries of `id`'s device and key beyond the newest max_builds_per_key (by the time
/// their tables were written), `id`'s own entry counting as the newest.
void prune(std::map<EntryKey, detail::IndexRecord>& merged, const EntryId& id,
           const fs::path& tables) {
  std::vector<std::pair<std::int64_t, EntryKey>> others;  // (written, key), other checksums
  for (auto it = merged.lower_bound(EntryKey{id.device, id.key, 0});
       it != merged.end() && std::get<0>(it->first) == id.device &&
       std::get<1>(it->first) == id.key;
       ++it) {
    if (std::get<2>(it->first) == id.checksum) continue;
    others.emplace_back(stamp_of(tables / (entry_hash(it->second.id) + ".json")).mtime_ns,
                        it->first);
  }
  if (others.size() < max_builds_per_key) return;
  std::sort(others.begin(), others.end(), std::greater<>());
  for (std::size_t i = max_builds_per_key - 1; i < others.size(); ++i) {
    const auto found = merged.find(others[i].second);
    ::unlink((tables / (entry_hash(found->second.id) + ".json")).c_str());
    merged.erase(found);
  }
}

/// Adds to `merged` the entries whose outcome tables are in `tables` but that it does not name:
/// what an index that was unusable (moved aside) or never written (a crash between a table and
/// its index) named. A table must pass the checks a load makes, hold one entry of `op` and bear
/// that entry's own name. Those of `writing` (replaced by the write) are left out. Returns how
/// many were added.
std::size_t recover_tables(const fs::path& tables, std::string_view op,
                           const std::vector<const CacheEntry*>& writing,
                           std::map<EntryKey, detail::IndexRecord>& merged) {
  if (private_folder_problem(tables)) return 0;
  std::size_t recovered = 0;
  std::error_code ec;
  for (fs::directory_iterator it(tables, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path path = it->path();
    if (!is_cache_file_name(path.filename().string())) continue;
    const FileRead read = read_file(path);
    if (read.kind != FileRead::ok) continue;
    try {
      auto parsed = detail::parse_cache_file(read.bytes);
      if (!parsed.problems.empty() || parsed.op != op || parsed.entries.size() != 1) continue;
      const CacheEntry& entry = parsed.entries.front();
      if (path.filename() != entry_hash(entry.id) + ".json") continue;
      if (std::any_of(writing.begin(), writing.end(),
                      [&](const CacheEntry* e) { return key_of(e->id) == key_of(entry.id); })) {
        continue;
      }
      recovered += merged.try_emplace(key_of(entry.id), detail::record_of(entry)).second;
    } catch (const AutotuneError&) {
    }
  }
  return recovered;
}

}  // namespace

std::optional<StoredResult> FileStore::load(const EntryId& id) {
  OpState& state = state_of(id.op);
  std::lock_guard lock(state.mutex);
  const fs::path path = file_of(id.op);
  const auto refresh = [&] {
    FileRead read = read_index(path, options_.max_index_bytes);
    state.file.reset();
    state.stamp = read.stamp;
    state.racy = is_racy(read.stamp);
    state.loaded = true;
    if (read.kind != FileRead::ok) return warn_unreadable(read, path, id.op);
    try {
      state.file = parse_for(std::move(read.bytes), id.op);
      for (const auto& problem : state.file->index_problems()) {
        warn_once(entry_warning(path, problem));
      }
    } catch (const AutotuneError& e) {
      warn_once(file_warning(path, e));
    }
  };
  const auto find = [&]() -> std::optional<StoredResult> {
    if (!state.file) return std::nullopt;
    std::string problem;
    const auto record = state.file->find(id, problem);
    if (record) {
      // Only now the one entry's outcome table is read: not the other keys' tables.
      if (auto entry = read_table(table_of(id), *record, problem)) return std::move(entry->result);
    }
    if (!problem.empty()) warn_once(entry_warning(path, problem));
    return std::nullopt;
  };
  bool fresh = false;
  if (!state.loaded || stamp_of(path) != state.stamp) {
    refresh();
    fresh = true;
  }
  auto found = find();
  if (!found && !fresh && state.racy) {
    refresh();  // it may have changed within the timestamp granularity: read it again
    found = find();
  }
  if (found) found->source = source();
  return found;
}

void FileStore::save(const EntryId& id, const StoredResult& result) {
  try {
    write_entries({CacheEntry{id, result}}, ImportMode::replace, Pruning::older_builds);
  } catch (const AutotuneError& e) {
    warn_once("tunekit: could not write the cache of '" + id.op +
              "', the result is kept in memory only: " + e.message());
  } catch (const std::exception& e) {
    warn_once("tunekit: could not write the cache of '" + id.op +
              "', the result is kept in memory only: " + e.what());
  }
}

namespace {
void remove_stale_files(const fs::path& dir, const fs::path& locks);
}  // namespace

std::size_t FileStore::save_entries(const std::vector<CacheEntry>& entries, ImportMode mode) {
  return write_entries(entries, mode, Pruning::none);
}

std::size_t FileStore::write_entries(const std::vector<CacheEntry>& entries, ImportMode mode,
                                     Pruning pruning) {
  std::map<std::string, std::vector<const CacheEntry*>> by_op;
  for (const auto& entry : entries) {
    for (const auto& [what, text] :
         {std::pair<const char*, const std::string*>{"key", &entry.id.key},
          {"device identity", &entry.id.device},
          {"op name", &entry.id.op}}) {
      if (text->size() > max_key_bytes) {
        throw AutotuneError(ErrorKind::cache,
                            "an entry of '" + printable(entry.id.op, 100) + "' has a " + what +
                                " of " + std::to_string(text->size()) + " bytes, more than the " +
                                std::to_string(max_key_bytes) +
                                " a cache entry may have; nothing written");
      }
    }
    by_op[entry.id.op].push_back(&entry);
  }
  // Every op's places are checked before the first op is written: what would refuse one op
  // (a folder or a link where its index, its lock or a table belongs, a tables folder that is
  // not ours) refuses the whole import while nothing has changed yet.
  for (const auto& [op, items] : by_op) {
    std::vector<fs::path> files{file_of(op), file_of(op).string() + ".lock"};
    for (const CacheEntry* entry : items) files.push_back(table_of(entry->id));
    for (const fs::path& file : files) {
      struct stat st {};
      if (::lstat(file.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
        throw AutotuneError(ErrorKind::cache, quoted(file) + " is " + file_kind(st.st_mode) +
                                                  ", not a regular file; nothing written");
      }
    }
    if (auto wrong = private_folder_problem(tables_of(op))) {
      throw AutotuneError(ErrorKind::cache, *wrong + "; nothing written");
    }
  }
  // One op, under its lock; returns how many entries it wrote.
  const auto write_op = [&](const std::string& op, const std::vector<const CacheEntry*>& items) {
    std::size_t count = 0;
    OpState& state = state_of(op);
    std::lock_guard guard(state.mutex);
    const fs::path path = file_of(op);
    const auto lock = LockFile::acquire(path.string() + ".lock", options_.write_lock_timeout,
                                        /*remove_on_release=*/false);
    if (!lock) {
      throw AutotuneError(ErrorKind::cache,
                          "another process held the lock of " + quoted(path) + " for too long");
    }
    // Re-read under the lock: other processes' entries are merged, never lost.
    const FileRead read = read_index(path, options_.max_index_bytes);
    if (read.kind == FileRead::directory) {
      throw AutotuneError(ErrorKind::cache, quoted(path) + " is a directory, not a cache file");
    }
    if (read.kind == FileRead::unreadable) {
      throw AutotuneError(ErrorKind::cache, "cannot read " + quoted(path) + ": " + read.error);
    }
    bool bad = false;
    std::map<EntryKey, detail::IndexRecord> merged;
    for (auto& record : records_in(read, path, op, &bad)) {
      auto key = key_of(record.id);
      merged.insert_or_assign(std::move(key), std::move(record));
    }
    if (bad) move_aside(path, "had unusable content");
    if (bad || read.kind == FileRead::absent) {
      if (const std::size_t n = recover_tables(
              tables_of(op), op,
              mode == ImportMode::replace ? items : std::vector<const CacheEntry*>{}, merged)) {
        warn("tunekit: cache of '" + printable(op, 200) + "': " + std::to_string(n) +
             " entries its index did not name were taken back from their outcome tables");
      }
    }
    {
      // The index it would make, before anything is written (pruning left out: at most this).
      std::map<EntryKey, detail::IndexRecord> would = merged;
      for (const CacheEntry* entry : items) {
        auto key = key_of(entry->id);
        if (mode == ImportMode::keep_existing && would.contains(key)) continue;
        would.insert_or_assign(std::move(key), detail::record_of(*entry));
      }
      std::vector<detail::IndexRecord> records;
      records.reserve(would.size());
      for (auto& [key, record] : would) records.push_back(std::move(record));
      const std::size_t size = detail::write_cache_index(op, records).size();
      if (size > options_.max_index_bytes) {
        throw AutotuneError(ErrorKind::cache,
                            "the index of '" + printable(op, 100) + "' would be " +
                                std::to_string(size) + " bytes, more than the " +
                                std::to_string(options_.max_index_bytes) +
                                " an index may have; nothing written (`tunekit cache clear " +
                                printable(op, 100) + "` removes its results)");
      }
    }
    const fs::path tables = tables_of(op);
    prepare_private_directory(tables, Links::refuse);
    remove_stale_files(dir_, dir_ / "locks");
    remove_stale_files(tables, {});
    const auto write_index = [&] {
      std::vector<detail::IndexRecord> all;
      all.reserve(merged.size());
      for (const auto& [key, record] : merged) all.push_back(record);
      write_atomically(path, detail::write_cache_index(op, all));
    };
    // Each entry's table first, then the index that names it: a reader never finds a record
    // without its table (a crash in between leaves only an unnamed table, replaced later).
    try {
      for (const CacheEntry* entry : items) {
        auto key = key_of(entry->id);
        if (mode == ImportMode::keep_existing && merged.contains(key)) continue;
        const fs::path table = table_of(entry->id);
        keep_aside_if_unusable(table);
        write_atomically(table, detail::write_cache_file(op, {*entry}));
        merged.insert_or_assign(std::move(key), detail::record_of(*entry));
        if (pruning == Pruning::older_builds) prune(merged, entry->id, tables);
        ++count;
      }
    } catch (const AutotuneError& e) {
      // A table replaced already no longer holds what the old index names: the index is
      // written for those (a full disk may refuse it too), then the failure said.
      if (count == 0) throw;
      state.loaded = false;
      state.file.reset();
      try {
        write_index();
      } catch (const AutotuneError&) {
        throw e;
      }
      throw AutotuneError(ErrorKind::cache, e.message() + " (after " + std::to_string(count) +
                                                " entries of '" + printable(op, 200) +
                                                "' were written, and its index)");
    }
    write_index();

    state.loaded = false;  // the next load parses the new index once
    state.file.reset();
    return count;
  };
  std::size_t written = 0;
  std::vector<std::string> done;  // ops written, named if a later one fails (a full disk)
  for (const auto& [op, items] : by_op) {
    try {
      written += write_op(op, items);
      done.push_back(op);
    } catch (const AutotuneError& e) {
      if (done.empty()) throw;
      std::string names;
      for (const auto& name : done)
        names += (names.empty() ? "'" : ", '") + printable(name, 200) + "'";
      throw AutotuneError(ErrorKind::cache, e.message() + " (ops written before it: " + names +
                                                "; nothing of the ops after '" +
                                                printable(op, 200) + "')");
    }
  }
  return written;
}

namespace {

// The lock file of `id`'s tunings under the store's folder `dir` (the locks folder made).
fs::path tuning_lock_path(const fs::path& dir, const EntryId& id) {
  const fs::path locks = dir / "locks";
  prepare_private_directory(locks, Links::refuse);
  std::string name = detail::op_file_name(id.op);
  name.resize(name.size() - 5);  // ".json"
  return locks / (name + "." + entry_hash(id) + ".lock");
}

// The lock taken, with who holds it written in it, for a person looking at the file.
std::unique_ptr<TuningLock> held_for_tuning(std::unique_ptr<LockFile> lock) {
  const std::string holder = "pid " + std::to_string(::getpid()) + "\n";
  if (::ftruncate(lock->fd(), 0) == 0) {
    (void)!::write(lock->fd(), holder.data(), holder.size());
  }
  return lock;
}

// Waited `waited` for another process's tuning of `id`: said, and nothing held. A try
// (try_lock_for_tuning) says it once per key: a layered store may still wait for the fleet's
// lease, and try again.
std::unique_ptr<TuningLock> stopped_waiting(const EntryId& id, std::chrono::milliseconds waited,
                                            bool tried = false) {
  const std::string message = "tunekit: another process has been tuning '" + printable(id.op, 200) +
                              "' [" + printable(id.key, 200) + "] for over " +
                              std::to_string(waited.count()) + " ms; ";
  if (tried) {
    warn_once(message + "no longer waiting for it");
  } else {
    warn(message + "tuning here as well");
  }
  return std::make_unique<NoLock>();
}

}  // namespace

std::unique_ptr<TuningLock> FileStore::lock_for_tuning(const EntryId& id) {
  const fs::path path = tuning_lock_path(dir_, id);
  // A holder that is stopped (not dead) keeps its lock: after a second, say whom we wait for.
  WaitNotice notice{
      std::chrono::seconds(1), [&] {
        // "pid N\n", as held_for_tuning writes it: a larger file is not read (pid unknown).
        std::string holder = read_file(path, Links::refuse, 64).bytes;
        if (holder.ends_with('\n')) holder.pop_back();
        // Threads of one process that meet one new key wait here too.
        const bool this_process = holder == "pid " + std::to_string(::getpid());
        warn("tunekit: waiting for " +
             (this_process ? std::string("another thread of this process")
                           : "another process (" +
                                 printable(holder.empty() ? "pid unknown" : holder, 40) + ")") +
             " that is tuning '" + printable(id.op, 200) + "' [" + printable(id.key, 200) +
             "], for its result (at most " + std::to_string(options_.tuning_lock_timeout.count()) +
             " ms)");
      }};
  auto lock =
      LockFile::acquire(path, options_.tuning_lock_timeout, /*remove_on_release=*/true, &notice);
  return lock ? held_for_tuning(std::move(lock))
              : stopped_waiting(id, options_.tuning_lock_timeout);
}

TuningLockAttempt FileStore::try_lock_for_tuning(const EntryId& id,
                                                 Clock::time_point waiting_since) {
  auto lock = LockFile::acquire(tuning_lock_path(dir_, id), std::chrono::milliseconds(0),
                                /*remove_on_release=*/true);
  if (lock) return {held_for_tuning(std::move(lock)), false};
  if (Clock::now() - waiting_since >= options_.tuning_lock_timeout) {
    return {stopped_waiting(id, options_.tuning_lock_timeout, /*tried=*/true), false};
  }
  return {nullptr, true};
}

namespace {

/// The index files in `dir`, by name.
std::vector<fs::path> cache_files(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (is_cache_file_name(it->path().filename().string())) files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

/// Whether `other` is a temporary file or a moved-aside copy of the cache file `name`, exactly
/// as write_atomically and move_aside name them: "transpose.json.tmp.12.0" is one of
/// "transpose.json", the op file "transpose.json.corrupt-x.json" of another op is not.
bool is_leftover_of(std::string_view name, std::string_view other) {
  if (!other.starts_with(name)) return false;
  other.remove_prefix(name.size());
  if (other.starts_with(".tmp.")) return is_unique_suffix(other.substr(5));
  constexpr std::string_view corrupt = ".corrupt-";
  constexpr std::size_t time_chars = 15;  // timestamp(): YYYYMMDDTHHMMSS
  if (!other.starts_with(corrupt) || other.size() < corrupt.size() + time_chars + 1) return false;
  other.remove_prefix(corrupt.size() + time_chars);
  return other.front() == '-' && is_unique_suffix(other.substr(1));
}

/// Whether `path` is "<file>.tmp.<pid>.<n>" or ".probe.<pid>.<n>" of a process that is gone,
/// untouched for 10 minutes: what a writer killed mid-write leaves. The age, because a pid says
/// nothing across PID namespaces: a writer in another container sharing the cache looks gone,
/// and its file must not vanish between its write and its rename (a write takes well under it).
bool is_stale_temporary(const fs::path& path) {
  const std::string full_name = path.filename().string();
  const std::string_view name = full_name;
  std::string_view suffix;
  if (const auto at = name.rfind(".tmp."); at != std::string_view::npos) {
    suffix = name.substr(at + 5);
  } else if (name.starts_with(".probe.")) {
    suffix = name.substr(7);
  }
  if (!is_unique_suffix(suffix)) return false;
  long pid = 0;
  std::from_chars(suffix.data(), suffix.data() + suffix.find('.'), pid);
  if (pid <= 0 || pid == ::getpid() || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) {
    return false;
  }
  struct stat st {};
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return ::lstat(path.c_str(), &st) == 0 &&
         now - std::chrono::seconds(st.st_mtim.tv_sec) >= std::chrono::minutes(10);
}

/// The next writer cleans up after killed processes: temporary files in `dir` whose writer is
/// gone, and in `locks` the tuning-lock files nobody holds (a killed holder's stay behind;
/// taking the lock proves it free, and a waiter of the deleted file retries on the new one).
void remove_stale_files(const fs::path& dir, const fs::path& locks) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (is_stale_temporary(it->path())) ::unlink(it->path().c_str());
  }
  // A locks folder planted as a link (or not ours) is left alone: its *.lock files are someone
  // else's (a project's Cargo.lock), and lock_for_tuning refuses the folder with the reason.
  if (locks.empty() || private_folder_problem(locks)) return;
  for (fs::directory_iterator it(locks, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path path = it->path();
    if (!path.filename().string().ends_with(".lock")) continue;
    Fd fd(::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    struct stat held {
    }, named{};
    if (fd && ::flock(fd.get(), LOCK_EX | LOCK_NB) == 0 && ::fstat(fd.get(), &held) == 0 &&
        ::lstat(path.c_str(), &named) == 0 && held.st_ino == named.st_ino &&
        held.st_dev == named.st_dev && S_ISREG(named.st_mode)) {
      ::unlink(path.c_str());
    }
  }
}

/// Removes the folder `dir` and what it holds (a link there is removed, never followed).
void remove_tree(const fs::path& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return;
  std::error_code error;
  fs::remove_all(dir, error);  // removes links, never what they point to
  if (error) {
    throw AutotuneError(ErrorKind::cache, "cannot remove " + quoted(dir) + ": " + error.message());
  }
}

/// Whether `name` is the folder of an op's in-progress records.
bool is_progress_dir_name(const std::string& name) {
  return name.size() > 9 && name.ends_with(".progress") && name.front() != '.';
}

/// Removes the index `file`, its leftovers (temporary files, moved-aside corrupt files) and its
/// outcome tables, under its lock.
void remove_cache_file(const fs::path& dir, const fs::path& file, const fs::path& tables,
                       std::chrono::milliseconds timeout) {
  const auto lock = LockFile::acquire(file.string() + ".lock", timeout, false);
  if (!lock)
    throw AutotuneError(ErrorKind::cache, "timed out waiting for the lock of " + quoted(file));
  struct stat st {};
  if (::lstat(file.c_str(), &st) == 0 && !S_ISDIR(st.st_mode) && ::unlink(file.c_str()) != 0) {
    fail("cannot remove " + quoted(file), errno);
  }
  const std::string name = file.filename().string();
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (is_leftover_of(name, it->path().filename().string())) {
      std::error_code ignored;
      fs::remove(it->path(), ignored);
    }
  }
  remove_tree(tables);
}

}  // namespace

void FileStore::clear() {
  for (const auto& file : cache_files(dir_)) {
    std::string name = file.filename().string();
    name.resize(name.size() - 5);
    remove_cache_file(dir_, file, dir_ / (name + ".tables"), options_.write_lock_timeout);
  }
  // In-progress records may have no index beside them (a first tuning that was interrupted).
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    if (is_progress_dir_name(it->path().filename().string())) remove_tree(it->path());
  }
  std::lock_guard lock(states_mutex_);
  for (auto& [op, state] : states_) {
    std::lock_guard state_lock(state->mutex);
    state->loaded = false;
    state->file.reset();
  }
}

void FileStore::clear(std::string_view op) {
  OpState& state = state_of(std::string(op));
  std::lock_guard lock(state.mutex);
  remove_cache_file(dir_, file_of(op), tables_of(op), options_.write_lock_timeout);
  remove_tree(progress_of(op));
  state.loaded = false;
  state.file.reset();
}

namespace {
bool entry_order(const CacheEntry& a, const CacheEntry& b) {
  return std::tie(a.id.op, a.id.device, a.id.key, a.id.checksum) <
         std::tie(b.id.op, b.id.device, b.id.key, b.id.checksum);
}

/// The op an index file holds, read from its content (nothing when unusable).
std::optional<std::string> op_in(const FileRead& read) {
  if (read.kind != FileRead::ok) return std::nullopt;
  try {
    return detail::IndexedFile::parse(read.bytes)->op();
  } catch (const AutotuneError&) {
    return std::nullopt;
  }
}

/// The op whose index `file` is: the op its content names, when `file` bears that op's name.
/// Anything else (a copy, a file renamed by hand) is passed over, said once, so that no entry
/// is listed, exported or counted twice. Unusable content: said as records_in says it.
std::optional<std::string> op_of_index(const fs::path& file, const FileRead& read) {
  auto op = op_in(read);
  if (!op) {
    (void)records_in(read, file, "");  // tells what is wrong
    return std::nullopt;
  }
  if (file.filename() != detail::op_file_name(*op)) {
    warn_once("tunekit: ignoring " + quoted(file) + ": it holds the results of '" +
              printable(*op, 100) + "', whose index is named '" + detail::op_file_name(*op) +
              "' (a copy or a renamed file?)");
    return std::nullopt;
  }
  return op;
}

/// The entries of the index `read` (read from `path`, `op`'s), each with its outcome table.
std::vector<CacheEntry> entries_of(const FileStore& store, const FileRead& read,
                                   const fs::path& path, std::string_view op) {
  std::vector<CacheEntry> found;
  for (const auto& record : records_in(read, path, op)) {
    std::string problem;
    if (auto entry = read_table(store.table_of(record.id), record, problem)) {
      found.push_back(std::move(*entry));
    } else {
      warn_once(entry_warning(path, problem));
    }
  }
  return found;
}
}  // namespace

std::vector<CacheEntry> FileStore::entries() const {
  std::vector<CacheEntry> all;
  for (const auto& file : cache_files(dir_)) {
    const FileRead read = read_index(file, options_.max_index_bytes);  // read once
    const auto op = op_of_index(file, read);
    if (!op) continue;
    auto found = entries_of(*this, read, file, *op);
    all.insert(all.end(), std::make_move_iterator(found.begin()),
               std::make_move_iterator(found.end()));
  }
  std::sort(all.begin(), all.end(), entry_order);
  return all;
}

std::vector<CacheEntry> FileStore::entries(std::string_view op) const {
  const fs::path path = file_of(op);
  auto found = entries_of(*this, read_index(path, options_.max_index_bytes), path, op);
  std::sort(found.begin(), found.end(), entry_order);
  return found;
}

std::vector<std::string> FileStore::winners(const std::string& device, const std::string& op,
                                            std::uint64_t checksum) {
  std::map<std::string, std::size_t> count;
  try {  // the index alone: no outcome table is read
    const fs::path path = file_of(op);
    for (const auto& record : records_in(read_index(path, options_.max_index_bytes), path, op)) {
      if (record.id.device == device && record.id.checksum == checksum && !record.winner.empty()) {
        ++count[record.winner];
      }
    }
  } catch (const std::exception&) {
    return {};  // only a hint for where to start: a tuning goes on without it
  }
  std::vector<std::string> names;
  for (const auto& [name, n] : count) names.push_back(name);
  std::stable_sort(names.begin(), names.end(),
                   [&](const std::string& a, const std::string& b) { return count[a] > count[b]; });
  return names;
}

std::vector<EntryId> FileStore::ids(std::string_view op) const {
  std::vector<EntryId> found;
  const fs::path path = file_of(op);
  for (auto& record : records_in(read_index(path, options_.max_index_bytes), path, op)) {
    found.push_back(std::move(record.id));
  }
  return found;
}

namespace {
/// The in-progress record in `read`, whatever key and checksum it is for; throws
/// AutotuneError(cache) saying what is wrong when it is unusable.
CacheEntry parse_progress(const FileRead& read) {
  if (read.kind != FileRead::ok) {
    throw AutotuneError(ErrorKind::cache,
                        read.kind == FileRead::directory ? "a directory" : read.error);
  }
  auto parsed = detail::parse_cache_file(read.bytes);
  if (!parsed.problems.empty()) throw AutotuneError(ErrorKind::cache, parsed.problems.front());
  if (parsed.entries.size() != 1 || !parsed.entries.front().result.winner.empty()) {
    throw AutotuneError(ErrorKind::cache, "it does not hold one unfinished tuning");
  }
  return std::move(parsed.entries.front());
}

std::string progress_warning(const fs::path& path, const std::string& problem) {
  return "tunekit: ignoring the unusable in-progress record " + quoted(path) + " (" + problem +
         "); its tuning starts over";
}
}  // namespace

std::vector<AutotuneOutcome> FileStore::load_progress(const EntryId& id) {
  const fs::path path = progress_record_of(id);
  try {
    if (auto wrong = private_folder_problem(progress_of(id.op)))
      throw AutotuneError(ErrorKind::cache, *wrong);
    const FileRead read = read_file(path);
    if (read.kind == FileRead::absent) return {};
    CacheEntry entry = parse_progress(read);
    if (entry.id.op != id.op || entry.id.device != id.device || entry.id.key != id.key) {
      throw AutotuneError(ErrorKind::cache, "it is the record of another key");
    }
    if (entry.id.checksum != id.checksum) return {};  // another build of the set: start over
    return std::move(entry.result.outcomes);
  } catch (const AutotuneError& e) {
    warn(progress_warning(path, e.message()));
  } catch (const std::exception& e) {  // e.g. no memory for its bytes
    warn(progress_warning(path, e.what()));
  }
  return {};
}

void FileStore::save_progress(const EntryId& id, const std::vector<AutotuneOutcome>& outcomes) {
  try {
    prepare_private_directory(progress_of(id.op), Links::refuse);
    const CacheEntry entry{id, StoredResult{std::string(), 0, outcomes}};
    write_atomically(progress_record_of(id), detail::write_cache_file(id.op, {entry}), 0600,
                     Durability::none);
  } catch (const std::exception& e) {
    // Once per directory and op: each failure names its own temporary file, and a full disk
    // fails every candidate's record.
    static std::mutex said_mutex;
    static std::set<std::string> said;
    {
      std::lock_guard lock(said_mutex);
      if (!said.insert(dir_.string() + '\0' + id.op).second) return;
    }
    warn("tunekit: could not record the progress of tuning '" + id.op +
         "' (an interruption starts it over; said once): " + e.what());
  }
}

void FileStore::drop_progress(const EntryId& id) {
  const fs::path path = progress_record_of(id);
  if (private_folder_problem(progress_of(id.op))) return;  // never delete through a planted link
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode) && ::unlink(path.c_str()) != 0) {
    warn_once("tunekit: could not remove the in-progress record " + quoted(path) + ": " +
              errno_text(errno));
  }
}

std::vector<CacheEntry> FileStore::progress() const {
  std::vector<CacheEntry> all;
  std::error_code ec;
  for (fs::directory_iterator dir(dir_, ec), end; !ec && dir != end; dir.increment(ec)) {
    struct stat st {};
    const fs::path folder = dir->path();
    if (!is_progress_dir_name(folder.filename().string()) || ::lstat(folder.c_str(), &st) != 0 ||
        !S_ISDIR(st.st_mode)) {
      continue;
    }
    if (auto wrong = private_folder_problem(folder)) {
      warn_once("tunekit: ignoring the in-progress records in " + quoted(folder) + ": " + *wrong);
      continue;
    }
    std::error_code inner;
    for (fs::directory_iterator it(folder, inner); !inner && it != end; it.increment(inner)) {
      const fs::path path = it->path();
      if (!is_cache_file_name(path.filename().string())) continue;
      try {
        all.push_back(parse_progress(read_file(path)));
      } catch (const AutotuneError& e) {
        warn_once(progress_warning(path, e.message()));
      }
    }
  }
  std::sort(all.begin(), all.end(), entry_order);
  return all;
}

std::vector<std::string> FileStore::ops() const {
  std::vector<std::string> names;
  for (const auto& file : cache_files(dir_)) {
    const FileRead read = read_index(file, options_.max_index_bytes);
    auto op = op_of_index(file, read);
    if (!op) continue;
    (void)records_in(read, file, *op);  // tells what is wrong
    names.push_back(std::move(*op));
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::size_t FileStore::export_to(const std::filesystem::path& file) const {
  std::vector<detail::ParsedFile> ops;
  std::size_t count = 0;
  for (auto& entry : entries()) {
    if (ops.empty() || ops.back().op != entry.id.op) ops.push_back({entry.id.op, {}, {}});
    ops.back().entries.push_back(std::move(entry));
    ++count;
  }
  write_user_file(file, detail::write_cache_bundle(ops));
  return count;
}

std::size_t FileStore::import_from(const std::filesystem::path& file, ImportMode mode) {
  const FileRead read = read_file(file, Links::follow);  // a file the user named
  switch (read.kind) {
    case FileRead::absent:
      throw AutotuneError(ErrorKind::cache, "cannot import " + quoted(file) + ": no such file");
    case FileRead::directory:
      throw AutotuneError(ErrorKind::cache, "cannot import " + quoted(file) + ": a directory");
    case FileRead::unreadable:
      throw AutotuneError(ErrorKind::cache, "cannot import " + quoted(file) + ": " + read.error);
    case FileRead::ok:
      break;
  }
  std::vector<detail::ParsedFile> ops;
  try {
    ops = detail::parse_cache_bundle(read.bytes);
  } catch (const AutotuneError& e) {
    throw AutotuneError(ErrorKind::cache, "cannot import " + quoted(file) + ": " + e.message());
  }
  std::vector<CacheEntry> all;
  for (auto& op : ops) {
    // A bundle is all or nothing: a bad entry (forged numbers, a failed checksum) means the
    // bundle cannot be trusted, so nothing of it is merged.
    if (!op.problems.empty()) {
      throw AutotuneError(ErrorKind::cache, "cannot import " + quoted(file) + ": " +
                                                op.problems.front() + " (nothing imported)");
    }
    all.insert(all.end(), std::make_move_iterator(op.entries.begin()),
               std::make_move_iterator(op.entries.end()));
  }
  const auto failures = std::erase_if(all, [](const CacheEntry& e) { return e.result.failed(); });
  // Where each came from, kept with it: a result served later names its bundle (an entry of a
  // bundle that was imported before keeps its first bundle's name).
  for (auto& entry : all) {
    if (entry.result.imported_from.empty()) {
      entry.result.imported_from = file.filename().string().substr(0, 255);
    }
  }
  if (failures > 0) {
    warn("tunekit: " + quoted(file) + ": left out " + std::to_string(failures) +
         " remembered failure(s) (every candidate failed): a failure holds only on the machine "
         "where it happened");
  }
  return save_entries(all, mode);
}

std::shared_ptr<ResultStore> make_result_store(const Settings& settings) {
  if (!settings.persistent_cache) return nullptr;
  std::shared_ptr<ResultStore> local;
  try {
    const std::filesystem::path root = settings.resolved_cache_dir();
    // An unusable directory is said once for everything kept there (program binaries too).
    if (const auto problem = cache_root_problem(root)) {
      warn_once(unusable_cache_root_warning(*problem));
    } else {
      local = std::make_shared<FileStore>(root);
    }
  } catch (const AutotuneError& e) {
    warn_once("tunekit: " + e.message() + "; running without the persistent cache");
  }
  return detail::with_shared_store(settings, std::move(local));  // Settings::store, if any
}

}  // namespace tunekit
