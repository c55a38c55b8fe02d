// The tuning engine on a virtual clock: ranking, racing, failures, fallback, priorities,
// validation and reports.
#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <sstream>
#include <tunekit/tunekit.hpp>

#include "../report/test_report_samples.hpp"
#include "../support.hpp"

using namespace tunekit;
using test::SizeKey;
using test::VirtualClient;

namespace {

// A candidate that costs `seconds` per call on the virtual clock and returns its own id.
auto costs(double seconds, int id) {
  return [=](VirtualClient& client, int&) {
    client.spend(seconds);
    return id;
  };
}

auto key_of_size = [](const int& n) { return SizeKey{static_cast<std::uint64_t>(n)}; };
auto bench_inputs = [](const SizeKey& key, const int&) {
  return std::tuple<int>(static_cast<int>(key.n.value()));
};

template <class Set>
int run(LocalTuner<SizeKey>& tuner, VirtualClient& client, const Set& set, int n) {
  return tuner.execute(client.id(), client, set, n);
}

std::string reason_of(const std::function<void()>& f, ErrorKind kind) {
  try {
    f();
  } catch (const AutotuneError& e) {
    CHECK(e.kind() == kind);
    return e.what();
  }
  FAIL("expected an AutotuneError");
  return {};
}

}  // namespace

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

TEST_CASE("a throwing candidate becomes a runtime AutotuneError and tuning goes on",
          "[tuner][failure]") {
  LocalTuner<SizeKey> tuner("throws", test::test_settings());
  VirtualClient client;
  const auto& set = tuner.init([] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"broken",
                      [](VirtualClient&, int&) -> int { throw std::runtime_error("boom"); }})
        .with(Tunable{"works", costs(1e-3, 1)});
  });
  CHECK(run(tuner, client, set, 1) == 1);
  const auto report = *tuner.tuner(client.id()).report(SizeKey{1});
  const auto& broken = report.outcomes.back();
  CHECK(broken.status == OutcomeStatus::failed);
  REQUIRE(broken.error);
  CHECK(broken.error->kind() == ErrorKind::runtime);
  CHECK(broken.error->tunable() == "broken");
  CHECK_THAT(broken.error->message(), Catch::Contains("boom"));
}

TEST_CASE("a candidate returning an error Result fails with that error's kind",
          "[tuner][failure]") {
  LocalTuner<SizeKey> tuner("result", test::test_settings());
  VirtualClient client;
  const auto& set = tuner.init([] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"too big",
                      [](VirtualClient&, int&) -> Result<int> {
                        return fail(ErrorKind::out_of_resources, "49152 bytes local memory");
                      }})
        .with(Tunable{"fits",
                      [](VirtualClient& c, int&) -> Result<int> { return c.spend(1e-3), 7; }});
  });
  CHECK(run(tuner, client, set, 1) == 7);  // execute unwraps Result<int>
  const auto report = *tuner.tuner(client.id()).report(SizeKey{1});
  REQUIRE(report.outcomes.back().error);
  CHECK(report.outcomes.back().error->kind() == ErrorKind::out_of_resources);
  CHECK_THAT(format_report(report),
             Catch::Contains("FAILED (out of resources: 49152 bytes local memory)"));
}

TEST_CASE("allocation failures and exceptions of unknown type are candidate errors",
          "[tuner][failure]") {
  LocalTuner<SizeKey> tuner("odd failures", test::test_settings());
  VirtualClient client;
  const auto& set = tuner.init([] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"bad_alloc", [](VirtualClient&, int&) -> int { throw std::bad_alloc(); }})
        .with(Tunable{"throws 42", [](VirtualClient&, int&) -> int { throw 42; }})
        .with(Tunable{"works", costs(1e-3, 2)});
  });
  CHECK(run(tuner, client, set, 1) == 2);
  std::map<std::string, ErrorKind> kinds;
  const auto report = *tuner.tuner(client.id()).report(SizeKey{1});
  for (const auto& o : report.outcomes) {
    if (o.error) kinds[o.name] = o.error->kind();
  }
  CHECK(kinds.at("bad_alloc") == ErrorKind::allocation);
  CHECK(kinds.at("throws 42") == ErrorKind::runtime);
}

TEST_CASE("an impossible timing is an invalid measurement, not a winner", "[tuner][failure]") {
  LocalTuner<SizeKey> tuner("bad timer", test::test_settings());
  VirtualClient client;
  const auto& set = tuner.init([] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"negative time", costs(-1e-3, 0)})
        .with(Tunable{"free lunch", costs(0, 1)})
        .with(Tunable{"honest", costs(1e-3, 2)});
  });
  CHECK(run(tuner, client, set, 1) == 2);
  const auto report = *tuner.tuner(client.id()).report(SizeKey{1});
  for (const auto& o : report.outcomes) {
    if (o.name != "honest") {
      REQUIRE(o.error);
      CHECK(o.error->kind() == ErrorKind::invalid_measurement);
    }
  }
}

TEST_CASE("when no candidate works, execute throws an error listing every reason",
          "[tuner][failure]") {
  LocalTuner<SizeKey> tuner("hopeless", test::test_settings());
  VirtualClient client;
  const auto& set = tuner.init([] {
    return TunableSet{key_of_size, bench_inputs}
        .with(
            Tunable{"first", [](VirtualClient&, int&) -> int { throw std::runtime_error("one"); }})
        .with(Tunable{"second", [](VirtualClient&, int&) -> Result<int> {
                        return fail(ErrorKind::build, "syntax error at line 3");
                      }});
  });
  try {
    run(tuner, client, set, 1);
    FAIL("expected no_valid_candidate");
  } catch (const AutotuneError& e) {
    CHECK(e.kind() == ErrorKind::no_valid_candidate);
    REQUIRE(e.causes().size() == 2);
    CHECK_THAT(std::string(e.what()), Catch::Contains("'first': runtime error: threw: one") &&
                                          Catch::Contains("'second': build failed: syntax error"));
  }
}

TEST_CASE("a failing input generator is the caller's error: no candidate fails, nothing is kept",
          "[tuner][failure]") {
  LocalTuner<SizeKey> tuner("bad generator", test::test_settings());
  VirtualClient client;
  int calls = 0;
  const auto& set = tuner.init([&] {
    return TunableSet{key_of_size,
                      [&](const SizeKey&, const int& n) -> std::tuple<int> {
                        if (++calls == 1) throw std::runtime_error("no memory for inputs");
                        return {n};
                      }}
        .with(Tunable{"a", costs(1e-3, 0)})
        .with(Tunable{"b", costs(2e-3, 1)});
  });
  const auto text = reason_of([&] { run(tuner, client, set, 1); }, ErrorKind::runtime);
  CHECK_THAT(text, Catch::Contains("the input generator failed") &&
                       Catch::Contains("no memory for inputs"));
  CHECK_FALSE(tuner.tuner(client.id()).report(SizeKey{1}));
  CHECK(run(tuner, client, set, 1) == 0);  // the generator works again: so does the op
}

TEST_CASE("a failure of the moment is not remembered: the next call tunes again",
          "[tuner][failure]") {
  LocalTuner<SizeKey> tuner("moment", test::test_settings());
  VirtualClient client;
  bool short_of_memory = true;
  const auto& set = tuner.init([&] {
    auto needs_memory = [&](double seconds, int index) {
      return [&short_of_memory, seconds, index](VirtualClient& c, int&) {
        if (short_of_memory) throw std::bad_alloc();
        c.spend(seconds);
        return index;
      };
    };
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"a", needs_memory(1e-3, 0)})
        .with(Tunable{"b", needs_memory(2e-3, 1)});
  });
  CHECK_THROWS_AS(run(tuner, client, set, 1), AutotuneError);
  short_of_memory = false;
  CHECK(run(tuner, client, set, 1) == 0);
}

TEST_CASE("a throwing key generator's exception reaches the caller unchanged", "[tuner][failure]") {
  LocalTuner<SizeKey> tuner("bad key", test::test_settings());
  VirtualClient client;
  const auto& set = tuner.init([] {
    return TunableSet{[](const int& n) -> SizeKey {
                        if (n < 0) throw std::invalid_argument("negative size");
                        return SizeKey{static_cast<std::uint64_t>(n)};
                      },
                      bench_inputs}
        .with(Tunable{"a", costs(1e-3, 0)});
  });
  CHECK_THROWS_WITH(run(tuner, client, set, -1), "negative size");
  CHECK(run(tuner, client, set, 1) == 0);
}

namespace {
// "fussy" is fastest on the anchored benchmark size (1024) but cannot handle 1000.
auto fussy_set() {
  return TunableSet{key_of_size, bench_inputs}
      .with(Tunable{"general", costs(3e-3, 0)})
      .with(Tunable{"fussy",
                    [](VirtualClient& c, int& n) -> int {
                      if (n % 1024 != 0) throw std::runtime_error("needs multiples of 1024");
                      c.spend(1e-3);
                      return 1;
                    }})
      .with(Tunable{"decent", costs(2e-3, 2)});
}
}  // namespace

TEST_CASE("a winner that fails on one call falls back for that call only", "[tuner][fallback]") {
  LocalTuner<SizeKey> tuner("fallback", test::test_settings());
  VirtualClient client;
  const auto& set = tuner.init(fussy_set);
  CHECK(run(tuner, client, set, 1000) == 2);  // tuned on 1024: fussy wins, fails on 1000
  CHECK(run(tuner, client, set, 1024) == 1);  // one failure demotes nothing
  const auto measured = client.measurements();
  CHECK(run(tuner, client, set, 1000) == 2);
  CHECK(run(tuner, client, set, 1024) == 1);
  CHECK(client.measurements() == measured);  // and falling back never re-tunes
}

TEST_CASE("a winner failing repeatedly where another candidate serves is demoted",
          "[tuner][fallback]") {
  LocalTuner<SizeKey> tuner("demotion", test::test_settings());
  VirtualClient client;
  const auto& set = tuner.init(fussy_set);
  for (unsigned i = 1; i < demote_after_failures; ++i) {
    CHECK(run(tuner, client, set, 1000) == 2);
    CHECK(run(tuner, client, set, 1024) == 1);
  }
  CHECK(run(tuner, client, set, 1000) == 2);  // the last strike
  CHECK(run(tuner, client, set, 1024) == 2);  // demoted: the next-best serves every call
  CHECK(run(tuner, client, set, 1000) == 2);
}

TEST_CASE(
    "when every candidate fails on the caller's inputs, the caller's error is rethrown "
    "and the ranking kept",
    "[tuner][fallback]") {
  LocalTuner<SizeKey> tuner("fallback exhausted", test::test_settings());
  VirtualClient client;
  std::vector<int> tried;
  auto only_1024 = [&tried](double cost, int id) {
    return [=, &tried](VirtualClient& c, int& n) -> int {
      if (n != 1024) {
        tried.push_back(id);
        throw std::invalid_argument("only 1024, candidate " + std::to_string(id));
      }
      c.spend(cost);
      return id;
    };
  };
  const auto& set = tuner.init([&] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"p", only_1024(1e-3, 0)})
        .with(Tunable{"q", only_1024(2e-3, 1)});
  });
  CHECK(run(tuner, client, set, 1024) == 0);
  const auto measured = client.measurements();
  for (int i = 0; i < 5; ++i) {
    tried.clear();
    // The winner's own exception, unchanged: the inputs are at fault, not the candidates.
    CHECK_THROWS_MATCHES(run(tuner, client, set, 999), std::invalid_argument,
                         Catch::Message("only 1024, candidate 0"));
    CHECK(tried == std::vector<int>{0, 1});  // the other candidate was tried for this call
  }
  CHECK(run(tuner, client, set, 1024) == 0);  // the ranking is untouched
  CHECK(client.measurements() == measured);
}

TEST_CASE("a key whose candidates all fail is tuned once and its error rethrown at once",
          "[tuner][failure]") {
  LocalTuner<SizeKey> tuner("all fail", test::test_settings());
  VirtualClient client;
  int generated = 0;
  const auto& set = tuner.init([&] {
    return TunableSet{key_of_size,
                      [&](const SizeKey& key, const int& n) {
                        ++generated;
                        return bench_inputs(key, n);
                      }}
        .with(Tunable{"a", [](VirtualClient&, int&) -> int { throw std::runtime_error("no a"); }})
        .with(Tunable{"b", [](VirtualClient&, int&) -> int { throw std::runtime_error("no b"); }});
  });
  std::vector<std::string> messages;
  for (int i = 0; i < 12; ++i) {
    try {
      run(tuner, client, set, 100);
    } catch (const AutotuneError& e) {
      CHECK(e.kind() == ErrorKind::no_valid_candidate);
      CHECK(e.causes().size() == 2);
      messages.push_back(e.what());
    }
  }
  REQUIRE(messages.size() == 12);
  CHECK(std::all_of(messages.begin(), messages.end(),
                    [&](const std::string& m) { return m == messages.front(); }));
  CHECK(generated == 2);  // one tuning: one input set per candidate
  // Another key is tuned on its own; forgetting the memory tunes the failed key again.
  CHECK_THROWS_AS(run(tuner, client, set, 5000), AutotuneError);
  CHECK(generated == 4);
  tuner.tuner(client.id()).clear_memory();
  CHECK_THROWS_AS(run(tuner, client, set, 100), AutotuneError);
  CHECK(generated == 6);
}

namespace {
struct ScaleKey {
  BOOST_HANA_DEFINE_STRUCT(ScaleKey, (double, scale));
};
}  // namespace

TEST_CASE("a key with a NaN field is an invalid-key error, not a new tuning on every call",
          "[tuner][failure]") {
  LocalTuner<ScaleKey> tuner("nan key", test::test_settings());
  VirtualClient client;
  int generated = 0;
  const auto& set = tuner.init([&] {
    return TunableSet{[](const double& x) { return ScaleKey{x}; },
                      [&](const ScaleKey&, const double& x) { return ++generated, std::tuple(x); }}
        .with(Tunable{"a", [](VirtualClient& c, double& x) { return c.spend(1e-3), x; }})
        .with(Tunable{"b", [](VirtualClient& c, double& x) { return c.spend(2e-3), x; }})
        .share_inputs();
  });
  CHECK(tuner.execute(client.id(), client, set, 0.5) == 0.5);
  CHECK(tuner.execute(client.id(), client, set, 0.5000000000000001) == 0.5000000000000001);
  CHECK(generated == 2);  // two keys (they print differently too)
  for (int i = 0; i < 5; ++i) {
    const auto text = reason_of([&] { tuner.execute(client.id(), client, set, std::nan("")); },
                                ErrorKind::invalid_key);
    CHECK_THAT(text, Catch::Contains("'scale'") && Catch::Contains("NaN"));
  }
  CHECK(generated == 2);
}

namespace {
struct LimitedClient : test::VirtualClient {
  DeviceLimits limits() const { return {128, 16384}; }
};
}  // namespace

TEST_CASE("a limits rule naming an unknown parameter fails its candidates with an AutotuneError",
          "[tuner][failure]") {
  LocalTuner<SizeKey> tuner("bad limits rule", test::test_settings());
  LimitedClient client;
  const auto& set = tuner.init([] {
    return TunableSet{key_of_size, bench_inputs}.with(
        space("s").parameter("A", {1, 2}).work_group_size([](const Config& c) {
          return static_cast<std::size_t>(c["NOPE"]);  // std::out_of_range on main
        }),
        [](const Config& c) {
          return [a = c["A"]](LimitedClient& client, int&) {
            client.spend(1e-3 * static_cast<double>(a));
            return static_cast<int>(a);
          };
        });
  });
  const auto text =
      reason_of([&] { tuner.execute(client.id(), client, set, 8); }, ErrorKind::no_valid_candidate);
  CHECK_THAT(text, Catch::Contains("limits rule") && Catch::Contains("NOPE"));
}

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
    if (outcome.name != "general") CHECK(outcome.status == OutcomeStatus::skipped);
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
    for (const auto& o : report->outcomes) {
      if (o.name == name) return o.status;
    }
    FAIL("no outcome " << name);
    return OutcomeStatus::failed;
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

TEST_CASE("validation rejects a fast candidate with wrong output", "[tuner][validation]") {
  LocalTuner<SizeKey> tuner("validated", test::test_settings());
  VirtualClient client;
  const auto& set = tuner.init([] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"reference", [](VirtualClient& c, int& n) { return c.spend(3e-3), n * 2; }})
        .with(Tunable{"wrong but fast",
                      [](VirtualClient& c, int& n) { return c.spend(1e-3), n * 2 + 1; }})
        .with(Tunable{"right", [](VirtualClient& c, int& n) { return c.spend(2e-3), n * 2; }})
        .validate_with([](int expected, int got) { return expected == got; });
  });
  CHECK(run(tuner, client, set, 8) == 16);
  std::map<std::string, AutotuneOutcome> by_name;
  const auto report = *tuner.tuner(client.id()).report(SizeKey{8});
  for (const auto& o : report.outcomes) by_name[o.name] = o;
  CHECK(by_name.at("right").status == OutcomeStatus::measured);
  REQUIRE(by_name.at("wrong but fast").error);
  CHECK(by_name.at("wrong but fast").error->kind() == ErrorKind::wrong_output);
  CHECK(tuner.tuner(client.id()).report(SizeKey{8})->winner()->name == "right");
}

TEST_CASE("a reference whose output changes between calls is told so, not compared with itself",
          "[tuner][validation]") {
  LocalTuner<SizeKey> tuner("unsteady reference", test::test_settings());
  VirtualClient client;
  const auto& set = tuner.init([] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"naive",
                      [calls = std::make_shared<int>(0)](VirtualClient& c, int& n) {
                        return c.spend(3e-3), n * 2 + (*calls)++;  // reads what it never wrote
                      }})
        .with(Tunable{"right", [](VirtualClient& c, int& n) { return c.spend(2e-3), n * 2; }})
        .validate_with([](int expected, int got) { return expected == got; });
  });
  (void)run(tuner, client, set, 8);
  const auto report = *tuner.tuner(client.id()).report(SizeKey{8});
  const AutotuneOutcome* naive = nullptr;
  for (const auto& o : report.outcomes) {
    if (o.name == "naive") naive = &o;
  }
  REQUIRE(naive != nullptr);
  REQUIRE(naive->error);
  CHECK_THAT(naive->error->message(),
             Catch::Contains("it is the reference") && !Catch::Contains("(reference: 'naive')"));
  CHECK_THAT(format_report(report), !Catch::Contains("(reference: 'naive')"));
}

TEST_CASE("validation of in-place candidates compares the benchmark inputs",
          "[tuner][validation]") {
  LocalTuner<SizeKey> tuner("in place", test::test_settings());
  VirtualClient client;
  using Data = std::vector<int>;
  const auto& set = tuner.init([] {
    return TunableSet{
        [](const Data& d) { return SizeKey{d.size()}; },
        [](const SizeKey& k, const Data&) { return std::tuple<Data>(Data(k.n.value(), 3)); }}
        .with(Tunable{"double",
                      [](VirtualClient& c, Data& d) {
                        c.spend(2e-3);
                        for (int& x : d) x *= 2;
                      }})
        .with(Tunable{"off by one",
                      [](VirtualClient& c, Data& d) {
                        c.spend(1e-3);
                        for (int& x : d) x = x * 2 + 1;
                      }})
        .validate_with([](const std::tuple<Data>& expected, const std::tuple<Data>& got) {
          return expected == got ? std::optional<std::string>{}
                                 : std::optional<std::string>{"element 0 differs"};
        });
  });
  Data data(4, 1);
  tuner.execute(client.id(), client, set, data);
  CHECK(data == Data(4, 2));
  const auto report = *tuner.tuner(client.id()).report(SizeKey{4});
  CHECK(report.winner()->name == "double");
  CHECK_THAT(format_report(report), Catch::Contains("wrong output: element 0 differs"));
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

TEST_CASE("the set checksum covers names in order and fingerprints", "[tuner][checksum]") {
  auto base = TunableSet{key_of_size, bench_inputs}
                  .with(Tunable{"a", costs(1, 0)})
                  .with(Tunable{"b", costs(1, 1)}.fingerprint("__kernel void b() {}"));
  auto renamed = TunableSet{key_of_size, bench_inputs}
                     .with(Tunable{"a", costs(1, 0)})
                     .with(Tunable{"c", costs(1, 1)}.fingerprint("__kernel void b() {}"));
  auto reordered = TunableSet{key_of_size, bench_inputs}
                       .with(Tunable{"b", costs(1, 1)}.fingerprint("__kernel void b() {}"))
                       .with(Tunable{"a", costs(1, 0)});
  auto edited = TunableSet{key_of_size, bench_inputs}
                    .with(Tunable{"a", costs(1, 0)})
                    .with(Tunable{"b", costs(1, 1)}.fingerprint("__kernel void b() { }"));
  auto same = TunableSet{key_of_size, bench_inputs}
                  .with(Tunable{"a", costs(1, 0)})
                  .with(Tunable{"b", costs(1, 1)}.fingerprint("__kernel void b() {}"));
  const auto h = [](const auto& s) { return stable_hash(s.checksum_text()); };
  CHECK(h(base) == h(same));
  CHECK(h(base) != h(renamed));
  CHECK(h(base) != h(reordered));
  CHECK(h(base) != h(edited));
}

TEST_CASE("the report table marks the winner and shows ratios and failures", "[tuner][report]") {
  LocalTuner<SizeKey> tuner("table", test::test_settings());
  VirtualClient client;
  const auto& set = tuner.init([] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"winner", costs(1e-3, 0)})
        .with(Tunable{"runner-up", costs(1.25e-3, 1)})
        .with(Tunable{"broken",
                      [](VirtualClient&, int&) -> int { throw std::runtime_error("bad"); }});
  });
  run(tuner, client, set, 2);
  const auto text = format_report(*tuner.tuner(client.id()).report(SizeKey{2}));
  CHECK_THAT(text, Catch::Contains("table [n=2] on virtual device"));
  CHECK_THAT(text, Catch::Contains("* winner") && Catch::Contains("1.000 ms") &&
                       Catch::Contains("(1.25x)"));
  CHECK_THAT(text, Catch::Contains("FAILED (runtime error: threw: bad)"));
}

TEST_CASE("a tuning's report says where its wall time went", "[tuner][report]") {
  LocalTuner<SizeKey> tuner("timed", test::test_settings());
  VirtualClient client;
  const auto& set = tuner.init([] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"fast", costs(1e-3, 0)})
        .with(Tunable{"slow", costs(2e-3, 1)});
  });
  run(tuner, client, set, 4);
  const auto report = tuner.tuner(client.id()).report(SizeKey{4});
  REQUIRE(report);
  const TuningTime& t = report->time_spent;
  CHECK(t.measuring > 0);     // two candidates were measured
  CHECK(t.first_calls == 0);  // no validator: first calls are the warm-ups, inside measuring
  CHECK(t.validating == 0);
  CHECK(t.waiting_for_builds == 0);  // nothing to prepare ahead
  CHECK(t.programs_prepared == 0);
  CHECK(t.waiting_for_builds + t.first_calls + t.validating + t.measuring + t.confirming <=
        report->tuning_seconds);
  CHECK_THAT(format_report(*report), Catch::Contains("    time: 0.00 s waiting for builds"));

  TuningReport fixed{"op", "n=1", "virtual device", 10.0, {}};
  fixed.time_spent = {1.0, 2.0, 3.0, 0.5, 0.25, 4};
  CHECK(format_time_spent(fixed) ==
        "time: 1.00 s waiting for builds (4 prepared ahead), 2.00 s first calls, 3.00 s "
        "validating, 0.50 s measuring, 0.25 s confirming, 3.25 s other");
  fixed.tuning_seconds = 0;  // read back from a cache: no tuning took place here
  CHECK_THAT(format_report(fixed), !Catch::Contains("time:"));
}

TEST_CASE("a device is named by its name; its whole identity only at debug detail",
          "[tuner][report]") {
  const std::string gpu =
      "OpenCL | NVIDIA CUDA | OpenCL 3.0 CUDA 13.0.98 | NVIDIA H100 80GB HBM3 | driver 580.159.04 "
      "| 132 CUs | 49152 B local";
  CHECK(device_name(gpu) == "NVIDIA H100 80GB HBM3");
  CHECK(device_name("host | AMD EPYC 7B13 | 2 threads") == "AMD EPYC 7B13");
  CHECK(device_name("virtual device") == "virtual device");  // another layout: whole
  CHECK(device_name("OpenCL |  |  |  |  |  | ") == "OpenCL |  |  |  |  |  | ");  // no name
  CHECK(device_name("") == "");
  TuningReport report{"softmax", "rows=64", gpu, 0, {}};
  report.outcomes.push_back(test::measured_outcome("only", 0, 1e-3, 0));
  const std::string summary = format_report(report);
  CHECK_THAT(summary, Catch::StartsWith("tunekit: softmax [rows=64] on NVIDIA H100 80GB HBM3\n"));
  CHECK_THAT(summary, !Catch::Contains("driver 580"));
  CHECK_THAT(format_report(report, ReportDetail::full), Catch::Contains("    device: " + gpu));
}

TEST_CASE("the tuner logs the device's name at info, its identity and whole errors at debug",
          "[tuner][report]") {
  const std::string identity =
      "OpenCL | Plat | OpenCL 3.0 | gpu-name | driver 1 | 8 CUs | 65536 B local";
  const auto table_at = [&](LogLevel level) {
    Settings settings = test::test_settings();
    settings.log = level;
    LocalTuner<SizeKey> tuner("logged", settings);
    VirtualClient client(identity);
    const auto& set = tuner.init([] {
      return TunableSet{key_of_size, bench_inputs}
          .with(Tunable{"works", costs(1e-3, 0)})
          .with(Tunable{"broken", [](VirtualClient&, int&) -> int {
                          throw std::runtime_error("first line\nsecond line");
                        }});
    });
    std::ostringstream captured;
    struct Restore {  // std::clog back to its own buffer, even if run() throws
      std::streambuf* old;
      ~Restore() { std::clog.rdbuf(old); }
    } restore{std::clog.rdbuf(captured.rdbuf())};
    run(tuner, client, set, 1);
    return captured.str();
  };
  const std::string info = table_at(LogLevel::info);
  INFO(info);
  CHECK_THAT(info, Catch::Contains("logged [n=1] on gpu-name"));
  CHECK_THAT(info, !Catch::Contains(identity) && !Catch::Contains("second line"));
  const std::string debug = table_at(LogLevel::debug);
  INFO(debug);
  CHECK_THAT(debug, Catch::Contains("    device: " + identity));
  CHECK_THAT(debug, Catch::Contains("        threw: first line\n        second line\n"));
}

TEST_CASE("a failure that several candidates share is written once, naming them",
          "[tuner][report]") {
  TuningReport report{"softmax", "rows=64", "virtual device", 0, {}};
  report.outcomes.push_back(test::measured_outcome("plain", 0, 1e-3, 0));
  for (std::size_t i = 1; i <= 8; ++i) {
    // The same compiler error, with each configuration's own options in the rest of the message.
    report.outcomes.push_back(test::failed_outcome(
        "tiled[TM=" + std::to_string(i) + "]", i, ErrorKind::build,
        "error: /home/u/softmax.cl:12:5: use of undeclared identifier 'x'\nbuilding softmax.cl "
        "with options '-DTM=" +
            std::to_string(i) + "' failed; build log:\nerror: /home/u/softmax.cl:12:5: ..."));
  }
  report.outcomes.push_back(test::failed_outcome("odd", 9, ErrorKind::runtime, "threw: boom"));
  const std::string text = format_report(report);
  INFO(text);
  // The compiler error once, with the count and the first names; each row points at it.
  CHECK(test::occurrences(text, "use of undeclared identifier") == 1);
  CHECK_THAT(text, Catch::Contains("error #1, 8 candidates (tiled[TM=1], tiled[TM=2], tiled[TM=3] "
                                   "and 5 more): build failed\n"
                                   "        error: /home/u/softmax.cl:12:5: use of undeclared "
                                   "identifier 'x'\n"));
  CHECK(test::occurrences(text, "FAILED (error #1)") == 8);
  CHECK_THAT(text, Catch::Contains("FAILED (runtime error: threw: boom)"));  // alone: inline
  CHECK_THAT(text, !Catch::Contains("-DTM="));  // only the first line at summary detail
  // At full detail, each distinct failure's whole message (the build log), still once.
  const std::string full = format_report(report, ReportDetail::full);
  CHECK(test::occurrences(full, "-DTM=") == 1);
  CHECK_THAT(full, Catch::Contains("        building softmax.cl with options '-DTM=1' failed"));

  const AutotuneError all(
      ErrorKind::no_valid_candidate, "no candidate works", {},
      {*report.outcomes[1].error, *report.outcomes[9].error, *report.outcomes[2].error});
  const std::string what = all.what();
  INFO(what);
  CHECK(test::occurrences(what, "use of undeclared identifier 'x'\nbuilding") == 1);
  CHECK_THAT(what, Catch::Contains("\n  - 'tiled[TM=1]', 'tiled[TM=2]' (2 candidates): build "
                                   "failed: error: /home/u/softmax.cl:12:5:"));
  CHECK_THAT(what, Catch::Contains("\n  - 'odd': runtime error: threw: boom"));
  CHECK(all.causes().size() == 3);  // every candidate's own error, whole
}

TEST_CASE("an error's summary is its first line, cut between words, never inside one", "[error]") {
  CHECK(AutotuneError(ErrorKind::build, "first line\nsecond").summary() == "first line");
  const std::string words =
      std::string(200, 'a') + " /a/long/path/to/a/file/in/a/deep/tree.cl:12:5: error";
  const std::string summary = AutotuneError(ErrorKind::build, words).summary();
  CHECK(summary == std::string(200, 'a') + " ...");  // not "/a/long/pa"
  const std::string one_word = std::string(239, 'b') + "\xc3\xa9" + std::string(50, 'c');
  CHECK(AutotuneError(ErrorKind::build, one_word).summary() == std::string(239, 'b') + " ...");
  std::vector<AutotuneError> errors{AutotuneError(ErrorKind::build, "x\n1"),
                                    AutotuneError(ErrorKind::runtime, "x"),
                                    AutotuneError(ErrorKind::build, "x\n2")};
  CHECK(group_failures({&errors[0], &errors[1], nullptr, &errors[2]}) ==
        std::vector<std::vector<std::size_t>>{{0, 3}, {1}});
}

TEST_CASE("AutotuneError messages name the tunable, the kind and the reason", "[error]") {
  AutotuneError e(ErrorKind::out_of_resources, "needs 96 KiB local memory, device has 48 KiB",
                  "tiled-64");
  CHECK(std::string(e.what()) ==
        "'tiled-64': out of resources: needs 96 KiB local memory, device has 48 KiB");
  CHECK(e.named("other").tunable() == "tiled-64");
  CHECK(AutotuneError(ErrorKind::runtime, "x").named("n").tunable() == "n");
}

TEST_CASE("summaries use the median and the median absolute deviation", "[benchmark]") {
  const auto s = summarize({1, 2, 3, 4, 100});
  CHECK(s.median == 3);
  CHECK(s.spread == 1);
  CHECK(s.min == 1);
  CHECK(s.max == 100);
  CHECK(summarize({1, 2, 3, 4}).median == 2.5);
}

TEST_CASE("the progress hook sees every measured candidate with rising counts and the best so far",
          "[tuner][progress]") {
  Settings settings = test::test_settings();
  std::vector<TuningProgress> seen;
  std::vector<std::string> best_names;
  settings.on_progress = [&](const TuningProgress& p) {
    seen.push_back(p);
    best_names.emplace_back(p.best);  // the views are valid during the call only
  };
  LocalTuner<SizeKey> tuner("progress", settings);
  VirtualClient client;
  const auto& set = tuner.init([] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"slow", costs(3e-3, 0)})
        .with(Tunable{"fast", costs(1e-3, 1)})
        .with(Tunable{"broken", [](VirtualClient&, int&) -> int { throw std::runtime_error("x"); }})
        .with(Tunable{"middle", costs(2e-3, 2)});
  });
  run(tuner, client, set, 64);
  // One call per measured candidate, then one at the end (finished), with the winner.
  REQUIRE(seen.size() == 5);
  CHECK(seen.back().finished);
  CHECK(seen.back().done == 4);
  CHECK(best_names.back() == "fast");
  seen.pop_back();
  best_names.pop_back();
  for (std::size_t i = 0; i < seen.size(); ++i) {
    CHECK_FALSE(seen[i].finished);
    CHECK(seen[i].done == i + 1);
    CHECK(seen[i].total == 4);
    CHECK(seen[i].op == std::string_view("progress"));
    if (i > 0) CHECK(seen[i].elapsed_seconds >= seen[i - 1].elapsed_seconds);
  }
  CHECK(best_names.front() == "slow");
  CHECK(seen.front().best_seconds == Approx(3e-3));
  CHECK(best_names.back() == "fast");
  CHECK(seen.back().best_seconds == Approx(1e-3));

  run(tuner, client, set, 64);  // dispatch to the known winner: no tuning, no progress
  CHECK(seen.size() == 4);
}

TEST_CASE("the progress total of a searched space is its search budget", "[tuner][progress]") {
  Settings settings = test::test_settings();
  settings.search = SearchSettings{SearchStrategy::random, 0.0, 5, 1e9};
  std::vector<std::pair<std::size_t, std::size_t>> counts;  // done, total
  settings.on_progress = [&](const TuningProgress& p) {
    if (!p.finished) counts.emplace_back(p.done, p.total);
  };
  LocalTuner<SizeKey> tuner("progress space", settings);
  VirtualClient client;
  const auto& set = tuner.init([] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"baseline", costs(5e-3, -1)})
        .with(space("s").parameter("A", {1, 2, 3, 4}).parameter("B", {1, 2, 3, 4}),
              [](const Config& c) {
                return
                    [t = 1e-3 * static_cast<double>(c["A"] + c["B"])](VirtualClient& client, int&) {
                      client.spend(t);
                      return 0;
                    };
              });
  });
  run(tuner, client, set, 8);
  REQUIRE(counts.size() == 1 + 5);
  for (std::size_t i = 0; i < counts.size(); ++i) {
    CHECK(counts[i].first == i + 1);
    CHECK(counts[i].second == 6);
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

TEST_CASE("an input generator and a validator may take the client first", "[tuner][validation]") {
  LocalTuner<SizeKey> tuner("client_first", test::test_settings());
  VirtualClient client;
  int generated_with_client = 0, validated_with_client = 0;
  const auto& set = tuner.init([&] {
    auto inputs = [&](VirtualClient& c, const SizeKey& key, const int&) {
      generated_with_client += &c == &client;
      return std::tuple<int>(static_cast<int>(key.n.value()));
    };
    auto check = [&](VirtualClient& c, const int& reference, const int& output) {
      validated_with_client += &c == &client;
      return reference == output;
    };
    return TunableSet{key_of_size, inputs}
        .with(Tunable{"right",
                      [](VirtualClient& c, int& n) {
                        c.spend(2e-3);
                        return n;
                      }})
        .with(Tunable{"wrong",
                      [](VirtualClient& c, int& n) {
                        c.spend(1e-3);
                        return n + 1;
                      }})
        .validate_with(check);
  });
  CHECK(run(tuner, client, set, 100) == 100);
  CHECK(generated_with_client > 0);
  CHECK(validated_with_client > 0);
  const auto report = tuner.tuner(client.id()).report(SizeKey{100});
  REQUIRE(report);
  REQUIRE(report->outcomes.size() == 2);
  REQUIRE(report->outcomes[1].error);
  CHECK(report->outcomes[1].error->kind() == ErrorKind::wrong_output);
}

TEST_CASE("a named set takes .with() and the others, leaving itself as it was", "[tuner][set]") {
  const auto base = TunableSet{key_of_size, bench_inputs}.with(Tunable{"slow", costs(3e-3, 0)});
  const auto more = base.with(Tunable{"fast", costs(1e-3, 1)});
  const auto checked = more.validate_with([](int a, int b) { return a == b; }).share_inputs();
  CHECK(base.names() == std::vector<std::string>{"slow"});
  CHECK(more.names() == std::vector<std::string>{"slow", "fast"});
  CHECK(checked.size() == 2);
  CHECK(checked.shares_inputs());
  STATIC_REQUIRE(std::remove_cvref_t<decltype(checked)>::validates);
  LocalTuner<SizeKey> tuner("named_set", test::test_settings());
  VirtualClient client;
  const auto& set = tuner.init([&] { return more; });
  CHECK(run(tuner, client, set, 100) == 1);
}

TEST_CASE("a tunable can be left out of its set at run time with only_if", "[tuner][set]") {
  const bool has_fast = std::getenv("TUNEKIT_TEST_NO_SUCH_VARIABLE") != nullptr;  // false
  const auto make = [](bool with_fast) {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"slow", costs(3e-3, 0)})
        .with(Tunable{"fast", costs(1e-3, 1)}.only_if(with_fast))
        .with(Tunable{"middle", costs(2e-3, 2)});
  };
  const auto without = make(has_fast);
  const auto with = make(true);
  CHECK(without.size() == 2);
  CHECK(without.names() == std::vector<std::string>{"slow", "middle"});
  CHECK(without.locate(1).entry == 2);
  CHECK(without.checksum_text() != with.checksum_text());
  CHECK(without.checksum_text() == TunableSet{key_of_size, bench_inputs}
                                       .with(Tunable{"slow", costs(3e-3, 0)})
                                       .with(Tunable{"middle", costs(2e-3, 2)})
                                       .checksum_text());
  LocalTuner<SizeKey> tuner("only_if", test::test_settings());
  VirtualClient client;
  const auto& set = tuner.init([&] { return without; });
  CHECK(run(tuner, client, set, 100) == 2);
  const auto report = tuner.tuner(client.id()).report(SizeKey{100});
  REQUIRE(report);
  CHECK(report->outcomes.size() == 2);
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
