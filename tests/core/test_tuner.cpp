// The tuning engine on a virtual clock: ranking, racing, dispatch of a tuned key, devices,
// generated inputs, prepared dispatch, a set of one (engine/tuner.hpp, engine/tuning_run.hpp).
#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <set>
#include <stdexcept>
#include <thread>
#include <tunekit/tunekit.hpp>

#include "../support.hpp"
#include "tuner_cases.hpp"

using namespace tunekit;
using namespace tunekit::test::tuner_cases;
using test::SizeKey;
using test::VirtualClient;

TEST_CASE("the tuner picks the candidate with the lowest device time", "[tuner]") {
  LocalTuner<SizeKey> tuner("pick", test::test_settings());
  VirtualClient client;
  const auto& set = tuner.init([] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"slow", costs(3e-3, 0)})
        .with(Tunable{"fast", costs(1e-3, 1)})
        .with(Tunable{"middle", costs(2e-3, 2)});
  });
  CHECK(run(tuner, client, set, 100) == 1);
  const auto report = tuner.tuner(client.id()).report(SizeKey{100});
  REQUIRE(report);
  REQUIRE(report->winner());
  CHECK(report->winner()->name == "fast");
  CHECK(report->winner()->median == Approx(1e-3));
  CHECK(report->outcomes.front().name == "fast");
}

TEST_CASE("the median-based statistic picks the fastest despite noise and outliers", "[tuner]") {
  for (unsigned seed = 1; seed <= 50; ++seed) {
    Settings settings = test::test_settings();
    settings.benchmark->min_samples = 5;
    LocalTuner<SizeKey> tuner("noisy", settings);
    VirtualClient client;
    client.set_noise(0.05, 0.1, seed);
    const auto& set = tuner.init([] {
      return TunableSet{key_of_size, bench_inputs}
          .with(Tunable{"a", costs(1.15e-3, 0)})
          .with(Tunable{"b", costs(1.0e-3, 1)})
          .with(Tunable{"c", costs(1.3e-3, 2)});
    });
    const int winner = run(tuner, client, set, 8);
    INFO("seed " << seed << "\n" << format_report(*tuner.tuner(client.id()).report(SizeKey{8})));
    CHECK(winner == 1);
  }
}

TEST_CASE("racing drops a clearly slower candidate after few samples", "[tuner]") {
  Settings settings = test::test_settings();
  settings.benchmark->max_samples = 50;
  settings.benchmark->target_spread = 0;  // would sample to the cap without racing
  LocalTuner<SizeKey> tuner("racing", settings);
  VirtualClient client;
  client.set_noise(0.01);
  const auto& set = tuner.init([] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"leader", costs(1e-3, 0)})
        .with(Tunable{"runner-up", costs(1.1e-3, 1)})  // racing's floor: two survivors
        .with(Tunable{"twice as slow", costs(2e-3, 2)});
  });
  CHECK(run(tuner, client, set, 1) == 0);
  const auto report = *tuner.tuner(client.id()).report(SizeKey{1});
  const auto& slow = report.outcomes.back();
  CHECK(slow.name == "twice as slow");
  CHECK(slow.status == OutcomeStatus::dropped);
  CHECK(slow.samples <= 3);
  CHECK(report.outcomes.front().samples >= 50);  // and the confirmation's rounds
}

TEST_CASE("a candidate 100x slower than the leader is stopped after its warm-up", "[tuner]") {
  LocalTuner<SizeKey> tuner("slowpoke", test::test_settings());
  VirtualClient client;
  const auto& set = tuner.init([] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"normal", costs(1e-3, 0)})
        .with(Tunable{"runner-up", costs(1.1e-3, 1)})  // racing's floor: two survivors
        .with(Tunable{"hundredfold", costs(1e-1, 2)});
  });
  CHECK(run(tuner, client, set, 1) == 0);
  const auto report = *tuner.tuner(client.id()).report(SizeKey{1});
  CHECK(report.outcomes.back().status == OutcomeStatus::dropped);
  CHECK(report.outcomes.back().samples == 1);
}

TEST_CASE("racing can be switched off", "[tuner]") {
  Settings settings = test::test_settings();
  settings.benchmark->racing_factor = std::numeric_limits<double>::infinity();
  LocalTuner<SizeKey> tuner("no racing", settings);
  VirtualClient client;
  const auto& set = tuner.init([] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"fast", costs(1e-3, 0)})
        .with(Tunable{"slow", costs(1e-1, 1)});
  });
  run(tuner, client, set, 1);
  const auto report = *tuner.tuner(client.id()).report(SizeKey{1});
  for (const auto& o : report.outcomes) {
    CHECK(o.status == OutcomeStatus::measured);
  }
}

TEST_CASE("a tuned key dispatches to its winner without measuring again", "[tuner]") {
  LocalTuner<SizeKey> tuner("cached", test::test_settings());
  VirtualClient client;
  const auto& set = tuner.init([] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"x", costs(2e-3, 0)})
        .with(Tunable{"y", costs(1e-3, 1)});
  });
  CHECK(run(tuner, client, set, 64) == 1);
  const auto measured = client.measurements();
  for (int i = 0; i < 100; ++i) CHECK(run(tuner, client, set, 64) == 1);
  CHECK(client.measurements() == measured);
}

TEST_CASE("sizes that anchor to the same key share one tuning", "[tuner]") {
  LocalTuner<SizeKey> tuner("anchored", test::test_settings());
  VirtualClient client;
  int tunings = 0;
  const auto& set = tuner.init([&] {
    return TunableSet{key_of_size,
                      [&](const SizeKey& key, const int& n) {
                        ++tunings;
                        return bench_inputs(key, n);
                      }}
        .with(Tunable{"only", costs(1e-3, 0)})
        .with(Tunable{"slower", costs(2e-3, 0)})  // one candidate alone is not tuned
        .share_inputs();
  });
  run(tuner, client, set, 1000);
  run(tuner, client, set, 1024);
  run(tuner, client, set, 513);
  CHECK(tunings == 1);
  run(tuner, client, set, 1025);
  CHECK(tunings == 2);
}

TEST_CASE("each device gets its own tuning", "[tuner]") {
  LocalTuner<SizeKey> tuner("devices", test::test_settings());
  VirtualClient gpu("gpu"), cpu("cpu");
  const auto& set = tuner.init([] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"gpu-friendly",
                      [](VirtualClient& c, int&) {
                        return c.spend(c.id().identity() == "gpu" ? 1e-3 : 3e-3), 0;
                      }})
        .with(Tunable{"cpu-friendly", [](VirtualClient& c, int&) {
                        return c.spend(c.id().identity() == "cpu" ? 1e-3 : 3e-3), 1;
                      }});
  });
  CHECK(tuner.execute(gpu.id(), gpu, set, 5) == 0);
  CHECK(tuner.execute(cpu.id(), cpu, set, 5) == 1);
}

TEST_CASE("tuning runs on generated inputs and writes the caller's output once", "[tuner]") {
  LocalTuner<SizeKey> tuner("outputs", test::test_settings());
  VirtualClient client;
  using Data = std::vector<int>;
  const auto& set = tuner.init([] {
    return TunableSet{[](const Data& d) { return SizeKey{d.size()}; },
                      [](const SizeKey& k, const Data&) { return Data(k.n.value(), 0); }}
        .with(Tunable{"increment",
                      [](VirtualClient& c, Data& d) {
                        c.spend(1e-3);
                        for (int& x : d) ++x;
                      }})
        .with(Tunable{"increment slower", [](VirtualClient& c, Data& d) {
                        c.spend(2e-3);
                        for (int& x : d) ++x;
                      }});
  });
  Data data(8, 0);
  tuner.execute(client.id(), client, set, data);
  CHECK(data == Data(8, 1));
}

TEST_CASE("tunables may ignore the client and take only the inputs", "[tuner]") {
  LocalTuner<SizeKey> tuner("no client", test::test_settings());
  HostClient client;
  const auto& set = tuner.init([] {
    return TunableSet{key_of_size, CloneInputs{}}.with(
        Tunable{"plain", [](int& n) { return n + 1; }});
  });
  CHECK(tuner.execute(client.id(), client, set, 41) == 42);
}

TEST_CASE("the host client times real functions with the steady clock", "[tuner][host]") {
  LocalTuner<SizeKey> tuner("host", test::test_settings());
  HostClient host;
  CHECK_THAT(host.id().identity(), Catch::StartsWith("host | "));
  auto spin = [](int rounds) {
    return [rounds](int& n) {
      volatile double x = n;
      for (int i = 0; i < rounds; ++i) x = x * 1.0000001 + 1e-9;
      return rounds;
    };
  };
  const auto& set = tuner.init([&] {
    return TunableSet{key_of_size, CloneInputs{}}
        .with(Tunable{"heavy", spin(200000)})
        .with(Tunable{"light", spin(2000)});
  });
  CHECK(tuner.execute(host.id(), host, set, 1) == 2000);
}

TEST_CASE("prepare returns a callable bound to the winner", "[tuner]") {
  LocalTuner<SizeKey> tuner("prepared", test::test_settings());
  VirtualClient client;
  const auto& set = tuner.init([] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"a", costs(2e-3, 0)})
        .with(Tunable{"b", costs(1e-3, 1)});
  });
  int n = 32;
  auto dispatch = tuner.prepare(client.id(), client, set, n);
  CHECK(dispatch.winner().entry == 1);
  CHECK(dispatch(client, n) == 1);
}

TEST_CASE("a prepared dispatch's error names the candidate it called", "[tuner]") {
  LocalTuner<SizeKey> tuner("prepared_refusal", test::test_settings());
  VirtualClient client;
  const auto& set = tuner.init([] {
    auto even_only = [](VirtualClient& c, int& n) {
      if (n % 2 != 0) throw unsupported_inputs("n = " + std::to_string(n) + " is odd");
      return costs(1e-3, 1)(c, n);
    };
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"any", costs(2e-3, 0)})
        .with(Tunable{"even", even_only});
  });
  int n = 32;
  const auto dispatch = tuner.prepare(client.id(), client, set, n);
  REQUIRE(dispatch.winner().entry == 1);
  int odd = 33;
  try {
    (void)dispatch(client, odd);
    FAIL("the refusal was not thrown");
  } catch (const AutotuneError& e) {
    CHECK(e.tunable() == "even");
    CHECK(e.refused_inputs());
    CHECK_THAT(std::string(e.what()), Catch::StartsWith("'even': ") && Catch::Contains("is odd"));
  }
}

TEST_CASE("a new key's search moves through the configurations earlier keys built", "[tuner]") {
  Settings settings = test::test_settings();
  settings.search = SearchSettings{SearchStrategy::annealing, 0.0, 12, 1e9};
  LocalTuner<SizeKey> tuner("built before", settings);
  VirtualClient client;
  const auto& set = tuner.init([] {
    return TunableSet{key_of_size, bench_inputs}.with(
        space("s")
            .parameter("A", {1, 2, 3, 4, 5, 6, 7, 8})
            .parameter("B", {1, 2, 3, 4, 5, 6, 7, 8})
            .start_at("A=4,B=4"),
        [](const Config&) {
          return [](VirtualClient& client, int&) {  // flat: every move is as good
            client.spend(1e-3);
            return 0;
          };
        });
  });
  const auto measured = [&](int n) {
    run(tuner, client, set, n);
    const auto report = tuner.tuner(client.id()).report(SizeKey{static_cast<std::uint64_t>(n)});
    std::set<std::string> names;
    if (report) {
      for (const auto& outcome : report->outcomes) {
        if (outcome.ok()) names.insert(outcome.name);
      }
    }
    return names;
  };
  const auto first = measured(8);
  const auto second = measured(64);  // another key: another walk, from the same start
  REQUIRE(first.size() == 12);
  REQUIRE(second.size() == 12);
  std::size_t shared = 0;
  for (const auto& name : second) shared += first.count(name);
  // Its moves go to the first key's configurations while one neighbours it: most are shared.
  CHECK(shared >= 9);
}

namespace {

// A family whose every configuration takes `seconds` (flat: none gains on another).
auto flat(double seconds) {
  return [seconds](const Config&) {
    return [seconds](VirtualClient& client, int&) {
      client.spend(seconds);
      return 0;
    };
  };
}

// The working candidates of `report` by family: the name before its '['.
std::map<std::string, std::size_t> working_by_family(const TuningReport& report) {
  std::map<std::string, std::size_t> count;
  for (const auto& outcome : report.outcomes) {
    if (outcome.ok()) ++count[outcome.name.substr(0, outcome.name.find('['))];
  }
  return count;
}

// An 8 x 8 space that starts at its middle.
auto family(const std::string& name) {
  return space(name)
      .parameter("A", {1, 2, 3, 4, 5, 6, 7, 8})
      .parameter("B", {1, 2, 3, 4, 5, 6, 7, 8})
      .start_at("A=4,B=4");
}

}  // namespace

TEST_CASE("a family whose start points trail the leader's is searched without the floor",
          "[tuner]") {
  // Two flat families (no configuration gains on another): the leading one's search runs to the
  // exploration floor; the trailing one (1.5x, not abandoned) ends on the warm patience. So does
  // it at the default level: a family whose start points trail can still hold the winner (on
  // the H200, 16 x 4096 x 4096's skinny winner, 2x blocked's, lies past skinny's start points,
  // which trail; leaving such a family after them at 1.05x lost it, docs/benchmarks.md).
  SearchSettings custom{SearchStrategy::model, 1.0, 64, 1e9};
  custom.explore = 30, custom.patience = 40, custom.warm_patience = 6;
  custom.abandon_after = 6;  // abandon_factor 2: 1.5x is searched
  const SearchSettings level = SearchSettings::for_level(Level::balanced);
  for (const SearchSettings& search : {custom, level}) {
    INFO("warm patience " << search.warm_patience << ", floor " << search.explore);
    Settings settings = test::test_settings();
    settings.search = search;
    LocalTuner<SizeKey> tuner("trailing family " + std::to_string(search.warm_patience), settings);
    VirtualClient client;
    const auto& set = tuner.init([&] {
      return TunableSet{key_of_size, bench_inputs}
          .with(family("trail"), flat(1.5e-3))
          .with(family("lead"), flat(1e-3));
    });
    run(tuner, client, set, 8);
    const auto report = tuner.tuner(client.id()).report(SizeKey{8});
    REQUIRE(report);
    std::size_t lead = 0, trail = 0;
    for (const auto& outcome : report->outcomes) {
      if (!outcome.ok()) continue;
      (outcome.name.rfind("lead[", 0) == 0 ? lead : trail) += 1;
    }
    CHECK(lead >= search.explore);             // the floor
    CHECK(trail == 1 + search.warm_patience);  // its start, then the warm patience
  }
}

TEST_CASE("spaces without start points are ranked by their scouts before they are searched",
          "[tuner]") {
  // Two flat families, start points off, the slower declared first. 3x slower, its scouts rank
  // it second, so it is searched against the other's leader and left after abandon_after
  // configurations (its scouts among them). Without scouts the set's order decides: searched
  // first, it leads until the other is reached, and runs to its floor and patience.
  const auto slow_count = [](SearchSettings search, double slow_seconds) {
    search.start_points = false;
    Settings settings = test::test_settings();
    settings.search = search;
    LocalTuner<SizeKey> tuner("scouted " + std::to_string(search.scouts) + " " +
                                  std::to_string(search.patience) + " " +
                                  std::to_string(slow_seconds),
                              settings);
    VirtualClient client;
    const auto& set = tuner.init([&] {
      return TunableSet{key_of_size, bench_inputs}
          .with(family("slow"), flat(slow_seconds))
          .with(family("fast"), flat(1e-3));
    });
    run(tuner, client, set, 8);
    const auto report = tuner.tuner(client.id()).report(SizeKey{8});
    REQUIRE(report);
    auto count = working_by_family(*report);
    CHECK(count["fast"] >= search.explore);
    return count["slow"];
  };
  SearchSettings balanced = SearchSettings::for_level(Level::balanced);
  REQUIRE(balanced.scouts == 4);
  CHECK(slow_count(balanced, 3e-3) == balanced.abandon_after);
  SearchSettings unscouted = balanced;
  unscouted.scouts = 0;
  CHECK(slow_count(unscouted, 3e-3) > balanced.abandon_after);
  // 1.5x behind, not abandoned: its scouts do not make it a trailing side bet, which would lose
  // the exploration floor (as a start point trailing by as much does: "a family whose start
  // points trail the leader's"). A patience shorter than the floor shows it.
  SearchSettings short_patience = balanced;
  short_patience.patience = 8;
  CHECK(slow_count(short_patience, 1.5e-3) >= short_patience.explore);
  // Scouting never measures more than the space's search would before it is judged: no more
  // than its budget, nor than abandon_after (the slow family is then left at once).
  SearchSettings two_each{SearchStrategy::model, 0.0, 2, 1e9};
  two_each.refine = 0;
  CHECK(slow_count(two_each, 3e-3) == 2);
  SearchSettings abandon_at_three = balanced;
  abandon_at_three.abandon_after = 3;
  CHECK(slow_count(abandon_at_three, 3e-3) == 3);
}

TEST_CASE("a space's time limit counts the seconds its scouts took", "[tuner]") {
  // Every call sleeps at least 5 ms of wall time (the limit's clock), and a measurement makes at
  // least 4 calls: each family's 4 scouts spend more than its 0.06 s, so its search measures
  // nothing more. Counted from the search's start instead (the mutant), each search measured
  // more. No final race: it would only sleep longer.
  SearchSettings search = SearchSettings::for_level(Level::balanced);
  search.start_points = false;
  search.max_seconds = 0.06;
  REQUIRE(search.scouts == 4);
  Settings settings = test::counting_settings();
  settings.search = search;
  LocalTuner<SizeKey> tuner("scouts in the time limit", settings);
  VirtualClient client;
  const auto sleeping = [](double seconds) {
    return [seconds](const Config&) {
      return [seconds](VirtualClient& client, int&) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        client.spend(seconds);
        return 0;
      };
    };
  };
  const auto& set = tuner.init([&] {
    return TunableSet{key_of_size, bench_inputs}
        .with(family("a"), sleeping(1e-3))
        .with(family("b"), sleeping(1.2e-3));
  });
  run(tuner, client, set, 8);
  const auto report = tuner.tuner(client.id()).report(SizeKey{8});
  REQUIRE(report);
  INFO(format_report(*report));
  auto count = working_by_family(*report);
  CHECK(count["a"] == search.scouts);
  CHECK(count["b"] == search.scouts);
}

TEST_CASE("the tuner trusts a start point only on the devices it was found on", "[tuner]") {
  // A flat family (nothing gains on the start point): on the device the start point names, its
  // search ends after the warm patience; on another the start point is measured first, but the
  // whole patience applies (its identity is the client's: VirtualClient's "virtual device").
  SearchSettings search{SearchStrategy::model, 1.0, 64, 1e9};
  search.explore = 0, search.patience = 20, search.warm_patience = 4, search.refine = 0;
  const auto measured = [&](const std::string& found_on) {
    Settings settings = test::test_settings();
    settings.search = search;
    LocalTuner<SizeKey> tuner("found on " + found_on, settings);
    VirtualClient client;
    const auto& set = tuner.init([&] {
      return TunableSet{key_of_size, bench_inputs}.with(
          space("s")
              .parameter("A", {1, 2, 3, 4, 5, 6, 7, 8})
              .parameter("B", {1, 2, 3, 4, 5, 6, 7, 8})
              .start_at("A=4,B=4", {found_on}),
          [](const Config&) {
            return [](VirtualClient& client, int&) {
              client.spend(1e-3);
              return 0;
            };
          });
    });
    run(tuner, client, set, 8);
    const auto report = tuner.tuner(client.id()).report(SizeKey{8});
    REQUIRE(report);
    std::size_t ok = 0;
    bool start_measured = false;
    for (const auto& outcome : report->outcomes) {
      ok += outcome.ok() ? 1 : 0;
      start_measured |= outcome.ok() && outcome.name == "s[A=4,B=4]";
    }
    CHECK(start_measured);  // either way
    return ok;
  };
  const std::size_t here = measured("virtual device"), elsewhere = measured("another device");
  INFO("found here: " << here << " measured; found elsewhere: " << elsewhere);
  CHECK(here == 1 + search.warm_patience);
  CHECK(elsewhere == 1 + search.patience);
}

namespace {
struct LimitedClient : VirtualClient {
  DeviceLimits limits() const { return {128, 16384}; }  // work-group size, local memory bytes
};
}  // namespace

TEST_CASE("a search walks only the configurations within the device's limits", "[tuner]") {
  // 64 configurations, of which the 34 with A * B <= 16 fit work-groups of 128. All run in the
  // same time, so nothing gains: a search measures its patience (or its budget) and stops. The
  // configurations over the limits are skipped for their reason and spend neither.
  std::size_t first_total = 0;  // the progress's estimate once the search began
  const auto tune = [&](SearchSettings search) {
    Settings settings = test::test_settings();
    settings.search = search;
    first_total = 0;
    settings.on_progress = [&](const TuningProgress& p) {
      if (first_total == 0 && p.done > 0) first_total = p.total;
    };
    LocalTuner<SizeKey> tuner("within limits", settings);
    LimitedClient client;
    const auto& set = tuner.init([&] {
      return TunableSet{key_of_size, bench_inputs}.with(
          space("s")
              .parameter("A", {1, 2, 3, 4, 5, 6, 7, 8})
              .parameter("B", {1, 2, 3, 4, 5, 6, 7, 8})
              .work_group_size(
                  [](const Config& c) { return static_cast<std::size_t>(8 * c["A"] * c["B"]); }),
          [](const Config&) {
            return [](LimitedClient& client, int&) {
              client.spend(1e-3);
              return 0;
            };
          });
    });
    tuner.execute(client.id(), client, set, 8);
    const auto report = tuner.tuner(client.id()).report(SizeKey{8});
    REQUIRE(report);
    std::size_t ok = 0, over_limits = 0;
    for (const auto& outcome : report->outcomes) {
      ok += outcome.ok() ? 1 : 0;
      if (outcome.error && outcome.error->kind() == ErrorKind::out_of_resources) {
        CHECK(outcome.status == OutcomeStatus::skipped);
        ++over_limits;
      }
    }
    CHECK(over_limits == 64 - 34);  // every one of them says why, searched or not
    // and the summary says it once, with one of their sizes as the example
    CHECK_THAT(format_report(*report),
               Catch::Contains("30 candidates not measured: work-group of ") &&
                   Catch::Contains("(and the like)"));
    return ok;
  };
  SearchSettings patient{SearchStrategy::model, 1.0, 1, 1e9};
  patient.explore = 0, patient.refine = 0, patient.patience = 20;
  CHECK(tune(patient) == 1 + patient.patience);  // the first, then its patience
  // The budget is a fraction of the configurations the device can run: a quarter of 34.
  SearchSettings budgeted{SearchStrategy::model, 0.25, 1, 1e9};
  budgeted.refine = 0;
  CHECK(tune(budgeted) == 9);
  CHECK(first_total == 9);  // the budget of the part, not of the whole space (16)
}

TEST_CASE("a space whose start points are all over the device's limits is ranked by scouts",
          "[tuner]") {
  // The fast family starts at A=8,B=8, a work-group of 512 over the client's 128; the slow one
  // (3x), declared first, at a configuration that fits. Ranked by its scouts, the fast family is
  // searched first, and the slow one is left after its start point. Ranked last for want of a
  // start point that ran (the mutant), the slow family led its own search to the floor.
  SearchSettings search = SearchSettings::for_level(Level::balanced);
  REQUIRE(search.start_points);
  Settings settings = test::test_settings();
  settings.search = search;
  LocalTuner<SizeKey> tuner("start points over the limits", settings);
  LimitedClient client;
  const auto fits = [](const Config& c) { return static_cast<std::size_t>(8 * c["A"] * c["B"]); };
  const auto limited = [&](const std::string& name, const std::string& start) {
    return space(name)
        .parameter("A", {1, 2, 3, 4, 5, 6, 7, 8})
        .parameter("B", {1, 2, 3, 4, 5, 6, 7, 8})
        .start_at(start)
        .work_group_size(fits);
  };
  const auto& set = tuner.init([&] {
    return TunableSet{key_of_size, bench_inputs}
        .with(limited("slow", "A=1,B=1"),
              [](const Config&) { return test::costs<LimitedClient>(3e-3); })
        .with(limited("fast", "A=8,B=8"),
              [](const Config&) { return test::costs<LimitedClient>(1e-3); });
  });
  tuner.execute(client.id(), client, set, 8);
  const auto report = tuner.tuner(client.id()).report(SizeKey{8});
  REQUIRE(report);
  INFO(format_report(*report));
  auto count = working_by_family(*report);
  const auto start = report->outcome("fast[A=8,B=8]");
  REQUIRE(start);
  REQUIRE(start->error);
  CHECK(start->error->kind() == ErrorKind::out_of_resources);
  CHECK(count["fast"] >= search.explore);
  CHECK(count["slow"] == 1);
}

TEST_CASE("a space whose start points all fail is ranked by scouts", "[tuner]") {
  // The fast family's start point fails when it runs (as a kernel another device's compiler
  // rejects would); the slow one's (3x), declared first, works. Ranked by its scouts, the fast
  // family is searched first, and the slow one is left after its start point. Ranked last for
  // want of a start point that worked (the mutant), the slow family led its search to the floor.
  SearchSettings search = SearchSettings::for_level(Level::balanced);
  Settings settings = test::test_settings();
  settings.search = search;
  LocalTuner<SizeKey> tuner("start points that fail", settings);
  VirtualClient client;
  const auto& set = tuner.init([&] {
    return TunableSet{key_of_size, bench_inputs}
        .with(family("slow"), flat(3e-3))
        .with(family("fast"), [](const Config& c) {
          const bool start = c["A"] == 4 && c["B"] == 4;
          return [start](VirtualClient& client, int&) {
            if (start) throw std::runtime_error("rejected by this device's compiler");
            client.spend(1e-3);
            return 0;
          };
        });
  });
  run(tuner, client, set, 8);
  const auto report = tuner.tuner(client.id()).report(SizeKey{8});
  REQUIRE(report);
  INFO(format_report(*report));
  const auto start = report->outcome("fast[A=4,B=4]");
  REQUIRE(start);
  CHECK(start->status == OutcomeStatus::failed);
  auto count = working_by_family(*report);
  CHECK(count["fast"] >= search.explore);
  CHECK(count["slow"] == 1);
}

TEST_CASE("a space none of whose configurations fits the device fails its key naming the limit",
          "[tuner]") {
  // Nothing to search: the key fails as every candidate failing does, with the limit as the
  // reason, and another tunable of the set still wins where there is one.
  const auto make = [](bool other_fits) {
    return TunableSet{key_of_size, bench_inputs}
        .with(space("s").parameter("A", {4, 8}).work_group_size([](const Config& c) {
          return static_cast<std::size_t>(64 * c["A"]);  // 256 or 512, over the client's 128
        }),
              [](const Config&) {
                return [](LimitedClient& client, int&) {
                  client.spend(1e-3);
                  return 0;
                };
              })
        .with(Tunable{"other", [other_fits](LimitedClient& client, int&) {
                        if (!other_fits) {
                          throw AutotuneError(ErrorKind::out_of_resources, "too big");
                        }
                        client.spend(2e-3);
                        return 0;
                      }});
  };
  LimitedClient client;
  {
    LocalTuner<SizeKey> tuner("nothing fits", test::test_settings());
    const auto& set = tuner.init([&] { return make(false); });
    const auto text = reason_of([&] { tuner.execute(client.id(), client, set, 8); },
                                ErrorKind::no_valid_candidate);
    CHECK_THAT(text, Catch::Contains("exceeds the device's 128"));
  }
  LocalTuner<SizeKey> tuner("nothing fits but another", test::test_settings());
  const auto& set = tuner.init([&] { return make(true); });
  tuner.execute(client.id(), client, set, 8);
  const auto report = tuner.tuner(client.id()).report(SizeKey{8});
  REQUIRE(report);
  REQUIRE(report->winner());
  CHECK(report->winner()->name == "other");
}

TEST_CASE("each candidate gets fresh benchmark inputs unless the set shares them", "[tuner]") {
  VirtualClient client;
  int made = 0;
  auto counting_inputs = [&](const SizeKey& key, const int& n) {
    return ++made, bench_inputs(key, n);
  };
  {
    LocalTuner<SizeKey> tuner("fresh inputs", test::test_settings());
    const auto& set = tuner.init([&] {
      return TunableSet{key_of_size, counting_inputs}
          .with(Tunable{"a", costs(1e-3, 0)})
          .with(Tunable{"b", costs(2e-3, 1)})
          .with(Tunable{"c", costs(3e-3, 2)});
    });
    run(tuner, client, set, 4);
    CHECK(made == 3);
  }
  made = 0;
  {
    LocalTuner<SizeKey> tuner("shared inputs", test::test_settings());
    const auto& set = tuner.init([&] {
      return TunableSet{key_of_size, counting_inputs}
          .with(Tunable{"a", costs(1e-3, 0)})
          .with(Tunable{"b", costs(2e-3, 1)})
          .with(Tunable{"c", costs(3e-3, 2)})
          .share_inputs();
    });
    run(tuner, client, set, 4);
    CHECK(made == 1);
  }
}

TEST_CASE("init with another factory than the first is a clear error, never a wrong cast",
          "[tuner][init]") {
  LocalTuner<SizeKey> tuner("init_twice", test::test_settings());
  auto factory = [] {
    return TunableSet{key_of_size, bench_inputs}.with(Tunable{"a", costs(1e-3, 0)});
  };
  const auto& set = tuner.init(factory);
  CHECK(&tuner.init(factory) == &set);  // the same factory: the same set
  // A different set type (two candidates) and a different factory of the same set type.
  CHECK_THROWS_WITH(tuner.init([] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"a", costs(1e-3, 0)})
        .with(Tunable{"b", costs(1e-3, 1)});
  }),
                    Catch::Contains("'init_twice': init() was called with another factory"));
  CHECK_THROWS_AS(tuner.init([] {
    return TunableSet{key_of_size, bench_inputs}.with(Tunable{"a", costs(1e-3, 0)});
  }),
                  std::logic_error);
}

TEST_CASE("a set of one candidate runs it without a benchmark", "[tuner][single]") {
  LocalTuner<SizeKey> tuner("single", test::test_settings());
  VirtualClient client;
  int calls = 0, generated = 0;
  const auto& set = tuner.init([&] {
    auto inputs = [&](const SizeKey& key, const int&) {
      ++generated;
      return std::tuple<int>(static_cast<int>(key.n.value()));
    };
    return TunableSet{key_of_size, inputs}
        .with(Tunable{"only", [&](VirtualClient& c, int& n) { return ++calls, c.spend(1e-3), n; }})
        .with(Tunable{"absent", costs(1e-3, 1)}.only_if(false));
  });
  CHECK(run(tuner, client, set, 100) == 100);
  CHECK(run(tuner, client, set, 100) == 100);
  CHECK(calls == 2);  // the two calls, nothing more
  CHECK(generated == 0);
  CHECK(client.measurements() == 0);
  CHECK(!tuner.tuner(client.id()).report(SizeKey{100}));
}
