// Holds stderr aside while PoCL compiles (compiler_chatter.hpp says why).
#include "compiler_chatter.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <mutex>

namespace tunekit::cl::detail {
namespace {

std::mutex aside_mutex;
int builds_running = 0;
int saved_stderr = -1;  // the real fd 2 while builds run
int held = -1;          // the in-memory file fd 2 points at meanwhile

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
  held = memory;
  saved_stderr = saved;
  active_ = true;
}

CompilerChatterGuard::~CompilerChatterGuard() {
  if (!active_) return;
  std::lock_guard lock(aside_mutex);
  if (--builds_running > 0) return;
  std::fflush(stderr);
  ::dup2(saved_stderr, 2);
  ::close(saved_stderr);
  // What the process wrote meanwhile, in chunks, less the summaries (a line split between chunks
  // is joined first).
  std::string pending;
  char chunk[4096];
  ::lseek(held, 0, SEEK_SET);
  for (ssize_t n; (n = ::read(held, chunk, sizeof chunk)) > 0;) {
    pending.append(chunk, static_cast<std::size_t>(n));
    const std::size_t complete = pending.rfind('\n');
    if (complete == std::string::npos) continue;
    write_all(2, without_compiler_summaries(std::string_view(pending).substr(0, complete + 1)));
    pending.erase(0, complete + 1);
  }
  write_all(2, without_compiler_summaries(pending));
  ::close(held);
  held = saved_stderr = -1;
}

}  // namespace tunekit::cl::detail
