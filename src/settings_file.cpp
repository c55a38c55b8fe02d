// The settings files (tunekit.toml): a small, strict reader of `key = value` lines for the
// settings that have TUNEKIT_* variables. A file is input from whoever could write it, so it is
// bounded, read only when it is this user's own, and never stops a program: what it cannot use
// is named in a warning and skipped.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "tunekit/error.hpp"
#include "tunekit/redis_store.hpp"
#include "tunekit/settings.hpp"
#include "warnings.hpp"

namespace tunekit {

namespace {

constexpr std::size_t max_settings_file_bytes = 64 * 1024;

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

// A value for a message: at most 80 bytes (warn() escapes control characters).
std::string shown(std::string_view text) {
  return text.size() > 80 ? std::string(text.substr(0, 77)) + "..." : std::string(text);
}

// The value of `rest` (what follows "key ="): a "basic" string (escapes \" and \\ only), a
// 'literal' string, a whole number, true or false, then nothing but an optional # comment.
// Empty with `problem` set when it is none of these.
std::optional<std::string> value_of(std::string_view rest, std::string& problem) {
  rest = trim(rest);
  std::string value;
  std::size_t end = 0;
  if (!rest.empty() && (rest.front() == '"' || rest.front() == '\'')) {
    const char quote = rest.front();
    bool closed = false;
    for (end = 1; end < rest.size(); ++end) {
      const char c = rest[end];
      if (c == quote) {
        closed = true;
        ++end;
        break;
      }
      if (static_cast<unsigned char>(c) < 0x20 && c != '\t') {
        problem = "a control character in a string";
        return std::nullopt;
      }
      if (c == '\\' && quote == '"') {
        if (end + 1 < rest.size() && (rest[end + 1] == '"' || rest[end + 1] == '\\')) {
          value += rest[++end];
          continue;
        }
        problem = "an escape other than \\\" and \\\\ (use a 'literal string' for backslashes)";
        return std::nullopt;
      }
      value += c;
    }
    if (!closed) {
      problem = "a string that does not end on its line";
      return std::nullopt;
    }
  } else {
    while (end < rest.size() && rest[end] != ' ' && rest[end] != '\t' && rest[end] != '#') ++end;
    value = std::string(rest.substr(0, end));
    const bool number =
        !value.empty() && value.find_first_not_of("0123456789") == std::string::npos;
    if (!number && value != "true" && value != "false") {
      problem = "the value '" + shown(value) +
                "' is not a \"quoted string\", a whole number, true or false";
      return std::nullopt;
    }
  }
  const std::string_view after = trim(rest.substr(end));
  if (!after.empty() && after.front() != '#') {
    problem = "text after the value: '" + shown(after) + "'";
    return std::nullopt;
  }
  return value;
}

// Applies one known key's value to `settings`; throws AutotuneError(settings) for a bad value.
// False for a key that is not a setting.
bool apply(Settings& settings, std::string_view key, const std::string& value,
           const std::string& source) {
  if (key == "level") {
    settings.level = parse_level(value, source);
  } else if (key == "log") {
    settings.log = parse_log_level(value, source);
  } else if (key == "search") {
    settings.search_strategy = parse_search_strategy(value, source);
  } else if (key == "cache") {
    settings.persistent_cache = parse_cache_switch(value, source);
  } else if (key == "cache_dir") {
    settings.cache_dir = parse_cache_dir(value, source);
  } else if (key == "store") {
    (void)parse_store_url(value, source);
    settings.store = value;
  } else if (key == "store_password") {
    // A settings file is often committed or shared, and only its writing is checked.
    throw AutotuneError(ErrorKind::settings,
                        source +
                            " is not read from a settings file (it may be shared or "
                            "committed): set TUNEKIT_STORE_PASSWORD in the environment");
  } else if (key == "device") {
    settings.device = value;
    settings.device_source = source;
  } else if (key == "build_threads") {
    settings.build_threads = parse_build_threads(value, source);
  } else if (key == "build_processes") {
    settings.build_processes = parse_build_processes(value, source);
  } else if (key == "build_helper") {
    // A settings file may sit in whatever directory a program runs from: it names no program to
    // run.
    throw AutotuneError(ErrorKind::settings,
                        source +
                            " is not read from a settings file (a file in the working "
                            "directory would choose a program to run): set "
                            "TUNEKIT_BUILD_HELPER in the environment");
  } else if (key == "tuning") {
    settings.tuning = parse_tuning_mode(value, source);
  } else if (key == "retry_seconds") {
    settings.retry_seconds = parse_retry_seconds(value, source);
  } else if (key == "retry_max_seconds") {
    settings.retry_max_seconds = parse_retry_seconds(value, source);
  } else if (key == "progress") {
    settings.progress = parse_progress_mode(value, source);
  } else if (key == "start_points") {
    settings.start_points = parse_start_points(value, source);
  } else {
    return false;
  }
  return true;
}

constexpr std::string_view known_keys =
    "level, log, search, start_points, cache, cache_dir, store, device, build_threads, "
    "build_processes, tuning, progress, retry_seconds, retry_max_seconds";

}  // namespace

Settings apply_settings_text(Settings base, std::string_view text, std::string_view file,
                             std::vector<std::string>& problems) {
  const std::string name(file);
  if (text.size() > max_settings_file_bytes) {
    problems.push_back(name + ": larger than " + std::to_string(max_settings_file_bytes / 1024) +
                       " KiB; not read");
    return base;
  }
  std::set<std::string, std::less<>> seen;
  std::size_t number = 0;
  for (std::size_t at = 0; at < text.size();) {
    auto end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = trim(text.substr(at, end - at));
    at = end + 1;
    ++number;
    const std::string where = name + ":" + std::to_string(number) + ": ";
    if (line.empty() || line.front() == '#') continue;
    const auto equals = line.find('=');
    const std::string_view key = trim(line.substr(0, equals));
    const bool plain_key = !key.empty() && key.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") ==
                                               std::string_view::npos;
    if (equals == std::string_view::npos || !plain_key) {
      problems.push_back(where + "'" + shown(line) +
                         "' is not a `key = value` line (tables and dotted keys are not read); "
                         "skipped");
      continue;
    }
    std::string problem;
    const auto value = value_of(line.substr(equals + 1), problem);
    if (!value) {
      problems.push_back(where + std::string(key) + ": " + problem + "; skipped");
      continue;
    }
    if (seen.contains(key)) {
      problems.push_back(where + std::string(key) + " is set twice; the first value is kept");
      continue;
    }
    try {
      Settings changed = base;
      if (!apply(changed, key, *value, where + std::string(key))) {
        problems.push_back(where + "'" + shown(key) +
                           "' is not a setting (known: " + std::string(known_keys) + "); skipped");
        continue;
      }
      base = std::move(changed);
      seen.emplace(key);
    } catch (const AutotuneError& e) {
      problems.push_back(e.message() + "; skipped");
    }
  }
  return base;
}

std::vector<std::filesystem::path> settings_files() {
  std::vector<std::filesystem::path> files;
  // As XDG says, a relative XDG_CONFIG_HOME is ignored.
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg == '/') {
    files.push_back(std::filesystem::path(xdg) / "tunekit" / "tunekit.toml");
  } else if (const char* home = std::getenv("HOME"); home && *home == '/') {
    files.push_back(std::filesystem::path(home) / ".config" / "tunekit" / "tunekit.toml");
  }
  files.emplace_back("tunekit.toml");
  return files;
}

std::optional<std::string> read_settings_file(const std::filesystem::path& path,
                                              std::vector<std::string>& problems) {
  // A link is followed only where this user made it (a dotfiles manager's link in ~/.config);
  // one that another user planted (a tunekit.toml in a shared working directory) is not. The
  // file is opened without following first, so that a link planted after a check is never
  // followed; a link is opened only once it is this user's, and read only if the same link is
  // there after the open (which narrows a swap in a directory others can write, not closes it:
  // the owner and mode checks below still hold for what was opened).
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
  if (fd < 0 && errno == ELOOP) {
    struct stat link {};
    if (::lstat(path.c_str(), &link) != 0 || !S_ISLNK(link.st_mode)) {
      problems.push_back(path.string() + ": replaced while it was opened; not read");
      return std::nullopt;
    }
    if (link.st_uid != ::geteuid()) {
      problems.push_back(path.string() + ": a symbolic link another user made; not read");
      return std::nullopt;
    }
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat again {};
    if (fd >= 0 && (::lstat(path.c_str(), &again) != 0 || again.st_dev != link.st_dev ||
                    again.st_ino != link.st_ino)) {
      ::close(fd);
      problems.push_back(path.string() + ": replaced while it was opened; not read");
      return std::nullopt;
    }
  }
  if (fd < 0) {
    if (errno != ENOENT && errno != ENOTDIR) {
      problems.push_back(path.string() + ": cannot be read (" + std::strerror(errno) +
                         "); not read");
    }
    return std::nullopt;
  }
  struct stat st {};
  std::string why;
  if (::fstat(fd, &st) != 0) {
    why = std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    why = "not a regular file";
  } else if (st.st_uid != ::geteuid()) {
    // A settings file names the cache directory and the shared store: one that another user
    // wrote (a tunekit.toml in a shared directory) must not redirect them.
    why = "owned by another user";
  } else if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    why = "writable by others than its owner";
  } else if (static_cast<std::size_t>(st.st_size) > max_settings_file_bytes) {
    why = "larger than " + std::to_string(max_settings_file_bytes / 1024) + " KiB";
  }
  std::string text;
  if (why.empty()) {
    text.resize(max_settings_file_bytes + 1);
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t got = ::read(fd, text.data() + done, text.size() - done);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) {
        why = std::strerror(errno);
        break;
      }
      if (got == 0) break;
      done += static_cast<std::size_t>(got);
    }
    text.resize(done);
    if (why.empty() && done > max_settings_file_bytes) {
      why = "larger than " + std::to_string(max_settings_file_bytes / 1024) + " KiB";
    }
  }
  ::close(fd);
  if (!why.empty()) {
    problems.push_back(path.string() + ": " + why + "; not read");
    return std::nullopt;
  }
  return text;
}

Settings apply_settings_files(Settings base) {
  for (const auto& path : settings_files()) {
    std::vector<std::string> problems;
    if (const auto text = read_settings_file(path, problems)) {
      base = apply_settings_text(std::move(base), *text, path.string(), problems);
    }
    // A file of nonsense lines (a binary or a wrong file named) says a few, then how many more.
    constexpr std::size_t max_problems_said = 8;
    for (std::size_t i = 0; i < std::min(problems.size(), max_problems_said); ++i) {
      warn_once("tunekit: settings file " + problems[i]);
    }
    if (problems.size() > max_problems_said) {
      warn_once("tunekit: settings file " + path.string() + ": " +
                std::to_string(problems.size() - max_problems_said) +
                " more problems not shown (each such line is skipped)");
    }
  }
  return base;
}

}  // namespace tunekit
