// The persistent cache between real processes (tests/cache/cache_child.cpp): a second process hits
// the cache, two processes on a cold cache tune each key once, and a killed process's tuning lock
// does not block the next one.
#include <catch2/catch.hpp>
#include <csignal>
#include <map>
#include <set>

#include "test_cache_support.hpp"

using namespace tunekit;
using namespace tunekit::test;

namespace {

std::vector<std::string> child_args(const TempDir& dir, std::vector<std::string> extra) {
  std::vector<std::string> args{"--dir", (dir / "cache").string()};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

/// "KEY PID" lines of the counter file, by key.
std::map<std::string, int> tunings_by_key(const fs::path& counter) {
  std::map<std::string, int> count;
  std::istringstream lines(read_text(counter));
  for (std::string key, pid; lines >> key >> pid;) ++count[key];
  return count;
}

}  // namespace

TEST_CASE("a second process finds the first one's results and tunes nothing", "[cache][process]") {
  TempDir dir;
  CHECK(run_child(child_args(dir, {"1", "2", "4"}), dir / "out1") == 3);
  CHECK(run_child(child_args(dir, {"1", "2", "4"}), dir / "out2") == 0);
  CHECK(run_child(child_args(dir, {"1", "8"}), dir / "out3") == 1);
  // ...and so does this process, through its own FileStore.
  FileStore store(dir / "cache");
  CHECK(store.entries("child_op").size() == 4);
}

TEST_CASE("a process with another candidate fingerprint or device re-tunes", "[cache][process]") {
  TempDir dir;
  CHECK(run_child(child_args(dir, {"1"}), dir / "out1") == 1);
  CHECK(run_child(child_args(dir, {"--source", "edited", "1"}), dir / "out2") == 1);
  CHECK(run_child(child_args(dir, {"--device", "other gpu", "1"}), dir / "out3") == 1);
  CHECK(run_child(child_args(dir, {"1"}), dir / "out4") == 0);
}

TEST_CASE("two processes started together on a cold cache tune each key once in total",
          "[cache][process]") {
  TempDir dir;
  const fs::path counter = dir / "tunings.log";
  const std::vector<std::string> keys{"1", "2", "4", "8", "16", "32"};
  std::vector<std::string> forward{"--counter", counter.string(), "--tune-ms", "15"};
  forward.insert(forward.end(), keys.begin(), keys.end());
  std::vector<std::string> backward{"--counter", counter.string(), "--tune-ms", "15"};
  backward.insert(backward.end(), keys.rbegin(), keys.rend());  // they meet in the middle

  Child a(child_args(dir, forward), dir / "out_a");
  Child b(child_args(dir, backward), dir / "out_b");
  REQUIRE(a.wait() == 0);
  REQUIRE(b.wait() == 0);
  const auto by_key = tunings_by_key(counter);
  CHECK(by_key.size() == keys.size());
  for (const auto& key : keys) {
    INFO("key " << key);
    CHECK(by_key.count(key) == 1);
    if (by_key.count(key)) CHECK(by_key.at(key) == 1);
  }
  CHECK(a.tunings() + b.tunings() == static_cast<int>(keys.size()));
  CHECK(FileStore(dir / "cache").entries().size() == keys.size());
}

TEST_CASE("a process killed while holding the tuning lock does not block the next one",
          "[cache][process]") {
  TempDir dir;
  const fs::path tuning = dir / "tuning.flag";
  Child hung(child_args(dir, {"--hang-file", tuning.string(), "64"}), dir / "out_hung");
  REQUIRE(wait_for_file(tuning, std::chrono::seconds(20)));  // it holds the lock now
  REQUIRE_FALSE(fs::is_empty(dir / "cache/v2/locks"));
  ::kill(hung.pid(), SIGKILL);
  CHECK(hung.wait() == 128 + SIGKILL);

  const auto started = std::chrono::steady_clock::now();
  CHECK(run_child(child_args(dir, {"64"}), dir / "out_next") == 1);              // tuned, not stuck
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(30));  // not 10 min
  CHECK(fs::is_empty(dir / "cache/v2/locks"));  // the stale lock file was taken over and removed
  CHECK(run_child(child_args(dir, {"64"}), dir / "out_last") == 0);
}

TEST_CASE("a process waits for another's tuning of the same key and uses its result",
          "[cache][process]") {
  TempDir dir;
  const fs::path counter = dir / "tunings.log";
  // The first process tunes slowly; the second starts while it does.
  Child slow(child_args(dir, {"--counter", counter.string(), "--tune-ms", "300", "128"}),
             dir / "out_slow");
  REQUIRE(wait_for_file(dir / "cache/v2/locks", std::chrono::seconds(20)));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  Child quick(child_args(dir, {"--counter", counter.string(), "128"}), dir / "out_quick");
  REQUIRE(slow.wait() == 0);
  REQUIRE(quick.wait() == 0);
  CHECK(slow.tunings() + quick.tunings() == 1);
  CHECK(tunings_by_key(counter).at("128") == 1);
}
