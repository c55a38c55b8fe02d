// Helpers for the persistent-cache tests: temporary directories, captured warnings, a small
// tuned op, and child processes.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <tunekit/cache.hpp>
#include <tunekit/tunekit.hpp>
#include <vector>

#include "../support.hpp"

extern char** environ;

namespace tunekit::test {

namespace fs = std::filesystem;

/// A fresh directory under the system's temporary directory, removed afterwards.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "tunekit-cache-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(path_, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
      fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
    }
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const noexcept { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

inline std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

/// Settings of a tuner that keeps its results in `dir`.
inline Settings cache_settings(const fs::path& dir) {
  Settings s = test_settings();
  s.persistent_cache = true;
  s.cache_dir = dir;
  return s;
}

/// One "run of a program": a fresh LocalTuner (and so a fresh FileStore) over `dir` executes
/// `keys` of op `op` on device `device`, its candidates' sources being `source`. Returns how
/// many keys it tuned (the others came from the cache).
inline int run_program(const fs::path& dir, const std::vector<std::uint64_t>& keys,
                       const std::string& device = "device A", const std::string& source = "v1",
                       const std::string& op = "cached_op") {
  LocalTuner<SizeKey> tuner(op, cache_settings(dir));
  VirtualClient client(device);
  auto key_of = [](const std::uint64_t& n) { return SizeKey{n}; };
  auto inputs = [](const SizeKey& key, const std::uint64_t&) {
    return std::tuple<std::uint64_t>(key.n.value());
  };
  const auto& set = tuner.init([&] {
    return TunableSet{key_of, inputs}
        .with(Tunable{
            "slow",
            [](VirtualClient& c, std::uint64_t& n) {
              c.spend(2e-3);
              return n;
            }}.fingerprint("slow:" + source))
        .with(Tunable{
            "fast", [](VirtualClient& c, std::uint64_t& n) {
              c.spend(1e-3);
              return n;
            }}.fingerprint("fast:" + source));
  });
  int tuned = 0;
  for (std::uint64_t n : keys) {
    if (tuner.execute(client.id(), client, set, n) != n) throw std::runtime_error("wrong result");
    const auto report = tuner.tuner(client.id()).report(SizeKey{n});
    if (!report) throw std::runtime_error("no report");
    if (report->tuning_seconds > 0) ++tuned;
    if (report->winner() == nullptr || report->winner()->name != "fast") {
      throw std::runtime_error("wrong winner");
    }
  }
  return tuned;
}

/// A cache_child process (tests/cache/cache_child.cpp); its stdout goes to a file.
class Child {
 public:
  Child(const std::vector<std::string>& args, fs::path output) : output_(std::move(output)) {
    // TUNEKIT_TEST_CACHE_CHILD: where the child is when the tests run elsewhere (a GPU machine).
    const char* moved = std::getenv("TUNEKIT_TEST_CACHE_CHILD");
    std::vector<std::string> all{moved != nullptr ? moved : CACHE_CHILD_PATH};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, output_.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int rc = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw std::runtime_error("posix_spawn failed: " + std::to_string(rc));
  }
  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      (void)wait();
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const noexcept { return pid_; }
  /// Waits for the exit; returns the exit code (128 + signal when killed).
  int wait() {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
  }
  /// The "tunings=N" the child printed, or -1.
  int tunings() const {
    const std::string out = read_text(output_);
    const auto at = out.find("tunings=");
    return at == std::string::npos ? -1 : std::stoi(out.substr(at + 8));
  }

 private:
  fs::path output_;
  pid_t pid_ = -1;
};

/// Runs a child to its end; returns its tunings (-1 when it failed).
inline int run_child(const std::vector<std::string>& args, const fs::path& output) {
  Child child(args, output);
  return child.wait() == 0 ? child.tunings() : -1;
}

/// Waits until `path` exists (at most `limit`).
inline bool wait_for_file(const fs::path& path, std::chrono::seconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!fs::exists(path)) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

/// A stored result with a measured winner, a dropped and a failed candidate.
inline StoredResult sample_result(double median = 1.25e-3) {
  StoredResult r{"fast", 1, {}};
  AutotuneOutcome fast;
  fast.name = "fast";
  fast.index = 1;
  fast.status = OutcomeStatus::measured;
  fast.median = median;
  fast.spread = 3.3e-6;
  fast.min = median * 0.97;
  fast.max = median * 1.1;
  fast.samples = 12;
  fast.batch = 4;
  AutotuneOutcome slow = fast;
  slow.name = "slow";
  slow.index = 0;
  slow.status = OutcomeStatus::dropped;
  slow.median = 2 * median;
  AutotuneOutcome broken;
  broken.name = "broken \"tiled\"\n";
  broken.index = 2;
  broken.status = OutcomeStatus::failed;
  broken.error =
      AutotuneError(ErrorKind::out_of_resources, "49152 bytes local memory", broken.name);
  r.outcomes = {fast, slow, broken};
  return r;
}

}  // namespace tunekit::test
