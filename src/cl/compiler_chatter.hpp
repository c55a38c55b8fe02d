// PoCL's compiler (clang) prints "N warnings generated." on the process's standard error when a
// kernel has warnings, though the warnings themselves are in the build log, where tunekit shows
// them. While builds on PoCL run, file descriptor 2 is a pipe, and a thread forwards what any
// thread (or a process started meanwhile, as long as it writes) sends through it to the real
// stderr line by line, less those lines; when the last of the concurrent builds ends fd 2 points
// back. Nothing is held: at exit, and on a fatal signal (a compiler's abort or crash, whose
// handler then hands the signal on), what the pipe still holds is written out first.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tunekit::cl::detail {

/// Whether `platform_name` is PoCL's (the one test of it: its compiler talks on stderr here, and
/// client.cpp gives it no build helpers).
bool pocl_platform(std::string_view platform_name);
/// Whether `platform_name`'s compiler talks on stderr: PoCL's.
bool chatty_compiler(std::string_view platform_name);

/// Filters stderr for the lifetime of the guard (when `active`; else does nothing). Nothing where
/// fd 2 is closed, or no pipe or thread can be had.
class CompilerChatterGuard {
 public:
  explicit CompilerChatterGuard(bool active);
  ~CompilerChatterGuard();
  CompilerChatterGuard(const CompilerChatterGuard&) = delete;
  CompilerChatterGuard& operator=(const CompilerChatterGuard&) = delete;

 private:
  std::uint64_t period_ = 0;  // the period of filtering it joined; 0: none
};

/// `text` without the compiler's summary lines ("1 warning generated.", "3 warnings and 1 error
/// generated."); every other line as it was.
std::string without_compiler_summaries(std::string_view text);

}  // namespace tunekit::cl::detail
