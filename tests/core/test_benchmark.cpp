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
