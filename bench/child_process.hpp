// The benches that run themselves again as children (bench_repeat's tunings and judges,
// bench_fleet's processes): started without a shell, so no argument is ever read as shell
// text, and reaped with their exit status. Header-only, POSIX.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace tunekit::bench {

/// Starts this program again (/proc/self/exe) with `args` as argv[1..] and its standard output
/// on `output` (a descriptor the caller still closes); the child's pid.
inline pid_t start_self(const std::vector<std::string>& args, int output) {
  std::vector<char*> argv{const_cast<char*>("child")};
  for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("cannot start a child process");
  if (pid == 0) {  // only async-signal-safe calls until exec
    if (::dup2(output, STDOUT_FILENO) < 0) ::_exit(127);
    ::execv("/proc/self/exe", argv.data());
    static const char message[] = "bench: cannot run /proc/self/exe again\n";
    (void)!::write(STDERR_FILENO, message, sizeof message - 1);
    ::_exit(127);
  }
  return pid;
}

/// Waits for child `pid`; true when it exited with status 0.
inline bool exited_cleanly(pid_t pid) {
  int status = 0;
  return ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace tunekit::bench
