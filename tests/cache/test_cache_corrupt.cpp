// Bad cache files: each kind is reported once, ignored (re-tuned), never a crash, never trusted,
// and what it held is kept aside rather than overwritten.
#include <catch2/catch.hpp>
#include <random>

#include "../unprivileged.hpp"
#include "test_cache_support.hpp"

using namespace tunekit;
using namespace tunekit::test;

namespace {

const std::string op = "cached_op";

fs::path op_file(const TempDir& dir) { return dir / ("v2/" + op + ".json"); }

/// The files moved aside next to the op's file.
std::vector<fs::path> kept_aside(const TempDir& dir) {
  std::vector<fs::path> found;
  for (const auto& e : fs::directory_iterator(dir / "v2")) {
    if (e.path().filename().string().starts_with(op + ".json.corrupt-")) found.push_back(e.path());
  }
  return found;
}

/// Writes `bad` as the op's file, then runs a program twice over two keys: the first run must
/// re-tune both and warn exactly once; the second must use the rewritten cache.
void check_bad_file_is_ignored_and_kept(const TempDir& dir, const std::string& bad,
                                        const std::string& expected_warning) {
  fs::create_directories(dir / "v2");
  write_text(op_file(dir), bad);
  {
    CapturedWarnings warnings;
    CHECK(run_program(dir.path(), {1, 2}) == 2);
    INFO(warnings.text());
    CHECK(warnings.count(expected_warning) == 1);
    CHECK(warnings.count("kept it as") == 1);
  }
  const auto aside = kept_aside(dir);
  REQUIRE(aside.size() == 1);
  CHECK(read_text(aside.front()) == bad);  // preserved byte for byte
  CapturedWarnings warnings;
  CHECK(run_program(dir.path(), {1, 2}) == 0);
  CHECK(warnings.text().empty());
}

std::string valid_file_text(const TempDir& dir) {
  TempDir scratch;
  CHECK(run_program(scratch.path(), {1, 2}) == 2);
  (void)dir;
  return read_text(scratch / ("v2/" + op + ".json"));
}

}  // namespace

TEST_CASE("a truncated cache file is reported once, re-tuned and kept aside", "[cache][corrupt]") {
  TempDir dir;
  const std::string text = valid_file_text(dir);
  check_bad_file_is_ignored_and_kept(dir, text.substr(0, text.size() / 2), "not valid JSON");
}

TEST_CASE("an unusable index loses no result: its tables are named again by the next write",
          "[cache][corrupt]") {
  TempDir dir;
  CHECK(run_program(dir.path(), {1, 2, 3}) == 3);
  const std::string text = read_text(op_file(dir));
  write_text(op_file(dir), text.substr(0, text.size() / 2));
  {
    CapturedWarnings warnings;
    CHECK(run_program(dir.path(), {1}) == 1);  // its key re-tuned, as the index is unusable
    INFO(warnings.text());
    CHECK(warnings.count("kept it as") == 1);
    CHECK(warnings.count("2 entries its index did not name were taken back") == 1);
  }
  CapturedWarnings warnings;
  CHECK(run_program(dir.path(), {1, 2, 3}) == 0);  // the other keys' results were not lost
  CHECK(warnings.text().empty());
}

TEST_CASE("a cache file of garbage bytes is reported once, re-tuned and kept aside",
          "[cache][corrupt]") {
  TempDir dir;
  std::mt19937 rng(3);
  std::string garbage(4096, '\0');
  for (auto& c : garbage) c = static_cast<char>(rng());
  garbage[0] = '{';
  check_bad_file_is_ignored_and_kept(dir, garbage, "ignoring unusable cache file");
}

TEST_CASE("a cache file of a foreign format version is reported once and not trusted",
          "[cache][corrupt]") {
  TempDir dir;
  std::string text = valid_file_text(dir);
  const auto at = text.find("\"version\": 2");
  REQUIRE(at != std::string::npos);
  text.replace(at, 12, "\"version\": 99");
  check_bad_file_is_ignored_and_kept(dir, text, "format version 99, this build reads version 2");
}

TEST_CASE("a version with text after its number is not that version", "[cache][corrupt]") {
  for (const char* forged :
       {"\"version\": \"2garbage\"", "\"version\": \"\"", "\"version\": 2.5"}) {
    INFO(forged);
    TempDir dir;
    std::string text = valid_file_text(dir);
    const auto at = text.find("\"version\": 2");
    REQUIRE(at != std::string::npos);
    text.replace(at, 12, forged);
    check_bad_file_is_ignored_and_kept(dir, text, "no integer \"version\" field");
  }
}

TEST_CASE("a cache file holding another op is reported once and not trusted", "[cache][corrupt]") {
  TempDir dir;
  std::string text = valid_file_text(dir);
  const auto at = text.find("\"op\": \"cached_op\"");
  REQUIRE(at != std::string::npos);
  text.replace(at, 17, "\"op\": \"other_op\"");
  check_bad_file_is_ignored_and_kept(dir, text, "it holds the op 'other_op'");
}

TEST_CASE("an entry edited by hand fails its checksum: only it is re-tuned, the others load",
          "[cache][corrupt]") {
  TempDir dir;
  CHECK(run_program(dir.path(), {1, 2, 4}) == 3);
  // Make the winner of the key n=2 look slower than it was, without fixing its checksum.
  const auto tables = FileStore(dir.path()).entries(op);
  REQUIRE(tables.size() == 3);
  const fs::path table = FileStore(dir.path()).table_of(tables[1].id);
  REQUIRE(tables[1].id.key == "n=2");
  std::string text = read_text(table);
  const auto median = text.find("\"median\": ");
  REQUIRE(median != std::string::npos);
  text.replace(median, 10, "\"median\": 7");
  write_text(table, text);
  {
    CapturedWarnings warnings;
    CHECK(run_program(dir.path(), {1, 2, 4}) == 1);  // n=1 and n=4 still come from the cache
    INFO(warnings.text());
    CHECK(warnings.count("does not match its checksum") == 1);
    CHECK(warnings.count("kept it as") == 1);
  }
  std::vector<fs::path> aside;
  for (const auto& e : fs::directory_iterator(table.parent_path())) {
    if (e.path().filename().string().find(".corrupt-") != std::string::npos)
      aside.push_back(e.path());
  }
  REQUIRE(aside.size() == 1);
  CHECK(read_text(aside.front()) == text);
  CapturedWarnings warnings;
  CHECK(run_program(dir.path(), {1, 2, 4}) == 0);
  CHECK(warnings.text().empty());
}

TEST_CASE("a cache file that is a directory gives one clear warning and no crash",
          "[cache][corrupt]") {
  TempDir dir;
  fs::create_directories(op_file(dir) / "inside");
  CapturedWarnings warnings;
  CHECK(run_program(dir.path(), {1, 2}) == 2);
  CHECK(run_program(dir.path(), {1, 2}) == 2);  // not cacheable, but working
  INFO(warnings.text());
  CHECK(warnings.count("is a directory") == 2);  // once reading, once writing: not per key
  CHECK(warnings.lines() == 2);
  CHECK(fs::is_directory(op_file(dir) / "inside"));  // left alone
}

TEST_CASE("an unwritable cache directory is reported once and tuning goes on in memory",
          "[cache][corrupt]") {
  TempDir dir;
  // A path under a regular file can never be a directory, whoever runs the test.
  write_text(dir / "a file", "x");
  const fs::path impossible = dir / "a file" / "cache";
  {
    CapturedWarnings warnings;
    CHECK(make_result_store(cache_settings(impossible)) == nullptr);
    CHECK(make_result_store(cache_settings(impossible)) == nullptr);
    CHECK(run_program(impossible, {1, 2}) == 2);
    CHECK(run_program(impossible, {1, 2}) == 2);
    INFO(warnings.text());
    CHECK(warnings.count("running without the persistent cache") == 1);
    CHECK(warnings.lines() == 1);
  }
  // Root writes through permission bits: the read-only directory is met by an unprivileged user.
  fs::create_directories(dir / "readonly/v2");
  fs::permissions(dir / "readonly", fs::perms::owner_all);
  fs::permissions(dir / "readonly/v2", fs::perms::owner_read | fs::perms::owner_exec);
  give_to_unprivileged(dir.path());
  const int rc = run_unprivileged([&] {
    CapturedWarnings warnings;
    const bool refused = make_result_store(cache_settings(dir / "readonly")) == nullptr;
    const bool tuned = run_program(dir / "readonly", {1}) == 1;
    return refused && tuned && warnings.count("not writable") == 1 ? 0 : 1;
  });
  CHECK(rc == 0);
}

TEST_CASE("leftover temporary files of a killed writer do not disturb the cache",
          "[cache][corrupt]") {
  TempDir dir;
  CHECK(run_program(dir.path(), {1}) == 1);
  write_text(dir / ("v2/" + op + ".json.tmp.99999.0"), "{\"half written");
  CHECK(run_program(dir.path(), {1, 2}) == 1);
  FileStore store(dir.path());
  CHECK(store.entries().size() == 2);
  store.clear();
  CHECK_FALSE(fs::exists(dir / ("v2/" + op + ".json.tmp.99999.0")));
}

TEST_CASE("an entry that no longer names its set's candidates is said once, though loaded twice",
          "[cache][corrupt]") {
  // The tuner looks in the store on the miss, and again under the key's lock before it tunes.
  struct StaleStore final : ResultStore {
    int loads = 0;
    std::optional<StoredResult> load(const EntryId&) override {
      ++loads;
      AutotuneOutcome ghost;
      ghost.name = "ghost";  // a candidate this set does not have
      ghost.status = OutcomeStatus::measured;
      ghost.median = ghost.low = ghost.high = ghost.min = ghost.max = 1e-3;
      ghost.samples = 3;
      return StoredResult{"ghost", 0, {ghost}};
    }
    void save(const EntryId&, const StoredResult&) override {}
    std::unique_ptr<TuningLock> lock_for_tuning(const EntryId&) override { return nullptr; }
  };
  const auto store = std::make_shared<StaleStore>();
  VirtualClient client;
  Tuner<SizeKey> tuner("stale", client.id(), test_settings(), store);
  const auto set = TunableSet{size_key, size_inputs}
                       .with(Tunable{"a", costs<VirtualClient>(1e-3)})
                       .with(Tunable{"b", costs<VirtualClient>(2e-3)});
  int n = 4;
  CapturedWarnings warnings;
  tuner.execute(client, set, SizeKey{4}, n);
  CHECK(store->loads == 2);
  INFO(warnings.text());
  CHECK(warnings.count("does not match its set") == 1);
}
