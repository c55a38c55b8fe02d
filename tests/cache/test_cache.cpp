// The persistent cache in one process: round trips, identity, invalidation, listing, clearing,
// export/import, concurrency between stores, and the loader on its own.
#include <catch2/catch.hpp>
#include <cmath>
#include <future>
#include <limits>
#include <random>
#include <thread>

#include "test_cache_support.hpp"

using namespace tunekit;
using namespace tunekit::test;

namespace {

EntryId id_of(std::string key, std::string device = "device A", std::uint64_t checksum = 42,
              std::string op = "matmul") {
  return EntryId{std::move(device), std::move(op), std::move(key), checksum};
}

void check_same(const StoredResult& a, const StoredResult& b) {
  CHECK(a.winner == b.winner);
  CHECK(a.winner_index == b.winner_index);
  REQUIRE(a.outcomes.size() == b.outcomes.size());
  for (std::size_t i = 0; i < a.outcomes.size(); ++i) {
    const auto& x = a.outcomes[i];
    const auto& y = b.outcomes[i];
    CHECK(x.name == y.name);
    CHECK(x.index == y.index);
    CHECK(x.status == y.status);
    CHECK(x.median == y.median);  // bit-exact, not approximately
    CHECK(x.spread == y.spread);
    CHECK(x.min == y.min);
    CHECK(x.max == y.max);
    CHECK(x.low == y.low);
    CHECK(x.high == y.high);
    CHECK(x.samples == y.samples);
    CHECK(x.batch == y.batch);
    REQUIRE(x.error.has_value() == y.error.has_value());
    if (x.error) {
      CHECK(x.error->kind() == y.error->kind());
      CHECK(x.error->message() == y.error->message());
    }
  }
}

}  // namespace

TEST_CASE("a saved result loads back exactly, with its winner and every outcome", "[cache]") {
  TempDir dir;
  const StoredResult saved = sample_result();
  {
    FileStore store(dir.path());
    store.save(id_of("m=64"), saved);
    auto same_store = store.load(id_of("m=64"));
    REQUIRE(same_store);
    check_same(*same_store, saved);
  }
  FileStore fresh(dir.path());
  auto loaded = fresh.load(id_of("m=64"));
  REQUIRE(loaded);
  check_same(*loaded, saved);
  CHECK(fs::exists(dir / "v2/matmul.json"));
}

TEST_CASE("times of any valid magnitude survive the JSON round trip bit for bit", "[cache]") {
  TempDir dir;
  FileStore store(dir.path());
  std::mt19937_64 rng(7);
  std::vector<CacheEntry> entries;
  for (int i = 0; i < 200; ++i) {
    const double median = std::ldexp(
        std::uniform_real_distribution<double>(1, 2)(rng),
        std::uniform_int_distribution<int>(-39, 17)(rng));  // all times within 1e-12..1e6 s
    entries.push_back({id_of("k=" + std::to_string(i)), sample_result(median)});
  }
  entries.back().result.outcomes[0].spread = 1e6;  // the largest time the reader accepts
  entries.back().result.outcomes[1].spread = std::numeric_limits<double>::quiet_NaN();
  // A spread is a deviation, not a time: a few nanoseconds' samples that agree to their last
  // digits give one below a picosecond. It was written, then refused on reading (the entry
  // tuned again in every process, its file set aside as corrupt each time).
  entries.front().result.outcomes[0].spread = 2.759953080796641e-13;
  entries.front().result.outcomes[1].spread = 4.9e-324;  // subnormal: still a deviation
  CHECK(store.save_entries(entries) == entries.size());
  FileStore fresh(dir.path());
  for (const auto& e : entries) {
    auto loaded = fresh.load(e.id);
    REQUIRE(loaded);
    CHECK(loaded->outcomes[0].median == e.result.outcomes[0].median);
    CHECK(loaded->outcomes[2].max == e.result.outcomes[2].max);
  }
  const auto last = fresh.load(entries.back().id);
  CHECK(last->outcomes[0].spread == 1e6);
  CHECK(std::isnan(last->outcomes[1].spread));
  const auto first = fresh.load(entries.front().id);
  CHECK(first->outcomes[0].spread == 2.759953080796641e-13);
  CHECK(first->outcomes[1].spread == 4.9e-324);
}

// `tunekit cache show` prints a stored table under the tuning's "95% interval" heading: the
// interval itself must come back, not the spread in its place.
TEST_CASE("each outcome's interval comes back from the cache, and a forged one is refused",
          "[cache]") {
  CacheEntry entry{EntryId{"device A", "op", "n=1", 7}, sample_result()};
  for (auto& o : entry.result.outcomes) {
    if (!o.ok()) continue;
    o.low = o.median * 0.99;
    o.high = o.median * 1.02;
  }
  const std::string text = detail::write_cache_file("op", {entry});
  const auto good = detail::parse_cache_file(text);
  REQUIRE(good.entries.size() == 1);
  const auto& fast = good.entries[0].result.outcomes[0];
  CHECK(fast.low == entry.result.outcomes[0].low);  // bit-exact
  CHECK(fast.high == entry.result.outcomes[0].high);
  CHECK_FALSE(good.entries[0].result.outcomes[2].has_interval());  // the failed one has none
  CHECK(interval_text(fast) == "-1.0% +2.0%");
  CHECK(detail::entry_checksum(entry) !=
        detail::entry_checksum({entry.id, sample_result()}));  // the interval is checksummed
  for (const bool high : {false, true}) {  // each bound alone, as a hand's edit of one number
    CAPTURE(high);
    CacheEntry edited = entry;
    (high ? edited.result.outcomes[0].high : edited.result.outcomes[0].low) *= 1.001;
    CHECK(detail::entry_checksum(edited) != detail::entry_checksum(entry));
  }
  SECTION("one bound without the other") {
    std::string one = text;
    const auto at = one.find("\"high\"");
    REQUIRE(at != std::string::npos);
    one.replace(at, 6, "\"hihg\"");
    const auto bad = detail::parse_cache_file(one);
    CHECK(bad.entries.empty());
    REQUIRE(bad.problems.size() == 1);
    CHECK_THAT(bad.problems[0], Catch::Contains("one bound of its interval"));
  }
  SECTION("bounds the wrong way round, or not times") {
    auto& o = entry.result.outcomes[0];
    SECTION("low above high") { o.low = o.high * 2; }
    SECTION("a negative bound") { o.low = -1e-3; }
    SECTION("a bound past 1e6 s") { o.high = 2e6; }
    // Written with a right checksum: the reader's own limits refuse it.
    const auto bad = detail::parse_cache_file(detail::write_cache_file("op", {entry}));
    CHECK(bad.entries.empty());
    CHECK(bad.problems.size() == 1);
  }
}

TEST_CASE("an entry applies only to its own device, op, key and set checksum", "[cache]") {
  TempDir dir;
  FileStore store(dir.path());
  store.save(id_of("m=64", "device A", 42, "matmul"), sample_result());
  CHECK(store.load(id_of("m=64", "device A", 42, "matmul")));
  CHECK_FALSE(store.load(id_of("m=64", "device B", 42, "matmul")));
  CHECK_FALSE(store.load(id_of("m=64", "device A", 43, "matmul")));
  CHECK_FALSE(store.load(id_of("m=128", "device A", 42, "matmul")));
  CHECK_FALSE(store.load(id_of("m=64", "device A", 42, "reduce")));
}

TEST_CASE("saving one entry keeps every other entry of the file", "[cache]") {
  TempDir dir;
  FileStore a(dir.path()), b(dir.path());
  a.save(id_of("m=1"), sample_result(1e-3));
  b.save(id_of("m=2"), sample_result(2e-3));  // b has not read the file before: it must merge
  a.save(id_of("m=1", "device A", 7), sample_result(3e-3));
  FileStore fresh(dir.path());
  CHECK(fresh.load(id_of("m=1")));
  CHECK(fresh.load(id_of("m=2")));
  CHECK(fresh.load(id_of("m=1", "device A", 7)));
  CHECK(fresh.entries().size() == 3);
}

TEST_CASE("a store sees an entry another store wrote after its first read", "[cache]") {
  TempDir dir;
  FileStore reader(dir.path()), writer(dir.path());
  writer.save(id_of("m=1"), sample_result());
  REQUIRE(reader.load(id_of("m=1")));
  CHECK_FALSE(reader.load(id_of("m=2")));
  writer.save(id_of("m=2"), sample_result(5e-3));
  auto loaded = reader.load(id_of("m=2"));
  REQUIRE(loaded);
  CHECK(loaded->outcomes[0].median == 5e-3);
}

TEST_CASE("a new tuner on the same directory uses the cached winner without tuning", "[cache]") {
  TempDir dir;
  CHECK(run_program(dir.path(), {1, 2, 4}) == 3);
  CHECK(run_program(dir.path(), {1, 2, 4}) == 0);
  CHECK(run_program(dir.path(), {1, 2, 4, 8}) == 1);
}

TEST_CASE("changing a candidate's fingerprint invalidates its cached results", "[cache]") {
  TempDir dir;
  CHECK(run_program(dir.path(), {16}, "device A", "v1") == 1);
  CHECK(run_program(dir.path(), {16}, "device A", "v2") == 1);  // edited: re-tuned
  CHECK(run_program(dir.path(), {16}, "device A", "v2") == 0);
  CHECK(run_program(dir.path(), {16}, "device A", "v1") == 0);  // the old build's entry is kept
  CHECK(FileStore(dir.path()).entries().size() == 2);
}

TEST_CASE("a result tuned on another device is not reused", "[cache]") {
  TempDir dir;
  CHECK(run_program(dir.path(), {32}, "device A") == 1);
  CHECK(run_program(dir.path(), {32}, "device B") == 1);
  CHECK(run_program(dir.path(), {32}, "device A") == 0);
  CHECK(run_program(dir.path(), {32}, "device B") == 0);
}

TEST_CASE("TUNEKIT_CACHE=off gives no store, and the default settings give a FileStore",
          "[cache]") {
  TempDir dir;
  Settings off = cache_settings(dir.path());
  off.persistent_cache = false;
  CHECK(make_result_store(off) == nullptr);
  auto store = make_result_store(cache_settings(dir.path()));
  REQUIRE(store);
  CHECK(dynamic_cast<FileStore*>(store.get()) != nullptr);
}

TEST_CASE("entries lists every op and device, and clear removes all or one op", "[cache]") {
  TempDir dir;
  FileStore store(dir.path());
  store.save(id_of("m=1", "device A", 1, "matmul"), sample_result());
  store.save(id_of("m=1", "device B", 1, "matmul"), sample_result());
  store.save(id_of("n=9", "device A", 2, "reduce/sum"), sample_result());
  const auto all = store.entries();
  REQUIRE(all.size() == 3);
  CHECK(all[0].id.op == "matmul");
  CHECK(all[0].id.device == "device A");
  CHECK(all[2].id.op == "reduce/sum");
  CHECK(store.ops() == std::vector<std::string>{"matmul", "reduce/sum"});
  CHECK(store.entries("matmul").size() == 2);
  CHECK(fs::exists(store.file_of("reduce/sum")));
  CHECK(store.file_of("reduce/sum").filename() == "reduce%2Fsum.json");

  store.clear("matmul");
  CHECK_FALSE(store.load(id_of("m=1", "device A", 1, "matmul")));
  CHECK(store.load(id_of("n=9", "device A", 2, "reduce/sum")));
  store.clear();
  CHECK(store.entries().empty());
  CHECK_FALSE(store.load(id_of("n=9", "device A", 2, "reduce/sum")));
}

TEST_CASE("export and import carry a whole cache, other devices' entries included", "[cache]") {
  TempDir from, to, bundle_dir;
  CHECK(run_program(from.path(), {1, 2}, "device A", "v1", "op one") == 2);
  CHECK(run_program(from.path(), {4}, "device B", "v1", "op two") == 1);
  const fs::path bundle = bundle_dir / "pretuned.json";
  CHECK(FileStore(from.path()).export_to(bundle) == 3);

  FileStore target(to.path());
  target.save(id_of("local", "device A", 5, "op one"), sample_result());
  CHECK(target.import_from(bundle) == 3);
  CHECK(target.entries().size() == 4);  // the local entry stays
  CHECK(run_program(to.path(), {1, 2}, "device A", "v1", "op one") == 0);
  CHECK(run_program(to.path(), {4}, "device B", "v1", "op two") == 0);
  CHECK(run_program(to.path(), {4}, "device A", "v1", "op two") == 1);  // kept, not used on A

  // keep_existing leaves local results alone; replace overwrites them.
  auto changed = target.entries("op one");
  for (auto& e : changed) e.result.outcomes.front().median = 99;
  CHECK(target.save_entries(changed, ImportMode::keep_existing) == 0);
  CHECK(target.save_entries(changed, ImportMode::replace) == changed.size());
  CHECK(target.entries("op one").front().result.outcomes.front().median == 99);
}

TEST_CASE("importing a missing or broken bundle is a cache error, not a crash", "[cache]") {
  TempDir dir;
  FileStore store(dir.path());
  CHECK_THROWS_AS(store.import_from(dir / "absent.json"), AutotuneError);
  write_text(dir / "broken.json",
             "{\"format\": \"tunekit-cache-bundle\", \"version\": 1, \"ops\": [");
  try {
    store.import_from(dir / "broken.json");
    FAIL("expected an AutotuneError");
  } catch (const AutotuneError& e) {
    CHECK(e.kind() == ErrorKind::cache);
    CHECK(e.message().find("broken.json") != std::string::npos);
  }
}

TEST_CASE("stores saving from many threads at once lose no entry", "[cache][concurrency]") {
  TempDir dir;
  constexpr int threads = 8, per_thread = 10;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      FileStore store(dir.path());  // one store per thread: each has its own file descriptors
      for (int i = 0; i < per_thread; ++i) {
        store.save(id_of("t=" + std::to_string(t) + " i=" + std::to_string(i)), sample_result());
      }
    });
  }
  for (auto& t : pool) t.join();
  CHECK(FileStore(dir.path()).entries().size() == threads * per_thread);
}

TEST_CASE("the tuning lock of one key makes another holder wait, and only up to its timeout",
          "[cache][concurrency]") {
  TempDir dir;
  FileStore first(dir.path());
  FileStore::Options options;
  options.tuning_lock_timeout = std::chrono::milliseconds(400);
  FileStore second(dir.path(), options);
  {
    auto held = first.lock_for_tuning(id_of("m=1"));
    {
      // Another key, another device or another set checksum is independent: no wait.
      CapturedWarnings warnings;
      { auto other = second.lock_for_tuning(id_of("m=2")); }
      { auto other = second.lock_for_tuning(id_of("m=1", "device B")); }
      { auto other = second.lock_for_tuning(id_of("m=1", "device A", 43)); }
      CHECK(warnings.text().empty());
    }
    // The same key waits for the timeout, then gives up with a warning.
    CapturedWarnings warnings;
    const auto t1 = std::chrono::steady_clock::now();
    { auto same = second.lock_for_tuning(id_of("m=1")); }
    const auto waited = std::chrono::steady_clock::now() - t1;
    CHECK(waited >= std::chrono::milliseconds(400));
    // Ten times the timeout: room for a loaded machine, not for a wait that ignores it.
    CHECK(waited < std::chrono::seconds(4));
    CHECK(warnings.count("tuning here as well") == 1);
  }
  // Released: taken without waiting, and the lock files are cleaned up.
  CapturedWarnings warnings;
  { auto again = second.lock_for_tuning(id_of("m=1")); }
  CHECK(warnings.text().empty());
  CHECK(fs::is_empty(dir / "v2/locks"));
}

TEST_CASE("a try of a held tuning lock is busy at once, and gives up only past the timeout",
          "[cache][concurrency]") {
  TempDir dir;
  FileStore first(dir.path());
  FileStore::Options options;
  options.tuning_lock_timeout = std::chrono::seconds(60);
  FileStore second(dir.path(), options);
  const auto now = std::chrono::steady_clock::now();
  {
    auto held = first.lock_for_tuning(id_of("m=1"));
    CapturedWarnings warnings;
    // Busy, nothing held, no wait (a wait would be the 60 s timeout).
    const auto tried = second.try_lock_for_tuning(id_of("m=1"), now);
    CHECK(tried.busy);
    CHECK_FALSE(tried.lock);
    CHECK(std::chrono::steady_clock::now() - now < std::chrono::seconds(30));
    // Another key is free.
    auto other = second.try_lock_for_tuning(id_of("m=2"), now);
    CHECK_FALSE(other.busy);
    CHECK(other.lock);
    CHECK(warnings.text().empty());
    // Found busy since longer than the timeout: it stops waiting, says so once, holds nothing.
    const auto late = second.try_lock_for_tuning(id_of("m=1"), now - std::chrono::seconds(61));
    CHECK_FALSE(late.busy);
    CHECK_FALSE(second.try_lock_for_tuning(id_of("m=1"), now - std::chrono::seconds(61)).busy);
    CHECK(warnings.count("no longer waiting for it") == 1);
  }
  // Released: the try takes it, and another holder then waits for it.
  auto taken = second.try_lock_for_tuning(id_of("m=1"), now);
  CHECK_FALSE(taken.busy);
  REQUIRE(taken.lock);
  CHECK(first.try_lock_for_tuning(id_of("m=1"), now).busy);
  taken.lock.reset();
  CHECK_FALSE(first.try_lock_for_tuning(id_of("m=1"), now).busy);
}

TEST_CASE("a thread waiting for a tuning lock gets it when the holder releases it",
          "[cache][concurrency]") {
  TempDir dir;
  FileStore a(dir.path()), b(dir.path());
  FileStore::Options quick;
  quick.tuning_lock_timeout = std::chrono::milliseconds(100);
  FileStore third(dir.path(), quick);
  std::atomic<bool> asking{false}, acquired{false};
  std::promise<void> let_go;
  auto held = a.lock_for_tuning(id_of("m=1"));
  std::thread waiter([&] {
    asking = true;
    auto lock = b.lock_for_tuning(id_of("m=1"));
    acquired = true;
    let_go.get_future().wait();  // holds the lock until the main thread has checked it
  });
  while (!asking) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const bool blocked = !acquired;  // asked, and still waiting while the holder holds it
  held.reset();
  while (!acquired) std::this_thread::yield();
  // The waiter really holds the lock now (not a give-up after a timeout): a third store waits
  // for it, times out and says so.
  {
    CapturedWarnings warnings;
    { auto other = third.lock_for_tuning(id_of("m=1")); }
    CHECK(warnings.count("tuning here as well") == 1);
  }
  let_go.set_value();
  waiter.join();
  CHECK(blocked);
  CapturedWarnings warnings;
  { auto again = third.lock_for_tuning(id_of("m=1")); }  // released by the waiter
  CHECK(warnings.text().empty());
}

TEST_CASE("the loader keeps the good entries of a file with a malformed one", "[cache][loader]") {
  std::vector<CacheEntry> entries{
      {id_of("a"), sample_result()}, {id_of("b"), sample_result()}, {id_of("c"), sample_result()}};
  std::string text = detail::write_cache_file("matmul", entries);
  // Make the second entry's sample count a string: a type error inside a nested node.
  const auto second = text.find("\"key\": \"b\"");
  REQUIRE(second != std::string::npos);
  const auto samples = text.find("\"samples\": 12", second);
  text.replace(samples, 13, "\"samples\": \"x\"");
  const auto parsed = detail::parse_cache_file(text);
  CHECK(parsed.op == "matmul");
  REQUIRE(parsed.entries.size() == 2);
  CHECK(parsed.entries[0].id.key == "a");
  CHECK(parsed.entries[1].id.key == "c");
  REQUIRE(parsed.problems.size() == 1);
  CHECK(parsed.problems[0].find("entry 1") != std::string::npos);
}

TEST_CASE("the loader rejects non-objects, deep nesting and foreign formats with a cache error",
          "[cache][loader]") {
  const std::vector<std::string> inputs{
      "",
      "   ",
      "[]",
      "42",
      "{",
      "{}",
      std::string(100000, '['),
      std::string(50, '{') + std::string(50, '}'),
      "{\"format\": \"tunekit-cache-table\", \"version\": 3, \"op\": \"x\", \"entries\": []}",
      "{\"format\": \"tunekit-cache\", \"version\": 2, \"op\": \"x\", \"entries\": []}",  // an
                                                                                          // index
      "{\"format\": \"something else\", \"version\": 1}",
      "{\"format\": \"tunekit-cache-table\", \"version\": \"2\"}",
      "{\"format\": \"tunekit-cache-table\", \"version\": 2, \"op\": \"x\", \"entries\": {}}",
  };
  for (const auto& input : inputs) {
    INFO(input.substr(0, 80));
    try {
      (void)detail::parse_cache_file(input);
      FAIL("accepted");
    } catch (const AutotuneError& e) {
      CHECK(e.kind() == ErrorKind::cache);
    }
  }
  // Entries that are not objects are skipped one by one.
  const auto odd = detail::parse_cache_file(
      "{\"format\": \"tunekit-cache-table\", \"version\": 2, \"op\": \"x\", "
      "\"entries\": [1, \"two\", null, true, [], {}]}");
  CHECK(odd.entries.empty());
  CHECK(odd.problems.size() == 6);
}

TEST_CASE("op names that are not file-name safe map to distinct, safe file names", "[cache]") {
  CHECK(detail::op_file_name("matmul") == "matmul.json");
  CHECK(detail::op_file_name("a/b") == "a%2Fb.json");
  CHECK(detail::op_file_name("..") == "%2E..json");
  CHECK(detail::op_file_name("") == "%.json");
  CHECK(detail::op_file_name("a b") != detail::op_file_name("a_b"));
  const auto long_name = detail::op_file_name(std::string(1000, 'x'));
  CHECK(long_name.size() < 200);
  CHECK(long_name != detail::op_file_name(std::string(999, 'x')));
}

namespace {

// One "program" over cache `dir` with the op of the fallback tests: "fussy" is fastest on the
// anchored size 1024 but throws on 1000; "decent" is next.
struct FussyProgram {
  explicit FussyProgram(const fs::path& dir) : tuner("fussy_op", cache_settings(dir)) {}
  int run(int n) {
    const auto& set = tuner.init([] {
      auto key_of = [](const int& n) { return SizeKey{static_cast<std::uint64_t>(n)}; };
      auto inputs = [](const SizeKey& key, const int&) {
        return std::tuple<int>(static_cast<int>(key.n.value()));
      };
      return TunableSet{key_of, inputs}
          .with(Tunable{"general",
                        [](VirtualClient& c, int& n) -> int {
                          if (n == 999) throw std::invalid_argument("999 is refused");
                          return c.spend(3e-3), 0;
                        }})
          .with(Tunable{"fussy",
                        [](VirtualClient& c, int& n) -> int {
                          if (n % 1024 != 0) throw std::runtime_error("needs multiples of 1024");
                          return c.spend(1e-3), 1;
                        }})
          .with(Tunable{"decent", [](VirtualClient& c, int& n) -> int {
                          if (n == 999) throw std::invalid_argument("999 is refused");
                          return c.spend(2e-3), 2;
                        }});
    });
    return tuner.execute(client.id(), client, set, n);
  }
  // The winner a fresh program would load for `n`'s key, and whether it had to tune.
  bool tuned(int n) {
    const auto report = tuner.tuner(client.id()).report(SizeKey{static_cast<std::uint64_t>(n)});
    return report && report->tuning_seconds > 0;
  }
  LocalTuner<SizeKey> tuner;
  VirtualClient client;
};

}  // namespace

TEST_CASE("one failure of the winner is never saved, repeated ones that another served are",
          "[cache][fallback]") {
  TempDir dir;
  CapturedWarnings warnings;
  {
    FussyProgram first(dir.path());
    CHECK(first.run(1000) == 2);  // tuned on 1024: fussy wins, then fails on 1000
    CHECK(first.tuned(1000));
  }
  {
    FussyProgram second(dir.path());
    CHECK(second.run(1024) == 1);  // fussy still the winner on disk
    CHECK_FALSE(second.tuned(1024));
    for (unsigned i = 1; i < demote_after_failures; ++i) CHECK(second.run(1000) == 2);
  }
  {
    FussyProgram third(dir.path());
    CHECK(third.run(1024) == 1);  // fewer failures than the threshold in one program: kept
    for (unsigned i = 0; i < demote_after_failures; ++i) CHECK(third.run(1000) == 2);
    CHECK(third.run(1024) == 2);  // demoted in memory
  }
  FussyProgram fourth(dir.path());
  CHECK(fourth.run(1024) == 2);  // and on disk
  CHECK_FALSE(fourth.tuned(1024));
  const auto stored = FileStore(dir.path()).entries();
  REQUIRE(stored.size() == 1);
  CHECK(warnings.count("demoted") == 1);
}

TEST_CASE("inputs that every candidate rejects leave the saved ranking as it was",
          "[cache][fallback]") {
  TempDir dir;
  {
    FussyProgram first(dir.path());
    CHECK(first.run(1024) == 1);
    // The op's index and its outcome tables, as they are on disk.
    const auto on_disk = [&] {
      const FileStore store(dir.path());
      std::string text = read_text(store.file_of("fussy_op"));
      for (const auto& e : fs::directory_iterator(store.tables_of("fussy_op")))
        text += read_text(e.path());
      return text;
    };
    const auto saved = on_disk();
    CHECK_THAT(saved, Catch::Contains("fussy"));
    for (int i = 0; i < 10; ++i) {
      // fussy throws first: its exception reaches the caller; the others reject 999 too.
      CHECK_THROWS_MATCHES(first.run(999), std::runtime_error,
                           Catch::Message("needs multiples of 1024"));
    }
    CHECK(first.run(1024) == 1);
    CHECK(on_disk() == saved);  // nothing written
  }
  FussyProgram second(dir.path());
  CHECK(second.run(1024) == 1);
  CHECK_FALSE(second.tuned(1024));
}

TEST_CASE("a cached key never waits for another key's tuning, the key being tuned does",
          "[cache][concurrency]") {
  TempDir dir;
  std::promise<void> started_promise, release_promise;
  std::shared_future<void> release = release_promise.get_future().share();
  std::atomic<bool> started_once{false};
  auto make_set = [&] {
    auto key_of = [](const std::uint64_t& n) { return SizeKey{n}; };
    auto inputs = [](const SizeKey& key, const std::uint64_t&) {
      return std::tuple<std::uint64_t>(key.n.value());
    };
    return TunableSet{key_of, inputs}
        .with(Tunable{"blocking on 4096",
                      [&](VirtualClient& c, std::uint64_t& n) {
                        if (n == 4096) {  // the test holds this tuning until it says so
                          if (!started_once.exchange(true)) started_promise.set_value();
                          release.wait();
                        }
                        return c.spend(1e-3), n;
                      }})
        .with(
            Tunable{"slower", [](VirtualClient& c, std::uint64_t& n) { return c.spend(2e-3), n; }});
  };
  {  // an earlier program tuned key 16
    LocalTuner<SizeKey> earlier("waits", cache_settings(dir.path()));
    VirtualClient client("device A");
    const auto& set = earlier.init(make_set);
    REQUIRE(earlier.execute(client.id(), client, set, std::uint64_t{16}) == 16);
  }
  LocalTuner<SizeKey> tuner("waits", cache_settings(dir.path()));
  const auto& set = tuner.init(make_set);
  auto call = [&](std::uint64_t n) {
    return std::async(std::launch::async, [&, n] {
      VirtualClient client("device A");  // one client per thread, one device
      std::uint64_t value = n;
      return tuner.execute(client.id(), client, set, value);
    });
  };
  auto tuning = call(4096);
  started_promise.get_future().wait();  // 4096 is being tuned, under the device's tuning lock
  auto same_key = call(4096);
  auto cached = call(16);
  // The cached key completes while the other tuning is held (on main it waited for it: only a
  // deadlock-safety bound here, the release comes in any case).
  const bool cached_done = cached.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
  const bool same_key_waiting =
      same_key.wait_for(std::chrono::milliseconds(50)) == std::future_status::timeout;
  release_promise.set_value();
  CHECK(cached_done);
  CHECK(same_key_waiting);
  CHECK(cached.get() == 16);
  CHECK(tuning.get() == 4096);
  CHECK(same_key.get() == 4096);
  const auto report = tuner.tuner(DeviceId("device A")).report(SizeKey{16});
  REQUIRE(report);
  CHECK(report->tuning_seconds == 0);  // loaded, not tuned
}

namespace {

// One program whose candidates all throw (std::bad_alloc when `Memory`, else a runtime_error):
// returns the error's text; counts input-generator calls (one per candidate per tuning) in
// `generated`. `changed` changes the set's checksum, as an edited kernel does; `version` is the
// set's version (TunableSet::version), what its author changes with its host code.
template <bool Memory>
std::string run_failing_program(const fs::path& dir, int& generated, bool changed = false,
                                std::string version = "") {
  LocalTuner<SizeKey> tuner("failing_op", cache_settings(dir));
  VirtualClient client;
  const auto& set = tuner.init([&] {
    auto key_of = [](const int& n) { return SizeKey{static_cast<std::uint64_t>(n)}; };
    auto inputs = [&](const SizeKey&, const int& n) { return ++generated, std::tuple<int>(n); };
    auto fails = [](VirtualClient&, int&) -> int {
      if (Memory) throw std::bad_alloc();
      throw std::runtime_error("broken");
    };
    return TunableSet{key_of, inputs}
        .with(Tunable{"a", fails})
        .with(Tunable{"b", fails}.fingerprint(changed ? "changed" : ""))
        .version(version);
  });
  try {
    return std::to_string(tuner.execute(client.id(), client, set, 100));
  } catch (const AutotuneError& e) {
    CHECK(e.kind() == ErrorKind::no_valid_candidate);
    return e.what();
  }
}

}  // namespace

TEST_CASE(
    "a key whose candidates all failed is remembered on disk until its set or its version changes",
    "[cache][failure]") {
  TempDir dir;
  int generated = 0;
  const auto first = run_failing_program<false>(dir.path(), generated);
  CHECK_THAT(first, Catch::Contains("no candidate of 'failing_op' works for n=128"));
  CHECK(generated == 2);
  // A later program rethrows the same error without tuning, and says where it comes from.
  {
    CapturedWarnings warnings;
    CHECK(run_failing_program<false>(dir.path(), generated) == first);
    CHECK(warnings.count("failed in an earlier tuning") == 1);
  }
  CHECK(generated == 2);
  // Another set (here a changed fingerprint, as an edited kernel gives) is tuned again.
  CHECK(run_failing_program<false>(dir.path(), generated, true) == first);
  CHECK(generated == 4);
  // A new version of the set (host code the checksum cannot see) is tuned again, once.
  CHECK(run_failing_program<false>(dir.path(), generated, true, "2") == first);
  CHECK(generated == 6);
  CHECK(run_failing_program<false>(dir.path(), generated, true, "2") == first);
  CHECK(generated == 6);
}

TEST_CASE("a key that failed for want of memory is not remembered on disk", "[cache][failure]") {
  TempDir dir;
  int generated = 0;
  const auto first = run_failing_program<true>(dir.path(), generated);
  CHECK_THAT(first, Catch::Contains("out of memory"));
  CHECK(generated == 2);
  CHECK(run_failing_program<true>(dir.path(), generated) == first);
  CHECK(generated == 4);  // tuned again: the memory may be there now
}

TEST_CASE("8 threads over 40 keys with a persistent cache: each key tuned once, then loaded",
          "[cache][concurrency]") {
  TempDir dir;
  std::atomic<int> generated{0};
  auto make_set = [&] {
    auto key_of = [](const std::uint64_t& n) { return SizeKey{n}; };
    auto inputs = [&](const SizeKey& key, const std::uint64_t&) {
      ++generated;
      return std::tuple<std::uint64_t>(key.n.value());
    };
    return TunableSet{key_of, inputs}
        .with(Tunable{"slow", [](VirtualClient& c, std::uint64_t& n) { return c.spend(2e-3), n; }})
        .with(Tunable{"fast", [](VirtualClient& c, std::uint64_t& n) { return c.spend(1e-3), n; }});
  };
  constexpr int threads = 8, keys = 40, calls = 200;
  auto program = [&] {
    LocalTuner<SizeKey> tuner("many_threads", cache_settings(dir.path()));
    const auto& set = tuner.init(make_set);
    std::atomic<int> wrong{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        VirtualClient client("device A");
        for (int i = 0; i < calls; ++i) {
          std::uint64_t n = std::uint64_t{1} << ((i * 7 + t) % keys);
          if (tuner.execute(client.id(), client, set, n) != n) ++wrong;
        }
      });
    }
    for (auto& thread : pool) thread.join();
    return wrong.load();
  };
  CHECK(program() == 0);
  CHECK(generated == 2 * keys);  // two candidates, one tuning per key
  CHECK(program() == 0);         // a second program loads every key
  CHECK(generated == 2 * keys);
  CHECK(FileStore(dir.path()).entries().size() == keys);
}

// ---- format 2: a small index per op, one outcome table per entry ----

namespace {
/// A result with `outcomes` rows, as large as an H100 matmul tuning writes them.
StoredResult large_result(std::size_t outcomes) {
  StoredResult r = sample_result();
  AutotuneOutcome row = r.outcomes[1];
  for (std::size_t i = r.outcomes.size(); i < outcomes; ++i) {
    row.index = i;
    row.name =
        "blocked[MWG=64,NWG=64,KWG=32,MDIMC=16,NDIMC=16,VWM=4,VWN=" + std::to_string(i) + "]";
    r.outcomes.push_back(row);
  }
  return r;
}
}  // namespace

TEST_CASE(
    "an op's index stays small however large its outcome tables, and a lookup reads one table",
    "[cache]") {
  TempDir dir;
  std::vector<CacheEntry> entries;
  for (int i = 0; i < 40; ++i)
    entries.push_back({id_of("m=" + std::to_string(i)), large_result(1700)});
  FileStore(dir.path()).save_entries(entries);
  FileStore store(dir.path());
  // 40 tables of ~300 KB each; the index that a cold start parses holds 40 short records.
  CHECK(fs::file_size(store.file_of("matmul")) < 40 * 300);
  CHECK(fs::file_size(store.table_of(entries[3].id)) > 100'000);
  // Every other table unusable: a lookup of m=3 does not read them (no warning).
  for (const auto& e : entries) {
    if (e.id.key != "m=3") write_text(store.table_of(e.id), "garbage");
  }
  CapturedWarnings warnings;
  const auto loaded = store.load(entries[3].id);
  REQUIRE(loaded);
  CHECK(loaded->outcomes.size() == 1700);
  CHECK(warnings.text().empty());
  CHECK_FALSE(store.load(entries[4].id));  // its table is garbage: re-tuned
  CHECK(warnings.count("outcome table of [m=4]") == 1);
}

TEST_CASE("a key keeps the entries of its three newest set checksums, older ones are pruned",
          "[cache]") {
  TempDir dir;
  FileStore store(dir.path());
  store.save(id_of("m=1", "device B", 7), sample_result());  // another device: never pruned
  const auto start = fs::file_time_type::clock::now() - std::chrono::hours(1);
  for (std::uint64_t checksum = 1; checksum <= 5; ++checksum) {
    store.save(id_of("m=1", "device A", checksum), sample_result());
    // Written a minute apart, whatever the file system's timestamp granularity.
    fs::last_write_time(store.table_of(id_of("m=1", "device A", checksum)),
                        start + std::chrono::minutes(checksum));
  }
  std::vector<std::uint64_t> kept;
  for (const auto& e : store.entries("matmul")) {
    if (e.id.device == "device A") kept.push_back(e.id.checksum);
  }
  CHECK(kept == std::vector<std::uint64_t>{3, 4, 5});
  CHECK(store.load(id_of("m=1", "device B", 7)));
  std::size_t tables = 0;
  for (const auto& e : fs::directory_iterator(store.tables_of("matmul")))
    tables += e.is_regular_file();
  CHECK(tables == 4);  // the pruned entries' tables are gone too
}

TEST_CASE("an import never prunes a key's builds, the next tuning's write does", "[cache]") {
  TempDir dir;
  FileStore store(dir / "cache");
  const auto start = fs::file_time_type::clock::now() - std::chrono::hours(1);
  for (std::uint64_t checksum = 1; checksum <= 2; ++checksum) {  // the builds in use here
    store.save(id_of("m=1", "device A", checksum), sample_result());
    fs::last_write_time(store.table_of(id_of("m=1", "device A", checksum)),
                        start + std::chrono::minutes(checksum));
  }
  // A bundle of three other builds of the key: their tables are written now, the newest.
  std::vector<CacheEntry> older;
  for (std::uint64_t checksum = 11; checksum <= 13; ++checksum) {
    older.push_back(CacheEntry{id_of("m=1", "device A", checksum), sample_result()});
  }
  write_text(dir / "bundle.json", detail::write_cache_bundle({{"matmul", older, {}}}));
  CHECK(store.import_from(dir / "bundle.json", ImportMode::keep_existing) == 3);
  const auto checksums = [&] {
    std::vector<std::uint64_t> kept;
    for (const auto& e : store.entries("matmul")) kept.push_back(e.id.checksum);
    return kept;
  };
  CHECK(checksums() == std::vector<std::uint64_t>{1, 2, 11, 12, 13});
  CHECK(store.load(id_of("m=1", "device A", 1)));
  // A tuning of a new build keeps the key's three newest, itself counted.
  store.save(id_of("m=1", "device A", 20), sample_result());
  CHECK(checksums().size() == 3);
  CHECK(store.load(id_of("m=1", "device A", 20)));
}

TEST_CASE("a bundle exported by format 1 imports into format 2", "[cache]") {
  TempDir dir;
  std::string bundle =
      detail::write_cache_bundle({{"matmul", {{id_of("m=1"), sample_result()}}, {}}});
  const auto at = bundle.find("\"version\": 2");
  REQUIRE(at != std::string::npos);
  bundle.replace(at, 12, "\"version\": 1");
  write_text(dir / "old.json", bundle);
  FileStore store(dir / "cache");
  CHECK(store.import_from(dir / "old.json") == 1);
  CHECK(store.load(id_of("m=1")));
  CHECK(store.directory().filename() == "v2");
}

TEST_CASE("last_call says whether a call tuned, loaded, dispatched, fell back or failed",
          "[cache][last-call]") {
  TempDir dir;
  VirtualClient client;
  // "fast" fails on the odd inputs that anchoring hides (101 -> key 128); "slow" serves them.
  auto make_set = [] {
    auto key_of = [](const int& n) { return SizeKey{static_cast<std::uint64_t>(n)}; };
    auto inputs = [](const SizeKey& key, const int&) {
      return std::tuple<int>(static_cast<int>(key.n.value()));
    };
    return TunableSet{key_of, inputs}
        .with(Tunable{"slow", [](VirtualClient& c, int& n) { return c.spend(2e-3), n; }})
        .with(Tunable{"fast",
                      [](VirtualClient& c, int& n) {
                        if (n % 2) throw std::runtime_error("odd");
                        return c.spend(1e-3), n;
                      }})
        .with(Tunable{
            "broken", [](VirtualClient&, int&) -> int {
              throw std::runtime_error("x");
            }}.only_if(false));
  };
  auto path_of = [](const LocalTuner<SizeKey>& tuner) {
    const auto call = tuner.last_call();
    return call ? std::pair(call->path, call->candidate) : std::pair(CallPath::none, 99u);
  };
  {
    LocalTuner<SizeKey> tuner("last_call", cache_settings(dir.path()));
    const auto& set = tuner.init(make_set);
    CHECK(path_of(tuner) == std::pair(CallPath::none, 99u));
    tuner.execute(client.id(), client, set, 128);
    CHECK(path_of(tuner) == std::pair(CallPath::tuned, 1u));
    CHECK(last_call().op == "last_call");
    tuner.execute(client.id(), client, set, 128);
    CHECK(path_of(tuner) == std::pair(CallPath::dispatched, 1u));
    CHECK(tuner.execute(client.id(), client, set, 101) == 101);
    CHECK(path_of(tuner) == std::pair(CallPath::fell_back, 0u));
  }
  {
    LocalTuner<SizeKey> tuner("last_call", cache_settings(dir.path()));
    const auto& set = tuner.init(make_set);
    tuner.execute(client.id(), client, set, 128);
    CHECK(path_of(tuner) == std::pair(CallPath::loaded, 1u));
    // Another op's call on this thread is not this op's.
    LocalTuner<SizeKey> other("last_call_other", test_settings());
    const auto& failing = other.init([] {
      return TunableSet{[](const int& n) { return SizeKey{static_cast<std::uint64_t>(n)}; },
                        CloneInputs{}}
          .with(Tunable{"x", [](int&) -> int { throw std::runtime_error("no"); }})
          .with(Tunable{"y", [](int&) -> int { throw std::runtime_error("no"); }});
    });
    CHECK_THROWS_AS(other.execute(client.id(), client, failing, 4), AutotuneError);
    CHECK(!tuner.last_call());
    CHECK(path_of(other).first == CallPath::failed);
    CHECK_THROWS_AS(other.execute(client.id(), client, failing, 4), AutotuneError);
    CHECK(path_of(other).first == CallPath::failed);  // the remembered failure
  }
}

namespace {
// A device whose timer reports NaN: candidates run, but cannot be timed.
struct BrokenTimer : VirtualClient {
  double measure(FunctionRef<void()> work, std::size_t batch) {
    VirtualClient::measure(work, batch);
    return std::nan("");
  }
};
}  // namespace

TEST_CASE("when the timer fails for every candidate, the first that ran serves, unsaved",
          "[cache][failure][timer]") {
  TempDir dir;
  BrokenTimer client;
  auto make_set = [] {
    auto key_of = [](const int& n) { return SizeKey{static_cast<std::uint64_t>(n)}; };
    return TunableSet{key_of, CloneInputs{}}
        .with(Tunable{"broken", [](BrokenTimer&, int&) -> int { throw std::runtime_error("x"); }})
        .with(Tunable{"first working", [](BrokenTimer&, int& n) { return n + 1; }})
        .with(Tunable{"second working", [](BrokenTimer&, int& n) { return n + 2; }});
  };
  LocalTuner<SizeKey> tuner("broken_timer", cache_settings(dir.path()));
  const auto& set = tuner.init(make_set);
  {
    CapturedWarnings warnings;
    CHECK(tuner.execute(client.id(), client, set, 8) == 9);
    CHECK(warnings.count("the timer failed for every candidate") == 1);
  }
  CHECK(tuner.execute(client.id(), client, set, 8) == 9);  // kept in memory
  CHECK(FileStore(dir.path()).entries("broken_timer").empty());
}
