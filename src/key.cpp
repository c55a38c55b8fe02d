// The non-template parts of a key's text (tunekit/key.hpp): escaping, floats, and a stream that
// writes into a string.
#include "tunekit/key.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

namespace tunekit::detail {

void write_escaped(std::ostream& os, std::string_view text) {
  static constexpr char hex[] = "0123456789abcdef";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte == 0x7f || c == '=' || c == '\\') {
      os << '\\' << 'x' << hex[byte >> 4] << hex[byte & 0xf];
    } else {
      os << c;
    }
  }
}

namespace {
template <class T>
void write_shortest(std::ostream& os, T v) {
  if (std::isnan(v)) {
    os << "nan";
    return;
  }
  if (v == 0) v = 0;
  char buffer[64];
  if constexpr (std::is_same_v<T, long double>) {
    std::snprintf(buffer, sizeof buffer, "%.*Lg", std::numeric_limits<long double>::max_digits10,
                  v);
    os << buffer;
  } else {
    const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
    os << std::string_view(buffer, ec == std::errc() ? static_cast<std::size_t>(end - buffer) : 0);
  }
}
}  // namespace

void write_float(std::ostream& os, float v) { write_shortest(os, v); }
void write_float(std::ostream& os, double v) { write_shortest(os, v); }
void write_float(std::ostream& os, long double v) { write_shortest(os, v); }

bool is_nan(long double v) { return std::isnan(v); }

std::string streamed_text(FunctionRef<void(std::ostream&)> write) {
  std::ostringstream os;
  write(os);
  return std::move(os).str();
}

}  // namespace tunekit::detail
