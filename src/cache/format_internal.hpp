// Internals shared by the cache file's writer (format.cpp) and reader (reader.cpp).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tunekit/cache.hpp"
#include "tunekit/error.hpp"
#include "tunekit/outcome.hpp"

namespace tunekit::detail {

inline constexpr const char* index_format = "tunekit-cache";        // <op>.json
inline constexpr const char* table_format = "tunekit-cache-table";  // <op>.tables/<hash>.json
inline constexpr const char* bundle_format = "tunekit-cache-bundle";
/// Bundles of version 1 hold the same entries: a bundle exported by an older tunekit imports.
inline constexpr int oldest_bundle_version = 1;

/// 16 lower-case hex digits.
inline void hex64_to(char (&text)[16], std::uint64_t value) {
  static constexpr char digits[] = "0123456789abcdef";
  for (int i = 15; i >= 0; --i, value >>= 4) text[i] = digits[value & 15];
}
inline std::string hex64(std::uint64_t value) {
  char text[16];
  hex64_to(text, value);
  return std::string(text, 16);
}

/// 1 to 16 hex digits, either case.
inline std::optional<std::uint64_t> parse_hex64(std::string_view text) {
  if (text.empty() || text.size() > 16) return std::nullopt;
  std::uint64_t value = 0;
  for (char c : text) {
    int digit = 0;
    if (c >= '0' && c <= '9')
      digit = c - '0';
    else if (c >= 'a' && c <= 'f')
      digit = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      digit = c - 'A' + 10;
    else
      return std::nullopt;
    value = value << 4 | static_cast<std::uint64_t>(digit);
  }
  return value;
}

inline constexpr std::array all_statuses{OutcomeStatus::measured, OutcomeStatus::dropped,
                                         OutcomeStatus::failed, OutcomeStatus::skipped};

/// The enum value whose to_string() is `text`.
template <class Enum, std::size_t N>
std::optional<Enum> enum_from(const std::array<Enum, N>& all, std::string_view text) {
  for (Enum e : all) {
    if (to_string(e) == text) return e;
  }
  return std::nullopt;
}

}  // namespace tunekit::detail
