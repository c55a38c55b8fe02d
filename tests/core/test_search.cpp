// The search strategies over a space: budgets, patience, start points, replay tables
// (search.hpp, src/search.cpp).
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <tunekit/tunekit.hpp>

#include "../support.hpp"
#include "space_cases.hpp"

using namespace tunekit;
using namespace tunekit::test::space_cases;

TEST_CASE("exhaustive search finds the optimum and random search respects its budget", "[search]") {
  const auto expanded = gemm_like_space().expand();
  const auto table = synthetic_table(expanded);
  ReplayEvaluator all(expanded, table);
  const auto exhaustive = search(SearchStrategy::exhaustive, expanded, all, {}, 1);
  CHECK(exhaustive.evaluated.size() == expanded.size());
  double optimum = 1e9;
  for (const auto& [c, e] : table)
    if (e.time) optimum = std::min(optimum, *e.time);
  CHECK(exhaustive.best_time == optimum);

  ReplayEvaluator some(expanded, table);
  const auto random = search(SearchStrategy::random, expanded, some, SearchBudget{50}, 7);
  CHECK(random.evaluated.size() == 50);
  CHECK(std::set<std::size_t>(random.evaluated.begin(), random.evaluated.end()).size() == 50);
}

TEST_CASE("a search stops at its time budget", "[search]") {
  const auto expanded = gemm_like_space().expand();
  const auto table = synthetic_table(expanded);
  ReplayEvaluator evaluator(expanded, table);
  const auto result =
      search(SearchStrategy::annealing, expanded, evaluator, SearchBudget{100000, 2.0}, 3);
  CHECK(evaluator.spent_seconds() >= 2.0);
  CHECK(evaluator.spent_seconds() < 2.0 + 0.05 + 20 * 1e-2);  // at most one evaluation over
  CHECK(result.evaluated.size() < expanded.size());
}

TEST_CASE("every strategy keeps to its budget when the start points spent it and none worked",
          "[search]") {
  const auto expanded =
      space("s").parameter("X", {0, 1, 2, 3, 4, 5, 6, 7}).start_at("X=1").start_at("X=2").expand();
  // The start points fail; each evaluation costs a second.
  struct FailingStarts final : SearchEvaluator {
    std::size_t calls = 0;
    std::optional<double> evaluate(std::size_t config) override {
      ++calls;
      if (config == 1 || config == 2) return std::nullopt;
      return 1e-3 * static_cast<double>(config + 1);
    }
    double spent_seconds() const override { return static_cast<double>(calls); }
  };
  for (auto strategy : {SearchStrategy::random, SearchStrategy::model, SearchStrategy::annealing}) {
    INFO(to_string(strategy));
    FailingStarts by_count;
    CHECK(search(strategy, expanded, by_count, SearchBudget{2}, 1).evaluated.size() == 2);
    CHECK(by_count.calls == 2);
    FailingStarts by_time;
    CHECK(search(strategy, expanded, by_time, SearchBudget{100, 2.0}, 1).evaluated.size() == 2);
    CHECK(by_time.calls == 2);
  }
}

TEST_CASE("annealing reaches within 3% of the optimum on 20% of the exhaustive time", "[search]") {
  const auto expanded = gemm_like_space().expand();
  const auto table = synthetic_table(expanded);
  double optimum = 1e9;
  for (const auto& [c, e] : table)
    if (e.time) optimum = std::min(optimum, *e.time);
  const SearchBudget budget{expanded.size(), 0.2 * total_cost(table)};
  std::vector<double> annealing_ratio, random_ratio;
  for (std::uint64_t seed = 1; seed <= 15; ++seed) {
    ReplayEvaluator a(expanded, table), r(expanded, table);
    annealing_ratio.push_back(
        search(SearchStrategy::annealing, expanded, a, budget, seed).best_time / optimum);
    random_ratio.push_back(search(SearchStrategy::random, expanded, r, budget, seed).best_time /
                           optimum);
    CHECK(a.spent_seconds() <= budget.max_seconds + 1);
  }
  std::sort(annealing_ratio.begin(), annealing_ratio.end());
  std::sort(random_ratio.begin(), random_ratio.end());
  const double annealing_median = annealing_ratio[annealing_ratio.size() / 2];
  INFO("annealing median " << annealing_median << ", random median "
                           << random_ratio[random_ratio.size() / 2]);
  CHECK(annealing_median <= 1.03);
  CHECK(annealing_median <= random_ratio[random_ratio.size() / 2]);
}

TEST_CASE("start points are measured first by every strategy, annealing walks on from the best",
          "[search]") {
  const auto expanded = gemm_like_space()
                            .start_at("TM=1,TN=16,WG=256,VW=1,KW=1")
                            .start_at("TM=8,TN=8,WG=64,VW=4,KW=4")
                            .start_at("TM=8,TN=8,WG=64,VW=4,KW=4")  // a repeat counts once
                            .expand();
  REQUIRE(expanded.starts().size() == 2);
  CHECK(expanded[expanded.starts()[0]].to_string() == "TM=1,TN=16,WG=256,VW=1,KW=1");
  CHECK(expanded[expanded.starts()[1]].to_string() == "TM=8,TN=8,WG=64,VW=4,KW=4");
  const auto table = synthetic_table(expanded);
  for (auto strategy :
       {SearchStrategy::exhaustive, SearchStrategy::random, SearchStrategy::annealing}) {
    if (strategy == SearchStrategy::exhaustive)
      continue;  // measures in order: starts change nothing
    ReplayEvaluator evaluator(expanded, table);
    const auto result = search(strategy, expanded, evaluator, SearchBudget{20}, 11);
    REQUIRE(result.evaluated.size() == 20);
    CHECK(result.evaluated[0] == expanded.starts()[0]);
    CHECK(result.evaluated[1] == expanded.starts()[1]);
    CHECK(result.best_time <= *synthetic_time(expanded[expanded.starts()[1]]));
  }
  // Annealing's first move is a neighbour of the better start point (the second).
  ReplayEvaluator evaluator(expanded, table);
  const auto walk = search(SearchStrategy::annealing, expanded, evaluator, SearchBudget{3}, 5);
  REQUIRE(walk.evaluated.size() == 3);
  const auto near = expanded.neighbours(expanded.starts()[1]);
  CHECK(std::find(near.begin(), near.end(), walk.evaluated[2]) != near.end());
  // A budget smaller than the start points measures only what it allows.
  ReplayEvaluator one(expanded, table);
  CHECK(search(SearchStrategy::annealing, expanded, one, SearchBudget{1}, 5).evaluated.size() == 1);
}

TEST_CASE("a replay table survives a save and load, a bad line is named", "[search]") {
  const auto dir = std::filesystem::temp_directory_path() / "tunekit-test-replay";
  std::filesystem::create_directories(dir);
  ReplayTable table{{"A=1,B=2", {1.5e-3, 0.2}}, {"A=2,B=2", {std::nullopt, 0.1}}};
  save_replay_table(dir / "t.tsv", table);
  const auto loaded = load_replay_table(dir / "t.tsv");
  REQUIRE(loaded.size() == 2);
  CHECK(*loaded.at("A=1,B=2").time == Approx(1.5e-3));
  CHECK_FALSE(loaded.at("A=2,B=2").time);
  std::ofstream(dir / "bad.tsv") << "A=1\t0.5\n";
  CHECK_THROWS_WITH(load_replay_table(dir / "bad.tsv"), Catch::Contains("bad.tsv:1"));
  // Times the search would rank as numbers must be finite seconds above 0 (a 0 would make the
  // model's fit of log times NaN); a line must not repeat. A cost may be 0.
  for (const std::string_view line :
       {"A=1\tnan\t0.1", "A=1\t-1e-3\t0.1", "A=1\t0\t0.1", "A=1\t0.0e0\t0.1", "A=1\t1.5xyz\t0.1",
        "A=1\tinf\t0.1", "A=1\t1e-3\t-2", "A=1\t1e-3\t0.1\nA=1\t2e-3\t0.1"}) {
    CAPTURE(line);
    CHECK_THROWS_WITH(parse_replay_table(line, "t.tsv"),
                      Catch::Contains("not a finite number") || Catch::Contains("listed twice"));
  }
  CHECK(parse_replay_table("A=1\t1e-3\t0.1\r\n", "t.tsv").at("A=1").time == Approx(1e-3));
  CHECK(parse_replay_table("A=1\t1e-3\t0", "t.tsv").at("A=1").cost_seconds == 0);
  CHECK_THROWS_WITH(load_replay_table(dir), Catch::Contains("is a directory"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("an exhaustive tuning records a replay table that rebuilds its space",
          "[search][replay]") {
  Settings settings = test::test_settings();
  settings.search = SearchSettings::for_level(Level::full);
  LocalTuner<test::SizeKey> tuner("recorded", settings);
  test::VirtualClient client;
  const auto small =
      space("tiles").parameter("A", {1, 2, 4}).parameter("B", {1, 2, 4}).divides("A", "B");
  const auto& set = tuner.init([&] {
    auto key_of = [](const int& n) { return test::SizeKey{static_cast<std::uint64_t>(n)}; };
    return TunableSet{key_of, CloneInputs{}}.with(Space(small), [](const Config& c) {
      return [c](test::VirtualClient& client, int&) {
        if (c["B"] == 4 && c["A"] == 1) throw std::runtime_error("unsupported");
        client.spend(1e-3 * static_cast<double>(c["A"] + c["B"]));
        return c["A"];
      };
    });
  });
  tuner.execute(client.id(), client, set, 1);
  const auto table = replay_table_from(*tuner.tuner(client.id()).report(test::SizeKey{1}), "tiles");
  REQUIRE(table.size() == 6);  // (1,1) (1,2) (1,4) (2,2) (2,4) (4,4)
  CHECK_FALSE(table.at("A=1,B=4").time);
  CHECK(*table.at("A=1,B=1").time == Approx(2e-3));
  CHECK(table.at("A=2,B=4").cost_seconds > 0);
  const auto rebuilt = space_from_table(table);
  CHECK(rebuilt.size() == 6);
  CHECK(rebuilt[0].to_string() == "A=1,B=1");
}

namespace {
// Times chosen by the order of evaluation: `gain_at` (1-based) is 5% faster than all before;
// `leader` is what the tuning found elsewhere.
struct ScriptedEvaluator final : SearchEvaluator {
  std::size_t calls = 0, gain_at = 0, failing = 0;  // the first `failing` evaluations fail
  bool gain_once = false;  // only the gain_at-th evaluation is faster, not those after it
  double leader = std::numeric_limits<double>::infinity();
  std::optional<double> evaluate(std::size_t) override {
    ++calls;
    if (calls <= failing) return std::nullopt;
    const bool faster = gain_once ? calls == gain_at : calls >= gain_at;
    return faster && gain_at > 0 ? 0.95e-3 : 1e-3;
  }
  double spent_seconds() const override { return 0; }
  double leader_time() const override { return leader; }
};
}  // namespace

TEST_CASE("a search stops when its patience runs out without a gain beyond the margin",
          "[search]") {
  const auto expanded = gemm_like_space().expand();
  SearchBudget budget{200};
  budget.patience = 10;
  for (auto strategy :
       {SearchStrategy::exhaustive, SearchStrategy::random, SearchStrategy::annealing}) {
    INFO(to_string(strategy));
    ScriptedEvaluator flat;  // nothing ever gains: the first, then 10 more
    CHECK(search(strategy, expanded, flat, budget, 3).evaluated.size() == 1 + 10);
    ScriptedEvaluator late;  // a 5% gain at the 7th evaluation restarts the count
    late.gain_at = 7;
    CHECK(search(strategy, expanded, late, budget, 3).evaluated.size() == 7 + 10);
  }
  // A gain within the margin does not count: 5% is not more than 6%.
  ScriptedEvaluator small;
  small.gain_at = 7;
  budget.margin = 0.06;
  CHECK(search(SearchStrategy::random, expanded, small, budget, 3).evaluated.size() == 1 + 10);
  // Start points never count towards the patience.
  const auto started = gemm_like_space()
                           .start_at("TM=1,TN=16,WG=256,VW=1,KW=1")
                           .start_at("TM=8,TN=8,WG=64,VW=4,KW=4")
                           .expand();
  ScriptedEvaluator from_starts;
  budget.margin = 0.02;
  CHECK(search(SearchStrategy::random, started, from_starts, budget, 3).evaluated.size() == 2 + 10);
  // Without patience the budget decides.
  ScriptedEvaluator patient;
  CHECK(search(SearchStrategy::random, expanded, patient, SearchBudget{200}, 3).evaluated.size() ==
        200);
}

TEST_CASE("a search says what ended it short of the whole space", "[search]") {
  const auto expanded = gemm_like_space().expand();
  SearchBudget budget{200};
  budget.patience = 10;
  ScriptedEvaluator flat;  // nothing gains: the patience ends it
  CHECK_THAT(search(SearchStrategy::random, expanded, flat, budget, 3).ended_by,
             Catch::Contains("patience ended it: 10 configurations in a row gained less than 2%"));
  ScriptedEvaluator patient;  // no patience: the budget
  CHECK(search(SearchStrategy::random, expanded, patient, SearchBudget{50}, 3).ended_by ==
        "the search's budget of 50 configurations was spent");
  ScriptedEvaluator behind;  // 2.5x behind the leader elsewhere: left
  behind.leader = 0.4e-3;
  SearchBudget abandoning{100};
  abandoning.abandon_after = 6;
  CHECK_THAT(search(SearchStrategy::annealing, expanded, behind, abandoning, 1).ended_by,
             Catch::StartsWith("the space was left"));
  ScriptedEvaluator whole;  // every configuration measured: nothing to say
  CHECK(search(SearchStrategy::exhaustive, expanded, whole, SearchBudget{}, 1).ended_by.empty());
}

TEST_CASE("a search that starts from a working start point stops after the seeded patience",
          "[search]") {
  const auto started = gemm_like_space()
                           .start_at("TM=1,TN=16,WG=256,VW=1,KW=1")
                           .start_at("TM=8,TN=8,WG=64,VW=4,KW=4")
                           .expand();
  SearchBudget budget{200};
  budget.patience = 10;
  budget.seeded_patience = 3;
  for (auto strategy :
       {SearchStrategy::exhaustive, SearchStrategy::random, SearchStrategy::annealing}) {
    INFO(to_string(strategy));
    ScriptedEvaluator seeded;  // the start points work: 2 of them, then 3 more
    CHECK(search(strategy, started, seeded, budget, 3).evaluated.size() == 2 + 3);
    ScriptedEvaluator failed_starts;  // they fail: they know nothing, the whole patience applies
    failed_starts.failing = 2;
    CHECK(search(strategy, started, failed_starts, budget, 3).evaluated.size() == 2 + 1 + 10);
  }
  // A space without start points gets the whole patience; so does a start point from outside
  // (a neighbouring key's winner) that works get the seeded one.
  const auto expanded = gemm_like_space().expand();
  ScriptedEvaluator unseeded;
  CHECK(search(SearchStrategy::random, expanded, unseeded, budget, 3).evaluated.size() == 1 + 10);
  ScriptedEvaluator neighbour;
  CHECK(search(SearchStrategy::random, expanded, neighbour, budget, 3, {5}).evaluated.size() ==
        1 + 3);
  // A search that beats every start point by more than the margin has shown they are not this
  // device's best (start points from another device): the whole patience applies from then on,
  // so that a poor start point cannot end the search early. Before: 4 + 3.
  for (auto strategy : {SearchStrategy::random, SearchStrategy::model}) {
    INFO(to_string(strategy));
    ScriptedEvaluator beaten;  // the 4th, 5% faster than the start points (margin 2%)
    beaten.gain_at = 4;
    CHECK(search(strategy, started, beaten, budget, 3).evaluated.size() == 4 + 10);
    ScriptedEvaluator within_margin;  // 5% is not past a margin of 6%: the start points stand
    within_margin.gain_at = 4;
    SearchBudget wide = budget;
    wide.margin = 0.06;
    CHECK(search(strategy, started, within_margin, wide, 3).evaluated.size() == 2 + 3);
    ScriptedEvaluator trusted;  // a budget that keeps the seeded patience (the minimal level's)
    trusted.gain_at = 4;
    SearchBudget trusting = budget;
    trusting.seeded_until_beaten = false;
    CHECK(search(strategy, started, trusted, trusting, 3).evaluated.size() == 4 + 3);
  }
  CHECK_FALSE(SearchSettings::for_level(Level::minimal).budget_for(100).seeded_until_beaten);
  CHECK(SearchSettings::for_level(Level::balanced).budget_for(100).seeded_until_beaten);
  // The seeded patience never exceeds the patience.
  budget.seeded_patience = 50;
  ScriptedEvaluator longer;
  CHECK(search(SearchStrategy::random, started, longer, budget, 3).evaluated.size() == 2 + 10);
}

TEST_CASE("a start point vouches only for the devices it was found on", "[search]") {
  const std::string found_at_1 = "TM=1,TN=16,WG=256,VW=1,KW=1",
                    found_at_2 = "TM=8,TN=8,WG=64,VW=4,KW=4";
  const auto started = gemm_like_space()
                           .start_at(found_at_1, {"Device A"})
                           .start_at(found_at_2, {"Device A", "Device C"})
                           .expand();
  const std::string device_a = "OpenCL | Vendor | OpenCL 3.0 | Device A 80GB | driver 1 | 4 CUs";
  const std::string device_b = "OpenCL | Vendor | OpenCL 3.0 | Device B | driver 1 | 4 CUs";
  const std::string device_c = "OpenCL | Vendor | OpenCL 3.0 | Device C | driver 1 | 4 CUs";
  REQUIRE(started.starts().size() == 2);
  const std::size_t first = started.starts()[0], second = started.starts()[1];
  CHECK(started.vouches(first, device_a));
  CHECK_FALSE(started.vouches(first, device_c));
  CHECK(started.vouches(second, device_c));
  CHECK(started.vouches(first, ""));  // an unknown device: every start point vouches
  CHECK_FALSE(started.vouches(first == 0 ? 1 : 0, device_a));  // not a start point
  SearchBudget budget{200};
  budget.patience = 10;
  budget.seeded_patience = 3;
  for (auto strategy : {SearchStrategy::random, SearchStrategy::annealing, SearchStrategy::model}) {
    INFO(to_string(strategy));
    // On the device they were found on: both, then the seeded patience.
    ScriptedEvaluator here;
    const auto at_home =
        search(strategy, started, here, budget, 3, search_starts(started, device_a));
    CHECK(at_home.evaluated.size() == 2 + 3);
    CHECK(at_home.trusts_start_points);
    // Elsewhere they are measured first all the same, but the whole patience applies.
    ScriptedEvaluator elsewhere;
    const auto away =
        search(strategy, started, elsewhere, budget, 3, search_starts(started, device_b));
    REQUIRE(away.evaluated.size() == 2 + 10);
    CHECK(away.evaluated[0] == first);
    CHECK(away.evaluated[1] == second);
    CHECK_FALSE(away.trusts_start_points);
    // One of them found here is enough; the one found elsewhere is measured after it.
    ScriptedEvaluator one;
    const auto mixed = search(strategy, started, one, budget, 3, search_starts(started, device_c));
    CHECK(mixed.evaluated.size() == 2 + 3);
    CHECK(mixed.evaluated[0] == second);
    // ...unless the one from elsewhere is clearly faster (5%, margin 2%): then what was found
    // here is not this device's best either.
    ScriptedEvaluator overtaken;
    overtaken.gain_at = 2;
    overtaken.gain_once = true;
    CHECK(search(strategy, started, overtaken, budget, 3, search_starts(started, device_c))
              .evaluated.size() == 2 + 10);
    // A space that trails the leader keeps the seeded patience whoever found its start points.
    ScriptedEvaluator trailing;
    SearchBudget side_bet = budget;
    side_bet.trails = true;
    CHECK(search(strategy, started, trailing, side_bet, 3, search_starts(started, device_b))
              .evaluated.size() == 2 + 3);
    // Scouts come after the start points, as the strategy's first draws: they count towards
    // its patience (here the seeded one, 3) and vouch for nothing.
    std::vector<std::size_t> scouts;
    for (std::size_t i = 5; scouts.size() < 2; ++i) {
      if (i != first && i != second) scouts.push_back(i);
    }
    SearchStarts with_scouts = search_starts(started, device_a);
    with_scouts.scouted = scouts;
    ScriptedEvaluator scouting;
    const auto scouted = search(strategy, started, scouting, budget, 3, with_scouts);
    REQUIRE(scouted.evaluated.size() == 2 + 3);
    CHECK(scouted.evaluated[2] == scouts[0]);
    CHECK(scouted.evaluated[3] == scouts[1]);
    CHECK(scouted.trusts_start_points);
    // Scouts alone, as a tuning gives a space without start points: the whole patience (the
    // first gains, then 10 more), nothing trusted; and far behind the leader, the space is left
    // after abandon_after configurations, scouts included.
    const SearchStarts only_scouts{{}, {}, scouts};
    ScriptedEvaluator alone;
    const auto unstarted = search(strategy, started, alone, budget, 3, only_scouts);
    REQUIRE(unstarted.evaluated.size() == 1 + 10);
    CHECK(unstarted.evaluated[0] == scouts[0]);
    CHECK_FALSE(unstarted.trusts_start_points);
    SearchBudget behind = budget;
    behind.abandon_after = 6;
    ScriptedEvaluator left;
    left.leader = 0.1e-3;  // 10x faster elsewhere
    CHECK(search(strategy, started, left, behind, 3, only_scouts).evaluated.size() == 6);
    // A neighbouring key's winner on this device vouches wherever the space's were found.
    ScriptedEvaluator neighbour;
    const std::size_t known = first == 5 || second == 5 ? 6 : 5;
    const auto from_known =
        search(strategy, started, neighbour, budget, 3, search_starts(started, device_b, {known}));
    CHECK(from_known.evaluated.size() == 3 + 3);
    CHECK(from_known.evaluated[0] == known);
  }
  // An index past the space is no start point nor scout: the search goes on as without any.
  ScriptedEvaluator outside;
  CHECK(search(SearchStrategy::random, started, outside, budget, 3,
               SearchStarts{{started.size() + 5}, {started.size()}, {started.size() + 1}})
            .evaluated.size() == 1 + 10);
  // Listed twice, a configuration is measured once and vouches if either list says so.
  const auto twice = search_starts(started, device_b, {first});
  CHECK(twice.vouched == std::vector<std::size_t>{first});
  CHECK(twice.unvouched == std::vector<std::size_t>{second});
  // A repeated start_at counts once, found on the devices of both.
  const auto repeated = gemm_like_space()
                            .start_at(found_at_1, {"Device A"})
                            .start_at(found_at_1, {"Device B"})
                            .start_at(found_at_2, {"Device A"})
                            .start_at(found_at_2)
                            .expand();
  CHECK(repeated.vouches(repeated.starts()[0], device_b));
  CHECK_FALSE(repeated.vouches(repeated.starts()[0], device_c));
  CHECK(repeated.vouches(repeated.starts()[1], device_c));  // once for any device
  // An empty name would name every device.
  CHECK_THROWS_WITH(gemm_like_space().start_at(found_at_1, {""}),
                    Catch::Contains(found_at_1) && Catch::Contains("empty device"));
}

namespace {
// Flat times; the configurations with KW = 1 are "built already" (cheap) when `marked`.
struct CheapEvaluator final : SearchEvaluator {
  const ExpandedSpace* space = nullptr;
  bool marked = true;
  std::optional<double> evaluate(std::size_t) override { return 1e-3; }
  double spent_seconds() const override { return 0; }
  bool cheap(std::size_t config) const override { return marked && (*space)[config]["KW"] == 1; }
};
}  // namespace

TEST_CASE("annealing moves to neighbours built already before ones to build", "[search]") {
  const auto started = gemm_like_space().start_at("TM=8,TN=8,WG=64,VW=4,KW=1").expand();
  SearchBudget budget{25};
  CheapEvaluator cheap;
  cheap.space = &started;
  const auto walk = search(SearchStrategy::annealing, started, cheap, budget, 9);
  REQUIRE(walk.evaluated.size() == 25);
  // From a start with KW = 1, every move has cheap neighbours left (the other values of TM, TN,
  // WG and VW with KW = 1): the walk never builds.
  std::size_t built = 0;
  for (std::size_t config : walk.evaluated) built += started[config]["KW"] != 1;
  CHECK(built == 0);
  // Nothing cheap: the walk of the default evaluator, move for move (no random draw changes).
  CheapEvaluator none;
  none.space = &started;
  none.marked = false;
  ScriptedEvaluator plain;  // same flat times, no cheap()
  const auto a = search(SearchStrategy::annealing, started, none, budget, 9);
  const auto b = search(SearchStrategy::annealing, started, plain, budget, 9);
  CHECK(a.evaluated == b.evaluated);
  std::size_t built_without = 0;
  for (std::size_t config : a.evaluated) built_without += started[config]["KW"] != 1;
  CHECK(built_without > 0);  // a plain walk leaves KW = 1
}

TEST_CASE("a space far behind the leader elsewhere is abandoned after a few configurations",
          "[search]") {
  const auto expanded = gemm_like_space().expand();
  SearchBudget budget{100};
  budget.abandon_after = 6;  // abandon_factor 2
  ScriptedEvaluator behind;
  behind.leader = 0.4e-3;  // this space's best, 1e-3, is 2.5x behind
  CHECK(search(SearchStrategy::annealing, expanded, behind, budget, 1).evaluated.size() == 6);
  ScriptedEvaluator close;
  close.leader = 0.6e-3;  // 1.7x: searched within its budget
  CHECK(search(SearchStrategy::annealing, expanded, close, budget, 1).evaluated.size() == 100);
  ScriptedEvaluator alone;  // no leader elsewhere
  CHECK(search(SearchStrategy::annealing, expanded, alone, budget, 1).evaluated.size() == 100);
  // A space with start points is judged by them: they are its best known configurations.
  const auto started = gemm_like_space()
                           .start_at("TM=1,TN=16,WG=256,VW=1,KW=1")
                           .start_at("TM=8,TN=8,WG=64,VW=4,KW=4")
                           .expand();
  ScriptedEvaluator judged;
  judged.leader = 0.4e-3;
  CHECK(search(SearchStrategy::annealing, started, judged, budget, 1).evaluated.size() == 2);
  // Start points that fail say nothing of the space: its first 6 configurations judge it.
  ScriptedEvaluator failed_starts;
  failed_starts.leader = 0.4e-3;
  failed_starts.failing = 2;
  CHECK(search(SearchStrategy::annealing, started, failed_starts, budget, 1).evaluated.size() == 6);
  // Without abandon_after (the full level, a budget of one's own) nothing is abandoned.
  ScriptedEvaluator full;
  full.leader = 0.4e-3;
  CHECK(search(SearchStrategy::annealing, started, full, SearchBudget{100}, 1).evaluated.size() ==
        100);
  const auto level_full = SearchSettings::for_level(Level::full).budget_for(started.size());
  ScriptedEvaluator exhaustive;
  exhaustive.leader = 0.4e-3;
  CHECK(search(SearchStrategy::exhaustive, started, exhaustive, level_full, 1).evaluated.size() ==
        started.size());
}

TEST_CASE("a search measures the caller's start points after the space's own", "[search]") {
  const auto expanded = gemm_like_space().start_at("TM=8,TN=8,WG=64,VW=4,KW=4").expand();
  const auto table = synthetic_table(expanded);
  for (auto strategy : {SearchStrategy::random, SearchStrategy::annealing}) {
    ReplayEvaluator evaluator(expanded, table);
    const auto result = search(strategy, expanded, evaluator, SearchBudget{10}, 4,
                               {17, expanded.size() + 5 /* not in the space: ignored */, 23});
    REQUIRE(result.evaluated.size() == 10);
    CHECK(result.evaluated[0] == expanded.starts()[0]);
    CHECK(result.evaluated[1] == 17);
    CHECK(result.evaluated[2] == 23);
  }
}
