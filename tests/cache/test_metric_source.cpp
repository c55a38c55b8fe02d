// Derived metrics (metric.hpp) from a set's declaration to the table, the cache and back; and the
// source of a result (computed, local cache, bundle) in last_call() and the tuning's report.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <tunekit/report.hpp>

#include "test_cache_support.hpp"

using namespace tunekit;
using namespace tunekit::test;

namespace {

// Two candidates over n items; "items/s" from the key and the time.
auto metric_set() {
  auto key_of = [](const std::uint64_t& n) { return SizeKey{n}; };
  auto inputs = [](const SizeKey& key, const std::uint64_t&) {
    return std::tuple<std::uint64_t>(key.n.value());
  };
  return TunableSet{key_of, inputs}
      .with(Tunable{"slow", [](VirtualClient& c, std::uint64_t& n) { return c.spend(2e-3), n; }})
      .with(Tunable{"fast", [](VirtualClient& c, std::uint64_t& n) { return c.spend(1e-3), n; }})
      .metric("Mitems/s", [](const SizeKey& key, double seconds) {
        return 1e-6 * static_cast<double>(key.n.value()) / seconds;
      });
}

// A key class of sizes whose tunings time the call's own size (as matmul's): its work() is the
// anchor's, benchmark_work (found by argument-dependent lookup) the size the inputs hold.
struct SpanKey {
  BOOST_HANA_DEFINE_STRUCT(SpanKey, (tunekit::Anchored<std::uint64_t>, n));
  Work work() const { return {static_cast<double>(n.value()), 0}; }
};
Work benchmark_work(const SpanKey&, const std::uint64_t& n) {
  return {static_cast<double>(n), 8 * static_cast<double>(n)};
}
// The same key without benchmark_work; and one whose benchmark_work throws.
struct AnchorOnlyKey {
  BOOST_HANA_DEFINE_STRUCT(AnchorOnlyKey, (tunekit::Anchored<std::uint64_t>, n));
  Work work() const { return {static_cast<double>(n.value()), 0}; }
};
struct ThrowingKey {
  BOOST_HANA_DEFINE_STRUCT(ThrowingKey, (tunekit::Anchored<std::uint64_t>, n));
  Work work() const { return {static_cast<double>(n.value()), 0}; }
};
Work benchmark_work(const ThrowingKey&, const std::uint64_t&) {
  throw std::runtime_error("no work");
}

// Two candidates, timed on the call's own size (not the key's anchor); GFLOP/s and GB/s.
template <class Key>
auto span_set() {
  auto key_of = [](const std::uint64_t& n) { return Key{n}; };
  auto own_size = [](const Key&, const std::uint64_t& n) { return std::tuple<std::uint64_t>(n); };
  return TunableSet{key_of, own_size}
      .with(Tunable{"slow", [](VirtualClient& c, std::uint64_t& n) { return c.spend(2e-3), n; }})
      .with(Tunable{"fast", [](VirtualClient& c, std::uint64_t& n) { return c.spend(1e-3), n; }})
      .metric(gflops_metric<Key>())
      .metric(gbytes_metric<Key>());
}

const AutotuneOutcome& named(const TuningReport& report, const std::string& name) {
  for (const auto& o : report.outcomes) {
    if (o.name == name) return o;
  }
  throw std::runtime_error("no outcome " + name);
}

template <class Key>
AutotuneOutcome tuned_on_1000(const std::string& op) {
  LocalTuner<Key> tuner(op, test_settings());
  VirtualClient client;
  const auto& set = tuner.init(span_set<Key>);
  CHECK(tuner.execute(client.id(), client, set, std::uint64_t{1000}) == 1000);
  const auto report = *tuner.tuner(client.id()).report(Key{1000});
  REQUIRE(report.metric_names == std::vector<std::string>{"GFLOP/s", "GB/s"});
  const AutotuneOutcome& fast = named(report, "fast");
  REQUIRE(fast.metrics.size() == 2);
  return fast;
}

}  // namespace

TEST_CASE("a set's metric is computed for every working candidate and shown in its table",
          "[metrics]") {
  LocalTuner<SizeKey> tuner("metric_op", test_settings());
  VirtualClient client;
  const auto& set = tuner.init(metric_set);
  REQUIRE(set.metrics().size() == 1);
  CHECK(tuner.execute(client.id(), client, set, std::uint64_t{1024}) == 1024);
  const auto report = *tuner.tuner(client.id()).report(SizeKey{1024});
  REQUIRE(report.metric_names == std::vector<std::string>{"Mitems/s"});
  const AutotuneOutcome& fast = named(report, "fast");
  REQUIRE(fast.metrics.size() == 1);
  CHECK(fast.metrics[0] == Approx(1e-6 * 1024 / fast.median));
  CHECK(named(report, "slow").metrics.at(0) < fast.metrics[0]);
  const std::string table = format_report(report);
  INFO(table);
  CHECK_THAT(table, Catch::Contains("Mitems/s") && Catch::Contains(format_metric(fast.metrics[0])));
  CHECK(format_metric(1234.56) == "1235");
  CHECK(format_metric(56.78) == "56.8");
  CHECK(format_metric(0.8912) == "0.891");
  CHECK(format_metric(std::nan("")) == "-");
}

TEST_CASE("a metric's function of another key type, or one that throws, shows no value",
          "[metrics]") {
  struct OtherKey {
    int n;
  };
  const Metric other("other", [](const OtherKey& k, double s) { return k.n / s; });
  CHECK(std::isnan(other.value(SizeKey{8}, 1.0)));
  CHECK(other.value(OtherKey{8}, 2.0) == 4.0);
  const Metric throws("throws",
                      [](const SizeKey&, double) -> double { throw std::runtime_error("no"); });
  TuningReport report{"op", "n=8", "d", 0, {}};
  AutotuneOutcome o;
  o.status = OutcomeStatus::measured;
  o.median = 1e-3;
  report.outcomes.push_back(o);
  add_metrics({throws}, SizeKey{8}, report);
  REQUIRE(report.outcomes[0].metrics.size() == 1);
  CHECK(std::isnan(report.outcomes[0].metrics[0]));
}

TEST_CASE(
    "GFLOP/s and GB/s are the rates of the problem a tuning timed where the key states its work "
    "(benchmark_work), of the key's work elsewhere, and none where benchmark_work throws",
    "[metrics]") {
  const AutotuneOutcome timed = tuned_on_1000<SpanKey>("span_op");  // the key's anchor is 1024
  CHECK(timed.metrics[0] == Approx(1000 / timed.median * 1e-9));
  CHECK(timed.metrics[1] == Approx(8000 / timed.median * 1e-9));
  const AutotuneOutcome anchored = tuned_on_1000<AnchorOnlyKey>("anchor_op");
  CHECK(anchored.metrics[0] == Approx(1024 / anchored.median * 1e-9));
  CHECK(anchored.metrics[1] == 0);  // its work moves no bytes
  const AutotuneOutcome thrown = tuned_on_1000<ThrowingKey>("throwing_op");
  CHECK(thrown.ok());  // a metric never fails a tuning
  CHECK(std::isnan(thrown.metrics[0]));
  CHECK(std::isnan(thrown.metrics[1]));
}

TEST_CASE("a set's metric names are checked when it is declared", "[metrics]") {
  auto set = metric_set();
  const auto rate = [](const SizeKey&, double s) { return 1 / s; };
  CHECK_THROWS_AS(set.metric("", rate), std::invalid_argument);
  CHECK_THROWS_AS(set.metric("Mitems/s", rate), std::invalid_argument);  // twice
  CHECK_THROWS_AS(set.metric(std::string(40, 'x'), rate), std::invalid_argument);
  CHECK_THROWS_AS(set.metric("a\nb", rate), std::invalid_argument);
  CHECK(set.metric("per second", rate).metrics().size() == 2);
  CHECK(set.metrics().size() == 1);  // a named set is copied, not changed
  // Not part of the checksum: declaring a metric does not tune again.
  CHECK(set.checksum_text() == set.metric("per second", rate).checksum_text());
}

TEST_CASE("metrics are kept with the results and come back from the cache", "[metrics][cache]") {
  TempDir dir;
  VirtualClient client;
  {
    LocalTuner<SizeKey> tuner("metric_op", cache_settings(dir.path()));
    tuner.execute(client.id(), client, tuner.init(metric_set), std::uint64_t{4096});
  }
  const auto entries = FileStore(dir.path()).entries("metric_op");
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].result.metric_names == std::vector<std::string>{"Mitems/s"});
  const auto reports = reports_from_cache(entries);
  CHECK_THAT(format_report(reports[0]), Catch::Contains("Mitems/s"));
  CHECK_THAT(html_report(reports),
             Catch::Contains("<th>Mitems/s</th>") && Catch::Contains(" Mitems/s</b>"));
  LocalTuner<SizeKey> again("metric_op", cache_settings(dir.path()));
  again.execute(client.id(), client, again.init(metric_set), std::uint64_t{4096});
  const auto loaded = *again.tuner(client.id()).report(SizeKey{4096});
  CHECK(loaded.metric_names == std::vector<std::string>{"Mitems/s"});
  CHECK(named(loaded, "fast").metrics.size() == 1);
}

TEST_CASE("forged metrics in a cache entry are refused like any forged number",
          "[metrics][cache]") {
  CacheEntry entry{EntryId{"device A", "op", "n=1", 7}, sample_result()};
  entry.result.metric_names = {"GB/s"};
  for (auto& o : entry.result.outcomes) {
    if (o.ok()) o.metrics = {12.5};
  }
  const auto good = detail::parse_cache_file(detail::write_cache_file("op", {entry}));
  REQUIRE(good.entries.size() == 1);
  CHECK(good.entries[0].result.metric_names == entry.result.metric_names);
  CHECK(good.entries[0].result.outcomes[0].metrics == entry.result.outcomes[0].metrics);
  SECTION("a negative value") { entry.result.outcomes[0].metrics = {-1.0}; }
  SECTION("a value past 1e30") { entry.result.outcomes[0].metrics = {1e31}; }
  SECTION("an infinite value") {
    entry.result.outcomes[0].metrics = {std::numeric_limits<double>::infinity()};
  }
  SECTION("more values than names") { entry.result.outcomes[0].metrics = {1.0, 2.0}; }
  SECTION("an unprintable name") { entry.result.metric_names = {"GB\x1b[2J"}; }
  SECTION("too many names") { entry.result.metric_names = std::vector<std::string>(9, "x"); }
  // Written with a right checksum: the reader's own limits refuse it.
  const auto bad = detail::parse_cache_file(detail::write_cache_file("op", {entry}));
  CHECK(bad.entries.empty());
  CHECK(bad.problems.size() == 1);
}

TEST_CASE("an entry without metrics keeps the checksum it always had", "[metrics][cache]") {
  const CacheEntry plain{EntryId{"device A", "op", "n=1", 7}, sample_result()};
  CacheEntry with = plain;
  with.result.metric_names = {"GB/s"};
  CHECK(detail::entry_checksum(plain) != detail::entry_checksum(with));
  // The canonical text of an entry without metrics is the one the version before metrics wrote:
  // its checksum, computed by that version (main at c47a55b), is pinned. Entries written then
  // still pass their checksum.
  CHECK(detail::entry_checksum(plain) == 0x76b05a2882ea6e4fULL);
}

TEST_CASE("last_call and the report name where a result came from", "[cache][last-call]") {
  TempDir dir;
  VirtualClient client;
  const auto source = [] { return std::string(last_call().source); };
  {
    LocalTuner<SizeKey> tuner("source_op", cache_settings(dir / "a"));
    const auto& set = tuner.init(metric_set);
    tuner.execute(client.id(), client, set, std::uint64_t{64});
    CHECK(source() == "computed");
    tuner.execute(client.id(), client, set, std::uint64_t{64});
    CHECK(source() == "computed");  // dispatched: the same result
    CHECK(tuner.tuner(client.id()).report(SizeKey{64})->source == "computed");
  }
  {
    LocalTuner<SizeKey> tuner("source_op", cache_settings(dir / "a"));
    tuner.execute(client.id(), client, tuner.init(metric_set), std::uint64_t{64});
    CHECK(last_call().path == CallPath::loaded);
    const std::string local = "local cache " + (dir / "a").string();
    CHECK(source() == local);
    CHECK(tuner.tuner(client.id()).report(SizeKey{64})->source == local);
  }
  FileStore(dir / "a").export_to(dir / "shipped.json");
  FileStore(dir / "b").import_from(dir / "shipped.json");
  {
    std::ostringstream clog;  // TUNEKIT_LOG=debug says the same
    std::streambuf* was = std::clog.rdbuf(clog.rdbuf());
    Settings settings = cache_settings(dir / "b");
    settings.log = LogLevel::debug;
    LocalTuner<SizeKey> logged("source_op", settings);
    logged.execute(client.id(), client, logged.init(metric_set), std::uint64_t{64});
    std::clog.rdbuf(was);
    const std::string bundled = "bundle shipped.json, in the local cache " + (dir / "b").string();
    CHECK(source() == bundled);
    CHECK_THAT(clog.str(), Catch::Contains("'fast' from the " + bundled) &&
                               !Catch::Contains("persistent cache"));
  }
}
