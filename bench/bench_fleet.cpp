// The shared (Redis) store on loopback, with a redis-server started here
// (tests/cache/redis_server.hpp):
//
//  1. cached key from Redis: a fresh process with an empty local cache makes its first execute()
//     of a key that another process tuned: store opened, local miss, Redis connect and read,
//     the entry kept locally, the winner run. Timed inside the process (median of --runs).
//     For reference, the same with the key in the local cache (a second fresh process).
//  2. 8 processes meet one new key at once, each with its own empty local cache (8 machines):
//     how many tuned (the target: exactly 1), how many winners (1), and the wall time from the
//     start signal to the end of the slowest.
//
// Run: ./build/release/bench/bench_fleet [--runs N] [--processes N] [--tune-ms N]
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <thread>
#include <tunekit/tunekit.hpp>
#include <vector>

#include "../tests/cache/redis_server.hpp"
#include "arguments.hpp"
#include "child_process.hpp"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Key {
  BOOST_HANA_DEFINE_STRUCT(Key, (std::uint64_t, n));
};

int tune_ms = 50;  // per candidate input made: a tuning of ~4 candidates takes a few 100 ms

template <int Work>
std::uint64_t candidate(std::uint64_t& n) {
  std::uint64_t x = n;
  for (int i = 0; i < Work * 1000; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  return x;
}

/// One process's run: execute `key` once with the store; prints "us=<first execute> tuned=<0|1>
/// winner=<name>".
int child(const fs::path& dir, const std::string& url, std::uint64_t key, const fs::path& start) {
  while (!start.empty() && ::access(start.c_str(), F_OK) != 0) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  const auto begin = Clock::now();
  tunekit::Settings settings;
  settings.cache_dir = dir;
  settings.store = url;
  settings.level = tunekit::Level::minimal;
  tunekit::LocalTuner<Key> tuner("fleet_op", settings);
  const auto& set = tuner.init([] {
    auto inputs = [](const Key& k, const std::uint64_t&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(tune_ms));  // a slow tuning
      return std::tuple<std::uint64_t>(k.n);
    };
    return tunekit::TunableSet{[](const std::uint64_t& n) { return Key{n}; }, inputs}
        .with(tunekit::Tunable{"w1", candidate<1>})
        .with(tunekit::Tunable{"w2", candidate<2>})
        .with(tunekit::Tunable{"w4", candidate<4>})
        .with(tunekit::Tunable{"w8", candidate<8>});
  });
  tunekit::HostClient client(tunekit::DeviceId("bench host"));
  std::uint64_t n = key;
  const auto ready = Clock::now();
  (void)tuner.execute(client.id(), client, set, n);
  const auto done = Clock::now();
  const auto report = tuner.tuner(client.id()).report(Key{key});
  std::printf("us=%.0f setup_us=%.0f tuned=%d winner=%s\n",
              std::chrono::duration<double, std::micro>(done - ready).count(),
              std::chrono::duration<double, std::micro>(ready - begin).count(),
              report && report->tuning_seconds > 0 ? 1 : 0,
              report && report->winner() ? report->winner()->name.c_str() : "-");
  return 0;
}

struct Run {
  double us = 0;
  int tuned = 0;
  std::string winner;
};

/// Starts this program as a child (bench/child_process.hpp), its output going to `out`.
pid_t spawn(const std::vector<std::string>& args, const fs::path& out) {
  const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) throw std::runtime_error("cannot open " + out.string());
  try {
    const pid_t pid = tunekit::bench::start_self(args, fd);
    ::close(fd);
    return pid;
  } catch (...) {
    ::close(fd);
    throw;
  }
}

/// Waits for a child and reads the line it printed: "us=... tuned=... winner=...".
Run wait_for(pid_t pid, const fs::path& out) {
  const bool exited = tunekit::bench::exited_cleanly(pid);
  std::ifstream in(out);
  std::string text;
  std::getline(in, text);
  Run run;
  const auto at = text.find("winner=");
  if (!exited || std::sscanf(text.c_str(), "us=%lf", &run.us) != 1 || at == std::string::npos)
    throw std::runtime_error("a child failed: " + text.substr(0, 200));
  run.tuned = text.find("tuned=1") != std::string::npos;
  run.winner = text.substr(at + 7);
  return run;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  using tunekit::bench::unsigned_argument;
  constexpr char usage[] =
      "usage: bench_fleet [--runs R] [--processes P] [--tune-ms MS] (needs redis-server)\n";
  if (tunekit::bench::asks_for_help(argc, argv)) return std::fputs(usage, stdout) < 0;

  if (argc >= 2 && std::string(argv[1]) == "--child") {  // as the parent starts it, below
    if (argc != 7) {
      std::cerr << "bench_fleet: --child DIR URL KEY START TUNE_MS\n";
      return 2;
    }
    tune_ms =
        static_cast<int>(unsigned_argument("bench_fleet", "--child TUNE_MS", argv[6], 0, 600000));
    return child(argv[2], argv[3],
                 unsigned_argument("bench_fleet", "--child KEY", argv[4], 0, UINT64_MAX),
                 argv[5] == std::string("-") ? "" : argv[5]);
  }
  int runs = 21, processes = 8;
  for (int i = 1; i < argc; i += 2) {
    const std::string arg = argv[i];
    if (i + 1 == argc) tunekit::bench::refuse_missing_value("bench_fleet", arg);
    if (arg == "--runs")
      runs = static_cast<int>(unsigned_argument("bench_fleet", arg, argv[i + 1], 1, 10000));
    else if (arg == "--processes")
      processes = static_cast<int>(unsigned_argument("bench_fleet", arg, argv[i + 1], 1, 256));
    else if (arg == "--tune-ms")
      tune_ms = static_cast<int>(unsigned_argument("bench_fleet", arg, argv[i + 1], 0, 600000));
    else {
      std::cerr << "bench_fleet: unknown option " << arg << " (--runs, --processes, --tune-ms)\n";
      return 2;
    }
  }
  auto server = tunekit::test::RedisServer::start_if_installed();
  if (!server) {
    std::cerr << "bench_fleet: redis-server is not installed (Debian: redis-server)\n";
    return 1;
  }
  std::string pattern = (fs::temp_directory_path() / "tunekit-bench-fleet-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) return 1;
  const fs::path work = pattern;
  const std::string url = server->url();
  const auto child_args = [&](const fs::path& dir, std::uint64_t key, const std::string& start) {
    return std::vector<std::string>{"--child",           dir.string(), url,
                                    std::to_string(key), start,        std::to_string(tune_ms)};
  };

  // 1. Cached keys from Redis, then from the local cache, in fresh processes.
  std::vector<double> from_redis, from_local;
  for (int i = 0; i < runs; ++i) {
    const std::uint64_t key = 1000 + static_cast<std::uint64_t>(i);
    const fs::path seed = work / ("seed" + std::to_string(i)),
                   fresh = work / ("fresh" + std::to_string(i));
    const Run tuned = wait_for(spawn(child_args(seed, key, "-"), work / "out"), work / "out");
    if (!tuned.tuned) throw std::runtime_error("the seeding process did not tune");
    const Run remote = wait_for(spawn(child_args(fresh, key, "-"), work / "out"), work / "out");
    const Run local = wait_for(spawn(child_args(fresh, key, "-"), work / "out"), work / "out");
    if (remote.tuned || local.tuned) throw std::runtime_error("a cached key was tuned");
    from_redis.push_back(remote.us / 1000);
    from_local.push_back(local.us / 1000);
  }
  std::printf(
      "cached key, first execute in a fresh process (%d runs): from Redis median %.2f ms "
      "(min %.2f, max %.2f); from the local cache median %.2f ms\n",
      runs, median(from_redis), *std::min_element(from_redis.begin(), from_redis.end()),
      *std::max_element(from_redis.begin(), from_redis.end()), median(from_local));

  // 2. N processes meet one new key at once.
  const fs::path start = work / "go";
  std::vector<pid_t> pids;
  for (int i = 0; i < processes; ++i) {
    pids.push_back(spawn(child_args(work / ("m" + std::to_string(i)), 77, start.string()),
                         work / ("m" + std::to_string(i) + ".out")));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // all started and waiting
  const auto begin = Clock::now();
  std::ofstream(start) << "go";
  int tunings = 0;
  std::set<std::string> winners;
  for (int i = 0; i < processes; ++i) {
    const Run run = wait_for(pids[i], work / ("m" + std::to_string(i) + ".out"));
    tunings += run.tuned;
    winners.insert(run.winner);
  }
  const double wall = std::chrono::duration<double, std::milli>(Clock::now() - begin).count();
  std::string names;
  for (const auto& w : winners) names += (names.empty() ? "" : ", ") + w;
  std::printf(
      "%d processes meeting one new key at once: %d tuning(s), %zu winner(s) (%s), "
      "slowest done after %.0f ms\n",
      processes, tunings, winners.size(), names.c_str(), wall);
  std::error_code ignored;
  fs::remove_all(work, ignored);
  return tunings == 1 && winners.size() == 1 ? 0 : 1;
}
