// Failures on a virtual clock: candidates that throw or fail, keys no candidate serves, and the
// fallback and demotion of a winner that fails on real inputs (engine/tuner.hpp recover, strike).
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <thread>
#include <tunekit/engine/retry_backoff.hpp>
#include <tunekit/tunekit.hpp>
#include <vector>

#include "../support.hpp"
#include "tuner_cases.hpp"

using namespace tunekit;
using namespace tunekit::test::tuner_cases;
using test::SizeKey;
using test::VirtualClient;

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
  // A summary folds what the device rules out into one line per reason; the full table lists it.
  CHECK_THAT(format_report(report),
             Catch::Contains("1 candidate not for this device (out of resources): 49152 bytes "
                             "local memory") &&
                 !Catch::Contains("FAILED"));
  CHECK_THAT(format_report(report, ReportDetail::full),
             Catch::Contains("FAILED (out of resources: 49152 bytes local memory)"));
}

TEST_CASE("a device's limits fold into one reason whatever the numbers' lengths",
          "[tuner][failure]") {
  // Numbers are masked whole, not digit by digit: 41984 and 132096 bytes are one limit.
  const auto outcome = [](std::string message) {
    AutotuneOutcome o;
    o.status = OutcomeStatus::failed;
    o.error = device_limit(std::move(message));
    return o;
  };
  const std::vector<AutotuneOutcome> outcomes{
      outcome("41984 bytes local memory needed, the device has 16384"),
      outcome("132096 bytes local memory needed, the device has 16384"),
      outcome("work-group of 64 work-items exceeds the device's 32"),
      outcome("work-group of 1024 work-items exceeds the device's 32")};
  std::vector<const AutotuneOutcome*> pointers;
  for (const auto& o : outcomes) pointers.push_back(&o);
  const auto folds =
      fold_reasons(pointers, [](const AutotuneOutcome& o) { return o.error->message(); });
  REQUIRE(folds.size() == 2);
  for (const auto& fold : folds) {
    CHECK(fold.outcomes.size() == 2);
    CHECK(fold.alike);
  }
}

TEST_CASE(
    "a key the device's limits rule out entirely fails for good, a driver's shortage does not",
    "[tuner][failure]") {
  // A limit (device_limit) meets every try: the failure is remembered. The same kind from a
  // driver may be memory that others hold for the moment: tried again after its back-off.
  for (const bool limit : {true, false}) {
    INFO((limit ? "the device's limit" : "the driver's out of resources"));
    LocalTuner<SizeKey> tuner(limit ? "ruled out" : "short of resources", test::test_settings());
    VirtualClient client;
    int calls = 0;
    const auto& set = tuner.init([&] {
      const auto refused = [limit, &calls](VirtualClient&, int&) -> int {
        ++calls;
        if (limit) throw device_limit("work-group of 64 work-items exceeds the device's 32");
        throw AutotuneError(ErrorKind::out_of_resources, "CL_OUT_OF_RESOURCES");
      };
      return TunableSet{key_of_size, bench_inputs}
          .with(Tunable{"a", refused})
          .with(Tunable{"b", refused});
    });
    std::string first;
    try {
      run(tuner, client, set, 8);
    } catch (const AutotuneError& e) {
      first = e.what();
      CHECK(e.kind() == ErrorKind::no_valid_candidate);
    }
    INFO(first);
    CHECK((first.find("a failure of the moment") == std::string::npos) == limit);
    const int after_first = calls;
    CHECK_THROWS_AS(run(tuner, client, set, 8), AutotuneError);
    if (limit) CHECK(calls == after_first);  // remembered: nothing runs again
  }
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
  // Named with the op and key: the caller's catch block needs nothing of its own.
  CHECK_THAT(text, Catch::Contains("the input generator failed in the tuning of bad generator [") &&
                       Catch::Contains("no memory for inputs"));
  CHECK_FALSE(tuner.tuner(client.id()).report(SizeKey{1}));
  CHECK(run(tuner, client, set, 1) == 0);  // the generator works again: so does the op
}

namespace {
// Two candidates that throw std::bad_alloc while `short_of_memory` (a failure of the moment),
// counting their calls in `calls`.
auto short_of_memory_set(const bool& short_of_memory, int& calls) {
  auto needs_memory = [&](double seconds, int index) {
    return [&short_of_memory, &calls, seconds, index](VirtualClient& c, int&) {
      ++calls;
      if (short_of_memory) throw std::bad_alloc();
      c.spend(seconds);
      return index;
    };
  };
  return TunableSet{key_of_size, bench_inputs}
      .with(Tunable{"a", needs_memory(1e-3, 0)})
      .with(Tunable{"b", needs_memory(2e-3, 1)});
}
}  // namespace

TEST_CASE("a failure of the moment is not remembered, but a call within its back-off does not tune",
          "[tuner][failure][retry]") {
  Settings settings = test::test_settings();
  settings.retry_seconds = 3600;  // no call of this test reaches it
  LocalTuner<SizeKey> tuner("moment", settings);
  VirtualClient client;
  bool short_of_memory = true;
  int calls = 0;
  const auto& set = tuner.init([&] { return short_of_memory_set(short_of_memory, calls); });
  const auto first = reason_of([&] { run(tuner, client, set, 1); }, ErrorKind::no_valid_candidate);
  CHECK_THAT(first, Catch::Contains("allocation") &&
                        Catch::Contains("the key is tuned again by its first call after 3600 s"));
  const int tuned = calls;
  CHECK(tuned > 0);
  short_of_memory = false;  // too early: the failure is thrown again at once, nothing runs
  const auto again = reason_of([&] { run(tuner, client, set, 1); }, ErrorKind::no_valid_candidate);
  CHECK_THAT(again, Catch::Contains("allocation") &&
                        Catch::Contains("tuned again by its first call after"));
  CHECK_THROWS_AS(tuner.tuner(client.id()).winner(client, set, SizeKey{1}, calls), AutotuneError);
  CHECK(calls == tuned);
  CHECK(run(tuner, client, set, 2) == 0);   // another key is not held back
  tuner.tuner(client.id()).clear_memory();  // a fresh start forgets the back-off too
  CHECK(run(tuner, client, set, 1) == 0);
}

TEST_CASE("a failure of the moment is tuned again after its back-off, which doubles up to its cap",
          "[tuner][failure][retry]") {
  Settings settings = test::test_settings();
  settings.retry_seconds = 0.01;
  settings.retry_max_seconds = 0.04;
  LocalTuner<SizeKey> tuner("moment again", settings);
  VirtualClient client;
  bool short_of_memory = true;
  int calls = 0;
  const auto& set = tuner.init([&] { return short_of_memory_set(short_of_memory, calls); });
  const auto after_back_off = [] { std::this_thread::sleep_for(std::chrono::milliseconds(60)); };
  for (const char* wait : {"10 ms", "20 ms", "40 ms", "40 ms"}) {
    const int before = calls;
    const auto text = reason_of([&] { run(tuner, client, set, 1); }, ErrorKind::no_valid_candidate);
    CHECK(calls > before);  // tuned again
    CHECK_THAT(text, Catch::Contains(std::string("its first call after ") + wait + ")"));
    after_back_off();
  }
  short_of_memory = false;
  CHECK(run(tuner, client, set, 1) == 0);
}

TEST_CASE(
    "a key's back-off starts at the first delay, doubles per failure in a row, stops at its cap, "
    "and a decision resets it",
    "[tuner][failure][retry]") {
  using detail::RetryBackoff;
  using std::chrono::seconds;
  RetryBackoff retries(seconds(1), seconds(5));
  const RetryBackoff::Clock::time_point t0{};
  const AutotuneError failure(ErrorKind::no_valid_candidate, "no candidate works", {},
                              {AutotuneError(ErrorKind::allocation, "std::bad_alloc", "a")});
  CHECK_FALSE(retries.any());
  CHECK_FALSE(retries.waiting("n=1", t0));
  const AutotuneError thrown = retries.failed("n=1", failure, t0);
  CHECK(thrown.kind() == ErrorKind::no_valid_candidate);
  CHECK(thrown.causes().size() == 1);
  CHECK_THAT(thrown.message(),
             Catch::StartsWith("no candidate works (") && Catch::Contains("first call after 1 s"));
  CHECK(retries.any());
  REQUIRE(retries.waiting("n=1", t0 + std::chrono::milliseconds(750)));
  CHECK_THAT(retries.waiting("n=1", t0 + std::chrono::milliseconds(750))->message(),
             Catch::Contains("after 250 ms"));
  CHECK_FALSE(retries.waiting("n=2", t0));  // per key
  CHECK_FALSE(retries.waiting("n=1", t0 + seconds(1)));
  CHECK_THROWS_AS(retries.throw_if_waiting("n=1", t0), AutotuneError);
  CHECK_NOTHROW(retries.throw_if_waiting("n=1", t0 + seconds(1)));
  const auto delays = [&](int failures) {
    std::vector<long> seen;
    auto now = t0 + seconds(100);
    for (int i = 0; i < failures; ++i) {
      retries.failed("n=1", failure, now);
      seen.push_back(std::chrono::duration_cast<seconds>(retries.delay("n=1")).count());
      now += seconds(10);
    }
    return seen;
  };
  CHECK(delays(4) == std::vector<long>{2, 4, 5, 5});
  retries.forget("n=1");
  CHECK_FALSE(retries.any());
  CHECK(delays(2) == std::vector<long>{1, 2});
  retries.clear();
  CHECK_FALSE(retries.waiting("n=1", t0 + seconds(100)));
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

TEST_CASE("a winner that refuses a call's inputs falls back without a strike towards demotion",
          "[tuner][fallback]") {
  // As fussy_set, but "fussy" declares 1000 past it (unsupported_inputs) instead of failing,
  // once by throwing and once through a Result.
  for (const bool through_result : {false, true}) {
    INFO((through_result ? "returned as a Failure" : "thrown"));
    LocalTuner<SizeKey> tuner(through_result ? "refusal returned" : "refusal thrown",
                              test::test_settings());
    VirtualClient client;
    const auto& set = tuner.init([through_result] {
      return TunableSet{key_of_size, bench_inputs}
          .with(Tunable{"general", costs(3e-3, 0)})
          .with(Tunable{"fussy",
                        [through_result](VirtualClient& c, int& n) -> Result<int> {
                          if (n % 1024 != 0) {
                            auto refusal = unsupported_inputs("needs multiples of 1024");
                            if (through_result) return Failure{refusal};
                            throw refusal;
                          }
                          c.spend(1e-3);
                          return 1;
                        }})
          .with(Tunable{"decent", costs(2e-3, 2)});
    });
    for (unsigned i = 0; i <= demote_after_failures; ++i) {
      CHECK(run(tuner, client, set, 1000) == 2);  // served by the next-ranked
      CHECK(run(tuner, client, set, 1024) == 1);  // the winner keeps its place
    }
    const auto refusal = unsupported_inputs("past it");
    CHECK(refusal.kind() == ErrorKind::launch);
    CHECK(refusal.named("fussy").refused_inputs());
    CHECK_FALSE(AutotuneError(ErrorKind::launch, "failed").refused_inputs());
  }
}

TEST_CASE("a winner that fails after changing the call's outputs in place fails the call",
          "[tuner][fallback]") {
  // A GEMM under beta != 0 whose second kernel fails after the first updated C: another
  // candidate would compute from the updated C and hand back a wrong result.
  LocalTuner<SizeKey> tuner("outputs changed", test::test_settings());
  VirtualClient client;
  int other_calls = 0;
  const auto& set = tuner.init([&] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"changes then fails",
                      [](VirtualClient& c, int& n) -> int {
                        if (n % 1024 != 0) {
                          throw outputs_changed(
                              AutotuneError(ErrorKind::launch, "the second kernel failed"));
                        }
                        c.spend(1e-3);
                        return 1;
                      }})
        .with(Tunable{"other", [&other_calls](VirtualClient& c, int&) {
                        ++other_calls;
                        c.spend(2e-3);
                        return 2;
                      }});
  });
  CHECK(run(tuner, client, set, 1024) == 1);
  const int after_tuning = other_calls;
  CHECK_THROWS_WITH(run(tuner, client, set, 1000), Catch::Contains("the second kernel failed"));
  CHECK(other_calls == after_tuning);         // no other candidate ran on the changed outputs
  CHECK(run(tuner, client, set, 1024) == 1);  // the ranking is untouched
  const auto marked = outputs_changed(AutotuneError(ErrorKind::runtime, "x"));
  CHECK(marked.changed_outputs());
  CHECK(marked.named("a").changed_outputs());
  CHECK_FALSE(AutotuneError(ErrorKind::runtime, "x").changed_outputs());
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

TEST_CASE("a plain key type that is a NaN is an invalid-key error, not a new tuning every call",
          "[tuner][failure]") {
  static_assert(AutotuneKey<double>);  // a key that is not a reflected struct
  LocalTuner<double> tuner("nan plain key", test::test_settings());
  VirtualClient client;
  int generated = 0;
  const auto& set = tuner.init([&] {
    return TunableSet{[](const double& x) { return x; },
                      [&](const double&, const double& x) { return ++generated, std::tuple(x); }}
        .with(Tunable{"a", [](VirtualClient& c, double& x) { return c.spend(1e-3), x; }})
        .with(Tunable{"b", [](VirtualClient& c, double& x) { return c.spend(2e-3), x; }})
        .share_inputs();
  });
  CHECK(tuner.execute(client.id(), client, set, 0.5) == 0.5);
  CHECK(generated == 1);
  for (int i = 0; i < 3; ++i) {
    const auto text = reason_of([&] { tuner.execute(client.id(), client, set, std::nan("")); },
                                ErrorKind::invalid_key);
    CHECK_THAT(text, Catch::Contains("does not equal itself"));
  }
  CHECK(generated == 1);
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

TEST_CASE("a validator that throws is the caller's error: no candidate fails, nothing is kept",
          "[tuner][failure][validation]") {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("tunekit-validator-throws-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  Settings settings = test::test_settings();
  settings.persistent_cache = true;
  settings.cache_dir = dir;
  bool validator_broken = true;
  const auto make = [&] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"a", costs(2e-3, 0)})
        .with(Tunable{"b", costs(1e-3, 0)})
        .validate_with([&](int expected, int got) {
          if (validator_broken) throw std::runtime_error("validator bug");
          return expected == got;
        });
  };
  VirtualClient client;
  {
    LocalTuner<SizeKey> tuner("throwing validator", settings);
    const auto& set = tuner.init(make);
    const auto text = reason_of([&] { run(tuner, client, set, 8); }, ErrorKind::runtime);
    CHECK_THAT(text, Catch::Contains("the validator failed") && Catch::Contains("validator bug"));
    CHECK_FALSE(tuner.tuner(client.id()).report(SizeKey{8}));
  }
  validator_broken = false;  // fixed: a new program (another tuner, the same cache) tunes
  LocalTuner<SizeKey> fixed("throwing validator", settings);
  const auto& set = fixed.init(make);
  CHECK(run(fixed, client, set, 8) == 0);
  CHECK(last_call().path == CallPath::tuned);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a priority function that throws is the caller's error, not its candidate's",
          "[tuner][failure][priority]") {
  LocalTuner<SizeKey> tuner("throwing priority", test::test_settings());
  VirtualClient client;
  const TuneGroup<SizeKey> broken(
      "broken", [](const SizeKey&) -> int { throw std::runtime_error("priority bug"); });
  const auto& set = tuner.init([&] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"a", costs(2e-3, 0)})
        .with(Tunable{"b", costs(1e-3, 1)}.group(broken));
  });
  const auto text = reason_of([&] { run(tuner, client, set, 8); }, ErrorKind::runtime);
  CHECK_THAT(text,
             Catch::Contains("the priority of 'b' failed") && Catch::Contains("priority bug"));
  CHECK_FALSE(tuner.tuner(client.id()).report(SizeKey{8}));
}

TEST_CASE("a candidate calling its own op for a new key fails, naming why, instead of a deadlock",
          "[tuner][failure]") {
  LocalTuner<SizeKey> tuner("calls itself", test::test_settings());
  VirtualClient client;
  std::function<void(VirtualClient&, int&)> call_own_op;
  const auto& set = tuner.init([&] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"plain", costs(2e-3, 0)})
        .with(Tunable{"recursive", [&](VirtualClient& c, int& n) {
                        int twice = 2 * n;  // another key: it would be tuned within this tuning
                        call_own_op(c, twice);
                        c.spend(1e-3);
                        return 1;
                      }});
  });
  call_own_op = [&](VirtualClient& c, int& m) { (void)tuner.execute(c.id(), c, set, m); };
  CHECK(run(tuner, client, set, 8) == 0);  // 'plain' wins; 'recursive' failed, saying why
  const auto report = tuner.tuner(client.id()).report(SizeKey{8});
  REQUIRE(report);
  const AutotuneOutcome* recursive = report->outcome("recursive");
  REQUIRE(recursive);
  REQUIRE(recursive->error);
  CHECK_THAT(recursive->error->message(), Catch::Contains("from within its own tuning"));
}

TEST_CASE("a candidate calling another op of the same name for a new key fails, naming why",
          "[tuner][failure]") {
  // Two LocalTuners of one name (a template's per-type statics, say) share their keys' tuning
  // locks in a store: the nested tuning would wait for the outer one on its own thread.
  LocalTuner<SizeKey> outer("one name", test::test_settings());
  LocalTuner<SizeKey> inner("one name", test::test_settings());
  VirtualClient client;
  const auto& inner_set = inner.init([] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"a", costs(2e-3, 0)})
        .with(Tunable{"b", costs(1e-3, 0)});
  });
  const auto& set = outer.init([&] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"plain", costs(2e-3, 0)})
        .with(Tunable{"nested", [&](VirtualClient& c, int& n) {
                        (void)inner.execute(c.id(), c, inner_set, n);
                        c.spend(1e-3);
                        return 1;
                      }});
  });
  CHECK(run(outer, client, set, 8) == 0);  // 'plain' wins; 'nested' failed, saying why
  const auto report = outer.tuner(client.id()).report(SizeKey{8});
  REQUIRE(report);
  const AutotuneOutcome* nested = report->outcome("nested");
  REQUIRE(nested);
  REQUIRE(nested->error);
  CHECK_THAT(nested->error->message(),
             Catch::Contains("another op of the same name") && Catch::Contains("must be unique"));
  CHECK(run(inner, client, inner_set, 8) == 0);  // outside a tuning: it tunes
}

TEST_CASE("which failures may pass: the kinds of the moment, never the device's limits",
          "[failure][retry]") {
  using detail::lasting;
  using detail::of_the_moment;
  const std::set<ErrorKind> of_moment = {ErrorKind::allocation, ErrorKind::out_of_resources,
                                         ErrorKind::device,     ErrorKind::cache,
                                         ErrorKind::settings,   ErrorKind::invalid_measurement};
  for (int k = 0; k <= static_cast<int>(ErrorKind::invalid_key); ++k) {
    const auto kind = static_cast<ErrorKind>(k);
    CAPTURE(to_string(kind));
    const AutotuneError failure(kind, "a candidate's failure");
    CHECK(of_the_moment(failure) == (of_moment.count(kind) == 1));
    // A tuning whose every candidate failed so is stored only when no cause may pass.
    const AutotuneError all_failed(ErrorKind::no_valid_candidate, "every candidate failed", "",
                                   {failure, AutotuneError(ErrorKind::build, "a build error")});
    CHECK(lasting(all_failed) == (of_moment.count(kind) == 0));
  }
  // The device's limit is met by every try, whatever its kind.
  CHECK_FALSE(of_the_moment(device_limit("work-group of 512 exceeds the device's 256")));
  CHECK(lasting(AutotuneError(ErrorKind::no_valid_candidate, "every candidate failed", "",
                              {device_limit("work-group of 512 exceeds the device's 256")})));
  CHECK_FALSE(lasting(AutotuneError(ErrorKind::no_valid_candidate, "nothing to say")));
}
