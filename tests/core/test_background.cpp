// Background tuning (Settings::tuning = background): execute() on an untuned key answers at once
// with a provisional candidate while the key is tuned on the tuner's thread, and with the winner
// once it is known. The switch is driven by gates the test opens: no sleeps, no timing bounds.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "../support.hpp"
#include "tunekit/engine/measurement_turn.hpp"

using namespace tunekit;
using test::SizeKey;

namespace {

/// A client whose costs are counted per thread: the caller's calls do not add to what the
/// background thread measures.
class ThreadClient {
 public:
  const DeviceId& id() const noexcept { return id_; }
  double timer_resolution() const noexcept { return 1e-9; }
  double measure(FunctionRef<void()> work, std::size_t batch) {
    elapsed = 0;
    for (std::size_t i = 0; i < batch; ++i) work();
    return elapsed;
  }
  void spend(double seconds) { elapsed += seconds; }
  ~ThreadClient() { stop_background_tunings_using(this); }

 private:
  static inline thread_local double elapsed = 0;
  DeviceId id_{"threaded device"};
};

/// Holds the threads that pass it until the test opens it; tells the test when one arrived.
class Gate {
 public:
  void pass() {
    std::unique_lock lock(mutex_);
    arrived_ = true;
    changed_.notify_all();
    changed_.wait(lock, [&] { return open_; });
  }
  void wait_arrival() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return arrived_; });
  }
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool arrived_ = false;
  bool open_ = false;
};

/// A candidate that costs `seconds` per call (on the calling thread's clock) and returns n.
auto returns_n(double seconds) {
  return [seconds](ThreadClient& c, std::uint64_t& n) {
    c.spend(seconds);
    return n;
  };
}

Settings background_settings() {
  Settings settings = test::test_settings();
  settings.tuning = TuningMode::background;
  return settings;
}

/// The sets' key and inputs here: the key is the call's n, the benchmark input a copy of the key.
constexpr auto key_of = [](const std::uint64_t& n) { return SizeKey{n}; };
constexpr auto n_input = [](const SizeKey& key, const std::uint64_t&) {
  return std::tuple<std::uint64_t>(key.n.value());
};

/// A queue job that runs `work` once (it never asks to run again).
template <class Work>
std::function<bool()> once(Work work) {
  return [work]() mutable {
    work();
    return false;
  };
}

/// "plain" (index 0, slower) returns n; "gated" (index 1, faster) returns n + 1 and, on any
/// thread but the test's, first passes `gate`.
auto gated_set(Gate& gate, std::thread::id test_thread) {
  return TunableSet{key_of, n_input}
      .with(Tunable{"plain",
                    [](ThreadClient& c, std::uint64_t& n) {
                      c.spend(2e-3);
                      return n;
                    }})
      .with(Tunable{"gated", [&gate, test_thread](ThreadClient& c, std::uint64_t& n) {
                      if (std::this_thread::get_id() != test_thread) gate.pass();
                      c.spend(1e-3);
                      return n + 1;
                    }});
}

}  // namespace

TEST_CASE("background: a provisional candidate serves at once, the winner once it is known",
          "[background]") {
  Gate gate;
  ThreadClient client;
  std::atomic<int> tunings_started{0};
  Settings settings = background_settings();
  settings.on_progress = [&](const TuningProgress& progress) {
    if (progress.done == 1 && !progress.finished)
      ++tunings_started;  // counted here, checked after the tunings
  };
  Tuner<SizeKey> tuner("background_op", client.id(), settings, nullptr);
  const auto set = gated_set(gate, std::this_thread::get_id());
  std::uint64_t n = 64, m = 128;

  CHECK(tuner.execute(client, set, SizeKey{64}, n) == 64);  // 'plain': first in the plan
  CHECK(last_call().path == CallPath::provisional);
  CHECK(last_call().candidate == 0);
  gate.wait_arrival();  // the tuning of 64 is measuring 'gated' now, and cannot end
  CHECK(tuner.execute(client, set, SizeKey{64}, n) == 64);
  CHECK(last_call().path == CallPath::provisional);
  CHECK_FALSE(tuner.report(SizeKey{64}));
  // Another key does not wait for that tuning: it is queued behind it.
  CHECK(tuner.execute(client, set, SizeKey{128}, m) == 128);
  CHECK(last_call().path == CallPath::provisional);

  gate.open();
  tuner.wait_for_tunings();
  CHECK(tuner.execute(client, set, SizeKey{64}, n) == 65);
  CHECK(last_call().path == CallPath::dispatched);
  CHECK(last_call().candidate == 1);
  CHECK(tuner.execute(client, set, SizeKey{128}, m) == 129);
  CHECK(last_call().path == CallPath::dispatched);
  CHECK(tunings_started == 2);  // one tuning per key, however many calls met it untuned
  REQUIRE(tuner.report(SizeKey{64}));
  CHECK(tuner.report(SizeKey{64})->winner()->name == "gated");
}

TEST_CASE("background: a new key starts from a neighbouring key's winner", "[background]") {
  Gate gate;
  gate.open();
  ThreadClient client;
  Tuner<SizeKey> tuner("background_op", client.id(), background_settings(), nullptr);
  const auto set = gated_set(gate, std::this_thread::get_id());
  std::uint64_t n = 64, m = 128;
  CHECK(tuner.execute(client, set, SizeKey{64}, n) == 64);
  tuner.wait_for_tunings();
  CHECK(tuner.execute(client, set, SizeKey{128}, m) == 129);  // 'gated', before its own tuning
  CHECK(last_call().path == CallPath::provisional);
  CHECK(last_call().candidate == 1);
}

TEST_CASE("background: a set that validates serves its reference, never an unvalidated neighbour",
          "[background][pick]") {
  ThreadClient client;
  Tuner<SizeKey> tuner("validated_op", client.id(), background_settings(), nullptr);
  // "vec4" is right only for multiples of 4: every benchmark input (a power of two) is one.
  const auto set = TunableSet{key_of, n_input}
                       .with(Tunable{"exact",
                                     [](ThreadClient& c, std::uint64_t& n) {
                                       c.spend(2e-3);
                                       return 2 * n;
                                     }})
                       .with(Tunable{"vec4",
                                     [](ThreadClient& c, std::uint64_t& n) {
                                       c.spend(1e-3);
                                       return n % 4 == 0 ? 2 * n : 2 * n - n % 4;
                                     }})
                       .validate_with(std::equal_to<>{});
  std::uint64_t n = 64, m = 126;
  CHECK(tuner.execute(client, set, SizeKey{64}, n) == 128);
  tuner.wait_for_tunings();
  REQUIRE(tuner.report(SizeKey{64}));
  CHECK(tuner.report(SizeKey{64})->winner()->name == "vec4");
  // 126 is of key 128, not tuned: the neighbour's winner was never validated for it.
  CHECK(tuner.execute(client, set, SizeKey{126}, m) == 252);
  CHECK(last_call().path == CallPath::provisional);
  CHECK(last_call().candidate == 0);
  tuner.wait_for_tunings();
}

TEST_CASE("background: with a host reference, candidate 0 serves meanwhile only once it passed it",
          "[background][pick][validation]") {
  // With a host reference, candidate 0 is a candidate like the others: it is checked once before
  // it serves a key's calls while the key is tuned. Wrong, the call tunes the key (as blocking).
  const auto set_of = [](std::uint64_t first_adds) {
    return TunableSet{key_of, n_input}
        .with(Tunable{"first",
                      [first_adds](ThreadClient& c, std::uint64_t& n) {
                        c.spend(1e-3);
                        return 2 * n + first_adds;
                      }})
        .with(Tunable{"right",
                      [](ThreadClient& c, std::uint64_t& n) {
                        c.spend(2e-3);
                        return 2 * n;
                      }})
        .validate_with(HostReference{[](std::uint64_t n) { return 2 * n; }, std::equal_to<>{}});
  };
  ThreadClient client;
  std::uint64_t n = 64;
  SECTION("a wrong candidate 0: the call tunes") {
    Tuner<SizeKey> tuner("host reference, wrong first", client.id(), background_settings(),
                         nullptr);
    const auto set = set_of(1);  // the background tuning uses it: it outlives the tuning
    CHECK(tuner.execute(client, set, SizeKey{64}, n) == 128);
    CHECK(last_call().path != CallPath::provisional);
    REQUIRE(tuner.report(SizeKey{64}));  // tuned in the call
    CHECK(tuner.report(SizeKey{64})->winner()->name == "right");
  }
  SECTION("a right candidate 0: it serves meanwhile") {
    Tuner<SizeKey> tuner("host reference, right first", client.id(), background_settings(),
                         nullptr);
    const auto set = set_of(0);
    CHECK(tuner.execute(client, set, SizeKey{64}, n) == 128);
    CHECK(last_call().path == CallPath::provisional);
    tuner.wait_for_tunings();
    REQUIRE(tuner.report(SizeKey{64}));
    CHECK(tuner.report(SizeKey{64})->winner()->name == "first");
  }
}

TEST_CASE("background: candidate 0's check before it serves is made in the device's turn",
          "[background][validation][concurrency]") {
  // The check calls candidate 0 on the device: beside another tuning's measurement it would
  // change what that tuning times. Whether its call holds the turn is asked from another thread
  // (the holder itself may always take it again).
  enum : int { not_asked, held, not_held };
  std::atomic<int> turn_in_check{not_asked};  // seen on candidate 0's first call: the check
  const auto set =
      TunableSet{key_of, n_input}
          .with(Tunable{"first",
                        [&](ThreadClient& c, std::uint64_t& n) {
                          if (turn_in_check.load() == not_asked) {
                            bool other_got_it = true;
                            std::thread([&] {
                              using namespace std::chrono_literals;
                              other_got_it = MeasurementTurn(c.id().identity(), 1ms).held();
                            }).join();
                            turn_in_check = other_got_it ? not_held : held;
                          }
                          c.spend(1e-3);
                          return 2 * n;
                        }})
          .with(Tunable{"second",
                        [](ThreadClient& c, std::uint64_t& n) {
                          c.spend(2e-3);
                          return 2 * n;
                        }})
          .validate_with(HostReference{[](std::uint64_t n) { return 2 * n; }, std::equal_to<>{}});
  ThreadClient client;
  Tuner<SizeKey> tuner("checked in its turn", client.id(), background_settings(), nullptr);
  std::uint64_t n = 64;
  CHECK(tuner.execute(client, set, SizeKey{64}, n) == 128);
  CHECK(last_call().path == CallPath::provisional);
  tuner.wait_for_tunings();
  CHECK(turn_in_check.load() == held);
}

TEST_CASE("background: a tuning in which every candidate fails is remembered", "[background]") {
  ThreadClient client;
  Tuner<SizeKey> tuner("failing_op", client.id(), background_settings(), nullptr);
  const auto set = TunableSet{key_of, n_input}
                       .with(Tunable{"one",
                                     [](ThreadClient&, std::uint64_t&) -> std::uint64_t {
                                       throw std::runtime_error("one fails");
                                     }})
                       .with(Tunable{"two", [](ThreadClient&, std::uint64_t&) -> std::uint64_t {
                                       throw std::runtime_error("two fails");
                                     }});
  std::uint64_t n = 64;
  // The provisional call: every candidate failed on these inputs, the first one's error.
  CHECK_THROWS_WITH(tuner.execute(client, set, SizeKey{64}, n), "one fails");
  tuner.wait_for_tunings();
  try {
    tuner.execute(client, set, SizeKey{64}, n);
    FAIL("a remembered failure must throw");
  } catch (const AutotuneError& e) {
    CHECK(e.kind() == ErrorKind::no_valid_candidate);
    CHECK(e.causes().size() == 2);
  }
  CHECK(last_call().path == CallPath::failed);
}

TEST_CASE(
    "background: a failure of the moment is not kept: the provisional serves through its "
    "back-off, and the key is tuned again after it",
    "[background][retry]") {
  ThreadClient client;
  std::atomic<bool> short_of_memory{true};
  std::atomic<int> tuning_calls{0};  // the candidates' calls on the worker thread
  const auto test_thread = std::this_thread::get_id();
  auto needs_memory = [&](double seconds, std::uint64_t plus) {
    return [&, seconds, plus](ThreadClient& c, std::uint64_t& n) {
      if (std::this_thread::get_id() != test_thread) {
        ++tuning_calls;
        if (short_of_memory) throw std::bad_alloc();
      }
      c.spend(seconds);
      return n + plus;
    };
  };
  const auto set = TunableSet{key_of, n_input}
                       .with(Tunable{"plain", needs_memory(2e-3, 0)})
                       .with(Tunable{"fast", needs_memory(1e-3, 1)});
  std::uint64_t n = 64;
  const auto tuned_with_retry_after = [&](double seconds) {
    Settings settings = background_settings();
    settings.retry_seconds = seconds;
    return std::make_unique<Tuner<SizeKey>>("moment_op", client.id(), settings, nullptr);
  };
  SECTION("within its back-off the key stays provisional and is not tuned") {
    auto tuner = tuned_with_retry_after(3600);
    CHECK(tuner->execute(client, set, SizeKey{64}, n) == 64);
    tuner->wait_for_tunings();
    const int tuned = tuning_calls;
    CHECK(tuned > 0);
    short_of_memory = false;
    CHECK(tuner->execute(client, set, SizeKey{64}, n) == 64);  // not failed: provisional
    CHECK(last_call().path == CallPath::provisional);
    tuner->wait_for_tunings();
    CHECK(tuning_calls == tuned);
  }
  SECTION("after its back-off the next call queues the tuning again") {
    auto tuner = tuned_with_retry_after(0);
    CHECK(tuner->execute(client, set, SizeKey{64}, n) == 64);
    tuner->wait_for_tunings();
    const int tuned = tuning_calls;
    short_of_memory = false;
    CHECK(tuner->execute(client, set, SizeKey{64}, n) == 64);  // provisional; queued again
    tuner->wait_for_tunings();
    CHECK(tuning_calls > tuned);
    CHECK(tuner->execute(client, set, SizeKey{64}, n) == 65);
    CHECK(last_call().path == CallPath::dispatched);
  }
}

TEST_CASE("background: an exception of the caller's hook becomes the key's failure",
          "[background]") {
  Gate gate;
  gate.open();
  ThreadClient client;
  Settings settings = background_settings();
  settings.on_progress = [](const TuningProgress&) { throw std::runtime_error("hook"); };
  Tuner<SizeKey> tuner("background_op", client.id(), settings, nullptr);
  const auto set = gated_set(gate, std::this_thread::get_id());
  std::uint64_t n = 64;
  CHECK(tuner.execute(client, set, SizeKey{64}, n) == 64);
  tuner.wait_for_tunings();
  CHECK_THROWS_WITH(tuner.execute(client, set, SizeKey{64}, n), Catch::Contains("hook"));
}

TEST_CASE("background: stopping drops the queued tunings and stops the running one",
          "[background]") {
  auto queue = detail::make_background_queue();
  Gate gate;
  bool stopped_seen = false;  // written by the worker, read after stop() joined it
  bool second_ran = false;
  const int client = 0;
  REQUIRE(queue->push(once([&] {
                        gate.pass();
                        stopped_seen = queue->stop_flag().load();
                      }),
                      &client));
  REQUIRE(queue->push(once([&] { second_ran = true; }), &client));
  gate.wait_arrival();
  std::thread stopper([&] { queue->stop(); });
  while (!queue->stop_flag().load()) std::this_thread::yield();  // stop() has begun
  gate.open();
  stopper.join();
  CHECK(stopped_seen);
  CHECK_FALSE(second_ran);
  CHECK_FALSE(queue->push([] { return false; }, &client));  // refused once stopped
}

TEST_CASE("background: stopping one client's tunings leaves the others", "[background]") {
  auto queue = detail::make_background_queue();
  Gate gate;
  const int mine = 0, other = 0;
  bool mine_ran = false, other_ran = false;
  REQUIRE(queue->push(once([&] { gate.pass(); }), &other));
  REQUIRE(queue->push(once([&] { mine_ran = true; }), &mine));
  REQUIRE(queue->push(once([&] { other_ran = true; }), &other));
  gate.wait_arrival();
  stop_background_tunings_using(&mine);  // drops its queued job; the running one is not its
  gate.open();
  queue->wait_idle();
  CHECK_FALSE(mine_ran);
  CHECK(other_ran);
}

TEST_CASE("background: a key whose tuning was dropped with its client is tuned through the next",
          "[background]") {
  Gate gate;
  ThreadClient first, second;
  Tuner<SizeKey> tuner("background_op", first.id(), background_settings(), nullptr);
  const auto set = gated_set(gate, std::this_thread::get_id());
  std::uint64_t n = 32, m = 64;
  CHECK(tuner.execute(second, set, SizeKey{32}, n) == 32);
  gate.wait_arrival();  // 32's tuning runs (on `second`) and holds the thread
  CHECK(tuner.execute(first, set, SizeKey{64}, m) == 64);  // queued behind it, on `first`
  stop_background_tunings_using(&first);                   // `first` goes away: 64's job dropped
  gate.open();
  tuner.wait_for_tunings();
  CHECK_FALSE(tuner.report(SizeKey{64}));
  // The next call of 64, through a client that is alive, queues its tuning again.
  CHECK(tuner.execute(second, set, SizeKey{64}, m) == 64);
  CHECK(last_call().path == CallPath::provisional);
  tuner.wait_for_tunings();
  REQUIRE(tuner.report(SizeKey{64}));
  CHECK(tuner.execute(second, set, SizeKey{64}, m) == 65);
  CHECK(last_call().path == CallPath::dispatched);
}

TEST_CASE("background: a tuner destroyed while it tunes stops and waits", "[background]") {
  Gate gate;
  ThreadClient client;
  auto tuner = std::make_unique<Tuner<SizeKey>>("background_op", client.id(), background_settings(),
                                                nullptr);
  // The gated candidate, once let through, runs 50 ms more: a destructor that did not wait for
  // the running tuning would return while it is still inside.
  std::atomic<int> inside{0};
  const auto test_thread = std::this_thread::get_id();
  const auto set = TunableSet{key_of, n_input}
                       .with(Tunable{"plain", returns_n(2e-3)})
                       .with(Tunable{"gated", [&](ThreadClient& c, std::uint64_t& n) {
                                       if (std::this_thread::get_id() == test_thread) return n + 1;
                                       ++inside;
                                       gate.pass();
                                       std::this_thread::sleep_for(std::chrono::milliseconds(50));
                                       c.spend(1e-3);
                                       --inside;
                                       return n + 1;
                                     }});
  std::uint64_t n = 64, m = 128;
  CHECK(tuner->execute(client, set, SizeKey{64}, n) == 64);
  CHECK(tuner->execute(client, set, SizeKey{128}, m) == 128);
  gate.wait_arrival();
  std::thread destroyer([&] { tuner.reset(); });
  gate.open();
  destroyer.join();  // returns: the running tuning ended, the queued one was dropped or done
  CHECK(tuner == nullptr);
  CHECK(inside == 0);  // nothing of the tuner runs any more
}

TEST_CASE("background: prepare() tunes first, as the caller keeps what it binds to",
          "[background]") {
  Gate gate;
  gate.open();
  ThreadClient client;
  LocalTuner<SizeKey> tuner("prepared_op", background_settings());
  const auto& set = tuner.init([&] { return gated_set(gate, std::this_thread::get_id()); });
  std::uint64_t n = 64;
  const auto prepared = tuner.prepare(client.id(), client, set, n);
  CHECK(prepared(client, n) == 65);  // the winner 'gated', not the provisional 'plain'
  CHECK(tuner.execute(client.id(), client, set, n) == 65);
  CHECK(tuner.last_call()->path == CallPath::dispatched);
}

TEST_CASE("background: where the reference fails a call, the call fails, no unvalidated one serves",
          "[background][pick]") {
  ThreadClient client;
  Tuner<SizeKey> tuner("validated_fallback_op", client.id(), background_settings(), nullptr);
  Gate tuning;  // holds the background tuning in its input generator
  auto inputs = [&tuning](const SizeKey& key, const std::uint64_t&) {
    tuning.pass();
    return std::tuple<std::uint64_t>(key.n.value());
  };
  const auto set = TunableSet{key_of, inputs}
                       .with(Tunable{"reference",
                                     [](ThreadClient& c, std::uint64_t& n) {
                                       c.spend(3e-3);
                                       if (n % 2) throw std::runtime_error("odd sizes unsupported");
                                       return 2 * n;
                                     }})
                       .with(Tunable{"fast but wrong",
                                     [](ThreadClient& c, std::uint64_t& n) {
                                       c.spend(1e-3);
                                       return 2 * n + 1;
                                     }})
                       .validate_with(std::equal_to<>{});
  std::uint64_t odd = 101;
  CHECK_THROWS_WITH(tuner.execute(client, set, SizeKey{101}, odd),
                    Catch::Contains("odd sizes unsupported"));
  tuning.open();
  tuner.wait_for_tunings();
}

TEST_CASE(
    "background: an input generator out of memory once leaves the key provisional, then tuned",
    "[background][failure]") {
  ThreadClient client;
  Settings settings = background_settings();
  settings.retry_seconds = 0;  // the back-off passes at once: the next call queues it again
  Tuner<SizeKey> tuner("generator_once_op", client.id(), settings, nullptr);
  std::atomic<int> generated{0};
  auto inputs = [&generated](const SizeKey& key, const std::uint64_t&) {
    if (generated++ == 0) throw std::bad_alloc();
    return std::tuple<std::uint64_t>(key.n.value());
  };
  const auto set = TunableSet{key_of, inputs}
                       .with(Tunable{"a", returns_n(2e-3)})
                       .with(Tunable{"b", returns_n(1e-3)});
  std::uint64_t n = 64;
  CHECK(tuner.execute(client, set, SizeKey{64}, n) == 64);
  tuner.wait_for_tunings();  // failed for the moment: nothing decided
  CHECK(tuner.execute(client, set, SizeKey{64}, n) == 64);  // served, not the failure
  CHECK(last_call().path == CallPath::provisional);
  tuner.wait_for_tunings();  // queued again by that call: tuned now
  CHECK(tuner.execute(client, set, SizeKey{64}, n) == 64);
  CHECK(last_call().path == CallPath::dispatched);
  CHECK(last_call().candidate == 1);
}

namespace {

// A shared store in which another machine tunes one key (n=64) until release(): its lock is busy
// when tried, and lock_for_tuning waits for the release (as RedisStore's waits, up to its
// lease_wait of 10 minutes).
struct BusyKeyStore final : ResultStore {
  std::mutex mutex;
  std::condition_variable changed;
  bool released = false;
  std::atomic<int> tries{0};
  static bool busy_key(const EntryId& id) { return id.key.find("n=64") != std::string::npos; }
  std::optional<StoredResult> load(const EntryId&) override { return std::nullopt; }
  void save(const EntryId&, const StoredResult&) override {}
  std::unique_ptr<TuningLock> lock_for_tuning(const EntryId& id) override {
    std::unique_lock lock(mutex);
    if (busy_key(id)) changed.wait(lock, [this] { return released; });
    return nullptr;
  }
  TuningLockAttempt try_lock_for_tuning(
      const EntryId& id, std::chrono::steady_clock::time_point waiting_since) override {
    if (!busy_key(id)) return {};
    ++tries;
    std::lock_guard lock(mutex);
    // The tuner counts the wait from the first try (the store's limit runs from it).
    if (!first_waiting_since) first_waiting_since = waiting_since;
    same_waiting_since = same_waiting_since && *first_waiting_since == waiting_since;
    return {nullptr, !released};
  }
  std::optional<std::chrono::steady_clock::time_point> first_waiting_since;
  bool same_waiting_since = true;
  void release() {
    std::lock_guard lock(mutex);
    released = true;
    changed.notify_all();
  }
};

// Whether `done` became true before 60 s passed (it never needs that long: the release that
// would otherwise end the wait comes only after this).
bool before_a_minute(const std::function<bool()>& done) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!done()) {
    if (std::chrono::steady_clock::now() >= give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace

TEST_CASE(
    "background: a key another machine is tuning waits off the worker: other keys are tuned "
    "meanwhile, a stop does not wait for it, and it is tuned once free",
    "[background][lease]") {
  auto store = std::make_shared<BusyKeyStore>();
  ThreadClient client;
  Tuner<SizeKey> tuner("background_busy_op", client.id(), background_settings(), store);
  const auto set = TunableSet{key_of, n_input}
                       .with(Tunable{"plain", returns_n(2e-3)})
                       .with(Tunable{"faster", returns_n(1e-3)});
  std::uint64_t busy = 64, other = 1024;
  CHECK(tuner.execute(client, set, SizeKey{64}, busy) == 64);
  CHECK(last_call().path == CallPath::provisional);
  CHECK(tuner.execute(client, set, SizeKey{1024}, other) == 1024);  // queued behind 64
  // 1024 is tuned while 64's lock stays busy, and 64's tuning was tried again meanwhile.
  const bool other_tuned = before_a_minute([&] { return tuner.report(SizeKey{1024}).has_value(); });
  CHECK(other_tuned);
  CHECK(before_a_minute([&] { return store->tries >= 2; }));
  CHECK_FALSE(tuner.report(SizeKey{64}));
  {
    std::lock_guard lock(store->mutex);
    CHECK(store->same_waiting_since);
  }
  // A stop (the client going) does not wait for the other machine.
  std::atomic<bool> stopped{false};
  std::thread stopper([&] {
    stop_background_tunings_using(&client);
    stopped = true;
  });
  const bool stop_did_not_wait = before_a_minute([&] { return stopped.load(); });
  store->release();
  stopper.join();
  CHECK(stop_did_not_wait);
  // Free now: the next call queues 64 again (its tuning ended undecided), and it is tuned.
  CHECK(tuner.execute(client, set, SizeKey{64}, busy) == 64);
  tuner.wait_for_tunings();
  REQUIRE(tuner.report(SizeKey{64}));
  CHECK(tuner.report(SizeKey{64})->winner()->name == "faster");
}

TEST_CASE(
    "background: a job that waits for another process goes behind the others, and the exit's "
    "grace does not wait for it",
    "[background][lease]") {
  auto queue = detail::make_background_queue();
  const int client = 0;
  std::atomic<int> waiting_runs{0};
  std::atomic<bool> other_ran{false};
  REQUIRE(queue->push(
      [&] {
        ++waiting_runs;
        return true;  // its key is another process's to tune: again later
      },
      &client));
  REQUIRE(queue->push(once([&] { other_ran = true; }), &client));
  CHECK(before_a_minute([&] { return other_ran && waiting_runs >= 3; }));
  // Only the waiting job is left: a grace of a minute ends at once (no speed is assumed: the
  // bound is half the grace).
  const auto started = std::chrono::steady_clock::now();
  queue->finish_until(started + std::chrono::seconds(60));
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(30));
  queue->stop();
}
