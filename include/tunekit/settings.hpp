// Settings: how hard to tune, what to log, where to keep results. Code sets them; environment
// variables (TUNEKIT_*) override, so a user can change a built program's behaviour.
#pragma once

#include <cmath>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tunekit {

/// How hard to search: more samples, less racing, bigger search budgets as the level rises.
enum class Level { minimal, balanced, extensive, full };
/// How much the tuner tells: nothing, one table per tuning, or every step.
enum class LogLevel { quiet, info, debug };
/// What execute() does on a key that is not tuned yet: tune it, then run the winner (blocking);
/// or run a provisional candidate at once while the key is tuned on a background thread, and the
/// winner once it is known (background: see Settings::tuning).
enum class TuningMode { blocking, background };

/// Whether a tuning draws a progress line on stderr (progress.hpp): automatic draws it when
/// stderr is a terminal.
enum class ProgressMode { automatic, on, off };

std::string_view to_string(Level level);
std::string_view to_string(LogLevel level);
std::string_view to_string(TuningMode mode);
std::string_view to_string(ProgressMode mode);  ///< "auto", "on", "off"

/// The benchmark runner's numbers; `for_level` gives the defaults of each level.
struct BenchmarkSettings {
  std::size_t warmup_runs = 2;   ///< untimed-for-ranking runs first (builds, caches, clocks)
  std::size_t min_samples = 5;   ///< samples before any early stop is considered
  std::size_t max_samples = 30;  ///< hard cap per candidate
  double target_spread = 0.02;   ///< stop sampling once MAD/median falls below this
  double racing_factor = 1.5;    ///< drop a candidate once its median is this much over the
                                 ///< leader's (infinity: never drop)
  /// Short calls are batched until a sample lasts this long (and 100x the timer's resolution),
  /// but to no more than 20x this of the host's time (what a lone call took it).
  /// A sample of one short call misses what a device spends between calls, and that differs by
  /// configuration: on a 16-core PoCL, 0.1 ms samples ranked 256^3 matmul winners 1.1-1.2x
  /// slower than 1 ms samples of calls back to back (docs/benchmarks.md, issue 29).
  double min_sample_seconds = 1e-3;
  double max_candidate_seconds = 2;  ///< stop sampling a candidate after this much wall time
  /// Before a winner is declared, the best few (at most this many, each within
  /// `confirm_within` times the best) race in stages of `confirm_rounds` interleaved rounds
  /// (race_interleaved): measured one after another they met different moments of the machine.
  /// They were built and measured already, so a contender costs only its rounds; near the top,
  /// measured ranks are a draw (per-candidate noise of 5-20% on a CPU device), so the race
  /// starts wide. 0 or 1: no confirmation.
  std::size_t confirm_contenders = 6;
  std::size_t confirm_rounds = 7;
  double confirm_within = 1.5;
  /// The race's samples last at least this long (calls batched back to back, as a program's loop
  /// makes them), so that what a contender pays after another ran is a small part of each: on
  /// a 2-core PoCL, 1 ms samples of a 256^3 matmul put configurations that fresh processes
  /// measure 1.3x the best at 1.16-1.23x. A race of 6 contenders costs at most 3 stages of 7
  /// rounds of it (1.3 s at the default). At most 64 calls a sample (or the search's batch).
  double confirm_sample_seconds = 1e-2;

  static BenchmarkSettings for_level(Level level);
};

enum class SearchStrategy {
  exhaustive,  ///< every configuration, in order, until the budget runs out
  random,      ///< configurations in random order, until the budget runs out
  annealing,   ///< simulated annealing over Hamming neighbours
  /// A first random sample, then always the few configurations that a model of the times
  /// measured so far predicts fastest (the default: search.cpp says why).
  model,
};

std::string_view to_string(SearchStrategy strategy);

/// How much a search may spend, and when it may stop before that.
struct SearchBudget {
  std::size_t max_evaluations = std::numeric_limits<std::size_t>::max();
  double max_seconds = std::numeric_limits<double>::infinity();
  /// Stop once this many evaluations after the start points have not beaten the best so far by
  /// more than `margin` (a fraction of its time): what is known is good enough.
  std::size_t patience = std::numeric_limits<std::size_t>::max();
  /// The patience instead, once a start point worked and while one leads: a search that begins
  /// at a configuration known to be good (the space's Space::start_at, a neighbouring key's
  /// winner) has less to find; one that beats them all by the margin goes on with `patience`.
  std::size_t seeded_patience = std::numeric_limits<std::size_t>::max();
  double margin = 0.02;
  /// Abandon the space once this many of its configurations were measured and its best is still
  /// `abandon_factor` times slower than the leader elsewhere (SearchEvaluator::leader_time).
  std::size_t abandon_after = std::numeric_limits<std::size_t>::max();
  double abandon_factor = 2;
  /// The patience ends a search only once this many configurations were evaluated.
  std::size_t explore = 0;
  /// After the strategy ends, at most this many more evaluations climb from the best found to
  /// its best adjacent configuration, step by step, within max_evaluations and max_seconds;
  /// where no step gains, they try its trades (ExpandedSpace::trades), unless a start point
  /// worked and nothing beat it by `margin` (the start points are then trusted as they are).
  /// After the confirmation race, as many again at most measure the race winner's adjacent
  /// configurations that nothing measured (TuningRun's climb from the confirmed winner).
  std::size_t refine = 0;
  /// SearchStrategy::model: the random configurations measured before the model chooses (the
  /// start points count towards them).
  std::size_t first_sample = 16;
  /// Whether the seeded patience ends once the search beats every start point by the margin
  /// (they were not this device's best); false: it holds for the whole search.
  bool seeded_until_beaten = true;
  /// The space's best start point trails the tuning's leader by the margin (set by the tuning,
  /// not by a level). The floor, the full patience and the refinement are there to find the
  /// best of the family that leads; a trailing one is searched without the floor, with the
  /// seeded patience throughout (it goes on as long as it gains), and refined only if its best
  /// comes within the margin of the leader.
  bool trails = false;

  /// The evaluations the climb from the confirmed winner may make once a space's search made
  /// `evaluated`: the refinement's allowance, within what is left of max_evaluations.
  std::size_t climb_allowance(std::size_t evaluated) const noexcept {
    const std::size_t left = max_evaluations > evaluated ? max_evaluations - evaluated : 0;
    return refine < left ? refine : left;
  }
};

/// The search settings of a tuning level: a strategy, and a budget that is a fraction of the
/// space with a floor (small spaces are searched whole).
struct SearchSettings {
  SearchStrategy strategy = SearchStrategy::model;
  double fraction = 0.15;            ///< of the space's configurations
  std::size_t min_evaluations = 30;  ///< never fewer (unless the space is smaller)
  double max_seconds = 120;          ///< per space and key
  /// Evaluations after the start points without a gain of more than `margin` that end a search
  /// early (SearchBudget::patience); the maximum never stops early.
  std::size_t patience = std::numeric_limits<std::size_t>::max();
  /// The patience once a start point worked, while one leads (SearchBudget::seeded_patience):
  /// the space's own start points or the winners of neighbouring keys (warm).
  std::size_t warm_patience = std::numeric_limits<std::size_t>::max();
  /// Whether the warm patience ends once the search beats every start point
  /// (SearchBudget::seeded_until_beaten). The minimal level keeps it: its tunings are the
  /// quickest, and trust the start points.
  bool warm_until_beaten = true;
  double margin =
      0.02;  ///< a gain counts only when its interval's upper end beats the best by this
  /// Configurations a search evaluates before its patience may end it (SearchBudget::explore;
  /// not for a space whose start points trail the leader: SearchBudget::trails).
  std::size_t explore = 0;
  /// Evaluations that climb from the best found to better adjacent ones (SearchBudget::refine).
  std::size_t refine = 0;
  /// SearchStrategy::model's first random sample (SearchBudget::first_sample).
  std::size_t first_sample = 16;
  /// Random configurations measured of each space without a start point that works (its own or
  /// other keys' winners; none, all over the device's limits, or all failing), where a priority
  /// level searches several whole spaces, before the tuning orders them best first
  /// (SearchStarts::scouted): a space far behind the leader found before it is then left after
  /// abandon_after configurations. Never more than the space's budget or abandon_after; its time
  /// limit counts them. Without them the spaces went in the set's order, and a CPU family led a
  /// GPU's search in full (docs/benchmarks.md, "Spaces ranked by scouts").
  std::size_t scouts = 4;
  /// Whether the spaces' own start points (Space::start_at) and the winners of the op's other
  /// keys on this device are measured first. Off (TUNEKIT_START_POINTS=off): a tuning that finds
  /// its winner without hints, to judge the search on a device nobody tuned for.
  bool start_points = true;
  /// A space whose best after its start points (or this many configurations, if fewer or it has
  /// none) is `abandon_factor` times slower than the leader is left; the maximum never leaves one.
  std::size_t abandon_after = std::numeric_limits<std::size_t>::max();
  double abandon_factor = 2;
  /// A tuning stops once a candidate runs at this fraction of the key's roofline (its work at
  /// the device's peak: throughput.hpp), confirmed by a second measurement, when the key states
  /// its work and the client knows its peak. 0: never (the default of this struct, and the
  /// `full` level).
  double good_enough = 0;

  static SearchSettings for_level(Level level);
  /// The budget for a space of `space_size` configurations.
  SearchBudget budget_for(std::size_t space_size) const;
};

/// Where a tuning stands: what Settings::on_progress receives after each candidate it measures.
/// The string views are valid during the call only.
struct TuningProgress {
  std::string_view op;         ///< the LocalTuner's op name
  std::string_view key;        ///< the printed key being tuned
  std::size_t done = 0;        ///< candidates measured (or failed while measuring) so far
  std::size_t total = 0;       ///< candidates the tuning expects to measure: an estimate, never
                               ///< below `done` (a space counts its search budget; a search may
                               ///< stop early; a priority level that all fails adds the next one)
  double elapsed_seconds = 0;  ///< wall time since the tuning began
  std::string_view best;       ///< the fastest working candidate so far; empty while none works
  double best_seconds = std::numeric_limits<double>::infinity();  ///< its median device time
  /// The tuning has ended: the last call of a tuning, after its winner was confirmed (`best` is
  /// the winner, `done` the candidates measured).
  bool finished = false;
};

/// Everything a LocalTuner needs to know that is not its tunable set.
struct Settings {
  Level level = Level::balanced;
  LogLevel log = LogLevel::quiet;
  bool persistent_cache = true;
  std::filesystem::path cache_dir;  ///< empty: $XDG_CACHE_HOME/tunekit, else ~/.cache/tunekit
  /// A store shared by a fleet, behind the local one: redis://[USER@]HOST[:PORT][/DB]
  /// [?prefix=PREFIX] (see parse_store_url, docs/cache.md "fleet"). Empty: the local file store
  /// only.
  std::string store;
  /// The password the store's server wants (AUTH, as the URL's user if it names one); empty:
  /// none. TUNEKIT_STORE_PASSWORD; never read from a settings file nor printed.
  std::string store_password;
  std::string device;  ///< OpenCL device selector: index or name substring
  /// Where `device` was set when a settings file set it ("<file>:<line> device", as the file's
  /// warnings name it); empty: the code, TUNEKIT_DEVICE or an option. A file's selector that
  /// matches no device is a warning, and the default device is used (a file never stops a program).
  std::string device_source;
  std::optional<BenchmarkSettings> benchmark;  ///< unset: BenchmarkSettings::for_level(level)
  std::optional<SearchSettings> search;        ///< unset: SearchSettings::for_level(level)
  /// The strategy instead of the level's (or `search`'s): TUNEKIT_SEARCH, a file's `search`,
  /// `tunekit tune --search`. The level (or `search`) still sets the budget.
  std::optional<SearchStrategy> search_strategy;
  /// Start points on or off instead of the level's (or `search`'s): TUNEKIT_START_POINTS, a
  /// file's `start_points`. The level (or `search`) still sets the budget.
  std::optional<bool> start_points;
  /// Threads that build (prepare) the candidates a tuning is about to measure while it measures
  /// others. Unset: the hardware threads, at most 4. 0: none (a candidate builds in its first
  /// call, on the tuning thread).
  std::optional<std::size_t> build_threads;
  /// Helper processes (tunekit-build-helper) that compile a GPU's programs, at most this many at
  /// once; 0: every program is compiled in this process. Unset: as many as the build threads on
  /// an NVIDIA GPU whose driver keeps its compile cache (CUDA_CACHE_DISABLE is not 1), else 0:
  /// NVIDIA's driver compiles one program at a time in a process, and a helper's build leaves the
  /// machine code in that cache, where this process loads it (a cold matmul 2048 on the H200:
  /// 12-15 s with 4, 37-39 s without). Not used on a CPU device nor on PoCL's (it builds in
  /// parallel in one process), nor where no helper may be run (TUNEKIT_BUILD_HELPER, beside the
  /// program, or installed): the builds stay here (docs/opencl.md, "Building in helper
  /// processes").
  std::optional<std::size_t> build_processes;
  /// blocking: execute() on an untuned key tunes it first. background: it answers at once with a
  /// provisional candidate (the winner of a neighbouring key of the op on this device, else the
  /// first candidate the plan would measure) while the key is tuned on the tuner's background
  /// thread (one tuning at a time, each key once); later calls run the winner. A background
  /// tuning uses the call's client and copies of its inputs: see background.hpp for how long
  /// they must live (inputs that cannot be copied are tuned blocking).
  TuningMode tuning = TuningMode::blocking;
  /// Called by the tuning thread after each candidate a tuning measures, and once more when the
  /// tuning has ended (TuningProgress::finished; never on a cache hit or on the dispatch path),
  /// e.g. to draw a progress line. Keep it short: it runs between
  /// measurements. An exception it throws ends the tuning and reaches execute()'s caller.
  std::function<void(const TuningProgress&)> on_progress;
  /// Where on_progress is empty, a LocalTuner draws the progress line of progress.hpp on stderr
  /// (the `tunekit` tool's): automatic, when stderr is a terminal; on; off.
  ProgressMode progress = ProgressMode::automatic;
  /// A key whose tuning failed for a reason of the moment (every candidate failed, one for
  /// memory, resources or the device: never stored nor kept) is tuned again by its first call
  /// after this many seconds; until then its calls throw that failure at once. Each such failure
  /// in a row doubles the wait, up to `retry_max_seconds` (or retry_seconds, if more); a decision
  /// resets it.
  double retry_seconds = 1;
  double retry_max_seconds = 60;

  /// `base` with the settings files applied over it (settings_files(), in order), then every
  /// TUNEKIT_* variable that is set. Throws AutotuneError(settings) naming the variable and the
  /// accepted values on a bad value of a variable; what a file cannot set is a warning.
  static Settings from_environment(Settings base);
  static Settings from_environment();

  BenchmarkSettings benchmark_settings() const {
    return benchmark ? *benchmark : BenchmarkSettings::for_level(level);
  }
  SearchSettings search_settings() const {
    SearchSettings settings = search ? *search : SearchSettings::for_level(level);
    if (search_strategy) settings.strategy = *search_strategy;
    if (start_points) settings.start_points = *start_points;
    return settings;
  }
  /// build_threads, or its default.
  std::size_t build_thread_count() const;
  /// Throws AutotuneError(settings) naming the first field with a value that cannot work
  /// (e.g. racing_factor below 1 or NaN, max_samples below min_samples, a search fraction
  /// outside [0, 1]). LocalTuner checks its settings before its first tuning.
  void validate() const;
  /// cache_dir, or the default location when it is empty: $XDG_CACHE_HOME/tunekit, else
  /// $HOME/.cache/tunekit. Throws AutotuneError(settings) when neither is set (no /tmp fallback).
  std::filesystem::path resolved_cache_dir() const;
};

/// Every TUNEKIT_* variable the library reads (from_environment, the store's password, the
/// kernel search path): the list tools print (docs/settings.md has each one's values).
inline constexpr std::string_view environment_variables[] = {"TUNEKIT_LEVEL",
                                                             "TUNEKIT_SEARCH",
                                                             "TUNEKIT_START_POINTS",
                                                             "TUNEKIT_LOG",
                                                             "TUNEKIT_CACHE",
                                                             "TUNEKIT_CACHE_DIR",
                                                             "TUNEKIT_STORE",
                                                             "TUNEKIT_STORE_PASSWORD",
                                                             "TUNEKIT_DEVICE",
                                                             "TUNEKIT_KERNEL_PATH",
                                                             "TUNEKIT_BUILD_THREADS",
                                                             "TUNEKIT_TUNING",
                                                             "TUNEKIT_PROGRESS",
                                                             "TUNEKIT_RETRY_SECONDS",
                                                             "TUNEKIT_RETRY_MAX_SECONDS",
                                                             "TUNEKIT_BUILD_PROCESSES",
                                                             "TUNEKIT_BUILD_HELPER"};

/// Parsers behind from_environment, public so that tools and tests can use them.
/// Each throws AutotuneError(settings) naming `source` and the accepted values.
Level parse_level(std::string_view text, std::string_view source = "TUNEKIT_LEVEL");
LogLevel parse_log_level(std::string_view text, std::string_view source = "TUNEKIT_LOG");
bool parse_cache_switch(std::string_view text, std::string_view source = "TUNEKIT_CACHE");
SearchStrategy parse_search_strategy(std::string_view text,
                                     std::string_view source = "TUNEKIT_SEARCH");
TuningMode parse_tuning_mode(std::string_view text, std::string_view source = "TUNEKIT_TUNING");
/// A cache directory (Settings::cache_dir): an absolute path. A relative one would move with the
/// directory the program runs in: another cache, tuned again, wherever it starts.
std::string parse_cache_dir(std::string_view text, std::string_view source = "TUNEKIT_CACHE_DIR");
/// on or off (TUNEKIT_START_POINTS: SearchSettings::start_points).
bool parse_start_points(std::string_view text, std::string_view source = "TUNEKIT_START_POINTS");
/// auto, on, off (also 1/0, true/false).
ProgressMode parse_progress_mode(std::string_view text,
                                 std::string_view source = "TUNEKIT_PROGRESS");
/// The most build threads and build helper processes a setting may ask for (each a thread, or a
/// process holding its own context on the GPU).
inline constexpr std::size_t max_build_threads = 256;
inline constexpr std::size_t max_build_processes = 64;
/// A number of build threads: 0 to max_build_threads.
std::size_t parse_build_threads(std::string_view text,
                                std::string_view source = "TUNEKIT_BUILD_THREADS");
/// A number of build helper processes: 0 to max_build_processes.
std::size_t parse_build_processes(std::string_view text,
                                  std::string_view source = "TUNEKIT_BUILD_PROCESSES");
/// Seconds a failure of the moment waits (Settings::retry_seconds, retry_max_seconds): a decimal
/// number from 0 to 86400 (a day).
double parse_retry_seconds(std::string_view text,
                           std::string_view source = "TUNEKIT_RETRY_SECONDS");

/// The settings files Settings::from_environment reads, in the order they are applied (a later
/// one wins): the user's, $XDG_CONFIG_HOME/tunekit/tunekit.toml (else
/// ~/.config/tunekit/tunekit.toml), then tunekit.toml in the current directory.
std::vector<std::filesystem::path> settings_files();

/// `base` with the `key = value` lines of a settings file's `text` applied (docs/settings.md:
/// the keys are the TUNEKIT_* variables' names without the prefix, in lower case; values are
/// "quoted strings", whole numbers, true or false; # starts a comment). What cannot be used (an
/// unknown key, a bad value, a line that is no `key = value`, a key set twice, a text over 64 KiB)
/// is skipped and described, naming `file` and the line, in `problems`.
Settings apply_settings_text(Settings base, std::string_view text, std::string_view file,
                             std::vector<std::string>& problems);

/// The text of the settings file `path`, or nothing when there is none or it may not be read:
/// not a regular file, not owned by this user, writable by others, over 64 KiB (each said in
/// `problems`).
std::optional<std::string> read_settings_file(const std::filesystem::path& path,
                                              std::vector<std::string>& problems);

/// `base` with every settings file applied (settings_files(), read_settings_file,
/// apply_settings_text); each problem is a warning, once per process.
Settings apply_settings_files(Settings base);

/// The process-wide settings new tuners start from: set_global_settings() if it was called,
/// else Settings::from_environment() (read once).
Settings global_settings();
void set_global_settings(Settings settings);

}  // namespace tunekit
