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

TEST_CASE("a candidate right on its first call only is checked again after its samples, and fails",
          "[tuner][validation]") {
  // "stateful" leaves state behind (a counter it never resets): right on its first call, one
  // off on every later one. It is faster, and would win on its first call's check alone.
  LocalTuner<SizeKey> tuner("right once", test::test_settings());
  VirtualClient client;
  auto calls = std::make_shared<int>(0);
  const auto& set = tuner.init([&] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"exact", test::adds<VirtualClient>(0, 2e-3)})
        .with(Tunable{"stateful",
                      [calls](VirtualClient& c, int& n) {
                        c.spend(1e-3);
                        return n + (++*calls > 1 ? 1 : 0);
                      }})
        .validate_with(std::equal_to<>{});
  });
  CHECK(tuner.execute(client.id(), client, set, 64) == 64);
  const auto report = tuner.tuner(client.id()).report(SizeKey{64});
  REQUIRE(report);
  INFO(format_report(*report));
  CHECK(report->winner()->name == "exact");
  for (const auto& outcome : report->outcomes) {
    if (outcome.name != "stateful") continue;
    REQUIRE(outcome.error);
    CHECK(outcome.error->kind() == ErrorKind::wrong_output);
    CHECK_THAT(outcome.error->message(), Catch::Contains("right on its first call"));
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

// Shared inputs (share_inputs) whose output is a buffer: a handle that every copy of the inputs
// shares, as a device buffer is. The output starts as zeros; `right` writes 2x everywhere,
// `skips` (faster) writes only its first element.
namespace {
using Buffer = std::shared_ptr<std::vector<int>>;
using BufferInputs = std::tuple<Buffer, Buffer>;  // x, y
BufferInputs buffer_inputs(const SizeKey& key, const int&) {
  const auto n = static_cast<std::size_t>(key.n.value());
  auto x = std::make_shared<std::vector<int>>(n);
  for (std::size_t i = 0; i < n; ++i) (*x)[i] = static_cast<int>(i) + 1;
  return {x, std::make_shared<std::vector<int>>(n, 0)};
}
void times(VirtualClient& c, int factor, bool all, Buffer& x, Buffer& y) {
  c.spend(all ? 3e-3 : 1e-3);
  for (std::size_t i = 0; i < (all ? x->size() : 1); ++i) (*y)[i] = factor * (*x)[i];
}
auto right = [](VirtualClient& c, Buffer& x, Buffer& y) { times(c, 2, true, x, y); };
auto skips = [](VirtualClient& c, Buffer& x, Buffer& y) { times(c, 2, false, x, y); };
auto same_y = [](const BufferInputs& expected, const BufferInputs& got) {
  return *std::get<1>(expected) == *std::get<1>(got);
};
// The caller's own buffers after one execute of `set` at size n.
template <class Set>
std::vector<int> caller_output(LocalTuner<SizeKey>& tuner, VirtualClient& client, const Set& set,
                               std::size_t n) {
  auto [x, y] = buffer_inputs(SizeKey{n}, 0);
  tuner.execute(client.id(), client, set, x, y);
  return *y;
}
}  // namespace

TEST_CASE("on shared inputs, a candidate that leaves its output unwritten fails validation",
          "[tuner][validation]") {
  VirtualClient client;
  auto key_of = [](const Buffer& x, const Buffer&) { return SizeKey{x->size()}; };
  auto inputs = [](const SizeKey& key, const Buffer&, const Buffer&) {
    return buffer_inputs(key, 0);
  };
  auto expected = [](const Buffer& x, const Buffer&) {
    auto y = std::make_shared<std::vector<int>>(x->size());
    for (std::size_t i = 0; i < x->size(); ++i) (*y)[i] = 2 * (*x)[i];
    return BufferInputs{x, y};
  };
  std::vector<int> want(64);
  for (int i = 0; i < 64; ++i) want[i] = 2 * (i + 1);
  // Tunes `right` against the faster `skips` on shared inputs made by `make`, validated by
  // `validator`: the caller gets right's output, and right wins.
  auto right_wins = [&](const char* op, auto make, auto validator) {
    LocalTuner<SizeKey> tuner(op, test::test_settings());
    const auto& set = tuner.init([&] {
      return TunableSet{key_of, make}
          .with(Tunable{"right", right})
          .with(Tunable{"skips", skips})
          .validate_with(validator)
          .share_inputs();
    });
    CHECK(caller_output(tuner, client, set, 64) == want);
    CHECK(tuner.tuner(client.id()).report(SizeKey{64})->winner()->name == "right");
  };
  SECTION("a candidate reference: validated on fresh inputs") {
    right_wins("stale outputs, candidate reference", inputs, same_y);
  }
  SECTION("a host reference without a clear step: validated on fresh inputs") {
    right_wins("stale outputs, host reference", inputs, HostReference{expected, same_y});
  }
  SECTION("a host reference that clears the outputs: validated on the shared inputs") {
    auto made = std::make_shared<int>(0);
    right_wins(
        "stale outputs, cleared",
        [inputs, made](const SizeKey& key, const Buffer& x, const Buffer& y) {
          ++*made;
          return inputs(key, x, y);
        },
        HostReference{expected, same_y,
                      [](Buffer&, Buffer& y) { std::fill(y->begin(), y->end(), -1); }});
    CHECK(*made == 1);  // one shared set, no fresh ones
  }
}

TEST_CASE("on shared inputs, a candidate that returns its unwritten output buffer fails validation",
          "[tuner][validation]") {
  // As above, but the candidates return a handle to their output (as a cl::Buffer would be):
  // the stale output of the candidate before is then what `skips` returns.
  VirtualClient client;
  auto key_of = [](const Buffer& x, const Buffer&) { return SizeKey{x->size()}; };
  auto inputs = [](const SizeKey& key, const Buffer&, const Buffer&) {
    return buffer_inputs(key, 0);
  };
  auto right_out = [](VirtualClient& c, Buffer& x, Buffer& y) { return right(c, x, y), y; };
  auto skips_out = [](VirtualClient& c, Buffer& x, Buffer& y) { return skips(c, x, y), y; };
  auto same = [](const Buffer& expected, const Buffer& got) { return *expected == *got; };
  auto expected = [](const Buffer& x, const Buffer&) {
    auto y = std::make_shared<std::vector<int>>(x->size());
    for (std::size_t i = 0; i < x->size(); ++i) (*y)[i] = 2 * (*x)[i];
    return y;
  };
  std::vector<int> want(64);
  for (int i = 0; i < 64; ++i) want[i] = 2 * (i + 1);
  auto right_wins = [&](const char* op, auto validator) {
    LocalTuner<SizeKey> tuner(op, test::test_settings());
    const auto& set = tuner.init([&] {
      return TunableSet{key_of, inputs}
          .with(Tunable{"right", right_out})
          .with(Tunable{"skips", skips_out})
          .validate_with(validator)
          .share_inputs();
    });
    auto [x, y] = buffer_inputs(SizeKey{64}, 0);
    CHECK(*tuner.execute(client.id(), client, set, x, y) == want);
    CHECK(tuner.tuner(client.id()).report(SizeKey{64})->winner()->name == "right");
  };
  SECTION("a candidate reference: validated on fresh inputs") {
    right_wins("stale handle, candidate reference", same);
  }
  SECTION("a host reference that clears the outputs: validated on the shared inputs") {
    right_wins("stale handle, cleared", HostReference{expected, same, [](Buffer&, Buffer& y) {
                                                        std::fill(y->begin(), y->end(), -1);
                                                      }});
  }
}

// Two candidates that are wrong in different ways must not "agree" because the first one's kept
// output is a handle to the shared output that the second then overwrote.
TEST_CASE("on shared inputs, two wrong candidates are not taken to agree against the reference",
          "[tuner][validation]") {
  VirtualClient client;
  LocalTuner<SizeKey> tuner("two wrong ones", test::test_settings());
  auto key_of = [](const Buffer& x, const Buffer&) { return SizeKey{x->size()}; };
  const auto& set = tuner.init([&] {
    return TunableSet{key_of, [](const SizeKey& key, const Buffer&,
                                 const Buffer&) { return buffer_inputs(key, 0); }}
        .with(Tunable{"2x", right})
        .with(
            Tunable{"3x", [](VirtualClient& c, Buffer& x, Buffer& y) { times(c, 3, true, x, y); }})
        .with(
            Tunable{"4x", [](VirtualClient& c, Buffer& x, Buffer& y) { times(c, 4, true, x, y); }})
        .validate_with(same_y)
        .share_inputs();
  });
  std::vector<int> want(16);
  for (int i = 0; i < 16; ++i) want[i] = 2 * (i + 1);
  CHECK(caller_output(tuner, client, set, 16) == want);
  const auto report = *tuner.tuner(client.id()).report(SizeKey{16});
  CHECK(report.winner()->name == "2x");
  for (const auto& o : report.outcomes) {
    if (o.name == "2x") continue;
    REQUIRE(o.error);
    CHECK(o.error->kind() == ErrorKind::wrong_output);
  }
}

TEST_CASE(
    "an input generator that fails while the reference is made ends the tuning, no check "
    "skipped",
    "[tuner][validation]") {
  // It fails once, briefly, on the first fresh inputs the reference needs. Before, that
  // candidate-reference attempt swallowed it: no reference, every candidate passed unchecked,
  // and the fast wrong one won (and was stored).
  LocalTuner<SizeKey> tuner("reference inputs fail", test::test_settings());
  VirtualClient client;
  auto calls = std::make_shared<int>(0);
  const auto& set = tuner.init([calls] {
    return TunableSet{key_of_size,
                      [calls](const SizeKey& key, const int&) {
                        if (++*calls == 2) throw std::bad_alloc();
                        return std::tuple<int>(static_cast<int>(key.n.value()));
                      }}
        .with(Tunable{"slow right", [](VirtualClient& c, int& n) { return c.spend(3e-3), n * 2; }})
        .with(Tunable{"fast wrong",
                      [](VirtualClient& c, int& n) { return c.spend(1e-3), n * 2 + 1; }})
        .validate_with([](int expected, int got) { return expected == got; });
  });
  CHECK_THAT(reason_of([&] { run(tuner, client, set, 8); }, ErrorKind::allocation),
             Catch::Contains("the input generator failed"));
  CHECK(run(tuner, client, set, 8) == 16);  // tuned again: the wrong one fails its check
  CHECK(tuner.tuner(client.id()).report(SizeKey{8})->winner()->name == "slow right");
}

TEST_CASE("where no candidate ran for the reference, the first that runs is the reference",
          "[tuner][validation]") {
  // The reference is made before the first candidate is measured: here every candidate fails
  // then (their first call). Before, no reference meant no check at all.
  LocalTuner<SizeKey> tuner("no reference at first", test::test_settings());
  VirtualClient client;
  const auto flaky = [](int wrong_by, double seconds) {
    return [first = std::make_shared<bool>(true), wrong_by, seconds](VirtualClient& c, int& n) {
      if (std::exchange(*first, false)) throw std::runtime_error("not ready yet");
      return c.spend(seconds), n * 2 + wrong_by;
    };
  };
  const auto& set = tuner.init([&] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"right", flaky(0, 3e-3)})
        .with(Tunable{"fast wrong", flaky(1, 1e-3)})
        .validate_with([](int expected, int got) { return expected == got; });
  });
  CHECK(run(tuner, client, set, 8) == 16);
  const auto report = *tuner.tuner(client.id()).report(SizeKey{8});
  INFO(format_report(report));
  CHECK(report.winner()->name == "right");
}

TEST_CASE("two candidates of one name are refused when the set is made, naming the name",
          "[tuner][validation]") {
  LocalTuner<SizeKey> tuner("twins", test::test_settings());
  const auto make = [] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"x", [](VirtualClient& c, int& n) { return c.spend(3e-3), n * 2; }})
        .with(Tunable{"x", [](VirtualClient& c, int& n) { return c.spend(1e-3), n * 2 + 1; }});
  };
  try {
    (void)tuner.init(make);
    FAIL("a set with twins was accepted");
  } catch (const std::invalid_argument& e) {
    CHECK_THAT(e.what(),
               Catch::Contains("'twins'") && Catch::Contains("two candidates are named 'x'"));
  }
}
