// Settings from code and from TUNEKIT_* environment variables, and the level presets.
#include "tunekit/settings.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <thread>

#include "tunekit/error.hpp"
#include "tunekit/redis_store.hpp"

namespace tunekit {

std::string_view to_string(Level level) {
  switch (level) {
    case Level::minimal:
      return "minimal";
    case Level::balanced:
      return "balanced";
    case Level::extensive:
      return "extensive";
    case Level::full:
      return "full";
  }
  return "?";
}

std::string_view to_string(LogLevel level) {
  switch (level) {
    case LogLevel::quiet:
      return "quiet";
    case LogLevel::info:
      return "info";
    case LogLevel::debug:
      return "debug";
  }
  return "?";
}

std::string_view to_string(TuningMode mode) {
  switch (mode) {
    case TuningMode::blocking:
      return "blocking";
    case TuningMode::background:
      return "background";
  }
  return "?";
}

std::string_view to_string(ProgressMode mode) {
  switch (mode) {
    case ProgressMode::automatic:
      return "auto";
    case ProgressMode::on:
      return "on";
    case ProgressMode::off:
      return "off";
  }
  return "?";
}

BenchmarkSettings BenchmarkSettings::for_level(Level level) {
  BenchmarkSettings s;
  switch (level) {
    case Level::minimal:
      s.warmup_runs = 1, s.min_samples = 3, s.max_samples = 10, s.racing_factor = 1.2;
      s.target_spread = 0.05, s.max_candidate_seconds = 0.5;
      s.confirm_contenders = 4, s.confirm_rounds = 5;
      break;
    case Level::balanced:
      break;
    case Level::extensive:
      s.warmup_runs = 3, s.min_samples = 10, s.max_samples = 60, s.racing_factor = 2.0;
      s.target_spread = 0.01, s.max_candidate_seconds = 5;
      s.confirm_contenders = 8, s.confirm_rounds = 9;
      break;
    case Level::full:
      s.warmup_runs = 3, s.min_samples = 20, s.max_samples = 100;
      s.racing_factor = std::numeric_limits<double>::infinity();
      s.target_spread = 0.005, s.max_candidate_seconds = 10;
      s.confirm_contenders = 10, s.confirm_rounds = 11;
      break;
  }
  return s;
}

std::string_view to_string(SearchStrategy strategy) {
  switch (strategy) {
    case SearchStrategy::exhaustive:
      return "exhaustive";
    case SearchStrategy::random:
      return "random";
    case SearchStrategy::annealing:
      return "annealing";
    case SearchStrategy::model:
      return "model";
  }
  return "?";
}

namespace {
[[noreturn]] void bad_value(std::string_view source, std::string_view text,
                            std::string_view accepted) {
  throw AutotuneError(ErrorKind::settings,
                      std::string(source) + "='" + printable(text, 200) +
                          "' is not valid; accepted values: " + std::string(accepted));
}

// The value whose to_string() is `text`; else an error listing every accepted name, and
// `also` (other spellings the caller accepts before asking).
template <class Enum, std::size_t N>
Enum parse_named(std::string_view text, std::string_view source, const Enum (&values)[N],
                 std::string_view also = {}) {
  std::string accepted;
  for (Enum value : values) {
    if (text == to_string(value)) return value;
    accepted += (accepted.empty() ? "" : ", ") + std::string(to_string(value));
  }
  if (!also.empty()) accepted += " (also " + std::string(also) + ")";
  bad_value(source, text, accepted);
}
}  // namespace

Level parse_level(std::string_view text, std::string_view source) {
  return parse_named(text, source,
                     {Level::minimal, Level::balanced, Level::extensive, Level::full});
}

LogLevel parse_log_level(std::string_view text, std::string_view source) {
  return parse_named(text, source, {LogLevel::quiet, LogLevel::info, LogLevel::debug});
}

SearchStrategy parse_search_strategy(std::string_view text, std::string_view source) {
  return parse_named(text, source,
                     {SearchStrategy::exhaustive, SearchStrategy::random, SearchStrategy::annealing,
                      SearchStrategy::model});
}

TuningMode parse_tuning_mode(std::string_view text, std::string_view source) {
  return parse_named(text, source, {TuningMode::blocking, TuningMode::background});
}

ProgressMode parse_progress_mode(std::string_view text, std::string_view source) {
  if (text == "1" || text == "true") return ProgressMode::on;
  if (text == "0" || text == "false") return ProgressMode::off;
  return parse_named(text, source, {ProgressMode::automatic, ProgressMode::on, ProgressMode::off},
                     "1/0, true/false");
}

bool parse_cache_switch(std::string_view text, std::string_view source) {
  if (text == "on" || text == "1" || text == "true") return true;
  if (text == "off" || text == "0" || text == "false") return false;
  bad_value(source, text, "on, off (also 1/0, true/false)");
}

std::string parse_cache_dir(std::string_view text, std::string_view source) {
  if (text.empty() || text.front() != '/') bad_value(source, text, "an absolute path");
  return std::string(text);
}

bool parse_start_points(std::string_view text, std::string_view source) {
  return parse_cache_switch(text, source);  // the same words: on/off, 1/0, true/false
}

namespace {

// A whole number from 0 to `max`, all of `text`; else the error naming `source` and `accepted`.
std::size_t count_up_to(std::string_view text, std::size_t max, std::string_view source,
                        std::string_view accepted) {
  std::size_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc{} || end != text.data() + text.size() || value > max) {
    bad_value(source, text, accepted);
  }
  return value;
}

}  // namespace

std::size_t parse_build_threads(std::string_view text, std::string_view source) {
  return count_up_to(text, max_build_threads, source,
                     "a whole number of threads from 0 (build on the tuning thread) to " +
                         std::to_string(max_build_threads));
}

std::size_t parse_build_processes(std::string_view text, std::string_view source) {
  return count_up_to(text, max_build_processes, source,
                     "a whole number of helper processes from 0 (build in this process) to " +
                         std::to_string(max_build_processes));
}

double parse_retry_seconds(std::string_view text, std::string_view source) {
  double value = 0;
  const auto [end, error] =
      std::from_chars(text.data(), text.data() + text.size(), value, std::chars_format::fixed);
  if (text.empty() || error != std::errc{} || end != text.data() + text.size() ||
      !(value >= 0 && value <= 86400)) {
    bad_value(source, text, "seconds from 0 to 86400 (a day), such as 1 or 0.5");
  }
  return value;
}

Settings Settings::from_environment(Settings base) {
  base = apply_settings_files(std::move(base));
  if (const char* v = std::getenv("TUNEKIT_LEVEL"); v && *v) base.level = parse_level(v);
  if (const char* v = std::getenv("TUNEKIT_LOG"); v && *v) base.log = parse_log_level(v);
  if (const char* v = std::getenv("TUNEKIT_CACHE"); v && *v) {
    base.persistent_cache = parse_cache_switch(v);
  }
  if (const char* v = std::getenv("TUNEKIT_CACHE_DIR"); v) {
    if (*v == '\0') {
      throw AutotuneError(ErrorKind::settings,
                          "TUNEKIT_CACHE_DIR is set but empty; unset it for the default location "
                          "or give a directory");
    }
    base.cache_dir = parse_cache_dir(v);
  }
  if (const char* v = std::getenv("TUNEKIT_STORE"); v && *v) {
    (void)parse_store_url(v);  // a bad URL is an error here, not a warning at the first tuning
    base.store = v;
  }
  if (const char* v = std::getenv("TUNEKIT_STORE_PASSWORD"); v && *v) base.store_password = v;
  if (const char* v = std::getenv("TUNEKIT_DEVICE"); v && *v) {
    base.device = v;
    base.device_source.clear();
  }
  if (const char* v = std::getenv("TUNEKIT_BUILD_THREADS"); v && *v) {
    base.build_threads = parse_build_threads(v);
  }
  if (const char* v = std::getenv("TUNEKIT_BUILD_PROCESSES"); v && *v) {
    base.build_processes = parse_build_processes(v);
  }
  if (const char* v = std::getenv("TUNEKIT_TUNING"); v && *v) base.tuning = parse_tuning_mode(v);
  if (const char* v = std::getenv("TUNEKIT_RETRY_SECONDS"); v && *v) {
    base.retry_seconds = parse_retry_seconds(v);
  }
  if (const char* v = std::getenv("TUNEKIT_RETRY_MAX_SECONDS"); v && *v) {
    base.retry_max_seconds = parse_retry_seconds(v, "TUNEKIT_RETRY_MAX_SECONDS");
  }
  if (const char* v = std::getenv("TUNEKIT_PROGRESS"); v && *v) {
    base.progress = parse_progress_mode(v);
  }
  // The strategy and the start points alone: the level still sets the budget.
  if (const char* v = std::getenv("TUNEKIT_SEARCH"); v && *v) {
    base.search_strategy = parse_search_strategy(v);
  }
  if (const char* v = std::getenv("TUNEKIT_START_POINTS"); v && *v) {
    base.start_points = parse_start_points(v);
  }
  return base;
}

Settings Settings::from_environment() { return from_environment(Settings{}); }

std::size_t Settings::build_thread_count() const {
  if (build_threads) return *build_threads;
  // More threads only build further ahead: on NVIDIA, 8 threads built 1.8x as fast as one.
  return std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 4);
}

std::filesystem::path Settings::resolved_cache_dir() const {
  if (!cache_dir.empty()) return cache_dir;
  // Relative values are ignored, as the XDG Base Directory spec says: a cache that moved with
  // the working directory would be found, or planted, wherever the program happens to run.
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg == '/') {
    return std::filesystem::path(xdg) / "tunekit";
  }
  if (const char* home = std::getenv("HOME"); home && *home == '/') {
    return std::filesystem::path(home) / ".cache" / "tunekit";
  }
  // No fallback to a shared temporary directory: another user could prepare it (docs/cache.md).
  throw AutotuneError(ErrorKind::settings,
                      "no cache directory: none of TUNEKIT_CACHE_DIR, XDG_CACHE_HOME and HOME is "
                      "set to an absolute path; set one of them (or turn the persistent cache off: "
                      "TUNEKIT_CACHE=off)");
}

namespace {
std::mutex global_mutex;
std::optional<Settings> global;
}  // namespace

Settings global_settings() {
  std::lock_guard lock(global_mutex);
  if (!global) global = Settings::from_environment();
  return *global;
}

namespace {

// The rule `field` breaks: "<field>=<value> is not valid: <rule>".
[[noreturn]] void invalid_setting(std::string_view field, double value, std::string_view rule) {
  char text[64];
  std::snprintf(text, sizeof text, "%g", value);
  throw AutotuneError(ErrorKind::settings, "tunekit::Settings: " + std::string(field) + "=" + text +
                                               " is not valid: " + std::string(rule));
}

}  // namespace

void Settings::validate() const {
  // NaN fails every comparison, so each rule is written as what must hold.
  const BenchmarkSettings b = benchmark_settings();
  const auto check = [](bool holds, std::string_view field, double value, std::string_view rule) {
    if (!holds) invalid_setting(field, value, rule);
  };
  check(b.min_samples >= 1, "benchmark.min_samples", static_cast<double>(b.min_samples),
        "at least 1 sample");
  check(b.max_samples >= b.min_samples, "benchmark.max_samples", static_cast<double>(b.max_samples),
        "at least min_samples");
  check(b.racing_factor >= 1, "benchmark.racing_factor", b.racing_factor,
        "at least 1 (a candidate is dropped once its median is this many times the leader's; "
        "infinity never drops)");
  check(b.target_spread >= 0 && std::isfinite(b.target_spread), "benchmark.target_spread",
        b.target_spread, "a finite fraction of at least 0");
  check(b.confirm_sample_seconds >= 0 && std::isfinite(b.confirm_sample_seconds),
        "benchmark.confirm_sample_seconds", b.confirm_sample_seconds,
        "finite seconds of at least 0");
  check(b.min_sample_seconds >= 0 && std::isfinite(b.min_sample_seconds),
        "benchmark.min_sample_seconds", b.min_sample_seconds, "finite seconds of at least 0");
  check(b.max_candidate_seconds > 0, "benchmark.max_candidate_seconds", b.max_candidate_seconds,
        "more than 0 seconds");
  check(b.confirm_within >= 0, "benchmark.confirm_within", b.confirm_within,
        "at least 0 (the race takes those within this many times the best's time; infinity: "
        "every contender)");
  const SearchSettings search = search_settings();
  check(search.fraction >= 0 && search.fraction <= 1, "search.fraction", search.fraction,
        "a fraction of the space in [0, 1] (min_evaluations is the floor)");
  check(search.max_seconds > 0, "search.max_seconds", search.max_seconds, "more than 0 seconds");
  check(search.margin >= 0 && std::isfinite(search.margin), "search.margin", search.margin,
        "a finite fraction of at least 0");
  check(search.abandon_factor >= 1, "search.abandon_factor", search.abandon_factor, "at least 1");
  check(retry_seconds >= 0 && std::isfinite(retry_seconds), "retry_seconds", retry_seconds,
        "finite seconds of at least 0");
  check(retry_max_seconds >= 0 && std::isfinite(retry_max_seconds), "retry_max_seconds",
        retry_max_seconds, "finite seconds of at least 0");
}

void set_global_settings(Settings settings) {
  settings.validate();
  std::lock_guard lock(global_mutex);
  global = std::move(settings);
}

}  // namespace tunekit
