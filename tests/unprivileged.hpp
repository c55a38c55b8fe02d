// Runs part of a test as a second, unprivileged user. Permission and symlink attacks are only
// real for a process that permission bits bind: root writes through them, and CI runs as root.
// Where the test runs as root the part runs as `nobody` (in a forked child); otherwise as the
// current user, who is unprivileged already.
#pragma once

#include <grp.h>
#include <pwd.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <functional>
#include <iostream>
#include <stdexcept>
#include <string>

namespace tunekit::test {

struct UnprivilegedUser {
  uid_t uid;
  gid_t gid;
};

/// The user that run_unprivileged runs as: `nobody` under root, else the current user.
inline UnprivilegedUser unprivileged_user() {
  if (::geteuid() != 0) return {::geteuid(), ::getegid()};
  const passwd* nobody = ::getpwnam("nobody");
  if (nobody == nullptr) return {65534, 65534};
  return {nobody->pw_uid, nobody->pw_gid};
}

/// Gives `path` and everything under it to unprivileged_user() (nothing to do when not root).
inline void give_to_unprivileged(const std::filesystem::path& path) {
  if (::geteuid() != 0) return;
  const auto user = unprivileged_user();
  const auto give = [&](const std::filesystem::path& p) {
    if (::lchown(p.c_str(), user.uid, user.gid) != 0) {
      throw std::runtime_error("lchown " + p.string() + " failed");
    }
  };
  give(path);
  if (!std::filesystem::is_directory(path)) return;
  for (const auto& e : std::filesystem::recursive_directory_iterator(path)) give(e.path());
}

/// Runs `body` in a forked child as unprivileged_user() and returns its exit status: what
/// `body` returned, 125 when it threw, 126 when the user could not be switched, 128 + signal
/// when it died. Catch2 is not usable in the child: let `body` return a code (or leave files),
/// and check in the parent.
inline int run_unprivileged(const std::function<int()>& body) {
  const auto user = unprivileged_user();
  std::cout.flush();  // or the child writes the parent's pending output again
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    int code = 0;
    if (::geteuid() == 0 &&
        (::setgroups(0, nullptr) != 0 || ::setgid(user.gid) != 0 || ::setuid(user.uid) != 0)) {
      ::_exit(126);
    }
    try {
      code = body();
    } catch (const std::exception&) {
      code = 125;
    }
    std::fflush(nullptr);
    ::_exit(code);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

}  // namespace tunekit::test
