// Many threads on one LocalTuner: each key is tuned exactly once, every call gets the right answer.
#include <atomic>
#include <catch2/catch.hpp>
#include <thread>
#include <tunekit/tunekit.hpp>
#include <vector>

#include "../support.hpp"

using namespace tunekit;
using test::SizeKey;

namespace {
struct Counted {
  std::atomic<int> tunings{0};
};
}  // namespace

TEST_CASE("16 threads hammering execute over many keys tune each key once", "[concurrency]") {
  constexpr int threads = 16;
  constexpr int keys = 64;
  constexpr int calls_per_thread = 2000;
  Settings settings = test::counting_settings();
  settings.benchmark->max_samples = 3;
  LocalTuner<SizeKey> tuner("hammered", settings);
  std::vector<std::atomic<int>> tunings(keys);
  std::atomic<int> wrong{0};

  auto key_of = [](const std::uint64_t& n) { return SizeKey{n}; };
  auto inputs = [&](const SizeKey& key, const std::uint64_t&) {
    tunings[std::countr_zero(key.n.value())]++;  // called once per candidate per tuning
    return std::tuple<std::uint64_t>(key.n.value());
  };
  auto square = [](std::uint64_t& n) { return n * n; };
  auto square_slowly = [](std::uint64_t& n) {
    volatile std::uint64_t r = 0;
    for (std::uint64_t i = 0; i < n; ++i) r = r + n;
    return static_cast<std::uint64_t>(r);
  };

  HostClient host;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      const auto& set = tuner.init([&] {
        return TunableSet{key_of, inputs}
            .with(Tunable{"square", square})
            .with(Tunable{"square slowly", square_slowly});
      });
      for (int i = 0; i < calls_per_thread; ++i) {
        std::uint64_t n = std::uint64_t{1} << ((i * 7 + t) % keys % 20);
        if (tuner.execute(host.id(), host, set, n) != n * n) ++wrong;
      }
    });
  }
  for (auto& thread : pool) thread.join();
  CHECK(wrong == 0);
  for (int k = 0; k < 20; ++k) {
    INFO("key 2^" << k);
    CHECK(tunings[k] == 2);  // two candidates, one tuning
  }
}

TEST_CASE("threads on different devices tune independently", "[concurrency]") {
  LocalTuner<SizeKey> tuner("per device", test::test_settings());
  std::atomic<int> tunings{0};
  auto key_of = [](const int& n) { return SizeKey{static_cast<std::uint64_t>(n)}; };
  auto inputs = [&](const SizeKey&, const int& n) {
    ++tunings;
    return std::tuple<int>(n);
  };
  std::atomic<int> wrong{0};  // Catch2's assertions are not thread-safe: check after joining
  std::vector<std::thread> pool;
  for (int d = 0; d < 8; ++d) {
    pool.emplace_back([&, d] {
      HostClient host(DeviceId("device " + std::to_string(d)));
      const auto& set = tuner.init([&] {
        return TunableSet{key_of, inputs}
            .with(Tunable{"id", [](int& n) { return n; }})
            .with(Tunable{"id too", [](int& n) { return n; }})
            .share_inputs();
      });
      for (int i = 0; i < 500; ++i) wrong += tuner.execute(host.id(), host, set, i % 4) != i % 4;
    });
  }
  for (auto& thread : pool) thread.join();
  CHECK(wrong == 0);
  CHECK(tunings == 8 * 4);  // sizes 0..3 anchor to 4 keys (0, 1, 2, 4) per device
}
