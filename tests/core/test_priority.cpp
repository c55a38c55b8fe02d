// Priorities and groups: which levels a tuning measures, and which it skips (tunable.hpp,
// engine/tuning_plan.hpp).
#include <catch2/catch.hpp>
#include <tunekit/tunekit.hpp>

#include "../support.hpp"
#include "tuner_cases.hpp"

using namespace tunekit;
using namespace tunekit::test::tuner_cases;
using test::SizeKey;
using test::VirtualClient;

TEST_CASE("higher-priority groups are measured first and lower ones skipped", "[tuner][priority]") {
  LocalTuner<SizeKey> tuner("groups", test::test_settings());
  VirtualClient client;
  const TuneGroup<SizeKey> big("big sizes", [](const SizeKey& k) { return k.n >= 1024u ? 2 : 0; });
  const TuneGroup<SizeKey> small("small sizes",
                                 [](const SizeKey& k) { return k.n < 1024u ? 2 : 0; });
  const auto& set = tuner.init([&] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"big-1", costs(2e-3, 0)}.group(big))
        .with(Tunable{"small-1", costs(1e-3, 1)}.group(small));
  });
  // For a big key, only the big group runs even though small-1 would be faster.
  CHECK(run(tuner, client, set, 4096) == 0);
  CHECK(run(tuner, client, set, 16) == 1);
  const auto report = *tuner.tuner(client.id()).report(SizeKey{4096});
  const auto& skipped = report.outcomes.back();
  CHECK(skipped.name == "small-1");
  CHECK(skipped.status == OutcomeStatus::skipped);
}

TEST_CASE("a space in a group is skipped for the keys its group's priority excludes",
          "[tuner][priority]") {
  LocalTuner<SizeKey> tuner("grouped space", test::test_settings());
  VirtualClient client;
  const TuneGroup<SizeKey> small("small sizes",
                                 [](const SizeKey& k) { return k.n <= 64u ? 0 : -1; });
  const auto& set = tuner.init([&] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"general", costs(2e-3, 0)})
        .with(
            space("fast").parameter("A", {1, 2}),
            [](const Config& c) {
              return [a = c["A"]](VirtualClient& client, int&) {
                client.spend(1e-4 * static_cast<double>(a));
                return static_cast<int>(a);
              };
            },
            small);
  });
  CHECK(set.group_name(1) == "small sizes");
  CHECK(set.priority(2, SizeKey{4096}).skipped());
  CHECK(run(tuner, client, set, 16) == 1);    // the space's fastest
  CHECK(run(tuner, client, set, 4096) == 0);  // skipped, although faster
  const auto report = *tuner.tuner(client.id()).report(SizeKey{4096});
  for (const auto& outcome : report.outcomes) {
    if (outcome.name == "general") continue;
    CHECK(outcome.status == OutcomeStatus::skipped);
    // Its level never ran: no search left it, a level before it worked.
    REQUIRE(outcome.error);
    CHECK(outcome.error->message() == "a candidate of higher priority works");
  }
}

TEST_CASE("a tunable in two groups is measured with the first of them that the key prioritises",
          "[tuner][priority]") {
  LocalTuner<SizeKey> tuner("two groups", test::test_settings());
  VirtualClient client;
  const TuneGroup<SizeKey> big("big sizes", [](const SizeKey& k) { return k.n >= 1024u ? 2 : 0; });
  const TuneGroup<SizeKey> small("small sizes",
                                 [](const SizeKey& k) { return k.n < 1024u ? 2 : 0; });
  const TuneGroup<SizeKey> never("never", [](const SizeKey&) { return -1; });
  const auto& set = tuner.init([&] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"big-only", costs(2e-3, 0)}.group(big))
        .with(Tunable{"small-only", costs(2e-3, 1)}.group(small))
        .with(Tunable{"both", costs(1e-3, 2)}.group(never).group(big).group(
            small, [](const SizeKey&) { return 1; }));
  });
  CHECK(set.group_name(2) == "never, big sizes, small sizes");
  CHECK(set.priority(2, SizeKey{4096}).group == 2);
  CHECK(set.priority(2, SizeKey{4096}).own == 0);
  CHECK(set.priority(2, SizeKey{16}).own == 1);
  CHECK(run(tuner, client, set, 4096) == 2);  // measured beside big-only: neither skips it
  CHECK(run(tuner, client, set, 16) == 2);    // measured in its small group's level
  const auto status = [&](std::uint64_t n, const std::string& name) {
    const auto report = tuner.tuner(client.id()).report(SizeKey{n});
    REQUIRE(report);
    const AutotuneOutcome* outcome = report->outcome(name);
    if (!outcome) FAIL("no outcome " << name);
    return outcome->status;
  };
  CHECK(status(4096, "both") == OutcomeStatus::measured);
  CHECK(status(4096, "small-only") == OutcomeStatus::skipped);
  CHECK(status(16, "both") == OutcomeStatus::measured);
  CHECK(status(16, "big-only") == OutcomeStatus::skipped);
}

TEST_CASE("priorities within a group order the levels", "[tuner][priority]") {
  LocalTuner<SizeKey> tuner("within group", test::test_settings());
  VirtualClient client;
  const TuneGroup<SizeKey> group("g", [](const SizeKey&) { return 1; });
  const auto& set = tuner.init([&] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"preferred", costs(2e-3, 0)}.group(group, [](const SizeKey&) { return 5; }))
        .with(Tunable{"fallback", costs(1e-3, 1)}.group(group, [](const SizeKey&) { return 1; }));
  });
  CHECK(run(tuner, client, set, 1) == 0);
}

TEST_CASE("a negative priority skips a candidate unless nothing else works", "[tuner][priority]") {
  VirtualClient client;
  const TuneGroup<SizeKey> never("never", [](const SizeKey&) { return -1; });
  {
    LocalTuner<SizeKey> tuner("skip", test::test_settings());
    const auto& set = tuner.init([&] {
      return TunableSet{key_of_size, bench_inputs}
          .with(Tunable{"normal", costs(2e-3, 0)})
          .with(Tunable{"excluded", costs(1e-3, 1)}.group(never));
    });
    CHECK(run(tuner, client, set, 1) == 0);
  }
  {
    LocalTuner<SizeKey> tuner("skip but only one", test::test_settings());
    const auto& set = tuner.init([&] {
      return TunableSet{key_of_size, bench_inputs}
          .with(
              Tunable{"broken", [](VirtualClient&, int&) -> int { throw std::runtime_error("x"); }})
          .with(Tunable{"excluded", costs(1e-3, 1)}.group(never));
    });
    CHECK(run(tuner, client, set, 1) == 1);
  }
}

TEST_CASE("a lower priority level is tried when the higher one all fails", "[tuner][priority]") {
  LocalTuner<SizeKey> tuner("levels", test::test_settings());
  VirtualClient client;
  const TuneGroup<SizeKey> high("high", [](const SizeKey&) { return 10; });
  const TuneGroup<SizeKey> low("low", [](const SizeKey&) { return 1; });
  const auto& set = tuner.init([&] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{
            "high-broken",
            [](VirtualClient&, int&) -> int {
              throw std::runtime_error("x");
            }}.group(high))
        .with(Tunable{"low-a", costs(2e-3, 1)}.group(low))
        .with(Tunable{"low-b", costs(1e-3, 2)}.group(low));
  });
  CHECK(run(tuner, client, set, 1) == 2);
}
