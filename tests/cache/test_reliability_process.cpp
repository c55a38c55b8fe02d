// Reliability across processes (issue #8): four processes on a cold shared cache, killed with
// SIGKILL at random points while they tune, and restarted, round after round. The cache file is
// never unreadable, no entry is ever lost or duplicated, and every key ends up tuned.
#include <catch2/catch.hpp>
#include <csignal>
#include <map>
#include <random>
#include <set>

#include "test_cache_support.hpp"

using namespace tunekit;
using namespace tunekit::test;

namespace {

constexpr const char* child_op = "child_op";  // cache_child's default op

// The keys in the cache (index file `file`), checked on the way: the index and every table it
// names read whole with no rejected entry (no warning), and no key appears twice.
std::set<std::string> keys_in_cache(const fs::path& file, int& duplicates) {
  std::set<std::string> keys;
  if (!fs::exists(file)) return keys;
  CapturedWarnings warnings;
  const auto entries = FileStore(file.parent_path().parent_path()).entries(child_op);
  INFO(file);
  CHECK(warnings.text().empty());
  for (const auto& entry : entries) {
    if (!keys.insert(entry.id.key).second) ++duplicates;
  }
  return keys;
}

std::vector<fs::path> corrupt_files(const fs::path& dir) {
  std::vector<fs::path> found;
  if (!fs::exists(dir)) return found;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().find(".corrupt-") != std::string::npos)
      found.push_back(e.path());
  }
  return found;
}

}  // namespace

TEST_CASE("4 processes killed at random points while tuning, restarted: nothing lost or duplicated",
          "[cache][process][reliability]") {
  TempDir dir;
  const fs::path cache = dir / "cache";
  const fs::path file = cache / "v2" / (std::string(child_op) + ".json");
  constexpr int processes = 4, rounds = 10, key_count = 32;
  std::vector<std::string> keys;
  for (int k = 0; k < key_count; ++k) keys.push_back(std::to_string(std::uint64_t{1} << k));
  // Each process takes the keys in its own order, so that they compete for some and not others.
  auto args_of = [&](int p, const fs::path& counter) {
    std::vector<std::string> args{"--dir",          cache.string(), "--counter",
                                  counter.string(), "--tune-ms",    "60"};
    for (int k = 0; k < key_count; ++k)
      args.push_back(keys[static_cast<std::size_t>((k + 8 * p) % key_count)]);
    return args;
  };

  // Kill points: uniform over 160 ms of a round that holds ~480 ms of tuning (32 keys x 60 ms over
  // 4 processes), counted from the moment the round first saved a key. Not from the start: how
  // long a process takes to start (far longer under sanitizers or load) must not decide whether
  // a round saves anything, or the test would check nothing on a slow machine.
  std::mt19937 rng(8);
  std::uniform_int_distribution<int> delay_ms(0, 160);
  std::set<std::string> kept;  // keys in the cache so far: never shrinks
  int duplicates = 0, killed = 0, finished = 0, reads = 0;
  for (int round = 0; round < rounds; ++round) {
    std::vector<std::unique_ptr<Child>> children;
    std::vector<int> deadline;
    for (int p = 0; p < processes; ++p) {
      children.push_back(std::make_unique<Child>(args_of(p, dir / "tunings.log"),
                                                 dir / ("out_" + std::to_string(p))));
      deadline.push_back(delay_ms(rng));
    }
    // Wait for the round's first saved key (bounded: every key may be saved already).
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (kept.size() < keys.size() && std::chrono::steady_clock::now() < give_up) {
      const auto now = keys_in_cache(file, duplicates);
      if (!std::includes(kept.begin(), kept.end(), now.begin(), now.end())) break;  // a new key
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    const auto started = std::chrono::steady_clock::now();
    std::vector<int> order{0, 1, 2, 3};
    std::sort(order.begin(), order.end(), [&](int a, int b) { return deadline[a] < deadline[b]; });
    for (int p : order) {
      std::this_thread::sleep_until(started + std::chrono::milliseconds(deadline[p]));
      // Read the file while the others are still writing: it is whole at every instant.
      const auto now = keys_in_cache(file, duplicates);
      ++reads;
      CHECK(std::includes(now.begin(), now.end(), kept.begin(), kept.end()));
      kept.insert(now.begin(), now.end());
      ::kill(children[static_cast<std::size_t>(p)]->pid(), SIGKILL);  // a zombie if it finished
      const int status = children[static_cast<std::size_t>(p)]->wait();
      CHECK((status == 0 || status == 128 + SIGKILL));
      (status == 0 ? finished : killed) += 1;
    }
    const auto now = keys_in_cache(file, duplicates);
    ++reads;
    INFO("round " << round);
    CHECK(std::includes(now.begin(), now.end(), kept.begin(), kept.end()));  // nothing lost
    kept = now;
    CHECK(corrupt_files(cache / "v2").empty());  // never had to move a broken file aside
  }
  const std::size_t kept_before_last = kept.size();

  // A last round left to finish: the keys still missing are tuned, each exactly once.
  std::vector<std::unique_ptr<Child>> last;
  for (int p = 0; p < processes; ++p) {
    last.push_back(std::make_unique<Child>(args_of(p, dir / "last_tunings.log"),
                                           dir / ("last_" + std::to_string(p))));
  }
  int last_tunings = 0;
  for (auto& child : last) {
    REQUIRE(child->wait() == 0);
    last_tunings += child->tunings();
  }
  const auto final_keys = keys_in_cache(file, duplicates);
  CHECK(final_keys.size() == keys.size());
  CHECK(duplicates == 0);
  CHECK(last_tunings == static_cast<int>(keys.size() - kept_before_last));
  std::map<std::string, int> tuned_last;
  {
    std::istringstream lines(read_text(dir / "last_tunings.log"));
    for (std::string key, pid; lines >> key >> pid;) ++tuned_last[key];
  }
  for (const auto& [key, count] : tuned_last) {
    INFO("key " << key);
    CHECK(count == 1);
  }
  CHECK(FileStore(cache).entries(child_op).size() == keys.size());
  INFO(killed << " processes killed, " << finished << " finished, " << reads << " reads, "
              << kept_before_last << " keys kept before the last round");
  CHECK(killed >= rounds);  // most rounds killed processes in the middle of their tuning
  CHECK(kept_before_last > 0);
}
