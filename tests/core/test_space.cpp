// Parameter spaces, search strategies, replay, and spaces inside a tunable set.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <tunekit/tunekit.hpp>

#include "../support.hpp"

using namespace tunekit;

namespace {

Space gemm_like_space() {
  return space("gemm")
      .parameter("TM", {1, 2, 4, 8, 16})
      .parameter("TN", {1, 2, 4, 8, 16})
      .parameter("WG", {8, 16, 32, 64, 128, 256})
      .parameter("VW", {1, 2, 4, 8})
      .parameter("KW", {1, 2, 4, 8, 16})
      .product_at_most({"TM", "TN"}, 64)
      .multiple_of("TN", "VW");
}

// A rugged GEMM-like landscape: a smooth optimum near TM=TN=8, WG=64, VW=4, KW=4 with
// interactions, plus a deterministic +-10% perturbation per configuration, and failures.
std::optional<double> synthetic_time(const Config& c) {
  const auto l = [](double x, double best) { return std::pow(std::log2(x) - std::log2(best), 2); };
  if (c["WG"] * c["TM"] * c["TN"] > 8192) return std::nullopt;  // "too many registers"
  double t = 1 + 0.08 * l(c["TM"], 8) + 0.08 * l(c["TN"], 8) + 0.05 * l(c["WG"], 64) +
             0.04 * l(c["VW"], 4) + 0.03 * l(c["KW"], 4) +
             0.02 * std::abs(std::log2(c["TM"]) - std::log2(c["TN"])) * l(c["KW"], 4);
  const auto h = stable_hash(c.to_string());
  return t * (0.9 + 0.2 * static_cast<double>(h % 1000) / 1000.0) * 1e-3;
}

ReplayTable synthetic_table(const ExpandedSpace& space) {
  ReplayTable table;
  for (const auto& c : space.configs()) {
    const auto t = synthetic_time(c);
    table[c.to_string()] = {t, 0.05 + (t ? 20 * *t : 0.0)};  // build cost + samples
  }
  return table;
}

double total_cost(const ReplayTable& table) {
  double total = 0;
  for (const auto& [config, e] : table) total += e.cost_seconds;
  return total;
}

}  // namespace

TEST_CASE("a space keeps exactly the configurations its constraints allow", "[space]") {
  const auto expanded = gemm_like_space().expand();
  std::size_t expected = 0;
  for (int tm : {1, 2, 4, 8, 16})
    for (int tn : {1, 2, 4, 8, 16})
      for (int wg = 0; wg < 6; ++wg)
        for (int vw : {1, 2, 4, 8})
          for (int kw = 0; kw < 5; ++kw) expected += (tm * tn <= 64 && tn % vw == 0);
  CHECK(expanded.size() == expected);
  CHECK(expanded.unconstrained_size() == 5 * 5 * 6 * 4 * 5);
  for (const auto& c : expanded.configs()) {
    CHECK(c["TM"] * c["TN"] <= 64);
    CHECK(c["TN"] % c["VW"] == 0);
  }
}

TEST_CASE("divides, where and declared parameter uses prune the space", "[space]") {
  int calls = 0;
  auto s =
      space("s")
          .parameter("A", {1, 2, 3, 4, 6})
          .parameter("B", {12, 18})
          .divides("A", "B")
          .parameter("C", {0, 1})
          .where("A + C is odd",
                 [&](const Config& c) { return ++calls, (c["A"] + c["C"]) % 2 == 1; }, {"A", "C"});
  const auto expanded = s.expand();
  // A divides B: (1,12),(2,12),(3,12),(4,12),(6,12),(1,18),(2,18),(3,18),(6,18); then parity.
  CHECK(expanded.size() == 9);
  CHECK(calls == 18);  // only reached for pairs that passed "divides"
}

TEST_CASE("a configuration prints as text and as build options", "[space]") {
  const auto expanded = space("p").parameter("TM", {8}).parameter("VW", {4}).expand();
  REQUIRE(expanded.size() == 1);
  CHECK(expanded[0].to_string() == "TM=8,VW=4");
  CHECK(expanded[0].build_options() == "-DTM=8 -DVW=4");
  CHECK(expanded[0]["VW"] == 4);
  CHECK_THROWS_WITH(expanded[0]["XX"], Catch::Contains("no parameter 'XX'"));
}

TEST_CASE("a space rejects empty parameters, duplicates and unknown names", "[space]") {
  CHECK_THROWS_WITH(space("s").parameter("A", {}),
                    Catch::Contains("'A'") && Catch::Contains("no values"));
  CHECK_THROWS_WITH(space("s").parameter("A", {1}).parameter("A", {2}), Catch::Contains("already"));
  CHECK_THROWS_WITH(space("s").parameter("A", {1}).divides("A", "B"),
                    Catch::Contains("no parameter 'B'"));
}

TEST_CASE("neighbours differ in exactly one parameter", "[space]") {
  const auto expanded = gemm_like_space().expand();
  for (std::size_t i = 0; i < expanded.size(); i += 37) {
    const auto neighbours = expanded.neighbours(i);
    CHECK_FALSE(neighbours.empty());
    for (std::size_t n : neighbours) {
      int differing = 0;
      for (std::size_t p = 0; p < expanded[i].size(); ++p)
        differing += expanded[i].value(p) != expanded[n].value(p);
      CHECK(differing == 1);
    }
  }
}

TEST_CASE("device limits reject configurations before anything runs", "[space]") {
  auto s = space("tiles")
               .parameter("WG", {64, 256, 1024})
               .parameter("TILE", {16, 64})
               .work_group_size([](const Config& c) { return static_cast<std::size_t>(c["WG"]); })
               .local_memory([](const Config& c) {
                 return static_cast<std::size_t>(c["TILE"] * c["TILE"] * 4);
               });
  const auto expanded = s.expand();
  const DeviceLimits limits{256, 8192};
  CHECK_FALSE(s.exceeds(expanded[0], limits));  // 64, 16
  CHECK_THAT(*s.exceeds(expanded[1], limits),
             Catch::Contains("16384 bytes local memory, device has 8192"));
  CHECK_THAT(*s.exceeds(expanded[4], limits),
             Catch::Contains("1024 work-items exceeds the device's 256"));
  CHECK_FALSE(s.exceeds(expanded[5], DeviceLimits{}));  // unknown limits: not checked
}

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

TEST_CASE("start points are measured first by every strategy; annealing walks on from the best",
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

TEST_CASE("a start point that is not a valid configuration is named with what is wrong",
          "[space]") {
  const auto bad = [](std::string start) {
    return gemm_like_space().start_at(std::move(start)).expand();
  };
  CHECK_THROWS_WITH(bad("TM=8,TN=8,WG=64,VW=4"), Catch::Contains("'TM=8,TN=8,WG=64,VW=4'") &&
                                                     Catch::Contains("'gemm'") &&
                                                     Catch::Contains("leaves parameter 'KW' out"));
  CHECK_THROWS_WITH(bad("TM=8,TN=8,WG=64,VW=4,KW=4,XX=1"),
                    Catch::Contains("names no parameter 'XX'"));
  CHECK_THROWS_WITH(bad("TM=3,TN=8,WG=64,VW=4,KW=4"),
                    Catch::Contains("gives 'TM' a value it cannot take"));
  CHECK_THROWS_WITH(bad("TM=8,TN=8,WG=64,VW=4,KW=four"), Catch::Contains("not an integer"));
  CHECK_THROWS_WITH(bad("TM=16,TN=16,WG=64,VW=4,KW=4"),
                    Catch::Contains("breaks the constraint 'TM*TN <= 64'"));
  CHECK_THROWS_WITH(bad("TM=8 TN=8"), Catch::Contains("the value '8 TN=8', not an integer"));
  CHECK_THROWS_WITH(bad("TM8,TN=8,WG=64,VW=4,KW=4"), Catch::Contains("NAME=VALUE"));
  CHECK_THROWS_WITH(bad(""), Catch::Contains("NAME=VALUE"));
  CHECK_THROWS_WITH(bad("TM=8,TM=4,TN=8,WG=64,VW=4,KW=4"),
                    Catch::Contains("repeated parameter name 'TM'"));
}

TEST_CASE("a replay table survives a save and load; a bad line is named", "[search]") {
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
  std::filesystem::remove_all(dir);
}

namespace {
// A client with device limits, like an OpenCL device.
struct LimitedClient : test::VirtualClient {
  DeviceLimits limits() const { return {128, 16384}; }
};
}  // namespace

TEST_CASE("a space in a tunable set is searched and its best configuration wins",
          "[space][tuner]") {
  Settings settings = test::test_settings();
  settings.search = SearchSettings{SearchStrategy::annealing, 0.3, 10, 1e9};
  LocalTuner<test::SizeKey> tuner("space op", settings);
  LimitedClient client;
  std::size_t measured = 0;
  const auto& set = tuner.init([&] {
    auto key_of = [](const int& n) { return test::SizeKey{static_cast<std::uint64_t>(n)}; };
    return TunableSet{key_of, CloneInputs{}}
        .with(Tunable{"baseline", [](LimitedClient& c,
                                     int&) { return c.spend(5e-3), std::string("baseline"); }})
        .with(gemm_like_space().work_group_size(
                  [](const Config& c) { return static_cast<std::size_t>(c["WG"]); }),
              [&](const Config& config) {
                return [&measured, config](LimitedClient& c, int&) {
                  ++measured;
                  const auto t = synthetic_time(config);
                  if (!t) throw std::runtime_error("too many registers");
                  c.spend(*t);
                  return config.to_string();
                };
              });
  });
  CHECK(set.size() == 1 + gemm_like_space().expand().size());
  CHECK(set.name(1).rfind("gemm[TM=1,TN=1,WG=8,VW=1,KW=1]", 0) == 0);
  const std::string winner = tuner.execute(client.id(), client, set, 3);
  CHECK(winner != "baseline");
  const auto all = gemm_like_space().expand();
  const auto winning = std::find_if(all.configs().begin(), all.configs().end(),
                                    [&](const Config& c) { return c.to_string() == winner; });
  REQUIRE(winning != all.configs().end());
  CHECK(*synthetic_time(*winning) < 1.3e-3);
  const auto report = *tuner.tuner(client.id()).report(test::SizeKey{3});
  std::size_t searched = 0, over_limit = 0, not_reached = 0;
  for (const auto& o : report.outcomes) {
    searched += o.ok();
    if (o.error && o.error->kind() == ErrorKind::out_of_resources) {
      ++over_limit;
      CHECK(o.status == OutcomeStatus::skipped);  // over the declared limit: skipped, as documented
    }
    if (o.error && o.error->message() == "not reached by the search") ++not_reached;
  }
  CHECK(searched < set.size() / 2);
  CHECK(not_reached > 0);
  CHECK(over_limit > 0);  // WG=256 exceeds the client's 128
  const std::string table = format_report(report);
  INFO(table);
  CHECK_THAT(table,
             !Catch::Contains("out of resources") && Catch::Contains("not measured: work-group"));
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

TEST_CASE("a space candidate's name is written and read by one pair of functions", "[space]") {
  CHECK(candidate_name("gemm", "TM=8,TN=4") == "gemm[TM=8,TN=4]");
  const auto parts = split_candidate_name("gemm[TM=8,TN=4]");
  REQUIRE(parts);
  CHECK(parts->space == "gemm");
  CHECK(parts->config == "TM=8,TN=4");
  const std::string flat = candidate_name("flat", "");  // a space without parameters
  const auto empty = split_candidate_name(flat);
  REQUIRE(empty);
  CHECK(empty->space == "flat");
  CHECK(empty->config.empty());
  for (const char* plain : {"naive", "[A=1]", "x[A=1", "x]", ""}) {
    INFO(plain);
    CHECK_FALSE(split_candidate_name(plain));
  }
  // The set names its space candidates through it, and a replay table reads them back through it.
  const auto set = TunableSet{
      [](int n) { return test::SizeKey{static_cast<std::uint64_t>(n)}; },
      CloneInputs{}}.with(space("tiles").parameter("A", {1, 2}), [](const Config& c) {
    return [a = c["A"]](int) { return a; };
  });
  CHECK(set.name(1) == candidate_name("tiles", "A=2"));
  TuningReport report{"op", "n=1", "device", 0, {}};
  for (const std::string& name : {set.name(1), std::string("tiles2[A=1]")}) {
    AutotuneOutcome outcome;
    outcome.name = name;
    outcome.status = OutcomeStatus::measured;
    outcome.median = 1e-3;
    report.outcomes.push_back(outcome);
  }
  const auto table = replay_table_from(report, "tiles");
  REQUIRE(table.size() == 1);
  CHECK(table.count("A=2") == 1);
}

namespace {
// Times chosen by the order of evaluation: `gain_at` (1-based) is 5% faster than all before;
// `leader` is what the tuning found elsewhere.
struct ScriptedEvaluator final : SearchEvaluator {
  std::size_t calls = 0, gain_at = 0, failing = 0;  // the first `failing` evaluations fail
  double leader = std::numeric_limits<double>::infinity();
  std::optional<double> evaluate(std::size_t) override {
    ++calls;
    if (calls <= failing) return std::nullopt;
    return calls >= gain_at && gain_at > 0 ? 0.95e-3 : 1e-3;
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
  // The seeded patience never exceeds the patience.
  budget.seeded_patience = 50;
  ScriptedEvaluator longer;
  CHECK(search(SearchStrategy::random, started, longer, budget, 3).evaluated.size() == 2 + 10);
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

TEST_CASE("a new key's tuning starts from the winners of keys tuned before, in memory and on disk",
          "[space][tuner][warm-start]") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("tunekit-warm-start-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  Settings settings = test::test_settings();
  settings.persistent_cache = true;
  settings.cache_dir = dir;
  // A budget too small to find the optimum from scratch, so where a search starts shows.
  settings.search = SearchSettings{SearchStrategy::random, 0.0, 6, 1e9};
  std::vector<std::string> order;  // configurations in the order they were measured
  auto make = [&] {
    auto key_of = [](const int& n) { return test::SizeKey{static_cast<std::uint64_t>(n)}; };
    return TunableSet{key_of, CloneInputs{}}.with(gemm_like_space(), [&](const Config& config) {
      return [&order, config](test::VirtualClient& c, int&) {
        const auto t = synthetic_time(config);
        if (!t) throw std::runtime_error("too many registers");
        order.push_back(config.to_string());
        c.spend(*t);
        return config.to_string();
      };
    });
  };
  test::VirtualClient client;
  std::string first_winner;
  {
    LocalTuner<test::SizeKey> tuner("warm start", settings);
    const auto& set = tuner.init(make);
    first_winner = tuner.execute(client.id(), client, set, 64);
    const auto first = *tuner.tuner(client.id()).report(test::SizeKey{64});
    CHECK(first.neighbour_starts.empty());
    // Another key in the same process: the winner of 64 is measured first.
    order.clear();
    (void)tuner.execute(client.id(), client, set, 1024);
    const auto second = *tuner.tuner(client.id()).report(test::SizeKey{1024});
    CHECK(second.neighbour_starts == std::vector<std::string>{"gemm[" + first_winner + "]"});
    REQUIRE_FALSE(order.empty());
    CHECK(order.front() == first_winner);
    CHECK_THAT(format_report(second), Catch::Contains("started from the winners of other keys"));
  }
  {
    // A new process (a new tuner): the winners come from the persistent store.
    LocalTuner<test::SizeKey> tuner("warm start", settings);
    const auto& set = tuner.init(make);
    order.clear();
    (void)tuner.execute(client.id(), client, set, 8);
    const auto third = *tuner.tuner(client.id()).report(test::SizeKey{8});
    CHECK(std::find(third.neighbour_starts.begin(), third.neighbour_starts.end(),
                    "gemm[" + first_winner + "]") != third.neighbour_starts.end());
    REQUIRE_FALSE(order.empty());
    REQUIRE_FALSE(third.neighbour_starts.empty());
    CHECK("gemm[" + order.front() + "]" == third.neighbour_starts.front());
  }
  std::filesystem::remove_all(dir);
}
