// CompilerProcesses: starting, using, ending and finding tunekit-compiler processes; see
// compiler_processes.hpp.
#include "compiler_processes.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <map>
#include <thread>

#include "../warnings.hpp"
#include "tunekit/cl/device.hpp"
#include "tunekit/outcome.hpp"  // printable
#include "tunekit/settings.hpp"

extern char** environ;

namespace tunekit::cl::detail {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t hello_limit = 1 << 20;
constexpr int failures_before_giving_up = 3;
// A process unused this long is ended before the next build (it leaves by itself after 30 s:
// see compiler_main.cpp), so that no build is sent to one that is leaving.
constexpr auto idle_lifetime = std::chrono::seconds(20);

std::string errno_text(int error) { return std::generic_category().message(error); }

// Reaps `pid` within `patience`; true once it is gone (or was never ours to reap).
bool reap(pid_t pid, std::chrono::milliseconds patience) {
  const auto until = CompilerClock::now() + patience;
  for (;;) {
    int status = 0;
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) return true;  // ECHILD: SIGCHLD ignored
    if (CompilerClock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

CompilerProcesses::CompilerProcesses(fs::path executable, std::string device_identity,
                                     std::size_t most, CompilerDeadlines deadlines)
    : executable_(std::move(executable)),
      device_identity_(std::move(device_identity)),
      most_(most),
      deadlines_(deadlines) {}

CompilerProcesses::~CompilerProcesses() {
  std::vector<Child> idle;
  {
    std::lock_guard lock(mutex_);
    idle.swap(idle_);
  }
  for (auto& child : idle) end(child, /*kill=*/false);
  reap_lost();
}

std::size_t CompilerProcesses::started() const {
  std::lock_guard lock(mutex_);
  return started_;
}

std::size_t CompilerProcesses::compiled() const {
  std::lock_guard lock(mutex_);
  return compiled_;
}

std::string CompilerProcesses::given_up() const {
  std::lock_guard lock(mutex_);
  return given_up_;
}

void CompilerProcesses::end(Child child, bool kill) {
  ::close(child.socket);  // an idle process reads the end of its input and leaves
  if (kill) ::kill(child.pid, SIGKILL);
  if (reap(child.pid, std::chrono::milliseconds(kill ? 2000 : 1000))) return;
  ::kill(child.pid, SIGKILL);
  if (reap(child.pid, std::chrono::milliseconds(2000))) return;
  std::lock_guard lock(mutex_);
  lost_.push_back(child.pid);  // stuck in the driver: reaped when it finally goes
}

void CompilerProcesses::reap_lost() {
  std::vector<pid_t> lost;
  {
    std::lock_guard lock(mutex_);
    lost.swap(lost_);
  }
  std::vector<pid_t> still;
  for (const pid_t pid : lost) {
    if (!reap(pid, std::chrono::milliseconds(0))) still.push_back(pid);
  }
  std::lock_guard lock(mutex_);
  lost_.insert(lost_.end(), still.begin(), still.end());
}

void CompilerProcesses::failed(const std::string& why) {
  std::lock_guard lock(mutex_);
  if (!given_up_.empty()) return;
  if (++failures_in_a_row_ < failures_before_giving_up) return;
  given_up_ = why;
  warn_once("tunekit: building in this process from now on: the compiler processes (" +
            executable_.string() + ") failed " + std::to_string(failures_in_a_row_) +
            " times in a row; the last: " + why);
}

std::optional<CompilerProcesses::Child> CompilerProcesses::start(std::string& why_not) {
  int sockets[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) {
    why_not = "socketpair: " + errno_text(errno);
    return std::nullopt;
  }
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attributes);
  // The process reads and writes its socket as stdin and stdout; its driver's chatter goes
  // nowhere (a failed build is built again here, and its log reported from here).
  posix_spawn_file_actions_adddup2(&actions, sockets[1], 0);
  posix_spawn_file_actions_adddup2(&actions, sockets[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  // Not the mask of whichever of the caller's threads starts it.
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
  const std::string program = executable_.string();
  char serve[] = "--serve";
  char* argv[] = {const_cast<char*>(program.c_str()), serve, nullptr};
  pid_t pid = -1;
  const int spawned = ::posix_spawn(&pid, program.c_str(), &actions, &attributes, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(sockets[1]);
  if (spawned != 0) {
    ::close(sockets[0]);
    why_not = "cannot start it: " + errno_text(spawned);
    return std::nullopt;
  }
  Child child{pid, sockets[0], CompilerClock::now()};
  {
    std::lock_guard lock(mutex_);
    ++started_;
  }
  const auto deadline = CompilerClock::now() + deadlines_.start;
  const std::string hello =
      encode_frame("HELO", {compiler_protocol_version, std::string_view(device_identity_)});
  FrameRead answer;
  if (write_frame(child.socket, hello, deadline) == Io::ok) {
    answer = read_frame(child.socket, "HERE", 1, hello_limit, deadline);
  }
  if (answer.status != Io::ok || answer.frame.fields[0] != "ok") {
    why_not = answer.status == Io::timed_out ? "it did not answer within " +
                                                   std::to_string(deadlines_.start.count()) + " ms"
              : answer.status == Io::ok ? printable(answer.frame.fields[0], 300)
              : answer.status == Io::closed || answer.problem.empty()
                  ? std::string("it left without answering")
                  : "its answer: " + answer.problem;
    end(child, /*kill=*/true);
    return std::nullopt;
  }
  return child;
}

std::optional<std::vector<unsigned char>> CompilerProcesses::compile(std::string_view source,
                                                                     std::string_view options) {
  reap_lost();
  std::optional<Child> child;
  std::vector<Child> stale;
  {
    std::lock_guard lock(mutex_);
    if (!given_up_.empty()) return std::nullopt;
    const auto now = CompilerClock::now();
    while (!idle_.empty() && !child) {
      Child next = idle_.back();
      idle_.pop_back();
      if (now - next.last_used < idle_lifetime) {
        child = next;
      } else {
        stale.push_back(next);
        --alive_;
      }
    }
    if (!child) {
      if (alive_ >= most_) return std::nullopt;  // all busy: this thread builds itself
      ++alive_;
    }
  }
  for (auto& old : stale) end(old, /*kill=*/false);
  if (!child) {
    std::string why_not;
    child = start(why_not);
    if (!child) {
      {
        std::lock_guard lock(mutex_);
        --alive_;
      }
      failed(why_not);
      return std::nullopt;
    }
  }
  const auto deadline = CompilerClock::now() + deadlines_.build;
  FrameRead answer;
  const Io sent = write_frame(child->socket, encode_frame("MAKE", {source, options}), deadline);
  if (sent == Io::ok) {
    answer = read_frame(child->socket, "MADE", 2, compiler_frame_limit, deadline);
  }
  const bool answered = sent == Io::ok && answer.status == Io::ok &&
                        (answer.frame.fields[0] == "ok" || answer.frame.fields[0] == "failed");
  if (!answered) {
    end(*child, /*kill=*/true);
    {
      std::lock_guard lock(mutex_);
      --alive_;
    }
    failed(sent != Io::ok                         ? std::string("it stopped reading")
           : answer.status == Io::timed_out       ? "a build took more than " +
                                                  std::to_string(deadlines_.build.count()) + " ms"
           : answer.status == Io::closed          ? std::string("it left during a build")
           : answer.status == Io::ok              ? std::string("an answer that is neither ok nor failed")
                                                  : "its answer: " + answer.problem);
    return std::nullopt;
  }
  child->last_used = CompilerClock::now();
  {
    std::lock_guard lock(mutex_);
    failures_in_a_row_ = 0;
    idle_.push_back(*child);
    if (answer.frame.fields[0] == "ok") ++compiled_;
  }
  if (answer.frame.fields[0] != "ok" || answer.frame.fields[1].empty()) return std::nullopt;
  const auto& binary = answer.frame.fields[1];
  return std::vector<unsigned char>(binary.begin(), binary.end());
}

// ---- finding the executable ----

namespace {

// Why `path` may not be run, or empty: a regular file, not a link, that only its owner (this
// user or root) can change, in a folder that only its owner can change.
std::string unsafe_to_run(const fs::path& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return "cannot read it: " + errno_text(errno);
  const auto owned_safely = [](const struct stat& s) {
    return (s.st_uid == ::geteuid() || s.st_uid == 0) && (s.st_mode & (S_IWGRP | S_IWOTH)) == 0;
  };
  if (S_ISLNK(info.st_mode)) return "it is a symbolic link";
  if (!S_ISREG(info.st_mode)) return "it is not a regular file";
  if (!owned_safely(info)) return "another user could change it (its owner or its mode)";
  if (::access(path.c_str(), X_OK) != 0) return "it is not executable";
  struct stat folder {};
  if (::stat(path.parent_path().c_str(), &folder) != 0 || !owned_safely(folder)) {
    return "another user could change its folder";
  }
  return {};
}

fs::path running_program_folder() {
  std::error_code error;
  const auto self = fs::read_symlink("/proc/self/exe", error);
  return error ? fs::path() : self.parent_path();
}

}  // namespace

CompilerExecutable find_compiler_executable() {
  constexpr std::string_view name = "tunekit-compiler";
  if (const char* chosen = std::getenv("TUNEKIT_COMPILER"); chosen && *chosen) {
    const fs::path path(chosen);
    if (!path.is_absolute()) {
      return {{}, "TUNEKIT_COMPILER='" + printable(chosen, 200) + "' is not an absolute path"};
    }
    if (auto why = unsafe_to_run(path); !why.empty()) {
      return {{}, "TUNEKIT_COMPILER=" + printable(chosen, 200) + ": " + why};
    }
    return {path, {}};
  }
  std::vector<fs::path> places;
  if (auto folder = running_program_folder(); !folder.empty()) places.push_back(folder / name);
#ifdef TUNEKIT_COMPILER_BUILD_PATH
  places.emplace_back(TUNEKIT_COMPILER_BUILD_PATH);
#endif
#ifdef TUNEKIT_COMPILER_INSTALL_PATH
  places.emplace_back(TUNEKIT_COMPILER_INSTALL_PATH);
#endif
  std::string problems;
  for (const auto& place : places) {
    std::error_code error;
    if (!fs::exists(fs::symlink_status(place, error))) continue;
    auto why = unsafe_to_run(place);
    if (why.empty()) return {place, {}};
    problems += (problems.empty() ? "" : "; ") + place.string() + ": " + why;
  }
  return {{}, problems.empty() ? "no " + std::string(name) + " found (TUNEKIT_COMPILER names one)"
                               : problems};
}

std::shared_ptr<CompilerProcesses> compiler_processes_for(const DeviceInfo& device,
                                                          const Settings& settings) {
  const bool wanted = settings.build_processes == BuildProcesses::on ||
                      (settings.build_processes == BuildProcesses::automatic && device.nvidia);
  if (!wanted) return nullptr;
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<CompilerProcesses>> shared;
  const std::string identity = device.identity();
  std::lock_guard lock(mutex);
  if (auto existing = shared[identity].lock()) return existing;
  const auto executable = find_compiler_executable();
  if (executable.path.empty()) {
    if (settings.build_processes == BuildProcesses::on || std::getenv("TUNEKIT_COMPILER")) {
      warn_once("tunekit: building in this process: " + executable.problem);
    }
    return nullptr;
  }
  auto made = std::make_shared<CompilerProcesses>(
      executable.path, identity, std::max<std::size_t>(settings.build_thread_count(), 1));
  shared[identity] = made;
  return made;
}

}  // namespace tunekit::cl::detail
