// Reliability against bad input (issue #8): malformed TUNEKIT_* variables, cache directories
// that cannot be used, key generators that throw from many threads, a set whose only space
// allows nothing. Each is a clear error or a documented fallback, never a crash.
// (Cache files that are directories, unwritable directories given in code, corrupt files: see
// test_cache_corrupt.cpp; a missing OpenCL platform: tests/cl/test_faults.cpp.)
#include <atomic>
#include <catch2/catch.hpp>
#include <optional>
#include <stdexcept>
#include <thread>

#include "test_cache_support.hpp"

using namespace tunekit;
using namespace tunekit::test;

namespace {

// Sets (or unsets) an environment variable for a scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::optional<std::string>& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value->c_str(), 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

constexpr const char* all_variables[] = {"TUNEKIT_LEVEL",        "TUNEKIT_LOG",    "TUNEKIT_CACHE",
                                         "TUNEKIT_CACHE_DIR",    "TUNEKIT_DEVICE", "TUNEKIT_SEARCH",
                                         "TUNEKIT_BUILD_THREADS"};

// Unsets every TUNEKIT_* variable for a scope, so that a test sees only what it sets.
struct CleanEnvironment {
  std::vector<std::unique_ptr<ScopedEnv>> saved;
  CleanEnvironment() {
    for (const char* name : all_variables)
      saved.push_back(std::make_unique<ScopedEnv>(name, std::nullopt));
  }
};

}  // namespace

TEST_CASE("malformed TUNEKIT_* values are errors naming the variable and the accepted values",
          "[reliability][input][settings]") {
  CleanEnvironment clean;
  struct Bad {
    const char* variable;
    std::string value;
    const char* accepted;  // part of the message listing what is accepted
  };
  const std::vector<Bad> bad{
      {"TUNEKIT_LEVEL", "fast", "minimal, balanced, extensive, full"},
      {"TUNEKIT_LEVEL", "BALANCED", "minimal, balanced, extensive, full"},
      {"TUNEKIT_LEVEL", " balanced", "minimal, balanced, extensive, full"},
      {"TUNEKIT_LEVEL", "balanced ", "minimal, balanced, extensive, full"},
      {"TUNEKIT_LEVEL", "balanced\n", "minimal, balanced, extensive, full"},
      {"TUNEKIT_LEVEL", "2", "minimal, balanced, extensive, full"},
      {"TUNEKIT_LEVEL", "minimal,full", "minimal, balanced, extensive, full"},
      {"TUNEKIT_LEVEL", std::string(100000, 'x'), "minimal, balanced, extensive, full"},
      {"TUNEKIT_LEVEL", "\xff\xfe\x01\x7f", "minimal, balanced, extensive, full"},
      {"TUNEKIT_LOG", "verbose", "quiet, info, debug"},
      {"TUNEKIT_LOG", "INFO", "quiet, info, debug"},
      {"TUNEKIT_LOG", "2", "quiet, info, debug"},
      {"TUNEKIT_LOG", "debug=1", "quiet, info, debug"},
      {"TUNEKIT_CACHE", "maybe", "on, off"},
      {"TUNEKIT_CACHE", "ON", "on, off"},
      {"TUNEKIT_CACHE", "yes", "on, off"},
      {"TUNEKIT_CACHE", "2", "on, off"},
      {"TUNEKIT_CACHE", "-1", "on, off"},
      {"TUNEKIT_CACHE", "of", "on, off"},
      {"TUNEKIT_SEARCH", "genetic", "exhaustive, random, annealing"},
      {"TUNEKIT_SEARCH", "Random", "exhaustive, random, annealing"},
      {"TUNEKIT_SEARCH", "annealing ", "exhaustive, random, annealing"},
      {"TUNEKIT_CACHE_DIR", "", "TUNEKIT_CACHE_DIR"},
      {"TUNEKIT_BUILD_THREADS", "-1", "0 (build on the tuning thread) to 256"},
      {"TUNEKIT_BUILD_THREADS", "1e3", "0 (build on the tuning thread) to 256"},
      {"TUNEKIT_BUILD_THREADS", "99999999999999999999999", "0 (build on the tuning thread) to 256"},
  };
  int rejected = 0;
  for (const auto& b : bad) {
    INFO(b.variable << "='" << b.value.substr(0, 40) << "'");
    ScopedEnv env(b.variable, b.value);
    try {
      (void)Settings::from_environment();
      FAIL("accepted");
    } catch (const AutotuneError& e) {
      CHECK(e.kind() == ErrorKind::settings);
      CHECK_THAT(e.message(), Catch::Contains(b.variable) && Catch::Contains(b.accepted));
      ++rejected;
    }
  }
  CHECK(rejected == static_cast<int>(bad.size()));  // 26 malformed values, 26 clear errors
}

TEST_CASE(
    "an empty TUNEKIT_* value (but TUNEKIT_CACHE_DIR) counts as unset: the code's settings stay",
    "[reliability][input][settings]") {
  CleanEnvironment clean;
  Settings base;
  base.level = Level::extensive;
  base.log = LogLevel::info;
  base.persistent_cache = false;
  base.device = "from code";
  for (const char* name :
       {"TUNEKIT_LEVEL", "TUNEKIT_LOG", "TUNEKIT_CACHE", "TUNEKIT_DEVICE", "TUNEKIT_SEARCH"}) {
    INFO(name);
    ScopedEnv env(name, std::string());
    const Settings s = Settings::from_environment(base);
    CHECK(s.level == base.level);
    CHECK(s.log == base.log);
    CHECK(s.persistent_cache == base.persistent_cache);
    CHECK(s.device == base.device);
    CHECK_FALSE(s.search);
    CHECK_FALSE(s.search_strategy);
  }
}

TEST_CASE("TUNEKIT_CACHE_DIR naming a file: one warning, and tuning goes on without persistence",
          "[reliability][input][cache]") {
  CleanEnvironment clean;
  TempDir dir;
  write_text(dir / "plain file", "not a directory");
  for (const fs::path& unusable : {dir / "plain file", dir / "plain file" / "below"}) {
    INFO(unusable);
    ScopedEnv env("TUNEKIT_CACHE_DIR", unusable.string());
    const Settings s = Settings::from_environment(test_settings());  // accepted: it is a path
    CHECK(s.cache_dir == unusable);
    Settings persistent = s;
    persistent.persistent_cache = true;
    CapturedWarnings warnings;
    CHECK(make_result_store(persistent) == nullptr);
    CHECK(run_program(unusable, {1, 2}) == 2);
    CHECK(run_program(unusable, {1, 2}) == 2);  // nothing kept, everything still works
    INFO(warnings.text());
    CHECK(warnings.count("running without the persistent cache") == 1);
  }
  CHECK(read_text(dir / "plain file") == "not a directory");  // left alone
}

TEST_CASE("a cache directory with spaces, newlines and non-ASCII in its path works",
          "[reliability][input][cache]") {
  TempDir dir;
  const fs::path odd = dir / "with space\nnew line\t\xc3\xbc-\xe2\x82\xac" / "caf\xc3\xa9 cache";
  CHECK(run_program(odd, {1, 2, 4}) == 3);
  CHECK(run_program(odd, {1, 2, 4}) == 0);  // persisted and found again
  CHECK(FileStore(odd).entries().size() == 3);
}

TEST_CASE("a key generator throwing from 8 threads reaches each caller, the tuner stays sound",
          "[reliability][input][concurrency]") {
  constexpr int threads = 8, calls = 2000, keys = 16;
  Settings settings = test_settings();
  settings.benchmark->max_samples = 3;
  // No confirmation rounds: whether the two candidates are close enough to be re-measured (and
  // so how many inputs a tuning generates) would depend on how they happened to measure.
  settings.benchmark->confirm_rounds = 0;
  LocalTuner<SizeKey> tuner("throwing key generator", settings);
  HostClient host;
  std::vector<std::atomic<int>> generated(64);  // by key exponent: candidates x tunings
  auto key_of = [](const std::int64_t& n) {
    if (n < 0) throw std::invalid_argument("negative size " + std::to_string(n));
    return SizeKey{static_cast<std::uint64_t>(n)};
  };
  auto inputs = [&](const SizeKey& key, const std::int64_t&) {
    ++generated[static_cast<std::size_t>(std::countr_zero(key.n.value()))];
    return std::tuple<std::int64_t>(static_cast<std::int64_t>(key.n.value()));
  };
  std::atomic<int> thrown{0}, wrong{0}, other{0};
  const auto& set = tuner.init([&] {
    return TunableSet{key_of, inputs}
        .with(Tunable{"double", [](std::int64_t& n) { return 2 * n; }})
        .with(Tunable{"add", [](std::int64_t& n) { return n + n; }});
  });
  // How many input-generator runs one tuning makes (one per tuning, or one per candidate).
  std::int64_t calibration = std::int64_t{1} << 40;
  REQUIRE(tuner.execute(host.id(), host, set, calibration) == 2 * calibration);
  const int per_tuning = generated[40];
  REQUIRE(per_tuning >= 1);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int i = 0; i < calls; ++i) {
        const std::int64_t n = std::int64_t{1} << ((i + t) % keys);
        std::int64_t x = (i % 3 == 0) ? -n : n;  // every third call is bad input
        try {
          if (tuner.execute(host.id(), host, set, x) != 2 * x) ++wrong;
        } catch (const std::invalid_argument&) {
          ++thrown;
        } catch (...) {
          ++other;
        }
      }
    });
  }
  for (auto& thread : pool) thread.join();
  int expected_throws = 0;
  for (int i = 0; i < calls; ++i) expected_throws += i % 3 == 0;
  CHECK(thrown == threads * expected_throws);
  CHECK(wrong == 0);
  CHECK(other == 0);
  for (int k = 0; k < keys; ++k) {
    INFO("key 2^" << k);
    CHECK(generated[static_cast<std::size_t>(k)] == per_tuning);  // tuned once
  }
}

TEST_CASE("a set whose only space allows no configuration is a clear error, not a crash",
          "[reliability][input]") {
  LocalTuner<SizeKey> tuner("nothing allowed", test_settings());
  VirtualClient client;
  auto key_of = [](const int& n) { return SizeKey{static_cast<std::uint64_t>(n)}; };
  auto inputs = [](const SizeKey& key, const int&) {
    return std::tuple<int>(static_cast<int>(key.n.value()));
  };
  const auto& set = tuner.init([&] {
    return TunableSet{key_of, inputs}.with(
        space("impossible")
            .parameter("T", {3, 5, 7})
            .where("even", [](const Config& c) { return c["T"] % 2 == 0; }),
        [](const Config&) { return [](VirtualClient& c, int& n) { return c.spend(1e-3), n; }; });
  });
  CHECK(set.size() == 0);
  for (int attempt = 0; attempt < 2; ++attempt) {  // and again: nothing was left half-done
    try {
      (void)tuner.execute(client.id(), client, set, 4);
      FAIL("expected an AutotuneError");
    } catch (const AutotuneError& e) {
      CHECK(e.kind() == ErrorKind::no_valid_candidate);
      CHECK_THAT(e.message(), Catch::Contains("empty") && Catch::Contains("nothing allowed"));
    }
  }
}
