// BuildProcesses: helper processes (tunekit-build-helper, tools/build_helper/) that compile one
// device's programs for a ProgramCache, which makes each program from the binary a helper sends.
// Why: NVIDIA's driver compiles one program at a time in a process, whatever the threads, while
// separate processes compile at once (docs/opencl.md, "Building in helper processes"). The
// messages and their bounds are build_protocol.hpp's.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "build_protocol.hpp"

namespace tunekit::cl::detail {

/// Settings::build_processes when it is unset: `build_threads` helpers on an NVIDIA GPU whose
/// compile cache is on (`cuda_cache_disable`, the variable's value, is not "1": NVIDIA's driver
/// honours only that), else 0. With the cache on, a helper's build leaves the machine code where
/// this process's load of the binary finds it (H200, cold matmul 2048: 12.2-15.2 s with 4
/// helpers, 36.6-38.5 s without); with it off, this process compiles each helper's PTX again, one
/// at a time, and the helpers lose (28.7-36.9 s against 32.0-32.6 s). Other drivers: not
/// measured (docs/opencl.md, "Building in helper processes").
std::size_t automatic_build_processes(bool nvidia_gpu, std::string_view cuda_cache_disable,
                                      std::size_t build_threads);

/// The first of `places` that may be run (find_build_helper's search past the variable); nothing,
/// with `why_not` naming each place and why not, when none may.
std::optional<std::filesystem::path> first_runnable(
    const std::vector<std::filesystem::path>& places, std::string& why_not);

/// Helpers still alive when the wait after their SIGKILL ran out (a process stuck in a driver
/// call, for a device that went away): their process descriptors, kept so that each is reaped
/// once it dies instead of staying a zombie for the program's life. A helper's end reaps those
/// dead by then; at most `capacity` are kept (past that one is given up, as before: the system
/// reaps it when the program exits). One list for the process, never destroyed.
class LateReaps {
 public:
  static constexpr std::size_t capacity = 16;
  static LateReaps& instance();
  /// Takes `pidfd` (a process descriptor of this process's child that has not exited).
  void keep(int pidfd);
  /// Reaps those that exited since; how many are still waited for.
  std::size_t reap();

 private:
  std::mutex mutex_;
  std::vector<int> pidfds_;
};

}  // namespace tunekit::cl::detail

namespace tunekit::cl {

struct BuildProcessOptions {
  std::filesystem::path helper;  ///< the executable: find_build_helper()
  std::size_t processes = 1;     ///< at most this many at once (Settings::build_processes)
  std::string device_identity;   ///< DeviceInfo::identity(): the helper builds for this device,
  std::size_t device_index = 0;  ///< found at this index of its list_devices()
  std::string device_name;       ///< DeviceInfo::device_name, in the errors it names a program by
  std::chrono::milliseconds start_patience = detail::helper_start_patience;
  std::chrono::milliseconds build_patience = detail::helper_build_patience;
  std::chrono::milliseconds idle_retire = detail::helper_idle_retire;
};

class BuildProcesses {
 public:
  explicit BuildProcesses(BuildProcessOptions options);
  /// Ends every helper (each exits when its socket closes; one that does not within a moment is
  /// killed) and waits for them. Meanwhile a helper idle for `idle_retire` is ended as well,
  /// whether or not a build comes (so that none exits unreaped, a zombie, on its own clock).
  ~BuildProcesses();
  BuildProcesses(const BuildProcesses&) = delete;
  BuildProcesses& operator=(const BuildProcesses&) = delete;

  /// The program's build by a helper (started on first need, at most `processes` at once, a
  /// caller waiting for a free one as long as a build may take): its binary or its build error.
  /// A helper that a signal ends while it compiles is asked once more, on a new helper; a second
  /// such end is the program's build error ("the compiler crashed ..."): compiled here, it would
  /// end this process. Nothing when no helper answered otherwise: none could start, it ended
  /// before the request, was silent past the patience, or its answer was no answer; the caller
  /// then compiles the program itself. Three such failures in a row, or a helper that cannot
  /// start, and the helpers are not asked again: the process warns once and builds itself.
  std::optional<detail::BuildReply> build(std::string_view source, std::string_view options,
                                          std::string_view origin);
  /// The caller could not make a program from a helper's binary (`why`): counted as a failed
  /// build of the helpers.
  void binary_refused(const std::string& why);
  /// The caller made the program from a helper's binary: the helpers work.
  void binary_used();

  /// Helper processes started so far.
  std::size_t started() const;
  /// Builds a helper answered (a binary or a build error).
  std::size_t answered() const;
  /// Why no helper is asked any more; empty while they are.
  std::string unavailable() const;

 private:
  struct Helper;
  class Lease;
  std::unique_ptr<Helper> take();
  void give_back(std::unique_ptr<Helper> helper);
  void discard(std::unique_ptr<Helper> helper);
  std::unique_ptr<Helper> start(std::string& problem);
  void failed(const std::string& problem);
  // A program that crashed the helpers (`how`): its build failure, counted as a failure of the
  // helpers; nothing (built here) once such failures in a row give the helpers up.
  std::optional<detail::BuildReply> crashed(const std::string& what, const std::string& how);
  void answered(bool with_build_error);
  void retire_idle();
  // Whether `helper`, idle in the pool, is past its retirement (idle_retire) at `now`: take()
  // and the retirer thread retire by this one rule.
  bool idle_too_long(const Helper& helper, std::chrono::steady_clock::time_point now) const;

  BuildProcessOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable freed_;  // a helper went back, or none will any more
  std::vector<std::unique_ptr<Helper>> idle_;
  std::size_t busy_ = 0;  // taken (building, or starting)
  std::size_t started_ = 0;
  std::size_t answered_ = 0;
  std::size_t failures_in_a_row_ = 0;
  std::string unavailable_;
  std::condition_variable retire_wake_;  // a helper went idle, or the pool ends
  bool stopping_ = false;
  std::thread retirer_;  // started with the first idle helper: retire_idle()
};

/// The helper executable to run, if one may be: $TUNEKIT_BUILD_HELPER when set (and then only
/// it), else tunekit-build-helper beside the running program, else in the libexec directory
/// tunekit was configured with. Each must pass untrusted_executable(); the path returned has its
/// directories resolved (those untrusted_executable() checked, so that the run goes through no
/// link of anyone's). Nothing, with `why_not` saying what was looked at and why it is not used,
/// when none is found.
std::optional<std::filesystem::path> find_build_helper(std::string& why_not);

/// Why `path` may not be run for us (empty: it may): not a regular file (a symbolic link is not
/// followed), another user's (not root's), writable by its group or others, not executable by
/// this process, or below a directory (any of them up to /, links resolved) of another user or
/// that its group or others may write to without the sticky bit: then someone else could put
/// another program in its place between this check and the run.
std::string untrusted_executable(const std::filesystem::path& path);

}  // namespace tunekit::cl
