// The tunable set: named sets, candidates left out, the checksum (tunable_set.hpp).
#include <catch2/catch.hpp>
#include <tunekit/tunekit.hpp>

#include "../support.hpp"
#include "tuner_cases.hpp"

using namespace tunekit;
using namespace tunekit::test::tuner_cases;
using test::SizeKey;
using test::VirtualClient;

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

TEST_CASE("a set's version is in its checksum, kept through later calls, and empty adds nothing",
          "[tuner][set]") {
  const auto make = [] {
    return TunableSet{key_of_size, bench_inputs}.with(Tunable{"a", costs(1, 0)});
  };
  const auto h = [](const auto& s) { return stable_hash(s.checksum_text()); };
  CHECK(h(make().version("")) == h(make()));
  CHECK(h(make().version("2")) != h(make()));
  CHECK(h(make().version("2")) != h(make().version("3")));
  const auto versioned = make().version("2");
  CHECK(versioned.version() == "2");
  // Set after the candidates or before more of them, through validate_with: the same text.
  const auto later = TunableSet{key_of_size, bench_inputs}
                         .version("2")
                         .with(Tunable{"a", costs(1, 0)})
                         .validate_with([](int a, int b) { return a == b; });
  CHECK(later.version() == "2");
  CHECK(h(later) == h(versioned));
  CHECK(versioned.with(Tunable{"b", costs(1, 1)}).version() == "2");  // a named set's copy
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

TEST_CASE("a set whose every candidate only_if left out fails at once on every call, naming why",
          "[tuner][set]") {
  LocalTuner<SizeKey> tuner("all left out", test::test_settings());
  VirtualClient client;
  const auto& set = tuner.init([] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"a", costs(1e-3, 0)}.only_if(false))
        .with(Tunable{"b", costs(2e-3, 1)}.only_if(false));
  });
  REQUIRE(set.size() == 0);
  for (int call = 0; call < 2; ++call) {  // the same on the next call: no back-off to wait for
    const std::string why =
        reason_of([&] { run(tuner, client, set, 8); }, ErrorKind::no_valid_candidate);
    CHECK_THAT(why, Catch::Contains("'all left out' is empty") &&
                        Catch::Contains("every candidate's only_if was false") &&
                        !Catch::Contains("again"));
  }
  CHECK_FALSE(tuner.tuner(client.id()).report(SizeKey{8}));  // nothing was tuned
}
