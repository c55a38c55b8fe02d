// Validation at tuning time: candidates compared with the reference (tunable_set.hpp
// validate_with, engine/tuning_run.hpp).
#include <catch2/catch.hpp>
#include <map>
#include <tunekit/tunekit.hpp>

#include "../support.hpp"
#include "tuner_cases.hpp"

using namespace tunekit;
using namespace tunekit::test::tuner_cases;
using test::SizeKey;
using test::VirtualClient;

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
