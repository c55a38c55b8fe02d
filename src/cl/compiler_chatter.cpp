// Filters stderr while PoCL compiles (compiler_chatter.hpp says why).
#include "compiler_chatter.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iterator>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

namespace tunekit::cl::detail {
namespace {

// Calls `keep` on each line of `text` (with its end; the last may have none) but the compiler's
// summaries, in order, without allocating: the one filter of without_compiler_summaries and of
// the forwarder.
template <class Keep>
void for_each_kept_line(std::string_view text, Keep&& keep);

// What a period of filtering shares with its forwarder thread (which ends it at the pipe's end)
// and with the fatal-signal handler. Lives as long as either needs it.
struct Forwarding {
  int read_end = -1;         // the pipe's end the forwarder reads; fd 2 is its other end meanwhile
  int real = -1;             // the real stderr, duplicated: where the forwarder writes
  std::uint64_t period = 0;  // its period's number
  std::atomic<bool> done{false};  // the forwarder read the pipe's end and wrote everything out
  std::mutex mutex;
  std::condition_variable finished;
};

std::mutex aside_mutex;
int builds_running = 0;                   // the guards of the period under way
std::shared_ptr<Forwarding>& current() {  // the period under way, under aside_mutex
  static auto& forwarding = *new std::shared_ptr<Forwarding>;  // never destroyed: see atexit
  return forwarding;
}
// Read by the fatal-signal handler too: lock-free atomics, which a handler may read. Whoever
// takes `saved_stderr` (the period's end, or the handler) points fd 2 back with it and closes it.
std::atomic<int> saved_stderr{-1};
// The last period's number (changed under aside_mutex: a guard of an ended one ends nothing), and
// the latest whose forwarder has written everything out: numbers, not the Forwarding itself,
// which may be gone by the time a handler reads them.
std::atomic<std::uint64_t> live_period{0};
std::atomic<std::uint64_t> finished_period{0};
static_assert(std::atomic<int>::is_always_lock_free);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(std::atomic<bool>::is_always_lock_free);

// How long a period's end, the exit and a fatal signal wait for the forwarder to write out what
// the pipe still holds. It finishes at once unless a process started meanwhile holds the pipe
// open (its stderr): then the forwarder goes on without them, as long as that process writes.
constexpr auto forwarder_patience = std::chrono::milliseconds(200);

void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // stderr is gone: nothing better to do with it
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

// The forwarder: what comes through the pipe goes to the real stderr line by line, less the
// summaries, until every writer has closed it. No allocation in its loop, so that a process
// whose heap lock a crash left held still gets its last words out.
void forward(std::shared_ptr<Forwarding> forwarding) {
  static constexpr std::size_t capacity = 1 << 16;
  const std::unique_ptr<char[]> buffer(new char[capacity]);
  std::size_t used = 0;
  const auto write_line = [&](std::string_view line) { write_all(forwarding->real, line); };
  for (;;) {
    const ssize_t n = ::read(forwarding->read_end, buffer.get() + used, capacity - used);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    used += static_cast<std::size_t>(n);
    const std::string_view text(buffer.get(), used);
    std::size_t complete = text.rfind('\n') + 1;  // 0 where no line has ended yet
    if (complete == 0 && used == capacity) {      // one line longer than the buffer: out as it is
      write_all(forwarding->real, text);
      complete = used;
    } else {
      for_each_kept_line(text.substr(0, complete), write_line);
    }
    std::memmove(buffer.get(), buffer.get() + complete, used - complete);
    used -= complete;
  }
  for_each_kept_line(std::string_view(buffer.get(), used), write_line);  // a last, unended line
  ::close(forwarding->read_end);
  ::close(forwarding->real);
  {
    std::lock_guard lock(forwarding->mutex);
    forwarding->done = true;
  }
  for (std::uint64_t seen = finished_period.load();
       seen < forwarding->period &&
       !finished_period.compare_exchange_weak(seen, forwarding->period);) {
  }
  forwarding->finished.notify_all();
}

// The signals that end a process whose compiler fails inside a build (abort() on an assertion,
// a crash): what the pipe holds is written out before they do.
constexpr int fatal_signals[] = {SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGFPE};
struct sigaction before_filtering[std::size(fatal_signals)];  // the actions the handler hands on to

// Async-signal-safe only: dup2, close, nanosleep, sigaction, raise, atomics. fd 2 points back,
// which closes the pipe's last end (but a started process's), so the forwarder writes out what
// it holds and ends; this waits for it a moment, then hands the signal on to the action it had
// before the builds: a fault (si_code > 0, sent by the kernel) by its instruction faulting again
// once this returns, any other (abort()'s) raised again and delivered once this returns.
void write_out_then_hand_on(int signal, siginfo_t* info, void*) {
  const int errno_before = errno;  // a handler leaves errno as it found it
  const int real = saved_stderr.exchange(-1);
  const std::uint64_t period = live_period.load();
  if (real >= 0) {
    ::dup2(real, 2);
    ::close(real);
    const timespec millisecond{0, 1000000};
    for (auto waited = std::chrono::milliseconds(0);
         finished_period.load() < period && waited < forwarder_patience;
         waited += std::chrono::milliseconds(1)) {
      ::nanosleep(&millisecond, nullptr);
    }
  }
  for (std::size_t i = 0; i < std::size(fatal_signals); ++i) {
    if (fatal_signals[i] == signal) ::sigaction(signal, &before_filtering[i], nullptr);
  }
  if (info == nullptr || info->si_code <= 0) ::raise(signal);
  errno = errno_before;
}

// While stderr is filtered (under aside_mutex): the handler above on each fatal signal, else the
// actions of before. A handler that another library installed meanwhile is left in place. On the
// alternate stack where the program has one (a stack overflow's handler needs it).
void handle_fatal_signals(bool on) {
  struct sigaction ours {};
  ours.sa_sigaction = write_out_then_hand_on;
  ours.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&ours.sa_mask);
  for (std::size_t i = 0; i < std::size(fatal_signals); ++i) {
    if (on) {
      ::sigaction(fatal_signals[i], &ours, &before_filtering[i]);
      continue;
    }
    struct sigaction now {};
    ::sigaction(fatal_signals[i], nullptr, &now);
    if ((now.sa_flags & SA_SIGINFO) && now.sa_sigaction == write_out_then_hand_on) {
      ::sigaction(fatal_signals[i], &before_filtering[i], nullptr);
    }
  }
}

// A new descriptor for `fd` at 3 or above, close-on-exec (the pipe's ends must not take the
// place of a closed stdin or stdout); `fd` closed. -1 if it cannot.
int above_standard(int fd) {
  if (fd < 0 || fd > 2) return fd;
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  ::close(fd);
  return moved;
}

// Under aside_mutex: the period under way ends. fd 2 points back (unless a fatal signal's
// handler did), and what the forwarder writes out is waited for a moment, outside the lock.
std::shared_ptr<Forwarding> stop_filtering() {
  std::fflush(stderr);
  handle_fatal_signals(false);
  const int real = saved_stderr.exchange(-1);
  if (real >= 0) {  // else a signal's handler took it: fd 2 points back, and it is closed
    ::dup2(real, 2);
    ::close(real);
  }
  return std::exchange(current(), nullptr);
}

void wait_for(const std::shared_ptr<Forwarding>& forwarding) {
  if (!forwarding) return;
  std::unique_lock lock(forwarding->mutex);
  forwarding->finished.wait_for(lock, forwarder_patience, [&] { return forwarding->done.load(); });
}

// At exit, a period under way ends as a build's would: what the process wrote goes out.
void stop_filtering_at_exit() {
  std::shared_ptr<Forwarding> ended;
  {
    std::lock_guard lock(aside_mutex);
    if (builds_running == 0 || !current()) return;
    builds_running = 0;  // the guards still alive belong to an ended period: they end nothing
    ended = stop_filtering();
    ++live_period;
  }
  wait_for(ended);
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

template <class Keep>
void for_each_kept_line(std::string_view text, Keep&& keep) {
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end == std::string_view::npos ? end : end + 1);
    if (!is_summary(text.substr(0, end))) keep(line);
    text.remove_prefix(line.size());
  }
}

}  // namespace

bool pocl_platform(std::string_view platform_name) {
  return platform_name.find("Portable Computing Language") != std::string_view::npos;
}

bool chatty_compiler(std::string_view platform_name) { return pocl_platform(platform_name); }

std::string without_compiler_summaries(std::string_view text) {
  std::string kept;
  for_each_kept_line(text, [&](std::string_view line) { kept += line; });
  return kept;
}

CompilerChatterGuard::CompilerChatterGuard(bool active) {
  if (!active) return;
  std::lock_guard lock(aside_mutex);
  if (builds_running > 0) {
    ++builds_running;
    period_ = live_period;
    return;
  }
  // Not with fd 2 closed: there is nothing to filter, and a pipe would take its place.
  if (::fcntl(2, F_GETFD) < 0) return;
  std::fflush(stderr);
  auto forwarding = std::make_shared<Forwarding>();  // first: nothing to close if it throws
  int ends[2] = {-1, -1};
  if (::pipe2(ends, O_CLOEXEC) != 0) return;  // cannot: the chatter stays
  const int read_end = above_standard(ends[0]), write_end = above_standard(ends[1]);
  const int saved = ::fcntl(2, F_DUPFD_CLOEXEC, 3);
  const int real = ::fcntl(2, F_DUPFD_CLOEXEC, 3);
  forwarding->period = live_period + 1;
  forwarding->read_end = read_end;
  forwarding->real = real;
  bool started = false;
  if (read_end >= 0 && write_end >= 0 && saved >= 0 && real >= 0) {
    try {
      std::thread(forward, forwarding).detach();
      started = true;
    } catch (const std::system_error&) {  // no thread: the chatter stays
    }
  }
  if (!started) {
    for (const int fd : {read_end, write_end, saved, real}) {
      if (fd >= 0) ::close(fd);
    }
    return;
  }
  // fd 2 becomes the pipe's only end here (a process started meanwhile inherits it, and its
  // stderr is forwarded as long as it writes).
  ::dup2(write_end, 2);
  ::close(write_end);
  static const bool at_exit = std::atexit(stop_filtering_at_exit) == 0;
  (void)at_exit;
  current() = forwarding;
  saved_stderr = saved;
  builds_running = 1;
  live_period = period_ = forwarding->period;
  handle_fatal_signals(true);
}

CompilerChatterGuard::~CompilerChatterGuard() {
  if (period_ == 0) return;
  std::shared_ptr<Forwarding> ended;
  {
    std::lock_guard lock(aside_mutex);
    if (period_ != live_period || --builds_running > 0) return;
    ended = stop_filtering();
  }
  wait_for(ended);  // so that what was written before the build comes out before what follows
}

}  // namespace tunekit::cl::detail
