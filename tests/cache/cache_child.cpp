// A separate process for the cache tests: runs one LocalTuner over a FileStore directory and
// reports how many keys it tuned (the others came from the persistent cache).
//
//   cache_child --dir DIR [--counter FILE] [--device NAME] [--op NAME] [--source TEXT]
//               [--tune-ms N] [--hang-file FILE] [--store URL] [--start-file FILE]
//               [--kill-after N] [--background [--exit | --stop-all]] KEY...
//
// --store: Settings::store (a shared store behind DIR).
// --start-file: wait until FILE exists before the first key (several children start at once).
// --counter: each tuning appends "KEY PID" to FILE (O_APPEND: lines from processes stay whole).
// --tune-ms: each candidate's benchmark input takes N ms to make (a slow tuning).
// --hang-file: while tuning (holding the tuning lock), create FILE and sleep forever.
// --kill-after: the process kills itself (SIGKILL) once a tuning measured N candidates.
// --background: Settings::tuning = background; main returns (or, with --exit, calls std::exit)
// right after the calls, while the tunings they started run.
// --stop-all: after the calls, stop_background_tunings(), then call each key once more and print
// "decided_after_stop=N": the keys decided by then (their stopped tunings are done by the call).
// Prints "tunings=N resumed=N winners=NAME,..." (resumed: candidates whose outcomes came from an
// interrupted tuning's record) and exits 0; exits 2 on a usage error, 1 on a failure.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>
#include <tunekit/tunekit.hpp>
#include <vector>

#include "../support.hpp"

namespace {

void append_line(const std::string& file, const std::string& line) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::perror("cache_child: open counter");
    std::exit(1);
  }
  if (::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) std::exit(1);
  ::close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tunekit;
  std::string dir, counter, device = "virtual device", op = "child_op", source = "v1", hang_file;
  std::string store, start_file;
  int tune_ms = 0;
  std::size_t kill_after = 0;
  bool background = false, exit_at_once = false, stop_all = false;
  std::vector<std::uint64_t> keys;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "cache_child: " << arg << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--dir")
      dir = value();
    else if (arg == "--counter")
      counter = value();
    else if (arg == "--device")
      device = value();
    else if (arg == "--op")
      op = value();
    else if (arg == "--source")
      source = value();
    else if (arg == "--tune-ms")
      tune_ms = std::stoi(value());
    else if (arg == "--hang-file")
      hang_file = value();
    else if (arg == "--store")
      store = value();
    else if (arg == "--start-file")
      start_file = value();
    else if (arg == "--kill-after")
      kill_after = std::stoul(value());
    else if (arg == "--background")
      background = true;
    else if (arg == "--exit")
      exit_at_once = true;
    else if (arg == "--stop-all")
      stop_all = true;
    else
      keys.push_back(std::stoull(arg));
  }
  if (dir.empty()) {
    std::cerr << "cache_child: --dir is required\n";
    return 2;
  }

  Settings settings = test::test_settings();
  settings.persistent_cache = true;
  settings.cache_dir = dir;
  settings.store = store;
  if (background) settings.tuning = TuningMode::background;
  if (kill_after > 0) {
    settings.on_progress = [kill_after](const TuningProgress& progress) {
      if (progress.done >= kill_after) ::raise(SIGKILL);  // as a user's kill -9 mid-tuning
    };
  }
  LocalTuner<test::SizeKey> tuner(op, settings);
  test::VirtualClient client(device);

  auto key_of = [](const std::uint64_t& n) { return test::SizeKey{n}; };
  auto inputs = [&](const test::SizeKey& key, const std::uint64_t&) {
    if (!hang_file.empty()) {
      append_line(hang_file, "tuning\n");
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    if (tune_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(tune_ms));
    return std::tuple<std::uint64_t>(key.n.value());
  };
  auto fast = [](test::VirtualClient& c, std::uint64_t& n) {
    c.spend(1e-3);
    return n;
  };
  auto slow = [](test::VirtualClient& c, std::uint64_t& n) {
    c.spend(2e-3);
    return n;
  };
  const auto& set = tuner.init([&] {
    return TunableSet{key_of, inputs}
        .with(Tunable{"fast", fast}.fingerprint("source of fast: " + source))
        .with(Tunable{"slow", slow}.fingerprint("source of slow: " + source));
  });

  while (!start_file.empty() && ::access(start_file.c_str(), F_OK) != 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  int tunings = 0;
  std::size_t resumed = 0;
  std::string winners;
  try {
    for (std::uint64_t n : keys) {
      if (tuner.execute(client.id(), client, set, n) != n) return 1;
      const auto report = tuner.tuner(client.id()).report(test::SizeKey{n});
      if (report && report->winner())
        winners += (winners.empty() ? "" : ",") + report->winner()->name;
      if (report && report->tuning_seconds > 0) {
        ++tunings;
        resumed += report->resumed.size();
        if (!counter.empty())
          append_line(counter, std::to_string(n) + " " + std::to_string(::getpid()) + "\n");
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "cache_child: " << e.what() << '\n';
    return 1;
  }
  std::cout << "tunings=" << tunings << " resumed=" << resumed << " winners=" << winners
            << std::endl;
  if (stop_all) {
    stop_background_tunings();
    int decided = 0;
    for (std::uint64_t n : keys) {
      if (tuner.execute(client.id(), client, set, n) != n) return 1;
      if (tuner.tuner(client.id()).report(test::SizeKey{n})) ++decided;
    }
    std::cout << "decided_after_stop=" << decided << std::endl;
  }
  if (exit_at_once) std::exit(0);  // the exit handlers stop the background tunings
  return 0;
}
