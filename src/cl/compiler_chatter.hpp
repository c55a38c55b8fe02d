// PoCL's compiler (clang) prints "N warnings generated." on the process's standard error when a
// kernel has warnings, though the warnings themselves are in the build log, where tunekit shows
// them. While a build on PoCL runs, file descriptor 2 points at a private in-memory file; when the
// last of the concurrent builds ends it points back, and what was written there meanwhile (by any
// thread) is written to it, less those lines. Nothing is lost, only delayed: a compiler that
// aborts or crashes the process meanwhile has what was held written out first, as it is, by a
// handler of the fatal signals that then hands the signal on.
#pragma once

#include <string>
#include <string_view>

namespace tunekit::cl::detail {

/// Whether `platform_name` is PoCL's (the one test of it: its compiler talks on stderr here, and
/// client.cpp gives it no build helpers).
bool pocl_platform(std::string_view platform_name);
/// Whether `platform_name`'s compiler talks on stderr: PoCL's.
bool chatty_compiler(std::string_view platform_name);

/// Holds stderr aside for the lifetime of the guard (when `active`; else does nothing).
class CompilerChatterGuard {
 public:
  explicit CompilerChatterGuard(bool active);
  ~CompilerChatterGuard();
  CompilerChatterGuard(const CompilerChatterGuard&) = delete;
  CompilerChatterGuard& operator=(const CompilerChatterGuard&) = delete;

 private:
  bool active_ = false;
};

/// `text` without the compiler's summary lines ("1 warning generated.", "3 warnings and 1 error
/// generated."); every other line as it was.
std::string without_compiler_summaries(std::string_view text);

}  // namespace tunekit::cl::detail
