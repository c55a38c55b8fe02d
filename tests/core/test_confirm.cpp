// A winner that is not noise: the contenders for the win are re-measured interleaved, so that
// moments of the machine (a slow second) fall on all of them alike.
#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <tunekit/tunekit.hpp>
#include <vector>

#include "../support.hpp"

using namespace tunekit;
using test::costs;
using test::DriftingClient;
using test::size_inputs;
using test::size_key;
using test::VirtualClient;

TEST_CASE("interleaved rounds time every contender once per round, in a shuffled order",
          "[benchmark][confirm]") {
  VirtualClient client;
  std::vector<std::string> calls;
  const auto run_a = [&] { calls.push_back("a"), client.spend(1e-3); };
  const auto run_b = [&] { calls.push_back("b"), client.spend(2e-3); };
  const auto run_c = [&] { calls.push_back("c"), client.spend(3e-3); };
  const std::vector<Contender> contenders{{FunctionRef<void()>(run_a), 1},
                                          {FunctionRef<void()>(run_b), 2},
                                          {FunctionRef<void()>(run_c), 1}};
  const auto times = measure_interleaved(client, contenders, {"a", "b", "c"}, 8, 42);
  REQUIRE(times.size() == 3);
  for (std::size_t c = 0; c < 3; ++c) {
    CHECK_FALSE(times[c].error);
    REQUIRE(times[c].samples.size() == 8);
    for (double t : times[c].samples) CHECK(t == Approx(1e-3 * static_cast<double>(c + 1)));
  }
  REQUIRE(calls.size() == 8 * 4);  // b's batch is 2 calls
  // Every round holds each contender once; not every round in the same order.
  std::vector<std::string> firsts;
  for (std::size_t at = 0, round = 0; round < 8; ++round) {
    std::string order;
    for (int k = 0; k < 4; ++k) order += calls[at++];
    CHECK(std::count(order.begin(), order.end(), 'a') == 1);
    CHECK(std::count(order.begin(), order.end(), 'b') == 2);
    CHECK(std::count(order.begin(), order.end(), 'c') == 1);
    firsts.push_back(order.substr(0, 1));
  }
  CHECK(std::count(firsts.begin(), firsts.end(), firsts.front()) < 8);
}

TEST_CASE("a contender that fails in the rounds gets its error and no further rounds",
          "[benchmark][confirm]") {
  VirtualClient client;
  int failing_calls = 0;
  const auto works = [&] { client.spend(1e-3); };
  const auto fails = [&] {
    ++failing_calls;
    throw std::runtime_error("lost the device");
  };
  const auto times = measure_interleaved(
      client, {{FunctionRef<void()>(works), 1}, {FunctionRef<void()>(fails), 1}}, {"w", "f"}, 5, 1);
  CHECK(times[0].samples.size() == 5);
  CHECK_FALSE(times[0].error);
  REQUIRE(times[1].error);
  CHECK(times[1].error->tunable() == "f");
  CHECK(failing_calls == 1);
}

TEST_CASE(
    "the final race leaves out who is clearly slower after a stage and runs the rest until the "
    "best two separate or the stages end",
    "[benchmark][confirm]") {
  VirtualClient client;
  std::size_t rounds_of_far = 0;
  const auto best = [&] { client.spend(1.00e-3); };
  const auto twin = [&] { client.spend(1.00e-3); };  // tied with the best: never separates
  const auto far = [&] { ++rounds_of_far, client.spend(1.30e-3); };
  const std::vector<Contender> contenders{{FunctionRef<void()>(far), 1},
                                          {FunctionRef<void()>(best), 1},
                                          {FunctionRef<void()>(twin), 1}};
  const RaceResult race =
      race_interleaved(Timer(client), contenders, {"far", "best", "twin"}, RaceSettings{7, 3}, 1);
  CHECK(race.rounds == 21);
  CHECK(race.left_out == std::vector<bool>{true, false, false});
  CHECK(rounds_of_far == 7);  // one stage, then left out
  CHECK(race.times[0].samples.size() == 7);
  CHECK(race.times[1].samples.size() == 21);
  CHECK_FALSE(race.separated);
  CHECK(((race.best == 1 && race.runner_up == 2) || (race.best == 2 && race.runner_up == 1)));
  CHECK(race.versus_best[0] == Approx(1.3));
  CHECK(race.versus_best[race.best] == 1);

  // Two that differ end the race after one stage; the best two are never left out, so the
  // runner-up keeps its place even when it is clearly slower.
  const std::vector<Contender> pair{{FunctionRef<void()>(far), 1}, {FunctionRef<void()>(best), 1}};
  const RaceResult decided =
      race_interleaved(Timer(client), pair, {"far", "best"}, RaceSettings{7, 3}, 2);
  CHECK(decided.separated);
  CHECK(decided.rounds == 7);
  CHECK(decided.best == 1);
  CHECK(decided.runner_up == 0);
  CHECK(decided.left_out == std::vector<bool>{false, false});
}

TEST_CASE(
    "a winner measured in a slow second of the machine still wins: the best are "
    "re-measured interleaved",
    "[tuner][confirm]") {
  for (const bool confirm : {true, false}) {
    Settings settings = test::test_settings();
    if (!confirm) settings.benchmark->confirm_contenders = 0;
    LocalTuner<test::SizeKey> tuner(confirm ? "drift" : "drift-unconfirmed", settings);
    // "best" is measured first (1 warm-up, 3 samples: measurements 1-4), all of it slowed 1.5x.
    DriftingClient client(1, 4, 1.5);
    const auto& set = tuner.init([] {
      return TunableSet{size_key, size_inputs}
          .with(Tunable{"best", costs<DriftingClient>(1.00e-3)})
          .with(Tunable{"second", costs<DriftingClient>(1.05e-3)})
          .with(Tunable{"far", costs<DriftingClient>(3e-3)});
    });
    tuner.execute(client.id(), client, set, 64);
    const auto report = tuner.tuner(client.id()).report(test::SizeKey{64});
    REQUIRE(report);
    REQUIRE(report->winner());
    INFO(format_report(*report));
    if (confirm) {
      CHECK(report->winner()->name == "best");
      CHECK(report->winner()->median == Approx(1.00e-3));
      CHECK(report->confirmed == 2);  // "far" is not within confirm_within of the best
      CHECK(report->confirm_rounds == settings.benchmark->confirm_rounds);
      CHECK_THAT(format_report(*report), Catch::Contains("confirmed: the best 2 re-measured"));
    } else {
      // Unconfirmed, the paired samples guard alone: "second" was measured beside "best", in
      // the same moments, so the slow second of "best" (its 1.5 ms, the leader's scale) cannot
      // make "second" look faster.
      CHECK(report->winner()->name == "best");
      CHECK(report->winner()->median == Approx(1.5e-3));
      CHECK(report->confirmed == 0);
    }
  }
}

TEST_CASE("the race's samples batch calls back to back up to confirm_sample_seconds",
          "[tuner][confirm]") {
  // Candidates of 1 ms measured in 1-call samples (min_sample_seconds 0); in the race each
  // sample is 5 calls at confirm_sample_seconds = 4.5 ms: 4 more calls in each of its samples.
  std::size_t calls[2] = {0, 0};
  std::size_t rounds[2] = {0, 0};
  for (const int with_sample : {0, 1}) {
    Settings settings = test::test_settings();
    settings.benchmark->confirm_sample_seconds = with_sample ? 4.5e-3 : 0;  // 5 calls
    LocalTuner<test::SizeKey> tuner(with_sample ? "race-sample" : "race-one-call", settings);
    VirtualClient client;
    std::size_t& count = calls[with_sample];
    const auto& set = tuner.init([&count] {
      return TunableSet{size_key, size_inputs}
          .with(Tunable{"best", [&count](VirtualClient& c, int&) { ++count, c.spend(1.00e-3); }})
          .with(Tunable{"second", costs<VirtualClient>(1.02e-3)});
    });
    tuner.execute(client.id(), client, set, 64);
    const auto report = tuner.tuner(client.id()).report(test::SizeKey{64});
    REQUIRE(report);
    REQUIRE(report->winner());
    CHECK(report->winner()->name == "best");
    CHECK(report->confirmed == 2);
    rounds[with_sample] = report->confirm_rounds;
  }
  // The two tunings measure alike up to the race (deterministic costs); the race's rounds are
  // the same, each sample of "best" 5 calls instead of 1.
  REQUIRE(rounds[0] == rounds[1]);
  REQUIRE(rounds[0] > 0);
  CHECK(calls[1] - calls[0] == 4 * rounds[0]);
}

namespace {

// A device with a host cost per launch that lands in a batch's span (PoCL's): each call after
// the first in a measurement adds `gap` seconds; a lone call is timed without it.
class LaunchGapClient : public VirtualClient {
 public:
  explicit LaunchGapClient(double gap) : gap_(gap) {}
  double measure(FunctionRef<void()> work, std::size_t batch) {
    return VirtualClient::measure(work, batch) + gap_ * static_cast<double>(batch - 1);
  }

 private:
  double gap_;
};

}  // namespace

TEST_CASE(
    "a candidate left out of the race cannot rank ahead of its winner: the race's batches time "
    "each launch's host cost, the search's lone calls do not",
    "[tuner][confirm]") {
  Settings settings = test::test_settings();
  settings.benchmark->confirm_contenders = 2;           // "best" and "second" race
  settings.benchmark->confirm_sample_seconds = 4.5e-3;  // 5 calls a sample: 4 gaps of 0.5 ms
  LocalTuner<test::SizeKey> tuner("launch-gap", settings);
  LaunchGapClient client(0.5e-3);  // raced, a 1 ms call measures 1.4 ms
  const auto& set = tuner.init([] {
    return TunableSet{size_key, size_inputs}
        .with(Tunable{"best", costs<LaunchGapClient>(1.00e-3)})
        .with(Tunable{"second", costs<LaunchGapClient>(1.02e-3)})
        .with(Tunable{"third", costs<LaunchGapClient>(1.10e-3)});
  });
  tuner.execute(client.id(), client, set, 64);
  const auto report = tuner.tuner(client.id()).report(test::SizeKey{64});
  REQUIRE(report);
  REQUIRE(report->winner());
  INFO(format_report(*report));
  CHECK(report->confirmed == 2);
  CHECK(report->winner()->name == "best");
  CHECK(report->winner()->median == Approx(1.4e-3));
  // "third" in the race's units: its searched 1.1 ms times the winner's 1.4 / 1.0.
  const AutotuneOutcome* third = report->outcome("third");
  REQUIRE(third);
  CHECK(third->median == Approx(1.54e-3));
}

TEST_CASE("a step the climb measures after the race is recorded in the search's kind of time",
          "[tuner][confirm][resume]") {
  // The race's batches time each launch's host cost (0.5 ms), the search's lone calls do not.
  // The climb measures X=6 beside the race's winner X=5; the in-progress record (what an
  // interrupted tuning resumes from) keeps it in the kind of time the search recorded X=5 in, so
  // that the two rank as they ran (0.9 against 0.98 ms): not in the race's, 1.4x longer, which
  // would rank X=6 behind X=5's recorded time.
  Settings settings = test::test_settings();
  SearchSettings search{SearchStrategy::exhaustive, 0.0, 6, 1e9};
  search.patience = 0;
  search.refine = 2;
  settings.search = search;
  settings.benchmark->confirm_sample_seconds = 4.5e-3;
  LaunchGapClient client(0.5e-3);
  auto calls_of_five = std::make_shared<std::size_t>(0);
  auto set = TunableSet{size_key, size_inputs}.with(
      Space(space("s")
                .parameter("X", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
                .start_at("X=2")
                .start_at("X=5")),
      [calls_of_five](const Config& c) {
        const std::int64_t x = c["X"];
        return [x, calls_of_five](LaunchGapClient& gap_client, int&) {
          double t = x == 2 ? 1.00e-3 : 2e-3;
          if (x == 5) t = ++*calls_of_five <= 6 ? 1.02e-3 : 0.98e-3;
          if (x == 6) t = 0.9e-3;
          gap_client.spend(t);
        };
      });
  const test::SizeKey key{8};
  int n = 8;
  const std::string op = "climb record", device = "virtual";
  TuningRun<test::SizeKey, LaunchGapClient, decltype(set), int> run(op, device, settings, client,
                                                                    set, key, {}, 1, n);
  std::map<std::string, double> recorded;
  run.on_measured([&](const AutotuneOutcome& outcome) { recorded[outcome.name] = outcome.median; });
  const TuningReport report = run.run();
  INFO(format_report(report));
  REQUIRE(report.winner());
  CHECK(report.winner()->name == "s[X=6]");
  REQUIRE(recorded.count("s[X=6]") == 1);
  REQUIRE(recorded.count("s[X=5]") == 1);
  CHECK(recorded["s[X=6]"] / recorded["s[X=5]"] == Approx(0.9 / 0.98).epsilon(0.01));
}

namespace {

// A virtual device that states its peak: 1 GFLOP/s, 1 GB/s.
class PeakClient : public VirtualClient {
 public:
  DevicePeak peak() const { return {1e9, 1e9}; }
};

// A key whose benchmark problem is 1 MFLOP: 1 ms at the peak.
struct WorkKey {
  BOOST_HANA_DEFINE_STRUCT(WorkKey, (Anchored<std::uint64_t>, n));
  Work work() const { return {1e6, 0}; }
};

auto work_key = [](const int& n) { return WorkKey{static_cast<std::uint64_t>(n)}; };
auto work_inputs = [](const WorkKey&, const int& n) { return std::tuple<int>(n); };

}  // namespace

TEST_CASE("a tuning stops once a candidate runs near the roofline twice", "[tuner][good-enough]") {
  STATIC_REQUIRE(HasWork<WorkKey>);
  STATIC_REQUIRE(HasDevicePeak<PeakClient>);
  Settings settings = test::test_settings();
  settings.search = SearchSettings::for_level(Level::balanced);
  REQUIRE(settings.search->good_enough == Approx(0.95));
  settings.benchmark->confirm_contenders = 0;  // every call below is the search's
  // The calls one measurement of "near the peak" makes: a tuning with no bound and the two
  // candidates alone. A stop must measure it once more (twice), so it calls it more.
  std::size_t near_calls = 0;
  const auto near_the_peak = [&](PeakClient& c, int&) {
    ++near_calls;
    c.spend(1.02e-3);  // 98% of the roofline
  };
  std::size_t one_measurement = 0;
  {
    Settings unbounded = settings;
    unbounded.search->good_enough = 0;
    LocalTuner<WorkKey> once("roofline, unbounded", unbounded);
    PeakClient client;
    const auto& set = once.init([&] {
      return TunableSet{work_key, work_inputs}
          .with(Tunable{"slow", costs<PeakClient>(3e-3)})
          .with(Tunable{"near the peak", near_the_peak});
    });
    once.execute(client.id(), client, set, 8);
    one_measurement = near_calls;
    near_calls = 0;
  }
  REQUIRE(one_measurement > 0);
  LocalTuner<WorkKey> tuner("roofline", settings);
  PeakClient client;
  std::size_t unmeasured_calls = 0;
  const auto& set = tuner.init([&] {
    return TunableSet{work_key, work_inputs}
        .with(Tunable{"slow", costs<PeakClient>(3e-3)})
        .with(Tunable{"near the peak", near_the_peak})
        .with(Tunable{"never needed", [&](PeakClient& c, int&) {
                        ++unmeasured_calls;
                        c.spend(0.5e-3);
                      }});
  });
  tuner.execute(client.id(), client, set, 8);
  CHECK(near_calls > one_measurement);  // measured a second time before the stop
  const auto report = tuner.tuner(client.id()).report(WorkKey{8});
  REQUIRE(report);
  INFO(format_report(*report));
  REQUIRE(report->winner());
  CHECK(report->winner()->name == "near the peak");
  CHECK_THAT(report->stopped_early, Catch::Contains("near the peak") && Catch::Contains("98%"));
  CHECK(unmeasured_calls == 0);
  const auto& skipped = report->outcomes.back();
  CHECK(skipped.name == "never needed");
  REQUIRE(skipped.error);
  CHECK_THAT(skipped.error->message(), Catch::Contains("stopped early"));
}

namespace {

// A device whose first peak measurement met a busy moment (half the peak); measured again, it
// gives the real one.
class BusyPeakClient : public VirtualClient {
 public:
  DevicePeak peak() const { return {0.5e9, 0.5e9}; }
  DevicePeak peak_now() {
    ++measured_again;
    return {1e9, 1e9};
  }
  std::size_t measured_again = 0;
};

}  // namespace

TEST_CASE("a peak measured in a busy moment does not stop a tuning: the stop measures it again",
          "[tuner][good-enough][pick]") {
  STATIC_REQUIRE(HasFreshPeak<BusyPeakClient>);
  Settings settings = test::test_settings();
  settings.search = SearchSettings::for_level(Level::balanced);
  LocalTuner<WorkKey> tuner("busy peak", settings);
  BusyPeakClient client;
  const auto& set = tuner.init([&] {
    return TunableSet{work_key, work_inputs}
        .with(Tunable{"slow", costs<BusyPeakClient>(4e-3)})
        // 98% of the busy moment's roofline (2 ms), 49% of the real one (1 ms)
        .with(Tunable{"mediocre", costs<BusyPeakClient>(2.04e-3)})
        .with(Tunable{"best", costs<BusyPeakClient>(1.02e-3)});
  });
  tuner.execute(client.id(), client, set, 8);
  const auto report = tuner.tuner(client.id()).report(WorkKey{8});
  REQUIRE(report);
  INFO(format_report(*report));
  CHECK(client.measured_again >= 1);
  REQUIRE(report->winner());
  CHECK(report->winner()->name == "best");
  CHECK_THAT(report->stopped_early, !Catch::Contains("mediocre"));
}

TEST_CASE(
    "one lucky measurement near the roofline does not stop a tuning, nor does the full "
    "level",
    "[tuner][good-enough]") {
  SECTION("fast in its first measurement only") {
    LocalTuner<WorkKey> tuner("lucky", test::test_settings());
    PeakClient client;
    std::size_t calls = 0;
    const auto& set = tuner.init([&] {
      return TunableSet{work_key, work_inputs}
          // 1 warm-up and 3 samples at 1 ms, then 5 ms: the second measurement disagrees.
          .with(Tunable{"lucky", [&](PeakClient& c, int&) { c.spend(++calls <= 4 ? 1e-3 : 5e-3); }})
          .with(Tunable{"steady", costs<PeakClient>(2e-3)});
    });
    tuner.execute(client.id(), client, set, 8);
    const auto report = tuner.tuner(client.id()).report(WorkKey{8});
    REQUIRE(report);
    INFO(format_report(*report));
    CHECK(report->stopped_early.empty());
    CHECK(report->outcomes.size() == 2);
    for (const auto& outcome : report->outcomes) CHECK(outcome.ok());  // both measured
  }
  SECTION("the full level measures everything") {
    Settings settings = test::test_settings();
    settings.search = SearchSettings::for_level(Level::full);
    LocalTuner<WorkKey> tuner("full", settings);
    PeakClient client;
    const auto& set = tuner.init([&] {
      return TunableSet{work_key, work_inputs}
          .with(Tunable{"at the peak", costs<PeakClient>(1e-3)})
          .with(Tunable{"other", costs<PeakClient>(2e-3)});
    });
    tuner.execute(client.id(), client, set, 8);
    const auto report = tuner.tuner(client.id()).report(WorkKey{8});
    REQUIRE(report);
    CHECK(report->stopped_early.empty());
    for (const auto& outcome : report->outcomes) CHECK(outcome.ok());
  }
}

namespace {
// A tuning at `level` of two candidates: "short" at `seconds`, measured first, then "best" at the
// roofline (1 ms).
TuningReport tune_short_then_best(Level level, double seconds) {
  Settings settings = test::test_settings();
  settings.benchmark->confirm_contenders = 0;
  settings.search = SearchSettings::for_level(level);
  LocalTuner<WorkKey> tuner("short, then best", settings);
  PeakClient client;
  const auto& set = tuner.init([&] {
    return TunableSet{work_key, work_inputs}
        .with(Tunable{"short", costs<PeakClient>(seconds)})
        .with(Tunable{"best", costs<PeakClient>(1.0e-3)});
  });
  tuner.execute(client.id(), client, set, 8);
  const auto report = tuner.tuner(client.id()).report(WorkKey{8});
  REQUIRE(report);
  return *report;
}
}  // namespace

// A stop at a fraction f of the roofline may end on a pick 1 / f - 1 slower than the best: at
// 85%, a transpose on the H200 stopped 12% behind its best. From balanced up, a leader must be
// within 5% of the roofline.
TEST_CASE("a balanced tuning does not stop on a candidate 10% short of the roofline",
          "[tuner][good-enough][pick]") {
  for (const Level level : {Level::balanced, Level::extensive}) {
    CAPTURE(to_string(level));
    const TuningReport report = tune_short_then_best(level, 1.1e-3);
    INFO(format_report(report));
    REQUIRE(report.winner());
    CHECK(report.winner()->name == "best");
    for (const auto& outcome : report.outcomes) CHECK(outcome.ok());  // both measured
  }
}

// Balanced stops within 5% of the roofline; extensive asks for more (2%).
TEST_CASE("a candidate at 97% of the roofline ends a balanced tuning, not an extensive one",
          "[tuner][good-enough]") {
  const TuningReport balanced = tune_short_then_best(Level::balanced, 1.03e-3);
  INFO(format_report(balanced));
  REQUIRE(balanced.winner());
  CHECK(balanced.winner()->name == "short");
  CHECK_THAT(balanced.stopped_early, Catch::Contains("short"));
  const TuningReport extensive = tune_short_then_best(Level::extensive, 1.03e-3);
  INFO(format_report(extensive));
  REQUIRE(extensive.winner());
  CHECK(extensive.winner()->name == "best");
  for (const auto& outcome : extensive.outcomes) CHECK(outcome.ok());  // both measured
}

TEST_CASE("a candidate faster than the roofline turns the bound off: the tuning goes on",
          "[tuner][good-enough][pick]") {
  Settings settings = test::test_settings();
  settings.search = SearchSettings::for_level(Level::balanced);
  LocalTuner<WorkKey> tuner("beyond the peak", settings);
  PeakClient client;  // 1 ms at its stated peak: the units that ran faster are not in it
  const auto& set = tuner.init([&] {
    return TunableSet{work_key, work_inputs}
        .with(Tunable{"tensor cores", costs<PeakClient>(0.5e-3)})
        .with(Tunable{"other", costs<PeakClient>(0.8e-3)})
        .with(Tunable{"third", costs<PeakClient>(0.9e-3)});
  });
  tuner.execute(client.id(), client, set, 8);
  const auto report = tuner.tuner(client.id()).report(WorkKey{8});
  REQUIRE(report);
  INFO(format_report(*report));
  CHECK(report->stopped_early.empty());
  for (const auto& outcome : report->outcomes) CHECK(outcome.ok());  // every one measured
}
