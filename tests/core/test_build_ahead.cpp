// Building ahead: the tuner prepares (builds) the candidates it is about to measure on a small
// pool of threads (BuildPool, BuildAhead), and measures in the same order with the same result.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <tunekit/engine/build_pool.hpp>
#include <tunekit/tunekit.hpp>
#include <vector>

#include "../support.hpp"

using namespace tunekit;
using test::SizeKey;
using test::VirtualClient;

namespace {

// What happened to the candidates, in order, from every thread.
struct Events {
  std::mutex mutex;
  std::vector<std::string> lines;  // "prepared 3", "called 3"
  void add(std::string line) {
    std::lock_guard lock(mutex);
    lines.push_back(std::move(line));
  }
  std::size_t count(const std::string& line) {
    std::lock_guard lock(mutex);
    return static_cast<std::size_t>(std::count(lines.begin(), lines.end(), line));
  }
  // Whether `first` happened, and before `second` (which must have happened).
  bool before(const std::string& first, const std::string& second) {
    std::lock_guard lock(mutex);
    const auto a = std::find(lines.begin(), lines.end(), first);
    const auto b = std::find(lines.begin(), lines.end(), second);
    return a != lines.end() && b != lines.end() && a < b;
  }
};

// A candidate with something to build: prepare() is called on the pool's threads.
struct Preparing {
  double seconds;
  int id;
  std::shared_ptr<Events> events;
  bool prepare_throws = false;
  int operator()(VirtualClient& client, int&) const {
    events->add("called " + std::to_string(id));
    client.spend(seconds);
    return id;
  }
  void prepare(VirtualClient&, const int&) const {
    if (prepare_throws) throw std::runtime_error("cannot build");
    events->add("prepared " + std::to_string(id));
  }
};
static_assert(Preparable<Preparing, VirtualClient, int>);

auto key_of_size = [](const int& n) { return SizeKey{static_cast<std::uint64_t>(n)}; };
auto bench_inputs = [](const SizeKey& key, const int&) {
  return std::tuple<int>(static_cast<int>(key.n.value()));
};

Settings with_threads(std::size_t threads) {
  Settings s = test::test_settings();
  s.build_threads = threads;
  return s;
}

// Six single candidates; the fifth is the fastest. `throwing`: the id whose prepare throws.
auto single_set(const std::shared_ptr<Events>& events, int throwing = -1) {
  auto candidate = [&](double seconds, int id) {
    return Tunable{"c" + std::to_string(id), Preparing{seconds, id, events, id == throwing}};
  };
  return TunableSet{key_of_size, bench_inputs}
      .with(candidate(6e-3, 0))
      .with(candidate(5e-3, 1))
      .with(candidate(4e-3, 2))
      .with(candidate(3e-3, 3))
      .with(candidate(1e-3, 4))
      .with(candidate(2e-3, 5));
}

// A space's candidates: configuration (A, B) costs A + B ms and has the id 10 A + B.
auto preparing_configs(const std::shared_ptr<Events>& events) {
  return [events](const Config& c) {
    return Preparing{1e-3 * static_cast<double>(c["A"] + c["B"]),
                     static_cast<int>(10 * c["A"] + c["B"]), events};
  };
}

// Tunes key 16 over `s` (preparing_configs' candidates) on 2 build threads with `search`.
int tune_space(const std::shared_ptr<Events>& events, SearchSettings search, Space s) {
  Settings settings = with_threads(2);
  settings.search = search;
  LocalTuner<SizeKey> tuner("ahead " + std::string(to_string(search.strategy)), settings);
  VirtualClient client;
  const auto& set = tuner.init([&] {
    return TunableSet{key_of_size, bench_inputs}.with(std::move(s), preparing_configs(events));
  });
  return tuner.execute(client.id(), client, set, 16);
}

std::vector<std::string> outcome_lines(const TuningReport& report) {
  std::vector<std::string> lines;
  for (const auto& o : report.outcomes) {
    lines.push_back(o.name + " " + std::string(to_string(o.status)));
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

}  // namespace

TEST_CASE("with build threads, each candidate is prepared once, before it is measured",
          "[tuner][build-ahead]") {
  auto events = std::make_shared<Events>();
  LocalTuner<SizeKey> tuner("ahead", with_threads(2));
  VirtualClient client;
  const auto& set = tuner.init([&] { return single_set(events); });
  CHECK(tuner.execute(client.id(), client, set, 64) == 4);
  for (int id = 0; id < 6; ++id) {
    const std::string n = std::to_string(id);
    CHECK(events->count("prepared " + n) == 1);
    CHECK(events->before("prepared " + n, "called " + n));
  }
}

TEST_CASE("building ahead gives the outcomes of building in the calls", "[tuner][build-ahead]") {
  std::vector<std::vector<std::string>> outcomes;
  for (std::size_t threads : {0, 1, 3}) {
    auto events = std::make_shared<Events>();
    LocalTuner<SizeKey> tuner("same outcomes", with_threads(threads));
    VirtualClient client;
    const auto& set = tuner.init([&] { return single_set(events); });
    CHECK(tuner.execute(client.id(), client, set, 64) == 4);
    outcomes.push_back(outcome_lines(*tuner.tuner(client.id()).report(SizeKey{64})));
    // Without build threads nothing is prepared: the calls build what they need.
    CHECK(events->count("prepared 0") == (threads == 0 ? 0 : 1));
  }
  CHECK(outcomes[0] == outcomes[1]);
  CHECK(outcomes[0] == outcomes[2]);
}

TEST_CASE("a preparation that throws stops nothing: the candidate's call decides",
          "[tuner][build-ahead]") {
  auto events = std::make_shared<Events>();
  LocalTuner<SizeKey> tuner("throwing prepare", with_threads(2));
  VirtualClient client;
  const auto& set = tuner.init([&] { return single_set(events, 4); });
  CHECK(tuner.execute(client.id(), client, set, 64) == 4);
  const auto report = tuner.tuner(client.id()).report(SizeKey{64});
  REQUIRE(report);
  for (const auto& o : report->outcomes) CHECK(o.status != OutcomeStatus::failed);
}

TEST_CASE("an exhaustive search prepares what it measures before measuring it",
          "[tuner][build-ahead]") {
  auto events = std::make_shared<Events>();
  CHECK(tune_space(
            events, SearchSettings{SearchStrategy::exhaustive, 1.0, 1, 1e9},
            space("s").parameter("A", {1, 2, 3}).parameter("B", {1, 2, 3}).start_at("A=2,B=2")) ==
        11);
  std::size_t measured = 0;
  for (int a = 1; a <= 3; ++a) {
    for (int b = 1; b <= 3; ++b) {
      const std::string n = std::to_string(10 * a + b);
      if (events->count("called " + n) == 0) continue;
      ++measured;
      CHECK(events->count("prepared " + n) == 1);
      CHECK(events->before("prepared " + n, "called " + n));
    }
  }
  CHECK(measured == 9);
}

TEST_CASE("an annealing search prepares its start points", "[tuner][build-ahead]") {
  auto events = std::make_shared<Events>();
  (void)tune_space(events, SearchSettings{SearchStrategy::annealing, 0.0, 6, 1e9},
                   space("s")
                       .parameter("A", {1, 2, 3, 4})
                       .parameter("B", {1, 2, 3, 4})
                       .start_at("A=3,B=3")
                       .start_at("A=1,B=4"));
  CHECK(events->before("prepared 33", "called 33"));
  CHECK(events->before("prepared 14", "called 14"));
}

namespace {
struct LimitedClient : VirtualClient {
  DeviceLimits limits() const { return {128, 16384}; }  // work-group size, local memory bytes
};
}  // namespace

TEST_CASE(
    "building ahead leaves out the candidates over the device's limits, which build nothing, and "
    "counts only what it prepared",
    "[tuner][build-ahead]") {
  auto events = std::make_shared<Events>();
  Settings settings = with_threads(2);
  settings.search = SearchSettings{SearchStrategy::exhaustive, 1.0, 1, 1e9};
  LocalTuner<SizeKey> tuner("ahead limits", settings);
  LimitedClient client;
  // A=3 and A=4 need more local memory than the device has: skipped, never prepared.
  const auto& set = tuner.init([&] {
    return TunableSet{key_of_size, bench_inputs}.with(
        space("s")
            .parameter("A", {1, 2, 3, 4})
            .parameter("B", {1, 2})
            .local_memory([](const Config& c) { return static_cast<std::size_t>(c["A"]) * 8192; }),
        preparing_configs(events));
  });
  CHECK(tuner.execute(client.id(), client, set, 16) == 11);
  for (const char* over : {"31", "32", "41", "42"}) {
    CHECK(events->count(std::string("prepared ") + over) == 0);
    CHECK(events->count(std::string("called ") + over) == 0);
  }
  for (const char* within : {"11", "12", "21", "22"}) {
    CHECK(events->before(std::string("prepared ") + within, std::string("called ") + within));
  }
  const auto report = tuner.tuner(client.id()).report(SizeKey{16});
  REQUIRE(report);
  CHECK(report->time_spent.programs_prepared == 4);
}

TEST_CASE("building ahead builds no guesses, and at most one candidate per thread ahead",
          "[build-ahead]") {
  std::mutex mutex;
  std::vector<std::size_t> prepared;
  {
    BuildAhead ahead(2, /*quiet=*/false, [&](std::size_t i) {
      std::lock_guard lock(mutex);
      prepared.push_back(i);
    });
    ahead.plan({7, 8, 9}, /*likely=*/false);  // annealing's neighbours: maybe never measured
    CHECK(ahead.submitted() == 0);
    ahead.plan({0, 1, 2, 3, 4, 5});
    CHECK(ahead.submitted() == 2);  // the window: one per thread
    ahead.before_measuring(0);      // 0 is done; 2 joins 1 in the window
    CHECK(ahead.submitted() == 3);
    ahead.before_measuring(1);
    ahead.before_measuring(2);
  }  // the destructor drops what has not started (3 and 4 may have) and joins the pool
  std::sort(prepared.begin(), prepared.end());
  REQUIRE(prepared.size() >= 3);
  CHECK(std::vector<std::size_t>(prepared.begin(), prepared.begin() + 3) ==
        std::vector<std::size_t>{0, 1, 2});
  CHECK(prepared.back() <= 4);  // never 5: it was never in the window
}

TEST_CASE("the build pool runs, finishes, cancels and joins its jobs", "[build-ahead]") {
  std::atomic<int> ran{0};
  {
    BuildPool pool(2);
    for (std::size_t i = 0; i < 20; ++i) {
      pool.submit([&] { ran.fetch_add(1); }, i);
    }
    pool.finish(19);  // run here if still queued, else waited for
    pool.wait_idle();
    CHECK(ran.load() == 20);
    for (std::size_t i = 0; i < 5; ++i) {
      pool.submit([] { throw std::runtime_error("dropped"); }, i);
    }
    pool.wait_idle();
  }
  CHECK(ran.load() == 20);
}

TEST_CASE("TUNEKIT_BUILD_THREADS is a number of threads from 0 to 256", "[settings][build-ahead]") {
  CHECK(parse_build_threads("0") == 0);
  CHECK(parse_build_threads("12") == 12);
  for (const char* bad : {"", "-1", "257", "4x", "many", " 2"}) {
    CHECK_THROWS_WITH(parse_build_threads(bad),
                      Catch::Contains("TUNEKIT_BUILD_THREADS='") &&
                          Catch::Contains("0 (build on the tuning thread) to 256"));
  }
  Settings s;
  CHECK(s.build_thread_count() >= 1);
  CHECK(s.build_thread_count() <= 8);
  s.build_threads = 0;
  CHECK(s.build_thread_count() == 0);
}

TEST_CASE("TUNEKIT_BUILD_PROCESSES is a number of helper processes from 0 to 64",
          "[settings][build-processes]") {
  CHECK_FALSE(Settings{}.build_processes);  // unset: automatic (automatic_build_processes)
  CHECK(parse_build_processes("0") == 0);
  CHECK(parse_build_processes("64") == 64);
  for (const char* bad : {"", "-1", "65", "4x", "auto", " 2"}) {
    CHECK_THROWS_WITH(parse_build_processes(bad),
                      Catch::Contains("TUNEKIT_BUILD_PROCESSES='") &&
                          Catch::Contains("0 (build in this process) to 64"));
  }
  std::vector<std::string> problems;
  const Settings s = apply_settings_text(Settings{},
                                         "build_processes = 4\n"
                                         "build_helper = \"/tmp/x\"\n",
                                         "tunekit.toml", problems);
  CHECK(s.build_processes == 4);
  REQUIRE(problems.size() == 1);  // a file in the working directory chooses no program to run
  CHECK_THAT(problems[0], Catch::Contains("build_helper is not read from a settings file") &&
                              Catch::Contains("TUNEKIT_BUILD_HELPER"));
}
