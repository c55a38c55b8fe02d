// Attacks on the cache directory by another local user (or a careless one): planted symbolic
// links, directories others can write, a shared temporary directory. The attacked process runs
// as an unprivileged user (tests/unprivileged.hpp), so that these are real under root too.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <limits>
#include <stdexcept>
#include <tunekit/report.hpp>
#include <tuple>

#include "../../src/cache/private_files.hpp"
#include "../unprivileged.hpp"
#include "test_cache_support.hpp"

using namespace tunekit;
using namespace tunekit::test;

namespace {

const EntryId id{"device A", "cached_op", "n=1", 0x1234};

mode_t mode_of(const fs::path& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

/// A cache directory (with v2/ and v2/locks/) of the unprivileged user, under `dir`.
fs::path victims_cache(const TempDir& dir) {
  const fs::path cache = dir / "cache";
  fs::create_directories(cache / "v2" / "locks");
  for (const auto& d : {cache, cache / "v2", cache / "v2" / "locks"}) {
    fs::permissions(d, fs::perms::owner_all);
  }
  give_to_unprivileged(dir.path());
  return cache;
}

/// The name of `id`'s tuning lock file, seen while it is held.
std::string tuning_lock_name(const fs::path& cache) {
  const int rc = run_unprivileged([&] {
    FileStore store(cache);
    const auto lock = store.lock_for_tuning(id);
    for (const auto& e : fs::directory_iterator(cache / "v2" / "locks")) {
      write_text(cache / "lock-name", e.path().filename().string());
    }
    return 0;
  });
  REQUIRE(rc == 0);
  const std::string name = read_text(cache / "lock-name");
  REQUIRE_FALSE(name.empty());
  return name;
}

}  // namespace

TEST_CASE("a symbolic link planted at a lock file is never followed", "[cache][attack]") {
  TempDir dir;
  const fs::path cache = victims_cache(dir);
  const fs::path secret = dir / "secret";  // a file of the attacked user
  write_text(secret, "secret");
  fs::permissions(secret, fs::perms::owner_read | fs::perms::owner_write);
  give_to_unprivileged(secret);
  const std::string lock_name = tuning_lock_name(cache);
  fs::create_symlink(secret, cache / "v2" / "locks" / lock_name);
  fs::create_symlink(dir / "created", cache / "v2" / "cached_op.json.lock");  // a missing path
  fs::create_symlink(secret, cache / "v2" / "cached_op.json");

  const int rc = run_unprivileged([&] {
    FileStore store(cache);
    int refused = 0;
    try {
      (void)store.lock_for_tuning(id);
    } catch (const AutotuneError& e) {
      refused += e.message().find("symbolic link") != std::string::npos;
    }
    try {
      store.save_entries({CacheEntry{id, sample_result()}});
    } catch (const AutotuneError& e) {
      refused += e.message().find("symbolic link") != std::string::npos;
    }
    (void)store.load(id);  // reads nothing through the link
    return refused == 2 ? 0 : 1;
  });
  CHECK(rc == 0);
  CHECK(read_text(secret) == "secret");
  CHECK_FALSE(fs::exists(dir / "created"));
}

TEST_CASE("a cache directory another user can write, or that is not ours, is refused",
          "[cache][attack]") {
  TempDir dir;
  const fs::path cache = victims_cache(dir);
  const auto refused_because = [&](const fs::path& where, const std::string& reason) {
    return run_unprivileged([&] {
      try {
        FileStore store(where);
        (void)store.lock_for_tuning(id);
      } catch (const AutotuneError& e) {
        return e.message().find(reason) != std::string::npos ? 0 : 2;
      }
      return 1;
    });
  };
  CHECK(refused_because("/", "not to this user") == 0);  // root's: `nobody` or us
  for (const auto& d : {cache, cache / "v2", cache / "v2" / "locks"}) {
    fs::permissions(d, fs::perms::all);  // 0777: anyone could plant links in it
    CHECK(refused_because(cache, "chmod go-w") == 0);
    fs::permissions(d, fs::perms::owner_all);
  }
  fs::permissions(cache, fs::perms::owner_all | fs::perms::group_write);
  CHECK(refused_because(cache, "writable by other users") == 0);
  fs::permissions(cache, fs::perms::owner_all);
  fs::create_directory_symlink(cache, dir / "link");  // the user's own link to the cache: fine
  give_to_unprivileged(dir / "link");
  CHECK(refused_because(dir / "link", "") == 1);
  if (::geteuid() == 0) {  // only root can make a link that a third user owns
    // Planted where the victim's cache directory was to be: it leads to the victim's own folder.
    fs::create_directory_symlink(cache, dir / "planted");
    const uid_t third = unprivileged_user().uid + 1;
    REQUIRE(::lchown((dir / "planted").c_str(), third, third) == 0);
    CHECK(refused_because(dir / "planted", "symbolic link of another user") == 0);
    // lstat("planted/") would look through the link.
    CHECK(refused_because((dir / "planted").string() + "/", "symbolic link of another user") == 0);
  }
  fs::remove(cache / "v2" / "locks");
  fs::create_directory_symlink(dir.path(), cache / "v2" / "locks");
  give_to_unprivileged(cache / "v2" / "locks");
  CHECK(refused_because(cache, "symbolic link") == 0);
}

TEST_CASE("cache directories are created 0700 and files 0600, whatever the umask",
          "[cache][attack]") {
  TempDir dir;
  give_to_unprivileged(dir.path());
  const fs::path cache = dir / "new" / "cache";
  const int rc = run_unprivileged([&] {
    ::umask(0);
    FileStore store(cache);
    (void)store.lock_for_tuning(id);
    store.save_entries({CacheEntry{id, sample_result()}});
    return 0;
  });
  REQUIRE(rc == 0);
  CHECK(mode_of(dir / "new") == 0700);
  CHECK(mode_of(cache) == 0700);
  CHECK(mode_of(cache / "v2") == 0700);
  CHECK(mode_of(cache / "v2" / "locks") == 0700);
  CHECK(mode_of(cache / "v2" / "cached_op.json") == 0600);
  CHECK(mode_of(cache / "v2" / "cached_op.json.lock") == 0600);
}

// ---- forged numbers: an entry whose checksum is right (anyone can compute it) but whose
// numbers are not times or counts ----

namespace {

/// The file's text with one entry whose first outcome was changed by `forge`.
template <class Forge>
std::string forged_file(Forge&& forge) {
  CacheEntry entry{id, sample_result()};
  forge(entry.result.outcomes.front());
  return detail::write_cache_file(id.op, {entry});
}

}  // namespace

TEST_CASE("a file of exactly the read limit is read whole, one byte more is refused",
          "[cache][attack]") {
  TempDir dir;
  const fs::path file = dir / "file";
  for (const std::size_t size : {std::size_t{100}, std::size_t{101}}) {
    INFO(size << " bytes, a limit of 100");
    std::ofstream(file, std::ios::binary | std::ios::trunc) << std::string(size, 'x');
    const auto read = detail::read_file(file, detail::Links::refuse, 100);
    if (size == 100) {
      CHECK(read.kind == detail::FileRead::ok);
      CHECK(read.bytes.size() == 100);
    } else {
      CHECK(read.kind == detail::FileRead::unreadable);
      CHECK(read.error == "larger than 100 bytes");
    }
  }
}

TEST_CASE("a file of many bad entries under a long op name costs a bounded list of problems",
          "[cache][attack]") {
  // Each refused entry's message names the op: a 1 MiB name copied into each of 2000 messages
  // was 2 GiB, and a Redis value or a bundle may carry such a document.
  const std::string op(std::size_t{1} << 20, 'A');
  std::string text = detail::write_cache_file(op, {});
  const auto open = text.find('[', text.find("\"entries\""));
  REQUIRE(open != std::string::npos);
  std::string items;
  for (int i = 0; i < 2000; ++i) items += i == 0 ? "\"x\"" : ",\"x\"";
  text.insert(open + 1, items);
  const auto parsed = detail::parse_cache_file(text);
  CHECK(parsed.entries.empty());
  REQUIRE(parsed.problems.size() == 33);
  std::size_t bytes = 0;
  for (const auto& problem : parsed.problems) bytes += problem.size();
  CHECK(bytes < 33 * 300);
  CHECK_THAT(parsed.problems.front(), Catch::StartsWith("entry 0 of 'AAAA"));
  CHECK_THAT(parsed.problems.back(),
             Catch::Contains("further refused entries (only the first 32 are listed)"));
}

TEST_CASE("forged times and counts in an entry are refused by the reader, naming the field",
          "[cache][attack]") {
  const double bad_times[] = {5e-324,
                              1e-300,
                              std::numeric_limits<double>::infinity(),
                              -1e-3,
                              std::numeric_limits<double>::quiet_NaN(),
                              1e9};
  // An entry forged by `forge` is refused, with one problem that names `field`.
  const auto refused_naming = [](const char* field, auto forge) {
    INFO(field);
    const auto parsed = detail::parse_cache_file(forged_file(forge));
    CHECK(parsed.entries.empty());
    REQUIRE(parsed.problems.size() == 1);
    CHECK_THAT(parsed.problems.front(), Catch::Contains(std::string("\"") + field + "\""));
  };
  for (const double bad : bad_times) {
    INFO("median " << bad);
    refused_naming("median", [&](AutotuneOutcome& o) { o.median = bad; });
  }
  for (const double bad : {-std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::infinity(), 1e9, -1e-3}) {
    INFO("spread " << bad);
    refused_naming("spread", [&](AutotuneOutcome& o) { o.spread = bad; });
  }
  refused_naming("batch", [](AutotuneOutcome& o) { o.batch = std::size_t{1} << 40; });
  refused_naming("samples", [](AutotuneOutcome& o) { o.samples = std::size_t{1} << 40; });
  const auto index = detail::parse_cache_file(
      forged_file([](AutotuneOutcome& o) { o.index = std::size_t{1} << 33; }));
  CHECK(index.entries.empty());
  // The legitimate extremes still read: 0 (not measured) and NaN spread (skipped).
  const auto fine = detail::parse_cache_file(forged_file([](AutotuneOutcome& o) {
    o.median = 1e-12, o.spread = std::numeric_limits<double>::quiet_NaN(), o.min = 0;
  }));
  CHECK(fine.entries.size() == 1);
  CHECK(fine.problems.empty());
}

TEST_CASE("a bundle with a forged entry is refused whole by import", "[cache][attack]") {
  TempDir dir;
  CacheEntry good{id, sample_result()};
  CacheEntry forged{EntryId{id.device, id.op, "n=2", id.checksum}, sample_result()};
  forged.result.outcomes.front().median = 5e-324;
  write_text(dir / "bundle.json", detail::write_cache_bundle({{id.op, {good, forged}, {}}}));
  FileStore store(dir / "cache");
  try {
    store.import_from(dir / "bundle.json");
    FAIL("imported");
  } catch (const AutotuneError& e) {
    CHECK(e.kind() == ErrorKind::cache);
    CHECK_THAT(e.message(), Catch::Contains("\"median\"") && Catch::Contains("nothing imported"));
  }
  CHECK(store.entries().empty());
}

TEST_CASE("a key past the size limit is refused on import and on write, naming the limit",
          "[cache][attack]") {
  TempDir dir;
  FileStore store(dir / "cache");
  store.save(id, sample_result());  // the genuine entry
  // 600 KB here (the attack used 560 MB: two such imports pushed the index past 1 GiB).
  const std::string huge(600 * 1024, 'k');
  CacheEntry forged{EntryId{id.device, id.op, huge, id.checksum}, sample_result()};
  write_text(dir / "bundle.json", detail::write_cache_bundle({{id.op, {forged}, {}}}));
  CHECK_THROWS_WITH(store.import_from(dir / "bundle.json"), Catch::Contains("614400 bytes") &&
                                                                Catch::Contains("65536") &&
                                                                Catch::Contains("nothing written"));
  CapturedWarnings warnings;
  store.save(forged.id, forged.result);  // the tuner's path: said once, not thrown
  CHECK(warnings.count("more than the 65536") == 1);
  const auto entries = store.entries(id.op);
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].id.key == id.key);
  // At the limit exactly: kept; one byte past it: refused.
  const std::string at_limit(FileStore::max_key_bytes, 'k');
  store.save(EntryId{id.device, id.op, at_limit, id.checksum}, sample_result());
  CHECK(store.load(EntryId{id.device, id.op, at_limit, id.checksum}));
  CapturedWarnings past;
  store.save(EntryId{id.device, id.op, at_limit + "k", id.checksum}, sample_result());
  CHECK(past.count("65537 bytes, more than the 65536") == 1);
  CHECK(store.entries(id.op).size() == 2);
}

TEST_CASE("imports can never make an op's index unreadable", "[cache][attack]") {
  TempDir dir;
  FileStore::Options options;
  options.max_index_bytes = 16 * 1024;  // 256 MiB in use; small here to reach it
  FileStore store(dir / "cache", options);
  store.save(id, sample_result());
  // Bundles of many keys within the key limit, imported until the index would pass its limit.
  int refused = 0;
  for (int round = 0; round < 20 && refused == 0; ++round) {
    std::vector<CacheEntry> entries;
    for (int i = 0; i < 10; ++i) {
      entries.push_back(CacheEntry{
          EntryId{id.device, id.op,
                  "n=" + std::to_string(round * 10 + i) + " pad=" + std::string(400, 'p'),
                  id.checksum},
          sample_result()});
    }
    write_text(dir / "bundle.json", detail::write_cache_bundle({{id.op, entries, {}}}));
    try {
      store.import_from(dir / "bundle.json");
    } catch (const AutotuneError& e) {
      CHECK_THAT(e.message(), Catch::Contains("would be") && Catch::Contains("16384") &&
                                  Catch::Contains("nothing written"));
      ++refused;
    }
  }
  CHECK(refused == 1);
  // The index is as it was before the refused import: readable, the genuine entry in it.
  FileStore reader(dir / "cache");
  CHECK(reader.load(id).has_value());
  CHECK(fs::file_size(dir / "cache" / "v2" / (id.op + ".json")) <= options.max_index_bytes);
}

TEST_CASE("the HTML report stays bounded on times the reader would refuse", "[cache][attack]") {
  // Called directly (not through the reader): a subnormal time made the log-scale tick loop
  // step by 0, an infinite one made it allocate without bound.
  const double infinity = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<std::pair<double, double>> pairs{
      {5e-324, 1e-3}, {1e-3, infinity}, {4e-320, 1e308}, {nan, 1e-3},
      {-1, 1e-3},     {0, 0},           {1e-3, 1e300},   {-infinity, infinity}};
  for (const auto& [a, b] : pairs) {
    INFO(a << " and " << b);
    TuningReport report{"op", "n=1", "device", 0, sample_result().outcomes};
    report.outcomes[0].median = a;
    report.outcomes[1].median = b;
    const std::string html = html_report({report});
    CHECK(html.size() < (std::size_t{4} << 20));
    CHECK_FALSE(text_summary({report}).empty());
  }
}

TEST_CASE("clearing an op removes its own leftovers only, not another op's file",
          "[cache][attack]") {
  TempDir dir;
  FileStore store(dir.path());
  // Other ops whose names look like this op's leftovers: a corrupt file's and a temporary one's.
  const EntryId other{id.device, "cached_op.json.corrupt-x", id.key, id.checksum};
  const EntryId temporary{id.device, "cached_op.json.tmp.x", id.key, id.checksum};
  store.save_entries({CacheEntry{id, sample_result()}, CacheEntry{other, sample_result()},
                      CacheEntry{temporary, sample_result()}});
  write_text(dir / "v2/cached_op.json.tmp.123.4", "half");
  write_text(dir / "v2/cached_op.json.corrupt-20261122T141503-4711.0", "bad");
  store.clear(id.op);
  CHECK(store.entries(id.op).empty());
  CHECK(store.entries(other.op).size() == 1);
  CHECK(store.entries(temporary.op).size() == 1);
  CHECK_FALSE(fs::exists(dir / "v2/cached_op.json.tmp.123.4"));
  CHECK_FALSE(fs::exists(dir / "v2/cached_op.json.corrupt-20261122T141503-4711.0"));
}

TEST_CASE("names and errors reach the terminal escaped, and a huge name does not pad every row",
          "[cache][attack]") {
  CHECK(printable("\x1b[2J\x1b]0;pwned\x07ok") == "\\x1b[2J\\x1b]0;pwned\\x07ok");
  CHECK(printable("caf\xc3\xa9 \xc2\x9b"
                  "31m") ==
        "caf\xc3\xa9 \\xc2\\x9b"
        "31m");  // C1 CSI
  CHECK(printable("a\nb") == "a\\x0ab");
  CHECK(printable("a\nb", 100, true) == "a\nb");
  CHECK(printable(std::string(100, 'x') + "\xc3\xa9", 101) == std::string(100, 'x') + "...");
  TuningReport report{"op\x1b[2J", "n=1", "device", 0, sample_result().outcomes};
  report.outcomes[0].name = std::string(1 << 20, 'n');  // a 1 MB candidate name
  report.outcomes[2].error = AutotuneError(ErrorKind::build, "\x1b]0;pwned\x07", "x");
  for (int i = 0; i < 200; ++i) report.outcomes.push_back(report.outcomes[1]);
  const std::string table = format_report(report);
  CHECK(table.find('\x1b') == std::string::npos);
  CHECK(table.find('\x07') == std::string::npos);
  std::size_t longest = 0;
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) longest = std::max(longest, line.size());
  CHECK(longest < 200);  // every row was padded to the 1 MB name (then cut at 511)
  const std::string summary = text_summary({report});
  CHECK(summary.find('\x1b') == std::string::npos);
}

TEST_CASE("the next writer removes temporary and lock files that killed processes left",
          "[cache][attack]") {
  TempDir dir;
  CHECK(run_program(dir.path(), {1}) == 1);
  const pid_t gone = ::fork();  // a pid that is certainly not running any more
  if (gone == 0) ::_exit(0);
  REQUIRE(gone > 0);
  ::waitpid(gone, nullptr, 0);
  const std::string dead = std::to_string(gone), alive = std::to_string(::getpid());
  FileStore store(dir.path());
  const fs::path tables = store.tables_of("cached_op");
  write_text(dir / ("v2/cached_op.json.tmp." + dead + ".0"), std::string(1000, 'x'));
  write_text(tables / ("0123456789abcdef.json.tmp." + dead + ".3"), "half");
  write_text(dir / ("v2/cached_op.json.tmp." + alive + ".9"), "a write in progress");
  // Written an hour ago by the dead writer; a fresh one of a pid that looks gone may be a writer
  // in another PID namespace (a container sharing the cache): it stays.
  const auto hour_ago = fs::file_time_type::clock::now() - std::chrono::hours(1);
  fs::last_write_time(dir / ("v2/cached_op.json.tmp." + dead + ".0"), hour_ago);
  fs::last_write_time(tables / ("0123456789abcdef.json.tmp." + dead + ".3"), hour_ago);
  write_text(dir / ("v2/cached_op.json.tmp." + dead + ".1"), "another namespace's write");
  write_text(dir / "v2/locks/cached_op.0123456789abcdef.lock", "pid " + dead + "\n");
  const auto held = store.lock_for_tuning(id);  // a live holder's lock file stays
  std::size_t locks_before = 0;
  for (const auto& e : fs::directory_iterator(dir / "v2/locks"))
    locks_before += e.is_regular_file();
  REQUIRE(locks_before == 2);
  CHECK(run_program(dir.path(), {2}) == 1);  // writes: cleans up
  CHECK_FALSE(fs::exists(dir / ("v2/cached_op.json.tmp." + dead + ".0")));
  CHECK_FALSE(fs::exists(tables / ("0123456789abcdef.json.tmp." + dead + ".3")));
  CHECK(fs::exists(dir / ("v2/cached_op.json.tmp." + alive + ".9")));
  CHECK(fs::exists(dir / ("v2/cached_op.json.tmp." + dead + ".1")));
  CHECK_FALSE(fs::exists(dir / "v2/locks/cached_op.0123456789abcdef.lock"));
  std::size_t locks_after = 0;
  for (const auto& e : fs::directory_iterator(dir / "v2/locks")) locks_after += e.is_regular_file();
  CHECK(locks_after == 1);
}

TEST_CASE("a locks folder planted as a link: no lock file behind it is deleted by a write",
          "[cache][attack]") {
  TempDir dir;
  FileStore store(dir / "cache");
  store.save(id, sample_result());  // makes the folders
  const fs::path locks = dir / "cache" / "v2" / "locks";
  const fs::path project = dir / "project";
  fs::create_directories(project);
  write_text(project / "Cargo.lock", "someone else's lock file, held by nobody");
  fs::remove_all(locks);
  fs::create_directory_symlink(project, locks);
  CapturedWarnings warnings;
  FileStore fresh(dir / "cache");
  fresh.save(EntryId{id.device, id.op, "n=2", id.checksum}, sample_result());
  CHECK(fs::is_regular_file(project / "Cargo.lock"));
  CHECK(fs::is_symlink(locks));
}

TEST_CASE("a waiter for a held tuning lock says once whom it waits for", "[cache][attack]") {
  TempDir dir;
  FileStore holder(dir.path());
  FileStore::Options options;
  options.tuning_lock_timeout = std::chrono::milliseconds(1500);  // past the 1 s notice
  FileStore waiter(dir.path(), options);
  const auto held = holder.lock_for_tuning(id);  // a stopped holder: it never lets go
  {
    CapturedWarnings warnings;
    { auto same = waiter.lock_for_tuning(id); }
    INFO(warnings.text());
    // The holder is this process (another thread would be, in a program).
    CHECK(warnings.count("waiting for another thread of this process that is tuning "
                         "'cached_op' [n=1]") == 1);
    CHECK(warnings.count("tuning here as well") == 1);
    CHECK(warnings.lines() == 2);
  }
  // The holder's pid as another process writes it in the lock file.
  const fs::path lock_file = *fs::directory_iterator(dir / "v2" / "locks");
  write_text(lock_file, "pid 1\n");
  CapturedWarnings warnings;
  { auto same = waiter.lock_for_tuning(id); }
  INFO(warnings.text());
  CHECK(warnings.count("waiting for another process (pid 1) that is tuning 'cached_op' [n=1]") ==
        1);
}

namespace {
/// A result in which every candidate failed (what a tuning remembers when nothing worked).
StoredResult failed_result() {
  StoredResult failed = sample_result();
  failed.winner.clear();
  failed.winner_index = 0;
  for (auto& outcome : failed.outcomes) {
    outcome.status = OutcomeStatus::failed;
    outcome.error = AutotuneError(ErrorKind::build, "forged failure", outcome.name);
  }
  return failed;
}
}  // namespace

TEST_CASE("a tables or in-progress folder planted as a link is neither read nor deleted through",
          "[cache][attack]") {
  TempDir dir;
  FileStore store(dir / "cache");
  store.save(id, sample_result());
  store.save_progress(EntryId{id.device, id.op, "n=2", id.checksum}, sample_result().outcomes);
  const fs::path tables = store.table_of(id).parent_path();
  const EntryId pending{id.device, id.op, "n=2", id.checksum};
  const fs::path progress = store.progress_record_of(pending).parent_path();
  // The real folders move away; links to copies of them (the victim's files) take their place.
  for (const auto& folder : {tables, progress}) {
    const fs::path victim = dir / ("victim-" + folder.filename().string());
    fs::rename(folder, victim);
    fs::create_symlink(victim, folder);
  }
  CapturedWarnings warnings;
  FileStore fresh(dir / "cache");
  CHECK_FALSE(fresh.load(id));  // the table behind the link is not read
  CHECK(fresh.load_progress(pending).empty());
  fresh.drop_progress(pending);  // nothing is deleted through the link
  CHECK(fresh.progress().empty());
  CHECK(warnings.count("symbolic link") >= 2);
  const fs::path victim_record = dir / ("victim-" + progress.filename().string()) /
                                 store.progress_record_of(pending).filename();
  CHECK(fs::is_regular_file(victim_record));
  CHECK(fs::is_regular_file(dir / ("victim-" + tables.filename().string()) /
                            store.table_of(id).filename()));
}

TEST_CASE("export and the HTML report refuse a FIFO, a device or a folder, and write 0644",
          "[cache][attack]") {
  TempDir dir;
  FileStore store(dir / "cache");
  store.save(id, sample_result());
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
  fs::create_directory(dir / "folder");
  for (const auto& target : {dir / "fifo", dir / "folder", fs::path("/dev/null")}) {
    INFO(target);
    try {
      store.export_to(target);
      FAIL("exported into it");
    } catch (const AutotuneError& e) {
      CHECK(e.kind() == ErrorKind::cache);
      CHECK_THAT(e.message(), Catch::Contains("not a regular file"));
    }
    CHECK_THROWS_AS(write_html_report(target, "<html></html>"), AutotuneError);
  }
  struct stat st {};
  REQUIRE(::lstat((dir / "fifo").c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));  // still the FIFO, not replaced by a file
  REQUIRE(::stat("/dev/null", &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
  const mode_t old = ::umask(0);
  CHECK(store.export_to(dir / "bundle.json") == 1);
  write_html_report(dir / "report.html", "<html></html>");
  ::umask(old);
  CHECK(mode_of(dir / "bundle.json") == 0644);
  CHECK(mode_of(dir / "report.html") == 0644);
  CHECK(read_text(dir / "report.html") == "<html></html>");
}

TEST_CASE("a remembered failure in a bundle is left out of the import", "[cache][attack]") {
  TempDir dir;
  const EntryId failing{id.device, id.op, "n=2", id.checksum};
  write_text(
      dir / "bundle.json",
      detail::write_cache_bundle(
          {{id.op, {CacheEntry{id, sample_result()}, CacheEntry{failing, failed_result()}}, {}}}));
  FileStore store(dir / "cache");
  store.save(failing, sample_result());  // a working entry a forged failure would replace
  CapturedWarnings warnings;
  CHECK(store.import_from(dir / "bundle.json") == 1);
  CHECK(warnings.count("left out 1 remembered failure") == 1);
  REQUIRE(store.load(failing));
  CHECK(store.load(failing)->winner == "fast");
  CHECK(store.load(id));
}

TEST_CASE("an import that one op's place refuses writes no op at all", "[cache][attack]") {
  TempDir dir;
  const EntryId other{id.device, "zzz_op", id.key, id.checksum};
  write_text(dir / "bundle.json",
             detail::write_cache_bundle({{id.op, {CacheEntry{id, sample_result()}}, {}},
                                         {other.op, {CacheEntry{other, sample_result()}}, {}}}));
  FileStore store(dir / "cache");
  fs::create_directories(store.file_of(other.op));  // a folder where zzz_op's file belongs
  try {
    store.import_from(dir / "bundle.json");
    FAIL("imported");
  } catch (const AutotuneError& e) {
    CHECK(e.kind() == ErrorKind::cache);
    CHECK_THAT(e.message(), Catch::Contains("a directory") && Catch::Contains("nothing written"));
  }
  CHECK(store.entries().empty());  // not even the op before it
}

TEST_CASE("an import that a table's place refuses replaces no table of the op", "[cache][attack]") {
  TempDir dir;
  const EntryId second{id.device, id.op, "n=2", id.checksum};
  FileStore store(dir / "cache");
  store.save(id, sample_result());
  store.save(second, sample_result());
  StoredResult other = sample_result();  // another winner for both keys
  other.winner = other.outcomes[0].name = "faster";
  write_text(dir / "bundle.json",
             detail::write_cache_bundle(
                 {{id.op, {CacheEntry{id, other}, CacheEntry{second, other}}, {}}}));
  fs::remove(store.table_of(second));
  fs::create_directories(store.table_of(second) / "inside");  // a folder where a table belongs
  try {
    store.import_from(dir / "bundle.json");
    FAIL("imported");
  } catch (const AutotuneError& e) {
    CHECK(e.kind() == ErrorKind::cache);
    CHECK_THAT(e.message(), Catch::Contains("a directory") && Catch::Contains("nothing written"));
  }
  // The first key's table was not replaced behind its index's back: it still serves.
  const auto kept = store.load(id);
  REQUIRE(kept);
  CHECK(kept->winner == sample_result().winner);
}

TEST_CASE("a hard link planted at a tuning lock file is never written through", "[cache][attack]") {
  TempDir dir;
  const fs::path cache = dir / "cache";
  {
    FileStore store(cache);
    (void)store.lock_for_tuning(id);  // makes the locks folder; the file goes on release
  }
  const fs::path victim = dir / "victim.txt";
  write_text(victim, "the user's own file");
  // The lock file's name, as a holder leaves it while it tunes.
  std::string name;
  {
    FileStore store(cache);
    const auto held = store.lock_for_tuning(id);
    for (const auto& e : fs::directory_iterator(cache / "v2" / "locks")) {
      name = e.path().filename().string();
    }
  }
  REQUIRE_FALSE(name.empty());
  fs::create_hard_link(victim, cache / "v2" / "locks" / name);
  FileStore store(cache);
  try {
    (void)store.lock_for_tuning(id);
    FAIL("locked through a hard link");
  } catch (const AutotuneError& e) {
    CHECK(e.kind() == ErrorKind::cache);
    CHECK_THAT(e.message(), Catch::Contains("hard link"));
  }
  CHECK(read_text(victim) == "the user's own file");
}

TEST_CASE("a waiter reads only the first bytes of a huge tuning lock file", "[cache][attack]") {
  TempDir dir;
  FileStore holder(dir.path());
  FileStore::Options options;
  options.tuning_lock_timeout = std::chrono::milliseconds(1200);  // past the 1 s notice
  FileStore waiter(dir.path(), options);
  const auto held = holder.lock_for_tuning(id);
  const fs::path lock_file = *fs::directory_iterator(dir / "v2" / "locks");
  write_text(lock_file, "pid 1" + std::string(1 << 20, ' '));  // not what a holder writes
  CapturedWarnings warnings;
  { auto same = waiter.lock_for_tuning(id); }
  INFO(warnings.text());
  CHECK(warnings.count("waiting for another process (pid unknown)") == 1);
}

TEST_CASE("a copy of an index under another name is neither listed nor exported twice",
          "[cache][attack]") {
  TempDir dir;
  FileStore store(dir / "cache");
  store.save(id, sample_result());
  fs::copy_file(store.file_of(id.op), store.directory() / "zz_copy.json");
  CapturedWarnings warnings;
  CHECK(store.entries().size() == 1);
  CHECK(store.ops() == std::vector<std::string>{id.op});
  CHECK(store.export_to(dir / "bundle.json") == 1);
  INFO(warnings.text());
  CHECK(warnings.count("zz_copy.json") == 1);  // said once
  CHECK(warnings.count("a copy or a renamed file") == 1);
}

TEST_CASE("an index larger than a store writes is not read, naming the limit", "[cache][attack]") {
  TempDir dir;
  FileStore writer(dir.path());
  for (int n = 0; n < 8; ++n) {
    writer.save(EntryId{id.device, id.op, "n=" + std::to_string(n), id.checksum}, sample_result());
  }
  const auto size = fs::file_size(writer.file_of(id.op));
  FileStore::Options options;
  options.max_index_bytes = size - 1;
  FileStore reader(dir.path(), options);
  CapturedWarnings warnings;
  CHECK_FALSE(reader.load(id));
  CHECK(reader.entries().empty());
  INFO(warnings.text());
  CHECK(warnings.count("larger than " + std::to_string(size - 1) + " bytes") >= 1);
  options.max_index_bytes = size;  // exactly the limit: read
  FileStore exact(dir.path(), options);
  CHECK(exact.load(id));
}

TEST_CASE("every library warning reaches the terminal escaped, its lines kept", "[cache][attack]") {
  CapturedWarnings warnings;
  warn("tunekit: a key \x1b[2J\x1b]0;pwned\a from a cache file\nsecond line \xc2\x9b");
  const std::string text = warnings.text();
  CHECK(text.find('\x1b') == std::string::npos);
  CHECK(text.find('\a') == std::string::npos);
  CHECK_THAT(text,
             Catch::Contains("a key \\x1b[2J\\x1b]0;pwned\\x07 from a cache file\nsecond line "
                             "\\xc2\\x9b"));
}

TEST_CASE("a bundle dense in JSON values is refused before it is parsed", "[cache][attack]") {
  // Ten million zeros: 20 MB of text that a DOM would make 320 MB of.
  TempDir dir;
  std::string bomb = R"({"format":"tunekit-cache-bundle","version":2,"ops":[0)";
  for (int i = 0; i < 10'000'000; ++i) bomb += ",0";
  bomb += "]}";
  write_text(dir / "bomb.json", bomb);
  FileStore store(dir / "cache");
  try {
    store.import_from(dir / "bomb.json");
    FAIL("imported");
  } catch (const AutotuneError& e) {
    CHECK(e.kind() == ErrorKind::cache);
    CHECK_THAT(e.message(), Catch::Contains("too dense"));
  }
  CHECK(store.entries().empty());
}

namespace {
// An entry as a shared store's load gives it: `winner` (set index `index`) measured alone.
StoredResult shared_entry(const std::string& winner, std::uint32_t index) {
  AutotuneOutcome outcome;
  outcome.name = winner;
  outcome.index = index;
  outcome.status = OutcomeStatus::measured;
  outcome.median = outcome.low = outcome.high = outcome.min = outcome.max = 1e-4;
  outcome.samples = 3;
  StoredResult result{winner, index, {outcome}};
  result.shared = true;
  result.source = "shared store redis://fleet";
  return result;
}

// Another machine's store, as a hostile member of the fleet would fill it: every key's entry
// names `winner` (index 1 of the sets below), with a checksum that holds (the format is public),
// and loads come back marked as a shared store's (StoredResult::shared). What this machine
// saves replaces it; what it adopts is counted.
struct ForgedSharedStore final : ResultStore {
  std::map<std::string, StoredResult> saved;
  int adopted = 0;
  std::optional<StoredResult> load(const EntryId& id) override {
    if (const auto found = saved.find(id.key); found != saved.end()) return found->second;
    return shared_entry("plus one", 1);
  }
  void save(const EntryId& id, const StoredResult& result) override { saved[id.key] = result; }
  std::unique_ptr<TuningLock> lock_for_tuning(const EntryId&) override { return nullptr; }
  void adopt(const EntryId&, const StoredResult&) override { ++adopted; }
};

}  // namespace

TEST_CASE("a forged shared-store winner that gives wrong results is caught before it serves",
          "[cache][attack]") {
  // The review's R3: execute(8) returned 17 where the answer is 16 (here 9 for 8), and the
  // victim copied the entry into its own cache.
  const auto store = std::make_shared<ForgedSharedStore>();
  VirtualClient client;
  Tuner<SizeKey> tuner("forged", client.id(), test_settings(), store);
  const auto check = GENERATE(as<std::string>{}, "candidate reference", "host reference");
  const auto base = TunableSet{size_key, size_inputs}
                        .with(Tunable{"right", adds<VirtualClient>(0, 2e-3)})
                        .with(Tunable{"plus one", adds<VirtualClient>(1, 1e-4)});
  CapturedWarnings warnings;
  int n = 8;
  int got = 0;
  if (check == "host reference") {
    const auto set = base.validate_with(HostReference{[](int x) { return x; }, std::equal_to<>{}});
    got = tuner.execute(client, set, SizeKey{8}, n);
  } else {
    got = tuner.execute(client, base.validate_with(std::equal_to<>{}), SizeKey{8}, n);
  }
  INFO(warnings.text());
  CHECK(got == 8);
  CHECK(warnings.count("names 'plus one', which gives a wrong output here") == 1);
  CHECK(store->adopted == 0);  // never kept as this machine's own
  // The tuning's result replaced the forged entry.
  REQUIRE(store->saved.size() == 1);
  CHECK(store->saved.begin()->second.winner == "right");
}

TEST_CASE("a shared-store winner's check names the input generator when it fails",
          "[cache][attack]") {
  // The check makes the key's benchmark inputs as a tuning does, and the generator's failure is
  // said as the tuning's is: the caller's, named, nothing adopted.
  struct OneEntryStore final : ResultStore {
    int adopted = 0;
    std::optional<StoredResult> load(const EntryId&) override { return shared_entry("fast", 1); }
    void save(const EntryId&, const StoredResult&) override {}
    std::unique_ptr<TuningLock> lock_for_tuning(const EntryId&) override { return nullptr; }
    void adopt(const EntryId&, const StoredResult&) override { ++adopted; }
  };
  const auto store = std::make_shared<OneEntryStore>();
  VirtualClient client;
  Tuner<SizeKey> tuner("generator fails", client.id(), test_settings(), store);
  const auto failing_inputs = [](const SizeKey&, const int&) -> std::tuple<int> {
    throw std::runtime_error("no room for the inputs");
  };
  const auto set = TunableSet{size_key, failing_inputs}
                       .with(Tunable{"slow", adds<VirtualClient>(0, 2e-3)})
                       .with(Tunable{"fast", adds<VirtualClient>(0, 1e-4)})
                       .validate_with(std::equal_to<>{});
  int n = 8;
  CHECK_THROWS_WITH(
      tuner.execute(client, set, SizeKey{8}, n),
      Catch::Contains("the input generator failed") && Catch::Contains("no room for the inputs"));
  CHECK(store->adopted == 0);
}

TEST_CASE("a shared-store winner that is right here serves, after one check, and is adopted",
          "[cache][attack]") {
  struct HonestStore final : ResultStore {
    int adopted = 0;
    std::optional<StoredResult> load(const EntryId&) override { return shared_entry("fast", 1); }
    void save(const EntryId&, const StoredResult&) override { FAIL("nothing is tuned"); }
    std::unique_ptr<TuningLock> lock_for_tuning(const EntryId&) override { return nullptr; }
    void adopt(const EntryId&, const StoredResult& result) override {
      CHECK(result.winner == "fast");
      ++adopted;
    }
  };
  const auto store = std::make_shared<HonestStore>();
  VirtualClient client;
  Tuner<SizeKey> tuner("honest", client.id(), test_settings(), store);
  int calls = 0;
  const auto set = TunableSet{size_key, size_inputs}
                       .with(Tunable{"slow",
                                     [&calls](VirtualClient& c, int& n) {
                                       ++calls;
                                       c.spend(2e-3);
                                       return n;
                                     }})
                       .with(Tunable{"fast", adds<VirtualClient>(0, 1e-4)})
                       .validate_with(std::equal_to<>{});
  int n = 8;
  CapturedWarnings warnings;
  for (int i = 0; i < 3; ++i) CHECK(tuner.execute(client, set, SizeKey{8}, n) == 8);
  CHECK(warnings.text().empty());
  CHECK(store->adopted == 1);  // checked once, then served from memory
  CHECK(calls == 1);           // the reference's one call: the check, not a tuning
  const auto report = tuner.report(SizeKey{8});
  REQUIRE(report);
  CHECK(report->source == "shared store redis://fleet");
}
