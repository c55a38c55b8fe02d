// Parameter spaces: their configurations, rules, names and limits, and spaces inside a tunable
// set (space.hpp).
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <tunekit/tunekit.hpp>

#include "../support.hpp"
#include "space_cases.hpp"

using namespace tunekit;
using namespace tunekit::test::space_cases;

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
    // Never reached, the space whose search left it, and what ended that search (here its
    // budget or its patience).
    if (o.error &&
        o.error->message().rfind("not reached by the search of gemm (the search's ", 0) == 0) {
      ++not_reached;
    }
  }
  CHECK(searched < set.size() / 2);
  CHECK(not_reached > 0);
  CHECK(over_limit > 0);  // WG=256 exceeds the client's 128
  const std::string table = format_report(report);
  INFO(table);
  CHECK_THAT(table,
             !Catch::Contains("out of resources") && Catch::Contains("not measured: work-group"));
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
