// Helper processes that compile programs (build_processes.hpp): starting them, asking them,
// retiring them, and finding a helper executable that may be run.
#include "build_processes.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "../warnings.hpp"
#include "tunekit/outcome.hpp"  // printable
#include "tunekit/settings.hpp"

extern char** environ;

namespace tunekit::cl {

namespace {

using Clock = std::chrono::steady_clock;

// Failed builds in a row after which the helpers are not asked again.
constexpr std::size_t failures_before_giving_up = 3;
// The descriptor a helper finds its socket on (its standard streams point at /dev/null, so that
// nothing a driver prints can fall into the messages).
constexpr int helper_socket_fd = 3;

void warn_unavailable(const std::string& why) {
  warn_once("tunekit: build helpers: " + why + "; programs are built in this process");
}

// Waits for `pid` to end, for at most `patience`; then kills it and waits.
void reap(pid_t pid, std::chrono::milliseconds patience) {
  const auto deadline = Clock::now() + patience;
  for (;;) {
    const pid_t done = ::waitpid(pid, nullptr, WNOHANG);
    if (done == pid) return;
    // ECHILD: already reaped (SIGCHLD ignored by the program): nothing of ours to kill.
    if (done < 0 && errno != EINTR) return;
    if (Clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(pid, SIGKILL);
  while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

std::string errno_text() { return std::strerror(errno); }

}  // namespace

struct BuildProcesses::Helper {
  pid_t pid = -1;
  int socket = -1;
  std::size_t builds = 0;  // answered so far
  Clock::time_point last_used = Clock::now();

  Helper() = default;
  Helper(const Helper&) = delete;
  Helper& operator=(const Helper&) = delete;
  // Closing the socket is what tells it to exit.
  ~Helper() {
    if (socket >= 0) ::close(socket);
    if (pid > 0) reap(pid, std::chrono::milliseconds(500));
  }
};

BuildProcesses::BuildProcesses(BuildProcessOptions options) : options_(std::move(options)) {
  if (options_.processes == 0) options_.processes = 1;
}

BuildProcesses::~BuildProcesses() {
  std::vector<std::unique_ptr<Helper>> helpers;
  {
    std::lock_guard lock(mutex_);
    helpers.swap(idle_);
  }
  // Every socket closed first, so that they all exit at once, then each waited for.
  for (auto& helper : helpers) {
    ::close(helper->socket);
    helper->socket = -1;
  }
}

std::size_t BuildProcesses::started() const {
  std::lock_guard lock(mutex_);
  return started_;
}

std::string BuildProcesses::unavailable() const {
  std::lock_guard lock(mutex_);
  return unavailable_;
}

std::optional<detail::BuildReply> BuildProcesses::build(std::string_view source,
                                                        std::string_view options,
                                                        std::string_view origin) {
  const std::string request = detail::encode_message({"build", source, options, origin});
  // A helper that served before may have left meanwhile (idle): a fresh one is asked once more.
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::unique_ptr<Helper> helper = take();
    if (!helper) return std::nullopt;
    const bool served_before = helper->builds > 0;
    std::string problem;
    std::vector<std::string> reply;
    if (detail::send_all(helper->socket, request, problem)) {
      reply = detail::read_message(
          detail::socket_source(helper->socket, Clock::now() + options_.build_patience), problem);
    }
    if (reply.empty()) {
      discard(std::move(helper));
      if (served_before && attempt == 0) continue;
      failed("a helper gave no answer to a build of " + printable(origin, 200) + " (" + problem +
             ")");
      return std::nullopt;
    }
    auto answer = detail::read_build_reply(reply, problem);
    if (!answer) {
      discard(std::move(helper));
      failed("a helper's answer to a build of " + printable(origin, 200) + ": " + problem);
      return std::nullopt;
    }
    ++helper->builds;
    give_back(std::move(helper));
    succeeded();
    return answer;
  }
  return std::nullopt;
}

void BuildProcesses::binary_refused(const std::string& why) { failed(why); }

std::unique_ptr<BuildProcesses::Helper> BuildProcesses::take() {
  std::vector<std::unique_ptr<Helper>> retired;  // ended outside the lock
  std::unique_lock lock(mutex_);
  const auto deadline = Clock::now() + options_.build_patience;
  for (;;) {
    if (!unavailable_.empty()) return nullptr;
    while (!idle_.empty()) {
      std::unique_ptr<Helper> helper = std::move(idle_.back());
      idle_.pop_back();
      // Retired before it would leave by itself (helper_idle_exit), so that none is asked just
      // as it exits.
      if (Clock::now() - helper->last_used < options_.idle_retire) {
        ++busy_;
        return helper;
      }
      retired.push_back(std::move(helper));
    }
    if (busy_ < options_.processes) {
      ++busy_;
      lock.unlock();
      retired.clear();
      std::string problem;
      std::unique_ptr<Helper> helper = start(problem);
      lock.lock();
      if (helper) {
        ++started_;
        return helper;
      }
      --busy_;
      if (unavailable_.empty()) {
        unavailable_ = "a helper could not start: " + problem;
        warn_unavailable(unavailable_);
      }
      freed_.notify_all();
      return nullptr;
    }
    // Every helper builds: wait for one, as long as a build may take.
    if (freed_.wait_until(lock, deadline) == std::cv_status::timeout) return nullptr;
  }
}

void BuildProcesses::give_back(std::unique_ptr<Helper> helper) {
  helper->last_used = Clock::now();
  {
    std::lock_guard lock(mutex_);
    --busy_;
    idle_.push_back(std::move(helper));
  }
  freed_.notify_one();
}

void BuildProcesses::discard(std::unique_ptr<Helper> helper) {
  {
    std::lock_guard lock(mutex_);
    --busy_;
  }
  freed_.notify_one();
  helper.reset();  // its socket closed, the process ended
}

void BuildProcesses::failed(const std::string& problem) {
  std::lock_guard lock(mutex_);
  ++failures_in_a_row_;
  if (unavailable_.empty() && failures_in_a_row_ >= failures_before_giving_up) {
    unavailable_ = std::to_string(failures_in_a_row_) + " builds in a row failed in them (the " +
                   "last: " + problem + ")";
    warn_unavailable(unavailable_);
    freed_.notify_all();
  }
}

void BuildProcesses::succeeded() {
  std::lock_guard lock(mutex_);
  failures_in_a_row_ = 0;
}

std::unique_ptr<BuildProcesses::Helper> BuildProcesses::start(std::string& problem) {
  int ends[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) {
    problem = "socketpair: " + errno_text();
    return nullptr;
  }
  auto helper = std::make_unique<Helper>();
  helper->socket = ends[0];
  // The child's end moved above the standard descriptors and the helper's own (close-on-exec
  // still): dup2 onto helper_socket_fd in the child then clears that flag on the copy alone.
  const int child_end = ::fcntl(ends[1], F_DUPFD_CLOEXEC, 10);
  ::close(ends[1]);
  if (child_end < 0) {
    problem = "fcntl: " + errno_text();
    return nullptr;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, child_end, helper_socket_fd);
  for (int fd = 0; fd <= 2; ++fd) {
    posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_RDWR, 0);
  }
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  // Nothing else of this process (a lock file, another helper's socket) reaches the helper.
  posix_spawn_file_actions_addclosefrom_np(&actions, helper_socket_fd + 1);
#endif
  const std::string path = options_.helper.string();
  const std::string socket_arg = std::to_string(helper_socket_fd);
  char* argv[] = {const_cast<char*>(path.c_str()), const_cast<char*>("--socket"),
                  const_cast<char*>(socket_arg.c_str()), nullptr};
  pid_t pid = -1;
  const int spawned = ::posix_spawn(&pid, path.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(child_end);
  if (spawned != 0) {
    problem = "running " + path + ": " + std::strerror(spawned);
    return nullptr;
  }
  helper->pid = pid;
  const std::string hello =
      detail::encode_message({"hello", std::to_string(detail::build_protocol_version),
                              options_.device_identity, std::to_string(options_.device_index)});
  std::vector<std::string> reply;
  if (detail::send_all(helper->socket, hello, problem)) {
    reply = detail::read_message(
        detail::socket_source(helper->socket, Clock::now() + options_.start_patience), problem);
  }
  if (reply.empty()) {
    problem = path + " gave no answer to its start (" + problem + ")";
    return nullptr;
  }
  if (reply.size() == 2 && reply[0] == "ready" &&
      reply[1] == std::to_string(detail::build_protocol_version)) {
    if (global_settings().log == LogLevel::debug) {
      inform("tunekit: build helper " + std::to_string(pid) + " started (" + path + ")\n");
    }
    return helper;
  }
  if (reply.size() == 2 && reply[0] == "refused") {
    problem = path + " refused: " + printable(reply[1], 400);
  } else {
    problem = path + " answered its start with '" + printable(reply[0], 40) + "' (" +
              std::to_string(reply.size()) + " fields)";
  }
  return nullptr;
}

std::string untrusted_executable(const std::filesystem::path& path) {
  struct stat file {};
  if (::lstat(path.c_str(), &file) != 0) return "it cannot be read (" + errno_text() + ")";
  if (S_ISLNK(file.st_mode)) return "it is a symbolic link (not followed)";
  if (!S_ISREG(file.st_mode)) return "it is not a regular file";
  const uid_t me = ::geteuid();
  if (file.st_uid != me && file.st_uid != 0) {
    return "it belongs to another user (uid " + std::to_string(file.st_uid) + ")";
  }
  if ((file.st_mode & (S_IWGRP | S_IWOTH)) != 0) return "its group or others may write to it";
  if (::access(path.c_str(), X_OK) != 0) return "it is not executable";
  struct stat dir {};
  const std::filesystem::path parent = path.parent_path().empty() ? "." : path.parent_path();
  if (::stat(parent.c_str(), &dir) != 0) return "its directory cannot be read";
  if (dir.st_uid != me && dir.st_uid != 0) return "its directory belongs to another user";
  if ((dir.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (dir.st_mode & S_ISVTX) == 0) {
    return "others may write to its directory";
  }
  return {};
}

std::optional<std::filesystem::path> find_build_helper(std::string& why_not) {
  if (const char* set = std::getenv("TUNEKIT_BUILD_HELPER"); set && *set) {
    const std::filesystem::path path(set);
    std::string problem =
        path.is_absolute() ? untrusted_executable(path) : std::string("it is not an absolute path");
    if (problem.empty()) return path;
    why_not = "TUNEKIT_BUILD_HELPER='" + printable(set, 200) + "' is not used: " + problem;
    return std::nullopt;
  }
  std::vector<std::filesystem::path> places;
  std::error_code error;
  const auto program = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error && program.has_parent_path()) {
    places.push_back(program.parent_path() / TUNEKIT_BUILD_HELPER_NAME);
  }
  places.push_back(std::filesystem::path(TUNEKIT_INSTALL_LIBEXECDIR) / TUNEKIT_BUILD_HELPER_NAME);
  why_not = "no " TUNEKIT_BUILD_HELPER_NAME " may be run:";
  for (const auto& place : places) {
    if (!std::filesystem::exists(std::filesystem::symlink_status(place))) {
      why_not += " none at " + place.string() + ";";
      continue;
    }
    const std::string problem = untrusted_executable(place);
    if (problem.empty()) return place;
    why_not += " " + place.string() + ": " + problem + ";";
  }
  why_not.pop_back();
  why_not += " (TUNEKIT_BUILD_HELPER names another)";
  return std::nullopt;
}

}  // namespace tunekit::cl
