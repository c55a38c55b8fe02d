// Reliability on the host runtime: sustained load from many threads, and every kind of faulty
// candidate in one set.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <tunekit/tunekit.hpp>
#include <vector>

#include "../support.hpp"

using namespace tunekit;

TEST_CASE("32 threads x 10,000 calls over 100 keys: every result right, every key tuned once",
          "[reliability][load]") {
  struct Key {
    BOOST_HANA_DEFINE_STRUCT(Key, (std::uint32_t, id));
  };
  constexpr int threads = 32, calls = 10000, keys = 100;
  Settings settings = test::counting_settings();
  settings.benchmark->max_samples = 3;
  LocalTuner<Key> tuner("load", settings);
  HostClient host;
  std::vector<std::atomic<int>> generated(keys);  // input generator runs: candidates x tunings
  std::atomic<long> wrong{0};
  auto key_of = [](const std::uint32_t& id, const std::uint64_t&) { return Key{id}; };
  auto inputs = [&](const Key& key, const std::uint32_t& id, const std::uint64_t& x) {
    ++generated[key.id];
    return std::tuple<std::uint32_t, std::uint64_t>(id, x);
  };
  auto mix = [](std::uint32_t& id, std::uint64_t& x) { return x * 2654435761u + id; };
  auto mix_again = [](std::uint32_t& id, std::uint64_t& x) { return id + x * 2654435761u; };

  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      const auto& set = tuner.init([&] {
        return TunableSet{key_of, inputs}
            .with(Tunable{"mix", mix})
            .with(Tunable{"mix again", mix_again});
      });
      for (int i = 0; i < calls; ++i) {
        std::uint32_t id = static_cast<std::uint32_t>((i * 31 + t * 7) % keys);
        std::uint64_t x = static_cast<std::uint64_t>(i) * 977 + static_cast<std::uint64_t>(t);
        if (tuner.execute(host.id(), host, set, id, x) != x * 2654435761u + id) ++wrong;
      }
    });
  }
  for (auto& thread : pool) thread.join();
  CHECK(wrong == 0);
  int tuned_once = 0;
  for (int k = 0; k < keys; ++k) tuned_once += generated[k] == 2;  // 2 candidates, 1 tuning
  CHECK(tuned_once == keys);
}

namespace {
struct LimitedClient : test::VirtualClient {
  DeviceLimits limits() const { return {256, 32768}; }
};
}  // namespace

TEST_CASE("every kind of faulty candidate fails with its own error and the right one wins",
          "[reliability][faults]") {
  LocalTuner<test::SizeKey> tuner("faults", test::test_settings());
  LimitedClient client;
  auto key_of = [](const int& n) { return test::SizeKey{static_cast<std::uint64_t>(n)}; };
  auto inputs = [](const test::SizeKey& key, const int&) {
    return std::tuple<int>(static_cast<int>(key.n.value()));
  };
  auto correct = [](double cost) {
    return [cost](LimitedClient& c, int& n) -> Result<int> { return c.spend(cost), n * 3; };
  };
  const auto& set = tuner.init([&] {
    return TunableSet{key_of, inputs}
        .with(Tunable{"reference", correct(4e-3)})
        .with(
            Tunable{"throws",
                    [](LimitedClient&, int&) -> Result<int> { throw std::runtime_error("kaput"); }})
        .with(Tunable{"returns error",
                      [](LimitedClient&, int&) -> Result<int> {
                        return fail(ErrorKind::launch, "CL_INVALID_WORK_GROUP_SIZE");
                      }})
        .with(Tunable{
            "wrong output",
            [](LimitedClient& c, int& n) -> Result<int> { return c.spend(1e-3), n * 3 + 1; }})
        .with(Tunable{"fails to build",
                      [](LimitedClient&, int&) -> Result<int> {
                        return fail(ErrorKind::build, "<kernel>:3:1: error: expected ';'");
                      }})
        .with(Tunable{"cannot allocate",
                      [](LimitedClient&, int&) -> Result<int> { throw std::bad_alloc(); }})
        .with(Tunable{"the right one", correct(2e-3)})
        .with(Tunable{"100x slower", correct(2e-1)})  // after two survivors: racing drops it
        .with(space("local memory hog")
                  .parameter("TILE", {64, 128})
                  .local_memory([](const Config& c) {
                    return static_cast<std::size_t>(c["TILE"] * c["TILE"] * 4);
                  }),
              [&](const Config&) { return correct(1.5e-3); })
        .validate_with([](int expected, int got) { return expected == got; });
  });
  CHECK(tuner.execute(client.id(), client, set, 5) == 15);
  const auto report = *tuner.tuner(client.id()).report(test::SizeKey{8});
  std::map<std::string, AutotuneOutcome> by_name;
  for (const auto& o : report.outcomes) by_name[o.name] = o;
  auto kind_of = [&](const std::string& name) {
    REQUIRE(by_name.at(name).error);
    return by_name.at(name).error->kind();
  };
  CHECK(kind_of("throws") == ErrorKind::runtime);
  CHECK(kind_of("returns error") == ErrorKind::launch);
  CHECK(kind_of("wrong output") == ErrorKind::wrong_output);
  CHECK(by_name.at("100x slower").status == OutcomeStatus::dropped);
  CHECK(kind_of("fails to build") == ErrorKind::build);
  CHECK(kind_of("cannot allocate") == ErrorKind::allocation);
  CHECK(kind_of("local memory hog[TILE=128]") == ErrorKind::out_of_resources);
  CHECK(by_name.at("local memory hog[TILE=64]").ok());  // 16 KiB fits in 32 KiB
  CHECK(report.winner()->name == "local memory hog[TILE=64]");
}

namespace {

// A shared store in which another machine holds the lease of one key (n=64) until `release`:
// lock_for_tuning of that key waits, as RedisStore's does (up to its lease_wait).
struct LeasedStore final : ResultStore {
  std::mutex mutex;
  std::condition_variable changed;
  bool released = false, waiting = false;
  std::optional<StoredResult> load(const EntryId&) override { return std::nullopt; }
  void save(const EntryId&, const StoredResult&) override {}
  std::unique_ptr<TuningLock> lock_for_tuning(const EntryId& id) override {
    if (id.key.find("n=64") == std::string::npos) return nullptr;
    std::unique_lock lock(mutex);
    waiting = true;
    changed.notify_all();
    changed.wait(lock, [this] { return released; });
    return nullptr;
  }
  void release() {
    std::lock_guard lock(mutex);
    released = true;
    changed.notify_all();
  }
};

}  // namespace

TEST_CASE("waiting for another machine's lease on one key does not hold up another key",
          "[reliability][lease]") {
  auto store = std::make_shared<LeasedStore>();
  test::VirtualClient client;
  Tuner<test::SizeKey> tuner("leased", client.id(), test::test_settings(), store);
  const auto set = TunableSet{test::size_key, test::size_inputs}
                       .with(Tunable{"fast", test::costs<test::VirtualClient>(1e-3)})
                       .with(Tunable{"slow", test::costs<test::VirtualClient>(2e-3)});
  int leased = 64, other = 1024;
  std::thread waiter([&] { (void)tuner.execute(client, set, test::SizeKey{64}, leased); });
  {
    std::unique_lock lock(store->mutex);
    store->changed.wait(lock, [&] { return store->waiting; });  // it waits for the lease now
  }
  // The other key is tuned while the lease is held (a wait under the device's tuning lock would
  // block it until the release below, which comes only after it or after 60 s).
  std::atomic<bool> other_done{false};
  std::thread unrelated([&] {
    (void)tuner.execute(client, set, test::SizeKey{1024}, other);
    other_done = true;
  });
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!other_done && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const bool before_release = other_done;
  store->release();
  unrelated.join();
  waiter.join();
  CHECK(before_release);
  CHECK(tuner.report(test::SizeKey{64}));
  CHECK(tuner.report(test::SizeKey{1024}));
}
