// CompilerProcesses: build threads that compile in processes of their own. NVIDIA's driver
// compiles one program at a time per process, whatever the threads or contexts, but processes
// compile side by side (docs/opencl.md); so each build thread hands its source to a
// tunekit-compiler process and loads the program from the binary it returns (a load is ~40% of a
// build there). Only ever a shortcut: whatever goes wrong on that side (no executable, a process
// that dies, hangs, or returns bytes the driver or the stamp check refuses), the thread compiles
// the program itself, as it would without them.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler_protocol.hpp"

namespace tunekit {
struct Settings;
}

namespace tunekit::cl {
struct DeviceInfo;
}

namespace tunekit::cl::detail {

/// How long a compiler process may take: to start and find its device, and per build.
struct CompilerDeadlines {
  std::chrono::milliseconds start{30'000};
  std::chrono::milliseconds build{300'000};
};

class CompilerProcesses {
 public:
  /// Processes of `executable` building for the device whose DeviceInfo::identity() is
  /// `device_identity`; at most `most` alive at once.
  CompilerProcesses(std::filesystem::path executable, std::string device_identity,
                    std::size_t most, CompilerDeadlines deadlines = {});
  /// Ends every process (its socket closed; killed if it does not leave within a second).
  ~CompilerProcesses();
  CompilerProcesses(const CompilerProcesses&) = delete;
  CompilerProcesses& operator=(const CompilerProcesses&) = delete;

  /// The program binary of `source` built with `options` by one of the processes, or nothing,
  /// and then the caller compiles it itself: the build failed there (the caller's own build gives
  /// the error its usual words), every process is busy, or they do not work (said once; after
  /// three failures in a row, not tried again in this process).
  std::optional<std::vector<unsigned char>> compile(std::string_view source,
                                                    std::string_view options);

  /// Processes started so far, and builds they returned.
  std::size_t started() const;
  std::size_t compiled() const;
  /// Why the processes are not used any more, or empty.
  std::string given_up() const;
  const std::filesystem::path& executable() const noexcept { return executable_; }

 private:
  struct Child {
    pid_t pid = -1;
    int socket = -1;
    CompilerClock::time_point last_used;
  };

  std::optional<Child> start(std::string& why_not);
  // Closes its socket and reaps it (SIGKILL first when `kill`, or when it lingers).
  void end(Child child, bool kill);
  void failed(const std::string& why);
  void reap_lost();

  std::filesystem::path executable_;
  std::string device_identity_;
  std::size_t most_;
  CompilerDeadlines deadlines_;

  mutable std::mutex mutex_;
  std::vector<Child> idle_;
  std::vector<pid_t> lost_;  // ended but not reaped yet
  std::size_t alive_ = 0;
  std::size_t started_ = 0;
  std::size_t compiled_ = 0;
  int failures_in_a_row_ = 0;
  std::string given_up_;
};

/// Where tunekit-compiler is: TUNEKIT_COMPILER (an absolute path), else beside the running
/// program, else where this build put it, else where it installs. A file is taken only when it
/// is a regular file (not a link) that only its owner (this user or root) can change, in a
/// folder that only its owner can change. Either the path, or why there is none to use.
struct CompilerExecutable {
  std::filesystem::path path;
  std::string problem;
};
CompilerExecutable find_compiler_executable();

/// The compiler processes of `device` under `settings` (Settings::build_processes), shared by
/// every client of the device in this process; null when its builds stay in this process.
std::shared_ptr<CompilerProcesses> compiler_processes_for(const DeviceInfo& device,
                                                          const Settings& settings);

}  // namespace tunekit::cl::detail
