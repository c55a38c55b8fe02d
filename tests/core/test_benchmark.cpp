// The sample statistics of the measurement (benchmark.hpp).
#include <catch2/catch.hpp>
#include <chrono>
#include <limits>
#include <thread>
#include <tunekit/tunekit.hpp>

using namespace tunekit;

TEST_CASE("summaries use the median and the median absolute deviation", "[benchmark]") {
  const auto s = summarize({1, 2, 3, 4, 100});
  CHECK(s.median == 3);
  CHECK(s.spread == 1);
  CHECK(s.min == 1);
  CHECK(s.max == 100);
  CHECK(summarize({1, 2, 3, 4}).median == 2.5);
}

namespace {
// A device whose calls take it 0.1 us each and the host 100 us each (an empty problem's launch):
// measure() runs the batch, the host's time spent for real, and returns the device's.
struct HostBoundClient {
  DeviceId id_{"host-bound device"};
  std::size_t calls = 0;
  const DeviceId& id() const noexcept { return id_; }
  double timer_resolution() const noexcept { return 1e-9; }
  double measure(FunctionRef<void()> work, std::size_t batch) {
    for (std::size_t i = 0; i < batch; ++i) {
      work();
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    calls += batch;
    return 1e-7 * static_cast<double>(batch);
  }
};
}  // namespace

TEST_CASE(
    "a call far shorter on the device than on the host is batched by what the host spends, "
    "not by thousands",
    "[benchmark]") {
  // 1 ms samples of 0.1 us calls were 10,000 calls: a second of the host's time each, for a
  // candidate whose whole work is nothing (a tuning of an empty problem took 30 s).
  HostBoundClient client;
  BenchmarkSettings settings;
  settings.warmup_runs = 2;
  settings.min_samples = 3;
  settings.max_samples = 5;
  settings.min_sample_seconds = 1e-3;
  const auto outcome = measure_candidate(
      client, [] {}, settings, std::numeric_limits<double>::infinity(), "empty", 0);
  REQUIRE(outcome.ok());
  CHECK(outcome.median == Approx(1e-7));
  // A lone call took the host at least 100 us: at most 20 ms of them a sample, whatever the
  // host's speed.
  CHECK(outcome.batch >= 1);
  CHECK(outcome.batch <= 200);
  CHECK(client.calls <= 2 + 5 * 200);
}

namespace {
// A device whose calls never agree (1, 2 and 3 ms in turn: any run of three or more samples has
// a spread of a third of its median or more): sampling ends by its caps only. Each call may also
// take the host `host_seconds` for real.
struct NoisyClient {
  DeviceId id_{"noisy device"};
  std::size_t measures = 0;
  double host_seconds = 0;
  const DeviceId& id() const noexcept { return id_; }
  double timer_resolution() const noexcept { return 1e-9; }
  double measure(FunctionRef<void()> work, std::size_t batch) {
    for (std::size_t i = 0; i < batch; ++i) work();
    if (host_seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(host_seconds));
    return 1e-3 * static_cast<double>(measures++ % 3 + 1) * static_cast<double>(batch);
  }
};
}  // namespace

TEST_CASE("a candidate is warmed up as asked, then sampled up to max_samples", "[benchmark]") {
  NoisyClient client;
  BenchmarkSettings settings;
  settings.warmup_runs = 4;
  settings.min_samples = 3;
  settings.max_samples = 7;
  const auto outcome = measure_candidate(
      client, [] {}, settings, std::numeric_limits<double>::infinity(), "noisy", 0);
  REQUIRE(outcome.ok());
  CHECK(outcome.samples == 7);      // the spread never met its target: the cap ended it
  CHECK(client.measures == 4 + 7);  // four warm-up calls, then one call a sample
}

TEST_CASE("a candidate's sampling ends at max_candidate_seconds", "[benchmark]") {
  NoisyClient client;
  client.host_seconds = 0.02;
  BenchmarkSettings settings;
  settings.min_samples = 3;
  settings.max_samples = 1000;
  settings.max_candidate_seconds = 0.3;
  const auto started = std::chrono::steady_clock::now();
  const auto outcome = measure_candidate(
      client, [] {}, settings, std::numeric_limits<double>::infinity(), "slow and noisy", 0);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  REQUIRE(outcome.ok());
  CHECK(outcome.samples >= 3);
  CHECK(outcome.samples < 100);  // about 15 at 20 ms a call; 1000 would take 20 s
  CHECK(seconds < 10);
}
