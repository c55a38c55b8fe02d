// The pick: the fastest correct candidate, or no pick. Paired samples against the leader,
// intervals, racing's floor, ties, a suspect reference, a host reference, a search that runs out
// of budget with nothing working, and start points switched off.
#include <catch2/catch.hpp>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tunekit/tunekit.hpp>
#include <vector>

#include "../support.hpp"

using namespace tunekit;
using test::adds;
using test::costs;
using test::DriftingClient;
using test::size_inputs;
using test::size_key;
using test::VirtualClient;

namespace {

Settings unconfirmed() {
  Settings settings = test::test_settings();
  settings.benchmark->confirm_contenders = 0;  // what is tested is the measurement itself
  return settings;
}

}  // namespace

TEST_CASE("the median's interval comes from order statistics", "[benchmark][pick]") {
  CHECK(median_interval({1, 2, 3, 4, 5}) == std::pair<double, double>{1, 5});  // few: min, max
  std::vector<double> hundred;
  for (int i = 1; i <= 100; ++i) hundred.push_back(i);
  const auto [low, high] = median_interval(hundred);
  CHECK(low == 40);  // ranks 50 -+ 1.96 * sqrt(100) / 2, outwards
  CHECK(high == 61);
  const auto s = summarize(hundred);
  CHECK(s.low == 40);
  CHECK(s.high == 61);
  CHECK(clearly_faster(0.9, 1.0));
  CHECK_FALSE(clearly_faster(0.99, 1.0, 0.02));
}

TEST_CASE("a candidate measured while the machine got busy is compared with the leader then",
          "[tuner][pick]") {
  LocalTuner<test::SizeKey> tuner("busy later", unconfirmed());
  // "first" is measured alone (1 warm-up, 3 samples: measurements 1-4); from the 5th on, every
  // measurement is 1.5x slower. "faster" is truly 10% faster: alone it would read 1.35 ms.
  DriftingClient client(5, std::numeric_limits<std::size_t>::max(), 1.5);
  const auto& set = tuner.init([] {
    return TunableSet{size_key, size_inputs}
        .with(Tunable{"first", costs<DriftingClient>(1.0e-3)})
        .with(Tunable{"faster", costs<DriftingClient>(0.9e-3)});
  });
  tuner.execute(client.id(), client, set, 64);
  const auto report = tuner.tuner(client.id()).report(test::SizeKey{64});
  REQUIRE(report);
  INFO(format_report(*report));
  REQUIRE(report->winner());
  CHECK(report->winner()->name == "faster");
  CHECK(report->winner()->paired);
  CHECK(report->winner()->median == Approx(0.9e-3));  // on the leader's scale
}

TEST_CASE("a candidate that takes the lead on one lucky measurement is measured again first",
          "[tuner][pick]") {
  // "lucky" is truly 1.1 ms, but its first measurement (a warm-up and 3 samples, beside
  // "steady") reads 0.7 ms. Taken as the leader at that, it would be the unit of every later
  // time: "later", truly 1.05 ms, would read 0.67 ms beside it and win over "steady" (1 ms).
  // Measured once more beside "steady" before it takes the lead, it reads its true time and
  // stays behind; "later" is then timed against "steady", and "steady" wins.
  LocalTuner<test::SizeKey> tuner("lucky lead", unconfirmed());
  VirtualClient client;
  auto lucky_calls = std::make_shared<int>(0);
  const auto& set = tuner.init([&] {
    return TunableSet{size_key, size_inputs}
        .with(Tunable{"steady", costs<VirtualClient>(1.0e-3)})
        .with(Tunable{"lucky",
                      [lucky_calls](VirtualClient& c, int&) {
                        c.spend(++*lucky_calls <= 4 ? 0.7e-3 : 1.1e-3);
                      }})
        .with(Tunable{"later", costs<VirtualClient>(1.05e-3)});
  });
  tuner.execute(client.id(), client, set, 64);
  const auto report = tuner.tuner(client.id()).report(test::SizeKey{64});
  REQUIRE(report);
  INFO(format_report(*report) << "lucky's calls: " << *lucky_calls);
  REQUIRE(report->winner());
  CHECK(report->winner()->name == "steady");
  const AutotuneOutcome* lucky = report->outcome("lucky");
  REQUIRE(lucky);
  CHECK(lucky->median == Approx(1.1e-3));
  const AutotuneOutcome* later = report->outcome("later");
  REQUIRE(later);
  CHECK(later->median == Approx(1.05e-3));
}

TEST_CASE("a leader that fails beside a candidate fails itself, not the candidate",
          "[tuner][pick]") {
  // "flaky" leads, then throws on every third call once "solid" (twice as fast) is measured
  // beside it: solid's paired samples lose their leader, and it is measured alone instead of
  // failing with flaky's error.
  LocalTuner<test::SizeKey> tuner("flaky leader", test::test_settings());
  VirtualClient client;
  auto solid_ran = std::make_shared<bool>(false);
  auto flaky_calls = std::make_shared<int>(0);
  const auto& set = tuner.init([&] {
    return TunableSet{size_key, size_inputs}
        .with(Tunable{"flaky",
                      [solid_ran, flaky_calls](VirtualClient& c, int& n) {
                        c.spend(2e-3);
                        if (*solid_ran && ++*flaky_calls % 3 == 0) {
                          throw std::runtime_error("flaky hiccup");
                        }
                        return n;
                      }})
        .with(Tunable{"solid", [solid_ran](VirtualClient& c, int& n) {
                        *solid_ran = true;
                        c.spend(1e-3);
                        return n;
                      }});
  });
  tuner.execute(client.id(), client, set, 64);
  const auto report = tuner.tuner(client.id()).report(test::SizeKey{64});
  REQUIRE(report);
  INFO(format_report(*report));
  for (const auto& outcome : report->outcomes) {
    if (outcome.name == "solid") CHECK(outcome.ok());
  }
  REQUIRE(report->winner());
  CHECK(report->winner()->name == "solid");
}

TEST_CASE("racing keeps two survivors: the runner-up is measured in full", "[tuner][pick]") {
  LocalTuner<test::SizeKey> tuner("floor", unconfirmed());
  VirtualClient client;
  const auto& set = tuner.init([] {
    return TunableSet{size_key, size_inputs}
        .with(Tunable{"100 us", costs<VirtualClient>(100e-6)})
        .with(Tunable{"900 us", costs<VirtualClient>(900e-6)})
        .with(Tunable{"950 us", costs<VirtualClient>(950e-6)});
  });
  tuner.execute(client.id(), client, set, 64);
  const auto report = tuner.tuner(client.id()).report(test::SizeKey{64});
  REQUIRE(report);
  INFO(format_report(*report));
  std::size_t survivors = 0;
  for (const auto& outcome : report->outcomes) {
    survivors += outcome.status == OutcomeStatus::measured;
    if (outcome.name == "900 us") CHECK(outcome.status == OutcomeStatus::measured);
    if (outcome.name == "950 us") CHECK(outcome.status == OutcomeStatus::dropped);
  }
  CHECK(survivors == 2);
}

TEST_CASE("leaders the intervals cannot tell apart are tied, the lower median wins",
          "[tuner][pick]") {
  LocalTuner<test::SizeKey> tuner("tied", test::test_settings());
  VirtualClient client;
  const auto& set = tuner.init([] {
    return TunableSet{size_key, size_inputs}
        .with(Tunable{"one", costs<VirtualClient>(1e-3)})
        .with(Tunable{"same", costs<VirtualClient>(1e-3)})
        .with(Tunable{"slower", costs<VirtualClient>(1.3e-3)});
  });
  tuner.execute(client.id(), client, set, 64);
  const auto report = tuner.tuner(client.id()).report(test::SizeKey{64});
  REQUIRE(report);
  const std::string table = format_report(*report);
  INFO(table);
  REQUIRE(report->winner());
  CHECK(report->winner()->tied);
  CHECK(report->confirm_rounds == 3 * test::test_settings().benchmark->confirm_rounds);
  const AutotuneOutcome* slower = report->outcome("slower");
  REQUIRE(slower);
  CHECK_FALSE(slower->tied);
  CHECK_THAT(table, Catch::Contains("winner, tied") && Catch::Contains("95% interval"));
  CHECK_THAT(table, Catch::Contains("tied within the intervals"));
}

TEST_CASE("a wrong reference candidate fails the tuning as the suspect, nothing is kept",
          "[tuner][pick][validation]") {
  LocalTuner<test::SizeKey> tuner("suspect", test::test_settings());
  VirtualClient client;
  const auto& set = tuner.init([] {
    return TunableSet{size_key, size_inputs}
        .with(Tunable{"wrong", adds<VirtualClient>(1, 1e-4)})  // the fastest, and the reference
        .with(Tunable{"right a", adds<VirtualClient>(0, 2e-3)})
        .with(Tunable{"right b", adds<VirtualClient>(0, 3e-3)})
        .validate_with(std::equal_to<>{});
  });
  // Not remembered as the key's decision; the next call waits the back-off instead of paying
  // for the same tuning again (it would fail the same way).
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      tuner.execute(client.id(), client, set, 8);
      FAIL("the wrong reference won");
    } catch (const AutotuneError& e) {
      CHECK(e.kind() == ErrorKind::wrong_output);
      CHECK(e.tunable() == "wrong");
      CHECK_THAT(std::string(e.what()), Catch::Contains("suspect") && Catch::Contains("right a") &&
                                            Catch::Contains("right b") &&
                                            Catch::Contains("tuned again by its first call after"));
    }
  }
  CHECK_FALSE(tuner.tuner(client.id()).report(test::SizeKey{8}));
}

TEST_CASE("a host reference catches a wrong first candidate", "[tuner][pick][validation]") {
  LocalTuner<test::SizeKey> tuner("host reference", test::test_settings());
  VirtualClient client;
  const auto& set = tuner.init([] {
    return TunableSet{size_key, size_inputs}
        .with(Tunable{"wrong", adds<VirtualClient>(1, 1e-4)})
        .with(Tunable{"right a", adds<VirtualClient>(0, 2e-3)})
        .with(Tunable{"right b", adds<VirtualClient>(0, 3e-3)})
        .validate_with(HostReference{[](int n) { return n; }, std::equal_to<>{}});
  });
  CHECK(tuner.execute(client.id(), client, set, 8) == 8);
  const auto report = tuner.tuner(client.id()).report(test::SizeKey{8});
  REQUIRE(report);
  INFO(format_report(*report));
  REQUIRE(report->winner());
  CHECK(report->winner()->name == "right a");
  const AutotuneOutcome* wrong = report->outcome("wrong");
  REQUIRE(wrong);
  REQUIRE(wrong->error);
  CHECK(wrong->error->kind() == ErrorKind::wrong_output);
  CHECK_THAT(wrong->error->message(), Catch::Contains("host reference"));
}

TEST_CASE("a host reference may compute a sample of the output: its check compares that",
          "[tuner][pick][validation]") {
  // Each candidate returns 100 values; the reference computes only 3 of them (as matmul's
  // samples its product), and its check reads those 3.
  struct Sample {
    std::vector<std::size_t> at;
    std::vector<int> values;
  };
  const auto output = [](int n, int wrong_at) {
    return [n, wrong_at](VirtualClient& client, int&) {
      client.spend(1e-3 + (wrong_at >= 0 ? 0 : 1e-3));
      std::vector<int> v(100);
      for (int i = 0; i < 100; ++i) v[static_cast<std::size_t>(i)] = n * i + (i == wrong_at);
      return v;
    };
  };
  LocalTuner<test::SizeKey> tuner("sampled reference", test::test_settings());
  VirtualClient client;
  const auto& set = tuner.init([&] {
    return TunableSet{size_key, size_inputs}
        .with(Tunable{"wrong at 99", output(8, 99)})  // the fastest, wrong at a sampled element
        .with(Tunable{"right", output(8, -1)})
        .validate_with(HostReference{[](int n) {
                                       Sample s{{0, 50, 99}, {}};
                                       for (std::size_t i : s.at)
                                         s.values.push_back(n * static_cast<int>(i));
                                       return s;
                                     },
                                     [](const Sample& expected, const std::vector<int>& got) {
                                       for (std::size_t k = 0; k < expected.at.size(); ++k) {
                                         if (got[expected.at[k]] != expected.values[k])
                                           return false;
                                       }
                                       return true;
                                     }});
  });
  CHECK(tuner.execute(client.id(), client, set, 8)[99] == 8 * 99);
  const auto report = tuner.tuner(client.id()).report(test::SizeKey{8});
  REQUIRE(report);
  REQUIRE(report->winner());
  CHECK(report->winner()->name == "right");
}

namespace {
// A space of `size` configurations of which only X = `works` runs.
auto one_working(std::int64_t size, std::int64_t works) {
  std::vector<std::int64_t> values;
  for (std::int64_t x = 0; x < size; ++x) values.push_back(x);
  return TunableSet{size_key, size_inputs}.with(Space(space("only one").parameter("X", values)),
                                                [works](const Config& c) {
                                                  const std::int64_t x = c["X"];
                                                  return [x, works](VirtualClient& client, int&) {
                                                    if (x != works)
                                                      throw std::runtime_error("unsupported");
                                                    client.spend(1e-3);
                                                  };
                                                });
}
}  // namespace

TEST_CASE("a search out of budget with nothing working goes on until a configuration works",
          "[tuner][pick][search]") {
  Settings settings = test::test_settings();
  settings.search = SearchSettings::for_level(Level::balanced);  // 60 of 400
  LocalTuner<test::SizeKey> tuner("out of budget", settings);
  VirtualClient client;
  const auto& set = tuner.init([] { return one_working(400, 377); });
  tuner.execute(client.id(), client, set, 8);
  const auto report = tuner.tuner(client.id()).report(test::SizeKey{8});
  REQUIRE(report);
  REQUIRE(report->winner());
  CHECK(report->winner()->name == "only one[X=377]");
}

TEST_CASE("a search that reaches its cap with nothing working is undecided, not failed",
          "[tuner][pick][search]") {
  Settings settings = test::test_settings();
  settings.search = SearchSettings::for_level(Level::minimal);  // 5% of 1200, then 500 more
  LocalTuner<test::SizeKey> tuner("undecided", settings);
  VirtualClient client;
  const auto& set = tuner.init([] { return one_working(1200, 1199); });
  try {
    tuner.execute(client.id(), client, set, 8);
    FAIL("decided");
  } catch (const AutotuneError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("undecided") &&
                                          Catch::Contains("never run") &&
                                          !Catch::Contains("every candidate failed"));
  }
  CHECK_FALSE(tuner.tuner(client.id()).report(test::SizeKey{8}));  // nothing remembered
}

namespace {
struct OrderEvaluator final : SearchEvaluator {
  std::vector<std::size_t> order;
  std::optional<double> evaluate(std::size_t config) override {
    order.push_back(config);
    return 1e-3;  // all alike: no gain after the first
  }
  double spent_seconds() const override { return 0; }
};
}  // namespace

TEST_CASE("start points can be switched off, and the patience waits for the exploration floor",
          "[search][pick]") {
  std::vector<std::int64_t> values;
  for (std::int64_t x = 0; x < 50; ++x) values.push_back(x);
  const auto expanded = space("s").parameter("X", values).start_at("X=42").expand();
  SearchBudget budget{50};
  budget.patience = 2;
  SECTION("start points on: measured first") {
    OrderEvaluator evaluator;
    search(SearchStrategy::exhaustive, expanded, evaluator, budget, 1);
    REQUIRE_FALSE(evaluator.order.empty());
    CHECK(evaluator.order.front() == 42);
    CHECK(evaluator.order.size() == 1 + 2);  // the start, then patience ran out
  }
  SECTION("start points off") {
    OrderEvaluator evaluator;
    search(SearchStrategy::exhaustive, expanded, evaluator, budget, 1, {}, false);
    REQUIRE_FALSE(evaluator.order.empty());
    CHECK(evaluator.order.front() == 0);
  }
  SECTION("the exploration floor") {
    budget.explore = 20;
    OrderEvaluator evaluator;
    search(SearchStrategy::exhaustive, expanded, evaluator, budget, 1);
    CHECK(evaluator.order.size() == 20);
  }
  SECTION("the switch's environment variable and the levels") {
    CHECK_FALSE(parse_start_points("off"));
    CHECK(parse_start_points("on"));
    CHECK_THROWS_AS(parse_start_points("sometimes"), AutotuneError);
    CHECK(SearchSettings::for_level(Level::balanced).start_points);
    CHECK(SearchSettings::for_level(Level::balanced).budget_for(1000).explore > 0);
  }
}

TEST_CASE("failures before anything works do not spend a search's patience", "[search][pick]") {
  // The first five configurations fail (over a limit, say); patience 2 counts from the first that
  // works, so the search reaches configuration 5 and then spends its patience on 6 and 7.
  struct FailingFirst final : SearchEvaluator {
    std::vector<std::size_t> order;
    std::optional<double> evaluate(std::size_t config) override {
      order.push_back(config);
      if (config < 5) return std::nullopt;
      return 1e-3;  // all alike: no gain after the first that works
    }
    double spent_seconds() const override { return 0; }
  };
  std::vector<std::int64_t> values;
  for (std::int64_t x = 0; x < 50; ++x) values.push_back(x);
  const auto expanded = space("s").parameter("X", values).expand();
  SearchBudget budget{50};
  budget.patience = 2;
  FailingFirst evaluator;
  const auto result = search(SearchStrategy::exhaustive, expanded, evaluator, budget, 1);
  CHECK(evaluator.order == std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6, 7});
  REQUIRE(result.best);
  CHECK(*result.best == 5);
}

TEST_CASE("with start points off, a tuning does not start from the winners of other keys",
          "[tuner][pick]") {
  Settings settings = test::test_settings();
  auto search_settings = SearchSettings::for_level(Level::balanced);
  search_settings.start_points = false;
  settings.search = search_settings;
  LocalTuner<test::SizeKey> tuner("no hints", settings);
  VirtualClient client;
  const auto& set = tuner.init([] {
    return TunableSet{size_key, size_inputs}
        .with(Tunable{"a", costs<VirtualClient>(1e-3)})
        .with(Tunable{"b", costs<VirtualClient>(2e-3)});
  });
  tuner.execute(client.id(), client, set, 8);
  tuner.execute(client.id(), client, set, 64);
  const auto report = tuner.tuner(client.id()).report(test::SizeKey{64});
  REQUIRE(report);
  CHECK(report->neighbour_starts.empty());
}

TEST_CASE("a resumed tuning compares recorded times only on this tuning's problem",
          "[tuner][pick][resume]") {
  // The record comes from a larger problem of the same key: every time in it is 2.4x longer.
  Settings settings = unconfirmed();
  VirtualClient client;
  auto set = TunableSet{size_key, size_inputs}
                 .with(Tunable{"fast", costs<VirtualClient>(1.0e-3)})
                 .with(Tunable{"slow", costs<VirtualClient>(1.5e-3)});
  const test::SizeKey key{520};
  int n = 520;
  const std::string op = "resumed", device = "virtual";  // a run holds references to them
  TuningRun<test::SizeKey, VirtualClient, decltype(set), int> run(op, device, settings, client, set,
                                                                  key, {}, 1, n);
  AutotuneOutcome recorded;
  recorded.name = "fast";
  recorded.index = 0;
  recorded.status = OutcomeStatus::measured;
  recorded.median = recorded.low = recorded.high = recorded.min = recorded.max = 2.4e-3;
  recorded.samples = 5;
  run.resume({recorded});
  const TuningReport report = run.run();
  INFO(format_report(report));
  REQUIRE(report.winner());
  CHECK(report.winner()->name == "fast");
  CHECK(report.winner()->median == Approx(1.0e-3));
}

namespace {

// A tunable set of one space, X = 0 to 9, starting at `starts`, each call of X costing
// `time_of(x)` (a function that may count calls, to be slower at first).
auto climb_set(std::vector<std::string> starts, std::function<double(std::int64_t)> time_of) {
  auto s = space("s").parameter("X", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  for (const auto& start : starts) s.start_at(start);
  return TunableSet{size_key, size_inputs}.with(Space(std::move(s)), [time_of](const Config& c) {
    const std::int64_t x = c["X"];
    return [x, time_of](VirtualClient& client, int&) { client.spend(time_of(x)); };
  });
}

// Search settings that measure the start points, then refine from the best with `refine`
// evaluations, within `evaluations` in all.
Settings climbing(std::size_t evaluations, std::size_t refine, double seconds = 1e9) {
  Settings settings = test::test_settings();
  SearchSettings search{SearchStrategy::exhaustive, 0.0, evaluations, seconds};
  search.patience = 0;  // the strategy ends after the start points
  search.refine = refine;
  settings.search = search;
  return settings;
}

// Tunes key 8 of the set that `make_set` makes, with `settings`: its report.
template <typename MakeSet>
TuningReport tuned(const std::string& op, const Settings& settings, MakeSet make_set) {
  LocalTuner<test::SizeKey> tuner(op, settings);
  VirtualClient client;
  const auto& set = tuner.init(make_set);
  tuner.execute(client.id(), client, set, 8);
  auto report = tuner.tuner(client.id()).report(test::SizeKey{8});
  REQUIRE(report);
  return *report;
}

// A configuration whose first 6 calls (the search's) take 1.02 ms and the later ones (the
// race's) 0.98 ms, as a driver's first launches can be slower; `calls` counts them.
double slow_at_first(std::size_t& calls) { return ++calls <= 6 ? 1.02e-3 : 0.98e-3; }

std::size_t measured_count(const TuningReport& report) {
  std::size_t measured = 0;
  for (const auto& outcome : report.outcomes) measured += outcome.ok() ? 1 : 0;
  return measured;
}

}  // namespace

TEST_CASE("a race that crowns another configuration climbs from it", "[tuner][pick][search]") {
  // X=2 and X=5 start the search, and X=5 measures 2% slower in it (its first calls are slow, as
  // a driver's first launches can be) but 2% faster in the race. The refinement (2 evaluations)
  // climbs from X=2, whose steps X=1 and X=3 are slower; X=6, a step from X=5, is 8% faster than
  // it: only a climb from the race's winner finds it, and a second race confirms it.
  auto calls_of_five = std::make_shared<std::size_t>(0);
  const TuningReport report = tuned("climb from the race", climbing(6, 2), [calls_of_five] {
    return climb_set({"X=2", "X=5"}, [calls_of_five](std::int64_t x) {
      if (x == 2) return 1.00e-3;
      if (x == 5) return slow_at_first(*calls_of_five);
      if (x == 6) return 0.9e-3;
      return 2e-3;
    });
  });
  INFO(format_report(report));
  REQUIRE(report.winner());
  CHECK(report.winner()->name == "s[X=6]");
  CHECK(report.winner()->median == Approx(0.9e-3).epsilon(0.01));
  CHECK_FALSE(report.winner()->paired);  // its time is the second race's
  CHECK(report.confirmed >= 2);          // raced again: X=6 against the first race's winner
  CHECK(measured_count(report) == 6);    // 2, 5, then 1 and 3, then 4 and 6: the budget of 6
}

TEST_CASE("a climb's step far ahead of the race's winner wins without the race's marks",
          "[tuner][pick][search]") {
  // X=5 and X=7 tie in the race (the same times); the climb from the race's winner finds X=6,
  // twice as fast as either: no race is needed to crown it, and neither the tie nor the race's
  // figures are said of it.
  auto calls_of_five = std::make_shared<std::size_t>(0);
  auto calls_of_seven = std::make_shared<std::size_t>(0);
  const TuningReport report = tuned("climb far ahead", climbing(7, 2), [=] {
    return climb_set({"X=2", "X=5", "X=7"}, [=](std::int64_t x) {
      if (x == 2) return 1.00e-3;
      if (x == 5) return slow_at_first(*calls_of_five);
      if (x == 7) return slow_at_first(*calls_of_seven);
      if (x == 6) return 0.5e-3;
      return 2e-3;
    });
  });
  INFO(format_report(report));
  REQUIRE(report.winner());
  CHECK(report.winner()->name == "s[X=6]");
  CHECK(report.winner()->median == Approx(0.5e-3).epsilon(0.01));
  for (const auto& outcome : report.outcomes) CHECK_FALSE(outcome.tied);
  CHECK(report.confirmed == 0);  // no race decided it
  CHECK(report.confirm_rounds == 0);
}

namespace {

// X = 0 to 2 by Y = 0 to 3, searched in that order (Y fastest), with the patience of 2 and the
// refinement's allowance `refine`: X=0,Y=2 (1 ms) is best of what the search reaches, and X=1,Y=1
// (0.5 ms), its one trade (X a step up, Y a step down), is the best of all.
TuningReport tuned_beside_a_trade(const std::string& op, std::size_t refine,
                                  std::vector<std::string> starts) {
  Settings settings = test::test_settings();
  SearchSettings search{SearchStrategy::exhaustive, 0.0, 12, 1e9};
  search.patience = 2;
  search.refine = refine;
  search.start_points = !starts.empty();
  settings.search = search;
  return tuned(op, settings, [starts] {
    auto s = space("s").parameter("X", {0, 1, 2}).parameter("Y", {0, 1, 2, 3});
    for (const auto& start : starts) s.start_at(start);
    return TunableSet{size_key, size_inputs}.with(Space(std::move(s)), [](const Config& c) {
      const std::int64_t x = c["X"], y = c["Y"];
      return [x, y](VirtualClient& client, int&) {
        double t = 1.8e-3;
        if (x == 0 && y == 0) t = 2.0e-3;
        if (x == 0 && y == 1) t = 1.6e-3;
        if (x == 0 && y == 2) t = 1.0e-3;
        if (x == 1 && y == 1) t = 0.5e-3;
        client.spend(t);
      };
    });
  });
}

}  // namespace

TEST_CASE("the climb from the race's winner tries its trades where the search found it alone",
          "[tuner][pick][search]") {
  // No start points: the search ends at X=0,Y=2 with its refinement's one evaluation spent on a
  // step, before its trades; the climb's own allowance reaches the trade.
  const TuningReport report = tuned_beside_a_trade("climb to a trade", 1, {});
  INFO(format_report(report));
  REQUIRE(report.winner());
  CHECK(report.winner()->name == "s[X=1,Y=1]");
}

TEST_CASE("the climb from the race's winner tries no trades where the search trusted its start",
          "[tuner][pick][search]") {
  // X=0,Y=2 is a start point that nothing beat: as the refinement, the climb trusts it (the
  // warm patience's reasoning) and measures no trade, though its allowance is unspent.
  const TuningReport report = tuned_beside_a_trade("climb trusting its start", 2, {"X=0,Y=2"});
  INFO(format_report(report));
  REQUIRE(report.winner());
  CHECK(report.winner()->name == "s[X=0,Y=2]");
  CHECK(report.outcome("s[X=1,Y=1]")->status == OutcomeStatus::skipped);
}

TEST_CASE("the climb from the race's winner keeps to the space's time limit",
          "[tuner][pick][search]") {
  // A limit of a nanosecond: the search ends after its start point, and no climb follows, though
  // its step X=3 is twice as fast and the refinement's allowance is unspent.
  const TuningReport report = tuned("climb out of time", climbing(10, 2, 1e-9), [] {
    return climb_set({"X=2"}, [](std::int64_t x) { return x == 3 ? 0.5e-3 : 1e-3; });
  });
  INFO(format_report(report));
  REQUIRE(report.winner());
  CHECK(report.winner()->name == "s[X=2]");
  CHECK(measured_count(report) == 1);
}

TEST_CASE("an input generator that fails during the climb leaves the race's winner",
          "[tuner][pick][search]") {
  // The inputs can be made until the race runs (X=5's seventh call), then not: the climb that
  // would measure X=5's steps stops, and the race's pick is the tuning's, not an error.
  auto calls_of_five = std::make_shared<std::size_t>(0);
  auto inputs_gone = std::make_shared<bool>(false);
  const auto make_set = [=] {
    auto inputs = [inputs_gone](const test::SizeKey& key, const int& n) {
      if (*inputs_gone) throw std::runtime_error("the inputs are gone");
      return size_inputs(key, n);
    };
    return TunableSet{size_key, inputs}.with(
        Space(space("s")
                  .parameter("X", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
                  .start_at("X=2")
                  .start_at("X=5")),
        [=](const Config& c) {
          const std::int64_t x = c["X"];
          return [=](VirtualClient& client, int&) {
            double t = x == 2 ? 1.00e-3 : 2e-3;
            if (x == 5) {
              t = slow_at_first(*calls_of_five);
              if (*calls_of_five == 7) *inputs_gone = true;  // the race has begun
            }
            if (x == 6) t = 0.5e-3;
            client.spend(t);
          };
        });
  };
  std::optional<TuningReport> tuning;
  REQUIRE_NOTHROW(tuning = tuned("climb without inputs", climbing(6, 2), make_set));
  const TuningReport& report = *tuning;
  INFO(format_report(report));
  REQUIRE(report.winner());
  CHECK(report.winner()->name == "s[X=5]");
  CHECK(report.outcome("s[X=6]")->status == OutcomeStatus::skipped);
}
