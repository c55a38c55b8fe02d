// The benches' readers of their command lines. A command line is hostile input: every size, count
// and number is read whole (no sign, space or suffix) and bounded, and anything else is refused
// with the flag named, rather than read as far as it goes, wrapped to a huge size or thrown out
// of main. Header-only, standard library only.
#pragma once

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tunekit::bench {

/// The largest problem size a command line may give: the kernels index with 32-bit ints.
inline constexpr std::size_t max_size = (std::size_t{1} << 31) - 1;

/// Decimal digits only, from `min` to `max`; nothing otherwise.
inline std::optional<std::size_t> parse_unsigned(std::string_view text, std::size_t min,
                                                 std::size_t max) {
  if (text.empty() ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  std::size_t value = 0;  // from_chars refuses what does not fit, rather than wrapping
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < min || value > max)
    return std::nullopt;
  return value;
}

/// A problem size: from 1 to max_size.
inline std::optional<std::size_t> parse_size(std::string_view text) {
  return parse_unsigned(text, 1, max_size);
}

/// A finite decimal number (digits, an optional fraction and exponent; no sign) from `min` to
/// `max`; nothing otherwise.
inline std::optional<double> parse_number(std::string_view text, double min, double max) {
  if (text.empty() || text.size() > 32 || text.front() < '0' || text.front() > '9')
    return std::nullopt;
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value) ||
      value < min || value > max)
    return std::nullopt;
  return value;
}

/// `N` sizes joined by 'x' ("ROWSxCOLS", "MxNxK"), each as parse_size; nothing otherwise.
template <std::size_t N>
std::optional<std::array<std::size_t, N>> parse_dims(std::string_view text) {
  std::array<std::size_t, N> dims{};
  for (std::size_t i = 0; i < N; ++i) {
    const std::size_t end = i + 1 < N ? text.find('x') : text.size();
    if (end == std::string_view::npos) return std::nullopt;
    const auto size = parse_size(text.substr(0, end));
    if (!size) return std::nullopt;
    dims[i] = *size;
    text.remove_prefix(std::min(text.size(), end + 1));
  }
  return dims;
}

/// A comma-separated list of what `parse_item` reads, at least one; nothing if any item fails.
template <typename Parse>
auto parse_comma_list(std::string_view text, Parse parse_item)
    -> std::optional<std::vector<typename decltype(parse_item(text))::value_type>> {
  std::vector<typename decltype(parse_item(text))::value_type> items;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const auto item = parse_item(text.substr(start, end - start));
    if (!item) return std::nullopt;
    items.push_back(*item);
    start = end + 1;
  }
  return items;
}

/// Whether the command line asks for help (`--help` or `-h`): a bench then prints its usage on
/// stdout and exits 0, as a user expects, rather than refusing the flag or taking it as a value.
inline bool asks_for_help(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") return true;
  }
  return false;
}

/// Says which argument `program` refuses and what `flag` takes, then exits with status 2. The
/// value is shown shortened, its unprintable bytes as '?'.
[[noreturn]] inline void refuse(const char* program, std::string_view flag, std::string_view value,
                                const char* form) {
  std::string shown(value.substr(0, 200));
  for (char& c : shown) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  }
  std::fprintf(stderr, "%s: %.*s '%s': takes %s\n", program, static_cast<int>(flag.size()),
               flag.data(), shown.c_str(), form);
  std::exit(2);
}

/// Says that `flag`, the command line's last argument, has no value, then exits with status 2.
[[noreturn]] inline void refuse_missing_value(const char* program, std::string_view flag) {
  std::fprintf(stderr, "%s: %.*s: no value follows it\n", program,
               static_cast<int>(std::min<std::size_t>(flag.size(), 200)), flag.data());
  std::exit(2);
}

/// What a reader made of `flag`'s value, or the program refuses it, saying it takes `form`.
template <typename T>
T read_or_refuse(std::optional<T> read, const char* program, std::string_view flag,
                 std::string_view value, const char* form) {
  if (!read) refuse(program, flag, value, form);
  return *read;
}

/// `flag`'s value as parse_unsigned reads it, or the program refuses it.
inline std::size_t unsigned_argument(const char* program, std::string_view flag,
                                     std::string_view value, std::size_t min, std::size_t max) {
  if (auto read = parse_unsigned(value, min, max)) return *read;
  const std::string form =
      "a whole number from " + std::to_string(min) + " to " + std::to_string(max);
  refuse(program, flag, value, form.c_str());
}

/// `flag`'s value as parse_number reads it, or the program refuses it.
inline double number_argument(const char* program, std::string_view flag, std::string_view value,
                              double min, double max) {
  if (auto read = parse_number(value, min, max)) return *read;
  char form[96];
  std::snprintf(form, sizeof form, "a number from %g to %g", min, max);
  refuse(program, flag, value, form);
}

}  // namespace tunekit::bench
