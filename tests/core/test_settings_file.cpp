// The settings files (tunekit.toml): a strict reader of `key = value` lines, applied under the
// environment, and careful with files it did not expect.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <tunekit/tunekit.hpp>
#include <vector>

#include "../support.hpp"
#include "../unprivileged.hpp"

namespace tunekit::test {

namespace {

namespace fs = std::filesystem;

struct ScopedEnv {
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  const char* name_;
  std::optional<std::string> old_;
};

// A fresh directory that the test works in (its current directory), removed at the end.
struct WorkDir {
  fs::path path =
      fs::temp_directory_path() / ("tunekit_settings_file_" + std::to_string(::getpid()));
  fs::path was = fs::current_path();
  WorkDir() {
    fs::remove_all(path);
    fs::create_directories(path / "config" / "tunekit");
    fs::current_path(path);
  }
  ~WorkDir() {
    fs::current_path(was);
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  static void write(const fs::path& file, const std::string& text) {
    std::ofstream(file, std::ios::binary) << text;
  }
};

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) text += line + "\n";
  return text;
}

}  // namespace

TEST_CASE("a settings file sets the settings that have variables, with TOML's values",
          "[settings][settings-file]") {
  std::vector<std::string> problems;
  const Settings s = apply_settings_text(Settings{},
                                         "# tunekit settings\n"
                                         "level = \"extensive\"   # harder\n"
                                         "\n"
                                         "  log='debug'\n"
                                         "search = \"random\"\n"
                                         "cache = false\n"
                                         "cache_dir = \"/var/cache/my app\"\n"
                                         "store = \"redis://cache.local:6380/2\"\n"
                                         "device = \"NVIDIA\"\n"
                                         "build_threads = 3\n"
                                         "tuning = \"background\"\n"
                                         "retry_seconds = 2\n"
                                         "retry_max_seconds = \"0.5\"\n"
                                         "progress = \"off\"\r\n",
                                         "tunekit.toml", problems);
  CHECK(problems.empty());
  CHECK(s.level == Level::extensive);
  CHECK(s.log == LogLevel::debug);
  CHECK(s.search_settings().strategy == SearchStrategy::random);
  CHECK_FALSE(s.persistent_cache);
  CHECK(s.cache_dir == "/var/cache/my app");
  CHECK(s.store == "redis://cache.local:6380/2");
  CHECK(s.device == "NVIDIA");
  CHECK_THAT(s.device_source, Catch::Contains("tunekit.toml") && Catch::Contains("device"));
  CHECK(s.build_threads == 3u);
  CHECK(s.tuning == TuningMode::background);
  CHECK(s.retry_seconds == 2);
  CHECK(s.retry_max_seconds == 0.5);
  CHECK(s.progress == ProgressMode::off);
}

TEST_CASE("a search strategy or start points setting leaves the budget to the level",
          "[settings][settings-file]") {
  const SearchSettings minimal = SearchSettings::for_level(Level::minimal);
  const auto is_minimal_budget = [&](const SearchSettings& got) {
    return got.patience == minimal.patience && got.max_seconds == minimal.max_seconds &&
           got.fraction == minimal.fraction && got.good_enough == minimal.good_enough;
  };
  // A file's `search` before its `level`: the level still decides the budget.
  std::vector<std::string> problems;
  Settings s = apply_settings_text(Settings{},
                                   "search = \"random\"\nstart_points = \"off\"\n"
                                   "level = \"minimal\"\n",
                                   "tunekit.toml", problems);
  CHECK(problems.empty());
  CHECK(s.search_settings().strategy == SearchStrategy::random);
  CHECK_FALSE(s.search_settings().start_points);
  CHECK(is_minimal_budget(s.search_settings()));
  // A variable set to its default value changes nothing, whatever the level is set after it.
  {
    ScopedEnv search("TUNEKIT_SEARCH", "model");
    ScopedEnv starts("TUNEKIT_START_POINTS", "on");
    ScopedEnv level("TUNEKIT_LEVEL", nullptr);
    Settings from_env = Settings::from_environment(Settings{});
    from_env.level = Level::minimal;  // as `tunekit tune --level minimal` sets it afterwards
    CHECK(is_minimal_budget(from_env.search_settings()));
    CHECK(from_env.search_settings().strategy == SearchStrategy::model);
    CHECK(from_env.search_settings().start_points);
  }
  // A whole SearchSettings of the program's own is kept, with the override on top.
  Settings own;
  own.search = SearchSettings::for_level(Level::extensive);
  own.search_strategy = SearchStrategy::annealing;
  CHECK(own.search_settings().patience == SearchSettings::for_level(Level::extensive).patience);
  CHECK(own.search_settings().strategy == SearchStrategy::annealing);
}

TEST_CASE("what a settings file cannot set is named in a problem and skipped",
          "[settings][settings-file]") {
  std::vector<std::string> problems;
  Settings base;
  base.level = Level::minimal;
  const Settings s = apply_settings_text(base,
                                         "levle = \"full\"\n"
                                         "level = \"fast\"\n"
                                         "log = debug\n"
                                         "[tunekit]\n"
                                         "cache_dir = \"relative/dir\"\n"
                                         "store = \"redis://user:secret@host/0\"\n"
                                         "build_threads = 9999\n"
                                         "device = \"a\\tb\"\n"
                                         "device = \"unclosed\n"
                                         "tuning = \"background\" trailing\n"
                                         "progress = \"on\"\n"
                                         "progress = \"off\"\n",
                                         "/home/me/tunekit.toml", problems);
  const std::string text = joined(problems);
  INFO(text);
  CHECK(problems.size() == 11);
  CHECK_THAT(text, Catch::Contains("/home/me/tunekit.toml:1: 'levle' is not a setting (known: "
                                   "level, log,"));
  CHECK_THAT(text, Catch::Contains("/home/me/tunekit.toml:2: level='fast' is not valid; "
                                   "accepted values: minimal, balanced, extensive, full"));
  CHECK_THAT(text, Catch::Contains(":3: log: the value 'debug' is not a \"quoted string\""));
  CHECK_THAT(text, Catch::Contains(":4: '[tunekit]' is not a `key = value` line"));
  CHECK_THAT(text,
             Catch::Contains(
                 ":5: cache_dir='relative/dir' is not valid; accepted values: an absolute path"));
  CHECK_THAT(text, Catch::Contains(":6: store"));
  CHECK_THAT(text, Catch::Contains(":7: build_threads='9999' is not valid"));
  CHECK_THAT(text, Catch::Contains(":8: device: an escape other than"));
  CHECK_THAT(text, Catch::Contains(":9: device: a string that does not end on its line"));
  CHECK_THAT(text, Catch::Contains(":10: tuning: text after the value: 'trailing'"));
  CHECK_THAT(text, Catch::Contains(":12: progress is set twice; the first value is kept"));
  // Nothing of the bad lines was applied; the good one was.
  CHECK(s.level == Level::minimal);
  CHECK(s.log == LogLevel::quiet);
  CHECK(s.cache_dir.empty());
  CHECK(s.store.empty());
  CHECK(s.tuning == TuningMode::blocking);
  CHECK(s.progress == ProgressMode::on);

  problems.clear();
  const std::string huge(64 * 1024 + 1, '#');
  (void)apply_settings_text(Settings{}, huge, "big.toml", problems);
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems[0], Catch::Contains("big.toml: larger than 64 KiB; not read"));
}

TEST_CASE("settings files: the user's, then the current directory's, then the environment wins",
          "[settings][settings-file]") {
  WorkDir dir;
  ScopedEnv xdg("XDG_CONFIG_HOME", (dir.path / "config").c_str());
  ScopedEnv level("TUNEKIT_LEVEL", nullptr);
  ScopedEnv log("TUNEKIT_LOG", "info");
  ScopedEnv search("TUNEKIT_SEARCH", nullptr);
  ScopedEnv device("TUNEKIT_DEVICE", nullptr);
  CHECK(settings_files() ==
        std::vector<fs::path>{dir.path / "config" / "tunekit" / "tunekit.toml", "tunekit.toml"});
  WorkDir::write(dir.path / "config" / "tunekit" / "tunekit.toml",
                 "level = \"full\"\nsearch = \"random\"\nlog = \"quiet\"\n");
  WorkDir::write(dir.path / "tunekit.toml", "level = \"extensive\"\ndevice = \"pocl\"\n");
  const Settings s = Settings::from_environment();
  CHECK(s.level == Level::extensive);                             // the directory's over the user's
  CHECK(s.search_settings().strategy == SearchStrategy::random);  // the user's
  CHECK(s.device == "pocl");                                      // the directory's
  CHECK(s.log == LogLevel::info);                                 // the environment's

  // Without XDG_CONFIG_HOME: ~/.config/tunekit/tunekit.toml.
  ScopedEnv no_xdg("XDG_CONFIG_HOME", nullptr);
  ScopedEnv home("HOME", "/home/someone");
  CHECK(settings_files().front() == fs::path("/home/someone/.config/tunekit/tunekit.toml"));
}

TEST_CASE("a settings file of many bad lines says eight, then how many more",
          "[settings][settings-file]") {
  WorkDir dir;
  ScopedEnv xdg("XDG_CONFIG_HOME", (dir.path / "config").c_str());
  std::string text;
  for (int i = 0; i < 20; ++i) text += "not a setting " + std::to_string(i) + "\n";
  WorkDir::write(dir.path / "tunekit.toml", text);
  CapturedWarnings warnings;
  (void)Settings::from_environment();
  INFO(warnings.text());
  CHECK(warnings.count("tunekit: settings file") == 9);
  CHECK(warnings.count("12 more problems not shown") == 1);
}

TEST_CASE("a settings file that others may write is not read", "[settings][settings-file]") {
  WorkDir dir;
  const fs::path file = dir.path / "tunekit.toml";
  WorkDir::write(file, "cache_dir = \"/tmp/planted\"\n");
  ::chmod(file.c_str(), 0666);
  std::vector<std::string> problems;
  CHECK_FALSE(read_settings_file(file, problems));
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems[0], Catch::Contains("writable by others than its owner; not read"));

  problems.clear();
  ::chmod(file.c_str(), 0644);
  CHECK(read_settings_file(file, problems) == "cache_dir = \"/tmp/planted\"\n");
  CHECK(problems.empty());
  CHECK_FALSE(read_settings_file(dir.path / "absent.toml", problems));
  CHECK(problems.empty());
  CHECK_FALSE(read_settings_file(dir.path, problems));  // a directory
  CHECK(problems.size() == 1);
}

TEST_CASE("a settings file behind a link is read only where this user made the link",
          "[settings][settings-file]") {
  WorkDir dir;
  const fs::path real = dir.path / "dotfiles.toml";
  WorkDir::write(real, "level = \"minimal\"\n");
  ::chmod(real.c_str(), 0644);
  const fs::path link = dir.path / "tunekit.toml";
  fs::create_symlink(real, link);
  std::vector<std::string> problems;
  CHECK(read_settings_file(link, problems) == "level = \"minimal\"\n");  // one's own link
  CHECK(problems.empty());
  if (::geteuid() != 0) {
    WARN("not root: a link of another user cannot be made here; that half is skipped");
    return;
  }
  const auto other = unprivileged_user();
  REQUIRE(::lchown(link.c_str(), other.uid, other.gid) == 0);  // planted by `nobody`
  CHECK_FALSE(read_settings_file(link, problems));
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems[0], Catch::Contains("a symbolic link another user made; not read"));
}

}  // namespace tunekit::test
