// libFuzzer target for the settings parsers: parse_level, parse_log_level, parse_cache_switch,
// parse_search_strategy on any text, the settings file reader (apply_settings_text) on the whole
// input, and Settings::from_environment with any set of TUNEKIT_*
// variables holding any values. Each call returns a value that agrees with its input, or throws
// AutotuneError(settings) naming the variable; nothing else (no other exception, no crash, no
// sanitizer report).
//
// Input: one byte saying which of the six variables are set (bit i: variable i), then the six
// values separated by NUL bytes (environment values cannot hold a NUL).
// Build and run: fuzz/run.sh settings [seconds]   (or cmake -DTUNEKIT_FUZZ=ON with clang++)
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <tunekit/error.hpp>
#include <tunekit/settings.hpp>
#include <vector>

namespace {

constexpr const char* names[] = {"TUNEKIT_LEVEL",     "TUNEKIT_LOG",    "TUNEKIT_CACHE",
                                 "TUNEKIT_CACHE_DIR", "TUNEKIT_DEVICE", "TUNEKIT_SEARCH"};
constexpr std::size_t variables = sizeof(names) / sizeof(names[0]);
constexpr std::size_t max_value = 4096;

// putenv() keeps our pointer instead of copying (setenv would keep every old value: millions of
// runs would grow the heap without bound), so each variable owns a fixed buffer.
char buffers[variables][32 + max_value + 1];

void set_variable(std::size_t i, std::string_view value) {
  char* b = buffers[i];
  const std::size_t name = std::strlen(names[i]);
  std::memcpy(b, names[i], name);
  b[name] = '=';
  if (!value.empty()) std::memcpy(b + name + 1, value.data(), value.size());
  b[name + 1 + value.size()] = '\0';
  if (::putenv(b) != 0) std::abort();
}

void require(bool ok) {
  if (!ok) std::abort();
}

// Calls `parse(text)`: it must return (then `agrees` holds) or throw AutotuneError(settings)
// whose message names `source`.
template <class Parse, class Agrees>
void check_parser(Parse parse, Agrees agrees, std::string_view text, std::string_view source) {
  try {
    require(agrees(parse(text, source)));
  } catch (const tunekit::AutotuneError& e) {
    require(e.kind() == tunekit::ErrorKind::settings);
    require(e.message().find(source) != std::string::npos);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tunekit;
  if (size == 0) return 0;
  const unsigned set_mask = data[0];
  std::vector<std::string_view> values;
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  for (std::size_t i = 0; i < variables; ++i) {
    const auto end = rest.find('\0');
    values.push_back(rest.substr(0, std::min(end, max_value)));
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
  }

  // The settings file reader (tunekit.toml) on the whole input: it applies or describes each
  // line, and never throws a settings error (nor anything else).
  {
    std::vector<std::string> problems;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const Settings s = apply_settings_text(Settings{}, text, "fuzz.toml", problems);
    require(s.cache_dir.empty() || s.cache_dir.string().front() == '/');
    for (const auto& problem : problems) require(problem.starts_with("fuzz.toml"));
  }

  // The parsers alone, on every value.
  for (const auto text : values) {
    check_parser([](auto t, auto s) { return parse_level(t, s); },
                 [&](Level l) { return to_string(l) == text; }, text, "TUNEKIT_LEVEL");
    check_parser([](auto t, auto s) { return parse_log_level(t, s); },
                 [&](LogLevel l) { return to_string(l) == text; }, text, "TUNEKIT_LOG");
    check_parser([](auto t, auto s) { return parse_search_strategy(t, s); },
                 [&](SearchStrategy st) { return to_string(st) == text; }, text, "TUNEKIT_SEARCH");
    check_parser([](auto t, auto s) { return parse_cache_switch(t, s); },
                 [&](bool on) {
                   return on ? (text == "on" || text == "1" || text == "true")
                             : (text == "off" || text == "0" || text == "false");
                 },
                 text, "TUNEKIT_CACHE");
  }

  // The whole environment.
  for (std::size_t i = 0; i < variables; ++i) {
    if (set_mask & (1u << i))
      set_variable(i, values[i]);
    else
      ::unsetenv(names[i]);
  }
  Settings base;
  base.cache_dir = "/base/dir";
  base.device = "base device";
  try {
    const Settings s = Settings::from_environment(base);
    const auto given = [&](std::size_t i) {
      return (set_mask & (1u << i)) != 0 && !values[i].empty();
    };
    require(given(0) ? to_string(s.level) == values[0] : s.level == base.level);
    require(given(1) ? to_string(s.log) == values[1] : s.log == base.log);
    require(given(2) ? s.persistent_cache == parse_cache_switch(values[2])
                     : s.persistent_cache == base.persistent_cache);
    require((set_mask & (1u << 3)) ? s.cache_dir == std::string(values[3])
                                   : s.cache_dir == base.cache_dir);
    require(given(4) ? s.device == values[4] : s.device == base.device);
    require(given(5) ? s.search && to_string(s.search->strategy) == values[5] : !s.search);
    require(s.resolved_cache_dir() == s.cache_dir);  // never empty once from_environment accepts it
    (void)s.benchmark_settings();
    (void)s.search_settings().budget_for(1000);
  } catch (const AutotuneError& e) {
    require(e.kind() == ErrorKind::settings);
    require(e.message().find("TUNEKIT_") != std::string::npos);
  }
  return 0;
}
