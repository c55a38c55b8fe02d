// Expands a user's .cl file and its includes into one source text with #line directives.
#include "kernel_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../cache/private_files.hpp"
#include "tunekit/cl/embedded.hpp"
#include "tunekit/error.hpp"

namespace tunekit::cl::detail {

std::string quoted_file_name(std::string_view path) {
  std::string text = "\"";
  for (const char c : path) {
    if (c == '\\' || c == '"') text += '\\';
    text += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c;
  }
  return text + "\"";
}

std::string named_source(std::string_view source, std::string_view origin) {
  if (source.starts_with("#line ")) return std::string(source);
  return "#line 1 " + quoted_file_name(origin) + "\n" + std::string(source);
}

namespace {

constexpr std::size_t max_total_bytes = 64u << 20;  // a kernel source is never this large
constexpr int max_depth = 64;                       // deeper than this is an include cycle

struct Include {
  std::string name;
  bool quoted = false;  // "name" (looked up beside the includer first) rather than <name>
};

// The target of an `#include "name"` or `#include <name>` line; nothing for any other line.
std::optional<Include> include_of(std::string_view line) {
  const auto skip_blanks = [&] {
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  };
  skip_blanks();
  if (!line.starts_with('#')) return std::nullopt;
  line.remove_prefix(1);
  skip_blanks();
  if (!line.starts_with("include")) return std::nullopt;
  line.remove_prefix(7);
  skip_blanks();
  if (line.empty() || (line.front() != '"' && line.front() != '<')) return std::nullopt;
  const char close = line.front() == '"' ? '"' : '>';
  const auto end = line.find(close, 1);
  if (end == std::string_view::npos || end == 1) return std::nullopt;
  return Include{std::string(line.substr(1, end - 1)), close == '"'};
}

bool is_pragma_once(std::string_view line) {
  std::istringstream words{std::string(line)};
  std::string hash, pragma, once, rest;
  words >> hash;
  if (hash == "#") {
    words >> pragma;
  } else if (hash.size() > 1 && hash[0] == '#') {
    pragma = hash.substr(1);
  } else {
    return false;
  }
  return pragma == "pragma" && (words >> once) && once == "once" && !(words >> rest);
}

// A line's text outside comments, given whether it starts inside a block comment (updated to
// whether the next one does). String and character literals are skipped whole, so that a "/*"
// inside one opens nothing.
std::string code_of(std::string_view line, bool& in_comment) {
  std::string code;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (in_comment) {
      if (line.substr(i, 2) == "*/") {
        in_comment = false;
        ++i;
        code += ' ';
      }
      continue;
    }
    if (line.substr(i, 2) == "//") break;
    if (line.substr(i, 2) == "/*") {
      in_comment = true;
      ++i;
      continue;
    }
    code += line[i];
    if (line[i] == '"' || line[i] == '\'') {
      const char quote = line[i];
      for (++i; i < line.size() && line[i] != quote; ++i) {
        code += line[i];
        if (line[i] == '\\' && i + 1 < line.size()) code += line[++i];
      }
      if (i < line.size()) code += line[i];
    }
  }
  return code;
}

// The name of the preprocessor directive `code` (a line outside comments) is, or nothing.
std::string_view directive_of(std::string_view code) {
  const auto blank = [](char c) { return c == ' ' || c == '\t'; };
  std::size_t i = 0;
  while (i < code.size() && blank(code[i])) ++i;
  if (i == code.size() || code[i] != '#') return {};
  ++i;
  while (i < code.size() && blank(code[i])) ++i;
  const std::size_t start = i;
  while (i < code.size() && (std::isalnum(static_cast<unsigned char>(code[i])) || code[i] == '_'))
    ++i;
  return code.substr(start, i - start);
}

// One line of a source as the expansion reads it: its text, its code outside comments, and its
// include: an `#include` line that does not start inside a block comment.
struct SourceLine {
  std::string_view text;
  std::string code;
  bool commented = false;  // the line starts inside a block comment
  std::optional<Include> include;
};

// Calls visit(line) for each line of `text` in order, block comments followed across lines,
// until visit returns false. The one reading of lines that the Expander and
// has_include_directive share.
template <typename Visit>
void for_each_line(std::string_view text, Visit&& visit) {
  bool in_comment = false;
  for (std::size_t at = 0; at < text.size();) {
    auto end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    SourceLine line;
    line.text = text.substr(at, end - at);
    at = end + 1;
    line.commented = in_comment;
    line.code = code_of(line.text, in_comment);
    if (!line.commented) line.include = include_of(line.text);
    if (!visit(line)) return;
  }
}

// The word after directive `name` on `code`'s line (a macro name), or nothing.
std::string macro_after(std::string_view code, std::string_view name) {
  const auto at = code.find(name);
  std::istringstream words{std::string(code.substr(at + name.size()))};
  std::string word;
  words >> word;
  return word;
}

// The X of a guard's first line `#if !defined(X)` or `#if !defined X`, else "".
std::string negated_defined(const std::string& code) {
  static const std::regex form(
      R"(^\s*#\s*if\s*!\s*defined(?:\s*\(\s*([A-Za-z_]\w*)\s*\)|\s+([A-Za-z_]\w*))\s*$)");
  std::smatch m;
  if (!std::regex_match(code, m, form)) return "";
  return m[1].matched ? m[1].str() : m[2].str();
}

// Whether `text` is wrapped in an include guard: its first directive `#ifndef X` (or `#if
// !defined(X)`), the next `#define X`, and the `#endif` that closes the first the last thing in
// the file (comments aside), with no `#else` or `#elif` of its own. Such a file is read once, as
// one with #pragma once: its second inclusion is empty to the preprocessor anyway, and an include
// cycle between guarded files then ends.
bool has_include_guard(std::string_view text) {
  bool in_comment = false;
  int directives = 0, depth = 0;
  std::string guard;
  bool closed = false;  // the guard's #endif was seen
  for (std::size_t at = 0; at < text.size();) {
    auto end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string code = code_of(text.substr(at, end - at), in_comment);
    at = end + 1;
    if (code.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (closed) return false;  // something after the guard's #endif
    const std::string_view name = directive_of(code);
    if (name.empty()) {
      if (directives < 2) return false;  // code before the guard
      continue;
    }
    ++directives;
    if (directives == 1) {
      if (name == "ifndef") {
        guard = macro_after(code, name);
      } else if (name == "if") {
        guard = negated_defined(code);
      } else {
        return false;
      }
      depth = 1;
      continue;
    }
    if (directives == 2) {
      if (name != "define" || macro_after(code, name) != guard || guard.empty()) return false;
      continue;
    }
    if (name == "if" || name == "ifdef" || name == "ifndef") ++depth;
    // A second branch of the guard's own #if: its second inclusion is not empty.
    if (depth == 1 && (name == "else" || name.starts_with("elif"))) return false;
    if (name == "endif" && --depth == 0) closed = true;
  }
  return closed;
}

// Where an Expander reads files: the file system, the files the program embedded
// (tunekit_embed_kernels), or tunekit's own kernels/ embedded in the library; embedded files are
// named by relative paths and have no directories.
enum class Files { disk, embedded, library };

std::string embedded_names() {
  std::string known;
  for (const std::string_view name : program_sources()) {
    known += known.empty() ? "" : ", ";
    known += name;
  }
  return known.empty() ? "none" : known;
}

class Expander {
 public:
  Expander(const std::vector<std::filesystem::path>& include_dirs, Files files)
      : dirs_(include_dirs), files_(files) {}

  void expand(const std::filesystem::path& file, int depth, const std::string& included_from) {
    if (depth > max_depth) {
      throw AutotuneError(ErrorKind::build, "#include nests deeper than " +
                                                std::to_string(max_depth) + " files at " +
                                                included_from + " (an include cycle?)");
    }
    std::error_code error;
    std::filesystem::path canonical = file.lexically_normal();
    if (files_ == Files::disk) {
      canonical = std::filesystem::weakly_canonical(file, error);
      if (error) canonical = file.lexically_normal();
    }
    if (once_.contains(canonical)) return;
    const std::string text = files_ == Files::disk       ? read(file, included_from)
                             : files_ == Files::embedded ? read_embedded(file, included_from)
                                                         : read_library(file);
    const bool guarded = has_include_guard(text);
    if (guarded) once_.insert(canonical);
    const std::string name = file.string();
    out_ += "#line 1 " + quoted_file_name(name) + "\n";
    std::size_t line_number = 0;
    int conditionals = guarded ? -1 : 0;  // open #if blocks, the guard's not counted
    for_each_line(text, [&](const SourceLine& line) {
      ++line_number;
      const std::string_view directive =
          line.commented ? std::string_view() : directive_of(line.code);
      if (directive == "if" || directive == "ifdef" || directive == "ifndef") ++conditionals;
      if (directive == "endif") --conditionals;
      if (!line.commented && is_pragma_once(line.text)) {
        once_.insert(canonical);
        out_ += '\n';
        return true;
      }
      if (!line.include) {
        out_ += line.text;
        out_ += '\n';
        return true;
      }
      const std::string where = name + ":" + std::to_string(line_number);
      const auto found = find(*line.include, file, where, conditionals > 0);
      if (!found) {
        // Inside #if: the compiler fails on it only where the condition holds.
        out_ += "#error " + quoted_file_name(not_found(*line.include, file, where)) + "\n";
        return true;
      }
      expand(*found, depth + 1, where);
      out_ += "#line " + std::to_string(line_number + 1) + " " + quoted_file_name(name) + "\n";
      return true;
    });
    if (out_.size() > max_total_bytes) {
      throw AutotuneError(ErrorKind::build, "the kernel source " + name +
                                                " with its includes "
                                                "exceeds " +
                                                std::to_string(max_total_bytes >> 20) + " MiB");
    }
  }

  std::string take() { return std::move(out_); }

 private:
  static std::string read_embedded(const std::filesystem::path& file,
                                   const std::string& included_from) {
    if (auto text = program_source(file.generic_string())) return std::string(*text);
    throw AutotuneError(
        ErrorKind::build,
        "no kernel file '" + file.generic_string() + "' is embedded in this program" +
            (included_from.empty() ? "" : " (included from " + included_from + ")") +
            " (embedded: " + embedded_names() +
            "; embed it with tunekit_embed_kernels(<target> FILES " + file.filename().string() +
            ") in CMake)");
  }

  // An included file was found (exists) before it is read, so only the top file can be missing:
  // embedded_source's error names it and the embedded files.
  static std::string read_library(const std::filesystem::path& file) {
    return std::string(embedded_source(file.generic_string()));
  }

  bool exists(const std::filesystem::path& path) const {
    if (files_ == Files::embedded) return program_source(path.generic_string()).has_value();
    if (files_ == Files::library) return has_embedded_source(path.generic_string());
    std::error_code error;
    return std::filesystem::is_regular_file(path, error);
  }

  std::string read(const std::filesystem::path& file, const std::string& included_from) const {
    const std::string context =
        included_from.empty() ? "" : " (included from " + included_from + ")";
    const auto fail = [&](const std::string& why) {
      return AutotuneError(ErrorKind::build,
                           "cannot read the kernel source " + file.string() + context + ": " + why);
    };
    // Opened without blocking and checked before reading: a FIFO or a terminal named as a
    // kernel file would otherwise hold the build for ever.
    const tunekit::detail::Fd fd(::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    if (!fd) throw fail(std::strerror(errno));
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) throw fail(std::strerror(errno));
    if (S_ISDIR(st.st_mode)) throw fail("it is a directory");
    if (!S_ISREG(st.st_mode)) throw fail("it is not a regular file (a FIFO, a device or a socket)");
    std::string text;
    char buffer[1 << 16];
    for (;;) {
      const ssize_t got = ::read(fd.get(), buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) {
        throw AutotuneError(ErrorKind::build, "reading the kernel source " + file.string() +
                                                  context + " failed: " + std::strerror(errno));
      }
      if (got == 0) break;
      text.append(buffer, static_cast<std::size_t>(got));
      if (text.size() + out_.size() > max_total_bytes) {
        throw AutotuneError(ErrorKind::build, "the kernel source " + file.string() + context +
                                                  " exceeds " +
                                                  std::to_string(max_total_bytes >> 20) + " MiB");
      }
    }
    return text;
  }

  // Where `include` is found, else nothing when `may_miss` (an #include inside #if), else an
  // AutotuneError(build) saying where it was looked for.
  std::optional<std::filesystem::path> find(const Include& include,
                                            const std::filesystem::path& includer,
                                            const std::string& where, bool may_miss) const {
    for (const auto& path : candidates(include, includer)) {
      if (exists(path)) return path.lexically_normal();
    }
    if (may_miss) return std::nullopt;
    throw AutotuneError(ErrorKind::build, not_found(include, includer, where));
  }

  std::vector<std::filesystem::path> candidates(const Include& include,
                                                const std::filesystem::path& includer) const {
    std::vector<std::filesystem::path> tried;
    if (include.quoted) tried.push_back(includer.parent_path() / include.name);
    for (const auto& dir : dirs_) tried.push_back(dir / include.name);
    if (files_ != Files::disk) {
      for (auto& path : tried) path = path.lexically_normal();
      tried.emplace_back(std::filesystem::path(include.name).lexically_normal());
    }
    return tried;
  }

  std::string not_found(const Include& include, const std::filesystem::path& includer,
                        const std::string& where) const {
    std::string searched;
    for (const auto& path : candidates(include, includer)) {
      searched += (searched.empty() ? "" : ", ") + path.string();
    }
    return where + ": #include '" + include.name +
           "' not found (searched: " + (searched.empty() ? "no include directories" : searched) +
           ")";
  }

  const std::vector<std::filesystem::path>& dirs_;
  Files files_;
  std::set<std::filesystem::path> once_;
  std::string out_;
};

}  // namespace

std::string read_kernel_file(const std::filesystem::path& file,
                             const std::vector<std::filesystem::path>& include_dirs) {
  Expander expander(include_dirs, Files::disk);
  expander.expand(file, 0, "");
  return expander.take();
}

std::string read_embedded_kernel(std::string_view name) {
  const std::vector<std::filesystem::path> no_dirs;
  Expander expander(no_dirs, Files::embedded);
  expander.expand(std::filesystem::path(name), 0, "");
  return expander.take();
}

bool has_include_directive(std::string_view text) {
  bool found = false;
  for_each_line(text, [&found](const SourceLine& line) {
    found = line.include.has_value();
    return !found;
  });
  return found;
}

std::string read_library_kernel(std::string_view name) {
  const std::vector<std::filesystem::path> no_dirs;
  Expander expander(no_dirs, Files::library);
  expander.expand(std::filesystem::path(name), 0, "");
  return expander.take();
}

namespace {

// The #line directives of a source (`#line N "file"`: the next line is line N of file), read
// once, so that a log naming many lines is mapped in one pass over each instead of one pass over
// the source per line it names.
class LineDirectives {
 public:
  explicit LineDirectives(std::string_view source) {
    for (std::size_t pos = 0; pos <= source.size();) {
      auto end = source.find('\n', pos);
      if (end == std::string_view::npos) end = source.size();
      ++lines_;
      read(source.substr(pos, end - pos));
      pos = end + 1;
    }
  }

  // The file and line that physical line `wanted` (1-based) stands for, per the directives
  // before it; nothing without one, or past the source's last line.
  std::optional<std::pair<std::string, long>> logical_line(long wanted) const {
    if (wanted < 1 || wanted > lines_) return std::nullopt;
    const auto after = std::partition_point(
        directives_.begin(), directives_.end(),
        [&](const Directive& directive) { return directive.physical < wanted; });
    if (after == directives_.begin()) return std::nullopt;
    const Directive& last = *std::prev(after);
    if (last.file.empty()) return std::nullopt;  // a directive not read, or no file named yet
    return std::make_pair(last.file, last.next_line + (wanted - last.physical - 1));
  }

 private:
  struct Directive {
    long physical;  // the directive's own line
    std::string file;
    long next_line;  // what the line after it is of `file`
  };

  // Line `lines_` of the source, where it is a #line directive (blanks around the '#' as C
  // allows): its number and quoted file name (the quoted_file_name() text undone), or its number
  // alone, the file staying the one before. A directive this cannot read leaves the lines after
  // it unmapped (an empty file), never mapped by the directive before it.
  void read(std::string_view line) {
    const auto blanks = [](std::string_view& text) {
      while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    };
    blanks(line);
    if (!line.starts_with('#')) return;
    line.remove_prefix(1);
    blanks(line);
    if (!line.starts_with("line") || line.size() < 5 || (line[4] != ' ' && line[4] != '\t')) {
      return;
    }
    line.remove_prefix(4);
    blanks(line);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) {
      line.remove_suffix(1);
    }
    std::size_t digits = 0;
    long n = 0;
    while (digits < line.size() && line[digits] >= '0' && line[digits] <= '9' && digits < 9) {
      n = n * 10 + (line[digits++] - '0');
    }
    std::string_view name = line.substr(digits);
    const bool numbered =
        digits > 0 && (name.empty() || name.front() == ' ' || name.front() == '\t');
    blanks(name);
    std::string file;
    if (!numbered) {
      n = 0;  // unreadable: nothing after it is mapped
    } else if (name.empty()) {
      if (!directives_.empty()) file = directives_.back().file;  // the same file, renumbered
    } else if (name.size() >= 2 && name.front() == '"' && name.back() == '"') {
      for (std::size_t i = 1; i + 1 < name.size(); ++i) {
        if (name[i] == '\\' && i + 2 < name.size()) ++i;
        file += name[i];
      }
    }
    directives_.push_back({lines_, std::move(file), n});
  }

  std::vector<Directive> directives_;  // in the order of their lines
  long lines_ = 0;
};

}  // namespace

std::string with_source_lines(std::string_view source, std::string log) {
  const LineDirectives directives(source);
  for (const std::string_view label :
       {std::string_view("<kernel>:"), std::string_view("<source>:")}) {
    std::string mapped;    // built anew: replacing in place moved the log's tail once per line
    std::size_t done = 0;  // what of `log` is in `mapped`
    std::size_t at = 0;
    while ((at = log.find(label, at)) != std::string::npos) {
      std::size_t end = at + label.size();
      long line = 0;
      while (end < log.size() && end - at - label.size() < 9 && log[end] >= '0' &&
             log[end] <= '9') {
        line = line * 10 + (log[end++] - '0');
      }
      const auto where = end < log.size() && log[end] == ':' && line > 0
                             ? directives.logical_line(line)
                             : std::nullopt;
      if (where) {
        mapped.append(log, done, at - done);
        mapped += where->first + ":" + std::to_string(where->second);
        done = end;
      }
      at = end;
    }
    if (done == 0) continue;  // nothing mapped
    mapped.append(log, done, std::string::npos);
    log = std::move(mapped);
  }
  return log;
}

std::string_view first_error(std::string_view log) {
  std::string_view first_text;
  for (std::size_t start = 0; start < log.size();) {
    auto end = log.find('\n', start);
    if (end == std::string_view::npos) end = log.size();
    const std::string_view line = log.substr(start, end - start);
    if (line.find("error:") != std::string_view::npos) return line;
    if (first_text.empty() && line.find_first_not_of(" \t\r") != std::string_view::npos) {
      first_text = line;
    }
    start = end + 1;
  }
  return first_text;
}

}  // namespace tunekit::cl::detail
