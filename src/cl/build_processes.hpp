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
#include <vector>

#include "build_protocol.hpp"

namespace tunekit::cl {

struct BuildProcessOptions {
  std::filesystem::path helper;  ///< the executable: find_build_helper()
  std::size_t processes = 1;     ///< at most this many at once (Settings::build_processes)
  std::string device_identity;   ///< DeviceInfo::identity(): the helper builds for this device,
  std::size_t device_index = 0;  ///< found at this index of its list_devices()
  std::chrono::milliseconds start_patience = detail::helper_start_patience;
  std::chrono::milliseconds build_patience = detail::helper_build_patience;
  std::chrono::milliseconds idle_retire = detail::helper_idle_retire;
};

class BuildProcesses {
 public:
  explicit BuildProcesses(BuildProcessOptions options);
  /// Ends every helper (each exits when its socket closes; one that does not within a moment is
  /// killed) and waits for them.
  ~BuildProcesses();
  BuildProcesses(const BuildProcesses&) = delete;
  BuildProcesses& operator=(const BuildProcesses&) = delete;

  /// The program's build by a helper (started on first need, at most `processes` at once, a
  /// caller waiting for a free one): its binary or its build error. Nothing when no helper
  /// answered: none could start, it ended, was silent past the patience, or its answer was no
  /// answer; the caller then compiles the program itself. A helper that fails so three builds in
  /// a row, or cannot start, is not asked again: the process warns once and builds itself.
  std::optional<detail::BuildReply> build(std::string_view source, std::string_view options,
                                          std::string_view origin);
  /// The caller could not make a program from a helper's binary (`why`): counted as a failed
  /// build of the helpers.
  void binary_refused(const std::string& why);

  /// Helper processes started so far.
  std::size_t started() const;
  /// Why no helper is asked any more; empty while they are.
  std::string unavailable() const;

 private:
  struct Helper;
  std::unique_ptr<Helper> take();
  void give_back(std::unique_ptr<Helper> helper);
  void discard(std::unique_ptr<Helper> helper);
  std::unique_ptr<Helper> start(std::string& problem);
  void failed(const std::string& problem);
  void succeeded();

  BuildProcessOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable freed_;  // a helper went back, or none will any more
  std::vector<std::unique_ptr<Helper>> idle_;
  std::size_t busy_ = 0;  // taken (building, or starting)
  std::size_t started_ = 0;
  std::size_t failures_in_a_row_ = 0;
  std::string unavailable_;
};

/// The helper executable to run, if one may be: $TUNEKIT_BUILD_HELPER when set (and then only
/// it), else tunekit-build-helper beside the running program, else in the libexec directory
/// tunekit was installed with. Each must pass untrusted_executable(). Nothing, with `why_not`
/// saying what was looked at and why it is not used, when none is found.
std::optional<std::filesystem::path> find_build_helper(std::string& why_not);

/// Why `path` may not be run for us (empty: it may): not a regular file (a symbolic link is not
/// followed), another user's (not root's), writable by its group or others, not executable, or
/// in a directory of another user or that others may write to without the sticky bit.
std::string untrusted_executable(const std::filesystem::path& path);

}  // namespace tunekit::cl
