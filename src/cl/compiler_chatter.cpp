// Holds stderr aside while PoCL compiles (compiler_chatter.hpp says why).
#include "compiler_chatter.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <iterator>
#include <mutex>

namespace tunekit::cl::detail {
namespace {

std::mutex aside_mutex;
int builds_running = 0;
// Read by the fatal-signal handler too: lock-free atomics, which a handler may read.
std::atomic<int> saved_stderr{-1};  // the real fd 2 while builds run
std::atomic<int> held{-1};          // the in-memory file fd 2 points at meanwhile
static_assert(std::atomic<int>::is_always_lock_free);

// The signals that end a process whose compiler fails inside a build (abort() on an assertion,
// a crash): what was held is written out before they do.
constexpr int fatal_signals[] = {SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGFPE};
struct sigaction before_held[std::size(fatal_signals)];  // the actions the handler hands on to

// Async-signal-safe only: pread, write, close, dup2, sigaction, raise. What was held goes out as
// it is (summary lines too: a dying compiler's last words come first), fd 2 points back, and the
// signal goes on to the action it had before the builds: a fault (si_code > 0, sent by the
// kernel) by its instruction faulting again once this returns, any other (abort()'s) raised again
// and delivered once this returns.
void write_held_then_hand_on(int signal, siginfo_t* info, void*) {
  const int errno_before = errno;  // a handler leaves errno as it found it
  const int memory = held.exchange(-1);
  const int real = saved_stderr.load();
  if (memory >= 0 && real >= 0) {
    char chunk[4096];
    off_t offset = 0;
    for (ssize_t n; (n = ::pread(memory, chunk, sizeof chunk, offset)) > 0; offset += n) {
      for (ssize_t written = 0; written < n;) {
        const ssize_t w = ::write(real, chunk + written, static_cast<std::size_t>(n - written));
        if (w <= 0) break;
        written += w;
      }
    }
    ::dup2(real, 2);
    ::close(memory);
  }
  for (std::size_t i = 0; i < std::size(fatal_signals); ++i) {
    if (fatal_signals[i] == signal) ::sigaction(signal, &before_held[i], nullptr);
  }
  if (info == nullptr || info->si_code <= 0) ::raise(signal);
  errno = errno_before;
}

// While stderr is held (under aside_mutex): the handler above on each fatal signal, else the
// actions of before. A handler that another library installed meanwhile is left in place.
void handle_fatal_signals(bool on) {
  struct sigaction ours {};
  ours.sa_sigaction = write_held_then_hand_on;
  ours.sa_flags = SA_SIGINFO;
  sigemptyset(&ours.sa_mask);
  for (std::size_t i = 0; i < std::size(fatal_signals); ++i) {
    if (on) {
      ::sigaction(fatal_signals[i], &ours, &before_held[i]);
      continue;
    }
    struct sigaction now {};
    ::sigaction(fatal_signals[i], nullptr, &now);
    if ((now.sa_flags & SA_SIGINFO) && now.sa_sigaction == write_held_then_hand_on) {
      ::sigaction(fatal_signals[i], &before_held[i], nullptr);
    }
  }
}

// "<digits> warning(s) [and <digits> error(s)] generated." (clang's summary), and nothing else.
bool is_summary(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  constexpr std::string_view tail = " generated.";
  if (line.size() <= tail.size() || line.substr(line.size() - tail.size()) != tail) return false;
  line.remove_suffix(tail.size());
  std::size_t words = 0, i = 0;
  while (i < line.size()) {
    std::size_t digits = 0;
    while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) ++i, ++digits;
    if (digits == 0 || i >= line.size() || line[i] != ' ') return false;
    const std::string_view rest = line.substr(i + 1);
    std::string_view noun;
    for (std::string_view n : {"warnings", "warning", "errors", "error"}) {
      if (rest.substr(0, n.size()) == n) {
        noun = n;
        break;
      }
    }
    if (noun.empty()) return false;
    i += 1 + noun.size();
    ++words;
    if (i == line.size()) break;
    if (line.substr(i, 5) != " and ") return false;
    i += 5;
  }
  return words > 0 && words <= 2;
}

void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n <= 0) return;  // stderr is gone: nothing better to do with it
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

bool pocl_platform(std::string_view platform_name) {
  return platform_name.find("Portable Computing Language") != std::string_view::npos;
}

bool chatty_compiler(std::string_view platform_name) { return pocl_platform(platform_name); }

std::string without_compiler_summaries(std::string_view text) {
  std::string kept;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    if (!is_summary(line)) {
      kept += line;
      if (end != std::string_view::npos) kept += '\n';
    }
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return kept;
}

CompilerChatterGuard::CompilerChatterGuard(bool active) {
  if (!active) return;
  std::lock_guard lock(aside_mutex);
  if (builds_running++ > 0) {
    active_ = true;
    return;
  }
  std::fflush(stderr);
  const int memory = ::memfd_create("tunekit-compiler-stderr", MFD_CLOEXEC);
  const int saved = memory >= 0 ? ::fcntl(2, F_DUPFD_CLOEXEC, 3) : -1;
  if (memory < 0 || saved < 0 || ::dup2(memory, 2) < 0) {  // cannot: the chatter stays
    if (memory >= 0) ::close(memory);
    if (saved >= 0) ::close(saved);
    --builds_running;
    return;
  }
  saved_stderr = saved;
  held = memory;
  handle_fatal_signals(true);
  active_ = true;
}

CompilerChatterGuard::~CompilerChatterGuard() {
  if (!active_) return;
  std::lock_guard lock(aside_mutex);
  if (--builds_running > 0) return;
  std::fflush(stderr);
  const int memory = held.exchange(-1);  // the handler writes it no more
  handle_fatal_signals(false);
  if (memory < 0) {  // taken by the handler of a signal (fd 2 points back): its fds left to it
    saved_stderr = -1;
    return;
  }
  ::dup2(saved_stderr, 2);
  ::close(saved_stderr);
  saved_stderr = -1;
  // What the process wrote meanwhile, in chunks, less the summaries (a line split between chunks
  // is joined first).
  std::string pending;
  char chunk[4096];
  ::lseek(memory, 0, SEEK_SET);
  for (ssize_t n; (n = ::read(memory, chunk, sizeof chunk)) > 0;) {
    pending.append(chunk, static_cast<std::size_t>(n));
    const std::size_t complete = pending.rfind('\n');
    if (complete == std::string::npos) continue;
    write_all(2, without_compiler_summaries(std::string_view(pending).substr(0, complete + 1)));
    pending.erase(0, complete + 1);
  }
  write_all(2, without_compiler_summaries(pending));
  ::close(memory);
}

}  // namespace tunekit::cl::detail
