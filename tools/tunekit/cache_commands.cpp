// `tunekit cache ...` and `tunekit report`: the persistent cache, read and moved through FileStore,
// or the shared store that --store / TUNEKIT_STORE names (RedisStore).
#include <sys/stat.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tunekit/cache.hpp>
#include <tunekit/cl/program_binaries.hpp>
#include <tunekit/cl/stored_peaks.hpp>
#include <tunekit/error.hpp>
#include <tunekit/outcome.hpp>
#include <tunekit/redis_store.hpp>
#include <tunekit/report.hpp>

#include "commands.hpp"

namespace tunekit::cli {
namespace {

std::filesystem::path cache_dir(const CommonOptions& common) {
  return command_settings(common).resolved_cache_dir();
}

// Whether there is no cache directory yet; one that is there but is not a directory, or that
// cannot be reached (a folder on its path this user may not search), is an error.
bool cache_absent(const std::filesystem::path& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return false;
  const int error = errno;
  if (::lstat(dir.c_str(), &st) == 0) {  // there, but not a directory (or a link to nothing)
    throw AutotuneError(ErrorKind::cache, "the cache directory " + dir.string() +
                                              " is not a directory; remove it or choose another "
                                              "one (--cache-dir, TUNEKIT_CACHE_DIR)");
  }
  if (error != ENOENT && error != ENOTDIR) {
    throw AutotuneError(ErrorKind::cache, "cannot reach the cache directory " + dir.string() +
                                              ": " + std::strerror(error));
  }
  return true;
}

// Nothing to read: said once, the same way by every command.
bool cache_is_missing(const std::filesystem::path& dir) {
  if (!cache_absent(dir)) return false;
  std::cout << "no tuning results: " << dir.string() << " does not exist yet\n";
  return true;
}

// The shared store the settings name (--store, TUNEKIT_STORE, with TUNEKIT_STORE_PASSWORD), or
// null: the cache commands then work on it instead of the cache directory. Its calls for these
// commands throw AutotuneError naming why the server cannot be used, and warn nothing.
std::unique_ptr<RedisStore> remote_store(const CommonOptions& common) {
  const Settings settings = command_settings(common);
  if (settings.store.empty()) return nullptr;
  RedisStore::Options options;
  options.password = settings.store_password;
  return std::make_unique<RedisStore>(parse_store_url(settings.store), std::move(options));
}

template <class Store>
std::string known_ops(const Store& store) {
  std::string text;
  for (const auto& op : store.ops()) text += (text.empty() ? "" : ", ") + printable(op, 200);
  return text.empty() ? "none" : text;
}

// `op` has no results in `where`: one line, the store's ops listed before it is begun (a listing
// may warn of bad entries, which must not land inside the line).
template <class Store>
int no_results(const std::string& op, const std::string& where, const Store& store) {
  const std::string ops = known_ops(store);
  std::cerr << "tunekit: no results for op '" << printable(op, 200) << "' in " << where
            << " (ops with results: " << ops << ")\n";
  return exit_failure;
}

}  // namespace

namespace {
int remote_ls(const RedisStore& store) {
  const auto entries = store.entries();  // first: a store that cannot be used is one error line
  std::cout << "store: " << store.address().url() << "\n";
  std::map<std::string, std::pair<std::size_t, std::set<std::string>>> ops;  // entries, devices
  for (const auto& entry : entries) {
    auto& [count, devices] = ops[entry.id.op];
    ++count;
    devices.insert(entry.id.device);
  }
  if (ops.empty()) {
    std::cout << "no tuning results\n";
    return exit_ok;
  }
  std::size_t width = 2;
  constexpr std::size_t max_op = 60;
  for (const auto& [op, _] : ops) width = std::max(width, std::min(op.size(), max_op));
  std::printf("  %-*s %8s %8s\n", static_cast<int>(width), "op", "entries", "devices");
  for (const auto& [op, found] : ops) {
    std::printf("  %-*s %8zu %8zu\n", static_cast<int>(width), printable(op, max_op).c_str(),
                found.first, found.second.size());
  }
  std::fflush(stdout);
  return exit_ok;
}
}  // namespace

int cache_ls_command(const CommonOptions& common) {
  if (const auto remote = remote_store(common)) return remote_ls(*remote);
  const auto dir = cache_dir(common);
  if (cache_is_missing(dir)) return exit_ok;
  FileStore store(dir);
  std::cout << "cache: " << store.directory().string() << "\n";
  const cl::ProgramBinaries binaries(dir);
  const auto programs = binaries.usage();
  std::cout << "program binaries: " << programs.files << " (" << programs.bytes << " bytes) in "
            << binaries.directory().string() << "\n";
  const cl::StoredPeaks peaks(dir);
  std::cout << "device peaks: " << peaks.count() << " in " << peaks.directory().string() << "\n";
  const auto unfinished = store.progress();
  if (!unfinished.empty()) {
    std::cout << "interrupted tunings (the next tuning of the key resumes them): "
              << unfinished.size() << "\n";
    for (const auto& record : unfinished) {
      std::cout << "  " << printable(record.id.op, 60) << " [" << printable(record.id.key, 200)
                << "]: " << record.result.outcomes.size() << " candidates measured\n";
    }
  }
  const auto ops = store.ops();
  if (ops.empty()) {
    std::cout << "no tuning results\n";
    return exit_ok;
  }
  std::size_t width = 2;
  constexpr std::size_t max_op = 60;
  for (const auto& op : ops) width = std::max(width, std::min(op.size(), max_op));
  std::printf("  %-*s %8s %8s %10s\n", static_cast<int>(width), "op", "entries", "devices",
              "bytes");
  std::fflush(stdout);
  for (const auto& op : ops) {
    const auto entries = store.ids(op);  // no outcome table read
    std::set<std::string> devices;
    for (const auto& id : entries) devices.insert(id.device);
    // The index and every outcome table.
    std::error_code error;
    auto size = std::filesystem::file_size(store.file_of(op), error);
    std::error_code ignored;
    for (std::filesystem::directory_iterator it(store.tables_of(op), ignored), end;
         !error && !ignored && it != end; it.increment(ignored)) {
      if (it->is_regular_file(ignored)) size += it->file_size(ignored);
    }
    std::printf("  %-*s %8zu %8zu %10s\n", static_cast<int>(width), printable(op, max_op).c_str(),
                entries.size(), devices.size(), error ? "?" : std::to_string(size).c_str());
  }
  std::fflush(stdout);
  return exit_ok;
}

int cache_show_command(const CommonOptions& common, const std::string& op) {
  std::vector<CacheEntry> entries;
  if (const auto remote = remote_store(common)) {
    entries = remote->entries(op);
    if (entries.empty()) return no_results(op, remote->address().url(), *remote);
  } else {
    const auto dir = cache_dir(common);
    if (cache_is_missing(dir)) return exit_failure;
    FileStore store(dir);
    entries = store.entries(op);
    if (entries.empty()) return no_results(op, store.directory().string(), store);
  }
  const auto reports = reports_from_cache(entries);
  const ReportDetail detail =
      command_settings(common).log >= LogLevel::debug ? ReportDetail::full : ReportDetail::summary;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    char checksum[32];
    std::snprintf(checksum, sizeof checksum, "%016" PRIx64, entries[i].id.checksum);
    std::cout << (i ? "\n" : "") << format_report(reports[i], detail) << "    (set checksum "
              << checksum;
    if (entries[i].result.winner.empty()) {
      // What Tuner::load does with such an entry: rethrow, never tune again, until one of these.
      std::cout << ": every candidate failed; programs rethrow this error without tuning until "
                   "the set changes (its checksum) or `tunekit cache clear "
                << printable(op, 200) << "`)\n";
    } else {
      std::cout << ", winner '" << printable(entries[i].result.winner, 200) << "')\n";
    }
  }
  return exit_ok;
}

namespace {
// `cache clear <op>` that matched nothing: a typo must not look like success.
int nothing_matched(const std::string& op, const std::string& where, const std::string& ops) {
  std::cerr << "tunekit: nothing matched: no results for op '" << printable(op, 200) << "' in "
            << where << " (ops with results: " << ops << "); nothing was removed\n";
  return exit_failure;
}
}  // namespace

int cache_clear_command(const CommonOptions& common, const std::string& op) {
  if (const auto remote = remote_store(common)) {
    // Program binaries are never shared (docs/cache.md, "fleet"): nothing of them is there.
    const std::size_t count = op.empty() ? remote->clear() : remote->clear(op);
    if (count == 0 && !op.empty()) {
      return nothing_matched(op, remote->address().url(), known_ops(*remote));
    }
    std::cout << "removed " << count << " results of "
              << (op.empty() ? std::string("every op") : "'" + printable(op, 200) + "'") << " from "
              << remote->address().url() << "\n";
    return exit_ok;
  }
  const auto dir = cache_dir(common);
  if (!op.empty() && cache_absent(dir)) {
    return nothing_matched(op, dir.string() + " (which does not exist yet)", "none");
  }
  if (cache_is_missing(dir)) return exit_ok;
  FileStore store(dir);
  std::size_t unfinished = 0;  // in-progress records, cleared with the results
  for (const auto& record : store.progress()) unfinished += op.empty() || record.id.op == op;
  // An op whose index is unusable (cut short, a link, a FIFO) still has files to clear.
  const auto op_files_there = [&] {
    struct stat st {};
    return ::lstat(store.file_of(op).c_str(), &st) == 0 ||
           ::lstat(store.tables_of(op).c_str(), &st) == 0;
  };
  const bool no_entries = !op.empty() && store.ids(op).empty();
  const bool unusable = no_entries && op_files_there();
  if (no_entries && unfinished == 0 && !unusable) {
    return nothing_matched(op, store.directory().string(), known_ops(store));
  }
  if (unfinished > 0) std::cout << "removed " << unfinished << " interrupted tunings' records\n";
  if (op.empty()) {
    const std::size_t count = store.entries().size();
    store.clear();
    const auto programs = cl::ProgramBinaries(dir).clear();
    const std::size_t peaks = cl::StoredPeaks(dir).clear();
    std::cout << "removed " << count << " results of every op from " << store.directory().string()
              << "\n"
              << "removed " << programs.files << " program binaries (" << programs.bytes
              << " bytes)\n"
              << "removed " << peaks << " device peaks\n";
  } else {
    const std::size_t count = store.entries(op).size();
    store.clear(op);
    std::cout << "removed " << count << " results of '" << printable(op, 200) << "' from "
              << store.directory().string()
              << (unusable ? " (its index was unusable: its files were removed)" : "") << "\n";
  }
  return exit_ok;
}

int cache_export_command(const CommonOptions& common, const std::filesystem::path& file) {
  if (const auto remote = remote_store(common)) {
    const std::size_t count = remote->export_to(file);
    std::cout << "exported " << count << " results from " << remote->address().url() << " to "
              << file.string() << "\n";
    return exit_ok;
  }
  const auto dir = cache_dir(common);
  FileStore store(dir);
  const std::size_t count = store.export_to(file);
  std::cout << "exported " << count << " results to " << file.string() << "\n";
  return exit_ok;
}

int cache_import_command(const CommonOptions& common, const std::filesystem::path& file,
                         bool keep_existing) {
  const ImportMode mode = keep_existing ? ImportMode::keep_existing : ImportMode::replace;
  if (const auto remote = remote_store(common)) {
    const std::size_t count = remote->import_from(file, mode);
    std::cout << "imported " << count << " results from " << file.string() << " into "
              << remote->address().url() << "\n";
    return exit_ok;
  }
  FileStore store(cache_dir(common));
  const std::size_t count = store.import_from(file, mode);
  std::cout << "imported " << count << " results from " << file.string() << " into "
            << store.directory().string() << "\n";
  return exit_ok;
}

int report_command(const CommonOptions& common, const ReportOptions& options) {
  std::vector<CacheEntry> entries;
  const auto remote = remote_store(common);
  const std::string source = remote ? remote->address().url() : cache_dir(common).string();
  if (remote) {
    entries = options.op.empty() ? remote->entries() : remote->entries(options.op);
    if (!options.op.empty() && entries.empty()) return no_results(options.op, source, *remote);
  } else if (const auto dir = cache_dir(common); !cache_absent(dir)) {
    FileStore store(dir);
    entries = options.op.empty() ? store.entries() : store.entries(options.op);
    if (!options.op.empty() && entries.empty()) {
      return no_results(options.op, store.directory().string(), store);
    }
  }
  const auto reports = reports_from_cache(entries);
  std::cout << text_summary(reports);
  if (!options.html.empty()) {
    HtmlReportOptions html_options;
    html_options.subtitle = "from " + source;
    for (const auto& op : ops::shipped_ops())
      html_options.op_summaries.emplace(op.name, op.summary);
    html_options.how_to_tune = "tunekit tune " + ops::shipped_ops().front().name;
    const std::string html = html_report(reports, html_options);
    write_html_report(options.html, html);
    std::error_code error;
    const auto shown = std::filesystem::absolute(options.html, error);
    std::cout << "HTML report: " << (error ? options.html : shown).string() << "\n";
  }
  return exit_ok;
}

}  // namespace tunekit::cli
