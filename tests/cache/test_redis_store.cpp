// The Redis result store against a real redis-server (tests/cache/redis_server.hpp), started by
// each test on a free loopback port; skipped with a message where redis-server is not installed.
#include <hiredis/hiredis.h>
#include <poll.h>

#include <catch2/catch.hpp>
#include <optional>
#include <set>
#include <tunekit/redis_store.hpp>

#include "../../src/cache/host_resolution.hpp"
#include "redis_server.hpp"
#include "test_cache_support.hpp"

using namespace tunekit;
using namespace tunekit::test;

namespace {

#define REQUIRE_REDIS_SERVER(server)                                                      \
  auto server = RedisServer::start_if_installed();                                        \
  if (!server) {                                                                          \
    WARN(                                                                                 \
        "redis-server is not installed (Debian: redis-server; scripts/install-deps.sh): " \
        "skipped");                                                                       \
    SUCCEED("skipped");                                                                   \
    return;                                                                               \
  }

/// A plain client, to look at and tamper with what the store wrote.
class RawClient {
 public:
  explicit RawClient(int port) {
    const timeval timeout{2, 0};
    context_ = redisConnectWithTimeout("127.0.0.1", port, timeout);
    if (context_ == nullptr || context_->err) throw std::runtime_error("cannot connect");
    redisSetTimeout(context_, timeout);
  }
  ~RawClient() { redisFree(context_); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  /// The reply as text: a string or status as is, an integer in decimal, nil as "(nil)".
  std::string run(std::vector<std::string> args) {
    std::vector<const char*> argv;
    std::vector<size_t> lengths;
    for (auto& a : args) {
      argv.push_back(a.data());
      lengths.push_back(a.size());
    }
    auto* reply = static_cast<redisReply*>(
        redisCommandArgv(context_, static_cast<int>(argv.size()), argv.data(), lengths.data()));
    if (reply == nullptr) throw std::runtime_error("no reply");
    std::string text;
    if (reply->type == REDIS_REPLY_INTEGER)
      text = std::to_string(reply->integer);
    else if (reply->type == REDIS_REPLY_NIL)
      text = "(nil)";
    else if (reply->str != nullptr)
      text.assign(reply->str, reply->len);
    freeReplyObject(reply);
    return text;
  }
  /// Every key matching `pattern` (KEYS: a test database is small).
  std::vector<std::string> keys(const std::string& pattern) {
    auto* reply = static_cast<redisReply*>(redisCommand(context_, "KEYS %s", pattern.c_str()));
    std::vector<std::string> found;
    if (reply && reply->type == REDIS_REPLY_ARRAY) {
      for (std::size_t i = 0; i < reply->elements; ++i) {
        found.emplace_back(reply->element[i]->str, reply->element[i]->len);
      }
    }
    if (reply) freeReplyObject(reply);
    std::sort(found.begin(), found.end());
    return found;
  }

 private:
  redisContext* context_ = nullptr;
};

EntryId sample_id(const std::string& key = "[1024]") {
  return EntryId{"device A", "redis_op", key, 0xfeedULL};
}

RedisStore::Options fast_options() {
  RedisStore::Options o;
  o.connect_timeout = std::chrono::milliseconds(500);
  o.command_timeout = std::chrono::milliseconds(1000);
  o.retry_interval = std::chrono::milliseconds(50);
  o.lease_ttl = std::chrono::milliseconds(300);
  o.lease_wait = std::chrono::seconds(10);
  return o;
}

/// A fresh LocalTuner of one candidate with `settings` executes key `n` of `op` once.
std::uint64_t run_one(const Settings& settings, const std::string& op, std::uint64_t n) {
  LocalTuner<SizeKey> tuner(op, settings);
  VirtualClient client("device A");
  const auto& set = tuner.init([] {
    return TunableSet{[](const std::uint64_t& n) { return SizeKey{n}; },
                      [](const SizeKey& k, const std::uint64_t&) {
                        return std::tuple<std::uint64_t>(k.n.value());
                      }}
        .with(Tunable{"only",
                      [](VirtualClient& c, std::uint64_t& n) {
                        c.spend(1e-3);
                        return n;
                      }})
        // Two candidates: a set of one is never tuned nor stored.
        .with(Tunable{"slower", [](VirtualClient& c, std::uint64_t& n) {
                        c.spend(3e-3);
                        return n;
                      }});
  });
  return tuner.execute(client.id(), client, set, n);
}

bool same(const StoredResult& a, const StoredResult& b) {
  return a.winner == b.winner && a.winner_index == b.winner_index &&
         a.outcomes.size() == b.outcomes.size();
}

}  // namespace

TEST_CASE("store URLs are checked strictly", "[redis]") {
  const auto ok = parse_store_url("redis://127.0.0.1:6380/2");
  CHECK(ok.host == "127.0.0.1");
  CHECK(ok.port == 6380);
  CHECK(ok.db == 2);
  CHECK(parse_store_url("redis://cache-1.example.com").url() ==
        "redis://cache-1.example.com:6379/0");
  CHECK(parse_store_url("redis://[::1]:7000/0").host == "::1");
  CHECK(parse_store_url("redis://[::1]:7000/0").url() == "redis://[::1]:7000/0");
  for (const char* bad : {"",
                          "redis://",
                          "redis:///0",
                          "http://host:6379/0",
                          "rediss://host/0",
                          "redis://user:secret@host/0",
                          "redis://host:0/0",
                          "redis://host:65536/0",
                          "redis://host:-1/0",
                          "redis://host:/0",
                          "redis://host:6379/",
                          "redis://host:6379/x",
                          "redis://host:6379/65536",
                          "redis://host:6379/00",
                          "redis://host:6379/0?db=1",
                          "redis://host:6379/0#x",
                          "redis://ho st/0",
                          "redis://host\n/0",
                          "redis://-host/0",
                          "redis://host-/0",
                          "redis://a..b/0",
                          "redis://h%41st/0",
                          "redis://[::1/0",
                          "redis://[zz::1]/0",
                          "redis://[::1]x/0",
                          "redis://host:6379/0/1",
                          "REDIS://host/0",
                          "redis://host:+6379/0",
                          "redis://host:06379/0"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_store_url(bad), AutotuneError);
  }
  CHECK_THROWS_WITH(parse_store_url("redis://u:pw@h/0"), Catch::Contains("TUNEKIT_STORE_PASSWORD"));
  const auto fleet = parse_store_url("redis://tuner@cache-1:6380/3?prefix=app1:v2");
  CHECK(fleet.user == "tuner");
  CHECK(fleet.prefix == "app1:v2");
  CHECK(fleet.url() == "redis://tuner@cache-1:6380/3?prefix=app1:v2");
  for (const char* bad : {"redis://h/0?prefix=", "redis://h/0?prefix=a*", "redis://h/0?prefix=a b",
                          "redis://h/0?prefix=x&db=1", "redis://@h/0", "redis://u$@h/0",
                          "redis://h/0?prefix=tunekit:v2:"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_store_url(bad), AutotuneError);
  }
  CHECK_THROWS_WITH(parse_store_url(std::string(300, 'a')), Catch::Contains("longer than 255"));
  CHECK_THROWS_WITH(parse_store_url(std::string("redis://h\x01/0"), "X"),
                    Catch::Contains("X='redis://h\\x01/0' is not a store URL"));
}

TEST_CASE("TUNEKIT_STORE is checked when the settings are read", "[redis]") {
  ::setenv("TUNEKIT_STORE", "redis://evil host/0", 1);
  CHECK_THROWS_WITH(Settings::from_environment(), Catch::Contains("TUNEKIT_STORE="));
  ::setenv("TUNEKIT_STORE", "redis://127.0.0.1:6390/3", 1);
  CHECK(Settings::from_environment().store == "redis://127.0.0.1:6390/3");
  ::unsetenv("TUNEKIT_STORE");
  CHECK(Settings::from_environment().store.empty());
}

TEST_CASE("an unreachable server: local results, one warning, nothing waits", "[redis]") {
  if (!redis_store_built()) return;
  const int port = free_loopback_port();  // nothing listens there
  CapturedWarnings warnings;
  RedisStore store(parse_store_url("redis://127.0.0.1:" + std::to_string(port) + "/0"),
                   fast_options());
  const auto started = std::chrono::steady_clock::now();
  CHECK_FALSE(store.load(sample_id()));
  store.save(sample_id(), sample_result());
  CHECK_FALSE(store.load(sample_id("[2048]")));
  auto lock = store.lock_for_tuning(sample_id());  // no lease: tunes here
  CHECK(lock != nullptr);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
  CHECK(store.pending() == 1);
  CHECK_FALSE(store.reachable());
  CHECK(warnings.count("cannot be used") == 1);
  CHECK_THROWS_AS(store.entries(), AutotuneError);

  // Through a tuner: tuned and kept locally.
  TempDir dir;
  Settings settings = cache_settings(dir.path());
  settings.store = "redis://127.0.0.1:" + std::to_string(port) + "/0";
  CHECK(run_one(settings, "unreachable_op", 7) == 7);
  CHECK(FileStore(dir.path()).entries("unreachable_op").size() == 1);
}

TEST_CASE("a server that never completes the connection is given up at connect_timeout",
          "[redis]") {
  if (!redis_store_built()) return;
  // A listener whose queue of one is full: Linux drops the next connection's SYN, and the
  // connect waits (retransmitting) far past any deadline of ours.
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(listener >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  REQUIRE(::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) == 0);
  REQUIRE(::listen(listener, 0) == 0);
  const int filler = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(::connect(filler, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  RedisStore::Options options = fast_options();
  options.connect_timeout = std::chrono::milliseconds(300);
  options.command_timeout = std::chrono::seconds(20);  // the connect's own deadline must hold
  CapturedWarnings warnings;
  RedisStore store(
      parse_store_url("redis://127.0.0.1:" + std::to_string(ntohs(address.sin_port)) + "/0"),
      options);
  const auto started = std::chrono::steady_clock::now();
  CHECK_FALSE(store.load(sample_id()));
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
  CHECK(warnings.count("no connection within 300 ms") == 1);
  ::close(filler);
  ::close(listener);
}

TEST_CASE("results go to the server and come back from it", "[redis]") {
  if (!redis_store_built()) return;
  REQUIRE_REDIS_SERVER(server);
  RedisStore store(parse_store_url(server->url(3)), fast_options());
  CHECK_FALSE(store.load(sample_id()));
  store.save(sample_id(), sample_result());
  CHECK(store.reachable());
  RedisStore other(parse_store_url(server->url(3)), fast_options());
  const auto back = other.load(sample_id());
  REQUIRE(back);
  CHECK(same(*back, sample_result()));
  CHECK(back->outcomes[2].error->message() == sample_result().outcomes[2].error->message());
  // Another database, device, set checksum: not this entry.
  CHECK_FALSE(RedisStore(parse_store_url(server->url(4)), fast_options()).load(sample_id()));
  EntryId other_device = sample_id();
  other_device.device = "device B";
  CHECK_FALSE(other.load(other_device));
  EntryId other_set = sample_id();
  other_set.checksum = 1;
  CHECK_FALSE(other.load(other_set));

  CHECK(other.entries().size() == 1);
  CHECK(other.ops() == std::vector<std::string>{"redis_op"});
  CHECK(other.entries("other_op").empty());

  // export / import go through the file store's bundle format.
  TempDir dir;
  CHECK(other.export_to(dir / "bundle.json") == 1);
  CHECK(other.clear("redis_op") == 1);
  CHECK(other.entries().empty());
  CHECK(other.import_from(dir / "bundle.json") == 1);
  CHECK(other.import_from(dir / "bundle.json", ImportMode::keep_existing) == 0);
  REQUIRE(store.load(sample_id()));
  CHECK(other.clear() == 1);
  CHECK_FALSE(store.load(sample_id()));
}

TEST_CASE("a remembered failure is neither sent to the server nor taken from it", "[redis]") {
  if (!redis_store_built()) return;
  REQUIRE_REDIS_SERVER(server);
  StoredResult failed = sample_result();
  failed.winner.clear();
  for (auto& outcome : failed.outcomes) {
    outcome.status = OutcomeStatus::failed;
    outcome.error = AutotuneError(ErrorKind::build, "failed here", outcome.name);
  }
  RedisStore store(parse_store_url(server->url()), fast_options());
  store.save(sample_id(), failed);
  CHECK(store.entries().empty());
  // One planted by hand (a forged or foreign one) is ignored, and said once.
  store.save(sample_id(), sample_result());
  RawClient raw(server->port());
  const auto keys = raw.keys("tunekit:*entry:*");
  REQUIRE(keys.size() == 1);
  raw.run(
      {"SET", keys[0], detail::write_cache_file("redis_op", {CacheEntry{sample_id(), failed}})});
  CapturedWarnings warnings;
  CHECK_FALSE(RedisStore(parse_store_url(server->url()), fast_options()).load(sample_id()));
  CHECK(warnings.count("remembered failure") == 1);
}

TEST_CASE("a bad or forged entry on the server is reported and ignored", "[redis]") {
  if (!redis_store_built()) return;
  REQUIRE_REDIS_SERVER(server);
  RedisStore store(parse_store_url(server->url()), fast_options());
  store.save(sample_id("[1]"), sample_result());
  store.save(sample_id("[2]"), sample_result(2e-3));
  RawClient raw(server->port());
  const auto keys = raw.keys("tunekit:*entry:*");
  REQUIRE(keys.size() == 2);
  const std::string first = raw.run({"GET", keys[0]});
  const std::string second = raw.run({"GET", keys[1]});
  const auto load_all = [&] {
    int found = 0;
    for (const char* key : {"[1]", "[2]"})
      found += RedisStore(parse_store_url(server->url()), fast_options())
                   .load(sample_id(key))
                   .has_value();
    return found;
  };
  REQUIRE(load_all() == 2);

  SECTION("garbage") {
    raw.run({"SET", keys[0], std::string("\0\xff{\"format\":", 12)});
    raw.run({"SET", keys[1],
             "{\"format\":\"tunekit-cache-table\",\"version\":2,\"op\":\"redis_op\",\"entries\":[[["
             "[[[[[[[[]]]]]]]]]]]}"});
  }
  SECTION("an edited number (the entry checksum fails)") {
    std::string edited = first;
    const auto at = edited.find("\"samples\": 12");
    REQUIRE(at != std::string::npos);
    edited.replace(at, 13, "\"samples\": 13");
    raw.run({"SET", keys[0], edited});
    raw.run({"SET", keys[1], first});  // another key's valid entry under this name
  }
  SECTION("a key of another type") {
    raw.run({"DEL", keys[0]});
    raw.run({"RPUSH", keys[0], "a"});
    raw.run({"SET", keys[1], second.substr(0, second.size() / 2)});  // truncated
  }
  CapturedWarnings warnings;
  CHECK(load_all() == 0);
  CHECK(warnings.count("ignoring the entry") == 2);
  // A listing reports them too, and lists nothing of them.
  CHECK(store.entries().empty());
  // A new result replaces the bad one.
  store.save(sample_id("[1]"), sample_result());
  CHECK(load_all() == 1);
}

TEST_CASE("a second process gets a result from the server without tuning", "[redis]") {
  if (!redis_store_built()) return;
  REQUIRE_REDIS_SERVER(server);
  TempDir dir;
  const auto url = server->url();
  CHECK(run_child({"--dir", (dir / "a").string(), "--store", url, "64", "128"}, dir / "a.out") ==
        2);
  // Another machine: its own empty local cache, the same server.
  CHECK(run_child({"--dir", (dir / "b").string(), "--store", url, "64", "128"}, dir / "b.out") ==
        0);
  CHECK(read_text(dir / "b.out").find("winners=fast,fast") != std::string::npos);
  // ... and kept locally: without the server, still no tuning.
  server->kill();
  CHECK(run_child({"--dir", (dir / "b").string(), "--store", url, "64", "128"}, dir / "c.out") ==
        0);
  CHECK(FileStore(dir / "b").entries("child_op").size() == 2);
}

TEST_CASE("several processes meeting a new key: one tunes, the others wait for it", "[redis]") {
  if (!redis_store_built()) return;
  REQUIRE_REDIS_SERVER(server);
  TempDir dir;
  const auto url = server->url();
  std::vector<std::unique_ptr<Child>> children;
  for (int i = 0; i < 4; ++i) {
    const std::string name = "m" + std::to_string(i);
    children.push_back(std::make_unique<Child>(
        std::vector<std::string>{"--dir", (dir / name).string(), "--store", url, "--tune-ms", "100",
                                 "--counter", (dir / "counter").string(), "--start-file",
                                 (dir / "go").string(), "4096"},
        dir / (name + ".out")));
  }
  write_text(dir / "go", "");
  int total = 0;
  std::set<std::string> outputs;
  for (int i = 0; i < 4; ++i) {
    CHECK(children[i]->wait() == 0);
    total += children[i]->tunings();
    const std::string out = read_text(dir / ("m" + std::to_string(i) + ".out"));
    outputs.insert(out.substr(std::min(out.find("winners="), out.size())));
  }
  CHECK(total == 1);
  const std::string counter = read_text(dir / "counter");
  CHECK(std::count(counter.begin(), counter.end(), '\n') == 1);
  CHECK(outputs == std::set<std::string>{"winners=fast\n"});  // all the same winner
}

TEST_CASE("a crashed tuner's lease expires, and a waiter then takes it", "[redis]") {
  if (!redis_store_built()) return;
  REQUIRE_REDIS_SERVER(server);
  TempDir dir;
  const auto url = server->url();
  RedisStore::Options options = fast_options();
  const pid_t pid = ::fork();
  if (pid == 0) {  // the tuner that dies holding the lease
    RedisStore store(parse_store_url(url), options);
    auto lease = store.lock_for_tuning(sample_id());
    std::ofstream(dir / "held") << "held";
    ::raise(SIGKILL);
    ::_exit(1);
  }
  REQUIRE(pid > 0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(fs::exists(dir / "held"));
  RawClient raw(server->port());
  REQUIRE(raw.keys("tunekit:*lease:*").size() == 1);  // left behind
  RedisStore store(parse_store_url(url), options);
  const auto started = std::chrono::steady_clock::now();
  auto lease = store.lock_for_tuning(sample_id());
  const auto waited = std::chrono::steady_clock::now() - started;
  CHECK(waited < options.lease_wait);  // not the whole bounded wait: the lease expired
  const auto keys = raw.keys("tunekit:*lease:*");
  REQUIRE(keys.size() == 1);
  CHECK(raw.run({"GET", keys[0]}).ends_with("pid " + std::to_string(::getpid())));
  // Renewed while held: still there after several times its time to live.
  std::this_thread::sleep_for(options.lease_ttl * 3);
  CHECK(raw.keys("tunekit:*lease:*").size() == 1);
  lease.reset();
  CHECK(raw.keys("tunekit:*lease:*").empty());
}

TEST_CASE("a waiter for a lease its holder keeps renewing stops at lease_wait and tunes too",
          "[redis]") {
  if (!redis_store_built()) return;
  REQUIRE_REDIS_SERVER(server);
  RedisStore::Options options = fast_options();  // a lease of 300 ms, renewed while held
  RedisStore holder(parse_store_url(server->url()), options);
  auto lease = holder.lock_for_tuning(sample_id());
  REQUIRE(lease);
  options.lease_wait = std::chrono::milliseconds(400);
  RedisStore waiter(parse_store_url(server->url()), options);
  CapturedWarnings warnings;
  const auto started = std::chrono::steady_clock::now();
  auto mine = waiter.lock_for_tuning(sample_id());
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now() - started)
                          .count();
  CHECK(waited >= 400);
  CHECK(waited < 4000);  // ten times lease_wait: a loaded machine's room, not a wait without end
  CHECK(warnings.count("tuning here as well") == 1);
  RawClient raw(server->port());
  const auto keys = raw.keys("tunekit:*lease:*");
  REQUIRE(keys.size() == 1);  // still the holder's: the waiter took nothing
  CHECK(raw.run({"GET", keys[0]}).ends_with("pid " + std::to_string(::getpid())));
  mine.reset();
  CHECK(raw.keys("tunekit:*lease:*").size() == 1);  // letting go of nothing frees nothing
}

TEST_CASE("a try of a lease another machine holds is busy at once, and free once it is let go",
          "[redis]") {
  if (!redis_store_built()) return;
  REQUIRE_REDIS_SERVER(server);
  RedisStore::Options options = fast_options();
  options.lease_wait = std::chrono::seconds(60);
  RedisStore holder(parse_store_url(server->url()), options);
  RedisStore other(parse_store_url(server->url()), options);
  const auto now = std::chrono::steady_clock::now();
  auto lease = holder.lock_for_tuning(sample_id());
  CapturedWarnings warnings;
  const auto tried = other.try_lock_for_tuning(sample_id(), now);
  CHECK(tried.busy);
  CHECK_FALSE(tried.lock);
  CHECK(std::chrono::steady_clock::now() - now < std::chrono::seconds(30));  // no lease_wait
  CHECK_FALSE(other.try_lock_for_tuning(sample_id("[2048]"), now).busy);     // another key
  // Busy since longer than lease_wait: tunes here as well, said.
  CHECK_FALSE(other.try_lock_for_tuning(sample_id(), now - std::chrono::seconds(61)).busy);
  CHECK(warnings.count("tuning here as well") == 1);
  lease.reset();
  auto taken = other.try_lock_for_tuning(sample_id(), now);
  CHECK_FALSE(taken.busy);
  CHECK(taken.lock);
  CHECK(holder.try_lock_for_tuning(sample_id(), now).busy);
}

TEST_CASE(
    "a layered try lets its local lock go while the fleet's lease is busy, and holds both once "
    "free",
    "[redis]") {
  if (!redis_store_built()) return;
  REQUIRE_REDIS_SERVER(server);
  TempDir dir;
  const RedisStore::Options options = fast_options();
  RedisStore holder(parse_store_url(server->url()), options);
  LayeredStore layered(std::make_shared<FileStore>(dir.path()),
                       std::make_shared<RedisStore>(parse_store_url(server->url()), options));
  FileStore local(dir.path());  // another process of this machine, on the same directory
  const auto now = std::chrono::steady_clock::now();
  auto lease = holder.lock_for_tuning(sample_id());
  CHECK(layered.try_lock_for_tuning(sample_id(), now).busy);
  CHECK_FALSE(local.try_lock_for_tuning(sample_id(), now).busy);  // the local lock was let go
  lease.reset();
  auto both = layered.try_lock_for_tuning(sample_id(), now);
  CHECK_FALSE(both.busy);
  REQUIRE(both.lock);
  CHECK(local.try_lock_for_tuning(sample_id(), now).busy);   // held: the local lock ...
  CHECK(holder.try_lock_for_tuning(sample_id(), now).busy);  // ... and the lease
}

TEST_CASE("the server killed mid-tuning: the tuning ends, the result is kept locally", "[redis]") {
  if (!redis_store_built()) return;
  REQUIRE_REDIS_SERVER(server);
  TempDir dir;
  Child child({"--dir", (dir / "a").string(), "--store", server->url(), "--tune-ms", "300",
               "--counter", (dir / "counter").string(), "512"},
              dir / "a.out");
  // Kill the server once the child holds the lease (it is tuning).
  RawClient raw(server->port());
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (raw.keys("tunekit:*lease:*").empty() && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  server->kill();
  CHECK(child.wait() == 0);
  CHECK(child.tunings() == 1);
  CHECK(FileStore(dir / "a").entries("child_op").size() == 1);
}

TEST_CASE("results saved while the server is away are sent when it is back", "[redis]") {
  if (!redis_store_built()) return;
  REQUIRE_REDIS_SERVER(server);
  RedisStore store(parse_store_url(server->url()), fast_options());
  store.save(sample_id("[1]"), sample_result());
  server->kill();
  CapturedWarnings warnings;
  store.save(sample_id("[2]"), sample_result());
  store.save(sample_id("[3]"), sample_result());
  CHECK(store.pending() == 2);
  CHECK(warnings.count("cannot be used") == 1);
  REQUIRE(server->restart());  // empty: nothing was saved
  // "Later": the first call after retry_interval reconnects and sends them.
  std::this_thread::sleep_for(fast_options().retry_interval * 2);
  CHECK_FALSE(store.load(sample_id("[1]")));  // lost with the server
  CHECK(store.pending() == 0);
  CHECK(warnings.count("is back; sent it the 2 results") == 1);
  RedisStore other(parse_store_url(server->url()), fast_options());
  CHECK(other.load(sample_id("[2]")));
  CHECK(other.load(sample_id("[3]")));
}

TEST_CASE("a bad store URL given in code: reported once, the local cache is used", "[redis]") {
  TempDir dir;
  Settings settings = cache_settings(dir.path());
  settings.store = "redis://host:99999/0";
  CapturedWarnings warnings;
  CHECK(run_one(settings, "bad_url_op", 3) == 3);
  CHECK(warnings.count("is not a store URL") == 1);
  CHECK(FileStore(dir.path()).entries("bad_url_op").size() == 1);
}

TEST_CASE("a server that answers garbage is a server away, not a crash or a hang", "[redis]") {
  if (!redis_store_built()) return;
  // A listener that answers every connection with bytes that are not the Redis protocol, or
  // with a reply of the wrong kind, then closes.
  for (const std::string& answer : {std::string("hello\r\n"), std::string("$99999999999\r\nabc"),
                                    std::string(":1\r\n:2\r\n:3\r\n"), std::string("*-5\r\n")}) {
    CAPTURE(answer);
    FakeRedis server([&](int socket, const std::atomic<bool>&) {
      FakeRedis::read_command(socket);
      (void)FakeRedis::send_all(socket, answer);
    });
    RedisStore::Options options = fast_options();
    options.command_timeout = std::chrono::milliseconds(300);
    const auto started = std::chrono::steady_clock::now();
    {
      CapturedWarnings warnings;
      RedisStore store(parse_store_url(server.url()), options);
      CHECK_FALSE(store.load(sample_id()));
      auto lock = store.lock_for_tuning(sample_id());
      store.save(sample_id(), sample_result());
      CHECK_THROWS_AS(store.entries(), AutotuneError);
      CHECK(warnings.count("cannot be used") + warnings.count("ignoring the entry") >= 1);
    }
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(10));
  }
}

TEST_CASE("a connection the server closed while idle is replaced, and the server is not lost",
          "[redis]") {
  if (!redis_store_built()) return;
  // Every connection answers one command (an absent entry) and is closed, as a server with
  // `timeout` set closes an idle client: the next command must go on a new connection.
  FakeRedis server([&](int socket, const std::atomic<bool>&) {
    FakeRedis::read_command(socket);
    (void)FakeRedis::send_all(socket, "$0\r\n\r\n");
  });
  CapturedWarnings warnings;
  RedisStore store(parse_store_url(server.url()), fast_options());
  for (int i = 0; i < 3; ++i) {
    CHECK_FALSE(store.load(sample_id()));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the close arrives
  }
  INFO(warnings.text());
  CHECK(warnings.count("cannot be used") == 0);
  CHECK(server.connections() == 3);
}

TEST_CASE(
    "a reply of a type never asked for, nested deeper than any asked for, or framed by bare CR or "
    "LF, is refused",
    "[redis]") {
  if (!redis_store_built()) return;
  std::string answer, reason;
  SECTION("a RESP3 map announcing 2^31 entries") {
    answer = "%2147483648\r\n";
    reason = "a reply of a type tunekit never asks for ('%')";
  }
  SECTION("arrays nested 5 deep (a SCAN reply is 2)") {
    answer = "*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n";
    reason = "a reply nested more than 4 arrays deep";
  }
  SECTION("a status line ended by a bare LF, hiding those arrays from a count by LF") {
    // The parser reads "+a\n$1000" as one status line and then the nesting; a framing that
    // ended lines at LF would see a bulk string of 1000 bytes there and skip the arrays.
    answer = "*2\r\n+a\n$1000\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n";
    reason = "not the Redis protocol: a bare CR or LF in a line";
  }
  SECTION("a bare CR inside a line") {
    answer = "+a\rb\r\n";
    reason = "not the Redis protocol: a bare CR or LF in a line";
  }
  CAPTURE(answer);
  FakeRedis server([&](int socket, const std::atomic<bool>&) {
    FakeRedis::read_command(socket);
    (void)FakeRedis::send_all(socket, answer);
  });
  CapturedWarnings warnings;
  RedisStore store(parse_store_url(server.url()), fast_options());
  CHECK_FALSE(store.load(sample_id()));
  INFO(warnings.text());
  CHECK(warnings.count(reason) == 1);
}

namespace {
/// Milliseconds since `start`.
long long ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start)
      .count();
}
/// Sleeps `ms`, in steps, unless `stop` is raised meanwhile; false when it was.
bool nap(int ms, const std::atomic<bool>& stop) {
  for (int slept = 0; slept < ms; slept += 10) {
    if (stop) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return !stop;
}
}  // namespace

TEST_CASE("a server whose SCAN cursor never ends fails the listing within its deadline",
          "[redis]") {
  if (!redis_store_built()) return;
  // Each round answered at once with cursor 7 and no keys: 2^20 rounds (the old only bound)
  // of up to a command's deadline each would hold `tunekit cache ls` for hours (review 7).
  FakeRedis server([](int socket, const std::atomic<bool>& stop) {
    while (!stop) {
      pollfd wait{socket, POLLIN, 0};
      if (::poll(&wait, 1, 20) <= 0) continue;
      char buffer[65536];
      if (::recv(socket, buffer, sizeof buffer, 0) <= 0) return;
      if (!FakeRedis::send_all(socket, "*2\r\n$1\r\n7\r\n*0\r\n")) return;
    }
  });
  RedisStore::Options options = fast_options();
  options.listing_timeout = std::chrono::milliseconds(1500);
  RedisStore store(parse_store_url(server.url()), options);
  const auto started = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(store.entries(), Catch::Contains("did not end its SCAN within 1500 ms"));
  CHECK(ms_since(started) < 4000);
}

TEST_CASE("a server that trickles its reply fails within one command's deadline", "[redis]") {
  if (!redis_store_built()) return;
  // One byte every 1.5 s: under hiredis's timeout per read (2 s) that never timed out.
  FakeRedis server([](int socket, const std::atomic<bool>& stop) {
    FakeRedis::read_command(socket);
    const std::string reply = "$40\r\n0123456789012345678901234567890123456789\r\n";
    for (char byte : reply) {
      if (!FakeRedis::send_all(socket, std::string_view(&byte, 1)) || !nap(1500, stop)) return;
    }
  });
  RedisStore::Options options;  // the defaults: 2 s per command
  options.retry_interval = std::chrono::milliseconds(50);
  CapturedWarnings warnings;
  SECTION("a lookup") {
    RedisStore store(parse_store_url(server.url()), options);
    const auto started = std::chrono::steady_clock::now();
    CHECK_FALSE(store.load(sample_id()));
    const auto waited = ms_since(started);
    CHECK(waited >= 1900);
    CHECK(waited < 3000);
    CHECK(warnings.count("no whole reply within 2000 ms") == 1);
    // Away now: the next calls answer at once.
    const auto then = std::chrono::steady_clock::now();
    options.retry_interval = std::chrono::seconds(10);
    RedisStore away(parse_store_url(server.url()), options);
    (void)away.load(sample_id());  // the deadline once more, then away
    const auto again = std::chrono::steady_clock::now();
    auto lock = away.lock_for_tuning(sample_id());
    away.save(sample_id(), sample_result());
    CHECK(ms_since(again) < 500);
    CHECK(ms_since(then) < 3500);
  }
  SECTION("a listing (cache ls --store)") {
    RedisStore store(parse_store_url(server.url()), options);
    const auto started = std::chrono::steady_clock::now();
    // A cache command: the reason is the error, and nothing is warned.
    CHECK_THROWS_WITH(store.entries(), Catch::Contains("no whole reply within 2000 ms"));
    CHECK(ms_since(started) < 3000);
    CHECK(warnings.text().empty());
  }
  SECTION("the connection's SELECT of a database") {
    RedisStore store(parse_store_url(server.url().substr(0, server.url().size() - 1) + "3"),
                     options);
    const auto started = std::chrono::steady_clock::now();
    CHECK_FALSE(store.load(sample_id()));
    CHECK(ms_since(started) < 3000);  // connect, SELECT and GETRANGE: one deadline
  }
}

namespace {
/// Reads one whole RESP command (an array of bulk strings) from `socket`; its words, or nothing
/// once the client is gone or `stop` is raised.
std::optional<std::vector<std::string>> read_whole_command(int socket,
                                                           const std::atomic<bool>& stop) {
  std::string bytes;
  const auto need = [&](std::size_t n) {
    while (bytes.size() < n) {
      pollfd wait{socket, POLLIN, 0};
      if (stop || ::poll(&wait, 1, 50) < 0) return false;
      if (!(wait.revents & POLLIN)) continue;
      char buffer[65536];
      const ssize_t got = ::recv(socket, buffer, sizeof buffer, 0);
      if (got <= 0) return false;
      bytes.append(buffer, static_cast<std::size_t>(got));
    }
    return true;
  };
  std::size_t at = 0;
  const auto line = [&]() -> std::optional<long> {  // "<c><number>\r\n" at `at`
    for (;;) {
      if (const auto end = bytes.find("\r\n", at); end != std::string::npos) {
        const long value = std::stol(bytes.substr(at + 1, end - at - 1));
        at = end + 2;
        return value;
      }
      if (!need(bytes.size() + 1)) return std::nullopt;
    }
  };
  const auto count = line();
  if (!count) return std::nullopt;
  std::vector<std::string> words;
  for (long i = 0; i < *count; ++i) {
    const auto length = line();
    if (!length || !need(at + static_cast<std::size_t>(*length) + 2)) return std::nullopt;
    words.push_back(bytes.substr(at, static_cast<std::size_t>(*length)));
    at += static_cast<std::size_t>(*length) + 2;
  }
  return words;
}
}  // namespace

TEST_CASE("results queued while the server was away are sent within the caller's deadline",
          "[redis]") {
  if (!redis_store_built()) return;
  // The first connection is dropped at once (the server "away": what is saved then waits);
  // later ones answer every command after 400 ms, SET with OK and a lookup with nothing. One
  // lookup then sent all 20 queued results first, each within its own deadline: 8 s.
  std::atomic<int> connection{0};
  FakeRedis server([&](int socket, const std::atomic<bool>& stop) {
    if (connection++ == 0) return;
    while (const auto words = read_whole_command(socket, stop)) {
      if (!nap(400, stop)) return;
      const bool set = !words->empty() && words->front() == "SET";
      if (!FakeRedis::send_all(socket, set ? "+OK\r\n" : "$-1\r\n")) return;
    }
  });
  RedisStore::Options options = fast_options();  // 1000 ms a command
  CapturedWarnings warnings;
  RedisStore store(parse_store_url(server.url()), options);
  for (int i = 0; i < 20; ++i)
    store.save(sample_id("[" + std::to_string(i) + "]"), sample_result());
  REQUIRE(store.pending() == 20);
  std::this_thread::sleep_for(options.retry_interval * 2);
  const auto started = std::chrono::steady_clock::now();
  CHECK_FALSE(store.load(sample_id("[99]")));
  CHECK(ms_since(started) < 2500);  // the flush's deadline, then the lookup's own
  CHECK(store.pending() > 0);       // the rest wait for later commands
  CHECK(store.pending() < 20);
  CHECK(warnings.count("no whole reply") == 0);  // the lookup had its time: not "away"
}

namespace {
/// Where the store's keys begin on a server without a prefix.
std::string store_keys() { return "tunekit:v" + std::to_string(FileStore::format_version) + ":"; }

/// A SCAN reply's head: its cursor ("0": the last round). Its keys (scan_keys) follow.
std::string scan_head(const std::string& cursor) {
  return "*2\r\n$" + std::to_string(cursor.size()) + "\r\n" + cursor + "\r\n";
}
std::string scan_keys(const std::vector<std::string>& keys) {
  std::string reply = "*" + std::to_string(keys.size()) + "\r\n";
  for (const auto& key : keys) reply += "$" + std::to_string(key.size()) + "\r\n" + key + "\r\n";
  return reply;
}
}  // namespace

TEST_CASE("a listing whose every key's read or delete is slow ends by the listing's deadline",
          "[redis]") {
  if (!redis_store_built()) return;
  // SCAN lists 20 keys at once; each GETRANGE or DEL is answered in 500 ms, within a command's
  // deadline (1 s). Only SCAN had the listing's deadline: 20 keys took 10 s here, and 2^22 keys
  // at just under 2 s each would hold `cache ls` or `cache clear` for days.
  std::vector<std::string> keys;
  for (int i = 0; i < 20; ++i) keys.push_back(store_keys() + "entry:slow_op:" + std::to_string(i));
  const std::string listed = scan_head("0") + scan_keys(keys);
  std::atomic<int> slow_answers{0};
  FakeRedis server([&](int socket, const std::atomic<bool>& stop) {
    while (const auto words = read_whole_command(socket, stop)) {
      const std::string name = words->empty() ? "" : words->front();
      std::string answer = "-ERR unexpected\r\n";
      if (name == "SCAN") {
        answer = listed;  // (a lease pattern's listing passes these over)
      } else if (name == "GETRANGE" || name == "DEL") {
        if (!nap(500, stop)) return;
        ++slow_answers;
        answer = name == "DEL" ? ":1\r\n" : "$0\r\n\r\n";
      }
      if (!FakeRedis::send_all(socket, answer)) return;
    }
  });
  RedisStore::Options options = fast_options();  // 1000 ms a command
  options.listing_timeout = std::chrono::milliseconds(1000);
  RedisStore store(parse_store_url(server.url()), options);
  const auto limit = Catch::Contains(
      "did not end the listing within 1000 ms, the deadline of one listing (listing_timeout");
  const auto started = std::chrono::steady_clock::now();
  SECTION("cache ls, show, export, report: a GETRANGE per key") {
    CHECK_THROWS_WITH(store.entries(), limit && Catch::Contains("of 20 keys; nothing was listed"));
  }
  SECTION("cache clear: a DEL per key") {
    CHECK_THROWS_WITH(store.clear(), limit && Catch::Contains("of 20 keys"));
  }
  CHECK(ms_since(started) < 5000);
  CHECK(slow_answers < 20);
}

TEST_CASE("a listing whose SCAN gives more than 256 MiB of keys is refused", "[redis]") {
  if (!redis_store_built()) return;
  // Rounds of 15,000 keys of 4,000 bytes (60 MB, under a reply's cap), the 6th the last: 360 MB
  // of keys. Only their count (2^22) and each one's length (4 KiB) were bounded: 16 GiB.
  std::vector<std::string> keys;
  for (int i = 0; i < 15000; ++i) {
    std::string key = store_keys() + "entry:big_op:" + std::to_string(i) + ":";
    key.resize(4000, 'x');
    keys.push_back(std::move(key));
  }
  const std::string listed = scan_keys(keys);
  std::atomic<int> rounds{0};
  FakeRedis server([&](int socket, const std::atomic<bool>& stop) {
    while (const auto words = read_whole_command(socket, stop)) {
      if (words->empty() || words->front() != "SCAN") {
        if (!FakeRedis::send_all(socket, "-ERR unexpected\r\n")) return;
        continue;
      }
      const std::string cursor = ++rounds < 6 ? std::to_string(rounds) : "0";
      if (!FakeRedis::send_all(socket, scan_head(cursor)) || !FakeRedis::send_all(socket, listed))
        return;
    }
  });
  RedisStore::Options options = fast_options();
  options.command_timeout = std::chrono::seconds(30);  // 60 MB a round, in a sanitizer's build
  RedisStore store(parse_store_url(server.url()), options);
  CHECK_THROWS_WITH(store.entries(), Catch::Contains("lists keys of more than 268435456 bytes"));
  CHECK(rounds == 5);  // 300 MB: refused in its 5th round
}

TEST_CASE(
    "a host name is resolved within the connect deadline, a literal address without a resolver",
    "[redis]") {
  if (!redis_store_built()) return;
  // A resolver that does not answer for 3 s (the system's waits 5 s a try, 60 s with
  // RES_OPTIONS="timeout:30 attempts:2"): getaddrinfo ran on the caller's thread, under the
  // store's mutex, whatever connect_timeout said.
  const detail::Resolver stalled = [](const char* host, const char* service, const addrinfo* hints,
                                      addrinfo** found) {
    std::this_thread::sleep_for(std::chrono::seconds(3));
    return ::getaddrinfo(host, service, hints, found);
  };
  std::string why;
  const auto started = std::chrono::steady_clock::now();
  const auto deadline = started + std::chrono::milliseconds(300);
  SECTION("a name: given up at the deadline, the resolver left to end alone") {
    CHECK_FALSE(detail::resolve_within("localhost", 6379, deadline, why, stalled));
    CHECK(why == "could not resolve localhost within 300 ms");
    CHECK(ms_since(started) < 2000);
  }
  SECTION("literal addresses: at once") {
    CHECK(detail::resolve_within("127.0.0.1", 6379, deadline, why, stalled));
    CHECK(detail::resolve_within("::1", 6379, deadline, why, stalled));
    CHECK(why.empty());
    CHECK(ms_since(started) < 2000);
  }
  SECTION("a name the system resolves in time, and one it cannot") {
    const auto later = started + std::chrono::seconds(10);
    CHECK(detail::resolve_within("localhost", 6379, later, why));
    CHECK(why.empty());
    CHECK_FALSE(detail::resolve_within("no-such-host.invalid", 6379, later, why));
    CHECK_THAT(why, Catch::StartsWith("cannot resolve no-such-host.invalid: "));
  }
  SECTION("a store named by host name") {
    REQUIRE_REDIS_SERVER(server);
    RedisStore store(parse_store_url("redis://localhost:" + std::to_string(server->port())),
                     fast_options());
    store.save(sample_id(), sample_result());
    CHECK(store.reachable());
    CHECK(store.load(sample_id()));
  }
}

TEST_CASE("a reply announcing more than the cap is refused before it is buffered", "[redis]") {
  if (!redis_store_built()) return;
  std::string header;
  SECTION("a 4 GB bulk string") { header = "$4294967296\r\n"; }
  SECTION("a bulk string past 2^63") { header = "$99999999999999999999999\r\n"; }
  SECTION("a 1 GB bulk string inside an array") { header = "*2\r\n$3\r\nabc\r\n$1000000000\r\n"; }
  SECTION("an array of 4 billion elements") { header = "*4000000000\r\n"; }
  SECTION("an array inside an array, each under the cap, together past it") {
    header = "*600000\r\n*600000\r\n";  // 1.2 million elements announced, the cap is 2^20
  }
  SECTION("arrays side by side, each under the cap, together past it") {
    // 1000 arrays of 2000 integers: 2 million elements, each array 1/500 of the cap; the cap is
    // passed only after about 4 MB of them, which the client must read and count.
    std::string inner = "*2000\r\n";
    for (int i = 0; i < 2000; ++i) inner += ":1\r\n";
    header = "*1000\r\n";
    for (int i = 0; i < 1000; ++i) header += inner;
  }
  CAPTURE(header.substr(0, 64));
  std::atomic<long long> sent{0};
  // The header, then zeros as fast as the client takes them (at most 256 MiB).
  FakeRedis server([&](int socket, const std::atomic<bool>& stop) {
    FakeRedis::read_command(socket);
    if (!FakeRedis::send_all(socket, header)) return;
    const std::string chunk(1 << 20, '0');
    for (int i = 0; i < 256 && !stop; ++i) {
      if (!FakeRedis::send_all(socket, chunk)) return;
      sent += static_cast<long long>(chunk.size());
    }
  });
  RedisStore::Options options = fast_options();
  // Counting the side-by-side arrays' first million elements took more than fast_options()'s
  // 1 s under ASAN on a loaded 2-core machine (CI, 2026-12-07): the deadline here is far past
  // what a refusal on the header needs, so that only a refusal that never comes can reach it.
  options.command_timeout = std::chrono::seconds(60);
  CapturedWarnings warnings;
  RedisStore store(parse_store_url(server.url()), options);
  CHECK_FALSE(store.load(sample_id()));
  // Refused on what the header announced, not at the command's deadline, and not by the byte cap
  // (64 MiB: the bytes sent, below, tell the two apart). No bound on the time.
  CHECK(warnings.count("a reply too large") + warnings.count("a length past 2^63") == 1);
  CHECK(warnings.count("no whole reply within") == 0);
  // Refused on the header: what the server could push meanwhile is what the socket buffers hold.
  CHECK(sent < (32ll << 20));
}

TEST_CASE("a server that wants a password is reported as such and not as a bad entry", "[redis]") {
  if (!redis_store_built()) return;
  auto server = RedisServer::start_if_installed({"--requirepass", "secret"});
  if (!server) {
    SUCCEED("redis-server is not installed: skipped");
    return;
  }
  const int db = GENERATE(0, 2);  // GETRANGE answers NOAUTH; or the connection's SELECT does
  CapturedWarnings warnings;
  RedisStore store(parse_store_url(server->url(db)), fast_options());
  CHECK_FALSE(store.load(sample_id()));
  CHECK(warnings.count("authentication: the server wants a password") == 1);
  CHECK(warnings.count("ignoring the entry") == 0);
  CHECK(warnings.count("re-tuned") == 0);
  CHECK_THROWS_AS(RedisStore(parse_store_url(server->url(db)), fast_options()).entries(),
                  AutotuneError);
}

namespace {
RedisStore::Options with_password(std::string password) {
  RedisStore::Options options = fast_options();
  options.password = std::move(password);
  return options;
}
}  // namespace

TEST_CASE("a server with requirepass: the right password works, a wrong one is said as such",
          "[redis]") {
  if (!redis_store_built()) return;
  auto server = RedisServer::start_if_installed({"--requirepass", "s3cret"});
  if (!server) {
    SUCCEED("redis-server is not installed: skipped");
    return;
  }
  const int db = GENERATE(0, 2);  // AUTH comes before the connection's SELECT
  CAPTURE(db);
  {
    CapturedWarnings warnings;
    RedisStore store(parse_store_url(server->url(db)), with_password("s3cret"));
    store.save(sample_id(), sample_result());
    const auto back = store.load(sample_id());
    REQUIRE(back);
    CHECK(same(*back, sample_result()));
    CHECK(back->source == "shared store " + server->url(db));
    CHECK(store.entries().size() == 1);
    CHECK(warnings.text().empty());
  }
  SECTION("a wrong password: one warning naming the refusal, never a bad entry") {
    CapturedWarnings warnings;
    RedisStore store(parse_store_url(server->url(db)), with_password("not-the-password"));
    CHECK_FALSE(store.load(sample_id()));
    CHECK(warnings.count("the server refused the password") == 1);
    CHECK(warnings.count("ignoring the entry") == 0);
    CHECK(warnings.count("not-the-password") == 0);  // a password is never printed
    // A cache command: the reason in the error, no warning.
    RedisStore command(parse_store_url(server->url(db)), with_password("not-the-password"));
    CHECK_THROWS_WITH(command.entries(), Catch::Contains("refused the password"));
    CHECK(warnings.count("refused the password") == 1);
  }
  SECTION("no password: the server wants one, and the error says how to give it") {
    RedisStore command(parse_store_url(server->url(db)), fast_options());
    CHECK_THROWS_WITH(command.entries(), Catch::Contains("TUNEKIT_STORE_PASSWORD"));
  }
}

TEST_CASE("an ACL user named in the URL authenticates with its password", "[redis]") {
  if (!redis_store_built()) return;
  auto server = RedisServer::start_if_installed(
      {"--user", "default", "off", "--user", "tuner", "on", ">pw1", "~app1:*", "+@all"});
  if (!server) {
    SUCCEED("redis-server is not installed: skipped");
    return;
  }
  const std::string url = "redis://tuner@127.0.0.1:" + std::to_string(server->port()) + "/0";
  CHECK(parse_store_url(url + "?prefix=app1:").url() == url + "?prefix=app1:");
  RedisStore store(parse_store_url(url + "?prefix=app1:"), with_password("pw1"));
  store.save(sample_id(), sample_result());
  CHECK(store.load(sample_id()));
  // Its keys are under its prefix: what the ACL grants it.
  RedisStore outside(parse_store_url(url), with_password("pw1"));
  CHECK_THROWS_WITH(outside.save_entries({CacheEntry{sample_id(), sample_result()}}),
                    Catch::Contains("may not run this command or use"));
  RedisStore wrong(parse_store_url(url + "?prefix=app1:"), with_password("pw2"));
  CHECK_THROWS_WITH(wrong.entries(), Catch::Contains("refused the password of the user 'tuner'"));
}

TEST_CASE("two key prefixes on one database do not see each other's results", "[redis]") {
  if (!redis_store_built()) return;
  REQUIRE_REDIS_SERVER(server);
  RedisStore first(parse_store_url(server->url() + "?prefix=app1:"), fast_options());
  RedisStore second(parse_store_url(server->url() + "?prefix=app2:"), fast_options());
  RedisStore plain(parse_store_url(server->url()), fast_options());
  first.save(sample_id("[1]"), sample_result());
  second.save(sample_id("[2]"), sample_result());
  CHECK(first.load(sample_id("[1]")));
  CHECK_FALSE(first.load(sample_id("[2]")));
  CHECK(second.load(sample_id("[2]")));
  CHECK_FALSE(second.load(sample_id("[1]")));
  CHECK_FALSE(plain.load(sample_id("[1]")));
  CHECK(first.entries().size() == 1);
  CHECK(second.entries().size() == 1);
  CHECK(plain.entries().empty());
  RawClient raw(server->port());
  CHECK(raw.keys("app1:tunekit:v*").size() == 1);
  CHECK(raw.keys("app2:tunekit:v*").size() == 1);
  // Clearing one leaves the other.
  CHECK(first.clear() == 1);
  CHECK(second.entries().size() == 1);
  CHECK(plain.clear() == 0);
  CHECK(second.entries().size() == 1);
}

TEST_CASE("20000 bad entries on the server: one line per problem and not one per key", "[redis]") {
  if (!redis_store_built()) return;
  REQUIRE_REDIS_SERVER(server);
  RedisStore store(parse_store_url(server->url()), fast_options());
  for (int i = 0; i < 20; ++i)
    store.save(sample_id("[" + std::to_string(i) + "]"), sample_result());
  RawClient raw(server->port());
  const auto saved = raw.keys("tunekit:*entry:*");
  REQUIRE(saved.size() == 20);
  const std::string prefix = saved[0].substr(0, saved[0].rfind(':') + 1);
  std::vector<std::string> mset{"MSET"};
  for (int i = 0; i < 20000; ++i) {
    mset.push_back(prefix + "bad" + std::to_string(i));
    mset.push_back("garbage");
  }
  for (const auto& key : saved) {  // the 20 lookups' own keys: bad too
    mset.push_back(key);
    mset.push_back("garbage");
  }
  REQUIRE(raw.run(mset) == "OK");
  CapturedWarnings warnings;
  CHECK(store.entries().empty());
  CHECK(warnings.count("ignoring 20020 entries") == 1);
  CHECK(warnings.lines() <= 2);
  // Lookups: one by one for the first few, then one line for the rest.
  CapturedWarnings lookups;
  for (int i = 0; i < 20; ++i) CHECK_FALSE(store.load(sample_id("[" + std::to_string(i) + "]")));
  CHECK(lookups.count("ignoring the entry") == 8);
  CHECK(lookups.lines() == 9);
}

TEST_CASE("a bad value under an entry's key: one machine tunes and overwrites it", "[redis]") {
  if (!redis_store_built()) return;
  REQUIRE_REDIS_SERVER(server);
  TempDir dir;
  const auto url = server->url();
  CHECK(run_child({"--dir", (dir / "first").string(), "--store", url, "4096"}, dir / "first.out") ==
        1);
  RawClient raw(server->port());
  const auto keys = raw.keys("tunekit:*entry:*");
  REQUIRE(keys.size() == 1);
  const std::string genuine = raw.run({"GET", keys[0]});
  std::string bad;
  SECTION("garbage") { bad = "garbage"; }
  SECTION("a list in place of a string") { bad = "(list)"; }
  SECTION("a forged 'every candidate failed' record") {
    auto parsed = detail::parse_cache_file(genuine);
    REQUIRE(parsed.entries.size() == 1);
    CacheEntry forged = parsed.entries[0];
    forged.id.op = parsed.op;
    forged.result.winner.clear();
    for (auto& outcome : forged.result.outcomes) {
      outcome.status = OutcomeStatus::failed;
      outcome.error = AutotuneError(ErrorKind::build, "forged", outcome.name);
    }
    bad = detail::write_cache_file(parsed.op, {forged});
  }
  if (bad == "(list)") {
    raw.run({"DEL", keys[0]});
    raw.run({"RPUSH", keys[0], "a"});
  } else {
    raw.run({"SET", keys[0], bad});
  }
  std::vector<std::unique_ptr<Child>> children;
  for (int i = 0; i < 3; ++i) {
    const std::string name = "m" + std::to_string(i);
    children.push_back(std::make_unique<Child>(
        std::vector<std::string>{"--dir", (dir / name).string(), "--store", url, "--tune-ms", "100",
                                 "--counter", (dir / "counter").string(), "--start-file",
                                 (dir / "go").string(), "4096"},
        dir / (name + ".out")));
  }
  write_text(dir / "go", "");
  int total = 0;
  for (auto& child : children) {
    CHECK(child->wait() == 0);
    total += child->tunings();
  }
  CHECK(total == 1);  // not 3: the lease held, the others waited for its result
  const std::string counter = read_text(dir / "counter");
  CHECK(std::count(counter.begin(), counter.end(), '\n') == 1);
  // The winner overwrote the bad value with a good entry.
  CapturedWarnings warnings;
  CHECK(RedisStore(parse_store_url(url), fast_options()).entries().size() == 1);
  CHECK(warnings.lines() == 0);
}

TEST_CASE("flush_all waits until what a layered store adopted is written locally", "[redis]") {
  // A local store whose writes wait for a gate, and a remote one that has every entry.
  struct GatedLocal final : ResultStore {
    std::mutex mutex;
    std::condition_variable changed;
    bool open = false;
    int saved = 0;
    std::optional<StoredResult> load(const EntryId&) override { return std::nullopt; }
    void save(const EntryId&, const StoredResult&) override {
      std::unique_lock lock(mutex);
      changed.wait(lock, [this] { return open; });
      ++saved;
    }
    std::unique_ptr<TuningLock> lock_for_tuning(const EntryId&) override { return nullptr; }
  };
  struct FullRemote final : ResultStore {
    std::optional<StoredResult> load(const EntryId&) override { return sample_result(); }
    void save(const EntryId&, const StoredResult&) override {}
    std::unique_ptr<TuningLock> lock_for_tuning(const EntryId&) override { return nullptr; }
  };
  auto local = std::make_shared<GatedLocal>();
  LayeredStore store(local, std::make_shared<FullRemote>());
  // Fetched but not adopted (its winner not yet validated here): never written locally.
  REQUIRE(store.load(sample_id("[0]")));
  for (const char* key : {"[1]", "[2]"}) {
    const auto fetched = store.load(sample_id(key));
    REQUIRE(fetched);
    store.adopt(sample_id(key), *fetched);  // the tuner validated its winner
  }
  std::atomic<bool> flushed{false};
  std::thread flusher([&] {
    LayeredStore::flush_all();
    flushed = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK_FALSE(flushed);  // the writes wait for the gate
  {
    std::lock_guard lock(local->mutex);
    local->open = true;
  }
  local->changed.notify_all();
  flusher.join();
  std::lock_guard lock(local->mutex);
  CHECK(local->saved == 2);  // both adopted on "disk" when flush_all returned, not the third
}

TEST_CASE("a forged entry on the server cannot make a program wrong, nor reach a local cache",
          "[redis]") {
  // The review's R3, against a real server: a hostile member of the fleet writes, with a
  // checksum that holds, an entry naming a candidate that returns n + 1. Each machine checks a
  // winner from the server once against the set's reference before it serves.
  if (!redis_store_built()) return;
  REQUIRE_REDIS_SERVER(server);
  TempDir dir;
  const auto run = [&](const fs::path& local) {
    Settings settings = cache_settings(local);
    settings.store = server->url();
    LocalTuner<SizeKey> tuner("forged_op", settings);
    VirtualClient client("device A");
    const auto& set = tuner.init([] {
      const auto adds = [](int offset, double seconds) {
        return [=](VirtualClient& c, std::uint64_t& n) {
          c.spend(seconds);
          return n + static_cast<std::uint64_t>(offset);
        };
      };
      return TunableSet{[](const std::uint64_t& n) { return SizeKey{n}; },
                        [](const SizeKey& k, const std::uint64_t&) {
                          return std::tuple<std::uint64_t>(k.n.value());
                        }}
          .with(Tunable{"right", adds(0, 2e-3)})
          .with(Tunable{"plus one", adds(1, 1e-4)})
          .validate_with(std::equal_to<>{});
    });
    std::uint64_t n = 8;
    return tuner.execute(client.id(), client, set, n);
  };
  CHECK(run(dir / "a") == 8);  // machine A tunes: "right" wins, "plus one" fails validation
  LayeredStore::flush_all();
  RedisStore store(parse_store_url(server->url()), fast_options());
  auto entries = store.entries("forged_op");
  REQUIRE(entries.size() == 1);
  CacheEntry forged = entries.front();
  REQUIRE(forged.result.winner == "right");
  for (auto& outcome : forged.result.outcomes) {
    if (outcome.name != "plus one") continue;
    outcome.status = OutcomeStatus::measured;
    outcome.error.reset();
    outcome.median = outcome.low = outcome.high = outcome.min = outcome.max = 1e-5;
    outcome.samples = 3;
    forged.result.winner = outcome.name;
    forged.result.winner_index = static_cast<std::uint32_t>(outcome.index);
  }
  REQUIRE(forged.result.winner == "plus one");
  store.save(forged.id, forged.result);
  REQUIRE(store.load(forged.id)->winner == "plus one");  // what machine B will read

  CapturedWarnings warnings;
  CHECK(run(dir / "b") == 8);  // machine B: checked, caught, tuned
  INFO(warnings.text());
  CHECK(warnings.count("names 'plus one', which gives a wrong output here") == 1);
  LayeredStore::flush_all();
  for (const auto& entry : FileStore(dir / "b").entries("forged_op")) {
    CHECK(entry.result.winner == "right");  // the forged entry never reached B's disk
  }
  CHECK(store.load(forged.id)->winner == "right");  // B's tuning replaced it on the server
}
