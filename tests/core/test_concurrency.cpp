// Many threads on one LocalTuner: each key is tuned exactly once, every call gets the right
// answer; tunings on one device take turns at measuring.
#include <array>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <tunekit/engine/measurement_turn.hpp>
#include <tunekit/tunekit.hpp>
#include <tuple>
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

// Two ops tuned at once from two threads on one device take turns at measuring (measurement_
// turn.hpp): a candidate timed by one never runs while the other's candidate is timed. The
// input generator marks benchmark inputs (negative), so that the winner's own call at the end
// of each execute, which is not a measurement, is not counted.
TEST_CASE("two ops tuned at once on one device never measure at the same time", "[concurrency]") {
  Settings settings = test::test_settings();
  LocalTuner<SizeKey> left("left op", settings), right("right op", settings);
  std::array<std::atomic<int>, 2> timing{};  // each op's benchmark calls running now
  std::atomic<int> beside{0}, calls{0};
  auto candidate = [&](int op) {
    return [&, op](int& n) {
      if (n >= 0) return n;  // the caller's call
      ++calls;
      ++timing[op];
      if (timing[1 - op] > 0) ++beside;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      --timing[op];
      return -n - 1;
    };
  };
  auto make_set = [&](int op) {
    return TunableSet{test::size_key,
                      [](const SizeKey& key, const int&) {
                        return std::tuple<int>(-static_cast<int>(key.n.value()) - 1);
                      }}
        .with(Tunable{"first", candidate(op)})
        .with(Tunable{"second", candidate(op)});
  };
  std::atomic<int> wrong{0};
  auto tune = [&](LocalTuner<SizeKey>& tuner, int op) {
    HostClient host(DeviceId("one shared device"));
    const auto& set = tuner.init([&] { return make_set(op); });
    for (int n : {1, 2, 4, 8, 16, 32}) wrong += tuner.execute(host.id(), host, set, n) != n;
  };
  std::thread other(tune, std::ref(right), 1);
  tune(left, 0);
  other.join();
  CHECK(wrong == 0);
  CHECK(calls > 100);  // both measured, at length
  CHECK(beside == 0);
}

// A candidate that tunes another op on its device while it is measured (a softmax calling a
// tuned reduce) already holds the device's turn: the nested tuning takes it again at once
// instead of waiting for itself until the patience runs out.
TEST_CASE("a candidate that tunes another op while it is measured does not wait for its own turn",
          "[concurrency]") {
  Settings settings = test::test_settings();
  LocalTuner<SizeKey> inner("inner op", settings), outer("outer op", settings);
  HostClient host(DeviceId("nesting device"));
  const auto& inner_set = inner.init([] {
    return TunableSet{test::size_key, test::size_inputs}
        .with(Tunable{"id", [](int& n) { return n; }})
        .with(Tunable{"id too", [](int& n) { return n; }});
  });
  int inner_size = 1;
  auto calls_inner = [&](int& n) {
    int size = inner_size++;  // a new key of the inner op at every call: each tunes it
    return inner.execute(host.id(), host, inner_set, size) == size ? n : -1;
  };
  const auto& outer_set = outer.init([&] {
    return TunableSet{test::size_key, test::size_inputs}
        .with(Tunable{"calls inner", calls_inner})
        .with(Tunable{"calls inner too", calls_inner});
  });
  test::CapturedWarnings warnings;
  CHECK(outer.execute(host.id(), host, outer_set, 3) == 3);
  CHECK(inner_size > 3);  // the inner op was tuned from inside the outer's measurement
  CHECK(warnings.count("measuring beside it") == 0);
}

TEST_CASE(
    "a device's measurement turn is taken again by its holder, refused to another thread "
    "past the patience, and given in the order asked",
    "[concurrency]") {
  using namespace std::chrono_literals;
  const std::string device = "turn test device";
  std::vector<int> order;  // the waiters' ids, in the order they got the turn
  std::mutex order_mutex;
  auto waiter = [&](int id) {
    const MeasurementTurn turn(device, 60s);
    std::lock_guard lock(order_mutex);
    order.push_back(turn.held() ? id : -id);
  };
  std::thread a, b;
  bool again_held = false, other_held = true;
  {
    const MeasurementTurn first(device);
    REQUIRE(first.held());
    again_held = MeasurementTurn(device, 1ms).held();  // its holder takes it again
    std::thread([&] { other_held = MeasurementTurn(device, 50ms).held(); }).join();
    // Two threads queue while the turn is held, b after a; released at the scope's end.
    const auto queued = [&](std::size_t n) {
      while (MeasurementTurn::waiting(device) < n) std::this_thread::sleep_for(1ms);
    };
    a = std::thread(waiter, 1);
    queued(1);
    b = std::thread(waiter, 2);
    queued(2);
  }
  waiter(0);  // the holder asks again at once, as a tuning does for its next candidate: last
  a.join();
  b.join();
  CHECK(again_held);
  CHECK_FALSE(other_held);  // the other thread's wait ran out: the holder kept the turn
  CHECK(order == std::vector<int>{1, 2, 0});
}

TEST_CASE(
    "two ops whose candidates call each other from two threads: the second wait is refused, "
    "naming the cycle, and both tunings end",
    "[concurrency]") {
  // Op A on device X has a candidate that calls op B on device Y for a new key; B on Y has one
  // that calls A on X. Thread 1 tunes A, thread 2 tunes B, each inside its candidate at once:
  // each then waits for the other's tuning lock. Before, both waited forever.
  using namespace std::chrono_literals;
  Settings settings = test::test_settings();
  LocalTuner<SizeKey> a_op("cycle op A", settings), b_op("cycle op B", settings);
  HostClient x(DeviceId("cycle device X")), y(DeviceId("cycle device Y"));
  std::atomic<bool> a_inside{false}, b_inside{false};
  const auto both_inside = [&](std::atomic<bool>& mine, const std::atomic<bool>& other) {
    mine = true;
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (!other && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  };
  std::function<int(int)> call_b;
  std::function<int(int)> call_a;
  // A set whose second candidate, once both are inside theirs, calls the other op for a new key.
  const auto calling = [&](const char* name, std::atomic<bool>& mine,
                           const std::atomic<bool>& other, const std::function<int(int)>& call,
                           int offset) {
    return TunableSet{test::size_key, test::size_inputs}
        .with(Tunable{"direct", [](int& n) { return n; }})
        .with(Tunable{name, [&, offset](int& n) {
                        both_inside(mine, other);
                        return call(n + offset) - offset;
                      }});
  };
  const auto& a_set = a_op.init([&] { return calling("via B", a_inside, b_inside, call_b, 1000); });
  const auto& b_set = b_op.init([&] { return calling("via A", b_inside, a_inside, call_a, 2000); });
  call_b = [&](int n) { return b_op.execute(y.id(), y, b_set, n); };
  call_a = [&](int n) { return a_op.execute(x.id(), x, a_set, n); };
  std::atomic<int> done{0};
  int a_result = -1, b_result = -1;
  std::thread first([&] {
    a_result = a_op.execute(x.id(), x, a_set, 1);
    ++done;
  });
  std::thread second([&] {
    b_result = b_op.execute(y.id(), y, b_set, 2);
    ++done;
  });
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (done < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
  if (done < 2) {
    FAIL_CHECK("the two tunings still wait for each other after 60 s");
    std::_Exit(1);  // the threads cannot be joined: end here rather than hang the suite
  }
  first.join();
  second.join();
  CHECK(a_result == 1);
  CHECK(b_result == 2);
  // One of the two candidates that call across was refused, with the cycle named.
  std::size_t refused = 0;
  for (const auto& [op, client, key] :
       {std::tuple{&a_op, &x, SizeKey{1}}, std::tuple{&b_op, &y, SizeKey{2}}}) {
    const auto report = op->tuner(client->id()).report(key);
    REQUIRE(report);
    for (const auto& outcome : report->outcomes) {
      if (outcome.error && std::string(outcome.error->what())
                                   .find("call each other from two "
                                         "threads") != std::string::npos)
        ++refused;
    }
  }
  CHECK(refused == 1);
}
