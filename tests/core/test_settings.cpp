#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <tunekit/tunekit.hpp>

#include "../support.hpp"

namespace {
// Sets an environment variable for the scope of a test.
struct ScopedEnv {
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  const char* name_;
  std::optional<std::string> old_;
};

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const tunekit::AutotuneError& e) {
    CHECK(e.kind() == tunekit::ErrorKind::settings);
    return e.what();
  }
  FAIL("no AutotuneError thrown");
  return {};
}
}  // namespace

TEST_CASE("environment variables override the settings given in code", "[settings]") {
  ScopedEnv level("TUNEKIT_LEVEL", "extensive");
  ScopedEnv log("TUNEKIT_LOG", "debug");
  ScopedEnv cache("TUNEKIT_CACHE", "off");
  ScopedEnv dir("TUNEKIT_CACHE_DIR", "/tmp/somewhere");
  ScopedEnv device("TUNEKIT_DEVICE", "pocl");
  const auto s = tunekit::Settings::from_environment();
  CHECK(s.level == tunekit::Level::extensive);
  CHECK(s.log == tunekit::LogLevel::debug);
  CHECK_FALSE(s.persistent_cache);
  CHECK(s.resolved_cache_dir() == "/tmp/somewhere");
  CHECK(s.device == "pocl");
}

TEST_CASE(
    "TUNEKIT_RETRY_SECONDS and TUNEKIT_RETRY_MAX_SECONDS set the back-off of a failure of "
    "the moment, within a day",
    "[settings]") {
  {
    ScopedEnv first("TUNEKIT_RETRY_SECONDS", "0.25");
    ScopedEnv cap("TUNEKIT_RETRY_MAX_SECONDS", "30");
    const auto s = tunekit::Settings::from_environment();
    CHECK(s.retry_seconds == 0.25);
    CHECK(s.retry_max_seconds == 30);
  }
  CHECK(tunekit::parse_retry_seconds("0") == 0);
  CHECK(tunekit::parse_retry_seconds("86400") == 86400);
  for (const char* bad : {"", "-1", "86401", "1e300", "inf", "nan", "1s", " 1", "0x10"}) {
    INFO(bad);
    CHECK_THROWS_WITH(
        tunekit::parse_retry_seconds(bad),
        Catch::Contains("TUNEKIT_RETRY_SECONDS='") && Catch::Contains("seconds from 0 to 86400"));
  }
  ScopedEnv cap("TUNEKIT_RETRY_MAX_SECONDS", "forever");
  CHECK_THAT(message_of([] { (void)tunekit::Settings::from_environment(); }),
             Catch::Contains("TUNEKIT_RETRY_MAX_SECONDS='forever'"));
}

TEST_CASE("TUNEKIT_TUNING chooses blocking or background tuning", "[settings]") {
  CHECK(tunekit::Settings{}.tuning == tunekit::TuningMode::blocking);
  {
    ScopedEnv tuning("TUNEKIT_TUNING", "background");
    CHECK(tunekit::Settings::from_environment().tuning == tunekit::TuningMode::background);
  }
  {
    ScopedEnv tuning("TUNEKIT_TUNING", "blocking");
    tunekit::Settings base;
    base.tuning = tunekit::TuningMode::background;
    CHECK(tunekit::Settings::from_environment(base).tuning == tunekit::TuningMode::blocking);
  }
  ScopedEnv tuning("TUNEKIT_TUNING", "async");
  const auto text = message_of([] { tunekit::Settings::from_environment(); });
  CHECK_THAT(text,
             Catch::Contains("TUNEKIT_TUNING='async'") && Catch::Contains("blocking, background"));
}

TEST_CASE("a bad TUNEKIT_LEVEL names the variable and the accepted values", "[settings]") {
  ScopedEnv level("TUNEKIT_LEVEL", "fast");
  const auto text = message_of([] { tunekit::Settings::from_environment(); });
  CHECK_THAT(text, Catch::Contains("TUNEKIT_LEVEL='fast'") &&
                       Catch::Contains("minimal, balanced, extensive, full"));
}

TEST_CASE("a bad TUNEKIT_LOG or TUNEKIT_CACHE is a clear error", "[settings]") {
  {
    ScopedEnv log("TUNEKIT_LOG", "verbose");
    CHECK_THAT(message_of([] { tunekit::Settings::from_environment(); }),
               Catch::Contains("TUNEKIT_LOG") && Catch::Contains("quiet, info, debug"));
  }
  {
    ScopedEnv cache("TUNEKIT_CACHE", "maybe");
    CHECK_THAT(message_of([] { tunekit::Settings::from_environment(); }),
               Catch::Contains("TUNEKIT_CACHE='maybe'"));
  }
  {
    ScopedEnv dir("TUNEKIT_CACHE_DIR", "");
    CHECK_THAT(message_of([] { tunekit::Settings::from_environment(); }),
               Catch::Contains("TUNEKIT_CACHE_DIR"));
  }
  {
    // A relative directory would be another cache in every directory the program starts in.
    ScopedEnv dir("TUNEKIT_CACHE_DIR", "relcache");
    CHECK_THAT(message_of([] { tunekit::Settings::from_environment(); }),
               Catch::Contains("TUNEKIT_CACHE_DIR='relcache' is not valid") &&
                   Catch::Contains("an absolute path"));
  }
  {
    ScopedEnv dir("TUNEKIT_CACHE_DIR", "/abs/cache");
    CHECK(tunekit::Settings::from_environment().cache_dir == "/abs/cache");
  }
}

TEST_CASE("the cache directory defaults to XDG_CACHE_HOME, then HOME", "[settings]") {
  ScopedEnv xdg("XDG_CACHE_HOME", "/x/cache");
  CHECK(tunekit::Settings{}.resolved_cache_dir() == "/x/cache/tunekit");
  ::unsetenv("XDG_CACHE_HOME");
  ScopedEnv home("HOME", "/home/u");
  CHECK(tunekit::Settings{}.resolved_cache_dir() == "/home/u/.cache/tunekit");
}

TEST_CASE("a relative XDG_CACHE_HOME or HOME is ignored, as the XDG spec says", "[settings]") {
  ScopedEnv xdg("XDG_CACHE_HOME", "relative/cache");
  ScopedEnv home("HOME", "/home/u");
  CHECK(tunekit::Settings{}.resolved_cache_dir() == "/home/u/.cache/tunekit");
  ScopedEnv relative_home("HOME", "home/u");
  const auto message = message_of([] { (void)tunekit::Settings{}.resolved_cache_dir(); });
  CHECK_THAT(message, Catch::Contains("absolute path"));
}

TEST_CASE("without XDG_CACHE_HOME and HOME there is no cache directory, not a shared /tmp one",
          "[settings]") {
  ScopedEnv xdg("XDG_CACHE_HOME", "");
  ScopedEnv home("HOME", "");
  const auto message = message_of([] { (void)tunekit::Settings{}.resolved_cache_dir(); });
  CHECK_THAT(message, Catch::Contains("TUNEKIT_CACHE_DIR") && Catch::Contains("XDG_CACHE_HOME") &&
                          Catch::Contains("HOME"));
  tunekit::Settings settings;
  settings.persistent_cache = true;
  CHECK(tunekit::make_result_store(settings) == nullptr);  // warned, no persistence
}

TEST_CASE("levels raise sampling effort and relax racing as they go up", "[settings]") {
  using tunekit::BenchmarkSettings;
  using tunekit::Level;
  const auto minimal = BenchmarkSettings::for_level(Level::minimal);
  const auto balanced = BenchmarkSettings::for_level(Level::balanced);
  const auto full = BenchmarkSettings::for_level(Level::full);
  CHECK(minimal.max_samples < balanced.max_samples);
  CHECK(balanced.max_samples < full.max_samples);
  CHECK(minimal.racing_factor < balanced.racing_factor);
  CHECK(std::isinf(full.racing_factor));
}

TEST_CASE("settings that cannot work are refused with the field and the rule", "[settings]") {
  using namespace tunekit;
  const auto refused = [](const Settings& s) {
    try {
      s.validate();
    } catch (const AutotuneError& e) {
      CHECK(e.kind() == ErrorKind::settings);
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  Settings s;
  for (Level level : {Level::minimal, Level::balanced, Level::extensive, Level::full}) {
    s.level = level;
    CHECK(refused(s) == "accepted");
  }
  BenchmarkSettings b;
  b.racing_factor = 0.5;
  s.benchmark = b;
  CHECK_THAT(refused(s), Catch::Contains("benchmark.racing_factor=0.5 is not valid: at least 1"));
  b.racing_factor = std::nan("");
  s.benchmark = b;
  CHECK_THAT(refused(s), Catch::Contains("benchmark.racing_factor=nan"));
  b = {};
  b.confirm_within = std::nan("");  // accepted before: no contender is within NaN
  s.benchmark = b;
  CHECK_THAT(refused(s), Catch::Contains("benchmark.confirm_within=nan is not valid: at least 0"));
  b.confirm_within = 0;  // the race then takes the best alone: no race
  s.benchmark = b;
  CHECK(refused(s) == "accepted");
  b = {};
  b.min_samples = 10;
  b.max_samples = 5;
  s.benchmark = b;
  CHECK_THAT(refused(s), Catch::Contains("benchmark.max_samples=5 is not valid: at least min"));
  b = {};
  b.min_samples = 0;
  s.benchmark = b;
  CHECK_THAT(refused(s), Catch::Contains("benchmark.min_samples=0"));
  s.benchmark.reset();
  SearchSettings search;
  search.fraction = 1.5;
  s.search = search;
  CHECK_THAT(refused(s), Catch::Contains("search.fraction=1.5"));
  // A LocalTuner refuses them before tuning anything, as set_global_settings does.
  s.search.reset();
  b = {};
  b.racing_factor = 0.5;
  s.benchmark = b;
  s.persistent_cache = false;
  LocalTuner<test::SizeKey> tuner("bad_settings", s);
  HostClient host;
  const auto& set = tuner.init([] {
    return TunableSet{[](const int& n) { return test::SizeKey{static_cast<std::uint64_t>(n)}; },
                      CloneInputs{}}
        .with(Tunable{"a", [](int& n) { return n; }})
        .with(Tunable{"b", [](int& n) { return n; }});
  });
  CHECK_THROWS_WITH(tuner.execute(host.id(), host, set, 4), Catch::Contains("racing_factor"));
  CHECK_THROWS_WITH(set_global_settings(s), Catch::Contains("racing_factor"));
}
