// The `tunekit` command-line tool: its commands, each a function that runs one parsed command
// and returns the process's exit status.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <tunekit/ops/registry.hpp>
#include <tunekit/settings.hpp>

namespace tunekit::cli {

/// Exit statuses scripts can rely on (also in --help and docs/cli.md).
enum ExitStatus : int {
  exit_ok = 0,
  exit_failure = 1,  ///< the command could not do its work: no device, a failed tuning, I/O
  exit_usage = 2,    ///< bad arguments or a bad TUNEKIT_* value: nothing was done
};

/// A usage mistake that the argument parser cannot see (reported with exit_usage).
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Options every command shares.
struct CommonOptions {
  std::string cache_dir;  ///< --cache-dir: overrides TUNEKIT_CACHE_DIR
  std::string store;      ///< --store: overrides TUNEKIT_STORE (the cache commands then use it)
};

/// The settings a command runs with: TUNEKIT_* over the defaults, then the command line.
/// Throws AutotuneError(settings) naming a bad variable.
Settings command_settings(const CommonOptions& common);

/// `tunekit devices [--peak]`; with `peak`, each device's peak measured now (what a tuning's
/// good-enough stop compares with).
int list_devices_command(const CommonOptions& common, bool peak);

/// `tunekit tune <op>`: what to tune and how.
struct TuneOptions {
  std::string op;              ///< a shipped op's name (ops::shipped_ops())
  ops::OpArguments arguments;  ///< its sizes and choices, as given
  std::string device;          ///< empty: TUNEKIT_DEVICE, else the default device
  std::string level;           ///< empty: TUNEKIT_LEVEL, else balanced
  std::string search;          ///< empty: TUNEKIT_SEARCH, else the level's strategy
  bool no_cache = false;
  bool no_progress = false;
};
int tune_command(const CommonOptions& common, const TuneOptions& options);

/// `tunekit cache ...`
int cache_ls_command(const CommonOptions& common);
int cache_show_command(const CommonOptions& common, const std::string& op);
int cache_clear_command(const CommonOptions& common, const std::string& op);
int cache_export_command(const CommonOptions& common, const std::filesystem::path& file);
int cache_import_command(const CommonOptions& common, const std::filesystem::path& file,
                         bool keep_existing);

/// `tunekit report`
struct ReportOptions {
  std::filesystem::path html;  ///< empty: text summary only
  std::string op;              ///< empty: every op
};
int report_command(const CommonOptions& common, const ReportOptions& options);

}  // namespace tunekit::cli
