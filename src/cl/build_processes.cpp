// Helper processes that compile programs (build_processes.hpp): starting them, asking them,
// retiring them, and finding a helper executable that may be run.
#include "build_processes.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <thread>

#include "../cache/private_files.hpp"  // errno_text, poll_until
#include "../warnings.hpp"
#include "program_build.hpp"    // program_description
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
// waitid's P_PIDFD (Linux 5.4), which not every C library's idtype_t names.
constexpr int idtype_pidfd = 3;
// How long an ended helper (its socket closed) may take to exit before it is killed, and how
// long a killed one is waited for.
constexpr std::chrono::milliseconds exit_patience{500};
constexpr std::chrono::milliseconds kill_patience{2000};

void warn_unavailable(const std::string& why) {
  warn_once("tunekit: build helpers: " + why + "; programs are built in this process");
}

// The name of a signal a process sends itself when it crashes, or null for any other (SIGKILL
// from the OOM killer, a SIGTERM: no sign of the program's). Not strsignal: not thread-safe.
const char* crash_signal_name(int signal) {
  switch (signal) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGABRT:
      return "SIGABRT";
    case SIGBUS:
      return "SIGBUS";
    case SIGILL:
      return "SIGILL";
    case SIGFPE:
      return "SIGFPE";
    default:
      return nullptr;
  }
}

std::string signal_text(int signal) {
  return "signal " + std::to_string(signal) + " (" + crash_signal_name(signal) + ")";
}

// A process descriptor for `pid` (Linux 5.3+), or -1: signals and waits through it can never
// reach another process that was given the same pid after this one was reaped elsewhere (a
// program that ignores SIGCHLD reaps its children itself).
int pidfd_of(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}

}  // namespace

namespace detail {

LateReaps& LateReaps::instance() {
  static auto* reaps = new LateReaps;  // never destroyed: a helper may end during exit
  return *reaps;
}

void LateReaps::keep(int pidfd) {
  std::lock_guard lock(mutex_);
  if (pidfds_.size() >= capacity) {
    ::close(pidfd);  // given up: more stuck helpers than a program should ever see
    return;
  }
  pidfds_.push_back(pidfd);
}

std::size_t LateReaps::reap() {
  std::lock_guard lock(mutex_);
  std::erase_if(pidfds_, [](int pidfd) {
    siginfo_t info{};
    const int done = ::waitid(static_cast<idtype_t>(idtype_pidfd), static_cast<id_t>(pidfd), &info,
                              WEXITED | WNOHANG);
    // Exited and reaped now, or reaped by the program (ECHILD): done with it. EINTR: next time.
    if ((done == 0 && info.si_pid != 0) || (done != 0 && errno != EINTR)) {
      ::close(pidfd);
      return true;
    }
    return false;
  });
  return pidfds_.size();
}

}  // namespace detail

namespace {

detail::BuildReply crash_reply(const std::string& what, const std::string& how) {
  detail::BuildReply crash;
  crash.failure = AutotuneError(
      ErrorKind::build, "the compiler crashed compiling " + what + " in a build helper process (" +
                            how + "); not compiled in this process, which it would end");
  return crash;
}

}  // namespace

struct BuildProcesses::Helper {
  pid_t pid = -1;
  int pidfd = -1;
  int socket = -1;
  std::size_t builds = 0;      // answered so far
  std::uint64_t requests = 0;  // sent so far: the last one's ID (build_request_id)
  Clock::time_point last_used = Clock::now();

  Helper() = default;
  Helper(const Helper&) = delete;
  Helper& operator=(const Helper&) = delete;
  ~Helper() { (void)end(); }

  // Closes its socket (what tells it to exit), waits for it a moment, kills it past that, and
  // reaps it. The signal that ended it, or 0 (it exited, or was reaped by the program already).
  int end() {
    if (socket >= 0) ::close(socket);
    socket = -1;
    if (pid <= 0) return 0;
    bool alive = false;
    const int signal = pidfd >= 0 ? reap_by_pidfd(alive) : reap_by_pid();
    if (alive) {
      detail::LateReaps::instance().keep(pidfd);  // reaped once it dies
    } else if (pidfd >= 0) {
      ::close(pidfd);
    }
    (void)detail::LateReaps::instance().reap();
    pid = -1;
    pidfd = -1;
    return signal;
  }

 private:
  // Each wait is bounded: a helper stuck in its driver beyond a kill (a device gone) is left to
  // the system rather than holding the build thread.
  // The waits go on through signals (a program's own handlers interrupt a poll): a helper that
  // was leaving well is not killed for one, nor dropped unreaped, nor a crash taken for an exit.
  // `alive`: it had not exited even after the kill's wait (reaped later: LateReaps).
  int reap_by_pidfd(bool& alive) {
    if (tunekit::detail::poll_until(pidfd, POLLIN, Clock::now() + exit_patience) == 0) {
      // Not exited, so not reaped by anyone: its pid is still its own if the pidfd cannot send
      // (a filter of the program's system calls).
      if (::syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0) != 0) ::kill(pid, SIGKILL);
      (void)tunekit::detail::poll_until(pidfd, POLLIN, Clock::now() + kill_patience);
    }
    siginfo_t info{};
    if (::waitid(static_cast<idtype_t>(idtype_pidfd), static_cast<id_t>(pidfd), &info,
                 WEXITED | WNOHANG) != 0) {
      // EINVAL: a kernel with pidfd_open (5.3) but not waitid's P_PIDFD (5.4); ECHILD: reaped
      // by the program. The pid is still ours while unreaped: waited for by it.
      return errno == EINVAL ? reap_by_pid() : 0;
    }
    alive = info.si_pid == 0;  // WNOHANG: no child of it has exited
    return info.si_code == CLD_KILLED || info.si_code == CLD_DUMPED ? info.si_status : 0;
  }

  int reap_by_pid() {
    int status = 0;
    const auto wait_for = [&](std::chrono::milliseconds patience) {
      const auto deadline = Clock::now() + patience;
      for (;;) {
        const pid_t done = ::waitpid(pid, &status, WNOHANG);
        if (done == pid) return 1;
        // ECHILD: reaped by the program already; nothing of ours left to kill.
        if (done < 0 && errno != EINTR) return -1;
        if (Clock::now() >= deadline) return 0;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    };
    int reaped = wait_for(exit_patience);
    if (reaped == 0) {
      ::kill(pid, SIGKILL);
      reaped = wait_for(kill_patience);
    }
    return reaped == 1 && WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  }
};

// A helper taken from the pool: given back when it answered well, else ended, and its place in
// the pool freed whatever happens (an exception included).
class BuildProcesses::Lease {
 public:
  Lease(BuildProcesses& owner, std::unique_ptr<Helper> helper)
      : owner_(owner), helper_(std::move(helper)) {}
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  ~Lease() {
    if (helper_) owner_.discard(std::move(helper_));
  }
  explicit operator bool() const { return helper_ != nullptr; }
  Helper* operator->() const { return helper_.get(); }
  // Given back after a good answer, unless it said more than that answer: a helper that answers
  // what it was not asked is confused (an extra answer that comes later names an old request,
  // and read_build_reply refuses it).
  void give_back() {
    if (said_more()) {
      (void)end();
      return;
    }
    owner_.give_back(std::move(helper_));
  }
  // Whether bytes wait on its socket while no request is open (its end, without bytes, is found
  // when a request is sent).
  bool said_more() const {
    char byte = 0;
    return ::recv(helper_->socket, &byte, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
  }
  // Ends the helper now; the signal that ended it, or 0.
  int end() {
    const int signal = helper_->end();
    owner_.discard(std::move(helper_));
    return signal;
  }

 private:
  BuildProcesses& owner_;
  std::unique_ptr<Helper> helper_;
};

BuildProcesses::BuildProcesses(BuildProcessOptions options) : options_(std::move(options)) {
  if (options_.processes == 0) options_.processes = 1;
}

BuildProcesses::~BuildProcesses() {
  std::vector<std::unique_ptr<Helper>> helpers;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    helpers.swap(idle_);
  }
  retire_wake_.notify_all();
  if (retirer_.joinable()) retirer_.join();
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

std::size_t BuildProcesses::answered() const {
  std::lock_guard lock(mutex_);
  return answered_;
}

std::string BuildProcesses::unavailable() const {
  std::lock_guard lock(mutex_);
  return unavailable_;
}

std::optional<detail::BuildReply> BuildProcesses::build(std::string_view source,
                                                        std::string_view options,
                                                        std::string_view origin) {
  const std::string what = detail::program_description(origin, options, options_.device_name);
  // A request no helper would take (past a message's bounds) is built here, and is no failure of
  // the helpers: sent, it would end each helper that read it.
  const std::string longest_id = detail::build_request_id(UINT64_MAX);
  if (!detail::fits_a_message({"build", longest_id, source, options, origin})) return std::nullopt;
  try {
    bool replaced_gone = false;  // a helper found gone at the send was replaced once already
    int crashed_with = 0;        // the signal that ended the first helper that crashed, if one did
    for (;;) {
      Lease helper(*this, take());
      if (!helper) {
        // A program that crashed one helper is not compiled here, even when no other can try.
        if (crashed_with != 0) {
          return crashed(what, signal_text(crashed_with) + "; no other helper could try it");
        }
        return std::nullopt;
      }
      if (helper.said_more()) {  // an answer to no request arrived while it was idle
        helper.end();
        failed("a helper sent an answer to no request before a build of " + printable(what, 300));
        return std::nullopt;
      }
      const std::string id = detail::build_request_id(++helper->requests);
      const std::string request = detail::encode_message({"build", id, source, options, origin});
      const auto deadline = Clock::now() + options_.build_patience;
      std::string problem;
      if (!detail::send_all(helper->socket, request, deadline, problem)) {
        // Gone before it took the request (ended or killed while idle): a new one is asked.
        helper.end();
        if (!replaced_gone && problem == detail::peer_closed) {
          replaced_gone = true;
          continue;
        }
        failed("a helper took no request to build " + printable(what, 300) + " (" + problem + ")");
        return std::nullopt;
      }
      auto reply = detail::read_message(detail::socket_source(helper->socket, deadline), problem);
      if (reply.empty()) {
        const bool closed = problem == detail::peer_closed;
        const int signal = helper.end();
        if (closed && crash_signal_name(signal) != nullptr) {
          // The compiler crashed on this program: once more, then it is the program's failure,
          // never compiled here, where it would end this process.
          if (crashed_with == 0) {
            crashed_with = signal;
            continue;
          }
          return crashed(what, signal_text(crashed_with) + ", then " + signal_text(signal));
        }
        failed("a helper gave no answer to a build of " + printable(what, 300) + " (" + problem +
               (signal != 0 ? ", ended by signal " + std::to_string(signal) : std::string()) + ")");
        return std::nullopt;
      }
      const bool unable = detail::unable_to_build(reply, id);
      auto answer = detail::read_build_reply(std::move(reply), id, problem);
      if (!answer) {
        // A helper that says it cannot is well, and stays; any other answer ends it.
        if (unable) helper.give_back();
        failed("a helper's answer to a build of " + printable(what, 300) + ": " + problem);
        return std::nullopt;
      }
      ++helper->builds;
      helper.give_back();
      answered(answer->failure.has_value());
      return answer;
    }
  } catch (const std::exception& error) {  // bad_alloc, most likely: this process builds it
    failed("asking a helper to build " + printable(what, 300) + ": " + error.what());
  }
  return std::nullopt;
}

void BuildProcesses::binary_refused(const std::string& why) { failed(why); }

void BuildProcesses::binary_used() {
  std::lock_guard lock(mutex_);
  failures_in_a_row_ = 0;
}

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
      if (!idle_too_long(*helper, Clock::now())) {
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
      std::unique_ptr<Helper> helper;
      try {
        helper = start(problem);
      } catch (const std::exception& error) {
        problem = error.what();
      }
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
    if (freed_.wait_until(lock, deadline) == std::cv_status::timeout && idle_.empty() &&
        busy_ >= options_.processes) {
      return nullptr;
    }
  }
}

void BuildProcesses::give_back(std::unique_ptr<Helper> helper) {
  helper->last_used = Clock::now();
  {
    std::lock_guard lock(mutex_);
    --busy_;
    idle_.push_back(std::move(helper));
    if (!retirer_.joinable()) {
      try {
        retirer_ = std::thread([this] { retire_idle(); });
      } catch (const std::system_error&) {
        // No thread to be had: idle helpers are then retired when a build next takes one.
      }
    }
  }
  freed_.notify_one();
  retire_wake_.notify_one();
}

bool BuildProcesses::idle_too_long(const Helper& helper, Clock::time_point now) const {
  return now - helper.last_used >= options_.idle_retire;
}

// The retirer thread: ends each helper idle past idle_retire, whether or not anything asks for
// a build again. A helper leaves by itself after helper_idle_exit, and an exited child that no one
// waits for stays a zombie for the program's life: so this process ends it first, and reaps it.
void BuildProcesses::retire_idle() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (idle_.empty()) {
      retire_wake_.wait(lock);
      continue;
    }
    Clock::time_point oldest = idle_.front()->last_used;
    for (const auto& helper : idle_) oldest = std::min(oldest, helper->last_used);
    if (Clock::now() - oldest < options_.idle_retire) {
      retire_wake_.wait_until(lock, oldest + options_.idle_retire);
      continue;
    }
    std::vector<std::unique_ptr<Helper>> retired;
    const auto now = Clock::now();
    for (auto it = idle_.begin(); it != idle_.end();) {
      if (idle_too_long(**it, now)) {
        retired.push_back(std::move(*it));
        it = idle_.erase(it);
      } else {
        ++it;
      }
    }
    lock.unlock();
    retired.clear();  // each ended and reaped, outside the lock
    lock.lock();
  }
}

void BuildProcesses::discard(std::unique_ptr<Helper> helper) {
  helper.reset();  // ended and reaped before its place is freed: never more than N at once
  {
    std::lock_guard lock(mutex_);
    --busy_;
  }
  freed_.notify_one();
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

std::optional<detail::BuildReply> BuildProcesses::crashed(const std::string& what,
                                                          const std::string& how) {
  {
    std::lock_guard lock(mutex_);
    ++failures_in_a_row_;
    // Programs that crash the helpers one after another, with nothing built between, say more
    // of the helpers (their environment, their executable) than of the programs: given up, and
    // this program built here, as it would be without helpers.
    if (failures_in_a_row_ >= failures_before_giving_up) {
      if (unavailable_.empty()) {
        unavailable_ = "the helpers crashed on " + std::to_string(failures_in_a_row_) +
                       " builds in a row (the last: " + printable(what, 300) + ", " + how + ")";
        warn_unavailable(unavailable_);
        freed_.notify_all();
      }
      return std::nullopt;
    }
  }
  return crash_reply(what, how);
}

void BuildProcesses::answered(bool with_build_error) {
  std::lock_guard lock(mutex_);
  ++answered_;
  // A binary counts once the caller could use it (binary_used); a build error is an answer.
  if (with_build_error) failures_in_a_row_ = 0;
}

std::unique_ptr<BuildProcesses::Helper> BuildProcesses::start(std::string& problem) {
  int ends[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) {
    problem = "socketpair: " + tunekit::detail::errno_text(errno);
    return nullptr;
  }
  auto helper = std::make_unique<Helper>();
  helper->socket = ends[0];
  // The child's end moved above the standard descriptors and the helper's own (close-on-exec
  // still): dup2 onto helper_socket_fd in the child then clears that flag on the copy alone.
  const int child_end = ::fcntl(ends[1], F_DUPFD_CLOEXEC, 10);
  ::close(ends[1]);
  if (child_end < 0) {
    problem = "fcntl: " + tunekit::detail::errno_text(errno);
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
  // Whatever the spawning thread blocks or this program ignores, the helper starts with every
  // signal at its default and none blocked, in a process group of its own: a Ctrl-C or a hangup
  // of the terminal reaches this program, whose end then ends the helpers, and is never taken for
  // a compiler's crash.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none;
  sigset_t all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &all);
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  const std::string path = options_.helper.string();
  const std::string socket_arg = std::to_string(helper_socket_fd);
  char* argv[] = {const_cast<char*>(path.c_str()), const_cast<char*>("--socket"),
                  const_cast<char*>(socket_arg.c_str()), nullptr};
  pid_t pid = -1;
  const int spawned = ::posix_spawn(&pid, path.c_str(), &actions, &attributes, argv, environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  ::close(child_end);
  if (spawned != 0) {
    problem = "running " + path + ": " + tunekit::detail::errno_text(spawned);
    return nullptr;
  }
  helper->pid = pid;
  helper->pidfd = pidfd_of(pid);
  const auto deadline = Clock::now() + options_.start_patience;
  const std::string hello =
      detail::encode_message({"hello", std::to_string(detail::build_protocol_version),
                              options_.device_identity, std::to_string(options_.device_index)});
  std::vector<std::string> reply;
  if (detail::send_all(helper->socket, hello, deadline, problem)) {
    reply = detail::read_message(detail::socket_source(helper->socket, deadline), problem);
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

namespace {

// Why the directory `dir` (links resolved) or one above it lets someone else change what is in
// it; empty: none does.
std::string unsafe_directories(const std::filesystem::path& dir) {
  const uid_t me = ::geteuid();
  for (std::filesystem::path at = dir;; at = at.parent_path()) {
    struct stat status {};
    if (::stat(at.c_str(), &status) != 0) return "its directory " + at.string() + " cannot be read";
    if (status.st_uid != me && status.st_uid != 0) {
      return "its directory " + at.string() + " belongs to another user";
    }
    if ((status.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (status.st_mode & S_ISVTX) == 0) {
      return "its group or others may write to its directory " + at.string();
    }
    if (at == at.root_path() || !at.has_relative_path()) return {};
  }
}

// `path` with its directory resolved (links and `..` gone), if it may be run: then no one else
// can put another program in its place before the run, which goes through this very path. Else
// nothing, and `problem` says why.
std::optional<std::filesystem::path> runnable(const std::filesystem::path& path,
                                              std::string& problem) {
  std::error_code error;
  const auto dir = std::filesystem::canonical(
      path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path(), error);
  if (error) {
    problem = "its directory cannot be resolved (" + error.message() + ")";
    return std::nullopt;
  }
  const std::filesystem::path file = dir / path.filename();
  struct stat status {};
  if (::lstat(file.c_str(), &status) != 0) {
    problem = "it cannot be read (" + tunekit::detail::errno_text(errno) + ")";
    return std::nullopt;
  }
  const uid_t me = ::geteuid();
  if (S_ISLNK(status.st_mode)) {
    problem = "it is a symbolic link (not followed)";
  } else if (!S_ISREG(status.st_mode)) {
    problem = "it is not a regular file";
  } else if (status.st_uid != me && status.st_uid != 0) {
    problem = "it belongs to another user (uid " + std::to_string(status.st_uid) + ")";
  } else if ((status.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    problem = "its group or others may write to it";
  } else if (::faccessat(AT_FDCWD, file.c_str(), X_OK, AT_EACCESS) != 0) {
    problem = "it is not executable";
  } else {
    problem = unsafe_directories(dir);
  }
  if (!problem.empty()) return std::nullopt;
  return file;
}

}  // namespace

std::string untrusted_executable(const std::filesystem::path& path) {
  std::string problem;
  (void)runnable(path, problem);
  return problem;
}

namespace detail {
std::size_t automatic_build_processes(bool nvidia_gpu, std::string_view cuda_cache_disable,
                                      std::size_t build_threads) {
  if (!nvidia_gpu || cuda_cache_disable == "1") return 0;
  return std::min(build_threads, max_build_processes);
}
}  // namespace detail

std::optional<std::filesystem::path> find_build_helper(std::string& why_not) {
  std::string problem;
  if (const char* set = std::getenv("TUNEKIT_BUILD_HELPER"); set && *set) {
    const std::filesystem::path path(set);
    if (!path.is_absolute()) {
      problem = "it is not an absolute path";
    } else if (auto file = runnable(path, problem)) {
      return file;
    }
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
  return detail::first_runnable(places, why_not);
}

namespace detail {
std::optional<std::filesystem::path> first_runnable(
    const std::vector<std::filesystem::path>& places, std::string& why_not) {
  why_not = "no " TUNEKIT_BUILD_HELPER_NAME " may be run:";
  for (const auto& place : places) {
    // lstat, not filesystem's status: a place that cannot be looked at (a directory on the way
    // closed to this user, a name too long) is one more place without a helper, not an exception
    // out of the client's construction.
    struct stat status {};
    if (::lstat(place.c_str(), &status) != 0) {
      why_not += errno == ENOENT || errno == ENOTDIR
                     ? " none at " + place.string() + ";"
                     : " " + place.string() + ": it cannot be looked at (" +
                           tunekit::detail::errno_text(errno) + ");";
      continue;
    }
    std::string problem;
    if (auto file = runnable(place, problem)) return file;
    why_not += " " + place.string() + ": " + problem + ";";
  }
  why_not.pop_back();
  why_not += " (TUNEKIT_BUILD_HELPER names another)";
  return std::nullopt;
}
}  // namespace detail

}  // namespace tunekit::cl
